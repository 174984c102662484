#!/usr/bin/env bash
# Measure how often the nested lab freezes: BOOTS lab boots of one
# workload, each with no retry, each line of the tally a boot.
#   tools/lab/freeze-rate.sh [-b BUILD] [-n BOOTS] [-w WORKLOAD] [-o FILE]
#                            [-l LABEL] [-- LAB.SH OPTIONS...]
# WORKLOAD:
#   hotvm   test-guest-word test_reboot: Debian's Linux on hotvm, two CPUs
#           hot-added, the guest's own reboot with them (the test that froze
#           the lab most, tools/lab/README.md)
#   qemu    the same cycle with QEMU as the second-level VMM, twice
#           (tools/lab/freeze-qemu-inner.sh): no hotvm in the lab
#   qemu-reset  QEMU with four CPUs booting Linux, then seven resets and
#           boots (the APs' wait for their boot CPU, oftener)
#   idle    the lab's kernel idles for 90 s
# Options after -- go to lab.sh (the remedy under trial), e.g.
#   -- --qemu-arg -accel --qemu-arg tcg,thread=single --append nohz=off
# Each boot appends "LABEL WORKLOAD OUTCOME SECONDS" to FILE (default
# freeze-rate.txt), OUTCOME one of ok, freeze (the heartbeat and console
# stopped, or a lockup report), stall (lab.sh woke QEMU's main loop with a
# monitor command and the lab ran on: would have been a freeze), kicked
# (the command passed, and the lab ran again after lab.sh --kick's key
# press: would have been a freeze without it), fail-N
# (the command failed with status N: not the lab's).  Prints the totals.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$top/build
boots=10
workload=hotvm
out=freeze-rate.txt
label=default
while getopts b:n:w:o:l: o; do
	case $o in
	b) build=$OPTARG ;;
	n) boots=$OPTARG ;;
	w) workload=$OPTARG ;;
	o) out=$OPTARG ;;
	l) label=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
lab=("$top/tools/lab/lab.sh" --cache "$build/lab-cache" --smp 1 --quiet
	--silence 60 --retries 0 --timeout 600)
case $workload in
hotvm)
	lab+=(--linux-guest --hotvm "$build/vmm/hotvm"
		--bin "$build/tests/linux/test-guest-word"
		--run 'mkdir -p /tmp && HOTVM=/bin/hotvm test-guest-word /lab/linux test_reboot') ;;
qemu)
	lab+=(--linux-guest --with-qemu
		--add "$top/tools/lab/freeze-qemu-inner.sh:/lab/freeze-qemu-inner.sh"
		--run 'sh /lab/freeze-qemu-inner.sh 2') ;;
qemu-reset)
	lab+=(--linux-guest --with-qemu
		--add "$top/tools/lab/freeze-qemu-inner.sh:/lab/freeze-qemu-inner.sh"
		--run 'sh /lab/freeze-qemu-inner.sh 8 reset') ;;
idle) lab+=(--run 'sleep 90') ;;
*) echo "unknown workload $workload" >&2; exit 2 ;;
esac
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for ((i = 1; i <= boots; i++)); do
	t0=$(date +%s)
	status=0
	"${lab[@]}" "$@" >/dev/null 2>"$err" || status=$?
	# LAB-BOOTS counts them (its "froze=0" is no freeze).
	if grep -Eq 'LAB-BOOTS .*(froze|lockedup)=[1-9]' "$err"; then
		outcome=freeze
	elif grep -q 'timers had stalled' "$err"; then
		outcome=stall
	elif [[ $status = 0 ]] && grep -q 'held the timer.s interrupt undelivered' "$err"; then
		outcome=kicked
	elif [[ $status = 0 ]]; then
		outcome=ok
	else
		outcome=fail-$status
	fi
	echo "$label $workload $outcome $(($(date +%s) - t0))" | tee -a "$out"
	[[ $outcome = ok ]] || { echo "== $label $workload $outcome"; sed "s/^/  | /" "$err"; } >>"$out.why"
done
awk -v l="$label" -v w="$workload" '$1 == l && $2 == w { n++; c[$3]++ }
	END { printf "%s %s: %d boots", l, w, n; for (k in c) printf ", %s %d", k, c[k]; print "" }' "$out"
