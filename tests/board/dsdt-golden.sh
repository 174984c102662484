#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The DSDT of a small machine (one CPU at boot, two possible), disassembled
# by iasl, must match tests/board/golden/dsdt-1of2.dsl: a change to the AML
# then shows in review as a change to that file.
#
#   dsdt-golden.sh [--update] HOTVM [IASL]
#
# --update rewrites the golden file from the current build; commit it with
# the AML change that caused it:
#
#   tests/board/dsdt-golden.sh --update build/vmm/hotvm
#
# The lines of iasl's header that carry its version, a date or a path are
# dropped, and trailing blanks; the golden's first line names the iasl that made it, and another
# iasl (whose formatting may differ) skips the comparison.  Exits 77 (meson:
# skipped) when iasl is missing or is another version.

update=0
if [ "${1:-}" = "--update" ]; then
	update=1
	shift
fi
HOTVM=$1
IASL=${2:-$(command -v iasl)}
GOLDEN=$(dirname "$0")/golden/dsdt-1of2.dsl
CPUS=boot=1,max=2

if [ -z "$HOTVM" ] || [ ! -x "$HOTVM" ]; then
	echo "usage: $0 [--update] HOTVM [IASL]" >&2
	exit 2
fi
if [ -z "$IASL" ]; then
	echo "SKIP: iasl not found: install acpica-tools"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotvm-golden.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

version=$("$IASL" -v | sed -n 's/.*version \([0-9][0-9]*\).*/\1/p' | head -n 1)
head="/* hotvm run --cpus $CPUS --dump-acpi, iasl $version -d dsdt.dat */"

if ! "$HOTVM" run --cpus "$CPUS" --dump-acpi "$tmp" >"$tmp/log" 2>&1 ||
	! (cd "$tmp" && "$IASL" -d dsdt.dat) >>"$tmp/log" 2>&1; then
	echo "FAIL: cannot dump or disassemble the DSDT:"
	cat "$tmp/log"
	exit 1
fi
{
	echo "$head"
	grep -v -E '^ \* (Intel ACPI Component Architecture|AML/ASL\+ Disassembler version|Copyright \(c\)|Disassembly of )' \
		"$tmp/dsdt.dsl" | sed 's/[[:space:]]*$//'
} >"$tmp/now.dsl"

if [ $update -eq 1 ]; then
	mkdir -p "$(dirname "$GOLDEN")" && cp "$tmp/now.dsl" "$GOLDEN" || exit 1
	echo "updated $GOLDEN"
	exit 0
fi
if [ ! -f "$GOLDEN" ]; then
	echo "FAIL: $GOLDEN is missing; make it with: $0 --update $HOTVM"
	exit 1
fi
if [ "$(head -n 1 "$GOLDEN")" != "$head" ]; then
	echo "SKIP: $GOLDEN was made by another iasl:"
	echo "  $(head -n 1 "$GOLDEN")"
	echo "  $head"
	exit 77
fi
if ! diff -u "$GOLDEN" "$tmp/now.dsl"; then
	echo "FAIL: the DSDT for --cpus $CPUS differs from $GOLDEN (diff above)."
	echo "If the AML change is intended, regenerate the golden file and"
	echo "commit it with the change:"
	echo "  tests/board/dsdt-golden.sh --update build/vmm/hotvm"
	exit 1
fi
echo "ok: the DSDT matches $GOLDEN"
