#!/usr/bin/env python3
"""The guest's own word, hotvm and QEMU side by side: the nested lab's side
of tools/bench guest-word (python3 in the lab's first-level guest, as
root), and the table that script prints from the lab's log.

In the lab, for one VMM (hotvm, or QEMU 7.2 q35 on the lab's KVM), the same
Debian kernel (PVH vmlinux) and initramfs (tools/lab/guest/init) boot twice:

  boot 1, hotvm.pwrbtn=cycle:10:1+2,eject:2,reboot: hot-add CPUs 1 and 2,
    press 1 (QMP system_powerdown, the ACPI power button): the guest offlines
            and onlines both 10 times (echo 0/1 > cpuN/online);
    press 2: the guest ejects cpu2 (sysfs firmware_node/eject): was
            DEVICE_DELETED sent, is the slot free, does device_add of the
            same id work again;
    press 3: the guest reboots (reboot -f): does the VMM reset, how long
            from the guest's reboot to its "ready" again;
  boot 2, no hotvm.pwrbtn (busybox acpid's own mapping): press: the guest
    powers off: the VMM's exit status, and how long from the press (and
    from the guest's poweroff line) to the process's end.

One line on stdout per VMM, GW-JSON: {...}, and GW-PROGRESS lines on the
way (the lab takes a silent console for a frozen one).  Times are
time.monotonic() in the lab, as the lines and messages arrive.  A
benchmark, not a test: a step that fails is recorded and the next runs.

  bench-guest-word.py --vmm hotvm|qemu --bin PATH [--kernel K] [--initrd I]
                      [--dir D] [--timeout S]
  bench-guest-word.py --table LOG      (on the host: the markdown table)
"""
import argparse
import json
import os
import re
import select
import subprocess
import sys
import time

# The scripts' QMP client: beside this file in the lab, in tools/ on the
# host.
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..'))
from hotvm_qmp import Qmp  # noqa: E402

ONLINE = re.compile(r'online: ([0-9][0-9,-]*)')
MAX_CPUS = 4


def progress(vmm, what):
    print('GW-PROGRESS: %s: %s' % (vmm, what), flush=True)


