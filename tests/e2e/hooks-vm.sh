#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Hooks run by a real hotvm, TAP output.
#
#   hooks-vm.sh HOTVM_BINARY
#
# Boots the built-in tiny guest with two vCPUs and a hook at every host
# state (the boot walk runs them), and checks what the hook got from the
# VMM and what it left behind: an empty signal mask and no ignored signals
# (hotvm blocks its stop signals and ignores SIGPIPE in every thread), only
# PATH and HOTVM_* in its environment, none of hotvm's descriptors, its
# output in hotvm's log prefixed with the hook and state, no child of it
# alive once hotvm is gone, and daemons it started the documented way
# (setsid in its foreground) alive.  Then a hook that sleeps 20 s in a
# hot-add: SIGTERM and `quit` stop hotvm within a second, with nothing of
# the hook's process group left; SIGKILL of hotvm leaves the group running
# and the socket file, which the next hotvm on that path takes over.  Each
# wait is bounded; nothing sleeps and hopes (the hook's own sleep is what
# is tested).

. "$(dirname "$0")/../lib.sh"
HOTVM=$1
TIMEOUT=${HOTVM_TEST_TIMEOUT:-300}

if [ -z "$HOTVM" ] || [ ! -x "$HOTVM" ]; then
	echo "usage: $0 HOTVM_BINARY" >&2
	exit 2
fi
tap_need_kvm

tap_tmpdir hooks
kids=$tmp/kids
pid=
tap_cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	# A child the fix failed to kill must not outlive the test either, nor
	# the daemons, nor what SIGKILL of hotvm left.
	for f in "$kids" "$tmp/daemons" "$tmp/racy" "$tmp"/slow.*.pids; do
		[ -f "$f" ] || continue
		for p in $(cat "$f"); do
			kill -KILL "$p" 2>/dev/null
		done
	done
	return 0
}
TAP_DIAG=$tmp/err

# The hook: the status lines are copied with builtins only, because dash
# blocks every signal while it forks and waits.
hook=$tmp/hook
cat >"$hook" <<EOF
#!/bin/sh
st=$tmp/st.\$HOTVM_CPU.\$HOTVM_STATE.\$HOTVM_DIRECTION
while read -r l; do echo "\$l"; done </proc/\$\$/status >"\$st.status"
env >"\$st.env"
ls -l /proc/\$\$/fd/ >"\$st.fds"
sleep 300 &
echo \$! >>"$kids"
echo "said \$HOTVM_STATE"
# Daemons: 6 the documented way, setsid in the foreground (it has called
# setsid() when the next line runs), then 6 the racy way, for the figure:
# in the background, just before the hook exits.
if [ "\$HOTVM_CPU \$HOTVM_STATE \$HOTVM_DIRECTION" = "0 online up" ]; then
	for i in 1 2 3 4 5 6; do
		setsid sh -c 'sleep 300 & echo \$! >>"\$0"' "$tmp/daemons" \
			</dev/null >/dev/null 2>&1
	done
	for i in 1 2 3 4 5 6; do
		setsid sleep 300 </dev/null >/dev/null 2>&1 &
		echo \$! >>"$tmp/racy"
	done
fi
exit 0
EOF
chmod 755 "$hook"

# fd 9 is left open without close-on-exec, as a caller might leave one.
HOTVM_TEST_SECRET=do-not-pass timeout -s KILL "$TIMEOUT" "$HOTVM" run \
	--cpus boot=2 --hook "$hook" --cmdline exit >"$tmp/out" \
	2>"$tmp/err" </dev/null 9>"$tmp/marker"
status=$?

calls=0
for f in "$tmp"/st.*.status; do
	[ -f "$f" ] && calls=$((calls + 1))
done
if [ "$status" -eq 1 ] && [ "$calls" -ge 8 ]; then
	ok "the guest booted and the hook ran at every state ($calls calls)"
else
	not_ok "the guest booted and the hook ran at every state" \
		"status $status (expected 1), $calls hook calls (expected 8)"
fi

