#!/bin/sh
# The long run of the randomized consistency test (tests/e2e/consistency.c,
# issue 21): STEPS random operations, bursts, resizes and disconnecting
# clients under faults on both sides, hook vetoes and timeouts, checking
# after each that the host table, the QMP views, the events and the tiny
# guest's own "online:" line agree, or that hotvm flagged the vCPU and
# cpuhp-recover put it back.  Prints the figures at the end: operations,
# faults, vetoes, timeouts, disagreements found (flagged, unflagged),
# recovered.
#
#   tools/consistency.sh [-n STEPS] [-s SEED] [-b BUILD] [-H HOTVM] [-l LOG] [-t SECONDS]
#     -n  steps (default 2000)
#     -s  seed (default: a fresh one, printed; the same seed replays the run
#         against the same hotvm, up to the guest's own timing)
#     -b  build directory with tests/e2e/consistency, vmm/hotvm and
#         lab-cache (default build)
#     -H  the hotvm to test (default BUILD/vmm/hotvm), e.g. an older tree's
#     -l  the whole log (default BUILD/consistency.log)
#     -t  the lab's timeout (default from STEPS)
# On a machine without a usable /dev/kvm it runs inside the nested lab
# (tools/lab/lab.sh).  Exit status 1 on any unflagged disagreement, failed
# recovery or unclean exit of hotvm.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
steps=2000
seed=
build=$top/build
hotvm=
log=
timeout=

while getopts n:s:b:H:l:t:h opt; do
	case $opt in
	n) steps=$OPTARG ;;
	s) seed=$OPTARG ;;
	b) build=$OPTARG ;;
	H) hotvm=$OPTARG ;;
	l) log=$OPTARG ;;
	t) timeout=$OPTARG ;;
	*) sed -n '2,22p' "$0"; exit 2 ;;
	esac
done
case $steps$seed in *[!0-9]*) echo "consistency: -n and -s take numbers" >&2; exit 2 ;; esac
[ "$steps" -ge 1 ] || { echo "consistency: -n must be at least 1" >&2; exit 2; }
hotvm=${hotvm:-$build/vmm/hotvm}
log=${log:-$build/consistency.log}
test_bin=$build/tests/e2e/consistency
for f in "$hotvm" "$test_bin"; do
	[ -x "$f" ] || { echo "consistency: $f not built (ninja -C $build)" >&2; exit 2; }
done
# A step takes 0.3-1 s in the lab (a disagreement waits up to 40 s more);
# a new VM every 25-60 steps about 1 s.
timeout=${timeout:-$((300 + steps * 2))}

status=0
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
	echo "consistency: $steps steps on this machine's /dev/kvm" >&2
	# shellcheck disable=SC2086  # no seed: no word
	HOTVM=$hotvm "$test_bin" "$steps" $seed >"$log" 2>&1 || status=$?
else
	echo "consistency: no usable /dev/kvm here: $steps steps in the nested" \
		"lab (timeout ${timeout}s)" >&2
	# The test prints a line per step: a silent lab is a frozen one.
	"$top/tools/lab/lab.sh" --cache "$build/lab-cache" --smp 1 \
		--silence 120 --retries 2 --timeout "$timeout" \
		--hotvm "$hotvm" --bin "$test_bin" --log "$log" --quiet \
		--run "mkdir -p /tmp && HOTVM=/bin/hotvm consistency $steps $seed" ||
		status=$?
fi

# What went wrong, then the figures.
grep -a -A 12 '^# DISAGREEMENT\|^# NOT RECOVERED\|^# hotvm' "$log" | tr -d '\r' | head -n 200 || :
if ! grep -a '^consistency: ' "$log" | tr -d '\r'; then
	echo "consistency: no figures: the run did not finish (see $log)" >&2
	[ "$status" -ne 0 ] || status=1
fi
echo "consistency: the whole log is in $log" >&2
exit "$status"