class VM:
    """One VMM process: its console (a pipe) and QMP (a unix socket)."""

    def __init__(self, a, tag, cmdline):
        self.a, self.tag, self.cmdline = a, tag, cmdline
        self.sock = os.path.join(a.dir, '%s-%s.qmp' % (a.vmm, tag))
        self.errf = os.path.join(a.dir, '%s-%s.stderr' % (a.vmm, tag))
        self.lines = []   # (t, text)
        self.partial = b''
        self.q = None  # Qmp (tools/hotvm_qmp.py), read by pump()
        self.status = None  # exit status once it has ended
        self.t_exit = None

    def start(self):
        a = self.a
        try:
            os.unlink(self.sock)
        except FileNotFoundError:
            pass
        if a.vmm == 'hotvm':
            argv = [a.bin, 'run', '--kernel', a.kernel, '--initrd', a.initrd,
                    '--cmdline', self.cmdline,
                    '--cpus', 'boot=1,max=%d' % MAX_CPUS, '--memory', '512M',
                    '--api-socket', self.sock, '--serial', 'stdio']
        else:
            argv = [a.bin, '-accel', 'kvm', '-M', 'q35', '-cpu', 'host',
                    '-m', '512',
                    '-smp', '1,maxcpus=%d,sockets=%d,cores=1,threads=1'
                    % (MAX_CPUS, MAX_CPUS),
                    '-display', 'none', '-vga', 'none', '-monitor', 'none',
                    '-nic', 'none', '-serial', 'stdio',
                    '-kernel', a.kernel, '-initrd', a.initrd,
                    '-append', self.cmdline,
                    '-qmp', 'unix:%s,server=on,wait=off' % self.sock]
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE,
                                  stderr=open(self.errf, 'w'))
        self.out = self.p.stdout.fileno()
        os.set_blocking(self.out, False)
        self.pidfd = os.pidfd_open(self.p.pid)

    # ---- reading

    def _console(self, t):
        """Reads what the console has; False once there is nothing more
        for now (or ever)."""
        try:
            data = os.read(self.out, 65536)
        except BlockingIOError:
            return False
        if not data:
            self.out = None
            return False
        data = self.partial + data
        *whole, self.partial = data.split(b'\n')
        for ln in whole:
            text = ln.decode('utf-8', 'replace').rstrip('\r').rstrip()
            self.lines.append((t, text))
            if self.a.echo:
                print('GW-CONSOLE: %s-%s: %s' % (self.a.vmm, self.tag, text),
                      flush=True)
        return True

    @property
    def events(self):
        """QMP's events so far: (t, message)."""
        return self.q.events if self.q else []

    def _qmp(self, t):
        if not self.q.pump(0):
            self.q.close()
            self.q = None

    def pump(self, timeout):
        fds = [f for f in (self.out, self.q, self.pidfd) if f is not None]
        r, _, _ = select.select(fds, [], [], max(timeout, 0))
        t = time.monotonic()
        if self.out is not None and self.out in r:
            self._console(t)
        if self.q is not None and self.q in r:
            self._qmp(t)
        if self.pidfd is not None and self.pidfd in r:
            self.status = self.p.wait()
            self.t_exit = t
            os.close(self.pidfd)
            self.pidfd = None
            # What the console still holds.
            while self.out is not None and self._console(t):
                pass

    def wait(self, found, timeout):
        """Pumps until found() returns something true, or the timeout.
        Says every 30 s how far the guest got."""
        start = time.monotonic()
        deadline, beat = start + timeout, start + 30
        while True:
            v = found()
            if v:
                return v
            now = time.monotonic()
            if now >= deadline:
                return None
            if now >= beat:
                progress(self.a.vmm, 'still waiting after %.0f s; the '
                         'guest\'s last line: %s' % (now - start,
                                                      self.tail(1)))
                beat += 30
            if self.out is None and self.q is None and self.pidfd is None:
                return found()
            self.pump(min(deadline - now, 1.0))

    def line(self, since, match, timeout):
        """The first console line from index since on that match(text)
        accepts: (index, t, text), or None."""
        def found():
            for i in range(since, len(self.lines)):
                if match(self.lines[i][1]):
                    return (i, self.lines[i][0], self.lines[i][1])
            return None
        return self.wait(found, timeout)

    def event(self, since, name, timeout, cond=None):
        """The first event name from index since on: (index, t, msg)."""
        def found():
            for i in range(since, len(self.events)):
                m = self.events[i][1]
                if m['event'] == name and (cond is None or cond(m)):
                    return (i, self.events[i][0], m)
            return None
        return self.wait(found, timeout)

    def exited(self, timeout):
        return self.wait(lambda: self.status is not None, timeout)

    def online(self, since=0):
        """The guest's last online list, in lines from since on."""
        last = None
        for _, text in self.lines[since:]:
            m = ONLINE.search(text)
            if m:
                last = m.group(1)
        return last

    # ---- QMP

    def connect(self):
        deadline = time.monotonic() + 10
        while True:
            try:
                q = Qmp.connect(self.sock, timeout=0)
                break
            except RuntimeError:
                if time.monotonic() > deadline or self.status is not None:
                    raise RuntimeError('cannot connect to ' + self.sock)
                self.pump(0.01)
        self.q = q
        self.wait(lambda: q.greeting, 10)
        self.execute('qmp_capabilities')

    def send(self, cmd, args=None):
        t = time.monotonic()
        return self.q.send(cmd, args), t

    def execute(self, cmd, args=None, timeout=60):
        """(t sent, return value); RuntimeError for an error reply."""
        if self.q is None:
            raise RuntimeError('%s: no QMP connection' % cmd)
        i, t = self.send(cmd, args)
        q = self.q
        r = self.wait(lambda: q.replies.get(i), timeout)
        if not r:
            raise RuntimeError('%s: no reply' % cmd)
        m = r[1]
        if 'error' in m:
            raise RuntimeError('%s: %s: %s' % (cmd, m['error'].get('class'),
                                               m['error'].get('desc')))
        return t, m.get('return')

    def slots(self):
        """query-hotpluggable-cpus by socket-id: (type, props, plugged)."""
        _, r = self.execute('query-hotpluggable-cpus')
        return {e['props']['socket-id']: (e['type'], e['props'],
                                          'qom-path' in e) for e in r}

    def stop(self):
        if self.status is None and self.q is not None:
            try:
                self.send('quit')
            except OSError:
                pass
        if not self.exited(10):
            self.p.kill()
            self.exited(10)
        if self.q is not None:
            self.q.close()

    def tail(self, n=8):
        return [text for _, text in self.lines[-n:]]


