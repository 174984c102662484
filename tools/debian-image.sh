#!/usr/bin/env bash
# Builds a raw Debian 12 disk image for hotvm's lab with mmdebstrap:
# systemd, udev, qemu-guest-agent and the same Debian kernel package the
# lab runs (tools/lab/lab.sh), its initramfs made by Debian's own
# initramfs-tools with the virtio modules, an ext4 root made by mke2fs -d
# (no loop mount).  Cached, keyed by the package list, the kernel's version
# and this script's content: a second run builds nothing.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
repo_root=$(cd "$here/.." && pwd)

usage() {
	cat <<EOF
Usage: $prog [--cache DIR] [--mirror URL] [--print]

Builds (or finds in the cache) a raw Debian 12 (bookworm) image holding
systemd, udev, qemu-guest-agent and Debian's kernel (linux-image-amd64 as
apt-cache resolves it here: the lab's own kernel), and prints the directory
that holds it:

  DIR/disk.raw     ext4, the whole disk (no partition table): root=/dev/vda
  DIR/vmlinuz      the image's kernel (/boot/vmlinuz-VERSION)
  DIR/initrd.img   its initramfs (initramfs-tools, virtio_mmio, virtio_blk)
  DIR/kernel-version

Boot it with: console=ttyS0 root=/dev/vda.  Root logs in on ttyS0 without a
password; the unit hotvm-ready prints 'ready: multi-user.target' on the
console once systemd reaches that target.  hotvm.agent=com2 on the command
line starts qemu-ga on /dev/ttyS1 (hotvm --agent's COM2 channel; Debian's
own unit waits for a virtio port), hotvm.agent=vsock a second qemu-ga on
vsock port 1024, any CID (hotvm --vsock cid=N --agent-channel vsock).
socat is there for the vsock tests.  No network is configured: iproute2 and iperf3 are
there for hotvm --net's tests and benchmark.

  --cache DIR    the lab cache (default: $repo_root/build/lab-cache);
                 the image goes under DIR/debian-image/KEY
  --mirror URL   Debian mirror (default: http://deb.debian.org/debian);
                 bookworm, bookworm-updates, and bookworm-security from
                 URL-security (the lab's kernel is often a security update)
  --print        only print the directory the image would have; exit 1 if
                 it is not built

Needs (as root): mmdebstrap, e2fsprogs (mke2fs -d), apt (tools/setup.sh).
EOF
}

cache=$repo_root/build/lab-cache
mirror=http://deb.debian.org/debian
print_only=0
while [[ $# -gt 0 ]]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--cache) cache=$2; shift ;;
	--mirror) mirror=$2; shift ;;
	--print) print_only=1 ;;
	*) echo "$prog: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done

die() {
	echo "$prog: error: $*" >&2
	exit 1
}
say() { echo "$prog: $*" >&2; }

# The kernel: linux-image-amd64 is a metapackage; its dependency is the
# real package, resolved as lab.sh resolves it, so the image's kernel is
# the one the lab boots hotvm's Linux guests with.
kpkg=$(apt-cache show --no-all-versions linux-image-amd64 2>/dev/null |
	sed -n 's/^Depends: //p' | head -n 1 | tr ',|' '\n' | sed 's/^ *//; s/ .*//' |
	grep -m 1 '^linux-image-[0-9]' || true)
[[ -n $kpkg ]] || die "apt-cache cannot resolve linux-image-amd64: run 'apt-get update' as root"
kver=$(apt-cache show --no-all-versions "$kpkg" | sed -n 's/^Version: //p' | head -n 1)

packages=(
	systemd systemd-sysv udev dbus     # init, device manager, logind's bus
	qemu-guest-agent                    # the agent hotvm talks to
	socat                               # vsock's guest ends in the lab tests
	initramfs-tools kmod e2fsprogs      # the initramfs, fsck.ext4
	fio                                 # tools/bench-debian.sh's disk figures
	iproute2 iperf3                     # --net: the address, the benchmark
	"$kpkg"                             # the lab's kernel
)

# Left out of every package: documentation, translations, and the kernel's
# drivers no VM of hotvm's has (graphics, sound, radios, media, ...).
excludes=(
	'/usr/share/doc/*' '/usr/share/man/*' '/usr/share/info/*'
	'/usr/share/locale/*' '/usr/share/lintian/*'
)
for d in drivers/gpu drivers/media drivers/net/wireless drivers/infiniband \
	drivers/staging drivers/bluetooth drivers/iio drivers/isdn drivers/usb \
	drivers/hid drivers/scsi drivers/ata drivers/mtd drivers/nfc drivers/thunderbolt \
	drivers/platform drivers/hwmon drivers/input/touchscreen drivers/input/joystick \
	drivers/net/ethernet drivers/net/can drivers/net/usb drivers/mmc drivers/md \
	drivers/target drivers/nvme drivers/firewire drivers/comedi drivers/video \
	sound net/wireless net/mac80211 net/bluetooth fs/ocfs2 fs/btrfs fs/xfs \
	fs/nfs fs/nfsd fs/ceph fs/cifs fs/smb fs/gfs2 fs/f2fs fs/jfs fs/ubifs; do
	excludes+=("/lib/modules/*/kernel/$d/*" "/usr/lib/modules/*/kernel/$d/*")
done

# The key: everything that decides what the image holds.
key=$( {
	cat "$0"
	printf '%s\n' "${packages[@]}" "$kpkg=$kver" "$mirror"
} | sha256sum | cut -c1-16)
out=$cache/debian-image/$key

if [[ -e $out/.done ]]; then
	printf '%s\n' "$out"
	exit 0
fi
[[ $print_only = 0 ]] || { printf '%s\n' "$out"; exit 1; }

[[ $EUID -eq 0 ]] || die "building the image needs root (mmdebstrap's root mode, file owners)"
for t in mmdebstrap mke2fs; do
	command -v "$t" >/dev/null || die "no $t: run tools/setup.sh as root"
done

mkdir -p "$cache/debian-image"
exec 9>"$cache/debian-image/lock"
flock 9
if [[ -e $out/.done ]]; then # built by another run meanwhile
	printf '%s\n' "$out"
	exit 0
fi

tmp=$out.tmp
rm -rf "$tmp" "$out"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

# Written before the packages are installed, so that the kernel's own
# postinst builds the initramfs with them: the modules by list (not all
# 'most'), virtio_mmio (found through ACPI, LNRO0005) and virtio_blk loaded
# at once; ext4 for the root; virtio_pci for QEMU's q35, whose virtio-blk
# is a PCI device (tools/bench-debian.sh boots the image on both VMMs).
setup_hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/etc/initramfs-tools/hooks"
printf "MODULES=list\nCOMPRESS=gzip\n" >"$1/etc/initramfs-tools/conf.d/hotvm"
cat >"$1/etc/initramfs-tools/hooks/hotvm" <<"EOF"
#!/bin/sh
[ "$1" = prereqs ] && exit 0
. /usr/share/initramfs-tools/hook-functions
for m in virtio_mmio virtio_pci virtio_blk ext4; do force_load "$m"; done
EOF
chmod 0755 "$1/etc/initramfs-tools/hooks/hotvm"'

# After the packages: fstab, hostname, root's autologin on ttyS0, the
# ready marker, and nothing that waits for a network or clock.
customize_hook='set -e
echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$1/etc/fstab"
echo hotvm-debian >"$1/etc/hostname"
printf "127.0.0.1 localhost\n127.0.1.1 hotvm-debian\n" >"$1/etc/hosts"
chroot "$1" passwd -d root >/dev/null
mkdir -p "$1/etc/systemd/system/serial-getty@ttyS0.service.d"
cat >"$1/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf" <<"EOF"
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --keep-baud 115200,57600,38400,9600 %I $TERM
EOF
cat >"$1/etc/systemd/system/hotvm-ready.service" <<"EOF"
[Unit]
Description=Say on the console that multi-user.target is reached
After=multi-user.target

[Service]
Type=oneshot
StandardOutput=tty
TTYPath=/dev/console
ExecStart=/bin/echo ready: multi-user.target

[Install]
WantedBy=multi-user.target
EOF
# qemu-guest-agent on COM2, the channel of hotvm --agent for guests
# without virtio-console: the unit of the Debian package starts only for
# the virtio port org.qemu.guest_agent.0, so this one starts it by hand,
# and only when the command line asks for it (hotvm.agent=com2).
cat >"$1/etc/systemd/system/hotvm-agent-com2.service" <<"EOF"
[Unit]
Description=QEMU guest agent on COM2 (hotvm --agent without virtio-console)
ConditionKernelCommandLine=hotvm.agent=com2

[Service]
ExecStart=/usr/sbin/qemu-ga -m isa-serial -p /dev/ttyS1
Restart=always

[Install]
WantedBy=multi-user.target
EOF
# A second qemu-guest-agent on vsock port 1024, for hotvm --vsock cid=N
# with --agent-channel vsock (the Debian unit listens on virtio-serial
# only), when the command line asks for it (hotvm.agent=vsock).  It
# binds VMADDR_CID_ANY (4294967295, -1U), so whatever CID hotvm gives
# the guest works.  The vsock transport module is loaded first.
cat >"$1/etc/systemd/system/hotvm-agent-vsock.service" <<"EOF"
[Unit]
Description=QEMU guest agent on vsock port 1024, any CID (hotvm --agent-channel vsock)
ConditionKernelCommandLine=hotvm.agent=vsock

[Service]
ExecStartPre=/sbin/modprobe vmw_vsock_virtio_transport
ExecStart=/usr/sbin/qemu-ga -m vsock-listen -p 4294967295:1024
Restart=always

[Install]
WantedBy=multi-user.target
EOF
chroot "$1" systemctl enable hotvm-ready.service hotvm-agent-com2.service \
	hotvm-agent-vsock.service
chroot "$1" systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
	e2scrub_reap.service fstrim.timer 2>/dev/null || true
rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/cache/apt/archives/*.deb
for f in "$1"/boot/vmlinuz-* "$1"/boot/initrd.img-*; do test -s "$f"; done'

say "building a Debian 12 image with $kpkg $kver (mmdebstrap, a few minutes)"
dpkgopts=()
for e in "${excludes[@]}"; do
	dpkgopts+=(--dpkgopt="path-exclude=$e")
done
mmdebstrap --mode=root --variant=minbase --format=directory \
	--include="$(
		IFS=,
		echo "${packages[*]}"
	)" \
	"${dpkgopts[@]}" \
	--setup-hook="$setup_hook" --customize-hook="$customize_hook" \
	bookworm "$tmp/root" "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
	"deb $mirror-security bookworm-security main" >"$tmp/mmdebstrap.log" 2>&1 || {
	tail -n 40 "$tmp/mmdebstrap.log" >&2
	die "mmdebstrap failed (the log's end above)"
}

# The kernel and initramfs beside the image, for the VMM's --kernel/--initrd.
vmlinuz=$(find "$tmp/root/boot" -name 'vmlinuz-*' | head -n 1)
initrd=$(find "$tmp/root/boot" -name 'initrd.img-*' | head -n 1)
cp "$vmlinuz" "$tmp/vmlinuz"
cp "$initrd" "$tmp/initrd.img"
echo "${vmlinuz##*/vmlinuz-}" >"$tmp/kernel-version"

# ext4 from the directory, no mount: the files' size, a quarter more and
# 64 MiB for the journal and what the VM writes.
used=$(du -sm "$tmp/root" | cut -f1)
size=$((used + used / 4 + 64))
truncate -s "${size}M" "$tmp/disk.raw"
mke2fs -q -t ext4 -L hotvm-root -d "$tmp/root" -F "$tmp/disk.raw" ||
	die "mke2fs -d failed"
rm -rf "$tmp/root"
trap - EXIT
mv "$tmp" "$out"
touch "$out/.done"
say "built $out/disk.raw (${size} MiB, $(du -m "$out/disk.raw" | cut -f1) MiB used) in $(($(date +%s) - start)) s"
printf '%s\n' "$out"
