#!/usr/bin/env bash
# The nested lab: run a command as root on a real KVM inside QEMU/TCG.
#
# QEMU's TCG with -cpu max exposes SVM with nested paging, so a Debian kernel
# booted under it loads kvm-amd and its /dev/kvm is a real KVM (unlike this
# machine's software /dev/kvm).  See docs/design.md §13.  Run with --help.

set -euo pipefail

prog=lab.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)

# Exit statuses of the lab itself.  Anything else is the inner command's.
readonly EX_USAGE=2        # bad options
readonly EX_HOST=120       # host side failed: tools, download, extraction, initramfs
readonly EX_GUEST=121      # guest booted but the lab failed in it (kvm-amd, /dev/kvm)
readonly EX_NORESULT=122   # no result line: kernel panic, QEMU error, guest died
readonly EX_TIMEOUT=124    # --timeout expired; QEMU was killed

readonly MODULES="irqbypass kvm ccp kvm-amd"   # load order
# The Linux guest's (--linux-guest): the ACPI power button as an input
# device, for busybox acpid (tools/lab/guest/init).
readonly GUEST_MODULES="evdev button virtio_ring virtio virtio_mmio virtio_blk virtio_console"
# The lab's own, with --disk: virtio-blk over PCI (the image is /dev/vda).
readonly DISK_MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk"
# The lab's own, with --with-net: taps (/dev/net/tun) and a bridge for them.
readonly NET_MODULES="tun llc stp bridge"

usage() {
	cat <<EOF
Usage: $prog [OPTION]...

Boot Debian's kernel (linux-image-amd64) and busybox (busybox-static) under
  qemu-system-x86_64 -accel tcg -M q35 -cpu max -m 2048 -smp N
load irqbypass, kvm, ccp and kvm-amd, check that /dev/kvm exists, run a
command as root under busybox sh, print 'LAB-RESULT: <status>' on the serial
console and power off.  $prog exits with the command's status.

What to run (default: nothing, only boot and check /dev/kvm):
  --run 'COMMAND'     run COMMAND with busybox sh
  --script FILE       run FILE with busybox sh
  --shell             interactive shell on this terminal instead (for humans;
                      'exit' or Ctrl-A x ends it; no --timeout)

What to put in the initramfs (besides busybox, /init and the modules):
  --hotvm PATH        the hotvm binary, as /bin/hotvm (same as --bin PATH:/bin/hotvm)
  --bin SRC[:DEST]    an executable and the shared libraries and loader that
                      ldd lists for it; DEST defaults to /bin/\$(basename SRC).
                      Repeatable.
  --add SRC:DEST      a file or directory (copied following symlinks). Repeatable.
  --linux-guest       a Linux guest for hotvm (or QEMU) to boot inside:
                      /lab/linux/vmlinux (PVH entry), /lab/linux/bzImage
                      (the same kernel as the lab's own) and
                      /lab/linux/initrd.gz (busybox, tools/lab/guest/init:
                      prints 'online: <cpulist>' and 'ready', onlines
                      hot-added CPUs as a udev rule does, acts on the ACPI
                      power button with acpid).  Adds ~20 MB.
  --disk IMAGE        a raw disk image for the lab itself, /dev/vda there
                      (virtio-blk-pci; the lab loads virtio_pci and
                      virtio_blk), for hotvm inside to open (--disk
                      path=/dev/vda).  The guest's writes go to a temporary
                      overlay (QEMU's snapshot=on): IMAGE is not written.
                      tools/debian-image.sh builds a Debian 12 image.
  --with-qemu         this host's qemu-system-x86_64 (at its own path, where it
                      finds its firmware) and its firmware (/usr/share/qemu,
                      /usr/share/seabios): 'qemu-system-x86_64 -accel kvm
                      -cpu host' works inside.  Adds ~20 MB.
  --with-net          the modules tun, llc, stp and bridge, loaded after
                      kvm-amd: taps (/dev/net/tun) and a bridge inside the
                      lab (busybox tunctl, brctl, ip), for hotvm --net and
                      QEMU's -netdev tap.  The lab itself has no network
                      (-nic none): its traffic stays inside it.
  --with-python       this host's python3 as /usr/bin/python3 and its standard
                      library (without its tests, tkinter, idlelib and the
                      like), with the shared libraries of its C modules: for
                      tests written in Python.  Adds ~15 MB.

The machine:
  --smp N             number of CPUs (default 2; with more than one the lab's
                      kernel now and then locks up under TCG, see --retries;
                      --smp 1 avoids that)
  --mem MB            memory (default 2048)
  --append 'ARGS'     extra kernel command line
  --qemu-arg ARG      extra QEMU argument. Repeatable.
  --accel ACCEL       QEMU's -accel (default tcg), e.g. tcg,thread=single
  --timeout SECONDS   kill QEMU after this long (default 600; per boot)
  --retries N         boot again up to N times when the lab's own kernel locks
                      up (soft lockup, RCU stall, or a console silent for
                      --silence seconds), never when the command fails
                      (default 1)
  --silence SECONDS   a console that prints nothing for this long while the
                      lab kernel's heartbeat (every second on its second serial
                      port) has stopped too means the lab's kernel froze
                      (seen under TCG with no lockup report at all): QEMU is
                      killed and the lab boots again.  A silent command on a
                      live kernel is left to its own deadlines and --timeout
                      (default 0: off)
  --kick SECONDS      when the lab kernel's heartbeat has stopped this long,
                      press a key on its PS/2 keyboard from QEMU's monitor
                      (an interrupt from outside): QEMU 7.2's TCG now and
                      then leaves an interrupt latched in the lab's LAPIC
                      (IRR) undelivered, which freezes the lab; the key's
                      interrupt makes it look at the LAPIC again.  Says so
                      on stderr when the lab runs again after it.
                      (default 4; 0: never)
  --bzimage           boot the compressed vmlinuz through QEMU's Linux loader
                      instead of the vmlinux ELF (PVH entry) extracted from it
                      into the cache, which boots 3-4 s faster under TCG

Other:
  --cache DIR         where downloads and extracted files are kept (default
                      $repo_root/build/lab-cache); a second run fetches nothing
  --fetch-only        only fill the cache (download and extract), then exit
  --quiet             do not stream the serial console; print its tail on failure
  --log FILE          also save the serial console log as FILE
  --keep              keep the work directory (initramfs, log) and say where
  -h, --help          this help

Exit status: the command's, or
  $EX_USAGE   bad options
  $EX_HOST host side failed (missing tool, download, extraction, initramfs)
  $EX_GUEST guest booted but the lab failed in it (a module did not load, no /dev/kvm)
  $EX_NORESULT no result line (kernel panic, lockup on every boot, QEMU error)
  $EX_TIMEOUT timeout: QEMU was killed

Needs: qemu-system-x86 cpio gzip xz-utils apt (apt-get, apt-cache) dpkg (dpkg-deb)
tar util-linux (flock) coreutils (timeout) libc-bin (ldd).  The apt package
lists must exist: run 'apt-get update' once as root on a fresh machine.
EOF
}