def ms(t1, t0):
    return None if t1 is None or t0 is None else round((t1 - t0) * 1e3, 1)


def count(cpulist):
    n = 0
    for part in (cpulist or '').split(','):
        if '-' in part:
            lo, hi = part.split('-')
            n += int(hi) - int(lo) + 1
        elif part:
            n += 1
    return n


def add(vm, r, socket_id, want, timeout=30):
    """device_add of socket_id with the VMM's own type and props; the time
    to the guest's online list with want CPUs (ms), or None."""
    typ, props, _ = vm.slots()[socket_id]
    args = dict(props, driver=typ, id='cpu%d' % socket_id)
    i0 = len(vm.lines)
    t, _ = vm.execute('device_add', args)
    got = vm.line(i0, lambda s: ONLINE.search(s) and
                  count(ONLINE.search(s).group(1)) == want, timeout)
    if not got:
        r['errors'].append('device_add cpu%d: the guest did not online it '
                           '(last: %s)' % (socket_id, vm.online()))
        return None
    return ms(got[1], t)


def boot(vm, r, key):
    vm.start()
    got = vm.line(0, lambda s: s == 'ready', vm.a.timeout)
    if not got:
        raise RuntimeError('no "ready" line; console: %s' % vm.tail())
    r[key] = ms(got[1], vm.t0)
    progress(vm.a.vmm, 'ready after %.0f ms' % r[key])
    vm.connect()


def press(vm, r):
    """system_powerdown: (t sent, index of the first console line after);
    notes whether POWERDOWN came."""
    i0 = len(vm.lines)
    e0 = len(vm.events)
    t, _ = vm.execute('system_powerdown')
    r.setdefault('powerdown_events', []).append(
        bool(vm.event(e0, 'POWERDOWN', 10)))
    return t, i0


def cycles(vm, r):
    c = r['cycles'] = {}
    _, i0 = press(vm, r)
    start = vm.line(i0, lambda s: s.startswith('pwrbtn: cycle '), 30)
    done = vm.line(i0, lambda s: s.startswith('pwrbtn: cycle done'), 300)
    if not start or not done:
        c['error'] = 'no cycle lines; console: %s' % vm.tail()
        return
    m = re.match(r'pwrbtn: cycle done, (\d+) failed, cpus (\S+)', done[2])
    c['failed'] = int(m.group(1)) if m else None
    c['writes'] = 10 * 2 * 2
    c['cpus_after'] = m.group(2) if m else None
    c['ms_per_cycle'] = round(ms(done[1], start[1]) / 10, 1)
    c['online_lines'] = sum(1 for _, s in vm.lines[start[0]:done[0]]
                            if ONLINE.search(s))
    progress(vm.a.vmm, 'cycles: %s' % c)


