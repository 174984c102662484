#!/usr/bin/env python3
"""bench-net: virtio-net on a tap, hotvm against QEMU, inside the lab.

Runs in the nested lab (tools/bench.d/net.sh puts it there with the Debian
image as the lab's /dev/vda, busybox, iperf3 and python3).  It makes the
bridge hvbr0 (192.168.100.1/24, iperf3's server) and one tap a VMM, boots
the image on each VMM with one vCPU and 512 MiB, gives the guest
192.168.100.2 through the guest agent (guest-exec, iproute2), then:

  BENCH <vmm> tx-mbps N   iperf3 -c from the guest for --seconds: the
                          guest's sending (the device's transmit queue)
  BENCH <vmm> rx-mbps N   the same with -R: the guest's receiving
  BENCH <vmm> rtt-ms N    busybox ping from the lab, --pings of them
                          0.2 s apart: average round trip

The VMMs: hotvm (every offload the tap takes, mergeable buffers),
hotvm-nooffload (--net offload=off), hotvm-nomrg (mrg_rxbuf=off), and
qemu (QEMU's microvm machine, the same virtio-MMIO transport found through
ACPI as hotvm's: virtio-blk-device, virtio-net-device on -netdev tap
with vhost=off, virtio-serial-device for the agent).  Runs alternate the
order each repetition.  A benchmark, not a test: it never judges a figure.

  bench-net.py [--reps N] [--seconds S] [--pings N] [--vmms a,b,...]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

# The scripts' QMP and agent client: beside this file in the lab, in tools/
# on the host.
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..'))
from hotvm_qmp import Agent  # noqa: E402

ROOT = '/dev/vda'
LINUX = '/lab/linux/vmlinux'
INITRD = '/lab/debian/initrd.img'
HOST_IP, GUEST_IP = '192.168.100.1', '192.168.100.2'
MAC = '02:68:76:00:00:02'


def now_ms():
    return time.monotonic() * 1000.0


def say(vmm, what, v):
    print('BENCH %s %s %.3f' % (vmm, what, v), flush=True)


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True)


class Lines:
    """A child's console, read by a thread, kept for waits and errors."""

    def __init__(self, f):
        self.lines, self.cv = [], threading.Condition()
        threading.Thread(target=self.run, args=(f,), daemon=True).start()

    def run(self, f):
        for raw in iter(f.readline, b''):
            with self.cv:
                self.lines.append(raw.decode(errors='replace'))
                self.cv.notify_all()

    def wait(self, needle, timeout_ms):
        end = now_ms() + timeout_ms
        with self.cv:
            while not any(needle in l for l in self.lines):
                left = end - now_ms()
                if left <= 0:
                    return False
                self.cv.wait(left / 1000.0)
        return True


def hotvm_argv(vmm, d, tap):
    net = 'tap=%s,mac=%s' % (tap, MAC)
    if vmm == 'hotvm-nooffload':
        net += ',offload=off'
    elif vmm == 'hotvm-nomrg':
        net += ',mrg_rxbuf=off'
    return ['/bin/hotvm', 'run', '--kernel', LINUX, '--initrd', INITRD,
            '--cpus', 'boot=1', '--memory', '512M',
            '--disk', 'path=%s,id=debian' % ROOT, '--net', net,
            '--agent-socket', d + '/qga',
            '--cmdline', 'root=%s console=ttyS0 quiet' % ROOT]


def qemu_argv(d, tap):
    return ['qemu-system-x86_64', '-accel', 'kvm', '-M', 'microvm,acpi=on',
            '-cpu', 'host', '-m', '512', '-smp', '1',
            '-nographic', '-monitor', 'none', '-nodefaults', '-no-reboot',
            '-serial', 'stdio', '-kernel', LINUX, '-initrd', INITRD,
            '-append', 'root=%s console=ttyS0 quiet' % ROOT,
            '-drive', 'id=root,file=%s,format=raw,if=none' % ROOT,
            '-device', 'virtio-blk-device,drive=root',
            '-netdev', 'tap,id=n0,ifname=%s,script=no,downscript=no,'
            'vhost=off' % tap,
            '-device', 'virtio-net-device,netdev=n0,mac=%s' % MAC,
            '-device', 'virtio-serial-device',
            '-chardev', 'socket,path=%s/qga,server=on,wait=off,id=qga0' % d,
            '-device', 'virtserialport,chardev=qga0,'
            'name=org.qemu.guest_agent.0']


