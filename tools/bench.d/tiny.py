#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tiny: the tiny guest on /dev/kvm: boot, hot-add, removal, bursts, the k-th vCPU, RSS, per-state times; hotvm vs QEMU

One QMP scenario, run against hotvm and against QEMU in the
same run, booting the same tiny guest (hotvm-tiny.elf, QEMU through its PVH
loader, -M q35 -accel kvm -cpu max,-arch-capabilities) on /dev/kvm:

  boot      process start -> the guest's "ready" line (every VM started)
  add1      device_add -> the guest's "online: 0,S" line, a fresh socket S
            each time (QEMU 7.2 cannot plug a removed socket again)
  del1      device_del -> DEVICE_DELETED
  readd1    hotvm only: device_add of socket 1 again once the add1 cycles
            removed it (a parked vCPU: fd and thread kept), redel1 its
            device_del
  add8      8 device_add at once (one write) -> "online:" with all 8
  del8      8 device_del at once -> the 8 DEVICE_DELETED
  addmax    max-1 device_add at once, delmax the same back
  kth       the k-th vCPU's device_add -> online, k = 2..max, one by one;
            host RSS (VmRSS) and thread count after each
  resize    hotvm's cpu-resize 1 -> max (no QEMU equivalent)
  burstK    K device_add at once (hotvm: one batch) -> online, K = 1, 2,
            4, 8, each against seqK: the same K added one after another
            (fresh sockets each time); the table sets a K-CPU batch
            against K single adds, and the resize against the k-th
            phase's adds summed
  states    hotvm's per-state medians (build/tests/e2e/bench-states,
            hotvm's cpu-hotplug timing every host and guest state), for
            the --before build's hotvm too

Every operation from add1 to resize also counts the exits it cost: hotvm's
own count of its vCPUs' returns to user space (query-hotplug-stats, before
and after) and, with --kernel-exits, the kernel's: the kvm:kvm_userspace_exit
and kvm:kvm_exit tracepoints (tracefs, as root) recorded for the VMM's
threads alone (set_event_pid with event-fork) around each operation, the
same for hotvm and QEMU.  Exit counts do not depend on the host's load.

Prints a table with medians, p99, exits per operation and the hotvm/QEMU
ratio, writes every raw figure to a JSON file and, with gnuplot, a PNG
of the k-th vCPU's latency and RSS against the vCPU count for both.  With
--linux it also runs tools/bench linux (the Linux guest in the nested
lab) and puts its figures into the same JSON and table.  A benchmark, not
a test.

  tools/bench tiny [-b BUILD] [-c CYCLES] [-m MAX] [-o JSON]
                         [-p PNG] [--no-qemu] [--prestage K]
                         [--before BUILD] [--kernel-exits]
                         [--linux [-M LMAX] [-R REPS]]
  tools/bench tiny --table JSON   (the table of a saved run)