say() { printf '%s: %s\n' "$prog" "$*"; }
warn() { printf '%s: warning: %s\n' "$prog" "$*" >&2; }
die() {
	local status=$1
	shift
	printf '%s: error: %s\n' "$prog" "$*" >&2
	exit "$status"
}
usage_error() {
	printf '%s: %s\nTry '\''%s --help'\''.\n' "$prog" "$*" "$prog" >&2
	exit "$EX_USAGE"
}

# ---------------------------------------------------------------- options

cache=$repo_root/build/lab-cache
run_cmd=
script=
shell=0
smp=2
mem=2048
append=
timeout_s=600
retries=1
silence_s=0
kick_s=4
keep=0
quiet=0
fetch_only=0
bzimage=0
linux_guest=0
disk=
with_python=0
with_net=0
log_copy=
bins=()
adds=()
qemu_extra=()
accel=tcg

need_arg() { [[ $# -ge 2 ]] || usage_error "option $1 needs an argument"; }

while [[ $# -gt 0 ]]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--cache) need_arg "$@"; cache=$2; shift ;;
	--hotvm) need_arg "$@"; bins+=("$2:/bin/hotvm"); shift ;;
	--bin) need_arg "$@"; bins+=("$2"); shift ;;
	--add) need_arg "$@"
		[[ $2 == *:/* ]] || usage_error "--add wants SRC:DEST with an absolute DEST, not '$2'"
		adds+=("$2"); shift ;;
	--linux-guest) linux_guest=1 ;;
	--disk) need_arg "$@"
		[[ -f $2 || -b $2 ]] || usage_error "--disk: no such image: $2"
		disk=$(readlink -f "$2"); shift ;;
	--with-qemu)
		q=$(command -v qemu-system-x86_64) || usage_error "--with-qemu: no qemu-system-x86_64 here"
		q=$(readlink -f "$q")
		bins+=("$q:$q")
		for d in /usr/share/qemu /usr/share/seabios; do
			[[ ! -d $d ]] || adds+=("$d:$d")
		done ;;
	--with-python) with_python=1 ;;
	--with-net) with_net=1 ;;
	--run) need_arg "$@"; run_cmd=$2; shift ;;
	--script) need_arg "$@"; script=$2; shift ;;
	--shell) shell=1 ;;
	--smp) need_arg "$@"; smp=$2; shift ;;
	--mem) need_arg "$@"; mem=$2; shift ;;
	--append) need_arg "$@"; append=$2; shift ;;
	--qemu-arg) need_arg "$@"; qemu_extra+=("$2"); shift ;;
	--accel) need_arg "$@"; accel=$2; shift ;;
	--timeout) need_arg "$@"; timeout_s=$2; shift ;;
	--retries) need_arg "$@"; retries=$2; shift ;;
	--silence) need_arg "$@"; silence_s=$2; shift ;;
	--kick) need_arg "$@"; kick_s=$2; shift ;;
	--keep) keep=1 ;;
	--quiet) quiet=1 ;;
	--log) need_arg "$@"; log_copy=$2; shift ;;
	--fetch-only) fetch_only=1 ;;
	--bzimage) bzimage=1 ;;
	*) usage_error "unknown option '$1'" ;;
	esac
	shift
done

[[ $smp =~ ^[1-9][0-9]*$ ]] || usage_error "--smp wants a positive number, not '$smp'"
[[ $mem =~ ^[1-9][0-9]*$ ]] || usage_error "--mem wants megabytes, not '$mem'"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || usage_error "--timeout wants seconds, not '$timeout_s'"
[[ $retries =~ ^[0-9]+$ ]] || usage_error "--retries wants a number, not '$retries'"
[[ $silence_s =~ ^[0-9]+$ ]] || usage_error "--silence wants seconds, not '$silence_s'"
[[ $kick_s =~ ^[0-9]+$ ]] || usage_error "--kick wants seconds, not '$kick_s'"
[[ -n $run_cmd && -n $script ]] && usage_error "give --run or --script, not both"
[[ $shell = 1 && ( -n $run_cmd || -n $script ) ]] && usage_error "--shell runs no command; drop --run/--script"
[[ -z $script || -f $script ]] || usage_error "--script: no such file: $script"

# ---------------------------------------------------------------- tools

missing=()
for t in qemu-system-x86_64 cpio gzip xz apt-get apt-cache dpkg-deb tar flock timeout ldd mkfifo; do
	command -v "$t" >/dev/null || missing+=("$t")
done
[[ ${#missing[@]} -eq 0 ]] || die "$EX_HOST" "missing tools: ${missing[*]}
  install them with: apt-get install qemu-system-x86 cpio gzip xz-utils apt dpkg tar util-linux coreutils libc-bin"

# ---------------------------------------------------------------- work dir, cleanup

work=
qpid=
readerpid=
# Boots of the lab and the reboots among them, for tools/test-report.py:
# one LAB-BOOTS line at every exit that booted.
boots=0
froze=0
lockedup=0
# shellcheck disable=SC2317  # reached through the traps
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	[[ $boots -eq 0 ]] ||
		printf '%s: LAB-BOOTS boots=%d froze=%d lockedup=%d\n' "$prog" \
			"$boots" "$froze" "$lockedup" >&2
	if [[ -n $qpid ]]; then
		kill "$qpid" 2>/dev/null || true   # timeout(1) passes it on to QEMU
		wait "$qpid" 2>/dev/null || true
	fi
	if [[ -n $readerpid ]]; then
		kill "$readerpid" 2>/dev/null || true
		wait "$readerpid" 2>/dev/null || true
	fi
	if [[ -n $work && -d $work ]]; then
		if [[ $keep = 1 ]]; then
			say "work directory kept: $work"
		else
			rm -rf "$work"
		fi
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'warn "interrupted; stopping QEMU"; exit 130' INT
trap 'warn "terminated; stopping QEMU"; exit 143' TERM

# ---------------------------------------------------------------- downloads

mkdir -p "$cache/debs" "$cache/extract" ||
	die "$EX_HOST" "cannot create the cache directory $cache (use --cache DIR)"
cache=$(cd "$cache" && pwd)

# Concurrent labs share the cache: one fetches at a time.
exec 9>"$cache/lock"
flock 9

apt_opts=()
# apt drops to user _apt for downloads, which cannot write into root's
# directories; as root, download as root (that is all the warning is about).
[[ $EUID -eq 0 ]] && apt_opts+=(-o APT::Sandbox::User=root)

# apt-cache field of the candidate version: apt_field PKG FIELD.  Each
# apt-cache call reads all the lists (~0.7 s): the answers are kept in the
# cache until the lists change.
lists_key=
if compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
	lists_key=$(stat -c '%n %Y %s' /var/lib/apt/lists/*_Packages* | cksum | cut -d' ' -f1)
fi
memo=$cache/apt-answers.$lists_key
apt_field() {
	local v=
	if [[ -n $lists_key && -f $memo ]]; then
		v=$(awk -F'\t' -v p="$1" -v f="$2" '$1 == p && $2 == f { print $3; exit }' "$memo")
	fi
	if [[ -z $v ]]; then
		v=$(apt-cache show --no-all-versions "$1" 2>/dev/null | sed -n "s/^$2: //p" | head -n 1)
		if [[ -n $v && -n $lists_key ]]; then
			[[ -f $memo ]] || rm -f "$cache"/apt-answers.*
			printf '%s\t%s\t%s\n' "$1" "$2" "$v" >>"$memo"
		fi
	fi
	printf '%s\n' "$v"
}

# Newest cached .deb whose name matches a glob, or nothing.
newest_cached() {
	local f
	# shellcheck disable=SC2012,SC2086  # $1 is a glob; the names are ours
	f=$(ls -t "$cache"/debs/$1 2>/dev/null | head -n 1) || true
	printf '%s' "$f"
}

# fetch PKG GLOB: prints the path of a .deb of PKG in the cache, downloading the
# candidate version if it is not there yet.  GLOB matches cached .debs that may
# stand in for it when apt cannot help (no lists, no network).
fetch() {
	local pkg=$1 glob=$2 ver deb tmp old
	ver=$(apt_field "$pkg" Version)
	if [[ -z $ver ]]; then
		old=$(newest_cached "$glob")
		[[ -n $old ]] || die "$EX_HOST" "apt-cache does not know the package $pkg.
  The apt package lists are probably missing: run 'apt-get update' as root, then try again."
		warn "apt-cache does not know $pkg; using the cached $(basename "$old")"
		printf '%s\n' "$old"
		return
	fi
	deb=$cache/debs/${pkg}_${ver//:/%3a}_amd64.deb
	if [[ -s $deb ]]; then
		printf '%s\n' "$deb"
		return
	fi
	tmp=$(mktemp -d "$cache/debs/.download.XXXXXX")
	say "downloading $pkg $ver" >&2
	if ! (cd "$tmp" && apt-get "${apt_opts[@]}" -q download "$pkg=$ver") >"$tmp/apt.log" 2>&1 ||
		! compgen -G "$tmp/*.deb" >/dev/null; then
		sed 's/^/  apt-get: /' "$tmp/apt.log" >&2
		rm -rf "$tmp"
		old=$(newest_cached "$glob")
		[[ -n $old ]] || die "$EX_HOST" "'apt-get download $pkg=$ver' failed (output above).
  If the version is gone from the archive, run 'apt-get update' as root; check the network and the apt sources."
		warn "download of $pkg failed; using the cached $(basename "$old")"
		printf '%s\n' "$old"
		return
	fi
	mv "$tmp"/*.deb "$deb"
	rm -rf "$tmp"
	printf '%s\n' "$deb"
}

# linux-image-amd64 is a metapackage: its one dependency is the real kernel.
kpkg=$(apt_field linux-image-amd64 Depends | tr ',|' '\n' | sed 's/^ *//; s/ .*//' |
	grep -m 1 '^linux-image-[0-9]' || true)
if [[ -z $kpkg ]]; then
	kdeb=$(newest_cached 'linux-image-[0-9]*-amd64_*.deb')
	[[ -n $kdeb ]] || die "$EX_HOST" "cannot resolve linux-image-amd64 to a kernel package with apt-cache.
  The apt package lists are probably missing: run 'apt-get update' as root, then try again."
	warn "apt-cache cannot resolve linux-image-amd64; using the cached $(basename "$kdeb")"
else
	kdeb=$(fetch "$kpkg" "$kpkg"'_*.deb')
fi
bbdeb=$(fetch busybox-static 'busybox-static_*.deb')

# extract_into NAME DEB PATTERN...: extracts the members of DEB matching the
# tar patterns into the cache directory NAME once; prints the directory.
extract_into() {
	local deb=$2 dir tmp
	dir=$cache/extract/$1
	shift 2
	if [[ ! -e $dir/.done ]]; then
		say "extracting $(basename "$deb")" >&2
		rm -rf "$dir"
		tmp=$dir.tmp
		rm -rf "$tmp"
		mkdir -p "$tmp"
		# dpkg-deb -x would unpack all 400 MB of modules; take only what is used.
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" --wildcards "$@" ||
			die "$EX_HOST" "cannot extract $* from $deb (corrupt download? delete it and retry)"
		mv "$tmp" "$dir"
		touch "$dir/.done"
	fi
	printf '%s\n' "$dir"
}

# extract DEB PATTERN...: the same, into a directory named after DEB.
extract() {
	extract_into "$(basename "$1" .deb)" "$@"
}

kdir=$(extract "$kdeb" './boot/vmlinuz-*' '*/irqbypass.ko*' '*/kvm.ko*' '*/ccp.ko*' '*/kvm-amd.ko*')
bbdir=$(extract "$bbdeb" '*bin/busybox')

vmlinuz=$(find "$kdir" -path '*/boot/vmlinuz-*' -type f | head -n 1)
[[ -n $vmlinuz ]] || die "$EX_HOST" "no boot/vmlinuz-* in $kdeb"
busybox=$(find "$bbdir" -path '*bin/busybox' -type f | head -n 1)
[[ -n $busybox ]] || die "$EX_HOST" "no bin/busybox in $bbdeb"
kver=${vmlinuz##*/vmlinuz-}

# uncompress_modules DIR MODULE...: the modules extracted in DIR,
# uncompressed (busybox insmod hands the bytes to init_module), into
# DIR/uncompressed once; prints that directory.
uncompress_modules() {
	local dir=$1 m src mdir=$1/uncompressed
	shift
	if [[ ! -e $mdir/.done ]]; then
		rm -rf "$mdir"
		mkdir -p "$mdir"
		for m in "$@"; do
			src=$(find "$dir" -path '*/kernel/*' \( -name "$m.ko" -o -name "$m.ko.*" \) | head -n 1)
			[[ -n $src ]] || die "$EX_HOST" "module $m is not in $kdeb"
			case $src in
			*.ko) cp "$src" "$mdir/$m.ko" ;;
			*.ko.xz) xz -dc "$src" >"$mdir/$m.ko" ;;
			*.ko.gz) gzip -dc "$src" >"$mdir/$m.ko" ;;
			*.ko.zst) command -v zstd >/dev/null || die "$EX_HOST" "$src is zstd-compressed: apt-get install zstd"
				zstd -qdc "$src" >"$mdir/$m.ko" ;;
			*) die "$EX_HOST" "do not know how to decompress $src" ;;
			esac
		done
		touch "$mdir/.done"
	fi
	printf '%s\n' "$mdir"
}
# shellcheck disable=SC2086  # one word per module
mdir=$(uncompress_modules "$kdir" $MODULES)

