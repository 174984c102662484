#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The tiny guest under QEMU q35's own CPU hotplug (TCG by default):
#   qemu-hotplug.sh GUEST_ELF
# boots with -smp 1,maxcpus=4, hot-adds CPUs 1 and 2 over QMP, waits for
# the guest's "online: 0-2", removes them, waits for "online: 0" and
# DEVICE_DELETED (qemu_hotplug.py test).  HOTVM_QEMU_ACCEL and
# HOTVM_QEMU_CPU as in qemu-boot.sh.  Exit 77 (skip) without
# qemu-system-x86_64 or python3.
set -u

command -v qemu-system-x86_64 >/dev/null ||
	{ echo "qemu-system-x86_64 not found: skip"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not found: skip"; exit 77; }
exec python3 "$(dirname "$0")/qemu_hotplug.py" test "$1"
