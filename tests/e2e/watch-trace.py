#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""hotvm cpu watch / trace / states against a real hotvm, TAP output.

    watch-trace.py HOTVM_BINARY [SVG_OUT]

Boots the tiny guest with 1 of 4 vCPUs, starts two `hotvm cpu watch`
(text and --json, stdout not a terminal), then scripts: a hot-add with a
fault injected into a guest state (rolled back), a hot-add, a removal, a
hot-add with a fault injected into a host state, a plain add and remove
drawn as text.  It checks each trace's JSON (the data its pictures are
drawn from) against the rules of the state machine, the SVG it drew
(well-formed, one bar per step), `trace --from` against a raw reply, the
80-column `states`, and that the watchers' lines are those same steps,
in order, text and JSON alike.  Every wait is for an event or a line,
bounded; nothing sleeps.  SVG_OUT, when given, gets the faulty hot-add's
picture (how docs/trace-rollback.svg is made).
"""
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import xml.etree.ElementTree as ET

TIMEOUT = int(os.environ.get("HOTVM_TEST_TIMEOUT", "300"))

# The scripts' QMP client: tools/ beside tests/, in the tree as in the lab
# (/tools, beside /lab, which holds tests/'s folders).
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
from hotvm_qmp import Qmp  # noqa: E402
HOTVM = sys.argv[1] if len(sys.argv) > 1 else ""
SVG_OUT = sys.argv[2] if len(sys.argv) > 2 else None

n = 0
failed = 0


def check(cond, name, why=""):
    global n, failed
    n += 1
    if cond:
        print(f"ok {n} - {name}")
    else:
        failed += 1
        print(f"not ok {n} - {name}")
        for line in str(why).splitlines()[:20]:
            print(f"#   {line}")
    sys.stdout.flush()
    return cond


class Lines:
    """A child's output, line by line, from a reader thread."""

    def __init__(self, stream):
        self.q = queue.Queue()
        self.all = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for raw in stream:
            line = raw.decode(errors="replace").rstrip("\n")
            self.all.append(line)
            self.q.put(line)
        self.q.put(None)

    def wait(self, pred, timeout=TIMEOUT):
        """Until a line satisfies pred; False at EOF or timeout."""
        while True:
            try:
                line = self.q.get(timeout=timeout)
            except queue.Empty:
                return False
            if line is None:
                return False
            if pred(line):
                return True


