#!/bin/sh
# linux-trace: what mirroring Linux's cpuhp trace costs a hot-add, in the nested lab
#
# The cost of mirroring Linux's cpuhp trace (docs/design.md §6.7), in one
# nested-lab run: Debian's kernel with qemu-ga on hotvm --agent, N hot-adds
# ("wait": "started") with Linux's trace read around each, then tracefs is
# unmounted in the guest and N more without it.  Per sample:
#   running-ms  the request -> hotvm's "started" stage (Linux has the CPU
#               online, by guest-get-vcpus)
#   reply-ms    the request -> cpu-hotplug's reply (with the trace: after
#               the trace was read, its events sent)
# The first sample of each mode warms up and is not printed.  A benchmark,
# not a test: the driver is tests/linux/test_linux_trace.c's "bench" mode.
#
#   tools/bench linux-trace [-n SAMPLES] [-b BUILD]
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
n=4
build=$top/build
case ${1:-} in -h | --help) sed -n '2,15p' "$0"; exit 0 ;; esac
while getopts n:b:h opt; do
	case $opt in
	n) n=$OPTARG ;;
	b) build=$OPTARG ;;
	h) sed -n '2,15p' "$0"; exit 0 ;;
	*) sed -n '2,15p' "$0" >&2; exit 2 ;;
	esac
done
ninja -C "$build" vmm/hotvm tests/linux/test-linux-trace >/dev/null
"$top/tools/lab/lab.sh" --cache "$build/lab-cache" --smp 1 --linux-guest \
	--silence 60 --retries 2 --timeout 900 \
	--hotvm "$build/vmm/hotvm" --bin "$build/tests/linux/test-linux-trace" \
	--run "mkdir -p /tmp && HOTVM=/bin/hotvm test-linux-trace /lab/linux bench $n" |
	tee "$build/bench-linux-trace.log" |
	awk '/^bench: / { v[$2] = v[$2] " " $4; r[$2] = r[$2] " " $6; print >"/dev/stderr" }
	     END { for (m in v) printf "%s\t%s\t%s\n", m, v[m], r[m] }' |
	python3 "$top/tools/bench_table.py" "linux-trace: a hot-add with and without Linux's trace, each sample (ms)" \
		mode "to running" "to the reply"
