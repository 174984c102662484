#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""check-layer-sources: each layer names its sources once, in its own folder.

    tools/check-layer-sources.py SOURCE_ROOT

Reads every meson.build git tracks.  A source file (.c, .S, .h) named in
one by a path that leaves its folder ("../") or that enters a folder with
a meson.build of its own belongs to another layer: that layer's library
or its files() variable is what the build links, not the path (README,
"A new source file").  Prints each such name with its line, then a
summary; exit 1 when there is any.  Run by the host test
`layer-sources` (suite docs, tools/meson.build).
"""
import os
import re
import subprocess
import sys

SRC = re.compile(r"'([^'\s]+\.(?:c|S|h))'")


def builds(root):
    out = subprocess.run(['git', '-C', root, 'ls-files', '*meson.build'],
                         capture_output=True, text=True, check=True).stdout
    return [p for p in out.split() if os.path.basename(p) == 'meson.build']


def foreign(root, folder, name):
    if name.startswith('/') or '..' in name.split('/'):
        return True
    parts = name.split('/')[:-1]
    for i in range(1, len(parts) + 1):
        if os.path.exists(os.path.join(root, folder, *parts[:i],
                                       'meson.build')):
            return True
    return False


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    bad = 0
    files = builds(root)
    for rel in files:
        folder = os.path.dirname(rel)
        with open(os.path.join(root, rel)) as f:
            for n, line in enumerate(f, 1):
                code = line.split('#', 1)[0]
                for name in SRC.findall(code):
                    if foreign(root, folder, name):
                        print(f'{rel}:{n}: {name} is another layer\'s '
                              'source: link its library or use its '
                              'files() variable')
                        bad += 1
    print(f'{"not ok" if bad else "ok"}: {len(files)} meson files, '
          f'{bad} foreign sources')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
