#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# QEMU's side of build/tests/e2e/bench-hotplug: the tiny guest under QEMU
# q35 on /dev/kvm, CYCLES (20) hot-adds and removals of one vCPU and
# (CYCLES + 3) / 4 batches of 8; ms from device_add to the guest's
# "online:" line and from device_del to DEVICE_DELETED, median and p99.
#   tools/bench-qemu-hotplug.sh [BUILD_DIR [CYCLES]]
# HOTVM_QEMU_ACCEL/HOTVM_QEMU_CPU override kvm / max,-arch-capabilities
# (-cpu max alone aborts on this machine's /dev/kvm: MSR 0x10a).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
cycles=${2:-20}
HOTVM_QEMU_ACCEL=${HOTVM_QEMU_ACCEL:-kvm}
HOTVM_QEMU_CPU=${HOTVM_QEMU_CPU:-max,-arch-capabilities}
export HOTVM_QEMU_ACCEL HOTVM_QEMU_CPU
exec python3 "$top/guest/tests/qemu_hotplug.py" bench \
	"$build/guest/hotvm-tiny.elf" "$cycles"
