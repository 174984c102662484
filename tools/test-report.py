#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The test command's account: what ran in each build directory, from meson's
own per-test log, and whether the skips were the expected ones.

    test-report.py [--ci] [--expected FILE] [--steps FILE] BUILD_DIR...

Reads BUILD_DIR/meson-logs/testlog.json (one JSON object per test), and
prints every failure, every skip with its reason (a test skipped whole by
exit 77 or TAP's "1..0 # SKIP", and each "ok N - name # SKIP why" of a
test that passed, in the lab's output too), each lab reboot (lab.sh's
"LAB-BOOTS" line) with "lab: N freezes in M boots", and ends with
"N passed, N failed, N skipped".  --steps FILE adds the command's own steps,
one "NAME<TAB>pass|fail|notrun<TAB>NOTE" a line.

--expected FILE declares the skips a machine may have (tests/expected-skips.txt
says the format) and is checked: an entry naming a test that no build
directory has fails.  With --ci (or CI=true in the environment) a skip that
no entry declares fails too: its prerequisite is the set-up's to install.
Exit status 0 when nothing failed.
"""
import fnmatch
import json
import os
import re
import subprocess
import sys

FAILED = {"FAIL", "ERROR", "TIMEOUT", "UNEXPECTEDPASS", "INTERRUPT"}
PASSED = {"OK", "EXPECTEDFAIL"}
# TAP: a skipped plan, or a skipped case ("ok 3 - name # SKIP why").
SKIP_PLAN = re.compile(r"^\s*1\.\.0\s*#\s*skip\S*\s*(.*)$", re.I)
SKIP_CASE = re.compile(r"^\s*ok\s+\d+\s*(?:-\s*)?(.*?)\s*#\s*skip\S*\s*(.*)$", re.I)
LAB_BOOTS = re.compile(r"LAB-BOOTS boots=(\d+) froze=(\d+) lockedup=(\d+)")


def short(name):
    """"hotvm:boot / boot-tests" -> "boot-tests"."""
    return name.split(" / ")[-1]


def output(entry):
    return (entry.get("stdout") or "") + "\n" + (entry.get("stderr") or "")


def skip_reason(text):
    """Why a test skipped whole: its TAP plan, or its last line naming a skip."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        m = SKIP_PLAN.match(l)
        if m:
            return m.group(1) or "(no reason given)"
    for l in reversed(lines):
        if "skip" in l.lower():
            return l
    return lines[-1] if lines else "(no output)"


def load(build):
    path = os.path.join(build, "meson-logs", "testlog.json")
    tests = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.strip():
                    tests.append(json.loads(line))
    except OSError:
        pass
    return tests


def known_tests(builds):
    names = set()
    for b in builds:
        try:
            out = subprocess.run(["meson", "introspect", "--tests", b],
                                 capture_output=True, text=True, check=True).stdout
            names.update(t["name"] for t in json.loads(out))
        except (OSError, subprocess.CalledProcessError, ValueError):
            pass
    return names


def read_expected(path):
    """Lines "test | subtest | reason contains | run instead by"."""
    entries, errors = [], []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = [x.strip() for x in line.split("|")]
            if len(fields) != 4 or not fields[0] or not fields[2] or not fields[3]:
                errors.append(f"{path}:{n}: want 'test | subtest | reason | instead'")
                continue
            entries.append({"line": n, "test": fields[0], "sub": fields[1],
                            "reason": fields[2], "instead": fields[3]})
    return entries, errors


def declared(entries, test, sub, reason):
    for e in entries:
        if (e["test"] == test and fnmatch.fnmatchcase(sub, e["sub"] or "")
                and e["reason"] in reason):
            return e
    return None


def main(argv):
    ci = os.environ.get("CI") == "true"
    expected_path = steps_path = None
    builds = []
    args = iter(argv)
    for a in args:
        if a == "--ci":
            ci = True
        elif a == "--expected":
            expected_path = next(args)
        elif a == "--steps":
            steps_path = next(args)
        else:
            builds.append(a.rstrip("/"))

    passed = failed = skipped = 0
    failures, skips, problems, lab = [], [], [], []
    boots = freezes = 0
    failed_dirs = set()

    entries, errors = read_expected(expected_path) if expected_path else ([], [])
    problems += errors
    if entries and builds:
        known = known_tests(builds)
        for e in entries:
            for t in (e["test"], e["instead"]):
                if t not in known and not t.startswith("nowhere:"):
                    problems.append(f"{expected_path}:{e['line']}: no test named {t}")

    for build in builds:
        label = os.path.basename(build)
        for t in load(build):
            name, result = short(t["name"]), t.get("result", "?")
            text = output(t)
            where = f"{label}/{name}"
            if result in PASSED:
                passed += 1
            elif result == "SKIP":
                skipped += 1
                skips.append((where, name, "", skip_reason(text)))
            else:
                failed += 1
                failures.append(f"{where} ({result})")
                failed_dirs.add(build)
            if result != "SKIP":
                for l in text.splitlines():
                    m = SKIP_CASE.match(l)
                    if m:
                        skips.append((where, name, m.group(1), m.group(2) or "(no reason given)"))
            b = f = 0
            for m in LAB_BOOTS.finditer(text):
                b += int(m.group(1))
                f += int(m.group(2)) + int(m.group(3))
            boots += b
            freezes += f
            if f:
                after = ", passed only after a freeze" if result in PASSED else ""
                lab.append(f"{where}: {f} freeze(s) in {b} boots{after}")

    if steps_path and os.path.exists(steps_path):
        with open(steps_path, encoding="utf-8") as f:
            for line in f:
                name, result, note = (line.rstrip("\n").split("\t") + ["", ""])[:3]
                # meson's own failure is its failed tests', counted above.
                if (name.startswith("meson test in ") and result == "fail"
                        and note.startswith("exit status") and "summary" not in note
                        and name[len("meson test in "):] in failed_dirs):
                    continue
                if result == "pass":
                    passed += 1
                else:
                    failed += 1
                    failures.append(f"{name}: {'not run' if result == 'notrun' else 'failed'}"
                                    + (f" ({note})" if note else ""))

    undeclared = 0
    if skips:
        print(f"skipped ({len(skips)}: {skipped} whole tests, "
              f"{len(skips) - skipped} cases inside tests that ran):")
    for where, name, sub, reason in skips:
        e = declared(entries, name, sub, reason)
        if not e:
            mark = "NOT DECLARED"
        elif e["instead"].startswith("nowhere:"):
            mark = "expected; runs " + e["instead"]
        else:
            mark = f"expected; {e['instead']} runs it"
        if not e:
            undeclared += 1
        print(f"  {where}{': ' + sub if sub else ''} -- {reason} [{mark}]")
    if undeclared and ci:
        failed += undeclared
        print(f"error: {undeclared} skip(s) not declared in {expected_path}: "
              "under CI their prerequisites are tools/setup.sh's to install")
    if lab or boots:
        print(f"lab: {freezes} freezes in {boots} boots")
        for l in lab:
            print(f"  {l}")
    failed += len(problems)
    for p in problems:
        print(f"error: {p}")
    if failures:
        print("failed:")
        for f in failures:
            print(f"  {f}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