Phase by phase, every VMM in turn (a noisy host weighs on all alike).
Times are CLOCK_MONOTONIC in this process: a line is stamped when its
reader thread gets it, an event when its QMP reader does; every wait is
on those with a deadline, never a sleep.
"""
import argparse
import collections
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, 'tools'))
from bench_table import table as print_table  # noqa: E402
from hotvm_qmp import Qmp, QmpError  # noqa: E402
TIMEOUT = float(os.environ.get('BENCH_TIMEOUT', '120'))


def cpulist(cpus):
    """Linux cpulist of sorted CPU numbers, as the guest prints it."""
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else '%d-%d' % (cpus[i], cpus[j]))
        i = j + 1
    return ','.join(out)


class VM:
    """hotvm or QEMU booting the tiny guest with 1 of @maxcpus vCPUs, its
    console on stdout, QMP on a unix socket."""

    def __init__(self, kind, args, maxcpus, tmp):
        self.kind = kind
        self.lines = queue.Queue()
        self.pending = collections.deque()  # ids sent, not yet replied
        self.online = None
        self.tail = collections.deque(maxlen=40)  # the console, for errors
        path = os.path.join(tmp, '%s-%d.sock' % (kind, time.monotonic_ns()))
        build = args.before if kind == 'hotvm-before' else args.build
        elf = os.path.join(build, 'guest', 'hotvm-tiny.elf')
        if kind.startswith('hotvm'):
            argv = [os.path.join(build, 'vmm', 'hotvm'), 'run',
                    '--kernel', elf, '--memory', '128',
                    '--cpus', 'boot=1,max=%d' % maxcpus,
                    '--serial', 'stdio', '--api-socket', path]
            if kind == 'hotvm-prestage':
                argv += ['--prestage', str(args.prestage)]
        else:
            smp = '1,maxcpus=%d,sockets=%d,cores=1,threads=1' % (maxcpus,
                                                                 maxcpus)
            argv = [args.qemu, '-accel', 'kvm', '-M', 'q35',
                    '-cpu', 'max,-arch-capabilities', '-smp', smp,
                    '-m', '128', '-display', 'none', '-nodefaults',
                    '-no-reboot', '-serial', 'stdio', '-monitor', 'none',
                    '-qmp', 'unix:%s,server=on,wait=off' % path,
                    '-kernel', elf, '-append', '',
                    '-device', 'isa-debug-exit,iobase=0x501,iosize=1']
        self.t_start = time.monotonic()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        threading.Thread(target=self._serial, daemon=True).start()
        self.t_ready = self.wait_line(lambda l: l.startswith('ready'),
                                      "'ready'")
        # Both create the socket before the guest runs.
        self.qmp = Qmp.connect(path, timeout=0, reader=True)
        self.qmp.negotiate(TIMEOUT)
        self.slots = sorted(
            (c for c in self.cmd('query-hotpluggable-cpus')),
            key=lambda c: c['props']['socket-id'])

    def _serial(self):
        for raw in self.proc.stdout:
            t = time.monotonic()
            line = raw.decode(errors='replace').rstrip('\r\n')
            self.tail.append(line)
            i = line.find('online: ')
            if i < 0:
                i = line.find('ready')
            self.lines.put((t, line[i:] if i > 0 else line))
        self.lines.put((time.monotonic(), None))

    def send(self, name, **args):
        self.send_all([(name, args)])

    def send_all(self, cmds):
        """@cmds [(name, args)] in one write: a burst the VMM reads
        together (one at a time, hotvm may start the first before the
        next has come, and that one is not in the batch)."""
        self.pending.extend(self.qmp.send_all(cmds))

    def reply(self, name):
        try:
            return self.qmp.result(self.pending.popleft(), name, TIMEOUT)
        except QmpError as e:
            # The guest's console says why a hot-add failed.
            raise RuntimeError('%s %s: %s\n# the console\'s last lines:\n'
                               '%s' % (self.kind, name, e.desc,
                                       '\n'.join('#   ' + l
                                                  for l in self.tail)))

    def cmd(self, name, **args):
        self.send(name, **args)
        return self.reply(name)

    def wait_line(self, pred, what):
        end = time.monotonic() + TIMEOUT
        while True:
            try:
                t, line = self.lines.get(timeout=max(end - time.monotonic(),
                                                     0))
            except queue.Empty:
                raise RuntimeError('%s: timeout waiting for %s' %
                                   (self.kind, what))
            if line is None:
                raise RuntimeError('%s exited waiting for %s' %
                                   (self.kind, what))
            if line.startswith('online: '):
                self.online = line[8:]
            if pred(line):
                return t

    def wait_online(self, cpus):
        want = cpulist(sorted(cpus))
        if self.online == want:
            return time.monotonic()
        return self.wait_line(lambda l: l == 'online: ' + want,
                              "'online: %s'" % want)

    def wait_deleted(self, ids):
        left, last = set(ids), 0.0
        end = time.monotonic() + TIMEOUT
        while left:
            got = self.qmp.next_event(max(end - time.monotonic(), 0))
            if not got and self.qmp.closed:
                raise RuntimeError('%s: QMP closed' % self.kind)
            if not got:
                raise RuntimeError('%s: timeout waiting for DEVICE_DELETED '
                                   'of %s' % (self.kind, sorted(left)))
            t, ev = got
            if ev['event'] == 'DEVICE_DELETED':
                dev = ev['data'].get('device')
                if dev in left:
                    left.discard(dev)
                    last = t
        return last

    def add(self, socks):
        """device_add of every socket in @socks at once (replies in order,
        hotvm's after the guest took the CPU); the time the guest's online
        line lists them all."""
        self.send_all([('device_add',
                        dict(driver=self.slots[s]['type'], id='cpu%d' % s,
                             **self.slots[s]['props'])) for s in socks])
        for _ in socks:
            self.reply('device_add')
        return self.wait_online([0] + list(socks) + self.extra)

    def delete(self, socks):
        self.send_all([('device_del', {'id': 'cpu%d' % s}) for s in socks])
        for _ in socks:
            self.reply('device_del')
        t = self.wait_deleted(['cpu%d' % s for s in socks])
        self.wait_online([0] + self.extra)
        return t

    extra = []  # CPUs left plugged by the kth phase

    def stats(self):
        """hotvm's query-hotplug-stats: its count of its vCPUs' exits to
        user space since the start ('exits') and each operation kind's own
        share ('own'); {} for QEMU (builds before either lack them)."""
        if not self.kind.startswith('hotvm'):
            return {}
        return self.cmd('query-hotplug-stats')

    def status(self):
        """(VmRSS KiB, Threads) of the VMM process."""
        rss = thr = 0
        with open('/proc/%d/status' % self.proc.pid) as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    rss = int(line.split()[1])
                elif line.startswith('Threads:'):
                    thr = int(line.split()[1])
        return rss, thr

    def stop(self):
        try:
            self.cmd('quit')
        except Exception:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.qmp.close()


class KvmTrace:
    """The kernel's count of one VMM's exits: kvm:kvm_userspace_exit (each
    return from KVM_RUN) and kvm:kvm_exit (every VM exit, handled in the
    kernel or not), with kvm:kvm_pio for the ports, recorded in tracefs for
    the VMM's threads alone (set_event_pid, and event-fork for the threads
    it starts later)."""

    EVENTS = ('kvm_userspace_exit', 'kvm_exit', 'kvm_pio')
    # "hotvm-345  (  340) [000] d..1.  12.345: kvm_exit: vcpu 0 reason io"
    LINE = re.compile(r'-(\d+)\s+\(\s*([-\d]+)\)\s+\[\d+\]\s+\S+\s+'
                      r'[\d.]+:\s+(\w+):\s(.*)$')
    # What each event is counted by: its reason, or the port.
    KEY = {'kvm_pio': re.compile(r'\bat (0x[0-9a-f]+)'),
           'kvm_exit': re.compile(r'\breason (\S+)'),
           'kvm_userspace_exit': re.compile(r'\breason (\S+)')}

    def __init__(self, root):
        self.root, self.pid = root, None
        if not os.path.exists(self.path('events/kvm/kvm_exit')):
            raise RuntimeError('%s: no tracefs with the kvm events (mount -t '
                               'tracefs nodev %s; load kvm)' % (root, root))
        self.write('tracing_on', '0')
        self.write('buffer_size_kb', '16384')
        for o in ('event-fork', 'record-tgid'):
            self.write('options/' + o, '1')
        for e in self.EVENTS:
            self.write('events/kvm/%s/enable' % e, '1')

    def path(self, rel):
        return os.path.join(self.root, rel)

    def write(self, rel, text):
        with open(self.path(rel), 'w') as f:
            f.write(text)

    def follow(self, pid):
        """Record only @pid's threads from now on."""
        self.pid = pid
        tids = os.listdir('/proc/%d/task' % pid)
        self.write('set_event_pid', ' '.join(tids))

    def start(self):
        self.write('trace', '')
        self.write('tracing_on', '1')

    def stop(self):
        """What was recorded since start(): per event, its count and its
        reasons; 'lost' > 0 if the buffer overflowed."""
        self.write('tracing_on', '0')
        out = {e: {'n': 0, 'reasons': {}} for e in self.EVENTS}
        out['lost'] = out['foreign'] = 0
        with open(self.path('trace')) as f:
            for line in f:
                if line.startswith('#'):
                    m = re.search(r'entries-in-buffer/entries-written: '
                                  r'(\d+)/(\d+)', line)
                    if m:
                        out['lost'] = int(m.group(2)) - int(m.group(1))
                    continue
                m = self.LINE.search(line)
                if not m or m.group(3) not in out:
                    continue
                if m.group(2) != str(self.pid):
                    out['foreign'] += 1
                    continue
                e = out[m.group(3)]
                k = self.KEY[m.group(3)].search(m.group(4))
                k = k.group(1) if k else '?'
                e['n'] += 1
                e['reasons'][k] = e['reasons'].get(k, 0) + 1
        return out

    def close(self):
        self.write('tracing_on', '0')
        for e in self.EVENTS:
            self.write('events/kvm/%s/enable' % e, '0')
        self.write('set_event_pid', '')
        self.write('trace', '')