def iperf(agent, seconds, reverse):
    out = agent.sh('iperf3 -J -c %s -t %d%s' % (HOST_IP, seconds,
                                                 ' -R' if reverse else ''),
                    (seconds + 60) * 1000)
    j = json.loads(out[out.index('{'):])
    return j['end']['sum_received']['bits_per_second'] / 1e6


def ping(n):
    out = subprocess.run(['ping', '-c', str(n), '-i', '0.2', GUEST_IP],
                         capture_output=True, text=True).stdout
    m = re.search(r'= [\d.]+/([\d.]+)/[\d.]+ ms', out)
    if not m:
        raise RuntimeError('ping: %s' % out[-300:])
    return float(m.group(1))


def one(vmm, rep, args):
    d = '/tmp/bench-net/%s-%d' % (vmm, rep)
    os.makedirs(d, exist_ok=True)
    tap = 'hvtap%d' % (1 if vmm == 'qemu' else 0)
    argv = qemu_argv(d, tap) if vmm == 'qemu' else hotvm_argv(vmm, d, tap)
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE,
                         stderr=open(d + '/stderr', 'wb'))
    con = Lines(p.stdout)
    try:
        if not con.wait('ready: multi-user.target', 300000):
            raise RuntimeError('no multi-user.target')
        agent = Agent(d + '/qga', timeout=120)
        agent.connect(120000)
        agent.sh('i=$(grep -l %s /sys/class/net/*/address | cut -d/ -f5);'
                  ' ip link set "$i" up && ip addr add %s/24 dev "$i"'
                  % (MAC, GUEST_IP))
        ping(3)  # ARP, and the first packets' warm-up
        say(vmm, 'rtt-ms', ping(args.pings))
        say(vmm, 'tx-mbps', iperf(agent, args.seconds, False))
        say(vmm, 'rx-mbps', iperf(agent, args.seconds, True))
        p.terminate()
        p.wait(30)
    except Exception as e:  # one run's failure is reported, not fatal
        print('BENCH-ERROR %s %d: %s' % (vmm, rep, e), flush=True)
        p.kill()
        p.wait()
        os.system('tail -n 20 %s/stderr' % d)
        for line in con.lines[-30:]:
            print('  | ' + line.rstrip())
        return False
    os.system('cat %s/stderr' % d)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--reps', type=int, default=1)
    ap.add_argument('--seconds', type=int, default=10)
    ap.add_argument('--pings', type=int, default=50)
    ap.add_argument('--vmms', default='hotvm,qemu,hotvm-nooffload,'
                    'hotvm-nomrg')
    args = ap.parse_args()
    vmms = args.vmms.split(',')
    # The bridge and its taps (kept if a test before made them).
    for c in ['tunctl -t hvtap0', 'tunctl -t hvtap1', 'brctl addbr hvbr0',
              'brctl addif hvbr0 hvtap0', 'brctl addif hvbr0 hvtap1',
              'ip link set hvtap0 up', 'ip link set hvtap1 up',
              'ip link set hvbr0 up', 'ip addr add %s/24 dev hvbr0' % HOST_IP]:
        subprocess.run(c, shell=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    sh('ip addr show hvbr0 | grep -q %s' % HOST_IP)
    sh('iperf3 -s -D -B %s' % HOST_IP)
    print('BENCH-INFO %s; reps=%d, iperf3 %d s, %d pings'
          % (subprocess.run(['qemu-system-x86_64', '--version'],
                            capture_output=True, text=True).stdout
             .splitlines()[0], args.reps, args.seconds, args.pings),
          flush=True)
    failed = 0
    for rep in range(1, args.reps + 1):
        for vmm in (vmms if rep % 2 else vmms[::-1]):
            failed += not one(vmm, rep, args)
    return 1 if failed else 0


if __name__ == '__main__':
    raise SystemExit(main())
