#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot and bad-input tests for `hotvm run`, TAP output.
#
#   boot-tests.sh HOTVM_BINARY [STUB_KERNEL [BZ_STUB]]
#
# HOTVM_BINARY is booted on /dev/kvm with its built-in tiny guest; the
# optional STUB_KERNEL (tests/boot/boot-stub) adds the device tests that the
# stand-in guest drives: debug-exit values, a triple fault, serial sinks.
# The optional BZ_STUB (tests/boot/bz-stub) is a stand-in bzImage that
# checks the zero page of the Linux 64-bit boot protocol.
#
# POSIX sh and busybox tools only: the nested lab runs this inside a busybox
# initramfs.  Nothing here sleeps and hopes: every wait is for an event (a
# process exit, a line on the console) bounded by a generous timeout, because
# this machine's /dev/kvm is a slow software implementation.
#
# Environment: HOTVM_TEST_TIMEOUT seconds per VM run (default 300);
# HOTVM_TEST_BZIMAGE a real Linux bzImage whose header hotvm must accept
# (default: Debian's from the lab cache next to the build, if there; the
# case is skipped without one, and fails when HOTVM_TEST_BZIMAGE names a
# file that is not there: the lab sets it).

. "$(dirname "$0")/../lib.sh"
HOTVM=$1
STUB=${2:-}
BZSTUB=${3:-}
TIMEOUT=${HOTVM_TEST_TIMEOUT:-300}

if [ -z "$HOTVM" ] || [ ! -x "$HOTVM" ]; then
	echo "usage: $0 HOTVM_BINARY [STUB_KERNEL [BZ_STUB]]" >&2
	exit 2
fi

tap_need_kvm

# What this KVM cannot run (tests/kvm_probe.c; unset in the lab: a real KVM).
no_real_mode=
[ -z "${KVM_PROBE:-}" ] || no_real_mode=$("$KVM_PROBE" --real-mode)

tap_tmpdir boot
status=0
out=$tmp/out
err=$tmp/err

# not_ok NAME WHY: the reason, the last VM's exit status and its output.
tap_diag() {
	echo "# (exit status $status)"
	tap_tail "$out" "$err"
}

# vm ARGS...: runs `hotvm ARGS` to completion with stdout in $out, stderr
# in $err; the status in $status.  SIGKILL after $TIMEOUT seconds.
vm() {
	: >"$out"
	: >"$err"
	timeout -s KILL "$TIMEOUT" "$HOTVM" "$@" >"$out" 2>"$err" </dev/null
	status=$?
	# The console may end lines with CRLF.
	tr -d '\r' <"$out" >"$out.lf" && mv "$out.lf" "$out"
}

timed_out() {
	[ "$status" -eq 137 ]
}

# The last "online:" line the guest printed.
last_online() {
	grep '^online: ' "$out" | tail -n 1
}

# signal_vm SIG ARGS...: runs `hotvm run ARGS`, sends SIG once the guest
# prints its "ready" line, and waits for hotvm to exit.
signal_vm() {
	sig=$1
	shift
	fifo=$tmp/console.$n
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	: >"$out"
	: >"$err"
	timeout -s KILL "$TIMEOUT" "$HOTVM" run "$@" >"$fifo" 2>"$err" \
		</dev/null &
	pid=$!
	sent=
	# Reading the console until EOF keeps hotvm from blocking on the pipe;
	# EOF comes when hotvm exits, however it exits.
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$out"
		case $line in
		ready*)
			if [ -z "$sent" ]; then
				sent=1
				kill "-$sig" "$pid"
			fi
			;;
		esac
	done <"$fifo"
	wait "$pid"
	status=$?
	rm -f "$fifo"
	tr -d '\r' <"$out" >"$out.lf" && mv "$out.lf" "$out"
	[ -n "$sent" ]
}

