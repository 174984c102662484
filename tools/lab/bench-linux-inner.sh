#!/bin/sh
# The nested lab's side of tools/bench linux (busybox sh, as root, in the
# lab's first-level guest): REPS runs of bench-linux-qmp for hotvm and for
# QEMU, alternating which goes first, booting the same Linux guest
# (/lab/linux/vmlinux, /lab/linux/initrd.gz).  Each run prints one
# BENCH-JSON (or BENCH-ERROR) line on the console; tools/bench linux reads
# them from the lab's log.
#   sh /lab/bench-linux-inner.sh REPS MAX [MEM_MB] [agent] [before]
# With "agent", each rep also runs hotvm --agent with a guest that has no
# onlining rule (bench-linux-qmp --vmm hotvm-agent).  With "before", each
# rep also runs /bin/hotvm-before, another build of hotvm, the same way as
# /bin/hotvm (labelled hotvm-before).  SOFT (environment,
# default 3) is bench-linux-qmp's --soft.
reps=${1:-3}
max=${2:-4}
mem=${3:-512}
vmms=hotvm
for extra in "${4:-}" "${5:-}"; do
	case $extra in
	agent) vmms="$vmms hotvm-agent" ;;
	before) vmms="$vmms hotvm-before" ;;
	esac
done
vmms="$vmms qemu"
soft=${SOFT:-3}
rvmms="$(echo $vmms | tr ' ' '\n' | sed -n '1!G;h;$p' | tr '\n' ' ')"
kernel=/lab/linux/vmlinux
initrd=/lab/linux/initrd.gz
dir=/tmp/bench-linux
mkdir -p "$dir"

echo "BENCH-INFO: kernel $(uname -r), $(nproc) CPU(s), $(grep -c . /proc/modules) modules"
echo "BENCH-INFO: $(qemu-system-x86_64 --version | head -n 1)"
echo "BENCH-INFO: reps=$reps max=$max mem=${mem}M vmms=$vmms soft=$soft"

one() {
	case $1 in
	qemu) kind=qemu bin=qemu-system-x86_64 ;;
	hotvm-before) kind=hotvm bin=/bin/hotvm-before ;;
	*) kind=$1 bin=/bin/hotvm ;;
	esac
	bench-linux-qmp --vmm "$kind" --label "$1" --rep "$2" --max "$max" --mem "$mem" \
		--soft "$soft" --kernel "$kernel" --initrd "$initrd" --dir "$dir" \
		--timeout 300 --bin "$bin" ||
		failed=$((failed + 1))
	# Each run's files are only for a failure's report.
	rm -f "$dir/$1-$2".*
}

failed=0
r=1
while [ "$r" -le "$reps" ]; do
	# Alternating which goes first.
	if [ $((r % 2)) = 1 ]; then order=$vmms; else order=$rvmms; fi
	for vmm in $order; do one "$vmm" "$r"; done
	r=$((r + 1))
done
echo "BENCH-DONE: $failed failed"
[ "$failed" = 0 ]
