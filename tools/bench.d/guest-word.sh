#!/bin/sh
# guest-word: the guest's own poweroff, reboot and eject in the nested lab; hotvm vs QEMU q35
#
# The guest's own word, hotvm and QEMU 7.2 q35 side by side, in one
# nested-lab run (tools/lab), booting the same Debian kernel (PVH vmlinux)
# and initramfs (tools/lab/guest/init) on the lab's real KVM.  The host asks
# the guest through the ACPI power button (QMP system_powerdown, busybox
# acpid, hotvm.pwrbtn=): 10 cycles of echo 0/1 > cpuN/online on two
# hot-added CPUs; the guest's own eject of a hot-added CPU (sysfs: was
# DEVICE_DELETED sent, is the slot free, does device_add work again);
# reboot (does the VMM reset, time to the guest's "ready" again); poweroff
# (exit status, time to the process's end).  Prints a markdown table.
# A comparison, not a test (tools/lab/bench-guest-word.py; the test is
# tests/linux/test_guest_word.c: meson test lab-linux-power
# lab-linux-reboot lab-linux-eject).
#
#   tools/bench guest-word [-b BUILD] [-l LOG] [-t SECONDS] [-v VMMS] [-e]
#     -b  build directory with vmm/hotvm and lab-cache (default build)
#     -l  the lab's console log (default BUILD/bench-guest-word.log)
#     -t  the lab's timeout (default 1200)
#     -v  which VMMs, in order (default "hotvm qemu"; "qemu" alone needs
#         no hotvm build)
#     -e  copy the guests' consoles into the lab's log (GW-CONSOLE lines)
# About 4 minutes on a quiet host.  Needs python3 and what tools/lab/lab.sh
# needs (its --with-qemu, --with-python and --linux-guest).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
log=
timeout=1200
vmms="hotvm qemu"
echo=

case ${1:-} in -h | --help) sed -n '2,25p' "$0"; exit 0 ;; esac
while getopts b:l:t:v:eh opt; do
	case $opt in
	b) build=$OPTARG ;;
	l) log=$OPTARG ;;
	t) timeout=$OPTARG ;;
	v) vmms=$OPTARG ;;
	e) echo=" --echo" ;;
	h) sed -n '2,25p' "$0"; exit 0 ;;
	*) sed -n '2,25p' "$0" >&2; exit 2 ;;
	esac
done
log=${log:-$build/bench-guest-word.log}
hotvm_args=
for v in $vmms; do
	case $v in
	hotvm)
		[ -x "$build/vmm/hotvm" ] ||
			{ echo "bench-guest-word: $build/vmm/hotvm not built (ninja -C $build)" >&2; exit 2; }
		hotvm_args="--hotvm $build/vmm/hotvm" ;;
	qemu) ;;
	*) echo "bench-guest-word: -v takes hotvm and qemu, not '$v'" >&2; exit 2 ;;
	esac
done

# The inner driver runs once per VMM; each prints a GW-JSON line.
run="mkdir -p /tmp/bench-guest-word"
run="$run && echo \"GW-INFO: kernel \$(uname -r), \$(nproc) CPU(s); \$(qemu-system-x86_64 --version | head -n 1)\""
run="$run && failed=0"
for v in $vmms; do
	bin=
	[ "$v" != hotvm ] || bin=" --bin /bin/hotvm"
	run="$run && { python3 /lab/bench-guest-word.py --vmm $v$bin$echo || failed=\$((failed + 1)); }"
done
run="$run && echo \"GW-DONE: \$failed failed\" && [ \"\$failed\" = 0 ]"

echo "bench-guest-word: $vmms in the nested lab (timeout ${timeout}s)" >&2
status=0
# shellcheck disable=SC2086  # hotvm_args is words
"$top/tools/lab/lab.sh" --cache "$build/lab-cache" --smp 1 --linux-guest \
	--with-qemu --with-python --silence 180 --retries 2 $hotvm_args \
	--add "$top/tools/lab/bench-guest-word.py:/lab/bench-guest-word.py" \
	--add "$top/tools/hotvm_qmp.py:/lab/hotvm_qmp.py" \
	--run "$run" --log "$log" --quiet --timeout "$timeout" || status=$?

grep -a '^GW-PROGRESS' "$log" | tr -d '\r' >&2 || :
pstatus=0
python3 "$top/tools/lab/bench-guest-word.py" --table "$log" || pstatus=$?
[ "$status" = 0 ] || echo "bench-guest-word: the lab exited with status $status (log: $log)" >&2
[ "$status" = 0 ] && [ "$pstatus" = 0 ]
