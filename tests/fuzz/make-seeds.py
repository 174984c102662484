#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes the seed corpus of tests/fuzz/corpus/ (already in the tree; rerun
only to change it):

    tests/fuzz/make-seeds.py BOOT_STUB BZ_STUB

BOOT_STUB and BZ_STUB are build/tests/boot/boot-stub and bz-stub, the
stand-in PVH ELF and bzImage.  Each seed is a short, valid program in its
harness's input encoding (see the comment atop each fuzz_*.c), chosen to
walk the paths a real guest and client take, so the fuzzer starts deep.
Reproducers of findings are added by hand as crash-<what> files.
"""
import os
import struct
import sys

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(kind, name, data):
    os.makedirs(os.path.join(here, kind), exist_ok=True)
    with open(os.path.join(here, kind, name), "wb") as f:
        f.write(data)


# ---- fuzz_ring.c: [max] then ops ----
def ring():
    import struct as st

    def gw(off, data):  # guest writes bytes at an offset of the area
        return bytes([0]) + st.pack("<H", off) + bytes([len(data)]) + data

    def entry(sel, value, ret, tsc):  # a well-formed entry at the head
        return bytes([1, sel]) + st.pack("<H", value) + bytes([ret]) + \
            st.pack("<Q", tsc)

    hdr = gw(0, st.pack("<II", 0x676e6972, 1))
    enable = bytes([3 | 8])
    drain = bytes([3])
    khz = bytes([6]) + st.pack("<I", 3000000)
    plug = lambda c: bytes([5, 0, c])  # noqa: E731
    remove = lambda c: bytes([5, 1, c])  # noqa: E731
    walk = b"".join(entry(1, 0x100 | s, 0, 1000 * s) for s in range(1, 11))
    done = entry(1, 0x900 | 10, 0, 11000)
    online = gw(0x900, b"online: 0-1\n") + gw(16, st.pack("<I", 12))
    write("ring", "hot-add", bytes([3]) + hdr + enable + khz + plug(1) +
          walk + online + done + drain + bytes([4]))
    write("ring", "removal", bytes([3]) + hdr + enable + plug(1) +
          remove(1) + entry(1, 9, 0, 5) + entry(1, 0x800, 0, 6) + drain)
    write("ring", "garbage", bytes([3]) + hdr + enable +
          gw(8, st.pack("<I", 100000)) + drain +
          entry(9, 0x100, 0, 1) + entry(1, 0xffff, 0, 1) +
          gw(0x1000 + 32 * 100, bytes(32)) + drain + bytes([2]) +
          st.pack("<I", 7) + bytes([7]) + drain)
    write("ring", "off", bytes([2]) + plug(1) + gw(8, st.pack("<I", 5)) +
          drain + bytes([4]) + hdr + bytes([2]) + st.pack("<I", 1))


# ---- fuzz_regs.c: [max][opts] then ops ----
def acc(off, width, write, data, wide=False):
    op = (0x10 if write else 0) | (0x20 if wide else 0)
    return bytes([op, off, width]) + data.to_bytes(8 if wide else 4, "little")


def host(op, cpu):  # 0 coldplug 1 plug 2 request 3 cancel 4 force 5 withdraw
    return bytes([2 + 8 * op]) + cpu.to_bytes(2, "little")


def ged_read():
    return bytes([4, 0, 4]) + bytes(4)


def ged_raise(bits):
    return bytes([0x15]) + bits.to_bytes(4, "little")


STATS = b"\x07"


def scan_and_ack(cpu_flag):
    """What the guest's GED handler does: scan, read, clear, OST."""
    return (ged_read() + acc(0, 4, 1, 0) + acc(5, 1, 1, 0) + acc(8, 4, 0, 0)
            + acc(4, 1, 0, 0) + acc(4, 1, 1, cpu_flag)
            + acc(5, 1, 1, 1) + acc(8, 4, 1, 1 if cpu_flag == 2 else 3)
            + acc(5, 1, 1, 2) + acc(8, 4, 1, 0))


