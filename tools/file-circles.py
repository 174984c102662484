#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Which files of a layer call each other in a circle.

    file-circles.py [-v] [--check] [--asm-calls] LIB.a|DIR...

For each static library (one a layer: build/vmm/*/lib*.a), or each folder
of object files (one program: the tiny guest's build/guest/hotvm-tiny.elf.p),
reads nm's symbol tables: file A uses file B when A's object refers to a
global symbol (function or data) that B's object defines.  Prints the
number of files and of circles (strongly connected groups of more than one
file), each circle, and each pair that uses each other directly; -v adds
every file's uses.  Static functions and inline ones in headers are not
seen.

--asm-calls is for a program with assembly files (*.S.o: the tiny guest's
entry.S, trampoline.S and isr.S).  What an assembly file refers to counts
as above; but a C file uses an assembly file only where it calls or jumps
to a symbol that file defines (objdump's relocations at call and jmp
instructions).  The rest of what C refers to there is memory the assembly
lays out or code it hands to the hardware, never called from C: the
stack pool smp.c, idt.c and lapic.c index, the trampoline's bytes smp.c
copies below 1 MiB for a SIPI, the stubs' addresses idt.c writes into the
IDT, the NMI wait's bounds smp.c compares a saved RIP with.  Without it
those references close a circle no call runs round.

Exit status 0 whatever it finds (it measures), but with --check 1 when any
circle is found (the tests file-circles and file-circles-guest,
tools/meson.build).
"""
import re
import collections
import glob
import os
import subprocess
import sys


def called(obj):
    """The symbols obj's code calls or jumps to, from its relocations."""
    out = subprocess.run(['objdump', '-dr', '--no-show-raw-insn', obj],
                         capture_output=True, text=True, check=True).stdout
    insn, syms = '', set()
    for line in out.splitlines():
        m = re.match(r'\s+[0-9a-f]+:\s+R_X86_64_\w+\s+([\w.]+)', line)
        if m:
            if insn.startswith(('call', 'j')):
                syms.add(m.group(1))
            continue
        m = re.match(r'\s+[0-9a-f]+:\s+(\S+)', line)
        if m:
            insn = m.group(1)
    return syms


def uses_of(lib, asm_calls=False):
    objs = sorted(glob.glob(os.path.join(lib, '*.o'))) \
        if os.path.isdir(lib) else [lib]
    if not objs:
        sys.exit(f'{lib}: no object files')
    out = subprocess.run(['nm', '-A'] + objs, capture_output=True,
                         text=True, check=True).stdout
    defs, refs = {}, collections.defaultdict(set)
    for line in out.splitlines():
        head, _, rest = line.rpartition(':')
        obj = head.split(':')[-1].rsplit('/', 1)[-1]
        name = obj[:-4] if obj.endswith(('.c.o', '.S.o')) else obj
        parts = rest.split()
        if len(parts) == 3 and parts[1] in 'TDBRCG':
            defs[parts[2]] = name
        elif len(parts) == 2 and parts[0] == 'U':
            refs[name].add(parts[1])
    files = sorted(set(defs.values()) | set(refs))
    asm = {o.rsplit('/', 1)[-1][:-4] for o in objs if o.endswith('.S.o')}
    calls = {o.rsplit('/', 1)[-1][:-4]: called(o) for o in objs
             if asm_calls and o.endswith('.c.o')}
    uses = {f: set() for f in files}
    for f, syms in refs.items():
        for s in syms:
            g = defs.get(s)
            if not g or g == f:
                continue
            if asm_calls and g in asm and f not in asm and \
                    s not in calls[f]:
                continue
            uses[f].add(g)
    return files, uses


def circles(files, uses):
    """Tarjan's strongly connected components, without recursion."""
    index, low, on, stack, found, n = {}, {}, set(), [], [], 0
    for root in files:
        if root in index:
            continue
        work = [(root, iter(sorted(uses[root])))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(uses[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


def main(argv):
    verbose = '-v' in argv
    check = '--check' in argv
    asm_calls = '--asm-calls' in argv
    libs = [a for a in argv if a not in ('-v', '--check', '--asm-calls')]
    if not libs:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    status = 0
    for lib in libs:
        files, uses = uses_of(lib, asm_calls)
        found = circles(files, uses)
        if check and found:
            status = 1
        print(f'{lib}: {len(files)} files, {len(found)} circles')
        for c in found:
            print('  circle:', ' '.join(c))
        for a in files:
            for b in sorted(uses[a]):
                if a < b and a in uses[b]:
                    print(f'  both ways: {a} <-> {b}')
        if verbose:
            for a in files:
                print(f'  {a} -> {" ".join(sorted(uses[a]))}')
    return status


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