# The Linux guest's own modules (--linux-guest), in a directory of their own
# so that the lab's extraction above stays as it is.
gmdir=
if [[ $linux_guest = 1 ]]; then
	# A new name when the list grows: an older cache's extraction is done.
	gkdir=$(extract_into "$(basename "$kdeb" .deb)-guest-virtio-console" "$kdeb" \
		'*/drivers/input/evdev.ko*' '*/drivers/acpi/button.ko*' \
		'*/drivers/virtio/virtio.ko*' '*/drivers/virtio/virtio_ring.ko*' \
		'*/drivers/virtio/virtio_mmio.ko*' '*/drivers/block/virtio_blk.ko*' \
		'*/drivers/char/virtio_console.ko*')
	# shellcheck disable=SC2086  # one word per module
	gmdir=$(uncompress_modules "$gkdir" $GUEST_MODULES)
fi

# The lab's virtio-blk-pci modules (--disk), likewise apart.
lab_modules=$MODULES
dmdir=
if [[ -n $disk ]]; then
	dkdir=$(extract_into "$(basename "$kdeb" .deb)-lab-disk" "$kdeb" \
		'*/drivers/virtio/virtio.ko*' '*/drivers/virtio/virtio_ring.ko*' \
		'*/drivers/virtio/virtio_pci*.ko*' '*/drivers/block/virtio_blk.ko*')
	# shellcheck disable=SC2086  # one word per module
	dmdir=$(uncompress_modules "$dkdir" $DISK_MODULES)
	lab_modules="$MODULES $DISK_MODULES"