def regs():
    add = host(0, 0) + host(1, 1) + ged_raise(8) + scan_and_ack(2)
    remove = (host(2, 1) + ged_raise(8) + scan_and_ack(4)
              + acc(4, 1, 1, 8))  # eject
    write("regs", "hotplug-cycle", bytes([3, 0]) + add + remove + STATS)
    write("regs", "arch-ids", bytes([3, 1]) + host(0, 0) + host(1, 2)
          + acc(0, 4, 1, 2) + acc(5, 1, 1, 3) + acc(8, 4, 0, 0)
          + acc(0, 4, 0, 0) + STATS)
    write("regs", "guest-report", bytes([1, 0]) + host(0, 0) + host(1, 1)
          + acc(0, 4, 1, 1) + acc(5, 1, 1, 0x10) + acc(8, 4, 1, 0x105)
          + acc(5, 1, 1, 0x11) + acc(8, 4, 0, 0)
          + acc(5, 1, 1, 0x12) + acc(8, 4, 0, 0) + STATS)
    write("regs", "timeouts", bytes([2, 4]) + host(0, 0) + host(1, 1)
          + host(1, 2) + host(2, 2) + host(3, 2) + acc(0, 4, 1, 2)
          + acc(4, 1, 1, 8) + host(4, 1) + host(2, 0) + host(4, 0)
          + host(3, 5) + acc(4, 1, 1, 0x10) + STATS)
    # A hot-add that times out before and after the guest saw it.
    write("regs", "withdraw", bytes([3, 0]) + host(0, 0) + host(1, 1)
          + host(1, 2) + host(5, 1) + acc(0, 4, 1, 2) + acc(4, 1, 0, 0)
          + host(5, 2) + ged_raise(8) + scan_and_ack(4) + acc(4, 1, 1, 8)
          + host(5, 0) + host(5, 3) + STATS)
    write("regs", "bad-accesses", bytes([0, 2]) + acc(0, 4, 1, 99)
          + acc(4, 1, 0, 0) + acc(5, 1, 1, 0x77) + acc(3, 2, 0, 0)
          + acc(8, 8, 1, 1, True) + bytes([0x04, 1, 4, 0, 0, 0, 0])
          + bytes([0x14, 0, 2, 0, 0, 0, 0]) + ged_raise(0) + b"\x16"
          + ged_raise(0x10) + STATS)
    write("regs", "max-cpus", bytes([0xfd, 0]) + host(1, 4095)
          + acc(0, 4, 1, 1) + acc(5, 1, 1, 0) + acc(8, 4, 0, 0) + STATS)
    write("regs", "init-fails", bytes([0xff, 0]))


# ---- fuzz_qmp.c: [flags][boot][host fault][guest fault][max_request], bytes
def qmp():
    def cmd(name, **args):
        s = '{"execute":"%s"' % name
        if args:
            s += ',"arguments":{%s}' % ",".join(
                '"%s":%s' % (k.replace("_", "-"), v) for k, v in args.items())
        return s + ',"id":1}\n'

    nego = 1 | (3 << 1)  # negotiate, max 4
    write("qmp", "queries", bytes([nego, 1, 0, 0, 0]) + "".join([
        cmd("query-hotpluggable-cpus"), cmd("query-cpus-fast"),
        cmd("query-status"), cmd("query-cpuhp"), cmd("query-commands"),
        cmd("query-hotplug-stats")]).encode())
    write("qmp", "add-remove", bytes([nego, 0, 0, 0, 0]) + "".join([
        cmd("device_add", driver='"host-x86_64-cpu"', socket_id=2,
            core_id=0, thread_id=0, id='"c2"'),
        cmd("device_del", id='"c2"'),
        cmd("cpu-resize", count=3), cmd("cpu-resize", count=1),
        cmd("cpu-hotplug", cpu=3, state='"online"', wait='"started"'),
        cmd("quit")]).encode())
    write("qmp", "states", bytes([nego, 0, 0x82, 0, 0]) + "".join([
        cmd("cpuhp-set-target", cpu=1, side='"host"',
            target='"vcpu:create"', timeout_ms=100),
        cmd("cpuhp-set-target", cpu=1, side='"guest"', target='"online"'),
        cmd("cpuhp-inject-fault", cpu=2, side='"host"',
            state='"vcpu:create"'),
        cmd("cpu-hotplug", cpu=2, state='"online"'),
        cmd("cpu-hotplug", cpu=1, state='"offline"')]).encode())
    write("qmp", "framing", bytes([0, 0, 0, 0x83, 4]) + (
        cmd("query-status") + '{"execute":"qmp_capabilities"}\n'
        + '{"execute": 3}\n{"arguments": []}\n[1]\n{"execute":"x","y":1}\n'
        + '{"execute":"query-status"\n{"ex\xff":1}\n'
        + '{"execute":"device_del","arguments":{"id":"' + "a" * 90
        + '"}}\n').encode("latin-1"))


    # Issue 8 item 7: echoed raw today; fails with HOTVM_FUZZ_STRICT_UTF8=1.
    write("qmp", "invalid-utf8", bytes([1, 0, 0, 0, 0])
          + b'{"execute":"q\xffx"}\n{"execute":"query-status","id":"\xc3"}\n')


