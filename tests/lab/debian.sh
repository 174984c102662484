#!/usr/bin/env bash
# Runs the lab with the Debian 12 image as its disk: builds the image first
# if the cache has none (tools/debian-image.sh, a few minutes once), then
# tools/lab/lab.sh with --disk IMAGE and the image's initramfs and kernel
# version at /lab/debian.
# Usage: debian.sh CACHE LAB.SH [LAB.SH OPTION]...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=$1 lab=$2
shift 2
dir=$("$here/../../tools/debian-image.sh" --cache "$cache")
exec "$lab" --cache "$cache" --disk "$dir/disk.raw" \
	--add "$dir/initrd.img:/lab/debian/initrd.img" \
	--add "$dir/kernel-version:/lab/debian/kernel-version" "$@"