fi

# The lab's tap and bridge modules (--with-net), likewise apart.
nmdir=
if [[ $with_net = 1 ]]; then
	nkdir=$(extract_into "$(basename "$kdeb" .deb)-lab-net" "$kdeb" \
		'*/drivers/net/tun.ko*' '*/net/llc/llc.ko*' '*/net/802/stp.ko*' \
		'*/net/bridge/bridge.ko*')
	# shellcheck disable=SC2086  # one word per module
	nmdir=$(uncompress_modules "$nkdir" $NET_MODULES)
	lab_modules="$lab_modules $NET_MODULES"
fi

# The ELF vmlinux inside the bzImage, for QEMU's PVH boot: under TCG the
# kernel's own decompressor takes ~3.5 s of every boot.  Debian compresses it
# with xz; the kernel's scripts/extract-vmlinux does the same search.
vmlinux=$kdir/vmlinux
if [[ ! -e $kdir/.vmlinux.done ]]; then
	rm -f "$vmlinux"
	for magic in '\xfd7zXZ\x00:xz -dc' '\x1f\x8b\x08:gzip -dc' '\x28\xb5\x2f\xfd:zstd -qdc'; do
		tool=${magic#*:}
		command -v "${tool%% *}" >/dev/null || continue
		# shellcheck disable=SC2013  # offsets are words
		for off in $(LC_ALL=C grep -obUaP "${magic%%:*}" "$vmlinuz" | cut -d: -f1); do
			# The payload is followed by other data: the decompressor complains.
			tail -c +$((off + 1)) "$vmlinuz" | $tool >"$vmlinux" 2>/dev/null || true
			[[ $(head -c 4 "$vmlinux" 2>/dev/null) == $'\x7fELF' ]] && break 2
		done
	done
	if [[ $(head -c 4 "$vmlinux" 2>/dev/null) == $'\x7fELF' ]] &&
		{ ! command -v readelf >/dev/null || readelf -n "$vmlinux" | grep -q '(0x00000012)'; }; then
		: # has the PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY, 18)
	else
		rm -f "$vmlinux"
		warn "cannot extract a PVH vmlinux from $vmlinuz; booting the bzImage (3-4 s slower)"
	fi
	touch "$kdir/.vmlinux.done"
fi

exec 9>&-   # cache lock

if [[ $fetch_only = 1 ]]; then
	say "cache ready in $cache: kernel $kver ($(basename "$kdeb")), $(basename "$bbdeb")"
	exit 0
fi

# ---------------------------------------------------------------- initramfs

work=$(mktemp -d "${TMPDIR:-/tmp}/hotvm-lab.XXXXXX")
root=$work/root
mkdir -p "$root"/{bin,dev,etc,lab,lib/modules,proc,root,sys,tmp}
install -m 0755 "$busybox" "$root/bin/busybox"
install -m 0755 "$here/init.sh" "$root/init"
for m in $MODULES; do
	cp "$mdir/$m.ko" "$root/lib/modules/$m.ko"
done
for m in ${dmdir:+$DISK_MODULES}; do
	cp "$dmdir/$m.ko" "$root/lib/modules/$m.ko"
done
for m in ${nmdir:+$NET_MODULES}; do
	cp "$nmdir/$m.ko" "$root/lib/modules/$m.ko"
done
# The kernel opens /dev/console for init before devtmpfs is mounted.
[[ $EUID -eq 0 ]] && mknod -m 0600 "$root/dev/console" c 5 1

libdirs=()
# add_bin SRC[:DEST]
add_bin() {
	local spec=$1 src dest lib
	src=${spec%%:*}
	dest=${spec#*:}
	[[ $spec == *:* ]] || dest=/bin/$(basename "$src")
	[[ $dest == /* ]] || die "$EX_USAGE" "--bin $spec: DEST must be an absolute path"
	[[ -f $src && -x $src ]] || die "$EX_HOST" "--bin/--hotvm: not an executable file: $src"
	install -D -m 0755 "$src" "$root$dest"
	# 'not a dynamic executable' (static): nothing more to copy.
	ldd "$src" >/dev/null 2>&1 || return 0
	local libs
	libs=$(ldd "$src") || die "$EX_HOST" "ldd $src failed"
	if grep -q 'not found' <<<"$libs"; then
		die "$EX_HOST" "shared libraries of $src are missing on this host:
$(grep 'not found' <<<"$libs")"
	fi
	while read -r lib; do
		[[ -n $lib ]] || continue
		if [[ ! -e $root$lib ]]; then
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		fi
		libdirs+=("$(dirname "$lib")")
	done < <(awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }' <<<"$libs")
}
for b in "${bins[@]}"; do add_bin "$b"; done

# python3 finds its library from where it sits, so it keeps its own path
# (python3 may be a wrapper, such as pyenv's: ask the interpreter itself).
if [[ $with_python = 1 ]]; then
	command -v python3 >/dev/null || die "$EX_HOST" "--with-python: no python3 here"
	read -r py pylib < <(python3 -c 'import sys, sysconfig
print(sys.executable, sysconfig.get_path("stdlib"))') ||
		die "$EX_HOST" "--with-python: python3 cannot name itself and its library"
	py=$(readlink -f "$py")
	add_bin "$py:$py"
	mkdir -p "$root/usr/bin"
	[[ $py == /usr/bin/python3 ]] || ln -sf "$py" "$root/usr/bin/python3"
	mkdir -p "$root$pylib"
	tar -C "$pylib" --exclude=test --exclude=tests --exclude=idlelib \
		--exclude=tkinter --exclude=turtledemo --exclude=ensurepip \
		--exclude=lib2to3 --exclude=pydoc_data --exclude='config-*' \
		--exclude=site-packages --exclude=dist-packages \
		--exclude=__pycache__ -cf - . | tar -C "$root$pylib" -xf - ||
		die "$EX_HOST" "--with-python: cannot copy $pylib"
	# Its C modules' libraries (libexpat for xml, libffi, ...).
	for so in "$root$pylib"/lib-dynload/*.so; do
		[[ -e $so ]] || continue
		ldd "$so" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
			while read -r lib; do
				[[ -e $root$lib ]] && continue
				mkdir -p "$root$(dirname "$lib")"
				cp -L "$lib" "$root$lib"
				echo "$(dirname "$lib")" >>"$work/pylibdirs"
			done
	done
	[[ ! -f $work/pylibdirs ]] || mapfile -t -O "${#libdirs[@]}" libdirs <"$work/pylibdirs"
fi

for a in "${adds[@]}"; do
	src=${a%%:*}
	dest=${a#*:}
	[[ -e $src ]] || die "$EX_HOST" "--add $a: no such file or directory: $src"
	mkdir -p "$root$(dirname "$dest")"
	# Symlinks are followed: their targets are not in the initramfs.
	cp -RL --preserve=mode,timestamps "$src" "$root$dest"
done

# guest_bin SRC: SRC and the libraries ldd lists for it, at the same paths,
# into the guest's initramfs (Debian 12 here and in the guest's kernel's
# user space alike).
guest_bin() {
	local src=$1 lib
	install -D -m 0755 "$src" "$groot$src"
	while read -r lib; do
		[[ -n $lib && ! -e $groot$lib ]] || continue
		mkdir -p "$groot$(dirname "$lib")"
		cp -L "$lib" "$groot$lib"
	done < <(ldd "$src" | awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }')
}

# The guest's own initramfs: busybox and the guest's init, and the QEMU
# guest agent when this host has it (Debian's qemu-guest-agent; the init
# starts it on /dev/ttyS1 with hotvm.agent=1).
if [[ $linux_guest = 1 ]]; then
	[[ -e $vmlinux ]] || die "$EX_HOST" "--linux-guest: no PVH vmlinux could be extracted from $vmlinuz"
	groot=$work/guest
	mkdir -p "$groot"/{bin,dev,proc,sys,tmp} "$root/lab/linux"
	install -m 0755 "$busybox" "$groot/bin/busybox"
	install -m 0755 "$here/guest/init" "$groot/init"
	install -m 0755 "$here/guest/cpu-event" "$groot/bin/cpu-event"
	install -m 0755 "$here/guest/pwrbtn" "$groot/bin/pwrbtn"
	install -m 0755 "$here/guest/agent-ctl" "$groot/bin/agent-ctl"
	install -m 0755 "$here/guest/disk-check" "$groot/bin/disk-check"
	install -m 0755 "$here/guest/agent-liar" "$groot/bin/agent-liar"
	install -D -m 0755 "$here/guest/shutdown" "$groot/sbin/shutdown"
	mkdir -p "$groot/lib/modules"
	for m in $GUEST_MODULES; do
		cp "$gmdir/$m.ko" "$groot/lib/modules/$m.ko"
	done
	[[ -x /usr/sbin/qemu-ga ]] && guest_bin /usr/sbin/qemu-ga
	[[ $EUID -eq 0 ]] && mknod -m 0600 "$groot/dev/console" c 5 1
	(cd "$groot" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1) \
		>"$root/lab/linux/initrd.gz" || die "$EX_HOST" "cannot build the guest's initramfs"
	cp "$vmlinux" "$root/lab/linux/vmlinux"
	cp "$vmlinuz" "$root/lab/linux/bzImage"
fi

if [[ -n $script ]]; then
	cp "$script" "$root/lab/cmd.sh"
elif [[ -n $run_cmd ]]; then
	printf '%s\n' "$run_cmd" >"$root/lab/cmd.sh"
else
	printf 'true\n' >"$root/lab/cmd.sh"
fi

ld_path=$(printf '%s\n' "${libdirs[@]}" | awk 'NF && !seen[$0]++' | paste -sd: -)
{
	printf 'LAB_MODULES=%q\n' "$lab_modules"
	# The guest's watchdog dumps its tasks 20 s before the timeout (init
	# starts ~4 s after QEMU).
	[[ $timeout_s -gt 40 ]] && printf 'LAB_WATCHDOG=%d\n' $((timeout_s - 24))
	printf 'LAB_MODE=%s\n' "$([[ $shell = 1 ]] && echo shell || echo run)"
	# No ld.so.cache in the initramfs: tell the loader where the libraries are.
	[[ -n $ld_path ]] && printf 'export LD_LIBRARY_PATH=%q\n' "$ld_path"
	true
} >"$root/lab/config"

initrd=$work/initrd.gz
(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$initrd" ||
	die "$EX_HOST" "cannot build the initramfs"

# ---------------------------------------------------------------- run

kernel=$vmlinux
[[ $bzimage = 0 && -e $vmlinux ]] || kernel=$vmlinuz

qemu=(qemu-system-x86_64 -accel "$accel" -M q35 -cpu max -m "$mem" -smp "$smp"
	-nographic -vga none -nic none -no-reboot -name 'lab,debug-threads=on'
	-kernel "$kernel" -initrd "$initrd"
	-append "console=ttyS0 quiet panic=-1 softlockup_panic=1 watchdog_thresh=20 $append"
	-serial mon:stdio -serial "file:$work/alive.log"
	-monitor "unix:$work/monitor.sock,server=on,wait=off"
	"${qemu_extra[@]}")
# The disk image, read-only underneath: the guest's writes go to a
# temporary overlay (snapshot=on), so a cached image stays as built and
# concurrent labs can share it.
[[ -z $disk ]] || qemu+=(-drive "file=$disk,if=none,id=labdisk,format=raw,snapshot=on"
	-device virtio-blk-pci,drive=labdisk)

say "kernel $kver ($([[ $kernel = "$vmlinux" ]] && echo 'vmlinux, PVH entry' || echo bzImage)), $(du -h "$initrd" | cut -f1) initramfs, CPUs: $smp, $mem MB, timeout ${timeout_s}s"

if [[ $shell = 1 ]]; then
	# Interactive: QEMU needs this terminal, so it runs in the foreground.
	"${qemu[@]}" || true
	exit 0
fi

log=$work/serial.log
fifo=$work/serial.fifo

# monitor_cmds PAUSE CMD...: QEMU monitor commands, PAUSE seconds apart,
# what they say of the CPUs' registers and the LAPIC (its timer's count,
# IRR, ISR) into $work/monitor.last and on stderr.
monitor_cmds() {
	command -v python3 >/dev/null || return 0
	python3 - "$work/monitor.sock" "$@" <<'PY' 2>&1 | tee "$work/monitor.last" | sed "s/^/$prog: monitor: /" >&2 || true
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
pause = float(sys.argv[2])
def cmd(c):
    s.sendall((c + "\n").encode())
    time.sleep(pause)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
            if len(b) < 65536:
                break
    except socket.timeout:
        pass
    return out.decode(errors="replace")
for c in sys.argv[3:]:
    for l in cmd(c).splitlines():
        if l.startswith(("RIP", "CS ", "CR0", "EFER", "CPU#", "RAX", "HLT")) or "HLT=" in l:
            print(l.strip())
        elif c == "info lapic" and l.startswith(("dumping", "LVTT", "Timer", "ISR", "IRR", "APR", "ESR")):
            print(l.strip())
PY
}

# monitor_dump: where a frozen lab's CPUs are: the registers twice, 2 s
# apart (a CPU that moves spins, one that stays is stuck), so that a freeze
# can be told apart from the next; and the LAPIC each time: a timer that
# has run out with its vector not in IRR never fired (QEMU's timers), one
# in IRR that stays there was never taken (the CPU's interrupt check).
monitor_dump() {
	monitor_cmds 1 "" "info registers -a" "info lapic" "info registers -a" "info lapic"
}

# monitor_lapic: the LAPIC alone, in about half a second: the kick's check.
monitor_lapic() {
	monitor_cmds 0.5 "info lapic"
}

# qemu_threads PID: QEMU's threads (PID is timeout's, QEMU its child) with
# their state, what they wait in and their CPU use, on stderr: a vCPU
# thread spinning while the main loop waits for the big lock is a starved
# main loop, one in ppoll is a main loop that saw no timer due.
qemu_threads() {
	local q
	q=$(pgrep -P "$1" | head -n 1) || return 0
	ps -L -o tid=,comm=,stat=,wchan:24=,pcpu= -p "$q" 2>/dev/null |
		sed "s/^/$prog: thread: /" >&2 || true
}

# monitor_kick: a key press and release on the lab's PS/2 keyboard, from
# QEMU's monitor: an interrupt from outside the lab (IRQ 1 through the
# IOAPIC), whose delivery makes QEMU poll the lab CPU's LAPIC again and
# deliver what it had left latched there (see --kick).
monitor_kick() {
	command -v python3 >/dev/null || return 0
	python3 - "$work/monitor.sock" <<'PY' >/dev/null 2>&1 || true
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"sendkey shift\n")
time.sleep(0.5)
PY
}

# lapic_lost: whether the last monitor_dump found the freeze's mark: the
# LAPIC timer run out (one-shot, count 0) with a vector latched in IRR.
lapic_lost() {
	grep -q 'current_count = 0$' "$work/monitor.last" 2>/dev/null &&
		grep -q '^IRR.*[0-9]' "$work/monitor.last"
}

# lab_resumed BEAT: whether the heartbeat file grows past BEAT bytes
# within 12 s.
lab_resumed() {
	local i
	for i in 1 2 3 4 5 6; do
		sleep 2
		[[ $(stat -c %s "$work/alive.log" 2>/dev/null || echo 0) -gt $1 ]] && return 0
	done
	return 1
}

# watch_silence PID: kills QEMU when the console has not grown for
# --silence seconds and neither has the heartbeat the lab's init writes to
# its second serial port every second (alive.log), and says so in
# $work/frozen.  A silent console with a live heartbeat is the command's
# silence, not a frozen lab: it is said once on stderr, and the command's
# own deadlines and --timeout decide, since booting again would hide a hang.
watch_silence() {
	local pid=$1 size last=-1 quiet_for=0 beat last_beat=-1 beat_quiet=0 said=0
	local kicked=0 lost=0
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		size=$(stat -c %s "$log" 2>/dev/null || echo 0)
		beat=$(stat -c %s "$work/alive.log" 2>/dev/null || echo 0)
		if [[ $size = "$last" ]]; then
			quiet_for=$((quiet_for + 1))
		else
			quiet_for=0
			last=$size
			said=0
		fi
		if [[ $beat = "$last_beat" ]]; then
			beat_quiet=$((beat_quiet + 1))
		else
			if [[ $kicked != 0 && $lost = 1 ]]; then
				warn "the lab's kernel ran again after a key press from the host: its LAPIC had held the timer's interrupt undelivered (heartbeat stopped for ${kicked}s; --kick)"
				: >"$work/rescued"
			elif [[ $kicked != 0 ]]; then
				warn "the lab's heartbeat came back after ${kicked}s (a key press was sent; its LAPIC held nothing undelivered: only slow)"
			fi
			kicked=0
			lost=0
			beat_quiet=0
			last_beat=$beat
		fi
		# A heartbeat late by --kick seconds: kick once per stop, after
		# a look at the LAPIC that tells a lost interrupt from a slow lab.
		if [[ $kick_s -gt 0 && $beat -gt 0 && $kicked = 0 && $beat_quiet -ge $kick_s ]]; then
			kicked=$beat_quiet
			monitor_lapic
			! lapic_lost || lost=1
			monitor_kick
		fi
		[[ $silence_s -gt 0 && $quiet_for -ge $silence_s ]] || continue
		if [[ $beat -gt 0 && $beat_quiet -lt $silence_s ]]; then
			[[ $said = 1 ]] || warn "the console has been silent for ${quiet_for}s, but the lab's kernel is alive (its heartbeat goes on): waiting for the command"
			said=1
			continue
		fi
		qemu_threads "$pid"
		monitor_dump
		# The dump was a monitor command, which wakes QEMU's main loop.
		# A lab that runs again after it was not frozen inside: QEMU's
		# own timers had stalled (seen as a lab kernel idle in hlt with
		# no timer interrupt).  Say so, and keep watching.
		if lab_resumed "$beat"; then
			warn "the lab ran again after a monitor command: QEMU's timers had stalled for ${quiet_for}s, not the lab's kernel"
			quiet_for=0
			beat_quiet=0
			last_beat=-1
			continue
		fi
		echo "$quiet_for" >"$work/frozen"
		kill "$pid" 2>/dev/null || true
		return
	done
}

# boot: one run of QEMU; sets qstatus, t0, t1 and clean (the console without
# CRs and terminal escapes: SeaBIOS and the kernel reset the screen).
boot() {
	rm -f "$fifo"
	mkfifo "$fifo"
	if [[ $quiet = 1 ]]; then
		cat <"$fifo" >"$log" &
	else
		tee "$log" <"$fifo" &
	fi
	readerpid=$!
	# This shell holds the write end while QEMU starts: the reader sees EOF
	# when QEMU exits, and also if QEMU never starts.
	exec 3>"$fifo"
	t0=$(date +%s.%N)
	timeout --kill-after=10 "$timeout_s" "${qemu[@]}" </dev/null >&3 2>&1 &
	qpid=$!
	exec 3>&-
	rm -f "$work/frozen" "$work/rescued" "$work/alive.log"
	watchpid=
	if [[ $silence_s -gt 0 || $kick_s -gt 0 ]]; then
		watch_silence "$qpid" &
		watchpid=$!
	fi
	qstatus=0
	wait "$qpid" || qstatus=$?
	if [[ -n $watchpid ]]; then
		kill "$watchpid" 2>/dev/null || true
		wait "$watchpid" 2>/dev/null || true
	fi
	qpid=
	wait "$readerpid" || true
	readerpid=
	t1=$(date +%s.%N)
	[[ -z $log_copy ]] || cp "$log" "$log_copy"
	clean=$(tr -d '\r' <"$log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g')
}

# The first-level guest's kernel sometimes locks up in KVM's cross-CPU calls
# (creating or destroying a VM) under TCG: softlockup_panic (in the kernel
# command line) turns that into a panic within ~40 s, and the lab boots again
# (--retries): the lockup is the lab's, not the command's.
locked_up() {
	! grep -q 'LAB-RESULT: ' <<<"$clean" &&
		{ [[ -e $work/frozen ]] ||
			grep -q -e 'BUG: soft lockup' -e 'rcu_preempt detected stalls' <<<"$clean"; }
}

# A freeze the kick rescued still stopped the lab for --kick seconds or
# more, and the command's own deadlines (a 20 s hot-add wait, say) may have
# run out inside it: a command that fails after a rescue is the freeze's
# doing as much as its own, so it counts as a freeze and runs again (within
# --retries); one that passes is left to pass, its rescue reported above.
failed_after_rescue() {
	[[ -e $work/rescued ]] &&
		grep -q 'LAB-RESULT: [1-9]' <<<"$clean"
}

attempt=1
while :; do
	boots=$((boots + 1))
	boot
	if { locked_up && [[ -e $work/frozen ]]; } || failed_after_rescue; then
		froze=$((froze + 1))
	elif locked_up; then
		lockedup=$((lockedup + 1))
	fi
	if { ! locked_up && ! failed_after_rescue; } || [[ $attempt -gt $retries ]]; then
		break
	fi
	if failed_after_rescue; then
		warn "the command failed after a freeze the key press rescued (attempt $attempt): its deadlines ran inside the freeze"
	elif [[ -e $work/frozen ]]; then
		warn "the lab's kernel froze (attempt $attempt): its console printed nothing for ${silence_s}s and its heartbeat stopped"
	else
		warn "the lab's kernel locked up (attempt $attempt): 'BUG: soft lockup' or an RCU stall on its console"
	fi
	if [[ $quiet = 1 ]]; then
		tail -n 40 <<<"$clean" | sed 's/^/  | /' >&2
	fi
	warn "booting the lab again"
	attempt=$((attempt + 1))
done

show_tail() {
	if [[ $quiet = 1 ]]; then
		printf '%s: last lines of the serial console:\n' "$prog" >&2
		tail -n 40 <<<"$clean" | sed 's/^/  | /' >&2
	fi
}

# ---------------------------------------------------------------- report

kvm_lines=$(sed -n 's/^.*LAB-KVM: //p' <<<"$clean")
if [[ -n $kvm_lines ]]; then
	while read -r l; do say "kvm-amd: $l"; done <<<"$kvm_lines"
	grep -q 'Nested Virtualization enabled' <<<"$kvm_lines" ||
		warn "kvm-amd did not report 'Nested Virtualization enabled'"
	grep -q 'Nested Paging enabled' <<<"$kvm_lines" ||
		warn "kvm-amd did not report 'Nested Paging enabled'"
fi

ltime() { sed -n "s/^.*LAB-TIME: $1 //p" <<<"$clean" | tail -n 1; }
t_init=$(ltime init)
t_ready=$(ltime kvm-ready)
t_done=$(ltime command-done)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
if [[ -n $t_init && -n $t_ready && -n $t_done ]]; then
	# Wall time from starting QEMU to /dev/kvm ready = total wall time minus
	# what ran after it (the command; power-off is a few ms).
	awk -v w="$wall" -v i="$t_init" -v r="$t_ready" -v d="$t_done" 'BEGIN {
		printf "%s: times: QEMU start to /dev/kvm ready %.2fs (kernel: init at %.2fs, modules loaded %.2fs later), command %.2fs, total %.2fs\n",
			"'"$prog"'", w - (d - r), i, r - i, d - r, w }'
else
	say "total time ${wall}s"
fi

if [[ $qstatus -eq 124 || $qstatus -eq 137 ]]; then
	show_tail
	die "$EX_TIMEOUT" "timeout: the lab did not finish within ${timeout_s}s; QEMU was killed.
  Raise --timeout, or look at the serial console above for where it hung."
fi

result=$(sed -n 's/^.*LAB-RESULT: \([0-9][0-9]*\)$/\1/p' <<<"$clean" | tail -n 1)
if [[ -z $result ]]; then
	show_tail
	lab_error=$(sed -n 's/^.*LAB-ERROR: //p' <<<"$clean" | head -n 1)
	[[ -z $lab_error ]] || die "$EX_GUEST" "the lab failed inside the guest: $lab_error"
	if locked_up; then
		die "$EX_NORESULT" "the lab's kernel locked up on each of $attempt boot(s) (serial console above).
  With --smp > 1 that happens now and then under TCG (KVM's cross-CPU calls); --smp 1 avoids it."
	fi
	if grep -q 'Kernel panic' <<<"$clean"; then
		die "$EX_NORESULT" "the guest kernel panicked before the result line (serial console above)"
	fi
	die "$EX_NORESULT" "no LAB-RESULT line on the serial console (QEMU exit status $qstatus); see above"
fi

if [[ $result -ne 0 ]]; then
	show_tail
	say "FAIL: the command exited with status $result"
else
	say "PASS: the command exited with status 0"
fi
exit "$result"