def exits_delta(a, b):
    """b - a of two query-hotplug-stats exits objects (by-device too)."""
    if a is None or b is None:
        return None
    d = {k: b[k] - a.get(k, 0) for k in b if isinstance(b[k], int)}
    bd, ad = b.get('by-device', {}), a.get('by-device', {})
    d['by-device'] = {k: bd[k] - ad.get(k, 0) for k in bd
                      if bd[k] != ad.get(k, 0)}
    return d


def own_delta(a, b):
    """hotvm's own share between two query-hotplug-stats replies, summed
    over the operation kinds: own-us (the operation thread's CPU time
    plus the exits' handling), own-exit-us (the exits' handling alone)
    and the operations; --prestage's refills of its pool apart
    (prestage_us); None without it (QEMU, an older build)."""
    if 'own' not in a or 'own' not in b:
        return None

    def tot(s, f, pool=False):
        return sum(v.get(f, 0) for k, v in s['own'].items()
                   if (k == 'prestage') == pool)
    return {'own_us': tot(b, 'own-us') - tot(a, 'own-us'),
            'exit_us': tot(b, 'own-exit-us') - tot(a, 'own-exit-us'),
            'ops': tot(b, 'operations') - tot(a, 'operations'),
            'prestage_us': tot(b, 'own-us', True) - tot(a, 'own-us', True)}


def pct(v, p):
    if not v:
        return None
    s = sorted(v)
    return s[int(p * (len(s) - 1) + 0.5)]


def ms(t0, t1):
    return (t1 - t0) * 1e3


