#!/bin/sh
# The lab's side of tools/lab/freeze-rate.sh's QEMU workload (busybox sh,
# as root, in the lab's first-level guest): the Linux guest's cycle that
# froze the lab under hotvm (boot, hot-add two CPUs, the guest's own reboot
# with them, boot again), with QEMU as the second-level VMM instead of
# hotvm, to tell a freeze of the lab from a hang of hotvm's.
#   sh /lab/freeze-qemu-inner.sh [CYCLES] [reset]
# Each cycle prints FREEZE-CYCLE: <n> ok, or FREEZE-CYCLE: <n> fail <why>.
# With "reset", one QEMU with four CPUs from the start instead, and each
# cycle a system_reset and the boot after it: the same APs waiting in
# Linux's wait_for_master_cpu for their boot CPU, oftener.
# Polls the console file each 0.2 s: a workload, not a test.
cycles=${1:-2}
dir=/tmp/freeze-qemu
mkdir -p "$dir"

# wait_line PATTERN COUNT SECONDS: the console has COUNT lines matching
# PATTERN (grep -E) within SECONDS.
wait_line() {
	n=0
	while [ "$n" -lt $(($3 * 5)) ]; do
		# The serial console ends its lines with CR LF.
		[ -e "$dir/console" ] &&
			[ "$(tr -d '\r' <"$dir/console" | grep -c -E "$1")" -ge "$2" ] && return 0
		sleep 0.2
		n=$((n + 1))
	done
	return 1
}

failed=0
c=1
if [ "${2:-}" = reset ]; then
	rm -f "$dir/console" "$dir/mon"
	mkfifo "$dir/mon"
	qemu-system-x86_64 -accel kvm -cpu host -M q35 -m 512 -smp 4 \
		-kernel /lab/linux/vmlinux -initrd /lab/linux/initrd.gz \
		-append console=ttyS0 -display none -vga none -nic none \
		-serial "file:$dir/console" -monitor stdio <"$dir/mon" >"$dir/monitor.out" 2>&1 &
	qpid=$!
	exec 3>"$dir/mon"
	while [ "$c" -le "$cycles" ]; do
		if wait_line '^online: 0-3$' "$c" 180; then
			echo "FREEZE-CYCLE: $c ok"
		else
			echo "FREEZE-CYCLE: $c fail no ready with 0-3 online"
			tail -n 20 "$dir/console"
			failed=$((failed + 1))
			break
		fi
		echo system_reset >&3
		c=$((c + 1))
	done
	echo quit >&3
	exec 3>&-
	wait "$qpid"
	[ "$failed" = 0 ]
	exit
fi
while [ "$c" -le "$cycles" ]; do
	rm -f "$dir/console" "$dir/mon"
	mkfifo "$dir/mon"
	qemu-system-x86_64 -accel kvm -cpu host -M q35 -m 512 \
		-smp 1,maxcpus=4,sockets=4,cores=1,threads=1 \
		-kernel /lab/linux/vmlinux -initrd /lab/linux/initrd.gz \
		-append "console=ttyS0 hotvm.pwrbtn=reboot" \
		-display none -vga none -nic none -serial "file:$dir/console" \
		-monitor stdio <"$dir/mon" >"$dir/monitor.out" 2>&1 &
	qpid=$!
	exec 3>"$dir/mon"
	why=
	if ! wait_line '^ready' 1 180; then
		why="no ready"
	else
		echo "device_add host-x86_64-cpu,id=c1,socket-id=1,core-id=0,thread-id=0" >&3
		wait_line '^online: 0-1$' 1 60 || why="cpu1 not online"
	fi
	if [ -z "$why" ]; then
		echo "device_add host-x86_64-cpu,id=c2,socket-id=2,core-id=0,thread-id=0" >&3
		wait_line '^online: 0-2$' 1 60 || why="cpu2 not online"
	fi
	if [ -z "$why" ]; then
		echo "system_powerdown" >&3
		wait_line '^ready' 2 180 || why="no ready after the guest's reboot"
	fi
	[ -z "$why" ] && ! wait_line '^online: 0-2$' 2 30 && why="not 0-2 after reboot"
	echo "quit" >&3
	exec 3>&-
	wait "$qpid"
	if [ -n "$why" ]; then
		echo "FREEZE-CYCLE: $c fail $why"
		tail -n 20 "$dir/console"
		cat "$dir/monitor.out"
		failed=$((failed + 1))
	else
		echo "FREEZE-CYCLE: $c ok"
	fi
	c=$((c + 1))
done
[ "$failed" = 0 ]
