// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes virtio-blk's request parser (vmm/devices/virtio_blk.c) behind the
 * transport and the virtqueue: fuzz_virtq.c with the blk device (its
 * comment has the input encoding and the oracle).
 */
#define FUZZ_VBLK 1
#include "fuzz_virtq.c"
