#!/usr/bin/env python3
"""The nested lab's side of tools/bench.d/debian.sh: the Debian 12 image
(tools/debian-image.sh, the lab's /dev/vda) booted by hotvm and by QEMU 7.2
q35 on the lab's KVM, the same kernel (/lab/linux/vmlinux), initramfs
(/lab/debian/initrd.img), memory and CPUs, runs alternating which VMM goes
first.  Each VMM gets a second disk, a file on the lab's tmpfs, serial
"fio", for fio inside the guest (run through the guest agent's
guest-exec).  Per run it prints BENCH lines:

  BENCH <vmm> boot-ms N       start -> "ready: multi-user.target"
  BENCH <vmm> fio-<job> N     seqread/seqwrite MB/s, randread/randwrite IOPS
  BENCH <vmm> fio-<job>-exits N  hotvm: its VM exits per request of the job
  BENCH <vmm> fio-<job>-reqs N   the guest's requests to the fio disk per
                                 fio I/O (/sys/block's stat: >1 is split)
  BENCH <vmm> fio-<job>-irqs N   the fio disk's interrupts per request
                                 (/proc/interrupts)
  BENCH <vmm> fio-<job>-flushes N  the guest's flushes to it in the job
  BENCH <vmm> add-ms N        device_add -> Linux has the CPU online, the
                              agent onlining it (hotvm: CPUS_CHANGED with
                              "wait": "started"; QEMU: guest-get-vcpus
                              until Linux lists it, then guest-set-vcpus)
  BENCH <vmm> reply-ms N      device_add -> its reply (hotvm)
  BENCH <vmm> del-ms N        device_del -> DEVICE_DELETED
  BENCH <vmm> agent-pct N     hotvm: the agent's calls' share of the
                              hot-add (request -> reply)
  BENCH <vmm> agent-x-pct N   the same without guest-set-vcpus (in which
                              Linux itself brings the CPU up)
  BENCH <vmm> exits N         hotvm: VM exits to hotvm during the hot-add
  BENCH <vmm> linux-steps N   hotvm tracing Linux: the steps of its lane
  BENCH <vmm> trace-ms N      device_add -> CPUHP_LINUX_TRACE (hotvm reads
                              Linux's trace after the reply)

The VMMs: hotvm (--agent, its default channel virtio-console, and its
default --agent-trace, on there), hotvm-old (the same with /bin/hotvm-old,
an older build, when the lab has it: tools/bench debian -B), hotvm-com2 (--agent-channel com2: the image's
hotvm-agent-com2 unit starts qemu-ga on ttyS1; no fio; --agent-trace off
by default there), qemu (virtio-blk-pci
and virtio-serial-pci with the port org.qemu.guest_agent.0, Debian's own
qemu-ga unit).  A benchmark, not a test: it never judges a figure.

  bench-debian.py [--reps N] [--cpus N] [--fio-mb MB] [--runtime S]
                  [--vmms hotvm,hotvm-com2,qemu] [--trace on|off|default]
                  [--phases fio,hotplug]

--phases: which of fio and the hot-add/removal run (both by default); the
boot is always measured.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time

# The scripts' QMP and agent client: beside this file in the lab, in tools/
# on the host.
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..'))
from hotvm_qmp import Agent  # noqa: E402

LINUX = '/lab/linux/vmlinux'
INITRD = '/lab/debian/initrd.img'
ROOT = '/dev/vda'
FIO_DISK = '/dev/disk/by-id/virtio-fio'


def now_ms():
    return time.monotonic() * 1000.0


def say(vmm, what, v):
    print('BENCH %s %s %s' % (vmm, what,
                             ('%.1f' % v) if isinstance(v, float) else v),
          flush=True)


class Lines:
    """A stream's lines, each stamped when read, on a thread of its own."""

    def __init__(self, f):
        self.f, self.lines, self.cv = f, [], threading.Condition()
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        for raw in iter(self.f.readline, b''):
            with self.cv:
                self.lines.append((now_ms(), raw.decode('utf-8', 'replace')))
                self.cv.notify_all()
        with self.cv:
            self.lines.append((now_ms(), None))
            self.cv.notify_all()

    def wait(self, pred, timeout_ms, start=0):
        """The first line from index @start for which @pred holds:
        (index, time, line), or None at the deadline or the stream's end."""
        end, i = now_ms() + timeout_ms, start
        with self.cv:
            while True:
                while i < len(self.lines):
                    t, line = self.lines[i]
                    if line is None:
                        return None
                    if pred(line):
                        return i, t, line
                    i += 1
                left = end - now_ms()
                if left <= 0:
                    return None
                self.cv.wait(left / 1000.0)


