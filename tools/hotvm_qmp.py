# SPDX-License-Identifier: GPL-2.0-only
"""hotvm_qmp: the one QMP client of hotvm's Python scripts (benchmarks,
tests, the QEMU comparisons), against hotvm and QEMU alike, and their one
guest-agent client (Agent, below); the C tools use vmm/api/qmp_client.h.  Every message is stamped with time.monotonic()
when it is read, so a benchmark times an event from when it came, not from
when it looked.

Two ways to read: a reader thread (reader=True: replies and events come in
while the caller waits on something else, such as a console), or the
caller's own loop (select() on fileno(), then pump()).  Either way the
waits below have deadlines, never sleeps.

    q = Qmp.connect(path)            # or Qmp(sock) for a connected socket
    q.negotiate()                    # the greeting, then qmp_capabilities
    q.execute('query-status')        # the return value, or QmpError
    ids = q.send_all([('device_add', {...}), ('device_add', {...})])
    t, msg = q.reply(ids[0])         # when it came, the whole reply
    i, t, ev = q.event('DEVICE_DELETED', since=0)

    a = Agent(path)                  # hotvm --agent-socket, QEMU's chardev
    a.connect(120000)                # guest-sync until qemu-ga answers
    a.call('guest-get-vcpus')        # the return value, or RuntimeError
    out = a.sh('nproc')              # guest-exec to its end: its stdout
"""
import base64
import json
import select
import socket
import threading
import time

TIMEOUT = 60.0


def _now_ms():
    return time.monotonic() * 1000.0


class QmpError(RuntimeError):
    """An error reply (cls and desc are the server's), or no usable reply
    (cls is '')."""

    def __init__(self, name, cls, desc):
        RuntimeError.__init__(self, '%s: %s%s' % (name, cls + ': ' if cls
                                                  else '', desc))
        self.name, self.cls, self.desc = name, cls, desc


class Qmp:
    def __init__(self, sock, reader=False):
        self.sock = sock
        self.greeting = None
        self.replies = {}       # id -> (t, reply)
        self.unnumbered = []    # (t, reply) of replies without an id
        self.events = []        # (t, event), in the order they came
        self.closed = False
        self.next_id = 1
        self._buf = b''
        self._cursor = 0        # next_event()'s place in events
        self._cond = threading.Condition()
        self._thread = None
        if reader:
            self._thread = threading.Thread(target=self._reader, daemon=True)
            self._thread.start()

    @classmethod
    def connect(cls, path, timeout=10.0, alive=None, reader=False):
        """Connects to the unix socket path, trying again until timeout
        while the server creates it, or until alive() says the server has
        gone."""
        deadline = time.monotonic() + timeout
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
                return cls(s, reader=reader)
            except OSError:
                s.close()
                if time.monotonic() >= deadline or (alive and not alive()):
                    raise QmpError('connect', '', 'cannot connect to %s' %
                                   path)
                # The socket is not there yet: nothing to wait on but time.
                select.select([], [], [], 0.01)

    def fileno(self):
        return self.sock.fileno()

    # ---- reading

    def _feed(self, data, t):
        """Takes what was read at t: whole lines become messages."""
        with self._cond:
            if not data:
                self.closed = True
            self._buf += data
            *whole, self._buf = self._buf.split(b'\n')
            for line in whole:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if 'event' in msg:
                    self.events.append((t, msg))
                elif 'QMP' in msg:
                    self.greeting = msg
                elif 'id' in msg:
                    self.replies[msg['id']] = (t, msg)
                else:
                    self.unnumbered.append((t, msg))
            self._cond.notify_all()

    def _reader(self):
        while not self.closed:
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b''
            self._feed(data, time.monotonic())

    def pump(self, timeout=0.0):
        """Without a reader thread: reads what has come, waiting up to
        timeout for something.  False once the server has closed."""
        if self.closed:
            return False
        r, _, _ = select.select([self.sock], [], [], max(timeout, 0))
        if r:
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b''
            self._feed(data, time.monotonic())
        return not self.closed

    def wait(self, found, timeout=TIMEOUT):
        """found()'s first true value, reading meanwhile; None at the
        deadline or once the server has closed without it."""
        deadline = time.monotonic() + timeout
        while True:
            with self._cond:
                v = found()
                if v or self.closed:
                    return v
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                if self._thread:
                    self._cond.wait(left)
                    continue
            self.pump(left)

    # ---- commands

    def send_all(self, cmds):
        """[(name, args or None)] in one write, a burst the server reads
        together; their ids."""
        ids, out = [], []
        for name, args in cmds:
            m = {'execute': name, 'id': self.next_id}
            if args is not None:
                m['arguments'] = args
            ids.append(self.next_id)
            self.next_id += 1
            out.append(json.dumps(m) + '\n')
        self.sock.sendall(''.join(out).encode())
        return ids

    def send(self, name, args=None):
        return self.send_all([(name, args)])[0]

    def reply(self, i, timeout=TIMEOUT, name='reply'):
        """(t, reply) of request i; QmpError if none came."""
        r = self.wait(lambda: self.replies.get(i), timeout)
        if not r:
            raise QmpError(name, '', 'QMP closed' if self.closed else
                           'no reply in %.0f s' % timeout)
        return r

    def result(self, i, name, timeout=TIMEOUT):
        """The return value of request i; QmpError for an error reply."""
        _, m = self.reply(i, timeout, name)
        if 'error' in m:
            raise QmpError(name, m['error'].get('class', ''),
                           m['error'].get('desc', ''))
        return m.get('return')

    def execute(self, name, args=None, timeout=TIMEOUT):
        return self.result(self.send(name, args), name, timeout)

    def cmd(self, name, **args):
        return self.execute(name, args)

    def negotiate(self, timeout=TIMEOUT):
        """Waits for the greeting and sends qmp_capabilities; the
        greeting."""
        if not self.wait(lambda: self.greeting, timeout):
            raise QmpError('greeting', '', 'no QMP greeting')
        self.execute('qmp_capabilities', timeout=timeout)
        return self.greeting

    # ---- events

    def event(self, name, since=0, timeout=TIMEOUT, cond=None):
        """The first event name (and cond(event)) from index since on:
        (index, t, event), or None."""
        def found():
            for i in range(since, len(self.events)):
                m = self.events[i][1]
                if m['event'] == name and (cond is None or cond(m)):
                    return (i, self.events[i][0], m)
            return None
        return self.wait(found, timeout)

    def next_event(self, timeout=TIMEOUT):
        """The next event not yet taken by next_event(): (t, event), or
        None at the deadline or once the server has closed."""
        r = self.wait(lambda: self._cursor < len(self.events) and
                      self.events[self._cursor], timeout)
        if r:
            self._cursor += 1
        return r or None

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self._thread:
            self._thread.join(5)
        self.sock.close()