def cli(*args, stdin=None):
    p = subprocess.run([HOTVM, "cpu", *args], input=stdin,
                       capture_output=True, text=True, timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


def trace_json(*args):
    rc, out, err = cli("trace", *args, "--json", "--api-socket", sock)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, None, f"stdout: {out!r}\nstderr: {err}"


GUEST_UP = ["percpu:prepare", "smpboot:prepare", "bringup:kick-ap",
            "bringup:cpu", "ap:starting-lapic", "ap:starting-timer",
            "ap:online-work"]


def host_up(sock):
    """The host states a walk up runs, in order: hotvm's own table
    (query-cpuhp's host-states: named, after offline, with a startup)."""
    q = Qmp.connect(sock)
    q.negotiate(TIMEOUT)
    r = q.execute("query-cpuhp", timeout=TIMEOUT)
    q.close()
    return [s["name"] for s in r["host-states"]
            if s["state"] and s["name"] and s["startup"]]


def lane(t, name):
    return [b for b in t["bars"] if b["lane"] == name]


def well_timed(t):
    """Every bar inside the total; a lane's bars one after another."""
    bad = []
    for b in t["bars"]:
        if not (0 <= b["start-us"] <= b["end-us"] <= t["total-us"]) or \
                b["us"] != b["end-us"] - b["start-us"]:
            bad.append(b)
    host = lane(t, "host")
    for a, b in zip(host, host[1:]):
        if b["start-us"] != a["end-us"]:
            bad.append(b)
    return bad


def check_svg(path, t, name):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        check(False, name, e)
        return
    ns = "{http://www.w3.org/2000/svg}"
    rects = [r for r in root.iter(ns + "rect")
             if r.get("class", "").split()[:1] == ["bar"]]
    fails = [r for r in rects if "failed" in r.get("class").split()]
    want_fails = [b for b in t["bars"] if b["mark"] == "failed"]
    check(root.tag == ns + "svg" and len(rects) == len(t["bars"]) and
          len(fails) == len(want_fails) and
          all(float(r.get("width")) > 0 for r in rects), name,
          f"root {root.tag}, {len(rects)} bars drawn for "
          f"{len(t['bars'])}, {len(fails)} failed for {len(want_fails)}")


def step_records(lines, cpu, parse):
    """The watcher's step records of one vCPU, as (side, dir, name, result,
    rollback, injected)."""
    out = []
    for line in lines:
        r = parse(line)
        if r and r["cpu"] == cpu and r["event"] == "step":
            out.append((r["side"], r["direction"], r["state"], r["result"],
                        r["rollback"], r["injected"]))
    return out


def parse_text(line):
    """A text line back into its record: seven columns, then extras."""
    f = line.split()
    if len(f) < 7:
        return None
    rest = f[7:]
    return {"time": f[0], "cpu": int(f[1][3:]) if f[1] != "-" else None,
            "side": f[2], "event": f[3], "direction": f[4], "state": f[5],
            "result": f[6], "rollback": "rollback" in rest,
            "injected": "injected" in rest, "rest": rest}


def parse_json(line):
    try:
        r = json.loads(line)
    except ValueError:
        return None
    r.setdefault("rollback", False)
    r.setdefault("injected", False)
    return r


def bars_as_records(t):
    return [(b["lane"], b["direction"], b["name"],
             "ok" if not b["ret"] else None, b["rollback"], b["injected"])
            for b in t["bars"] if b["kind"] == "state"]


def same_steps(watched, t):
    """The watcher saw the trace's steps, in order (results by ok/failed)."""
    want = bars_as_records(t)
    got = [(s, d, nm, "ok" if r == "ok" else None, rb, inj)
           for (s, d, nm, r, rb, inj) in watched[:len(want)]]
    return got == want, f"watched {got}\ntraced  {want}"


if not HOTVM or not os.access(HOTVM, os.X_OK):
    print(f"usage: {sys.argv[0]} HOTVM_BINARY [SVG_OUT]", file=sys.stderr)
    sys.exit(2)
if not os.path.exists("/dev/kvm"):
    print("1..0 # SKIP /dev/kvm is absent: these tests need KVM")
    sys.exit(0)

tmp = tempfile.mkdtemp(prefix="hotvm-cli-")
sock = os.path.join(tmp, "api.sock")
vm = subprocess.Popen([HOTVM, "run", "--cpus", "boot=1,max=4",
                       "--api-socket", sock, "--serial", "stdio",
                       "--cmdline", ""],
                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                      stdin=subprocess.DEVNULL)
watchers = []
try:
    console = Lines(vm.stdout)
    if not check(console.wait(lambda l: l.startswith("ready")),
                 "the tiny guest boots"):
        raise SystemExit
    for extra in ([], ["--json"]):
        w = subprocess.Popen([HOTVM, "cpu", "watch", "--api-socket", sock,
                              *extra], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        watchers.append((w, Lines(w.stdout)))
    # The snapshot's last line: from then on every event reaches them.
    check(watchers[0][1].wait(lambda l: " cpu3 " in l and " guest now " in l)
          and watchers[1][1].wait(
              lambda l: '"cpu":3' in l and '"side":"guest"' in l),
          "watch prints the table first, a record per vCPU and side")

    # 1. A hot-add whose guest state ap:online-work fails: rolled back.
    rc, _, err = cli("inject", "1", "guest", "ap:online-work",
                     "--api-socket", sock)
    check(rc == 0, "inject a guest fault", err)
    svg1 = os.path.join(tmp, "add-fault.svg")
    rc, t1, err = trace_json("add", "1", "--svg", svg1)
    ok = t1 is not None
    check(ok and rc == 1 and t1["result"] == "failed" and
          "cpu 1" in t1.get("error", "") and err.startswith("hotvm: error:"),
          "trace of a failed hot-add: status 1, the error, still drawn",
          f"rc {rc}, {err}, {t1 and t1.get('result')}")
    if ok:
        inj = [b for b in t1["bars"] if b["injected"]]
        check(len(inj) == 1 and inj[0]["lane"] == "guest" and
              inj[0]["name"] == "ap:online-work" and
              inj[0]["mark"] == "failed" and inj[0]["ret"] == -11,
              "the injected fault is one failed guest bar", inj)
        g = lane(t1, "guest")
        up = [b["name"] for b in g if b["direction"] == "up"]
        check(up == GUEST_UP, "every guest state up to the fault", up)
        after = g[len(up):]
        check(after and all(b["direction"] == "down" for b in after) and
              after[0]["rollback"] and after[0]["name"] == "ap:starting-timer"
              and [b["name"] for b in after] == GUEST_UP[-2::-1],
              "the guest tears down in reverse, rollback first",
              [(b["name"], b["rollback"]) for b in after])
        h = [(b["name"], b["direction"], b["mark"]) for b in lane(t1, "host")]
        check(h == [("host:prepare", "up", "ok"), ("vcpu:create", "up", "ok"),
                    ("guest:ap-starting", "up", "failed"),
                    ("vcpu:create", "down", "rollback"),
                    ("host:prepare", "down", "rollback")],
              "host: guest:ap-starting fails, the states below roll back", h)
        check(not well_timed(t1), "bars lie on one time axis",
              well_timed(t1))
        ap = [b for b in lane(t1, "host") if b["name"] == "guest:ap-starting"]
        inside = all(ap[0]["start-us"] <= b["start-us"] and
                     b["end-us"] <= ap[0]["end-us"] for b in g)
        check(ap and inside, "the guest's walk lies inside guest:ap-starting")
        check([m["name"] for m in t1["marks"]][:1] == ["presented"],
              "the stages the host saw are marks on the guest lane",
              t1["marks"])
        check_svg(svg1, t1, "the SVG is well-formed, one bar per step, "
                  "failed ones marked")
        if SVG_OUT:
            shutil.copy(svg1, SVG_OUT)
        saved = os.path.join(tmp, "trace.json")
        with open(saved, "w") as f:
            json.dump(t1, f)
        svg1b = os.path.join(tmp, "again.svg")
        rc, out, err = cli("trace", "--from", saved, "--json", "--svg", svg1b)
        with open(svg1, "rb") as a, open(svg1b, "rb") as b:
            same_svg = a.read() == b.read()
        check(rc == 0 and json.loads(out) == t1 and same_svg,
              "trace --from a saved timeline draws it again, the same",
              err)

    # 2. The same hot-add again: the fault was one-shot.
    rc, t2, err = trace_json("add", "1")
    check(rc == 0 and t2 and t2["result"] == "ok" and
          [b["name"] for b in lane(t2, "host")] == host_up(sock) and
          not [b for b in t2["bars"] if b["mark"] != "ok"] and
          not well_timed(t2),
          "trace of a hot-add: the four host states, nothing failed",
          err or t2)
    check(t2 and [b["name"] for b in lane(t2, "guest")] == GUEST_UP +
          ["online"], "and every guest state", t2 and lane(t2, "guest"))

    # 3. A removal, run over raw QMP: trace --from its reply.
    q = Qmp.connect(sock)
    q.negotiate(TIMEOUT)
    _, reply = q.reply(q.send("cpu-hotplug", {"cpu": 1, "state": "offline"}),
                       TIMEOUT)
    q.close()
    path = os.path.join(tmp, "reply.json")
    with open(path, "w") as f:
        json.dump(reply, f)
    rc, out, err = cli("trace", "--from", path, "--json")
    t3 = json.loads(out) if rc == 0 else None
    steps = reply.get("return", {}).get("steps", [])
    check(t3 and len(t3["bars"]) == len(steps) and
          [b["name"] for b in t3["bars"]] == [s["name"] for s in steps] and
          [b["us"] for b in t3["bars"] if b["lane"] == "host"] ==
          [b["end-us"] - b["start-us"] for b in lane(t3, "host")] and
          t3["bars"][-1]["end-us"] == sum(s["us"] for s in steps) and
          t3["operation"] == "offline" and t3["source"] == "reply",
          "trace --from a cpu-hotplug reply: a bar per step, times summed",
          err or out)
    rc, out2, err = cli("trace", "--from", "-", stdin=json.dumps(reply))
    check(rc == 0 and out2.startswith("cpu 1 offline: ok") and
          all(len(l) <= 80 for l in out2.splitlines()),
          "trace --from - reads stdin; the waterfall fits 80 columns",
          out2 + err)

    # 4. A hot-add whose host state vcpu:create fails.
    rc, _, err = cli("inject", "2", "host", "vcpu:create",
                     "--api-socket", sock)
    svg4 = os.path.join(tmp, "host-fault.svg")
    rc, t4, err = trace_json("add", "2", "--svg", svg4)
    h = t4 and [(b["name"], b["direction"], b["mark"], b["injected"])
                for b in lane(t4, "host")]
    check(rc == 1 and h == [("host:prepare", "up", "ok", False),
                            ("vcpu:create", "up", "failed", True),
                            ("host:prepare", "down", "rollback", False)] and
          not lane(t4, "guest"),
          "a host fault: the guest never saw the CPU", h or err)
    if t4:
        check_svg(svg4, t4, "its SVG too")

    # The same on one pipe for stdout and stderr: whole lines, error last.
    cli("inject", "2", "host", "vcpu:create", "--api-socket", sock)
    p = subprocess.run([HOTVM, "cpu", "trace", "add", "2", "--api-socket",
                        sock], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
    rows = p.stdout.splitlines()
    check(p.returncode == 1 and rows and
          rows[-1].startswith("hotvm: error: cpu 2: ") and
          not [r for r in rows[:-1] if "hotvm:" in r] and
          sum(1 for r in rows if r.startswith("host ")) == 3,
          "stdout and stderr on one pipe: whole lines, the error last",
          p.stdout)

    # 5. The text waterfall and the 80-column states.
    rc, out, err = cli("trace", "remove", "3", "--wait", "started",
                       "--api-socket", sock)
    check(rc == 2 and "bad arguments" in err,
          "--wait is for a hot-add only", err)
    rc, out, err = cli("trace", "add", "3", "--wait", "started",
                       "--api-socket", sock)
    rows = out.splitlines()
    check(rc == 0 and rows[0].startswith("cpu 3 online: ok in ") and
          sum(1 for r in rows if r.startswith("host ")) == 4 and
          sum(1 for r in rows if r.startswith("guest up ")) == 8 and
          all(len(r) <= 80 for r in rows),
          "trace's text waterfall: a row per state, 80 columns", out + err)
    rc, out, err = cli("states", "3", "--api-socket", sock)
    check(rc == 0 and "*>    8 online" in out and
          max(len(l) for l in out.splitlines()) <= 80,
          "states CPU fits 80 columns", out + err)
    rc, out, err = cli("states", "3", "--wide", "--api-socket", sock)
    check(rc == 0 and "HOST:TARGET-NAME" in out and "*>    8 online" in out,
          "states CPU --wide adds the whole row", out + err)
    rc, out, err = cli("states", "3", "--json", "--api-socket", sock)
    js3 = json.loads(out) if rc == 0 else {}
    check([(c["cpu"], c["host"]["name"]) for c in js3.get("cpus", [])] ==
          [(3, "online")] and "host-states" in js3,
          "states CPU --json: the same vCPU the text shows", out + err)
    rc, out, err = cli("trace", "remove", "3", "--api-socket", sock)
    check(rc == 0 and out.startswith("cpu 3 offline: ok"), "trace remove",
          out + err)

    # The VM goes: the watchers end, having seen it all.
    q = Qmp.connect(sock)
    q.negotiate(TIMEOUT)
    q.execute("quit", timeout=TIMEOUT)
    q.close()
    rcs = [w.wait(timeout=TIMEOUT) for w, _ in watchers]
    errs = [w.stderr.read().decode() for w, _ in watchers]
    check(rcs == [0, 0] and all("closed the connection" in e for e in errs),
          "watch ends when the VM closes the connection", f"{rcs} {errs}")
    text, js = watchers[0][1].all, watchers[1][1].all
    wt = step_records(text, 1, parse_text)
    wj = step_records(js, 1, parse_json)
    if t1 and t2:
        ok, why = same_steps(wt, t1)
        check(ok, "watch saw the faulty hot-add's steps, in order", why)
        ok, why = same_steps(wt[len(bars_as_records(t1)):], t2)
        check(ok, "and the hot-add's after it", why)
    inj = [r for r in wt if r[5]]
    check(inj == [("guest", "up", "ap:online-work", "failed:EAGAIN", False,
                   True)], "watch marks the injected fault", inj)
    done = [parse_text(l) for l in text if " cpu1 " in l and " done " in l
            and " host " in l]
    check(done and done[0]["result"] == "failed:EIO" and done[0]["rollback"]
          and "us" in done[0]["rest"] and done[1]["result"] == "ok",
          "watch gives each operation's result and duration",
          [d and d["rest"] for d in done])
    check(any(" deleted " in l for l in text), "and the DEVICE_DELETED", "")
    # The same records, but for the time of each one's own snapshot.
    keys = ("cpu", "side", "event", "direction", "state", "result")
    same = len(text) == len(js)
    for a, b in zip(text, js):
        ra, rb = parse_text(a), parse_json(b)
        if not ra or not rb or [ra[k] for k in keys] != \
                [rb.get(k) for k in keys] or \
                (ra["event"] != "now" and ra["time"] != rb["time"]):
            same = False
            print(f"# differ: {a!r} {b!r}")
            break
    check(same and wt == wj,
          "text and --json give the same records, line for line",
          f"{len(text)} text lines, {len(js)} JSON lines")
finally:
    for w, _ in watchers:
        if w.poll() is None:
            w.kill()
            w.wait()
    if vm.poll() is None:
        try:
            vm.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            vm.kill()
            vm.wait()
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{n}")
sys.exit(1 if failed else 0)
