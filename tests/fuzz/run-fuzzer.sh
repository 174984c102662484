#!/bin/sh
# Runs one libFuzzer binary for a while over the seeded corpus:
#   run-fuzzer.sh FUZZER SEEDS WORKDIR [libFuzzer options...]
# New inputs go to WORKDIR/corpus (the tree's SEEDS are only read), crash
# reproducers to WORKDIR/artifacts/.  HOTVM_FUZZ_SECONDS (default 5) bounds
# the run.  The last lines are libFuzzer's final statistics: executions
# (stat::number_of_executed_units), and the coverage on the "DONE cov:"
# line.  A finding makes libFuzzer, and so this script, fail.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 FUZZER SEEDS WORKDIR [options]" >&2; exit 2; }
fuzzer=$1 seeds=$2 work=$3
shift 3
mkdir -p "$work/corpus" "$work/artifacts"
log="$work/last.log"
status=0
"$fuzzer" -max_total_time="${HOTVM_FUZZ_SECONDS:-5}" -print_final_stats=1 -error_exitcode=1 \
	-timeout=30 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/" \
	"$@" "$work/corpus" "$seeds" >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
	cat "$log"
	echo "run-fuzzer: $(basename "$fuzzer") found something (exit $status);" \
		"reproducer in $work/artifacts/" >&2
	exit "$status"
fi
# The summary: the INITED and DONE lines and the final statistics.
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::' "$log" || tail -n 20 "$log"
