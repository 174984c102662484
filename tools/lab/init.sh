#!/bin/busybox sh
# /init of the nested lab's first-level guest (busybox sh, runs as PID 1).
#
# Built into the initramfs by tools/lab/lab.sh, which also writes /lab/config.
# It mounts the pseudo file systems, loads irqbypass, kvm, ccp and kvm-amd,
# checks /dev/kvm, runs /lab/cmd.sh (or an interactive shell), prints one
# machine-readable result line and powers the machine off.
#
# Lines for lab.sh (each alone on its line, on the serial console):
#   LAB-TIME: <event> <seconds since kernel start>
#   LAB-KVM: <kvm-amd message from the kernel log>
#   LAB-INFO: <CPUs, memory, module parameters>
#   LAB-ERROR: <why the lab itself failed>      (then no LAB-RESULT)
#   LAB-WATCHDOG: <the command still runs shortly before the timeout>
#   LAB-RESULT: <exit status of the command>
# Never exit from here: PID 1 exiting is a kernel panic.

/bin/busybox mkdir -p /proc /sys /dev /tmp /run /root /sbin /usr/bin /usr/sbin
/bin/busybox mount -t proc proc /proc    # --install -s reads /proc/self/exe
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export HOME=/root
export TERM=linux

uptime_s() {
	read -r up _ </proc/uptime
	echo "$up"
}

stamp() {
	echo "LAB-TIME: $1 $(uptime_s)"
}

# Wait until the console has sent everything written so far: poweroff -f does
# not drain the serial port's buffer, and the last lines are the ones that
# matter.  Setting the (unchanged) attributes goes through tcsetattr(TCSADRAIN).
drain_console() {
	settings=$(stty -g </dev/console 2>/dev/null) &&
		stty "$settings" </dev/console 2>/dev/null
}

finish() {
	drain_console
	sync
	poweroff -f
	# Not reached; if it were, panic (panic=-1 reboots, and -no-reboot
	# makes QEMU exit).
	exec /bin/busybox sh -c 'echo LAB-ERROR: poweroff failed; exit 1'
}

lab_error() {
	echo
	echo "LAB-ERROR: $*"
	dmesg | tail -n 30
	finish
}

mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# The kernel gives init /dev/console only if the initramfs has the node (lab.sh
# can make it only as root); devtmpfs has it in any case.
exec </dev/console >/dev/console 2>&1
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
hostname lab
# The heartbeat lab.sh's --silence watch reads (COM2, a file on the host): it
# tells a frozen lab kernel from a command that is only quiet.
# Every second, so that a lost interrupt (lab.sh --kick) costs seconds.
(while :; do
	read -r up _ </proc/uptime
	echo "$up"
	sleep 1
done >/dev/ttyS1 2>/dev/null) &
echo $! >/run/lab-heartbeat.pid
echo    # SeaBIOS leaves its last line open
stamp init

# shellcheck source=/dev/null  # written by lab.sh
. /lab/config

# Module parameters come from the kernel command line as for modprobe, e.g.
# kvm_amd.nested=1 (lab.sh --append); insmod alone would not look there.
read -r cmdline </proc/cmdline
for m in $LAB_MODULES; do
	params=
	for w in $cmdline; do
		case $w in
		"$(echo "$m" | tr - _)".*=*) params="$params ${w#*.}" ;;
		esac
	done
	# shellcheck disable=SC2086  # one word per parameter
	out=$(insmod "/lib/modules/$m.ko" $params 2>&1) ||
		lab_error "insmod $m$params failed: $out"
	[ -z "$params" ] || echo "LAB-INFO: insmod $m$params"
done
stamp modules-loaded

dmesg | grep -E '^\[[ 0-9.]*\] (kvm|kvm_amd|SVM|ccp): ' | sed 's/^\[[ 0-9.]*\] */LAB-KVM: /'
[ -c /dev/kvm ] ||
	lab_error "/dev/kvm is missing after loading $LAB_MODULES (does the CPU model expose svm?)"
echo "LAB-INFO: $(grep -c ^processor /proc/cpuinfo) cpus, $(grep MemTotal /proc/meminfo | tr -s ' ')"
stamp kvm-ready

cd /
if [ "$LAB_MODE" = shell ]; then
	echo "lab: interactive shell; /dev/kvm is ready.  'exit' powers off."
	setsid cttyhack sh -l
	status=$?
else
	# Shortly before lab.sh's timeout kills the machine, show where things
	# hang: blocked tasks and every CPU's backtrace (sysrq w, l).
	wd=
	if [ -n "${LAB_WATCHDOG:-}" ]; then
		(
			sleep "$LAB_WATCHDOG"
			echo "LAB-WATCHDOG: the command is still running after ${LAB_WATCHDOG}s; task dump:"
			ps
			echo 1 >/proc/sys/kernel/sysrq
			echo w >/proc/sysrq-trigger
			echo l >/proc/sysrq-trigger
		) &
		wd=$!
	fi
	# The command runs in a child shell: its 'exit' or a failure under
	# 'set -e' must not end PID 1.
	sh /lab/cmd.sh </dev/null
	status=$?
	[ -z "$wd" ] || kill "$wd" 2>/dev/null
fi
stamp command-done
echo
echo "LAB-RESULT: $status"
finish
