#!/usr/bin/env bash
# Installs what building and testing hotvm needs on a Debian 12 machine.
# Idempotent: apt-get runs only when a package is missing.
set -euo pipefail

packages=(
	gcc make meson ninja-build pkg-config   # build
	libfdt-dev libjson-c-dev libseccomp-dev  # VMM libraries
	clang-format                             # format check
	acpica-tools                             # iasl, acpiexec: tests/board ACPI tests
	qemu-system-x86 cpio xz-utils gzip       # nested lab, QEMU tests
	busybox-static                           # boot tests under busybox sh
	binutils                                 # nm, objcopy
	clang-14 libclang-rt-14-dev              # libFuzzer (tests/fuzz)
	libtsan2                                 # gcc's ThreadSanitizer runtime
	libvirt-dev                              # hotvm cpu --connect (its test driver needs no daemon)
	gnuplot-nox                              # tools/bench tiny plot
	python3                                  # tests/e2e/watch-trace.py, guest/tests, tools/bench tiny (also in the lab)
	qemu-guest-agent                         # qemu-ga: tests/agent against the real agent (and the lab's Linux guest)
	mmdebstrap e2fsprogs                     # tools/debian-image.sh: the lab's Debian 12 disk image
	iperf3                                   # tools/bench net: the lab's end of the throughput runs
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
# The nested lab fetches Debian's kernel with apt-get download: it needs lists.
lists_empty() {
	! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1
}
if [ ${#missing[@]} -eq 0 ] && ! lists_empty; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "setup: missing Debian packages: ${missing[*]}" >&2
	echo "setup: run this script as root, or: apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}"
apt-get install -y -qq --no-install-recommends "${missing[@]}"