class Run:
    """One VMM's raw figures; every VM it boots adds a boot time."""

    def __init__(self, kind, args, tmp, res, trace=None):
        self.kind, self.args, self.tmp, self.trace = kind, args, tmp, trace
        self.r = res.setdefault(kind, {k: [] for k in (
            'boot', 'add1', 'del1', 'readd1', 'redel1', 'add8', 'del8',
            'addmax', 'delmax', 'resize')})
        for k in BURSTS:
            self.r.setdefault('burst%d' % k, [])
            self.r.setdefault('seq%d' % k, [])
        self.r.setdefault('kth', [])
        self.r.setdefault('exits', {})

    def vm(self, maxcpus):
        v = VM(self.kind, self.args, maxcpus, self.tmp)
        self.r['boot'].append(ms(v.t_start, v.t_ready))
        if self.trace:
            self.trace.follow(v.proc.pid)
        return v

    def measure(self, v, key, op):
        """Runs @op (it returns the time the operation ended): its time in
        ms, the exits it cost by hotvm's count and by the kernel's, and
        hotvm's own share of it."""
        s0 = v.stats()
        if self.trace:
            self.trace.start()
        t0 = time.monotonic()
        t1 = op()
        kernel = self.trace.stop() if self.trace else None
        s1 = v.stats()
        self.r['exits'].setdefault(key, []).append(
            {'hotvm': exits_delta(s0.get('exits'), s1.get('exits')),
             'kernel': kernel, 'own': own_delta(s0, s1)})
        return ms(t0, t1)

    def single(self):
        r, c = self.r, self.args.cycles
        v = self.vm(1 + c)
        try:
            for s in range(1, c + 1):
                r['add1'].append(self.measure(v, 'add1', lambda: v.add([s])))
                r['del1'].append(self.measure(v, 'del1',
                                              lambda: v.delete([s])))
            # The same slot again: hotvm reuses its parked vCPU.
            for _ in range(c if self.kind.startswith('hotvm') else 0):
                r['readd1'].append(self.measure(v, 'readd1',
                                                lambda: v.add([1])))
                r['redel1'].append(self.measure(v, 'redel1',
                                                lambda: v.delete([1])))
        finally:
            v.stop()

    def batch8(self):
        batches = max(1, (self.args.cycles + 3) // 4)
        v = self.vm(1 + 8 * batches)
        try:
            for b in range(batches):
                socks = range(1 + 8 * b, 9 + 8 * b)
                self.r['add8'].append(self.measure(v, 'add8',
                                                   lambda: v.add(socks)))
                self.r['del8'].append(self.measure(v, 'del8',
                                                   lambda: v.delete(socks)))
        finally:
            v.stop()

    def batchmax(self):
        v = self.vm(self.args.max)
        try:
            socks = range(1, self.args.max)
            self.r['addmax'].append(self.measure(v, 'addmax',
                                                 lambda: v.add(socks)))
            self.r['delmax'].append(self.measure(v, 'delmax',
                                                 lambda: v.delete(socks)))
        finally:
            v.stop()

    def kth(self):
        """The k-th vCPU, one by one, and what the VMM process grows by."""
        kth = self.r['kth']
        v = self.vm(self.args.max)
        try:
            rss, thr = v.status()
            kth.append({'k': 1, 'ms': None, 'rss_kib': rss, 'threads': thr})
            for s in range(1, self.args.max):
                t = self.measure(v, 'kth', lambda: v.add([s]))
                v.extra = list(range(1, s + 1))
                rss, thr = v.status()
                kth.append({'k': s + 1, 'ms': t, 'rss_kib': rss,
                            'threads': thr})
        finally:
            v.stop()

    def resize(self):
        if not self.kind.startswith('hotvm'):
            return
        n = self.args.max
        for _ in range(max(1, self.args.cycles // 5)):
            v = self.vm(n)
            try:
                def op():
                    v.cmd('cpu-resize', count=n)
                    return v.wait_online(range(n))
                self.r['resize'].append(self.measure(v, 'resize', op))
            finally:
                v.stop()


    def bursts(self):
        """A batch of K against K single adds, on fresh sockets of one VM
        per round (QEMU cannot plug a removed socket again)."""
        per_round = 2 * sum(BURSTS)
        for _ in range(max(1, self.args.cycles // 5)):
            v = self.vm(1 + per_round)
            try:
                nxt = 1
                for k in BURSTS:
                    socks = list(range(nxt, nxt + k))
                    self.r['burst%d' % k].append(self.measure(
                        v, 'burst%d' % k, lambda: v.add(socks)))
                    v.extra = v.extra + socks
                    nxt += k

                    def seq():
                        for s in range(nxt, nxt + k):
                            t = v.add([s])
                            v.extra = v.extra + [s]
                        return t
                    self.r['seq%d' % k].append(self.measure(
                        v, 'seq%d' % k, seq))
                    nxt += k
            finally:
                v.extra = []
                v.stop()


# Phase by phase, each VMM in turn: a noisy host then weighs on all alike.
PHASES = ('single', 'batch8', 'batchmax', 'kth', 'resize', 'bursts')
BURSTS = (1, 2, 4, 8)


def per_vcpu(kth, key):
    """Growth of @key per added vCPU: least squares over k."""
    pts = [(p['k'], p[key]) for p in kth]
    if len(pts) < 2:
        return None
    n = len(pts)
    mk = sum(k for k, _ in pts) / n
    mv = sum(v for _, v in pts) / n
    den = sum((k - mk) ** 2 for k, _ in pts)
    return sum((k - mk) * (v - mv) for k, v in pts) / den if den else None


def flatness(kth):
    """Median cost of the last quarter of k over the first quarter's."""
    v = [p['ms'] for p in kth if p['ms'] is not None]
    q = max(1, len(v) // 4)
    return pct(v[-q:], 0.5) / pct(v[:q], 0.5) if len(v) >= 2 else None


ROWS = (('boot', 'boot to ready'), ('add1', 'hot-add 1 vCPU'),
        ('del1', 'hot-remove 1 vCPU'),
        ('readd1', 're-add 1 vCPU, same slot'),
        ('redel1', 're-remove 1 vCPU, same slot'),
        ('add8', 'hot-add 8 (8 device_add)'),
        ('del8', 'hot-remove 8 (8 device_del)'),
        ('addmax', 'hot-add max-1 at once'),
        ('delmax', 'hot-remove max-1 at once'),
        ('resize', 'cpu-resize 1 -> max (hotvm)')) + tuple(
            (f % k, n % k) for k in BURSTS for f, n in (
                ('burst%d', 'batch of %d (at once)'),
                ('seq%d', '%d single adds in a row')))


def median_counts(dicts):
    """Per key, the median over @dicts (a key missing from one counts 0)."""
    keys = sorted({k for d in dicts for k in d})
    return {k: pct([d.get(k, 0) for d in dicts], 0.5) for k in keys}


def summarize_exits(samples):
    """Medians of one operation's exits: hotvm's own count (total, by kind,
    by device) and the kernel's (kvm_userspace_exit, kvm_exit, reasons)."""
    own = [x['hotvm'] for x in samples if x.get('hotvm')]
    ker = [x['kernel'] for x in samples if x.get('kernel')]
    share = [x['own'] for x in samples if x.get('own')]
    d = {'n': len(samples)}
    if share:
        d['own_us'] = pct([o['own_us'] for o in share], 0.5)
        d['own_p99_us'] = pct([o['own_us'] for o in share], 0.99)
        d['own_exit_us'] = pct([o['exit_us'] for o in share], 0.5)
        d['prestage_us'] = pct([o.get('prestage_us', 0) for o in share],
                               0.5)
    if own:
        d['hotvm'] = pct([o['total'] for o in own], 0.5)
        d['hotvm_by_kind'] = median_counts(
            [{k: v for k, v in o.items() if k not in ('total', 'by-device')}
             for o in own])
        d['hotvm_by_device'] = median_counts([o['by-device'] for o in own])
    if ker:
        for e, name in (('kvm_userspace_exit', 'user'), ('kvm_exit', 'all'),
                        ('kvm_pio', 'pio')):
            if any(e not in k for k in ker):
                continue  # saved before kvm_pio was counted
            d[name] = pct([k[e]['n'] for k in ker], 0.5)
            d[name + '_reasons'] = median_counts([k[e]['reasons']
                                                  for k in ker])
        d['lost'] = sum(k['lost'] for k in ker)
        d['foreign'] = sum(k['foreign'] for k in ker)
    return d


def summarize(res):
    s = {}
    for kind, r in res.items():
        if kind == 'linux':
            continue
        d = s[kind] = {}
        for key, _ in ROWS:
            v = r.get(key) or []
            d[key] = {'n': len(v), 'median_ms': pct(v, 0.5),
                      'p99_ms': pct(v, 0.99)}
        kth = r.get('kth') or []
        d['kth_median_ms'] = pct([p['ms'] for p in kth if p['ms']], 0.5)
        d['kth_sum_ms'] = sum(p['ms'] for p in kth if p['ms']) or None
        d['kth_last_over_first'] = flatness(kth)
        d['rss_kib_per_vcpu'] = per_vcpu(kth, 'rss_kib')
        d['threads_per_vcpu'] = per_vcpu(kth, 'threads')
        d['exits'] = {key: summarize_exits(v)
                      for key, v in (r.get('exits') or {}).items()}
    return s


def fmt(x, f='%.2f'):
    return '-' if x is None else f % x


def own_cell(e):
    """hotvm's own share of an operation, median us (query-hotplug-stats'
    own-us: its operation thread's CPU time and its exits' handling)."""
    if not e or e.get('own_us') is None:
        return '-'
    return '%d' % e['own_us']


def exits_cell(e):
    """Exits to user space per operation: hotvm's own count, or else the
    kernel's (marked k)."""
    if not e:
        return '-'
    if e.get('hotvm') is not None:
        return '%d' % e['hotvm']
    if e.get('user') is not None:
        return '%dk' % e['user']
    return '-'


def table(s, meta):
    """@s: summarize()'s; @meta: the run's JSON (max, cycles, ...)."""
    h, q = s.get('hotvm', {}), s.get('qemu', {})
    kinds = ['hotvm', 'qemu'] + [k for k in ('hotvm-prestage',
                                              'hotvm-before') if k in s]
    extra = kinds[2:]
    title = ('tiny guest on /dev/kvm (Linux %s, %s CPUs), max %d vCPUs, %d '
          'single cycles; ms, median (p99); exits: to user space per '
          'operation, median, hotvm\'s own count (k: the kernel\'s '
          'kvm_userspace_exit); own: hotvm\'s own share, us, median '
          '(its operation thread\'s CPU time and its exits\' handling); '
          'ratio = hotvm/QEMU medians%s%s' % (
              meta.get('uname'), meta.get('cpus'), meta['max'],
              meta['cycles'],
              '; hotvm-prestage: --prestage %s' % meta.get('prestage')
              if 'hotvm-prestage' in s else '',
              '; hotvm-before: the build in %s' % meta.get('before')
              if 'hotvm-before' in s else ''))
    head = ['operation', 'n', 'hotvm', 'exits', 'own', 'qemu', 'exits',
            'own', 'ratio'] + [x for k in extra for x in (k, 'exits', 'own')]
    rows = []

    def cell(k, key):
        a = s.get(k, {}).get(key, {})
        e = s.get(k, {}).get('exits', {}).get(key)
        return ['%s (%s)' % (fmt(a.get('median_ms')), fmt(a.get('p99_ms'))),
                exits_cell(e), own_cell(e)]
    for key, name in ROWS:
        a, b = h.get(key, {}), q.get(key, {})
        if not a.get('n') and not b.get('n'):
            continue
        ratio = (a['median_ms'] / b['median_ms']
                 if a.get('median_ms') and b.get('median_ms') else None)
        rows.append([name, a.get('n') or b.get('n')] + cell('hotvm', key) +
                    cell('qemu', key) + [fmt(ratio)] +
                    [c for k in extra for c in cell(k, key)])
    for key, name, f in (
            ('kth_median_ms', 'k-th vCPU add, median', '%.2f'),
            ('kth_last_over_first', 'k-th cost, last/first quarter',
             '%.2f'),
            ('rss_kib_per_vcpu', 'host RSS per vCPU, KiB', '%.0f'),
            ('threads_per_vcpu', 'host threads per vCPU', '%.2f')):
        a, b = h.get(key), q.get(key)
        ratio = a / b if a and b else None
        e = {k: s.get(k, {}).get('exits', {}).get('kth') for k in kinds}
        ex = {k: exits_cell(e[k]) if key == 'kth_median_ms' else ''
              for k in kinds}
        ow = {k: own_cell(e[k]) if key == 'kth_median_ms' else ''
              for k in kinds}
        rows.append([name, '', fmt(a, f), ex['hotvm'], ow['hotvm'],
                     fmt(b, f), ex['qemu'], ow['qemu'], fmt(ratio)] +
                    [c for k in extra
                     for c in (fmt(s[k].get(key), f), ex[k], ow[k])])
    print_table(title, head, rows)
    batch_table(s, kinds, meta)
    exits_table(s, kinds)
    own_table(s, kinds)


def own_table(s, kinds):
    """hotvm's own share of each operation (query-hotplug-stats' own):
    median and p99 in us, and the part of it that was the exits' handling
    (issue 19's target: at most 100 us per hot-add)."""
    kinds = [k for k in kinds if k in s and any(
        e.get('own_us') is not None for e in s[k]['exits'].values())]
    if not kinds:
        return
    names = dict(ROWS, kth='k-th vCPU add')
    title = ('hotvm\'s own share per operation, us: median (p99) '
          '[exits\' handling] +pool: its operation thread\'s CPU time from '
          'the operation\'s start to its end, plus its vCPU threads\' CPU '
          'time from each exit to the next KVM_RUN; +pool: --prestage\'s '
          'refill after it (before the reply, after the guest has the '
          'CPU)')
    rows = []
    for key in names:
        cells = []
        for k in kinds:
            e = s[k]['exits'].get(key) or {}
            cells.append('-' if e.get('own_us') is None else
                         '%d (%d) [%d]%s' % (
                             e['own_us'], e['own_p99_us'], e['own_exit_us'],
                             ' +%d' % e['prestage_us']
                             if e.get('prestage_us') else ''))
        if any(c != '-' for c in cells):
            rows.append([names[key]] + cells)
    print_table(title, ['operation'] + kinds, rows)


def batch_table(s, kinds, meta):
    """A K-CPU batch against K single adds (issue 19 item 4): medians in
    ms with exits to user space, the batch over the K adds and over one
    add (add1, the single phase's median)."""
    if not any(s.get(k, {}).get('burst1', {}).get('n') for k in kinds):
        return
    title = ('a batch of K (K device_add at once) against the same K added '
             'one after another: median ms [exits]; /K = batch over the K '
             'adds, /1 = batch over one hot-add (the single phase)')
    head = ['K'] + [x for k in kinds for x in (k + ': batch', 'K adds',
                                                '/K', '/1')]
    rows = []
    for k in BURSTS:
        cells = []
        for kind in kinds:
            d = s.get(kind, {})
            b = d.get('burst%d' % k, {}).get('median_ms')
            q = d.get('seq%d' % k, {}).get('median_ms')
            one = d.get('add1', {}).get('median_ms')
            ex = d.get('exits', {})
            cells += ['%s [%s]' % (fmt(b, '%.1f'),
                                   exits_cell(ex.get('burst%d' % k))),
                      '%s [%s]' % (fmt(q, '%.1f'),
                                   exits_cell(ex.get('seq%d' % k))),
                      fmt(b / q if b and q else None),
                      fmt(b / one if b and one else None)]
        rows.append([k] + cells)
    print_table(title, head, rows)
    h = s.get('hotvm', {})
    rs, ks = h.get('resize', {}).get('median_ms'), h.get('kth_sum_ms')
    if rs and ks:
        print('cpu-resize 1 -> %d: %s ms against %s ms for the %d single '
              'adds of the k-th phase summed (%s)' % (
                  meta['max'], fmt(rs), fmt(ks), meta['max'] - 1,
                  fmt(rs / ks)))


def exits_table(s, kinds):
    """Every count of exits per operation, and what they were."""
    kinds = [k for k in kinds if k in s]
    names = dict(ROWS, kth='k-th vCPU add')
    keys = [k for k in names if any(s[x]['exits'].get(k) for x in kinds)]
    if not keys:
        return
    title = ('exits per operation, median: own = hotvm\'s count of its '
          'returns to user space (query-hotplug-stats); user, all = the '
          'kernel\'s kvm:kvm_userspace_exit, kvm:kvm_exit (every VM exit) '
          'for the VMM\'s threads (tracefs, --kernel-exits)')
    rows, lost = [], []
    for key in keys:
        cells = []
        for k in kinds:
            e = s[k]['exits'].get(key) or {}
            cells.append('/'.join(fmt(e.get(x), '%d') for x in
                                  ('hotvm', 'user', 'all')))
            if e.get('lost') or e.get('foreign'):
                lost.append('%s %s: %d lost, %d of other processes' % (
                    k, key, e.get('lost'), e.get('foreign')))
        rows.append([names[key]] + cells)
    print_table(title, ['operation'] + [k + ' own/user/all' for k in kinds],
                rows)
    for line in lost:
        print('# trace buffer: ' + line)
    for k in kinds:
        for key in ('add1', 'del1'):
            e = s[k]['exits'].get(key) or {}
            parts = []
            if e.get('hotvm_by_device'):
                parts.append('own: ' + ', '.join(
                    '%s %d' % kv for kv in sorted(
                        dict(e['hotvm_by_device'], **{
                            x: n for x, n in e['hotvm_by_kind'].items()
                            if x not in ('pio', 'mmio')}).items())
                    if kv[1]))
            for x in ('user', 'all', 'pio'):
                if e.get(x + '_reasons'):
                    parts.append('%s: %s' % (x, ', '.join(
                        '%s %d' % kv for kv in sorted(
                            e[x + '_reasons'].items(),
                            key=lambda kv: -kv[1]) if kv[1])))
            if parts:
                print('# %s %s:\n#   %s' % (k, names[key],
                                           '\n#   '.join(parts)))


def plot(res, args):
    if not shutil.which('gnuplot'):
        print('bench-hotplug: no gnuplot (tools/setup.sh installs '
              'gnuplot-nox): no plot', file=sys.stderr)
        return
    dat = {}
    for kind in ('hotvm', 'qemu', 'hotvm-prestage', 'hotvm-before'):
        kth = res.get(kind, {}).get('kth') or []
        if not kth:
            continue
        dat[kind] = args.png + '.%s.dat' % kind
        with open(dat[kind], 'w') as f:
            for p in kth:
                f.write('%d %s %d\n' % (p['k'], fmt(p['ms'], '%.3f'),
                                        p['rss_kib']))
    if not dat:
        return
    lat = ', '.join("'%s' using 1:2 with linespoints title '%s add (ms)'"
                    % (d, k) for k, d in dat.items())
    rss = ', '.join("'%s' using 1:($3/1024) axes x1y2 with lines dashtype 2 "
                    "title '%s RSS (MiB)'" % (d, k) for k, d in dat.items())
    script = """
set terminal pngcairo size 900,560 noenhanced
set output '%s'
set title 'Tiny guest on /dev/kvm: the k-th vCPU hot-add (device_add to online)'
set xlabel 'vCPUs after the add (k)'
set ylabel 'latency, ms'
set y2label 'host RSS, MiB'
set ytics nomirror
set y2tics
set yrange [0:*]
set datafile missing '-'
set key top left
plot %s, %s
""" % (args.png, lat, rss)
    try:
        subprocess.run(['gnuplot'], input=script.encode(), check=True)
    except (subprocess.CalledProcessError, OSError) as e:
        # pngcairo may be missing from gnuplot-nox: the plain png one.
        try:
            subprocess.run(['gnuplot'], input=script.replace(
                'pngcairo', 'png').encode(), check=True)
        except (subprocess.CalledProcessError, OSError):
            print('bench-hotplug: gnuplot failed: %s' % e, file=sys.stderr)
            return
    finally:
        for d in dat.values():
            os.unlink(d)
    print('# plot: %s' % args.png)


def states(args, res):
    """hotvm's per-state breakdown: the rows of tests/e2e's bench-states,
    for the build and, with --before, for the older build's hotvm (and so
    its built-in guest) under the same bench-states."""
    exe = os.path.join(args.build, 'tests', 'e2e', 'bench-states')
    status = 0
    for kind, build in (('hotvm', args.build), ('hotvm-before', args.before)):
        if not build:
            continue
        env = dict(os.environ, HOTVM=os.path.join(build, 'vmm', 'hotvm'))
        try:
            p = subprocess.run([exe, str(args.cycles)], env=env,
                               capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            print('bench-hotplug: %s: %s' % (exe, e), file=sys.stderr)
            status = 1
            continue
        rows = []
        for line in p.stdout.splitlines():
            f = line.split()
            if len(f) == 7 and f[0] in ('host', 'guest', 'op'):
                rows.append({'side': f[0], 'state': f[1], 'direction': f[2],
                             'n': int(f[3]), 'median_us': float(f[4]),
                             'p99_us': float(f[5]),
                             'own_us': None if f[6] == '-' else float(f[6])})
        res.setdefault(kind, {})['states'] = rows
        print_states(rows, args.cycles, kind)
        status |= p.returncode
    return status


def print_states(rows, cycles, kind='hotvm'):
    print_table('%s per state (cpu-hotplug of one vCPU, %d cycles), us '
                '(own: hotvm\'s own share, median: a host state\'s '
                'operation thread CPU time; op: the whole cpu-hotplug\'s '
                'own-us, own-exit-us)' % (kind, cycles),
                ['side', 'state', 'dir', 'median', 'p99', 'own'],
                [[r['side'], r['state'], r['direction'],
                  '%.0f' % r['median_us'], '%.0f' % r['p99_us'],
                  None if r.get('own_us') is None else '%.0f' % r['own_us']]
                 for r in rows])


def linux(args, res):
    """The Linux guest in the nested lab: tools/bench linux's figures."""
    out = os.path.join(args.build, 'bench-linux.json')
    cmd = [os.path.join(TOP, 'tools', 'bench.d', 'linux.sh'), '-b', args.build,
           '-r', str(args.linux_reps), '-m', str(args.linux_max), '-o', out]
    print('# running %s' % ' '.join(cmd), file=sys.stderr)
    p = subprocess.run(cmd)
    if p.returncode or not os.path.exists(out):
        print('bench-hotplug: tools/bench linux failed (%d)' % p.returncode,
              file=sys.stderr)
        return 1
    with open(out) as f:
        res['linux'] = json.load(f)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('-b', '--build', default=os.path.join(TOP, 'build'))
    ap.add_argument('-c', '--cycles', type=int, default=20)
    ap.add_argument('-m', '--max', type=int, default=64)
    ap.add_argument('-o', '--json')
    ap.add_argument('-p', '--png')
    ap.add_argument('--qemu', default=os.environ.get(
        'HOTVM_QEMU', 'qemu-system-x86_64'))
    ap.add_argument('--no-qemu', action='store_true')
    ap.add_argument('--prestage', type=int, default=0, metavar='K',
                    help='also hotvm --prestage K, a column of its own')
    ap.add_argument('--before', metavar='BUILD',
                    help='also an older build (its vmm/hotvm and '
                    'guest/hotvm-tiny.elf), a column of its own')
    ap.add_argument('--kernel-exits', action='store_true',
                    help='also the kernel\'s count of each VMM\'s exits '
                    '(kvm tracepoints; root, tracefs mounted)')
    ap.add_argument('--tracefs', default='/sys/kernel/tracing')
    ap.add_argument('--table', metavar='JSON',
                    help='only print the table of a saved run')
    ap.add_argument('--linux', action='store_true',
                    help='also the Linux guest in the nested lab')
    ap.add_argument('-M', '--linux-max', type=int, default=4)
    ap.add_argument('-R', '--linux-reps', type=int, default=1)
    args = ap.parse_args()
    if args.table:
        with open(args.table) as f:
            saved = json.load(f)
        table(summarize(saved['raw']), saved)
        for kind in ('hotvm', 'hotvm-before'):
            if saved['raw'].get(kind, {}).get('states'):
                print_states(saved['raw'][kind]['states'], saved['cycles'],
                             kind)
        return 0
    if args.cycles < 1 or not 9 <= args.max <= 1024:
        ap.error('need -c >= 1 and 9 <= -m <= 1024')
    args.build = os.path.abspath(args.build)
    args.json = args.json or os.path.join(args.build, 'bench-hotplug.json')
    args.png = args.png or os.path.join(args.build, 'bench-hotplug.png')
    kinds = ['hotvm'] + ([] if args.no_qemu or not shutil.which(args.qemu)
                         else ['qemu'])
    if args.prestage:
        kinds.append('hotvm-prestage')
    if args.before:
        kinds.append('hotvm-before')
    res, status = {}, 0
    meta = {'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
            'uname': os.uname().release, 'cpus': os.cpu_count(),
            'max': args.max, 'cycles': args.cycles,
            'prestage': args.prestage, 'before': args.before,
            'kernel_exits': args.kernel_exits}
    trace = KvmTrace(args.tracefs) if args.kernel_exits else None
    tmp = tempfile.mkdtemp(prefix='bench-hotplug.')
    runs = [Run(kind, args, tmp, res, trace) for kind in kinds]
    t_start = time.monotonic()
    try:
        for phase in PHASES:
            for run in runs:
                print('# %4.0f s: %s %s' % (time.monotonic() - t_start,
                                            phase, run.kind),
                      file=sys.stderr, flush=True)
                try:
                    getattr(run, phase)()
                except Exception as e:
                    print('bench-hotplug: %s %s: %s' % (run.kind, phase, e),
                          file=sys.stderr)
                    status = 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if trace:
            trace.close()
    if args.linux:
        status |= linux(args, res)
    s = summarize(res)
    table(s, meta)
    if 'hotvm' in res:
        status |= states(args, res)
    if 'linux' in res:
        print('# Linux guest in the nested lab (tools/bench linux): see '
              '"linux" in the JSON')
    with open(args.json, 'w') as f:
        json.dump(dict(meta, summary=s, raw=res), f, indent=1)
    print('# json: %s' % args.json)
    plot(res, args)
    return status


if __name__ == '__main__':
    sys.exit(main())
