#!/bin/sh
# The nested lab's side of tools/bench-linux.sh (busybox sh, as root, in the
# lab's first-level guest): REPS runs of bench-linux-qmp for hotvm and for
# QEMU, alternating which goes first, booting the same Linux guest
# (/lab/linux/vmlinux, /lab/linux/initrd.gz).  Each run prints one
# BENCH-JSON (or BENCH-ERROR) line on the console; tools/bench-linux.sh reads
# them from the lab's log.
#   sh /lab/bench-linux-inner.sh REPS MAX [MEM_MB]
reps=${1:-3}
max=${2:-4}
mem=${3:-512}
kernel=/lab/linux/vmlinux
initrd=/lab/linux/initrd.gz
dir=/tmp/bench-linux
mkdir -p "$dir"

echo "BENCH-INFO: kernel $(uname -r), $(nproc) CPU(s), $(grep -c . /proc/modules) modules"
echo "BENCH-INFO: $(qemu-system-x86_64 --version | head -n 1)"
echo "BENCH-INFO: reps=$reps max=$max mem=${mem}M"

one() {
	bench-linux-qmp --vmm "$1" --rep "$2" --max "$max" --mem "$mem" \
		--kernel "$kernel" --initrd "$initrd" --dir "$dir" --timeout 300 \
		--bin "$([ "$1" = hotvm ] && echo /bin/hotvm || echo qemu-system-x86_64)" ||
		failed=$((failed + 1))
	# Each run's files are only for a failure's report.
	rm -f "$dir/$1-$2".*
}

failed=0
r=1
while [ "$r" -le "$reps" ]; do
	if [ $((r % 2)) = 1 ]; then
		one hotvm "$r"; one qemu "$r"
	else
		one qemu "$r"; one hotvm "$r"
	fi
	r=$((r + 1))
done
echo "BENCH-DONE: $failed failed"
[ "$failed" = 0 ]