class Agent:
    """The QEMU guest agent on a unix socket: hotvm's --agent-socket, or
    QEMU's chardev of the port org.qemu.guest_agent.0.  connect() syncs
    (guest-sync) until the agent answers; then each call waits up to
    timeout seconds for its reply."""

    def __init__(self, path, timeout=60):
        self.path, self.s, self.id, self.timeout = path, None, 0, timeout

    def connect(self, timeout_ms):
        end = _now_ms() + timeout_ms
        while _now_ms() < end:
            try:
                self.s = socket.socket(socket.AF_UNIX)
                self.s.connect(self.path)
                self.f = self.s.makefile('rb')
                self.s.settimeout(5)
                self.id += 1
                self.send('guest-sync', {'id': self.id})
                while True:
                    m = json.loads(self.f.readline())
                    if m.get('return') == self.id:
                        self.s.settimeout(self.timeout)
                        return
            except (OSError, ValueError):
                if self.s:
                    self.s.close()
                time.sleep(0.5)  # qemu-ga is not up yet: try again
        raise RuntimeError('the guest agent does not answer')

    def send(self, cmd, args=None):
        m = {'execute': cmd}
        if args is not None:
            m['arguments'] = args
        self.s.sendall((json.dumps(m) + '\n').encode())

    def call(self, cmd, args=None):
        """The return value of cmd; RuntimeError on an error reply."""
        self.send(cmd, args)
        while True:
            line = self.f.readline()
            if not line:
                raise RuntimeError('the agent socket closed')
            m = json.loads(line)
            if 'error' in m:
                raise RuntimeError('agent %s: %s' % (cmd, m['error']))
            if 'return' in m:
                return m['return']

    def run(self, path, argv, timeout_ms=180000, what=None):
        """Runs path with argv in the guest (guest-exec) to its end: its
        standard output; RuntimeError, named what (path by default), if it
        failed or did not end within timeout_ms."""
        what = what or path
        pid = self.call('guest-exec', {'path': path, 'arg': argv,
                                       'capture-output': True})['pid']
        end = _now_ms() + timeout_ms
        while _now_ms() < end:
            st = self.call('guest-exec-status', {'pid': pid})
            if st.get('exited'):
                out = base64.b64decode(st.get('out-data', '')).decode()
                err = base64.b64decode(st.get('err-data', '')).decode()
                if st.get('exitcode'):
                    raise RuntimeError('%s: %s' % (what, err or out))
                return out
            time.sleep(0.5)  # a poll of a program that runs seconds
        raise RuntimeError('%s did not end' % what)

    def sh(self, script, timeout_ms=180000):
        """run() of /bin/sh -c script, named script."""
        return self.run('/bin/sh', ['-c', script], timeout_ms, script)
