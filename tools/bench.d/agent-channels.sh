#!/bin/sh
# agent-channels: the guest agent's share of a hot-add over COM2, virtio-console and vsock, in the nested lab
#
# One nested-lab run, the Debian 12 image (tools/debian-image.sh) booted
# by hotvm three times, once per --agent-channel (com2 with the image's
# hotvm-agent-com2 unit, virtio with Debian's own qemu-guest-agent unit,
# vsock with the image's hotvm-agent-vsock unit: a second qemu-ga on
# vsock-listen port 1024, any CID; --vsock cid=3), --agent-trace off on all three (the channel
# alone).  Per channel (each a sample of one):
#   ack-ms      a hot-add with "wait": "acknowledged" (Linux acked the
#               CPU; no agent)
#   started-ms  a hot-add with "wait": "started", onlined by the agent
#   calls-ms    that hot-add's agent calls (query-hotplug-stats' agent
#               call-us, as tools/bench debian takes the agent's share),
#               and without guest-set-vcpus (inside which Linux brings
#               the CPU up: not the channel's work)
#   call-ms     one agent call's round trip (guest-get-vcpus through
#               --agent-socket), median of 10, and its min and max
# A benchmark, not a test: the driver is
# tests/linux/test_debian_vsock.c's bench_agent_channels case.
#
#   tools/bench agent-channels [-b BUILD]
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
case ${1:-} in -h | --help) sed -n '2,22p' "$0"; exit 0 ;; esac
while getopts b:h opt; do
	case $opt in
	b) build=$OPTARG ;;
	h) sed -n '2,22p' "$0"; exit 0 ;;
	*) sed -n '2,22p' "$0" >&2; exit 2 ;;
	esac
done
ninja -C "$build" vmm/hotvm tests/linux/test-debian-vsock >/dev/null
"$top/tests/lab/debian.sh" "$build/lab-cache" "$top/tools/lab/lab.sh" \
	--smp 1 --linux-guest --silence 60 --retries 2 --timeout 900 \
	--hotvm "$build/vmm/hotvm" --bin "$build/tests/linux/test-debian-vsock" \
	--run "mkdir -p /tmp && HOTVM=/bin/hotvm test-debian-vsock /lab/linux /lab/debian bench_agent_channels" |
	tee "$build/bench-agent-channels.log" |
	awk '/^BENCH-AGENT / { print >"/dev/stderr"
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s-%s\t%s\n", f["channel"],
			f["acknowledged_ms"], f["started_ms"], f["agent_calls_ms"],
			f["agent_calls_no_setv_ms"], f["get_vcpus_median_ms"],
			f["min"], f["max"], f["onlined_by"] }' |
	python3 "$top/tools/bench_table.py" "agent-channels: a hot-add and the agent's share per channel (ms), Debian 12 in the nested lab" \
		channel "to acknowledged" "to started" "agent calls" "without set-vcpus" "agent call (median)" "call min-max" "onlined by"
