#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The suites that need a working /dev/kvm, run one after another inside the
# nested lab (busybox sh), for a machine whose own /dev/kvm is missing or
# cannot run them: there they skip, and this is where they run instead.
#
#   vm-suites.sh NAME 'COMMAND' [NAME 'COMMAND']...
#
# A suite passes when COMMAND exits 0, prints no TAP "not ok" and did not
# skip (the lab has a real KVM: a skip here is a failure).  With
# VM_SUITES_REPORTS set, a sanitizer report any process left in that
# directory (TSAN_OPTIONS=log_path=DIR/report) fails the run too.  Exit
# status 1 when any suite failed.

failed=0
total=0
failed_names=
failed_logs=
while [ $# -ge 2 ]; do
	name=$1
	cmd=$2
	shift 2
	total=$((total + 1))
	out=/tmp/vm-suite.$total
	echo "$name" >"$out.name"
	echo "== $name: $cmd"
	{
		sh -c "$cmd" 2>&1
		echo $? >"$out.rc"
	} | tee "$out"
	rc=$(cat "$out.rc")
	if [ "$rc" -ne 0 ] || grep -q '^not ok' "$out" ||
		grep -qi '^1\.\.0 # SKIP\|: skipped' "$out"; then
		echo "== $name: FAILED (exit status $rc)"
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		failed_logs="$failed_logs $out"
	else
		echo "== $name: passed"
	fi
done
echo "== $((total - failed)) of $total suites passed"
# The last lines are all a truncated log shows: name the failures there.
if [ -n "$failed_names" ]; then
	for f in $failed_logs; do
		# The checks that failed come first: a console dump after one
		# can push them out of the last lines.
		echo "---- the first failed checks of $(head -n 1 "$f.name")"
		grep -E '^# [^ ]+\.(c|py|sh):[0-9]+: |^not ok' "$f" | head -n 12
		echo "---- the last 20 lines of $(head -n 1 "$f.name")"
		tail -n 20 "$f"
	done
	echo "== failed:$failed_names"
fi
if [ -n "${VM_SUITES_REPORTS:-}" ] && [ -n "$(ls -A "$VM_SUITES_REPORTS" 2>/dev/null)" ]; then
	for f in "$VM_SUITES_REPORTS"/*; do
		echo "---- $f"
		cat "$f"
	done
	echo "== sanitizer reports: $(ls "$VM_SUITES_REPORTS" | wc -l) processes (above)"
	failed=$((failed + 1))
fi
[ "$failed" -eq 0 ]