class Qmp:
    """A QMP connection: commands, and events stamped as they arrive."""

    def __init__(self, path, timeout_ms=30000):
        end = now_ms() + timeout_ms
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if now_ms() > end:
                    raise
                time.sleep(0.01)  # only until the socket exists
        self.r = Lines(self.s.makefile('rb'))
        self.next = 0
        self.cmd('qmp_capabilities')

    def send(self, cmd, args=None):
        m = {'execute': cmd}
        if args is not None:
            m['arguments'] = args
        self.s.sendall((json.dumps(m) + '\n').encode())

    def reply(self, timeout_ms=120000):
        def is_reply(line):
            m = json.loads(line)
            return 'return' in m or 'error' in m
        hit = self.r.wait(is_reply, timeout_ms, self.next)
        if not hit:
            raise RuntimeError('no QMP reply')
        self.next = hit[0] + 1
        m = json.loads(hit[2])
        if 'error' in m:
            raise RuntimeError('QMP: %s' % m['error'])
        return hit[1], m['return']

    def cmd(self, cmd, args=None, timeout_ms=120000):
        self.send(cmd, args)
        return self.reply(timeout_ms)[1]

    def event(self, name, pred, since, timeout_ms=120000):
        """The first event @name after index @since for which @pred holds
        on its data: its time and data."""
        def match(line):
            if '"event"' not in line:
                return False
            m = json.loads(line)
            return m['event'] == name and pred(m.get('data', {}))
        hit = self.r.wait(match, timeout_ms, since)
        if not hit:
            raise RuntimeError('no %s event' % name)
        return hit[1], json.loads(hit[2]).get('data', {})

    def mark(self):
        with self.r.cv:
            return len(self.r.lines)


FIO_JOBS = [  # name, rw, bs, iodepth, the figure
    ('seqwrite', 'write', '1M', 8, 'MB/s'),
    ('seqread', 'read', '1M', 8, 'MB/s'),
    ('randread', 'randread', '4k', 32, 'IOPS'),
    ('randwrite', 'randwrite', '4k', 32, 'IOPS'),
]


# The fio disk as the guest counts it: reads and writes completed,
# flushes, and the interrupts of its virtio device (virtioN, or on PCI
# virtioN-config and virtioN-req.0).
BLK_STAT = r'''d=$(basename "$(readlink -f /dev/disk/by-id/virtio-fio)")
v=$(basename "$(readlink -f /sys/block/$d/device)")
set -- $(cat /sys/block/$d/stat)
echo $1 $5 ${16:-0} $(awk -v v="$v" '$NF == v || index($NF, v "-") == 1 {
  for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i } END { print s + 0 }' \
  /proc/interrupts)'''


def blk_stat(agent):
    return [int(x) for x in agent.sh(BLK_STAT).split()]


def fio(vmm, agent, runtime, q):
    for name, rw, bs, depth, unit in FIO_JOBS:
        b0 = blk_stat(agent)
        x0 = agent_stats(q)[1] if vmm.startswith('hotvm') else None
        out = agent.run('/usr/bin/fio', [
            '--name=' + name, '--filename=' + FIO_DISK, '--rw=' + rw,
            '--bs=' + bs, '--iodepth=%d' % depth, '--ioengine=libaio',
            '--direct=1', '--runtime=%d' % runtime, '--time_based',
            '--output-format=json'])
        job = json.loads(out[out.index('{'):])['jobs'][0]
        side = job['read' if 'read' in rw else 'write']
        say(vmm, 'fio-' + name, side['bw_bytes'] / 1e6 if unit == 'MB/s'
            else side['iops'])
        if x0 is not None and side.get('total_ios'):
            # Every exit of the run (the agent's polling too), per request.
            say(vmm, 'fio-%s-exits' % name,
                (agent_stats(q)[1] - x0) / float(side['total_ios']))
        b1 = blk_stat(agent)
        reqs = b1[0 if 'read' in rw else 1] - b0[0 if 'read' in rw else 1]
        if side.get('total_ios') and reqs > 0:
            say(vmm, 'fio-%s-reqs' % name, reqs / float(side['total_ios']))
            say(vmm, 'fio-%s-irqs' % name, (b1[3] - b0[3]) / float(reqs))
        say(vmm, 'fio-%s-flushes' % name, b1[2] - b0[2])


TRACE = 'default'


