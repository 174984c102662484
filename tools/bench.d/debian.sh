#!/bin/sh
# debian: the Debian 12 image with systemd on hotvm and on QEMU 7.2 in the nested lab: boot to multi-user, fio, hot-add to online and removal through the agent, the agent's share virtio vs COM2
#
# Issue 29, item 8.  One nested-lab run (tests/lab/debian.sh: the image of
# tools/debian-image.sh is the lab's /dev/vda), REPS runs of each VMM
# alternating which goes first (tools/lab/bench-debian.py does the lab's
# side), the same kernel, initramfs, 512 MiB and up to CPUS vCPUs:
#   boot        the VMM's start -> the unit hotvm-ready's
#               "ready: multi-user.target"
#   fio         a second virtio disk, a file on the lab's tmpfs (serial
#               "fio"), fio in the guest (libaio, O_DIRECT, RUNTIME s
#               each): sequential write and read (1 MiB, depth 8) MB/s,
#               random read and write (4 KiB, depth 32) IOPS; per job the
#               guest's own counts for both VMMs: disk requests per fio
#               I/O, interrupts per request, flushes
#   hot-add     device_add -> Linux has the CPU online, Debian's qemu-ga
#               onlining it: hotvm with "wait": "started" (its CPUS_CHANGED),
#               QEMU as libvirt's setvcpus --guest does it (guest-get-vcpus
#               until Linux lists the CPU, then guest-set-vcpus)
#   removal     device_del -> DEVICE_DELETED
#   agent share hotvm's agent calls (query-hotplug-stats agent call-us)
#               over the hot-add's request -> reply, on virtio-console
#               (hotvm) and on COM2 (hotvm-com2), with and without the
#               guest-set-vcpus call (inside which Linux brings the CPU up)
# hotvm runs with --agent and --agent-trace TRACE (default: hotvm's own
# default).  -p PHASES: fio and/or hotplug (the hot-add, removal and the
# agent's share), both by default; the boot always.  -V VMMS: which of
# hotvm,hotvm-com2,qemu (all by default).  -B OLD: an older build's hotvm
# too, as "hotvm-old" (virtio-console, like hotvm), in the same lab run:
# before/after figures.  Prints medians and hotvm/QEMU ratios.  A
# benchmark, not a test.
#
#   tools/bench debian [-r REPS] [-c CPUS] [-s MB] [-t RUNTIME] [-T on|off]
#                      [-p fio,hotplug] [-V hotvm,hotvm-com2,qemu] [-B OLD]
#                      [-b BUILD]
# About 12 minutes with the defaults (-r 2 -c 3 -s 256 -t 6); builds the
# image the first time (tools/debian-image.sh, a few minutes, root).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
reps=2
cpus=3
mb=256
runtime=6
trace=
phases=fio,hotplug
vmms=hotvm,hotvm-com2,qemu
old=
build=$top/build
case ${1:-} in -h | --help) sed -n '2,37p' "$0"; exit 0 ;; esac
while getopts r:c:s:t:T:p:V:B:b:h opt; do
	case $opt in
	r) reps=$OPTARG ;;
	c) cpus=$OPTARG ;;
	s) mb=$OPTARG ;;
	t) runtime=$OPTARG ;;
	T) trace="--trace $OPTARG" ;;
	p) phases=$OPTARG ;;
	V) vmms=$OPTARG ;;
	B) old=$(cd "$OPTARG" && pwd) ;;
	b) build=$OPTARG ;;
	h) sed -n '2,37p' "$0"; exit 0 ;;
	*) sed -n '2,37p' "$0" >&2; exit 2 ;;
	esac
done
ninja -C "$build" vmm/hotvm >/dev/null
log=$build/bench-debian.log
add=
if [ -n "$old" ]; then
	add="--add $old/vmm/hotvm:/bin/hotvm-old"
	vmms=hotvm-old,$vmms