def eject(vm, r):
    e = r['eject'] = {}
    e0 = len(vm.events)
    _, i0 = press(vm, r)
    req = vm.line(i0, lambda s: s.startswith('pwrbtn: eject cpu2'), 30)
    if not req or 'failed' in req[2]:
        e['error'] = 'no eject request; console: %s' % vm.tail()
        return
    is_cpu2 = (lambda m: m.get('data', {}).get('device') == 'cpu2')
    dd = vm.event(e0, 'DEVICE_DELETED', 20, is_cpu2)
    e['deleted'] = bool(dd)
    e['deleted_ms'] = ms(dd[1], req[1]) if dd else None
    # Linux's last word on the CPU: offline, gone, or back.
    vm.line(i0, lambda s: ONLINE.search(s) and
            ONLINE.search(s).group(1) == '0-1', 5 if not dd else 20)
    e['online_after'] = vm.online(i0)
    # Linux's last _OST of its eject (source 0x103, ACPI_OST_EC_OSPM_EJECT).
    vm.event(e0, 'ACPI_DEVICE_OST', 10,
             lambda m: m['data']['info'].get('source') == 0x103)
    e['osts'] = ['0x%x/0x%x' % (m['data']['info'].get('source', -1),
                                m['data']['info'].get('status', -1))
                 for _, m in vm.events[e0:]
                 if m['event'] == 'ACPI_DEVICE_OST']
    e['events'] = [m['event'] for _, m in vm.events[e0:]
                   if m['event'] not in ('CPUHP_STATE',)]
    e['console'] = [s for _, s in vm.lines[req[0] + 1:]
                    if ('ject' in s or 'ACPI' in s) and
                    not s.startswith('pwrbtn:')]
    try:
        e['slot_free'] = not vm.slots()[2][2]
    except (RuntimeError, KeyError) as x:
        e['slot_free'] = None
        r['errors'].append('query-hotpluggable-cpus: %s' % x)
    try:
        e['readd_ms'] = add(vm, r, 2, 3)
        e['readd'] = e['readd_ms'] is not None
    except RuntimeError as x:
        e['readd'] = False
        e['readd_error'] = str(x)
    progress(vm.a.vmm, 'eject: %s' % e)


def reboot(vm, r):
    b = r['reboot'] = {}
    e0 = len(vm.events)
    t, i0 = press(vm, r)
    req = vm.line(i0, lambda s: s.startswith('pwrbtn: reboot'), 30)
    if not req:
        b['error'] = 'no reboot line; console: %s' % vm.tail()
        return
    # A reset shows within seconds (an event, or the kernel's first line).
    reset = vm.wait(lambda: vm.event(e0, 'RESET', 0) or
                    vm.line(req[0], lambda s: 'Linux version' in s, 0) or
                    vm.status is not None, 30)
    ready = reset and vm.line(req[0], lambda s: s == 'ready', vm.a.timeout)
    ev = [m for _, m in vm.events[e0:] if m['event'] in ('RESET',
                                                          'SHUTDOWN')]
    b['events'] = [dict(m.get('data', {}), event=m['event']) for m in ev]
    b['reset'] = bool(ready)
    b['ready_ms_from_reboot'] = ms(ready[1], req[1]) if ready else None
    b['ready_ms_from_press'] = ms(ready[1], t) if ready else None
    b['online_after'] = vm.online(req[0]) if ready else None
    if vm.status is not None:
        b['exit_status'] = vm.status
    if not ready:
        b['console'] = vm.tail()
    progress(vm.a.vmm, 'reboot: %s' % b)


def poweroff(vm, r):
    o = r['poweroff'] = {}
    e0 = len(vm.events)
    t, i0 = press(vm, r)
    req = vm.line(i0, lambda s: s.startswith('pwrbtn: poweroff'), 30)
    vm.exited(60)
    o['exit_status'] = vm.status
    o['exit_ms_from_press'] = ms(vm.t_exit, t)
    o['exit_ms_from_poweroff'] = ms(vm.t_exit, req[1]) if req else None
    o['events'] = [dict(m.get('data', {}), event=m['event'])
                   for _, m in vm.events[e0:] if m['event'] == 'SHUTDOWN']
    o['socket_gone'] = not os.path.exists(vm.sock)
    if vm.status is None:
        o['console'] = vm.tail()
    progress(vm.a.vmm, 'poweroff: %s' % o)


