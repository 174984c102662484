#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""check-lengths: no vmm/ file over 800 lines, no vmm/ function over 60.

    tools/check-lengths.py [SOURCE_ROOT]

Reads every .c and .h under vmm/.  A file fails past MAX_FILE lines (or
past its figure in ALLOW_FILES).  A function is a body between a line
that is exactly "{" and the next line that starts with "}" (kernel
style: a function's brace alone at column 0; a table's initialiser
never is); it fails past MAX_BODY body lines, unless ALLOW names it.  Its name is the first identifier before "(" in
the lines above its brace, back to a blank line or the end of the last
declaration.  Prints each one over, then a summary; exit 1 when any
fails.  Run by the host test `lengths` (suite docs, tools/meson.build).
"""
import os
import re
import sys

MAX_FILE = 800
MAX_BODY = 60

# Functions that may pass MAX_BODY, "FILE:FUNCTION": why.  Only tables,
# switch dispatch and printf usage text belong here for good; one whose
# body is steps to extract is not an exception.  Entries marked "to
# split" are known debts, listed so that main stays green while they are
# cut; each should go with its split.  An entry no longer needed is
# printed so that it can go.
ALLOW = {
    # One printf per option line: the usage text, a table in code.
    'vmm/ctl/cpu_cmd.c:usage': 'printf usage text',
}

# Files that may pass MAX_FILE, each a known debt to split by job (issue
# 30), with its length when listed: it may not grow past that.
ALLOW_FILES = {
}


def body_name(lines, brace):
    """The function's name from the lines above its '{' at index brace."""
    head = []
    i = brace - 1
    while i >= 0:
        s = lines[i].rstrip()
        if not s or s.endswith((';', '}', '*/')) or s.startswith('#'):
            break
        head.insert(0, s)
        i -= 1
    for m in re.finditer(r'([A-Za-z_]\w*)\s*\(', ' '.join(head)):
        if not m.group(1).startswith('__'):
            return m.group(1)
    return '?'


def functions(path):
    """(name, body lines, first line) of each column-0 brace body."""
    lines = open(path, encoding='utf-8').read().split('\n')
    start = None
    for i, line in enumerate(lines):
        if line == '{':
            start = i
        elif line.startswith('}') and start is not None:
            yield body_name(lines, start), i - start - 1, start + 1
            start = None


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..')
    bad, used, nfiles, nfuncs = [], set(), 0, 0
    for dirpath, dirs, names in os.walk(os.path.join(root, 'vmm')):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            nfiles += 1
            with open(path, encoding='utf-8') as f:
                n = sum(1 for _ in f)
            if n > ALLOW_FILES.get(rel, MAX_FILE):
                bad.append('%s: %d lines, over %d' % (rel, n, MAX_FILE))
            for fn, body, line in functions(path):
                nfuncs += 1
                if body <= MAX_BODY:
                    continue
                key = '%s:%s' % (rel, fn)
                if key in ALLOW:
                    used.add(key)
                    continue
                bad.append('%s:%d: %s() has %d body lines, over %d' %
                           (rel, line, fn, body, MAX_BODY))
    for b in bad:
        print(b)
    for rel, n in sorted(ALLOW_FILES.items()):
        path = os.path.join(root, rel)
        if not os.path.exists(path) or \
                sum(1 for _ in open(path, encoding='utf-8')) <= MAX_FILE:
            print('note: %s is no longer over %d lines: remove it from '
                  'ALLOW_FILES' % (rel, MAX_FILE))
    for key in sorted(set(ALLOW) - used):
        print('note: %s is no longer over %d lines: remove it from ALLOW'
              % (key, MAX_BODY))
    print('%s: %d files, %d functions, %d over' % (
        'not ok' if bad else 'ok', nfiles, nfuncs, len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