name="a hook starts with no signal blocked or ignored"
bad=
# What the hook's interpreter does to itself is not hotvm's: busybox ash
# ignores SIGQUIT as it starts (and exports SHLVL, below).
own_ign=00000000
case $(readlink -f /bin/sh) in */busybox) own_ign=00000004 ;; esac
for f in "$tmp"/st.*.status; do
	[ -f "$f" ] || continue
	blk=$(sed -n 's/^SigBlk:[[:space:]]*//p' "$f")
	ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' "$f")
	# Signals 1..31; glibc keeps its own two just above them.
	case $blk in 0000000000000000) ;; *) bad="blocked=$blk" ;; esac
	[ $((0x${ign#????????} & ~(0x80000000 | 0x$own_ign))) -eq 0 ] ||
		bad="$bad ignored=$ign"
	[ -n "$bad" ] && break
done
if [ "$calls" -gt 0 ] && [ -z "$bad" ]; then
	ok "$name"
else
	not_ok "$name" "${bad:-no hook ran}"
fi

name="a hook's environment is PATH and HOTVM_* only"
bad=
for f in "$tmp"/st.*.env; do
	[ -f "$f" ] || continue
	extra=$(grep -v -e '^PATH=' -e '^HOTVM_VM=' -e '^HOTVM_CPU=' \
		-e '^HOTVM_STATE=' -e '^HOTVM_DIRECTION=' -e '^HOTVM_PID=' \
		-e '^HOTVM_APIC_ID=' -e '^HOTVM_THREAD_ID=' \
		-e '^HOTVM_QOM_PATH=' -e '^PWD=' -e '^SHLVL=' "$f" |
		head -n 3 | tr '\n' ' ')
	[ -n "$extra" ] && bad="$extra"
	grep -q '^HOTVM_STATE=' "$f" || bad="no HOTVM_STATE"
done
if [ "$calls" -gt 0 ] && [ -z "$bad" ]; then
	ok "$name"
else
	not_ok "$name" "${bad:-no hook ran}"
fi

name="a hook inherits none of hotvm's descriptors"
bad=$(cat "$tmp"/st.*.fds 2>/dev/null |
	grep -e marker -e kvm -e signalfd -e eventfd | head -n 3 |
	tr '\n' ' ')
if [ "$calls" -gt 0 ] && [ -z "$bad" ]; then
	ok "$name"
else
	not_ok "$name" "${bad:-no hook ran}"
fi

name="hook output is logged, prefixed with the hook, CPU and state"
if grep -q "^hotvm: hook $hook (cpu 1, online up): said online\$" \
	"$tmp/err"; then
	ok "$name"
else
	not_ok "$name" "no 'hotvm: hook $hook (cpu 1, online up): said online'"
fi

# Every child was killed with its hook's process group, before hotvm
# exited; allow a second for the kills to land.
name="no child of a hook outlives it"
alive=
tries=0
while [ "$tries" -lt 10 ]; do
	alive=
	while read -r p; do
		st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' \
			"/proc/$p/status" 2>/dev/null)
		case $st in "" | Z | X) ;; *) alive="$alive $p" ;; esac
	done <"$kids"
	[ -z "$alive" ] && break
	tries=$((tries + 1))
	sleep 0.1
done
if [ -s "$kids" ] && [ -z "$alive" ]; then
	ok "$name"
else
	not_ok "$name" "still running:${alive:- (no child recorded)}"
fi

# Whether process $1 is alive (a zombie is not).
alive() {
	st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" \
		2>/dev/null)
	case $st in "" | Z | X) return 1 ;; esac
}

name="6 daemons a hook started with setsid in its foreground outlive it"
live=0
total=0
racy=0
if [ -f "$tmp/daemons" ]; then
	for p in $(cat "$tmp/daemons"); do
		total=$((total + 1))
		alive "$p" && live=$((live + 1))
	done
fi
if [ -f "$tmp/racy" ]; then
	for p in $(cat "$tmp/racy"); do
		alive "$p" && racy=$((racy + 1))
	done
fi
echo "# daemons alive after hotvm exited: $live of $total started with" \
	"'setsid sh -c \"DAEMON &\"', $racy of 6 with 'setsid DAEMON &'"
if [ "$total" -eq 6 ] && [ "$live" -eq 6 ]; then
	ok "$name"
else
	not_ok "$name" "$live of $total alive"
fi

# --- A hook running when hotvm is told to stop -------------------------

# The hook: at the hot-add of CPU 1 it records its group (its pid) and its
# child, says so through a FIFO (an event to wait for), and sleeps 20 s.
slow=$tmp/slow
cat >"$slow" <<EOF
#!/bin/sh
[ "\$HOTVM_CPU \$HOTVM_STATE \$HOTVM_DIRECTION" = "1 host:prepare up" ] ||
	exit 0
sleep 20 &
echo "\$\$ \$!" >"$tmp/slow.pids"
echo running >"$tmp/slow.fifo"
wait \$!
EOF
chmod 755 "$slow"

ready() {
	grep -q '^ready' "$tmp/out"
}
gone() {
	! kill -0 "$pid" 2>/dev/null
}
ready_or_gone() {
	ready || gone
}

# start_slow CASE: hotvm with the slow hook (--hook-timeout 20 s), a
# hot-add of CPU 1 in the background ($adder), and the hook running; fails
# if any of it does not come.
start_slow() {
	sock=$tmp/api.$1
	rm -f "$tmp/slow.fifo" "$tmp/slow.pids"
	mkfifo "$tmp/slow.fifo" || return 1
	: >"$tmp/out"
	: >"$tmp/err"
	# Not under timeout(1): $pid is hotvm's own (the waits are bounded).
	"$HOTVM" run --cpus boot=1,max=2 --api-socket "$sock" \
		--hook "$slow" --hook-timeout 20000 >"$tmp/out" \
		2>"$tmp/err" </dev/null &
	pid=$!
	adder=
	wait_for $((TIMEOUT * 10)) ready_or_gone
	ready || return 1
	"$HOTVM" cpu add 1 --api-socket "$sock" --timeout 60 \
		>"$tmp/add.$1" 2>&1 &
	adder=$!
	# Until the hook runs: it opens the FIFO.  Should the add fail before
	# the hook, its end opens the FIFO instead, and the pids are missing.
	# Its output goes nowhere: should it outlive the kill below, blocked
	# opening the FIFO, it must not hold the test runner's pipe open.
	(wait_for $((TIMEOUT * 10)) gone_adder
		echo >"$tmp/slow.fifo") >/dev/null 2>&1 </dev/null &
	helper=$!
	read -r _ <"$tmp/slow.fifo"
	kill "$helper" 2>/dev/null
	[ -s "$tmp/slow.pids" ]
}
gone_adder() {
	! kill -0 "$adder" 2>/dev/null
}

# Processes still in process group $1 (not zombies), as " pid pid ...".
group_left() {
	g=$1
	left=
	for s in /proc/[0-9]*/stat; do
		{ read -r l <"$s"; } 2>/dev/null || continue
		set -- ${l##*) }
		[ "$3" = "$g" ] || continue
		case $1 in
		Z | X) ;;
		*)
			p=${s#/proc/}
			left="$left ${p%/stat}"
			;;
		esac
	done
	echo "$left"
}
group_gone() {
	[ -z "$(group_left "$1")" ]
}

# stop_timed HOW: stops hotvm (TERM: SIGTERM; quit: `hotvm vm quit`) and
# waits for it to exit, SIGKILL after 30 s; sets $status ("hung" then)
# and $took (centiseconds from the request to the exit).
stop_timed() {
	t0=$(now_cs)
	case $1 in
	TERM) kill -TERM "$pid" ;;
	quit)
		"$HOTVM" vm quit --api-socket "$sock" --timeout 10 \
			>"$tmp/quit.out" 2>&1
		;;
	esac
	wait_watched 30
	[ -n "$adder" ] && wait "$adder" 2>/dev/null
}