def run(a):
    r = {'vmm': a.vmm, 'errors': []}
    steps = {'cycles': ('cycle:10:1+2', cycles), 'eject': ('eject:2', eject),
             'reboot': ('reboot', reboot)}
    want = [x for x in a.steps.split(',') if x in steps]
    if want:
        vm = VM(a, 'a', 'console=ttyS0 hotvm.pwrbtn=' +
                ','.join(steps[x][0] for x in want))
        try:
            boot(vm, r, 'boot_ms')
            r['add_ms'] = [add(vm, r, 1, 2), add(vm, r, 2, 3)]
            for name in want:
                try:
                    steps[name][1](vm, r)
                except (RuntimeError, OSError) as x:
                    r['errors'].append('%s: %s' % (name, x))
        except (RuntimeError, OSError) as x:
            r['errors'].append('boot 1: %s' % x)
        finally:
            vm.stop()
    if 'poweroff' in a.steps.split(','):
        vm = VM(a, 'b', 'console=ttyS0')
        try:
            boot(vm, r, 'boot2_ms')
            poweroff(vm, r)
        except (RuntimeError, OSError) as x:
            r['errors'].append('boot 2: %s' % x)
        finally:
            vm.stop()
    print('GW-JSON: ' + json.dumps(r), flush=True)
    return 0 if not r['errors'] else 1


# ---- the table, on the host

def yn(v):
    return '-' if v is None else ('yes' if v else 'no')


def num(v, unit=''):
    return '-' if v is None else '%g%s' % (v, unit)


def events(lst):
    if not lst:
        return 'none'
    return '; '.join('%s guest=%s %s' % (e.get('event'),
                                         str(e.get('guest')).lower(),
                                         e.get('reason', ''))
                     for e in lst)


