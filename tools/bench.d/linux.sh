#!/bin/sh
# linux: Debian's kernel in the nested lab: boot, hot-add, removal, Linux's soft offline/online; hotvm vs QEMU
#
# Linux-guest benchmark, hotvm and QEMU side by side in one nested-lab run
# (tools/lab), booting the same Debian kernel (PVH vmlinux) and initramfs
# (tools/lab/guest/init) on the lab's real KVM:
#   boot    process start -> the guest's "ready" line
#   add k   QMP device_add -> the guest's "online: <cpulist>" line with k CPUs
#   del k   QMP device_del -> DEVICE_DELETED (k CPUs before the removal)
#   soft    with MAX CPUs online, Linux's own offline and online of cpu1
#           (echo 0 / echo 1 to its online file, SOFT times, timed inside
#           the guest): the floor of a hot-add, printed against it
# for k = 2..MAX (boot with 1, add one by one up to MAX, remove one by one),
# REPS runs of each VMM, alternating which goes first.  Prints the medians
# and the hotvm/QEMU ratios, and writes every raw figure to a JSON file.
# With -a, a third VMM column: hotvm --agent booting the same guest without
# its onlining rule (hotvm.online=none), device_add with "wait": "started",
# so hotvm's guest agent client onlines each new CPU (guest-set-vcpus)
# after its grace time; the guest prints the same "online:" line.
# With -B BEFORE, another column: BEFORE's hotvm (a build of an earlier
# tree) running the same scenario as hotvm, to show in one run what a
# change costs a Linux guest.
# A benchmark, not a test.  CLOCK_MONOTONIC inside the lab (tools/bench_linux_qmp.c).
#
#   tools/bench linux [-a] [-B BEFORE] [-r REPS] [-m MAX] [-s SOFT] [-b BUILD] [-o JSON] [-l LOG] [-t SECONDS]
#     -a  also hotvm with the guest agent onlining (the guest carries qemu-ga)
#     -B  also the hotvm of build directory BEFORE (column "hotvm-before")
#     -r  runs of each VMM (default 3)
#     -m  most CPUs (default 4; 2..64)
#     -s  soft offline/online cycles of cpu1 per run (default 3; 0: none)
#     -b  build directory with vmm/hotvm and lab-cache (default build)
#     -o  the JSON file (default BUILD/bench-linux.json)
#     -l  the lab's console log (default BUILD/bench-linux.log)
#     -t  the lab's timeout (default from REPS and MAX)
# Defaults take about 3 minutes on a quiet host (8 on a busy one).  Needs
# python3 and what tools/lab/lab.sh needs.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
reps=3
max=4
soft=3
build=$top/build
json=
log=
timeout=
agent=
before=

case ${1:-} in -h | --help) sed -n '2,36p' "$0"; exit 0 ;; esac
while getopts aB:r:m:s:b:o:l:t:h opt; do
	case $opt in
	a) agent=agent ;;
	B) before=$OPTARG ;;
	r) reps=$OPTARG ;;
	m) max=$OPTARG ;;
	s) soft=$OPTARG ;;
	b) build=$OPTARG ;;
	o) json=$OPTARG ;;
	l) log=$OPTARG ;;
	t) timeout=$OPTARG ;;
	h) sed -n '2,36p' "$0"; exit 0 ;;
	*) sed -n '2,36p' "$0" >&2; exit 2 ;;
	esac
done
case $reps$max$soft in *[!0-9]*) echo "bench-linux: -r, -m and -s take numbers" >&2; exit 2 ;; esac
[ "$reps" -ge 1 ] && [ "$max" -ge 2 ] && [ "$max" -le 64 ] ||
	{ echo "bench-linux: need -r >= 1 and 2 <= -m <= 64" >&2; exit 2; }
