#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Seccomp filters per thread type on a real hotvm, TAP output.
#
#   seccomp-vm.sh HOTVM_SCTEST HOTVM
#
# HOTVM_SCTEST is hotvm with the test-only trigger: HOTVM_SECCOMP_TRIGGER=T
# makes thread type T call socket(2) right after loading its filter.  For
# each thread type that call must stop hotvm with status 4 and a line
# naming the call and the thread; --seccomp log and off must let it run.
# Every thread of a running hotvm is filtered, with no_new_privs; a hook
# run by the operation or main thread is not (hooks run outside the
# filters).

. "$(dirname "$0")/../lib.sh"
SCTEST=$1
HOTVM=$2

if [ ! -x "$SCTEST" ] || [ ! -x "$HOTVM" ]; then
	echo "usage: $0 HOTVM_SCTEST HOTVM" >&2
	exit 2
fi
tap_need_kvm

tap_tmpdir seccomp
pid=
tap_cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	return 0
}
TAP_DIAG=$tmp/err

# Runs "$@" to completion, bounded; sets st and leaves stderr in $tmp/err.
run_bounded() {
	timeout -s KILL 120 "$@" >/dev/null 2>"$tmp/err"
	st=$?
}

# Starts "$@" in the background with the console in $tmp/con and waits for
# the guest's "ready"; sets pid.
start_vm() {
	: >"$tmp/con"
	"$@" --serial "file:$tmp/con" 2>"$tmp/err" &
	pid=$!
	i=0
	while ! grep -q '^ready' "$tmp/con" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 600 ] || ! kill -0 "$pid" 2>/dev/null; then
			return 1
		fi
		sleep 0.1
	done
}

# SIGTERM, then the exit status in st.
stop_vm() {
	kill -TERM "$pid"
	wait "$pid"
	st=$?
	pid=
}

echo "1..14"

# 1-7: a forbidden call on each thread type stops hotvm, named (a disk
# gives the virtio device's thread, a vsock its I/O thread, whose filter
# allows socket(2) for AF_UNIX alone: the trigger's is AF_INET).
truncate -s 1M "$tmp/disk"
for t in main vcpu qmp-io qmp-query qmp-op virtio vsock; do
	rm -f "$tmp/s" "$tmp/v"
	HOTVM_SECCOMP_TRIGGER=$t run_bounded "$SCTEST" run \
		--cpus boot=1,max=2 --api-socket "$tmp/s" --serial none \
		--disk path="$tmp/disk" --vsock cid=3,socket="$tmp/v"
	if [ "$st" -eq 4 ] &&
		grep -q "seccomp: the $t thread called socket (41), which its filter forbids" "$tmp/err"; then
		ok "socket() on the $t thread: status 4, named"
	else
		not_ok "socket() on the $t thread: status $st (want 4 and the call named)"
	fi
done

# 8: log lets the call through (the kernel logs it); the VM runs on.
rm -f "$tmp/s"
if HOTVM_SECCOMP_TRIGGER=vcpu start_vm "$SCTEST" run --seccomp log \
	--cpus boot=1,max=2 --api-socket "$tmp/s"; then
	stop_vm
	if [ "$st" -eq 0 ] && ! grep -q seccomp "$tmp/err"; then
		ok "--seccomp log: the forbidden call runs, the VM goes on"
	else
		not_ok "--seccomp log: status $st"
	fi
else
	not_ok "--seccomp log: the VM did not get ready"
	stop_vm
fi

