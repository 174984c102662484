/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-blk (device id 2) over the MMIO transport (docs/design.md §6.9):
 * `hotvm run --disk path=FILE|DEVICE[,readonly=on][,id=NAME]`.  A raw image
 * or a block device, opened and checked once at start-up and locked with
 * an OFD lock (as QEMU locks its images), so a second VM or a second
 * --disk of the same file is refused.  Requests are served on the
 * device's thread with preadv/pwritev; FLUSH is fdatasync; GET_ID gives
 * the serial; discard and write-zeroes punch or zero the range.
 *
 * Every request is guest data: its header is copied out once, its range
 * checked against the disk's size, and anything wrong gets the virtio
 * error status (IOERR, UNSUPP) while hotvm goes on.
 */
#ifndef HOTVM_VIRTIO_BLK_H
#define HOTVM_VIRTIO_BLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_blk.h>

#include "device.h"
#include "hv_err.h"
#include "virtio_mmio.h"

#define VBLK_SECTOR	  512
#define VBLK_QUEUE_SIZE	  256
#define VBLK_MAX_ZERO_SEC (1u << 22)	      /* discard, write-zeroes: 2 GiB */
#define VBLK_ID_MAX	  VIRTIO_BLK_ID_BYTES /* 20 */

/* One --disk, as given. */
struct vblk_config {
	const char *path;
	const char *id; /* the serial (GET_ID); NULL: "hotvm-diskN" */
	bool readonly;
};

struct vblk_stats {
	uint64_t requests;
	uint64_t ioerr;	    /* VIRTIO_BLK_S_IOERR given */
	uint64_t unsupp;    /* VIRTIO_BLK_S_UNSUPP given */
	uint64_t no_status; /* chains with no byte for the status */
};

struct vblk {
	int fd;
	uint64_t size; /* bytes, a multiple of VBLK_SECTOR */
	bool readonly;
	bool bdev; /* a block device, not a file */
	char serial[VBLK_ID_MAX];
	struct virtio_blk_config cfg;
	struct virtio_dev_ops ops;
	struct vblk_stats st; /* the device thread's */
};

/*
 * Opens, checks and locks c's image for disk number @n (its default
 * serial).  0, or -errno with the reason in @err (naming the option's
 * path): missing, a directory or anything but a file or block device,
 * empty or not a multiple of 512 bytes, read-only without readonly=on,
 * locked by another user.
 */
int vblk_open(struct vblk *b, const struct vblk_config *c, unsigned int n,
	      struct hv_err *err);
/* For a disk already open (tests, fuzzing): the rest of vblk_open(). */
void vblk_init_fd(struct vblk *b, int fd, uint64_t size, bool readonly,
		  const char *serial);
void vblk_close(struct vblk *b);

/* The request parser: serves one chain, returns the bytes it wrote. */
uint32_t vblk_request(struct vblk *b, const struct virtq_chain *c);

extern const struct dev_desc vblk_desc;

#endif