fi
"$top/tests/lab/debian.sh" "$build/lab-cache" "$top/tools/lab/lab.sh" --smp 1 \
	--linux-guest --with-qemu --with-python --silence 120 --retries 1 \
	--timeout $((300 + reps * 3 * 300)) --hotvm "$build/vmm/hotvm" \
	--add "$top/tools/lab/bench-debian.py:/lab/bench-debian.py" $add \
	--add "$top/tools/hotvm_qmp.py:/lab/hotvm_qmp.py" \
	--run "mkdir -p /tmp && python3 /lab/bench-debian.py --reps $reps --cpus $cpus --fio-mb $mb --runtime $runtime --phases $phases --vmms $vmms $trace" |
	tee "$log" | grep -E '^(BENCH|  \|)' >&2 || true
grep '^BENCH ' "$log" | python3 -c '
import statistics, sys
sys.path.insert(0, sys.argv[1])
import bench_table
old = sys.argv[2]
v = {}
for line in sys.stdin:
    _, vmm, what, x = line.split()
    v.setdefault((vmm, what), []).append(float(x))
def med(vmm, what):
    x = v.get((vmm, what))
    return statistics.median(x) if x else None
def n(vmm, what):
    return len(v.get((vmm, what), []))
rows = []
for what, name in [("boot-ms", "boot to multi-user.target (ms)"),
                   ("fio-seqread", "fio sequential read (MB/s)"),
                   ("fio-seqwrite", "fio sequential write (MB/s)"),
                   ("fio-randread", "fio 4 KiB random read (IOPS)"),
                   ("fio-randwrite", "fio 4 KiB random write (IOPS)"),
                   ("fio-seqwrite-exits", "VM exits per request, sequential write"),
                   ("fio-seqread-exits", "VM exits per request, sequential read"),
                   ("fio-randread-exits", "VM exits per request, random read"),
                   ("fio-randwrite-exits", "VM exits per request, random write"),
                   ("fio-seqwrite-reqs", "disk requests per fio I/O, sequential write"),
                   ("fio-seqread-reqs", "disk requests per fio I/O, sequential read"),
                   ("fio-seqwrite-irqs", "interrupts per request, sequential write"),
                   ("fio-seqread-irqs", "interrupts per request, sequential read"),
                   ("fio-randread-irqs", "interrupts per request, random read"),
                   ("fio-randwrite-irqs", "interrupts per request, random write"),
                   ("fio-seqwrite-flushes", "flushes in the sequential write job"),
                   ("add-ms", "hot-add to Linux online, agent onlining (ms)"),
                   ("reply-ms", "hot-add to the reply (ms)"),
                   ("trace-ms", "hot-add to the Linux trace read (ms)"),
                   ("del-ms", "removal to DEVICE_DELETED (ms)"),
                   ("exits", "VM exits to the VMM in a hot-add"),
                   ("linux-steps", "Linux lane steps in a traced hot-add"),
                   ("agent-pct", "the agent calls share of a hot-add (%)"),
                   ("agent-x-pct", "... without guest-set-vcpus (%)")]:
    o = med("hotvm-old", what)
    h, c, q = med("hotvm", what), med("hotvm-com2", what), med("qemu", what)
    rows.append(([o, "%.2f" % (o / q) if o is not None and q else None]
                 if old else []) +
                [name, h, c, q, "%.2f" % (h / q) if h is not None and q else None,
                 "%s%d/%d/%d" % ("%d/" % n("hotvm-old", what) if old else "",
                                 n("hotvm", what), n("hotvm-com2", what),
                                 n("qemu", what))])
    if old:  # the name first
        rows[-1] = rows[-1][2:3] + rows[-1][:2] + rows[-1][3:]
bench_table.table("debian: the Debian 12 image, hotvm vs QEMU 7.2 q35, medians",
                  [""] + (["hotvm before (virtio)", "before/QEMU"] if old else []) +
                  ["hotvm (virtio)", "hotvm (COM2)", "QEMU", "hotvm/QEMU",
                   "samples"], rows)
' "$top/tools" "$old"
grep -q '^BENCH-DONE 0 failed' "$log"