def table(logf):
    runs, info = {}, []
    for ln in open(logf, 'rb').read().decode('utf-8', 'replace').splitlines():
        ln = ln.strip('\r')
        if ln.startswith('GW-JSON: '):
            d = json.loads(ln[len('GW-JSON: '):])
            runs[d['vmm']] = d
        elif ln.startswith('GW-INFO: '):
            info.append(ln[len('GW-INFO: '):])
    cols = [runs.get('hotvm', {}), runs.get('qemu', {})]

    def g(d, *path):
        for p in path:
            if not isinstance(d, dict):
                return None
            d = d.get(p)
        return d

    def cyc(d):
        c = d.get('cycles') or {}
        if 'failed' not in c:
            return c.get('error', '-')
        return '%d of %d writes failed; %.1f ms a cycle; online after: %s' % (
            c['failed'], c['writes'], c['ms_per_cycle'], c['cpus_after'])

    def ej_del(d):
        e = d.get('eject') or {}
        if 'deleted' not in e:
            return e.get('error', '-')
        if not e['deleted']:
            return 'no (within 20 s)'
        return 'yes, %g ms after the request' % e['deleted_ms']

    def readd(d):
        e = d.get('eject') or {}
        if 'readd' not in e:
            return '-'
        if not e['readd']:
            return 'no: ' + e.get('readd_error', 'not onlined')
        return 'yes, online in %g ms' % e['readd_ms']

    def reset(d):
        b = d.get('reboot') or {}
        if 'reset' not in b:
            return b.get('error', '-')
        return '%s (%s)' % (yn(b['reset']), events(b.get('events')))

    def pw_status(d):
        o = d.get('poweroff') or {}
        if 'exit_status' not in o:
            return '-'
        st = o['exit_status']
        return '%s (%s)' % ('still running after 60 s' if st is None
                            else 'exit %d' % st, events(o.get('events')))

    rows = [
        ('boot to "ready" (ms)', lambda d: num(d.get('boot_ms'))),
        ('hot-add cpu1, cpu2 to online (ms)',
         lambda d: ', '.join(num(x) for x in d.get('add_ms') or []) or '-'),
        ('power button: POWERDOWN event on each press',
         lambda d: ', '.join(yn(x) for x in d.get('powerdown_events') or [])
         or '-'),
        ('10 cycles of echo 0/1 > cpu{1,2}/online', cyc),
        ('guest eject of cpu2: DEVICE_DELETED', ej_del),
        ('guest eject: _OST (source/status)',
         lambda d: ', '.join(g(d, 'eject', 'osts') or []) or 'none'),
        ('guest eject: Linux says',
         lambda d: '-' if g(d, 'eject', 'console') is None else
         ' / '.join(re.sub(r'^\[[ 0-9.]*\] ', '', s) for s in
                    g(d, 'eject', 'console')) or '(nothing)'),
        ('guest eject: online list after',
         lambda d: g(d, 'eject', 'online_after') or '-'),
        ('guest eject: slot free (query-hotpluggable-cpus)',
         lambda d: yn(g(d, 'eject', 'slot_free'))),
        ('guest eject: device_add of the same id again', readd),
        ('reboot: the VMM resets', reset),
        ('reboot: guest\'s reboot to "ready" again (ms)',
         lambda d: num(g(d, 'reboot', 'ready_ms_from_reboot'))),
        ('reboot: online list after',
         lambda d: g(d, 'reboot', 'online_after') or '-'),
        ('poweroff (acpid default): the VMM', pw_status),
        ('poweroff: press to process exit (ms)',
         lambda d: num(g(d, 'poweroff', 'exit_ms_from_press'))),
        ('poweroff: guest\'s poweroff to process exit (ms)',
         lambda d: num(g(d, 'poweroff', 'exit_ms_from_poweroff'))),
        ('poweroff: QMP socket removed',
         lambda d: yn(g(d, 'poweroff', 'socket_gone'))),
    ]
    from bench_table import table as print_table  # on the host only
    for i in info:
        print('# ' + i)
    print_table('guest-word: the guest\'s own word, Debian\'s 6.1 kernel in '
                'the nested lab, one run (%s)' % time.strftime('%Y-%m-%d'),
                ['', 'hotvm', 'QEMU 7.2 q35'],
                [[label] + [f(d) if d else 'no figures' for d in cols]
                 for label, f in rows])
    errs = [(d.get('vmm'), e) for d in cols for e in d.get('errors', [])]
    if errs:
        print()
        for v, e in errs:
            print('%s: %s' % (v, e))
    missing = [v for v in ('hotvm', 'qemu') if v not in runs]
    if missing:
        print('bench-guest-word: no figures for %s' % ', '.join(missing),
              file=sys.stderr)
    return 0 if runs else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--vmm', choices=('hotvm', 'qemu'))
    ap.add_argument('--bin')
    ap.add_argument('--kernel', default='/lab/linux/vmlinux')
    ap.add_argument('--initrd', default='/lab/linux/initrd.gz')
    ap.add_argument('--dir', default='/tmp/bench-guest-word')
    ap.add_argument('--timeout', type=float, default=180)
    ap.add_argument('--echo', action='store_true',
                    help='copy the consoles to stdout (GW-CONSOLE lines)')
    ap.add_argument('--steps', default='cycles,eject,reboot,poweroff',
                    help='which steps (boot 1: cycles, eject, reboot; '
                    'boot 2: poweroff)')
    ap.add_argument('--table')
    a = ap.parse_args()
    if a.table:
        return table(a.table)
    if not a.vmm:
        ap.error('--vmm or --table')
    a.bin = a.bin or ('hotvm' if a.vmm == 'hotvm' else 'qemu-system-x86_64')
    os.makedirs(a.dir, exist_ok=True)
    return run(a)


if __name__ == '__main__':
    sys.exit(main())