json=${json:-$build/bench-linux.json}
log=${log:-$build/bench-linux.log}
# A boot takes 15-40 s in the lab (80 s on a busy host), a hotplug step 1-3 s.
nvmm=2
[ -z "$agent" ] || nvmm=$((nvmm + 1))
[ -z "$before" ] || nvmm=$((nvmm + 1))
timeout=${timeout:-$((120 + reps * nvmm * (120 + max * 20 + soft * 6)))}
hotvm=$build/vmm/hotvm
[ -x "$hotvm" ] || { echo "bench-linux: $hotvm not built (ninja -C $build)" >&2; exit 2; }
before_bin=
if [ -n "$before" ]; then
	[ -x "$before/vmm/hotvm" ] ||
		{ echo "bench-linux: -B $before: no vmm/hotvm there (ninja -C $before)" >&2; exit 2; }
	before_bin="--bin $before/vmm/hotvm:/bin/hotvm-before"
fi


# The QMP driver runs inside the lab (lab.sh copies its libraries).
drv=$build/tools/bench-linux-qmp
ninja -C "$build" tools/bench-linux-qmp >/dev/null ||
	{ echo "bench-linux: cannot build $drv (ninja -C $build)" >&2; exit 2; }

echo "bench-linux: $reps runs of each VMM, 1..$max CPUs, in the nested lab (timeout ${timeout}s)" >&2
# The lab's kernel sometimes freezes under TCG with nothing on its console:
# where lab.sh can tell (--silence), boot it again; the driver prints a
# progress line after every boot and hot-add, well within 180 s.
lab_extra=
if "$top/tools/lab/lab.sh" --help | grep -q -e '--silence'; then
	lab_extra="--silence 180 --retries 2"
fi
status=0
# shellcheck disable=SC2086  # lab_extra is words
"$top/tools/lab/lab.sh" --cache "$build/lab-cache" --smp 1 --linux-guest --with-qemu $lab_extra \
	--hotvm "$hotvm" --bin "$drv" $before_bin \
	--add "$top/tools/lab/bench-linux-inner.sh:/lab/bench-linux-inner.sh" \
	--run "SOFT=$soft sh /lab/bench-linux-inner.sh $reps $max 512 ${agent:--} ${before:+before}" \
	--log "$log" --quiet --timeout "$timeout" || status=$?

grep -a '^BENCH-ERROR' "$log" | tr -d '\r' >&2 || :

pstatus=0
python3 - "$log" "$json" "$reps" "$max" "$status" "$agent" "$before" "$top/tools" <<'EOF' || pstatus=$?
import json, statistics, sys, time, platform
sys.path.insert(0, sys.argv[8])
from bench_table import table as print_table

logf, out, reps, mx, status = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
vmms = ('hotvm',) + (('hotvm-agent',) if sys.argv[6] else ()) + \
    (('hotvm-before',) if sys.argv[7] else ()) + ('qemu',)
heads = {'hotvm': 'hotvm ms', 'hotvm-agent': 'hotvm, agent onlines ms',
         'hotvm-before': 'hotvm before ms', 'qemu': 'QEMU ms'}
runs, info, errors = [], [], []
for line in open(logf, 'rb').read().decode('utf-8', 'replace').splitlines():
    line = line.strip('\r')
    if line.startswith('BENCH-JSON: '):
        runs.append(json.loads(line[len('BENCH-JSON: '):]))
    elif line.startswith('BENCH-INFO: '):
        info.append(line[len('BENCH-INFO: '):])
    elif line.startswith('BENCH-ERROR: '):
        errors.append(line[len('BENCH-ERROR: '):])

def med(v):
    v = [x for x in v if x is not None and x >= 0]
    return statistics.median(v) if v else None

# rows: (label, key function over one run -> list of values)
rows = [('boot to ready', lambda r: [r['boot_ms']])]
for k in range(2, mx + 1):
    rows.append(('add k=%d (to online)' % k,
                 lambda r, k=k: [a['online_ms'] for a in r['add'] if a['k'] == k]))
rows.append(('add, all k', lambda r: [a['online_ms'] for a in r['add']]))
for k in range(mx, 1, -1):
    rows.append(('del k=%d (to DEVICE_DELETED)' % k,
                 lambda r, k=k: [d['deleted_ms'] for d in r['del'] if d['k'] == k]))
