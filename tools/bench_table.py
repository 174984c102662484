#!/usr/bin/env python3
"""bench_table: the one table format every benchmark phase prints
(tools/bench): a "# " title line, then a markdown table whose first column
is left-aligned and the others right-aligned, a missing figure as "-".

From Python: bench_table.table(title, head, rows).  From a shell phase:
  ... | python3 tools/bench_table.py TITLE HEAD1 HEAD2 ...
with one row per input line, its cells separated by tabs (or, without
tabs, by runs of blanks).
"""
import sys


def cell(v, fmt='%.1f'):
    """A figure as text: None is "-", a float takes @fmt."""
    if v is None or v == '':
        return '-'
    if isinstance(v, float):
        return fmt % v
    return str(v)


def table(title, head, rows, out=None):
    """Prints @title and the table of @head (column names) and @rows (lists
    of cells, see cell())."""
    out = out or sys.stdout
    if title:
        print('\n# %s\n' % title, file=out)
    print('| %s |' % ' | '.join(head), file=out)
    print('|---|%s' % ''.join('---:|' for _ in head[1:]), file=out)
    for r in rows:
        r = [cell(c) for c in r] + ['-'] * (len(head) - len(r))
        print('| %s |' % ' | '.join(r), file=out)
    out.flush()


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    rows = []
    for line in sys.stdin:
        line = line.rstrip('\n')
        if line.strip():
            rows.append(line.split('\t') if '\t' in line else line.split())
    table(argv[1], argv[2:], rows)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
