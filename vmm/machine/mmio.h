/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The MMIO bus for KVM_EXIT_MMIO: guest-physical windows registered before
 * any vCPU runs, read-only afterwards (dispatch takes no lock).  Handlers
 * get the offset into their window and the value as a little-endian
 * integer of len bytes.  Unclaimed reads return 0 and unclaimed writes are
 * dropped: the guest is untrusted and nothing it touches here is fatal.
 */
#ifndef HOTVM_VMM_MMIO_H
#define HOTVM_VMM_MMIO_H

#include <stdbool.h>
#include <stdint.h>

#define MMIO_MAX_RANGES 8

/* *val: the value written, or the place for the value read (len bytes). */
typedef void (*mmio_fn)(void *opaque, uint64_t offset, bool is_write,
			uint64_t *val, unsigned int len);

struct mmio_range {
	uint64_t base;
	uint64_t len;
	mmio_fn fn;
	void *opaque;
};

struct mmio_bus {
	struct mmio_range ranges[MMIO_MAX_RANGES];
	unsigned int nr;
};

/* Returns 0, -EBUSY on overlap, -ENOSPC when full, -EINVAL. */
int mmio_register(struct mmio_bus *bus, uint64_t base, uint64_t len, mmio_fn fn,
		  void *opaque);

/*
 * One access of len (1..8) bytes at data, little-endian, as KVM's
 * kvm_run.mmio holds it.  An access that straddles a window's end is
 * unclaimed.  A bad len reads as zeros and is dropped.
 */
void mmio_dispatch(const struct mmio_bus *bus, uint64_t addr, bool is_write,
		   uint8_t *data, unsigned int len);

#endif
