# SPDX-License-Identifier: GPL-2.0-only
# tests/lib.sh: what the shell suites share, sourced by each (POSIX sh,
# busybox sh in the lab): their TAP output (ok, not_ok, skip, the plan at
# the end), the skip without /dev/kvm, and a temporary directory removed at
# exit.
#
#	. "$(dirname "$0")/../lib.sh"	(the lab copies it beside them: /lab/)
#	tap_need_kvm			1..0 # SKIP and exit 0 without /dev/kvm
#	tap_tmpdir NAME			$tmp; at exit tap_cleanup (a suite's
#					own, or nothing) runs, then $tmp goes
#	ok NAME; skip NAME WHY
#	not_ok NAME [WHY [FILE...]]	WHY, then tap_diag FILE...: by default
#					the last lines of each FILE, or of
#					$TAP_DIAG's files (a suite may define
#					its own tap_diag after this file)
#	tap_end				the plan; status 0 when nothing failed
#	wait_for TENTHS CMD...		CMD every 0.1 s until it succeeds, at
#					most TENTHS times (a state to poll
#					that no event tells)
#	now_cs				centiseconds since boot
#	wait_watched SECONDS		waits for $pid, killed after SECONDS:
#					status (or "hung"), took (cs since
#					$t0), pid emptied

n=0
failed=0
tmp=
TAP_DIAG=

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# tap_tail FILE...: the last 15 lines of each nonempty FILE, as diagnostics.
tap_tail() {
	for f in "$@"; do
		[ -s "$f" ] && tail -n 15 "$f" | sed 's/^/#   /'
	done
	return 0
}

tap_diag() {
	if [ $# -gt 0 ]; then
		tap_tail "$@"
	else
		# shellcheck disable=SC2086 # a list of paths without blanks
		tap_tail $TAP_DIAG
	fi
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	[ $# -lt 2 ] || echo "# $2"
	[ $# -lt 2 ] || shift
	shift
	tap_diag "$@"
}

tap_end() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}

tap_need_kvm() {
	if [ ! -c /dev/kvm ]; then
		echo "1..0 # SKIP /dev/kvm is absent: these tests need KVM"
		exit 0
	fi
}

# A suite that leaves processes behind defines its own after this file.
tap_cleanup() {
	:
}

tap_exit() {
	tap_cleanup
	[ -z "$tmp" ] || rm -rf "$tmp"
}

tap_tmpdir() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotvm-$1.XXXXXX") || exit 1
	trap tap_exit EXIT
	trap 'exit 1' INT TERM
}

# wait_for TENTHS CMD...: runs CMD every 0.1 s until it succeeds, at most
# TENTHS times.
wait_for() {
	tries=$1
	shift
	while [ "$tries" -gt 0 ]; do
		"$@" && return 0
		tries=$((tries - 1))
		sleep 0.1
	done
	return 1
}

# Centiseconds since boot.
now_cs() {
	read -r up _ </proc/uptime
	echo "${up%.*}${up#*.}"
}

# wait_watched SECONDS: waits for $pid (this shell's child), killed after
# SECONDS; sets status (its exit status, or "hung" when the watchdog
# killed it) and took (centiseconds since $t0), and empties pid.  The
# watchdog's output goes nowhere: its sleep, left behind, must not hold
# the TAP pipe open (meson waited 30 s for it).
# shellcheck disable=SC2034,SC2154  # status, took and t0 are the caller's
wait_watched() {
	(sleep "$1" && kill -KILL "$pid") </dev/null >/dev/null 2>&1 &
	dog=$!
	wait "$pid"
	status=$?
	took=$(($(now_cs) - t0))
	kill "$dog" 2>/dev/null || status=hung
	pid=
}
