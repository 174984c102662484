#!/usr/bin/env bash
# net: virtio-net on a tap in the nested lab, hotvm against QEMU 7.2 (iperf3 both ways, ping)
#
# The Debian image (tools/debian-image.sh) as the lab's disk; inside,
# tools/lab/bench-net.py boots it on hotvm (--net on a tap, with and
# without its offloads and mergeable buffers) and on QEMU 7.2's microvm
# (virtio-net-device on -netdev tap, vhost=off), one vCPU each, the taps in
# one bridge that holds iperf3's server: iperf3 TCP throughput from the
# guest (tx) and to it (-R, rx), and ping's round trip from the lab.
# Prints one table (the mean of the repetitions, and each figure against
# QEMU's) and keeps the lab's log.
#
#   tools/bench net [-b BUILD] [-r REPS] [-t SECONDS] [-p PINGS]
#                   [--vmms hotvm,qemu,...] [-l LOG]
#     -b       build with vmm/hotvm and lab-cache (default build)
#     -r       repetitions, the VMMs' order alternating (default 1)
#     -t       seconds of each iperf3 run (default 10)
#     -p       pings (default 50, 0.2 s apart)
#     --vmms   of hotvm, hotvm-nooffload, hotvm-nomrg, qemu (default all)
#     -l       the lab's console log (default BUILD/bench-net.log)
# About 6 minutes with the defaults (the image's first build: 2 more).
# Needs what tools/lab/lab.sh needs, iperf3 and mmdebstrap (tools/setup.sh).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
reps=1
secs=10
pings=50
vmms=hotvm,qemu,hotvm-nooffload,hotvm-nomrg
log=

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	-[brtpl] | --vmms) [ $# -ge 2 ] || usage ;;
	esac
	case $1 in
	-b) build=$2; shift ;;
	-r) reps=$2; shift ;;
	-t) secs=$2; shift ;;
	-p) pings=$2; shift ;;
	--vmms) vmms=$2; shift ;;
	-l) log=$2; shift ;;
	-h | --help) usage 0 ;;
	*) echo "bench net: unknown option '$1'" >&2; usage ;;
	esac
	shift
done
build=$(cd "$build" && pwd)
log=${log:-$build/bench-net.log}
[ -x "$build/vmm/hotvm" ] || { echo "bench net: no $build/vmm/hotvm (ninja -C $build)" >&2; exit 2; }
iperf=$(command -v iperf3) || { echo "bench net: no iperf3 here (tools/setup.sh)" >&2; exit 2; }

set +e
"$top/tests/lab/debian.sh" "$build/lab-cache" "$top/tools/lab/lab.sh" \
	--smp 1 --silence 120 --retries 1 --timeout 2400 \
	--with-net --with-qemu --with-python --linux-guest \
	--hotvm "$build/vmm/hotvm" --bin "$iperf" \
	--add "$top/tools/lab/bench-net.py:/lab/bench-net.py" \
	--add "$top/tools/hotvm_qmp.py:/lab/hotvm_qmp.py" \
	--run "mkdir -p /tmp && python3 /lab/bench-net.py --reps $reps --seconds $secs --pings $pings --vmms $vmms" \
	>"$log" 2>&1
st=$?
set -e
grep -E '^BENCH' "$log" || true
python3 - "$log" "$top/tools" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import bench_table
runs = {}
for line in open(sys.argv[1], errors='replace'):
    w = line.split()
    if len(w) == 4 and w[0] == 'BENCH':
        runs.setdefault(w[1], {}).setdefault(w[2], []).append(float(w[3]))
mean = {v: {k: sum(x) / len(x) for k, x in f.items()} for v, f in runs.items()}
q = mean.get('qemu', {})
def vs(v, k):
    return mean[v][k] / q[k] if q.get(k) and k in mean[v] else None
rows = [[v, mean[v].get('tx-mbps'), mean[v].get('rx-mbps'),
         mean[v].get('rtt-ms'), vs(v, 'tx-mbps'), vs(v, 'rx-mbps'),
         vs(v, 'rtt-ms')] for v in sorted(mean)]
bench_table.table('virtio-net on a tap in the nested lab (iperf3 TCP, ping)',
                  ['VMM', 'tx Mbit/s', 'rx Mbit/s', 'RTT ms', 'tx vs QEMU',
                   'rx vs QEMU', 'RTT vs QEMU'],
                  [[r[0]] + [bench_table.cell(c, '%.2f') for c in r[1:]]
                   for r in rows])
PY
if [ $st -ne 0 ]; then
	echo "bench net: the lab ended $st (its log: $log)" >&2
	exit $st
fi
