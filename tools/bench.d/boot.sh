#!/bin/sh
# boot: process start to the tiny guest's ready line and to its exit, per vCPU count; hotvm vs QEMU
#
# Boot benchmark: time from process start to the tiny guest's "ready" line
# and to its exit, for several vCPU counts, median of several runs, for hotvm
# and (where it runs) QEMU booting the same guest ELF.  POSIX sh, so the
# nested lab can run it under busybox too.
#
#   tools/bench boot [-r RUNS] [-c "1 4 8"] [-b BUILD] [-q|-Q] [-k ELF]
#     -q  also QEMU with KVM (default when qemu-system-x86_64 is found;
#         -cpu max without arch-capabilities: MSR 0x10a is refused here)
#     -Q  hotvm only
set -eu

runs=5
cpus="1 4 8"
build=build
qemu=auto
kernel=

case ${1:-} in -h | --help) sed -n '2,12p' "$0"; exit 0 ;; esac
while getopts r:c:b:k:qQh opt; do
	case $opt in
	r) runs=$OPTARG ;;
	c) cpus=$OPTARG ;;
	b) build=$OPTARG ;;
	k) kernel=$OPTARG ;;
	q) qemu=yes ;;
	Q) qemu=no ;;
	h) sed -n '2,12p' "$0"; exit 0 ;;
	*) sed -n '2,12p' "$0" >&2; exit 2 ;;
	esac
done

hotvm=${HOTVM:-$build/vmm/hotvm}
linetime=${LINETIME:-$build/tools/linetime}
[ -n "$kernel" ] || kernel=$build/guest/hotvm-tiny.elf
for f in "$hotvm" "$linetime"; do
	[ -x "$f" ] || { echo "bench-boot: $f not built (ninja -C $build)" >&2; exit 2; }
done
[ -e /dev/kvm ] || { echo "bench-boot: no /dev/kvm" >&2; exit 2; }
if [ "$qemu" = auto ]; then
	if command -v qemu-system-x86_64 >/dev/null && [ -f "$kernel" ]; then
		qemu=yes
	else
		qemu=no
	fi
fi

# median of the numbers on stdin
median() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# measure NAME N COMMAND...: prints "NAME N ready_ms exit_ms"
measure() {
	name=$1
	n=$2
	shift 2
	tmp=$(mktemp)
	i=0
	while [ $i -lt "$runs" ]; do
		"$linetime" ready "$@" >/dev/null 2>>"$tmp" </dev/null || true
		i=$((i + 1))
	done
	# A run counts when the guest said ready and exited with its success
	# status (1); QEMU exits 1 for its own errors too, hence both.
	good=$(grep 'line_ms=[0-9].*status=1$' "$tmp" || true)
	ok=$(printf '%s' "$good" | grep -c . || true)
	if [ "$ok" -ne "$runs" ]; then
		echo "bench-boot: $name with $n vCPUs: $((runs - ok)) of $runs runs did not reach ready and exit with the guest's success status" >&2
		grep -v 'line_ms=[0-9].*status=1$' "$tmp" | tail -n 5 >&2 || true
	fi
	r=$(printf '%s\n' "$good" | sed -n 's/.*line_ms=\([0-9.]*\) .*/\1/p' | median)
	e=$(printf '%s\n' "$good" | sed -n 's/.*exit_ms=\([0-9.]*\) .*/\1/p' | median)
	rm -f "$tmp"
	printf '%s\t%s\t%s\t%s\n' "$name" "$n" "$r" "$e"
}

# The one table format (tools/bench_table.py), or its rows where there is
# no python3 (busybox).
table() {
	if command -v python3 >/dev/null; then
		python3 "$(dirname "$0")/../bench_table.py" "$@"
	else
		cat
	fi
}

echo "# kernel: $kernel ($(uname -r), $(nproc) cpus)"
for n in $cpus; do
	measure hotvm "$n" "$hotvm" run --cpus "boot=$n" --cmdline exit \
		--serial stdio
	if [ "$qemu" = yes ]; then
		measure qemu "$n" qemu-system-x86_64 -accel kvm -M q35 \
			-cpu max,-arch-capabilities \
			-smp "$n" -m 256 -display none -serial stdio \
			-monitor none -nic none -no-reboot -kernel "$kernel" \
			-append exit \
			-device isa-debug-exit,iobase=0x501,iosize=1
	fi
done | table "boot: $runs runs each, median ms from process start" \
	vmm vCPUs "to ready, ms" "to exit, ms"