# Tiny ELF images written byte by byte, so the bad-input cases need no
# toolchain: an x86-64 ET_EXEC with one PT_LOAD at 1 MiB and no notes.
byte() {
	# shellcheck disable=SC2059
	printf "\\$(printf %03o "$1")"
}
le16() {
	byte $(($1 & 255))
	byte $((($1 >> 8) & 255))
}
le32() {
	le16 $(($1 & 65535))
	le16 $((($1 >> 16) & 65535))
}
le64() {
	le32 "$1"
	le32 0
}
# elf_no_note FILESZ: 64-byte header, one program header, padding to 128.
elf_no_note() {
	printf '\177ELF'
	byte 2; byte 1; byte 1; byte 0	# 64-bit, LSB, version 1, SysV
	le32 0; le32 0			# padding
	le16 2; le16 62; le32 1		# ET_EXEC, EM_X86_64, EV_CURRENT
	le64 1048576			# e_entry
	le64 64; le64 0			# e_phoff, e_shoff
	le32 0				# e_flags
	le16 64; le16 56; le16 1	# e_ehsize, e_phentsize, e_phnum
	le16 0; le16 0; le16 0		# no sections
	le32 1; le32 5			# PT_LOAD, R+X
	le64 0				# p_offset
	le64 1048576; le64 1048576	# p_vaddr, p_paddr
	le64 "$1"; le64 "$1"		# p_filesz, p_memsz
	le64 4096			# p_align
	le64 0				# pad to 128 bytes
}

# Does this hotvm carry the tiny guest?  `hotvm --version` says.
if "$HOTVM" --version 2>/dev/null | grep -q '^built-in guest: yes'; then
	have_builtin=yes
else
	have_builtin=
fi

echo "# hotvm: $HOTVM; built-in guest: ${have_builtin:-no}; stub: ${STUB:-none}; bzImage stub: ${BZSTUB:-none}"

# --- command line ---------------------------------------------------------

vm --version
if [ "$status" -eq 0 ] && grep -q '^hotvm [0-9]' "$out"; then
	ok "--version"
else
	not_ok "--version" "expected 'hotvm VERSION' and status 0"
fi

vm --help
if [ "$status" -eq 0 ] && grep -q 'run' "$out"; then
	ok "--help lists the commands"
else
	not_ok "--help lists the commands" "expected usage and status 0"
fi

vm run --help
if [ "$status" -eq 0 ] && grep -q -- '--cpus boot=N,max=M' "$out"; then
	ok "run --help describes the options"
else
	not_ok "run --help describes the options" "expected usage and status 0"
fi

vm frobnicate
if [ "$status" -eq 2 ] && grep -q "unknown command 'frobnicate'" "$err"; then
	ok "unknown command"
else
	not_ok "unknown command" "expected status 2 and a message"
fi

# --- booting the tiny guest -----------------------------------------------

for cpus in 1 2 4 8; do
	name="boot=$cpus: all CPUs online, guest exits with success"
	if [ -z "$have_builtin" ]; then
		skip "$name" "this hotvm has no built-in tiny guest"
		continue
	fi
	if [ "$cpus" -eq 1 ]; then
		want="online: 0"
	else
		want="online: 0-$((cpus - 1))"
	fi
	vm run --cpus "boot=$cpus,max=$((cpus + 2))" --cmdline exit
	if timed_out; then
		not_ok "$name" "no exit within ${TIMEOUT}s"
	elif [ "$status" -ne 1 ]; then
		not_ok "$name" "expected status 1 (guest success)"
	elif [ "$(last_online)" != "$want" ]; then
		not_ok "$name" "last online line is '$(last_online)', expected '$want'"
	elif ! grep -q '^ready' "$out"; then
		not_ok "$name" "no 'ready' line"
	else
		ok "$name"
	fi
done

# Signals: clean shutdown with status 0 once the guest is up.
if [ -n "$have_builtin" ]; then
	sigkernel=
elif [ -n "$STUB" ]; then
	sigkernel=$STUB
fi
for sig in TERM INT; do
	name="SIG$sig after ready: status 0"
	if [ -z "$have_builtin" ] && [ -z "$STUB" ]; then
		skip "$name" "no guest to boot"
		continue
	fi
	if signal_vm "$sig" ${sigkernel:+--kernel "$sigkernel"} \
		--cpus boot=4,max=8; then
		if [ "$status" -eq 0 ]; then
			ok "$name"
		else
			not_ok "$name" "expected status 0"
		fi
	else
		not_ok "$name" "the guest never printed 'ready'"
	fi