# 9: off: no filter in any thread.
rm -f "$tmp/s"
if HOTVM_SECCOMP_TRIGGER=vcpu start_vm "$SCTEST" run --seccomp off \
	--cpus boot=2,max=2 --api-socket "$tmp/s"; then
	filtered=$(grep -l '^Seccomp:[[:space:]]*2' /proc/"$pid"/task/*/status 2>/dev/null | wc -l)
	stop_vm
	if [ "$st" -eq 0 ] && [ "$filtered" -eq 0 ]; then
		ok "--seccomp off: no thread filtered, the VM runs"
	else
		not_ok "--seccomp off: status $st, $filtered threads filtered"
	fi
else
	not_ok "--seccomp off: the VM did not get ready"
	stop_vm
fi

# 10: the default (on), the real binary: every thread filtered, with
# no_new_privs, and a hot-add and removal go through.
rm -f "$tmp/s"
if start_vm "$HOTVM" run --cpus boot=2,max=3 --api-socket "$tmp/s"; then
	"$HOTVM" cpu add --api-socket "$tmp/s" >/dev/null 2>>"$tmp/err" &&
		"$HOTVM" cpu remove 2 --api-socket "$tmp/s" >/dev/null 2>>"$tmp/err"
	hp=$?
	"$HOTVM" cpu add --api-socket "$tmp/s" >/dev/null 2>>"$tmp/err"
	total=$(ls /proc/"$pid"/task | wc -l)
	filtered=$(grep -l '^Seccomp:[[:space:]]*2' /proc/"$pid"/task/*/status | wc -l)
	nnp=$(grep -l '^NoNewPrivs:[[:space:]]*1' /proc/"$pid"/task/*/status | wc -l)
	stop_vm
	# At least main, 3 vCPUs, the I/O, query and operation threads.
	if [ "$hp" -eq 0 ] && [ "$st" -eq 0 ] && [ "$total" -ge 7 ] &&
		[ "$filtered" -eq "$total" ] && [ "$nnp" -eq "$total" ]; then
		ok "default on: all $total threads filtered with no_new_privs; hotplug works"
	else
		not_ok "default on: hotplug $hp, status $st, $filtered/$nnp of $total threads filtered/no_new_privs"
	fi
else
	not_ok "default on: the VM did not get ready"
	stop_vm
fi

# 11-12: with --hook the two operation threads (QMP's, and the machine's
# work thread: a reset, a guest's own eject) are not filtered, so a hook
# is not either (a filter is inherited across fork and exec); the rest,
# the main thread too, are.
cat >"$tmp/hook" <<EOF
#!/bin/sh
grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status >"$tmp/hook.\$HOTVM_CPU"
exit 0
EOF
chmod +x "$tmp/hook"
rm -f "$tmp/s"
if HOTVM_SECCOMP_TRIGGER=qmp-op start_vm "$SCTEST" run --cpus boot=1,max=2 \
	--api-socket "$tmp/s" --hook "$tmp/hook"; then
	"$HOTVM" cpu add --api-socket "$tmp/s" >/dev/null 2>>"$tmp/err"
	hp=$?
	total=$(ls /proc/"$pid"/task | wc -l)
	filtered=$(grep -l '^Seccomp:[[:space:]]*2' /proc/"$pid"/task/*/status | wc -l)
	stop_vm
	if [ "$hp" -eq 0 ] && [ "$st" -eq 0 ] && [ "$filtered" -eq $((total - 2)) ]; then
		ok "--hook: only the two operation threads (QMP's, the machine's work) unfiltered ($filtered of $total filtered)"
	else
		not_ok "--hook: hot-add $hp, status $st, $filtered of $total filtered"
	fi
	if grep -q '^Seccomp:[[:space:]]*0' "$tmp/hook.1" 2>/dev/null &&
		grep -q '^NoNewPrivs:[[:space:]]*0' "$tmp/hook.1"; then
		ok "a hook run at a hot-add runs outside the filter"
	else
		not_ok "a hook run at a hot-add: $(cat "$tmp/hook.1" 2>/dev/null | tr '\n' ' ')"
	fi
else
	not_ok "--hook: the VM did not get ready"
	not_ok "a hook run at a hot-add"
	stop_vm
fi

# 13: a bad value is bad input.
run_bounded "$HOTVM" run --seccomp maybe
if [ "$st" -eq 2 ] && grep -q -- "--seccomp 'maybe': give on, log or off" "$tmp/err"; then
	ok "--seccomp maybe: status 2 and a clear error"
else
	not_ok "--seccomp maybe: status $st"
fi

# 14: the help documents it.
if "$HOTVM" run --help | grep -q -- '--seccomp on|log|off'; then
	ok "hotvm run --help documents --seccomp"
else
	not_ok "hotvm run --help documents --seccomp"
fi

[ "$failed" -eq 0 ]