# ---- fuzz_pvh.c / fuzz_bzimage.c: [mode][ram][min] + 8 + image ----
def loaders(boot_stub, bz_stub):
    with open(boot_stub, "rb") as f:
        elf = f.read()
    with open(bz_stub, "rb") as f:
        bz = f.read()
    boot = bytes([0x40, 0x00, 0x20, 0x00, 0x10, 0x00, 0x09, 0x02])
    write("pvh", "boot-stub", bytes([0, 0, 0]) + boot + elf)
    write("pvh", "boot-stub-small-ram", bytes([4, 0x90, 0]) + boot + elf)
    write("bzimage", "bz-stub", bytes([0, 0, 0]) + boot + bz)
    write("bzimage", "bz-stub-low", bytes([9, 0, 0x10]) + boot + bz)


# ---- fuzz_acpi.c: [which] then the configuration ----
def acpi():
    def build(base, maxc, bootc, mode=0x10):
        return (bytes([0, mode]) + base.to_bytes(8, "little")
                + maxc.to_bytes(4 if mode & 2 else 2, "little")
                + bootc.to_bytes(2, "little"))

    write("acpi", "acpi-1", build(0xe0000, 1, 0))
    write("acpi", "acpi-4-2", build(0xe0000, 4, 1))
    write("acpi", "acpi-256", build(0xe0000, 256, 7))
    write("acpi", "acpi-4096", build(0xe0000, 4096, 0, 0x12))
    write("acpi", "acpi-high", build(0x1_2345_6000, 8, 3, 0x11))
    write("acpi", "acpi-small", bytes([0, 0]) + bytes(8) + bytes([5, 0, 3]))
    write("acpi", "dsdt-8", bytes([1, 0, 7]))
    write("acpi", "dsdt-ids", bytes([1, 6, 3]) + bytes(12))
    write("acpi", "dsdt-4096", bytes([1, 0x10, 0x00, 0x10]))


# ---- fuzz_agent.c: [scenario] then records [flags][len16][bytes] ----
# The replies are Debian's qemu-ga 7.2's, recorded on a pty: its
# complaint about the handshake's 0xff, then the sync answer; the rest
# as it sent them (the firmware node's text is Linux's for CPU 1).
QGA_STRAY = (b'{"error": {"class": "GenericError", "desc": '
             b'"JSON parse error, stray \'\\uFFFD\'"}}\n')
QGA_VCPUS = (b'{"return": [{"online": true, "can-offline": true, '
             b'"logical-id": 1}, {"online": true, "can-offline": false, '
             b'"logical-id": 0}]}\n')
QGA_VCPUS_ONE = (b'{"return": [{"online": true, "can-offline": false, '
                 b'"logical-id": 0}]}\n')


def rec(data=b"", sync_before=False, sync_after=False, rep=None):
    flags = (1 if sync_before else 0) | (2 if sync_after else 0)
    extra = b""
    if rep is not None:
        flags |= 4
        extra = bytes([rep])
    return bytes([flags]) + len(data).to_bytes(2, "little") + extra + data


def handshake():
    return rec(QGA_STRAY, sync_after=True)


def file_read(text):
    import base64
    b64 = base64.b64encode(text).decode()
    return [handshake(), rec(b'{"return": 1000}\n'),
            handshake(),
            rec(('{"return": {"count": %d, "buf-b64": "%s", "eof": true}}\n'
                 % (len(text), b64)).encode()),
            handshake(), rec(b'{"return": {}}\n')]


