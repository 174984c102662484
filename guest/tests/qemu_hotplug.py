#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""
The tiny guest under QEMU q35's own CPU hotplug (device_add/device_del
over QMP): the guest's driver on QEMU's register block at port 0xcd8 and
GPE0 bit 2:

  qemu_hotplug.py test  ELF   hot-add CPUs 1 and 2, wait for the guest's
                              "online: 0-2", device_del both, wait for
                              "online: 0", both DEVICE_DELETED and the
                              _OST events; exit 0, 1 on failure

(Its figures on /dev/kvm next to hotvm's: tools/bench tiny.)

QMP runs over a socketpair handed to QEMU (-chardev socket,fd=N), through
tools/hotvm_qmp.py, the serial console over QEMU's stdout; both are read
by threads that stamp every line, and every wait is on those with a
deadline: no sleeps.
Environment: HOTVM_QEMU (binary), HOTVM_QEMU_ACCEL (tcg), HOTVM_QEMU_CPU
(max), HOTVM_QEMU_TIMEOUT (seconds per wait, 120).
"""
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'tools'))
from hotvm_qmp import Qmp  # noqa: E402

ONLINE_RE = re.compile(r'^online: (\S+)')


class Guest:
    def __init__(self, elf, maxcpus, cmdline=''):
        self.qemu = os.environ.get('HOTVM_QEMU', 'qemu-system-x86_64')
        self.accel = os.environ.get('HOTVM_QEMU_ACCEL', 'tcg')
        self.cpu = os.environ.get('HOTVM_QEMU_CPU', 'max')
        self.timeout = float(os.environ.get('HOTVM_QEMU_TIMEOUT', '120'))
        self.log = []
        self.lines = queue.Queue()   # (t, serial line)
        ours, theirs = socket.socketpair()
        self.sock = ours
        smp = '1,maxcpus=%d,sockets=%d,cores=1,threads=1' % (maxcpus, maxcpus)
        self.argv = [self.qemu, '-accel', self.accel, '-M', 'q35',
                     '-cpu', self.cpu, '-smp', smp, '-m', '128',
                     '-display', 'none', '-nodefaults', '-no-reboot',
                     '-serial', 'stdio', '-monitor', 'none',
                     '-chardev', 'socket,id=qmp,fd=%d' % theirs.fileno(),
                     '-mon', 'chardev=qmp,mode=control',
                     '-kernel', elf, '-append', cmdline,
                     '-device', 'isa-debug-exit,iobase=0x501,iosize=1']
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT,
                                     pass_fds=(theirs.fileno(),))
        theirs.close()
        threading.Thread(target=self._serial, daemon=True).start()
        self.qmp = Qmp(self.sock, reader=True)
        self.qmp.negotiate(self.timeout)

    def _serial(self):
        for raw in self.proc.stdout:
            t = time.monotonic()
            line = raw.decode(errors='replace').rstrip('\r\n')
            # The firmware's "Booting from ROM.." has no newline.
            i = line.find('hotvm-tiny:')
            if i > 0:
                line = line[i:]
            self.log.append(line)
            self.lines.put((t, line))
        self.lines.put((time.monotonic(), None))

    def cmd(self, name, **args):
        return self.qmp.execute(name, args, self.timeout)

    def wait_line(self, pred, what):
        """The first serial line with pred(line) true: (t, line)."""
        end = time.monotonic() + self.timeout
        while True:
            left = end - time.monotonic()
            try:
                t, line = self.lines.get(timeout=max(left, 0))
            except queue.Empty:
                raise RuntimeError('timeout waiting for %s' % what)
            if line is None:
                raise RuntimeError('QEMU exited waiting for %s' % what)
            if pred(line):
                return t, line

    def wait_online(self, cpulist):
        def match(line):
            m = ONLINE_RE.match(line)
            return m and m.group(1) == cpulist
        return self.wait_line(match, "'online: %s'" % cpulist)[0]

    def wait_events(self, want, what):
        """want: list of predicates on events, each matched once; their
        times, in the order of want."""
        times = [None] * len(want)
        end = time.monotonic() + self.timeout
        while None in times:
            got = self.qmp.next_event(max(end - time.monotonic(), 0))
            if not got:
                raise RuntimeError('%s waiting for %s' % (
                    'QMP closed' if self.qmp.closed else 'timeout', what))
            t, ev = got
            for i, p in enumerate(want):
                if times[i] is None and p(ev):
                    times[i] = t
                    break
        return times

    def cpu_type(self):
        return self.cmd('query-hotpluggable-cpus')[0]['type']

    def add(self, ty, socket_id):
        self.cmd('device_add', driver=ty, id='cpu%d' % socket_id,
                 **{'socket-id': socket_id, 'core-id': 0, 'thread-id': 0})

    def delete(self, socket_id):
        self.cmd('device_del', id='cpu%d' % socket_id)

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


def deleted(dev, child_ok=False):
    """DEVICE_DELETED of /machine/peripheral/DEV.  QEMU 7.2 with TCG never
    finalizes an unplugged CPU, so only its lapic child's event comes
    (with KVM both do): child_ok accepts that one."""
    path = '/machine/peripheral/' + dev

    def match(e):
        if e['event'] != 'DEVICE_DELETED':
            return False
        p = e['data'].get('path', '')
        return p == path or (child_ok and p.startswith(path + '/'))
    return match


def ost(source, slot):
    return lambda e: (e['event'] == 'ACPI_DEVICE_OST' and
                      e['data']['info'].get('slot-type') == 'CPU' and
                      e['data']['info'].get('slot') == str(slot) and
                      e['data']['info'].get('source') == source and
                      e['data']['info'].get('status') == 0)


def test(elf):
    g = Guest(elf, 4)
    ok = False
    tcg = g.accel == 'tcg'
    try:
        g.wait_line(lambda l: l.startswith('ready'), "'ready'")
        ty = g.cpu_type()
        print('# cpu type %s' % ty)
        g.add(ty, 1)
        g.add(ty, 2)
        g.wait_online('0-2')
        g.wait_events([ost(1, 1), ost(1, 2)], '_OST of the inserts')
        print('# online: 0-2, _OST(device check, success) for both')
        g.delete(1)
        g.delete(2)
        g.wait_online('0')
        g.wait_events([deleted('cpu1', tcg), deleted('cpu2', tcg),
                       ost(3, 1), ost(3, 2)],
                      'DEVICE_DELETED and _OST of the removals')
        plugged = [c['props']['socket-id']
                   for c in g.cmd('query-hotpluggable-cpus')
                   if 'qom-path' in c]
        if plugged != [0]:
            raise RuntimeError('sockets still plugged: %s' % plugged)
        print('# online: 0, DEVICE_DELETED and _OST(eject, success) for '
              'both, only socket 0 plugged')
        ok = True
        if tcg:
            # QEMU 7.2 TCG corrupts its heap on the next device_add of
            # a CPU after an unplug (it aborts): stop here.
            return 0
        # A fresh socket after the removals.
        ok = False
        g.add(ty, 3)
        g.wait_online('0,3')
        g.delete(3)
        g.wait_online('0')
        g.wait_events([deleted('cpu3', tcg)], 'DEVICE_DELETED of cpu3')
        print('# socket 3: online 0,3, then 0, DEVICE_DELETED')
        ok = True
    except Exception as e:
        print('FAIL: %s' % e)
    finally:
        g.stop()
        for line in g.log:
            if 'hotvm-tiny:' in line or not line.startswith('Booting'):
                print(line)
    return 0 if ok else 1


def main():
    if len(sys.argv) < 3 or sys.argv[1] != 'test':
        print(__doc__, file=sys.stderr)
        return 2
    return test(sys.argv[2])


if __name__ == '__main__':
    sys.exit(main())