done

# --- devices, driven by the stand-in guest ---------------------------------

if [ -n "$STUB" ]; then
	vm run --kernel "$STUB" --cmdline exit
	if [ "$status" -eq 1 ] && grep -q '^ready' "$out"; then
		ok "stub: debug-exit 0 gives status 1"
	else
		not_ok "stub: debug-exit 0 gives status 1" "unexpected result"
	fi

	vm run --kernel "$STUB" --cmdline fail
	if [ "$status" -eq 3 ]; then
		ok "stub: debug-exit 1 gives status 3"
	else
		not_ok "stub: debug-exit 1 gives status 3" "unexpected status"
	fi

	vm run --kernel "$STUB" --cmdline "echo the command line arrives"
	if [ "$status" -eq 1 ] &&
		grep -q '^echo the command line arrives$' "$out"; then
		ok "stub: start_info cmdline reaches the guest"
	else
		not_ok "stub: start_info cmdline reaches the guest" "no echo"
	fi

	# A triple fault resets the machine, as on hardware: the stub
	# faults again at every boot; --no-reboot ends it instead.  Not on a
	# KVM without real mode (KVM_PROBE); lab-boot runs them.
	if [ -n "$no_real_mode" ]; then
		skip "stub: a triple fault with --no-reboot gives status 4 and a message" "$no_real_mode"
		skip "stub: a triple fault resets the VM" "$no_real_mode"
	else
		vm run --kernel "$STUB" --cmdline trip --no-reboot
		if [ "$status" -eq 4 ] && grep -q '^hotvm: the VM failed.*triple fault' "$err"; then
			ok "stub: a triple fault with --no-reboot gives status 4 and a message"
		else
			not_ok "stub: a triple fault with --no-reboot gives status 4 and a message" \
				"expected status 4"
		fi
		: >"$err"
		timeout -s TERM 5 "$HOTVM" run --kernel "$STUB" --cmdline trip \
			>/dev/null 2>"$err" </dev/null
		status=$?
		resets=$(grep -c 'resetting the VM (guest-reset)' "$err")
		if [ "$status" -eq 0 ] && [ "$resets" -ge 2 ]; then
			ok "stub: a triple fault resets the VM ($resets resets in 5 s, then SIGTERM: status 0)"
		else
			not_ok "stub: a triple fault resets the VM" \
				"status $status, $resets resets"
		fi
	fi

	vm run --kernel "$STUB" --cmdline exit --serial "file:$tmp/console"
	if [ "$status" -eq 1 ] && [ ! -s "$out" ] &&
		grep -q '^ready' "$tmp/console"; then
		ok "stub: --serial file: writes the console to the file"
	else
		not_ok "stub: --serial file: writes the console to the file" \
			"console not in the file"
	fi

	vm run --kernel "$STUB" --cmdline exit --serial none
	if [ "$status" -eq 1 ] && [ ! -s "$out" ]; then
		ok "stub: --serial none discards the console"
	else
		not_ok "stub: --serial none discards the console" "output seen"
	fi

	printf 'initrd contents\n' >"$tmp/initrd"
	vm run --kernel "$STUB" --cmdline exit --initrd "$tmp/initrd" \
		--memory 64M --cpus boot=8,max=8
	if [ "$status" -eq 1 ]; then
		ok "stub: --initrd, --memory, 8 vCPUs"
	else
		not_ok "stub: --initrd, --memory, 8 vCPUs" "unexpected status"
	fi
fi

# --- the Linux 64-bit boot protocol, driven by the stand-in bzImage --------