rows.append(('del, all k', lambda r: [d['deleted_ms'] for d in r['del']]))
def first_ost(d, key):
    return [d['osts'][0][key]] if d['osts'] else []

extra = [
    ('boot: first console line', lambda r: [r['first_line_ms']]),
    ('boot: guest printk clock at last line', lambda r: [r['printk_s'] * 1e3]),
    ('add: device_add reply', lambda r: [a['reply_ms'] for a in r['add']]),
    ('add: ACPI_DEVICE_OST (insert)', lambda r: [a['ost_ms'] for a in r['add']]),
    ('del: device_del reply', lambda r: [d['reply_ms'] for d in r['del']]),
    ('del: eject OST received', lambda r: [x for d in r['del'] for x in first_ost(d, 'ms')]),
    ('del: eject OST stamped', lambda r: [x for d in r['del'] for x in first_ost(d, 'stamp_ms')]),
    ('del: CPU gone from online:', lambda r: [d['offline_ms'] for d in r['del']]),
]

def soft(key):
    return lambda r: [x / 1e3 for x in (r.get('soft') or {}).get(key, [])]

rows += [('soft online of cpu1 (echo 1), in the guest', soft('online_us')),
         ('soft offline of cpu1 (echo 0), in the guest', soft('offline_us'))]

def table(rows):
    res = []
    for label, f in rows:
        m = {}
        for vmm in vmms:
            m[vmm] = med([x for r in runs if r['vmm'] == vmm for x in f(r)])
        ratio = m['hotvm'] / m['qemu'] if m['hotvm'] is not None and m['qemu'] else None
        res.append((label, m, ratio))
    return res

def fmt(v, r=False):
    if v is None:
        return '-'
    return '%.2f' % v if r else '%.1f' % v

n = {v: sum(1 for r in runs if r['vmm'] == v) for v in vmms}
main, more = table(rows), table(extra)
for i in info:
    print('# ' + i)
# What a hot-add costs beyond Linux's own bring-up of the CPU.
beyond = {}
for vmm in vmms:
    a = med([x['online_ms'] for r in runs if r['vmm'] == vmm for x in r['add']])
    o = med([x for r in runs if r['vmm'] == vmm for x in soft('online_us')(r)])
    beyond[vmm] = a - o if a is not None and o is not None else None
main.append(('hot-add beyond the soft online (add, all k - soft online)', beyond,
             beyond['hotvm'] / beyond['qemu']
             if beyond['hotvm'] is not None and beyond['qemu'] else None))
head = ['operation'] + [heads[v] for v in vmms] + ['hotvm/QEMU']
print_table('linux: Linux guest in the nested lab, median ms over %s runs (%s)'
            % (' / '.join('%d %s' % (n[v], v) for v in vmms), time.strftime('%Y-%m-%d')),
            head, [[label] + [fmt(m[v]) for v in vmms] + [fmt(ratio, True)]
                   for label, m, ratio in main])
print_table('linux: also (medians; hotplug rows over all k)', head,
            [[label] + [fmt(m[v]) for v in vmms] + [fmt(ratio, True)]
             for label, m, ratio in more])

doc = {
    'benchmark': 'tools/bench linux',
    'date': time.strftime('%Y-%m-%dT%H:%M:%S%z'),
    'host': platform.node(),
    'reps': reps, 'max': mx, 'lab_status': status,
    'lab_info': info, 'errors': errors,
    'units': 'ms, CLOCK_MONOTONIC inside the lab; -1: the event never came',
    'medians': [dict(operation=l, ratio=r, **m) for l, m, r in main + more],
    'runs': runs,
}
with open(out, 'w') as f:
    json.dump(doc, f, indent=1)
print('\nraw figures: %s' % out)
if len(runs) != len(vmms) * reps:
    print('bench-linux: %d of %d runs gave figures' % (len(runs), len(vmms) * reps), file=sys.stderr)
    sys.exit(1)
EOF
[ "$status" = 0 ] || echo "bench-linux: the lab exited with status $status (log: $log)" >&2
[ "$status" = 0 ] && [ "$pstatus" = 0 ]
