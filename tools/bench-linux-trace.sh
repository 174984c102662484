#!/bin/sh
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
#   tools/bench-linux-trace.sh [-n SAMPLES] [-b BUILD]
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
n=4
build=$top/build
while getopts n:b:h opt; do
	case $opt in
	n) n=$OPTARG ;;
	b) build=$OPTARG ;;
	*) sed -n '2,14p' "$0"; exit 2 ;;
	esac
done
ninja -C "$build" vmm/hotvm tests/linux/test-linux-trace >/dev/null
"$top/tools/lab/lab.sh" --cache "$build/lab-cache" --smp 1 --linux-guest \
	--silence 60 --retries 2 --timeout 900 \
	--hotvm "$build/vmm/hotvm" --bin "$build/tests/linux/test-linux-trace" \
	--run "mkdir -p /tmp && HOTVM=/bin/hotvm test-linux-trace /lab/linux bench $n" |
	tee "$build/bench-linux-trace.log" |
	awk '/^bench: / { v[$2] = v[$2] " " $4; r[$2] = r[$2] " " $6; print }
	     END { for (m in v) printf "%s: running-ms%s; reply-ms%s\n", m, v[m], r[m] }'