def trace_on(vmm):
    """Whether hotvm traces Linux: its default is on over virtio only."""
    return TRACE == 'on' or (TRACE == 'default' and vmm != 'hotvm-com2')


def hotvm_argv(vmm, d, args):
    cmdline = 'root=%s console=ttyS0 quiet' % ROOT
    binary = '/bin/hotvm-old' if vmm == 'hotvm-old' else '/bin/hotvm'
    argv = [binary, 'run', '--kernel', LINUX, '--initrd', INITRD,
            '--cpus', 'boot=1,max=%d' % args.cpus, '--memory', '512M',
            '--disk', 'path=%s,id=debian' % ROOT,
            '--api-socket', d + '/qmp', '--agent',
            '--agent-socket', d + '/qga']
    if args.trace != 'default':
        argv += ['--agent-trace', args.trace]
    if vmm == 'hotvm-com2':
        argv += ['--agent-channel', 'com2']
        cmdline += ' hotvm.agent=com2'
    else:
        argv += ['--disk', 'path=%s/fio.raw,id=fio' % d]
    return argv + ['--cmdline', cmdline]


def qemu_argv(d, args):
    return ['qemu-system-x86_64', '-accel', 'kvm', '-M', 'q35',
            '-cpu', 'host', '-m', '512', '-smp',
            '1,maxcpus=%d,sockets=%d,cores=1,threads=1' % (args.cpus,
                                                          args.cpus),
            '-nographic', '-monitor', 'none', '-nic', 'none', '-no-reboot',
            '-serial', 'stdio', '-kernel', LINUX, '-initrd', INITRD,
            '-append', 'root=%s console=ttyS0 quiet' % ROOT,
            # Both disks as libvirt gives them, the root at the lower
            # slot: Linux names virtio disks in PCI probe order, and an
            # if=virtio drive is created after every -device, so it
            # came second and the empty fio disk became /dev/vda.
            '-drive', 'file=%s,format=raw,if=none,id=root' % ROOT,
            '-device', 'virtio-blk-pci,drive=root,addr=0x4',
            '-drive', 'file=%s/fio.raw,format=raw,if=none,id=fio' % d,
            '-device', 'virtio-blk-pci,drive=fio,serial=fio,addr=0x5',
            '-device', 'virtio-serial-pci',
            '-chardev', 'socket,path=%s/qga,server=on,wait=off,id=qga0' % d,
            '-device', 'virtserialport,chardev=qga0,'
            'name=org.qemu.guest_agent.0',
            '-qmp', 'unix:%s/qmp,server=on,wait=off' % d]


def slots(q):
    """query-hotpluggable-cpus: the slots not plugged, socket-id order."""
    free = [c for c in q.cmd('query-hotpluggable-cpus')
            if 'qom-path' not in c]
    return sorted(free, key=lambda c: c['props'].get('socket-id', 0))


def agent_stats(q):
    st = q.cmd('query-hotplug-stats')
    return st.get('agent', {}), st.get('exits', {}).get('total', 0)


def agent_answers(q, timeout_ms=60000):
    """Until hotvm's own agent check has found the agent (its periodic
    check, every 2 s): before, an operation has no trace window."""
    end = now_ms() + timeout_ms
    while not agent_stats(q)[0].get('answers'):
        if now_ms() > end:
            raise RuntimeError('hotvm never found the guest agent')
        time.sleep(0.2)  # a poll of hotvm's 2 s check, not of the guest


def linux_lids(agent):
    return {v['logical-id']: v['online'] for v in
            agent.call('guest-get-vcpus')}


