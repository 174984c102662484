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
# output in hotvm's log prefixed with the hook and state, and no child of
# it alive once hotvm is gone.  Each wait is bounded; nothing sleeps and
# hopes.

HOTVM=$1
TIMEOUT=${HOTVM_TEST_TIMEOUT:-300}

if [ -z "$HOTVM" ] || [ ! -x "$HOTVM" ]; then
	echo "usage: $0 HOTVM_BINARY" >&2
	exit 2
fi
if [ ! -c /dev/kvm ]; then
	echo "1..0 # SKIP /dev/kvm is absent: these tests need KVM"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotvm-hooks.XXXXXX") || exit 1
kids=$tmp/kids
cleanup() {
	# A child the fix failed to kill must not outlive the test either.
	if [ -f "$kids" ]; then
		while read -r p; do
			kill -KILL "$p" 2>/dev/null
		done <"$kids"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	echo "# $2"
	[ -s "$tmp/err" ] && tail -n 15 "$tmp/err" | sed 's/^/#   /'
}

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

echo "1..$n"
[ "$failed" -eq 0 ]
