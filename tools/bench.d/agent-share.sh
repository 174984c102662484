#!/bin/sh
# agent-share: the guest agent's share of a hot-add as --agent has it (virtio-console, Linux's trace on), in the nested lab
#
# One nested-lab run, the Debian 12 image (tools/debian-image.sh) booted
# by hotvm with --agent's defaults (Debian's own qemu-guest-agent unit on
# the virtio-console port, --agent-trace on); CPU 1 hot-added with
# "wait": "started" (onlined by the agent) and removed, four times.  Per
# hot-add:
#   ms          the request to cpu-hotplug's reply
#   calls       hotvm's agent calls in it (query-hotplug-stats' calls)
#   calls-ms    their wall time (call-us), and of that guest-set-vcpus'
#               (set-vcpus-us: Linux brings the CPU up inside that call)
#   share       calls-ms / ms; and without guest-set-vcpus
# With -B OLD (a build dir), OLD's hotvm runs first in the same lab boot,
# for before/after figures.  A benchmark, not a test: the driver is
# tests/linux/test_debian_vsock.c's bench_agent_share case.
#
#   tools/bench agent-share [-b BUILD] [-B OLD]
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
old=
case ${1:-} in -h | --help) sed -n '2,19p' "$0"; exit 0 ;; esac
while getopts b:B:h opt; do
	case $opt in
	b) build=$OPTARG ;;
	B) old=$OPTARG ;;
	h) sed -n '2,19p' "$0"; exit 0 ;;
	*) sed -n '2,19p' "$0" >&2; exit 2 ;;
	esac
done
ninja -C "$build" vmm/hotvm tests/linux/test-debian-vsock >/dev/null
run="mkdir -p /tmp"
add=
if [ -n "$old" ]; then
	add="--add $(cd "$old" && pwd)/vmm/hotvm:/bin/hotvm-old"
	run="$run; echo BENCH-VMM old; HOTVM=/bin/hotvm-old test-debian-vsock /lab/linux /lab/debian bench_agent_share"
fi
run="$run; echo BENCH-VMM new; HOTVM=/bin/hotvm test-debian-vsock /lab/linux /lab/debian bench_agent_share"
# shellcheck disable=SC2086 # $add is two words or none
"$top/tests/lab/debian.sh" "$build/lab-cache" "$top/tools/lab/lab.sh" \
	--smp 1 --linux-guest --silence 60 --retries 2 --timeout 900 \
	--hotvm "$build/vmm/hotvm" --bin "$build/tests/linux/test-debian-vsock" \
	$add --run "$run" |
	tee "$build/bench-agent-share.log" |
	awk '/^BENCH-VMM / { vmm = $2 }
	/^BENCH-SHARE / { print >"/dev/stderr"
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", vmm, f["i"],
			f["hotadd_ms"], f["calls"], f["calls_ms"], f["setv_ms"],
			f["share"], f["share_no_setv"], f["remove_ms"] }' |
	python3 "$top/tools/bench_table.py" "agent-share: a hot-add onlined by the agent over virtio-console, Linux's trace on (ms), Debian 12 in the nested lab" \
		hotvm "#" "hot-add" "agent calls" "calls ms" "set-vcpus ms" "share" "share without set-vcpus" "removal"