def hot_add(vmm, q, agent, slot, k):
    """Adds @slot as the k-th CPU; Linux has it online through the agent."""
    dev = dict(slot['props'], driver=slot['type'], id='cpu%d' % k)
    hotvm = vmm.startswith('hotvm')
    if hotvm:
        dev['wait'] = 'started'
        a0, x0 = agent_stats(q)
    else:
        before = set(linux_lids(agent))
    m = q.mark()
    t0 = now_ms()
    q.send('device_add', dev)
    if hotvm:
        t_reply = q.reply()[0]
        t_on = q.event('CPUS_CHANGED',
                       lambda e: e.get('online') and e.get('count') == k, m)[0]
        a1, x1 = agent_stats(q)
        if trace_on(vmm):
            # Read after the reply by hotvm since ac79e97: waited for.
            t_lx, lx = q.event('CPUHP_LINUX_TRACE', lambda e: True, m, 30000)
            say(vmm, 'linux-steps', lx.get('steps', 0))
            say(vmm, 'trace-ms', t_lx - t0)
            if lx.get('error'):
                print('BENCH-INFO %s: %s' % (vmm, lx['error']), flush=True)
        say(vmm, 'add-ms', t_on - t0)
        say(vmm, 'reply-ms', t_reply - t0)
        took = (t_reply - t0) * 1000.0
        calls = a1.get('call-us', 0) - a0.get('call-us', 0)
        setv = a1.get('set-vcpus-us', 0) - a0.get('set-vcpus-us', 0)
        say(vmm, 'agent-pct', 100.0 * calls / took)
        say(vmm, 'agent-x-pct', 100.0 * (calls - setv) / took)
        say(vmm, 'exits', x1 - x0)
        return
    q.reply()
    # As libvirt's setvcpus --guest: ask until Linux lists it, online it.
    while True:
        new = [lid for lid, on in linux_lids(agent).items()
               if lid not in before]
        if new:
            break
        if now_ms() - t0 > 60000:
            raise RuntimeError('Linux never listed the new CPU')
    agent.call('guest-set-vcpus',
               {'vcpus': [{'logical-id': new[0], 'online': True}]})
    say(vmm, 'add-ms', now_ms() - t0)


def hot_remove(vmm, q, k):
    m = q.mark()
    t0 = now_ms()
    q.cmd('device_del', {'id': 'cpu%d' % k})
    t = q.event('DEVICE_DELETED', lambda e: e.get('device') == 'cpu%d' % k,
                m)[0]
    say(vmm, 'del-ms', t - t0)


def one(vmm, rep, args):
    d = '/tmp/bench-debian/%s-%d' % (vmm, rep)
    os.makedirs(d, exist_ok=True)
    with open(d + '/fio.raw', 'wb') as f:
        f.truncate(args.fio_mb << 20)
    argv = qemu_argv(d, args) if vmm == 'qemu' else hotvm_argv(vmm, d, args)
    t0 = now_ms()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE,
                         stderr=open(d + '/stderr', 'wb'))
    con = Lines(p.stdout)
    try:
        hit = con.wait(lambda l: 'ready: multi-user.target' in l, 300000)
        if not hit:
            raise RuntimeError('no multi-user.target')
        say(vmm, 'boot-ms', hit[1] - t0)
        q = Qmp(d + '/qmp')
        agent = Agent(d + '/qga')
        agent.connect(120000)
        if vmm != 'hotvm-com2' and 'fio' in args.phases:
            fio(vmm, agent, args.runtime, q)
        free = slots(q) if 'hotplug' in args.phases else []
        if free and vmm.startswith('hotvm'):
            agent_answers(q)
        for k in range(2, len(free) and args.cpus + 1):
            hot_add(vmm, q, agent, free[k - 2], k)
        for k in range(len(free) and args.cpus, 1, -1):
            hot_remove(vmm, q, k)
        q.send('quit')
        p.wait(30)
    except Exception as e:  # one run's failure is reported, not fatal
        print('BENCH-ERROR %s %d: %s' % (vmm, rep, e), flush=True)
        p.kill()
        p.wait()
        os.system('tail -n 30 %s/stderr' % d)
        for _, line in con.lines[-30:]:
            if line:
                print('  | ' + line.rstrip())
        return False
    finally:
        os.unlink(d + '/fio.raw')
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--reps', type=int, default=2)
    ap.add_argument('--cpus', type=int, default=3)
    ap.add_argument('--fio-mb', type=int, default=256)
    ap.add_argument('--runtime', type=int, default=6)
    ap.add_argument('--vmms', default='hotvm,hotvm-com2,qemu')
    ap.add_argument('--trace', default='default')
    ap.add_argument('--phases', default='fio,hotplug')
    args = ap.parse_args()
    args.phases = args.phases.split(',')
    global TRACE
    TRACE = args.trace
    vmms = args.vmms.split(',')
    print('BENCH-INFO %s; reps=%d cpus=%d fio %d MiB %d s; --agent-trace %s;'
          ' phases %s; vmms %s'
          % (subprocess.run(['qemu-system-x86_64', '--version'],
                            capture_output=True, text=True).stdout
             .splitlines()[0], args.reps, args.cpus, args.fio_mb,
             args.runtime, args.trace, ','.join(args.phases), args.vmms),
          flush=True)
    failed = 0
    for rep in range(1, args.reps + 1):
        for vmm in (vmms if rep % 2 else vmms[::-1]):
            failed += not one(vmm, rep, args)
    print('BENCH-DONE %d failed' % failed, flush=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
