#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot the tiny guest under QEMU (TCG by default) and check its output:
#   qemu-boot.sh GUEST_ELF SMP EXPECT_ONLINE EXPECT_STATUS [CMDLINE...]
# SMP is passed to -smp as is (e.g. "2,maxcpus=4"); EXPECT_ONLINE is the
# cpulist of the last "online:" line before "ready"; EXPECT_STATUS is
# QEMU's exit status (isa-debug-exit: 1 success, 3 failure, 5 panic).
# HOTVM_QEMU_ACCEL=kvm and HOTVM_QEMU_CPU=... override the accelerator and
# CPU model, HOTVM_EXPECT=REGEX requires a matching output line.  Exit 77 (skip) without qemu-system-x86_64.
set -u

elf=$1 smp=$2 expect_online=$3 expect_status=$4
shift 4
qemu=$(command -v qemu-system-x86_64) || { echo "qemu-system-x86_64 not found: skip"; exit 77; }
accel=${HOTVM_QEMU_ACCEL:-tcg}
cpu=${HOTVM_QEMU_CPU:-max}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

start=$(date +%s%N)
timeout "${HOTVM_QEMU_TIMEOUT:-120}" "$qemu" -accel "$accel" -M q35 -cpu "$cpu" \
	-smp "$smp" -m 128 -nographic -no-reboot -nodefaults -serial stdio \
	-kernel "$elf" -append "$*" \
	-device isa-debug-exit,iobase=0x501,iosize=1 </dev/null >"$log" 2>&1
status=$?
end=$(date +%s%N)

# Strip the firmware's terminal noise; keep the guest's lines.
sed -n '/hotvm-tiny:/,$p' "$log" | tr -d '\r'
echo "# qemu exit status $status, $(( (end - start) / 1000000 )) ms wall"

fail=0
online=$(sed -n '/^ready/q; s/^online: //p' "$log" | tail -n 1 | tr -d '\r')
if [ "$online" != "$expect_online" ]; then
	echo "FAIL: last online line before ready is '$online', expected '$expect_online'"
	fail=1
fi
grep -q '^ready' "$log" || { echo "FAIL: no ready line"; fail=1; }
if [ "$status" -ne "$expect_status" ]; then
	echo "FAIL: exit status $status, expected $expect_status"
	fail=1
fi
if [ -n "${HOTVM_EXPECT:-}" ] && ! grep -Eq "$HOTVM_EXPECT" "$log"; then
	echo "FAIL: no line matches '$HOTVM_EXPECT'"
	fail=1
fi
exit $fail