def agent():
    calls = [handshake(), rec(QGA_VCPUS),                   # qga_call
             handshake(), rec(b'{"return": 77}\n'),         # qga_forward
             handshake(), rec()]                            # qga_send
    write("agent", "qemu-ga-calls", bytes([0]) + b"".join(calls))
    # The Linux view: guest-get-vcpus, each id's firmware node, again.
    view = (calls + [handshake(), rec(QGA_VCPUS)]
            + file_read(b"\\_SB_.CPUS.C001\n")
            + file_read(b"\\_SB_.CPUS.C000\n")
            + [handshake(), rec(QGA_VCPUS)]
            + [handshake(), rec(QGA_VCPUS_ONE)])
    write("agent", "qemu-ga-linux-view", bytes([1]) + b"".join(view))
    # Stale lines before the sync, a late reply with the right id, a
    # reply over the 1 MiB cap, the agent's own error.
    odd = [rec(b'{"return": 1}\n\xffgarbage\n{"return": @ID@}\n',
               sync_after=True),
           rec(b'{"return": "' + b"A" * 4096 + b'"}\n', rep=255),
           handshake(),
           rec(b'{"error": {"class": "CommandNotFound", "desc": '
               b'"The command guest-sync has not been found"}}\n'),
           rec(b"\xff{\"return\": @ID@}\n"), rec(b"")]
    write("agent", "odd-replies", bytes([0]) + b"".join(odd))


