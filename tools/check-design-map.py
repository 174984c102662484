#!/usr/bin/env python3
"""check-design-map: docs/design.md §2's file map holds every .c of vmm/.

Each folder's table in §2 follows a line that names the folder
(`vmm/NAME/`); its rows start with "| `FILE.c` |".  Fails on a .c of
vmm/NAME/ that has no row under that folder, and on a row whose file is
gone; vmm/main.c must be named in §2.  Run by the design-map test:

  tools/check-design-map.py [SOURCE_ROOT]
"""
import os
import re
import sys


def section2(design):
    text = open(design).read()
    start = text.index('\n## 2. ')
    return text[start:text.index('\n## 3. ', start)]


def rows(sec):
    """{folder: set of .c names} from §2's tables."""
    got, folder = {}, None
    for line in sec.splitlines():
        s = line.strip()
        m = re.match(r'\| `([A-Za-z0-9_]+\.c)` \|', s)
        if m and folder:
            got.setdefault(folder, set()).add(m.group(1))
            continue
        if s.startswith('|'):
            continue
        names = re.findall(r'`vmm/([a-z]+)/`', s)
        if names:
            folder = names[-1]
    return got


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..')
    sec = section2(os.path.join(root, 'docs', 'design.md'))
    got = rows(sec)
    vmm = os.path.join(root, 'vmm')
    bad = []
    for folder in sorted(os.listdir(vmm)):
        path = os.path.join(vmm, folder)
        if not os.path.isdir(path):
            continue
        have = {f for f in os.listdir(path) if f.endswith('.c')}
        mapped = got.pop(folder, set())
        bad += ['vmm/%s/%s: no row in docs/design.md §2\'s map of '
                'vmm/%s/' % (folder, f, folder)
                for f in sorted(have - mapped)]
        bad += ['docs/design.md §2: vmm/%s/%s has a row but no file' %
                (folder, f) for f in sorted(mapped - have)]
    bad += ['docs/design.md §2: a map of vmm/%s/, which does not exist' % f
            for f in sorted(got)]
    if '`vmm/main.c`' not in sec:
        bad.append('docs/design.md §2 does not name vmm/main.c')
    for b in bad:
        print(b)
    n = sum(len(v) for v in rows(sec).values())
    print('%s: %d files mapped, %d problems' % (
        'not ok' if bad else 'ok', n, len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