for how in TERM quit; do
	case $how in
	TERM) name="SIGTERM during a 20 s hook" ;;
	quit) name="quit during a 20 s hook" ;;
	esac
	# The bound says hotvm does not wait for the hook (20 s): generous,
	# since an ASan build in the lab under a loaded host takes over 1 s.
	name="$name: hotvm exits within 5 s, status 0, the hook's group gone"
	if ! start_slow "$how"; then
		[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
		pid=
		not_ok "$name" "the hook never ran in a hot-add"
		continue
	fi
	read -r pgid kid <"$tmp/slow.pids"
	mv "$tmp/slow.pids" "$tmp/slow.$how.pids"
	stop_timed "$how"
	wait_for 10 group_gone "$pgid"
	left=$(group_left "$pgid")
	echo "# $how during the hook: hotvm exited in" \
		"$((took / 100)).$(printf %02d $((took % 100))) s (status $status)"
	stopped="hook $slow (cpu 1, host:prepare, up) stopped: the VMM is"
	if [ "$status" != 0 ]; then
		not_ok "$name" "exit status $status, expected 0 (in $took cs)"
	elif [ "$took" -gt 500 ]; then
		not_ok "$name" "hotvm took $took cs to exit"
	elif [ -n "$left" ]; then
		not_ok "$name" "left in the hook's group $pgid:$left"
	elif ! grep -q "$stopped" "$tmp/err"; then
		not_ok "$name" "no '$stopped shutting down' in the log"
	else
		ok "$name"
	fi
done

# SIGKILL leaves what hotvm cannot reach any more: the hook's group runs
# on (docs/orchestration.md says so) and the socket file stays; the next
# hotvm with the same --api-socket finds nobody listening and takes the
# path over.
name="SIGKILL during a hook leaves its group and the socket file;"
name="$name the next hotvm takes the socket over"
if ! start_slow KILL; then
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	pid=
	not_ok "$name" "the hook never ran in a hot-add"
else
	read -r pgid kid <"$tmp/slow.pids"
	mv "$tmp/slow.pids" "$tmp/slow.KILL.pids"
	kill -KILL "$pid"
	wait "$pid"
	pid=
	wait "$adder" 2>/dev/null
	left=$(group_left "$pgid")
	status=
	if [ -z "$left" ]; then
		not_ok "$name" "the hook's group $pgid is gone (docs/orchestration.md: it stays)"
	elif [ ! -S "$sock" ]; then
		not_ok "$name" "the socket file $sock is gone (docs/orchestration.md: it stays)"
	else
		: >"$tmp/out"
		: >"$tmp/err"
		adder=
		"$HOTVM" run --cpus boot=1 --api-socket "$sock" \
			>"$tmp/out" 2>"$tmp/err" </dev/null &
		pid=$!
		wait_for $((TIMEOUT * 10)) ready_or_gone
		ready && stop_timed quit
		if [ "$status" = 0 ] && [ ! -e "$sock" ]; then
			ok "$name"
		else
			not_ok "$name" "the next hotvm on $sock: status ${status:-?}"
		fi
	fi
	# What an operator does after a SIGKILL: kill the hook's group.
	kill -KILL "$pgid" "$kid" 2>/dev/null
fi

tap_end