# ---- fuzz_virtq.c / fuzz_vblk.c: [qlog] then ops ----
def virtio():
    st = struct
    RAM = 0x1000  # the RAM's guest address; AT16 is relative to it
    NEXT, WRITE = 1, 2

    def gw(gpa, data):  # op 2: the guest writes bytes at a guest address
        out = b""
        for i in range(0, len(data), 255):
            part = data[i:i + 255]
            out += bytes([2]) + st.pack("<H", gpa + i - RAM) + \
                bytes([len(part)]) + part
        return out

    def desc(i, addr, ln, flags, nxt):
        return gw(0x1000 + 16 * i, st.pack("<QIHH", addr, ln, flags, nxt))

    def avail(head):  # op 5, then op 3: serve
        return bytes([5, head, 3])

    def blk(typ, sector, data_len, dev_writes, payload=b""):
        hdr = gw(0x10000, st.pack("<IIQ", typ, 0, sector))
        body = gw(0x10100, payload) if payload else b""
        if data_len:
            chain = (desc(0, 0x10000, 16, NEXT, 1) +
                     desc(1, 0x10100, data_len,
                          NEXT | (WRITE if dev_writes else 0), 2))
        else:
            chain = desc(0, 0x10000, 16, NEXT, 2)
        return hdr + body + chain + desc(2, 0x10400, 1, WRITE, 0) + avail(0)

    qlog = bytes([4])  # 16 entries
    rw = (blk(1, 2, 512, False, bytes(range(256)) * 2) +
          blk(0, 2, 512, True) + blk(4, 0, 0, False) + blk(8, 0, 20, True))
    write("vblk", "write-read-flush-id", qlog + rw)
    seg = st.pack("<QII", 1, 2, 0)
    write("vblk", "discard-zeroes",
          qlog + blk(13, 0, 16, False, seg) + blk(11, 0, 16, False, seg))
    write("vblk", "past-the-end", qlog + blk(0, 64, 512, True) +
          blk(1, 63, 1024, False, bytes(1024)) + blk(99, 0, 0, False))

    # Indirect tables (VIRTIO_RING_F_INDIRECT_DESC, which both devices
    # offer and the harness's driver takes): entries at 0x10800.
    def tdesc(i, addr, ln, flags, nxt):
        return gw(0x10800 + 16 * i, st.pack("<QIHH", addr, ln, flags, nxt))

    INDIRECT = 4
    table = (tdesc(0, 0x10000, 16, NEXT, 1) +
             tdesc(1, 0x10100, 512, NEXT | WRITE, 2) +
             tdesc(2, 0x10400, 1, WRITE, 0))
    ind = table + desc(0, 0x10800, 48, INDIRECT, 0) + avail(0)
    write("vblk", "indirect",
          qlog + gw(0x10000, st.pack("<IIQ", 0, 0, 2)) + ind +
          gw(0x10000, st.pack("<IIQ", 1, 0, 2)) +
          tdesc(1, 0x10100, 512, NEXT, 2) + desc(0, 0x10800, 48, INDIRECT,
                                                 0) + avail(0))
    # The echo device: a chain of three, a loop, a head out of range,
    # a reset (op 0: STATUS 0, then op 4: initialisation again).
    chain = (desc(0, 0x10000, 64, NEXT, 1) + desc(1, 0x10100, 64,
                                                   NEXT | WRITE, 2) +
             desc(2, 0x10200, 64, WRITE, 0))
    write("virtq", "chains", qlog + chain + avail(0) +
          desc(3, 0x10000, 8, NEXT, 3) + avail(3) + avail(200) +
          bytes([0, 0x70 // 4]) + st.pack("<I", 0) + bytes([4]) +
          chain + avail(0))
    # An indirect table alone, after a direct descriptor, and nested.
    write("virtq", "indirect",
          qlog + ind + desc(1, 0x10000, 16, NEXT, 2) +
          desc(2, 0x10800, 48, INDIRECT, 0) + avail(1) +
          tdesc(2, 0x10800, 48, INDIRECT, 0) + desc(0, 0x10800, 48,
                                                    INDIRECT, 0) + avail(0))


# ---- fuzz_vcon.c: ops (control message, send, flush, buffers, reset) ----
def vcon():
    import struct as st

    def ctl(id_, ev, val):
        return bytes([0, 8]) + st.pack("<IHH", id_, ev, val)

    hs = (ctl(0xffffffff, 0, 1) + bytes([3, 64]) + ctl(0, 3, 1) +
          bytes([3, 64, 3, 64]))
    write("vcon", "handshake-open-bytes",
          hs + ctl(0, 6, 1) + bytes([1, 40, 4, 16, 4, 16, 4, 200]))
    # qemu-ga restarting: bytes sent while closed, a close with bytes
    # in flight, a reopen, more bytes.
    write("vcon", "close-reopen",
          hs + ctl(0, 6, 1) + bytes([1, 30]) + ctl(0, 6, 0) +
          bytes([1, 10]) + ctl(0, 6, 1) + bytes([4, 100, 1, 5, 4, 100]))
    # Bad messages: short, wrong port, value 2, the device's own events.
    write("vcon", "bad-control",
          bytes([0, 4, 1, 2, 3, 4]) + ctl(0, 3, 1) + ctl(0, 0, 1) +
          ctl(0, 0, 1) + ctl(1, 3, 1) + ctl(0, 3, 2) + ctl(0, 1, 0) +
          ctl(0, 7, 1) + ctl(0, 5, 0) + bytes([3, 2, 3, 64]))
    write("vcon", "reset-midway",
          hs + ctl(0, 6, 1) + bytes([1, 50, 5]) + hs + ctl(0, 6, 1) +
          bytes([1, 3, 2, 1, 4, 4, 8]))


# ---- fuzz_vsock.c: ops (packet, send, flush, receive buffer, reset) ----
def vsock():
    import struct as st

    def pkt(op, ports, data=b"", flags=0, sel=0, credit=0x1000):
        return (bytes([0, sel, ports, op, flags, len(data)]) +
                st.pack("<HH", credit, 0) + data)

    agent = 8 | 16  # the guest's port 5 to hotvm's endpoint's port
    rx = bytes([3, 200])
    connect = bytes([1, 20]) + rx + pkt(2, agent) + rx
    write("vsock", "agent-both-ways",
          connect + pkt(5, agent, b'{"return": {}}\n') + bytes([1, 60]) +
          rx + rx + pkt(6, agent) + pkt(7, agent) + rx)
    write("vsock", "agent-closed-reopened",
          connect + pkt(3, agent) + bytes([1, 5, 2, 1, 7]) + rx +
          pkt(2, agent) + rx + pkt(4, agent, flags=3) + rx)
    # Guest requests, a packet for nobody, bad CIDs, a wrong type, a
    # lying length, a credit of zero.
    write("vsock", "guest-garbage",
          pkt(1, 1 | 32) + pkt(1, 1 | 32) + pkt(5, 2, b"xx") +
          pkt(1, 3, sel=1) + pkt(1, 3, sel=2) + pkt(1, 3, sel=4) +
          pkt(5, agent, b"abc", sel=8) + rx + rx + rx + rx +
          bytes([1, 100]) + pkt(2, agent, credit=0) + rx + bytes([4]) + rx)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    regs()
    ring()
    qmp()
    loaders(sys.argv[1], sys.argv[2])
    acpi()
    agent()
    virtio()
    vcon()
    vsock()
