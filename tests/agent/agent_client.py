#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A guest agent client as libvirt's is (src/qemu/qemu_agent.c), to check
that such a client works unchanged on hotvm's --agent-socket: connect to
the agent's socket, then before every command a guest-sync with a fresh id
(the time in ms), skipping any reply line that is not {"return": id}, then
the command and its one reply line; plus qemu-ga-client's delimited sync,
which scans for the 0xff byte.  Written apart from hotvm's own C client.

  agent_client.py SOCKET   exit 0 when every exchange went as expected
"""
import json
import socket
import sys
import time


class Agent:
    def __init__(self, path, timeout=10.0):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.buf = b''

    def line(self):
        while b'\n' not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError('the agent socket closed')
            self.buf += chunk
        line, self.buf = self.buf.split(b'\n', 1)
        return line

    def send(self, obj):
        self.s.sendall(json.dumps(obj).encode() + b'\n')

    def sync(self):
        # libvirt: the id is the time in ms; a reply that is not ours
        # (garbage, an old id) is skipped.
        sid = int(time.time() * 1000)
        self.send({'execute': 'guest-sync', 'arguments': {'id': sid}})
        while True:
            try:
                r = json.loads(self.line())
            except ValueError:
                continue
            if r.get('return') == sid:
                return sid
            if 'error' in r:
                raise RuntimeError('guest-sync: %s' % r['error'])

    def sync_delimited(self, sid):
        self.s.sendall(b'\xff')
        self.send({'execute': 'guest-sync-delimited',
                   'arguments': {'id': sid}})
        while True:
            line = self.line()
            if b'\xff' not in line:
                continue
            r = json.loads(line[line.rindex(b'\xff') + 1:])
            if r.get('return') == sid:
                return sid

    def command(self, cmd, args=None):
        self.sync()
        req = {'execute': cmd}
        if args is not None:
            req['arguments'] = args
        self.send(req)
        return json.loads(self.line())


def main():
    a = Agent(sys.argv[1])
    checks = []

    r = a.command('guest-info')
    checks.append(('guest-info', isinstance(r.get('return', {}).get('version'), str)))
    r = a.command('guest-get-vcpus')
    vcpus = r.get('return')
    checks.append(('guest-get-vcpus', isinstance(vcpus, list) and len(vcpus) >= 1 and
                   all('logical-id' in v and 'online' in v for v in vcpus)))
    r = a.command('guest-nonesuch')
    checks.append(('unknown command', r.get('error', {}).get('class') == 'CommandNotFound'))
    checks.append(('delimited sync', a.sync_delimited(987654321) == 987654321))
    r = a.command('guest-ping')
    checks.append(('guest-ping', r == {'return': {}}))
    ok = True
    for name, good in checks:
        print('# agent_client.py: %s: %s' % (name, 'ok' if good else 'FAILED'))
        ok = ok and good
    if vcpus:
        print('# agent_client.py: %d vCPUs, %d online' %
              (len(vcpus), sum(1 for v in vcpus if v['online'])))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