# patch FILE OFFSET BYTE: a copy of the stub with one header byte changed.
patch() {
	cp "$BZSTUB" "$1" &&
		byte "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

if [ -n "$BZSTUB" ]; then
	vm run --kernel "$BZSTUB" --cmdline exit
	if [ "$status" -eq 1 ] && grep -q '^ready' "$out"; then
		ok "bzImage stub: zero page checked, debug-exit 0 gives status 1"
	else
		not_ok "bzImage stub: zero page checked, debug-exit 0 gives status 1" \
			"unexpected result"
	fi

	vm run --kernel "$BZSTUB" --cmdline fail
	if [ "$status" -eq 3 ]; then
		ok "bzImage stub: debug-exit 1 gives status 3"
	else
		not_ok "bzImage stub: debug-exit 1 gives status 3" "unexpected status"
	fi

	vm run --kernel "$BZSTUB" --cmdline "echo the zero page command line"
	if [ "$status" -eq 1 ] &&
		grep -q '^echo the zero page command line$' "$out"; then
		ok "bzImage stub: cmd_line_ptr reaches the kernel"
	else
		not_ok "bzImage stub: cmd_line_ptr reaches the kernel" "no echo"
	fi

	printf 'initrd contents\n' >"$tmp/bz-initrd"
	vm run --kernel "$BZSTUB" --cmdline exit --initrd "$tmp/bz-initrd" \
		--memory 64 --cpus boot=4,max=4
	if [ "$status" -eq 1 ]; then
		ok "bzImage stub: --initrd, --memory 64 (MiB), 4 vCPUs"
	else
		not_ok "bzImage stub: --initrd, --memory 64 (MiB), 4 vCPUs" \
			"unexpected status"
	fi

	patch "$tmp/bz-old" $((0x206)) 11	# protocol 2.11
	patch "$tmp/bz-32" $((0x236)) 0		# no XLF_KERNEL_64
	patch "$tmp/bz-sects" $((0x1f1)) 100	# setup_sects
	patch "$tmp/bz-big" $((0x263)) 64	# init_size 1 GiB
fi

# A real Linux bzImage: its header must be accepted and the machine built
# and started (it cannot boot on a software KVM; the lab boots it).
linux_bz=${HOTVM_TEST_BZIMAGE:-}
if [ -z "$linux_bz" ]; then
	for f in "$(dirname "$HOTVM")"/../lab-cache/extract/linux-image-*/boot/vmlinuz-*; do
		[ -f "$f" ] && linux_bz=$f
	done
fi
name="Linux bzImage: header accepted, boot vCPU started, SIGTERM stops it"
if [ -n "${HOTVM_TEST_BZIMAGE:-}" ] && [ ! -f "$linux_bz" ]; then
	: >"$out"
	: >"$err"
	status=0
	not_ok "$name" "HOTVM_TEST_BZIMAGE=$linux_bz: no such file"
elif [ -z "$linux_bz" ]; then
	skip "$name" "no Linux bzImage (set HOTVM_TEST_BZIMAGE)"
else
	sock=$tmp/linux.sock
	: >"$out"
	: >"$err"
	timeout -s KILL "$TIMEOUT" "$HOTVM" run --kernel "$linux_bz" \
		--memory 512M --cmdline "console=ttyS0" --serial none \
		--api-socket "$sock" >"$out" 2>"$err" </dev/null &
	pid=$!
	# The API socket answers once the boot vCPU runs (after hotplug_boot).
	up=
	tries=0
	while [ "$tries" -lt "$TIMEOUT" ] && kill -0 "$pid" 2>/dev/null; do
		if "$HOTVM" cpu list --api-socket "$sock" --timeout 5 \
			>/dev/null 2>&1; then
			up=1
			break
		fi
		tries=$((tries + 1))
		sleep 1
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	status=$?
	if [ -z "$up" ]; then
		not_ok "$name" "the API socket never answered"
	elif [ "$status" -ne 0 ] || [ -s "$err" ]; then
		not_ok "$name" "expected status 0 and nothing on stderr"
	else
		ok "$name"
	fi
fi

# --- bad input: a clear message, status 2, nothing left behind -------------

elf_no_note 128 >"$tmp/nonote.elf"
head -c 100 "$tmp/nonote.elf" >"$tmp/trunc-phdr.elf"
elf_no_note 4096 >"$tmp/trunc-seg.elf"
printf 'this is not a kernel\n' >"$tmp/text"
mkdir "$tmp/dir"
: >"$tmp/empty"
printf 'secret' >"$tmp/unreadable"
chmod 000 "$tmp/unreadable"

# A kernel that passes every check before the one under test.
if [ -n "$have_builtin" ]; then
	good=
elif [ -n "$STUB" ]; then
	good=$STUB
else
	good=$tmp/nonote.elf
fi

# bad NAME PATTERN ARGS...: `hotvm run ARGS` must fail with status 2 and a
# "hotvm: " message matching PATTERN, leave no process and create no file.
bad() {
	name=$1
	pattern=$2
	shift 2
	rm -f "$tmp/serial"
	vm run --serial "file:$tmp/serial" "$@"
	if [ "$status" -ne 2 ]; then
		not_ok "bad input: $name" "expected status 2"
	elif ! grep -q "^hotvm: .*$pattern" "$err"; then
		not_ok "bad input: $name" "message does not match '$pattern'"
	elif [ -e "$tmp/serial" ]; then
		not_ok "bad input: $name" "the console file was left behind"
	else
		ok "bad input: $name"
	fi
}

bad "missing kernel" "No such file" --kernel "$tmp/does-not-exist"
if [ "$(id -u)" -ne 0 ]; then
	bad "unreadable kernel" "Permission denied" --kernel "$tmp/unreadable"
else
	skip "bad input: unreadable kernel (mode 000)" "root reads anything"
fi
bad "kernel is a directory" "not a regular file" --kernel "$tmp/dir"
bad "empty kernel" "empty" --kernel "$tmp/empty"
bad "kernel is not ELF" "not an ELF" --kernel "$tmp/text"
bad "ELF without a PVH note" "no PVH entry note" --kernel "$tmp/nonote.elf"
bad "truncated ELF (program headers)" "truncated" \
	--kernel "$tmp/trunc-phdr.elf"
bad "truncated ELF (segment data)" "truncated" --kernel "$tmp/trunc-seg.elf"
bad "missing initrd" "initrd.*No such file" ${good:+--kernel "$good"} \
	--initrd "$tmp/does-not-exist"
# Not regular files: refused at once; opening a FIFO must not wait for a
# writer (it used to block with the stop signals blocked: only SIGKILL).
mkfifo "$tmp/fifo"
bad "initrd is a FIFO" "initrd.*not a regular file" ${good:+--kernel "$good"} \
	--initrd "$tmp/fifo"
bad "initrd is a device" "initrd.*not a regular file" \
	${good:+--kernel "$good"} --initrd /dev/zero
bad "kernel is a FIFO" "kernel.*not a regular file" --kernel "$tmp/fifo"
bad "boot > max" "greater than max" ${good:+--kernel "$good"} \
	--cpus boot=4,max=2
bad "max above KVM's limit" "KVM's limit" ${good:+--kernel "$good"} \
	--cpus boot=1,max=100000
bad "memory too small" "too small" ${good:+--kernel "$good"} --memory 1M
bad "memory not a size" "not a size" ${good:+--kernel "$good"} --memory lots
bad "malformed --cpus (not a number)" "--cpus" --cpus boot=x
bad "malformed --cpus (unknown key)" "unknown or repeated key" \
	--cpus boot=1,cores=2
bad "malformed --cpus (no key)" "--cpus" --cpus 4
bad "malformed --cpus (empty)" "--cpus" --cpus ""
bad "malformed --cpus (boot=0)" "at least 1" --cpus boot=0
bad "--cpus without a value" "needs a value" --cpus
bad "memory 1 (MiB) too small" "too small" ${good:+--kernel "$good"} --memory 1
# A step after api:bind fails: start-up unwinds and the socket goes too.
bad "missing initrd, with --api-socket" "initrd.*No such file" \
	${good:+--kernel "$good"} --initrd "$tmp/does-not-exist" \
	--api-socket "$tmp/unwind.sock"
if [ -e "$tmp/unwind.sock" ]; then
	not_ok "start-up unwinds: no socket left" "$tmp/unwind.sock exists"
else
	ok "start-up unwinds: no socket left"
fi
if [ -n "$BZSTUB" ]; then
	bad "bzImage: boot protocol 2.11" "older than 2.12" --kernel "$tmp/bz-old"
	bad "bzImage: no 64-bit entry" "XLF_KERNEL_64" --kernel "$tmp/bz-32"
	bad "bzImage: setup_sects too big" "setup_sects 100 is too big" \
		--kernel "$tmp/bz-sects"
	head -c 700 "$BZSTUB" >"$tmp/bz-trunc"
	bad "bzImage: truncated" "truncated" --kernel "$tmp/bz-trunc"
	long=$(head -c 300 /dev/zero | tr '\000' x)
	bad "bzImage: --cmdline longer than cmdline_size" "cmdline_size" \
		--kernel "$BZSTUB" --cmdline "$long"
	bad "bzImage: kernel does not fit in RAM" "give more --memory" \
		--kernel "$tmp/bz-big"
fi
bad "unknown option" "unknown argument" --frobnicate
bad "bad --serial" "--serial" --serial tty

# --- the kernel file under a racing writer --------------
# hotvm reads the image once into private memory and checks and loads only
# that copy.  Another process rewriting the file in place, truncating it
# and writing a hostile p_paddr into it meanwhile may make a start fail
# with a reason (status 2), or boot the image whole; hotvm must never end
# by a signal (SIGBUS from a truncated mapping, SIGSEGV from a copy to an
# unchecked address) nor write outside guest RAM (that, too, ends hotvm
# by a signal, or in the ASan build with a report and status 1 before any
# "ready").  --no-reboot: a run that went wrong ends instead of resetting.
name="racing writer: every start boots the image or refuses it with a reason"
if [ -z "$STUB" ]; then
	skip "$name" "no stub kernel"
else
	race=$tmp/race.elf
	# The stub with byte 7 of each program header's p_paddr set: a
	# segment at 0x40000000_00100000, far outside guest RAM.
	cp "$STUB" "$tmp/hostile.elf"
	for off in 95 151; do
		byte 64 | dd of="$tmp/hostile.elf" bs=1 seek=$off conv=notrunc \
			2>/dev/null
	done
	cp "$STUB" "$race"
	size=$(wc -c <"$STUB")
	# Whole for most of the time (rewritten in place, unchanged), then
	# hostile in place, truncated to half, emptied, copied back.
	(
		while :; do
			for i in 1 2 3; do
				dd if="$STUB" of="$race" conv=notrunc 2>/dev/null
			done
			dd if="$tmp/hostile.elf" of="$race" conv=notrunc 2>/dev/null
			dd if="$STUB" of="$race" conv=notrunc 2>/dev/null
			head -c $((size / 2)) "$STUB" >"$race"
			: >"$race"
			cat "$STUB" >"$race"
		done
	) &
	writer=$!
	booted=0
	refused=0
	wrong=
	i=0
	while [ "$i" -lt 40 ]; do
		i=$((i + 1))
		vm run --kernel "$race" --cmdline exit --no-reboot
		if [ "$status" -eq 1 ] && grep -q '^ready' "$out"; then
			booted=$((booted + 1))
		elif [ "$status" -eq 2 ] && grep -q "^hotvm: kernel '" "$err"; then
			refused=$((refused + 1))
		else
			wrong="$wrong $status:$(grep -m 1 '^hotvm:\|ERROR\|Sanitizer' "$err" | cut -c 1-120)"
		fi
	done
	kill "$writer"
	wait "$writer" 2>/dev/null
	echo "# racing writer: $i starts, $booted booted, $refused refused with a reason"
	if [ -n "$wrong" ]; then
		not_ok "$name" "other outcomes (status:message):$wrong"
	elif [ $((booted + refused)) -ne "$i" ]; then
		not_ok "$name" "$booted + $refused of $i starts accounted for"
	else
		ok "$name"
	fi
fi

# No hotvm started by this script may still be running.
left=
for f in /proc/[0-9]*/cmdline; do
	case "$(tr '\000' ' ' <"$f" 2>/dev/null)" in
	"$HOTVM "*"$tmp"*) left="$left ${f#/proc/}" ;;
	esac
done
if [ -z "$left" ]; then
	ok "no hotvm process left behind"
else
	status=0
	not_ok "no hotvm process left behind" "still running:$left"
fi

tap_end
