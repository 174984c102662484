#!/usr/bin/env bash
# A longer fuzzing campaign than the test command's few seconds: runs each
# libFuzzer harness of tests/fuzz in turn (one at a time: they share the
# machine) and prints, per harness, the executions, the rate, the coverage
# (libFuzzer's cov: edges and ft: features on its DONE line) and the corpus.
#
#   tools/fuzz.sh [-t SECONDS] [-C BUILDDIR] [NAME...]
#
# NAME is regs, qmp, pvh, bzimage, acpi, agent, ring, lxtrace, virtq, vblk, vcon or vnet (default:
# all), SECONDS per harness (default 300), BUILDDIR default build-fuzz
# (configured here with -Dfuzz=enabled if it does not exist).  The corpus grows in
# BUILDDIR/tests/fuzz/long-NAME/corpus and survives between runs; a finding
# stops that harness, its reproducer is in long-NAME/artifacts/, and the
# script exits nonzero at the end.  To keep a reproducer, copy it to
# tests/fuzz/corpus/NAME/crash-WHAT, where the replay tests run it.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
secs=300
build=$top/build-fuzz
while getopts t:C: opt; do
	case $opt in
	t) secs=$OPTARG ;;
	C) build=$(realpath -m "$OPTARG") ;;
	*) sed -n '2,16s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(regs qmp pvh bzimage acpi agent ring lxtrace virtq vblk vcon vnet)
declare -A max_len=([regs]=4096 [qmp]=4096 [pvh]=16384 [bzimage]=16384 [acpi]=64 [agent]=65536 [ring]=8192 [lxtrace]=65536 [virtq]=16384 [vblk]=16384 [vcon]=4096 [vnet]=16384)

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$top" -Dfuzz=enabled -Dlab=false >/dev/null || exit 1
fi
targets=()
for n in "${names[@]}"; do
	[ -n "${max_len[$n]:-}" ] || { echo "fuzz: no harness $n" >&2; exit 2; }
	targets+=("tests/fuzz/fuzz-$n")
done
ninja -C "$build" "${targets[@]}" >/dev/null || exit 1

stat() { # stat LOG KEY: a number from libFuzzer's -print_final_stats
	awk -v k="stat::$2:" '$1 == k { print $2 }' "$1"
}

status=0
rows=()
for n in "${names[@]}"; do
	work=$build/tests/fuzz/long-$n
	echo "== fuzz-$n for ${secs}s (corpus $work/corpus)"
	start=$(date +%s)
	HOTVM_FUZZ_SECONDS=$secs sh "$top/tests/fuzz/run-fuzzer.sh" \
		"$build/tests/fuzz/fuzz-$n" "$top/tests/fuzz/corpus/$n" "$work" \
		-max_len="${max_len[$n]}" >/dev/null
	rc=$?
	took=$(($(date +%s) - start))
	log=$work/last.log
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
	[ -n "$done_line" ] || done_line=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
	corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$done_line")
	result=ok
	if [ "$rc" -ne 0 ]; then
		result="FOUND: $(ls "$work/artifacts" | tail -n 1)"
		grep -m 1 -E 'ERROR:|invariant broken|SUMMARY' "$log"
		status=1
	fi
	rows+=("$(printf '%-8s %6ss %12s %8s %6s %7s %12s  %s' "$n" "$took" \
		"$(stat "$log" number_of_executed_units)" \
		"$(stat "$log" average_exec_per_sec)" "${cov:-?}" "${ft:-?}" \
		"${corp:-?}" "$result")")
done

echo
printf '%-8s %7s %12s %8s %6s %7s %12s  %s\n' harness time execs exec/s \
	cov ft corpus result
printf '%s\n' "${rows[@]}"
exit $status
