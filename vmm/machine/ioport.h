/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The I/O port bus: ranges registered before any vCPU runs, read-only while
 * vCPUs run (so dispatch takes no lock).  Unclaimed reads return all ones,
 * unclaimed writes are dropped, as on a real ISA bus.
 */
#ifndef HOTVM_VMM_IOPORT_H
#define HOTVM_VMM_IOPORT_H

#include <stdbool.h>
#include <stdint.h>

#define IOPORT_MAX_RANGES 16

/* data holds size (1, 2 or 4) bytes, little-endian. */
typedef void (*ioport_fn)(void *opaque, uint16_t port, bool is_write,
			  uint8_t *data, unsigned int size);

struct ioport_range {
	uint16_t base;
	uint16_t len;
	ioport_fn fn;
	void *opaque;
};

struct ioport_bus {
	struct ioport_range ranges[IOPORT_MAX_RANGES];
	unsigned int nr;
};

/* Returns 0, -EBUSY on overlap, -ENOSPC when full, -EINVAL. */
int ioport_register(struct ioport_bus *bus, uint16_t base, uint16_t len,
		    ioport_fn fn, void *opaque);
void ioport_dispatch(const struct ioport_bus *bus, uint16_t port, bool is_write,
		     uint8_t *data, unsigned int size);

#endif
