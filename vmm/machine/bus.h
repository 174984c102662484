/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The device bus, one for each address space (I/O ports, MMIO) with one
 * trap signature, as kvmtool's kvm__register_iotrap: a device registers a
 * window and, optionally, the registers in it (offset, width, direction);
 * the bus drops every access that does not match one of them before the
 * device sees it, and counts it where the device asked.  Windows are
 * registered before any vCPU runs and read-only afterwards, so dispatch
 * takes no lock.  Accesses nobody claims read as the bus's float value
 * (all ones on the port bus, as on ISA; zeros on MMIO) and writes vanish:
 * the guest is untrusted and nothing it touches here is fatal.
 */
#ifndef HOTVM_BUS_H
#define HOTVM_BUS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define BUS_MAX_DEVS 16

/*
 * One access at offset (from the window's base) of len (1..8) bytes; *data
 * the value written (len bytes, little-endian) or the place for the value
 * read, which starts as 0.  Returns 0, or a positive reason the device
 * ignored it (tests and counters; the bus does not care).
 */
typedef int (*bus_fn)(void *ctx, uint64_t offset, uint64_t *data,
		      unsigned int len, bool is_write);

#define BUS_R  0x1
#define BUS_W  0x2
#define BUS_RW (BUS_R | BUS_W)

/* A register: the one access that reaches the device at this offset. */
struct bus_reg {
	uint64_t offset;
	uint8_t width; /* bytes */
	uint8_t dir;   /* BUS_R, BUS_W or BUS_RW */
};

/* Accesses the bus dropped for a device, by reason. */
struct bus_ignored {
	_Atomic uint64_t offset; /* no register there in that direction */
	_Atomic uint64_t width;	 /* a register, but not this width */
};

struct bus_dev {
	const char *name; /* for counters and reports; may be NULL */
	uint64_t base, len;
	/* NULL: every access in the window, any width, reaches fn. */
	const struct bus_reg *regs;
	unsigned int nr_regs;
	struct bus_ignored *ignored; /* may be NULL */
	bus_fn fn;
	void *ctx;
};

struct bus {
	uint64_t limit;	   /* addresses 0 .. limit - 1; 0: all 64 bits */
	uint8_t unclaimed; /* byte an unclaimed read returns */
	/*
	 * Port I/O: an access belongs to the device at its first address,
	 * even if it runs past the window (a 32-bit read of a byte port).
	 * MMIO: an access that straddles a window's end is nobody's.
	 */
	bool first_byte_decodes;
	struct bus_dev devs[BUS_MAX_DEVS];
	unsigned int nr;
};

#define BUS_INIT_PIO                                                           \
	{                                                                      \
		.limit = 0x10000, .unclaimed = 0xff,                           \
		.first_byte_decodes = true                                     \
	}
#define BUS_INIT_MMIO                                                          \
	{                                                                      \
		.limit = 0, .unclaimed = 0                                     \
	}

/*
 * Copies dev.  Returns 0, -EBUSY on overlap, -ENOSPC when full, -EINVAL
 * (no fn, empty or wrapping window, past the bus's limit, a register
 * outside the window or with a width not 1, 2, 4 or 8).
 */
int bus_register(struct bus *bus, const struct bus_dev *dev);

/* What bus_dispatch() did. */
enum bus_result {
	BUS_UNCLAIMED = -1, /* no device there, or the access straddles one */
	BUS_IGN_OFFSET = -2,
	BUS_IGN_WIDTH = -3,
	/* >= 0: the device's return value */
};

/*
 * The index in bus->devs of the device an access of len bytes at addr
 * belongs to, or BUS_UNCLAIMED.
 */
int bus_find(const struct bus *bus, uint64_t addr, unsigned int len);

/*
 * One access of len (1..8) bytes at data, little-endian, as kvm_run holds
 * it.  A bad len reads as the float value and is dropped.
 */
int bus_dispatch(const struct bus *bus, uint64_t addr, uint8_t *data,
		 unsigned int len, bool is_write);

/*
 * The same for one device, at offset into its window (*val as fn takes
 * it): the register check, the count, the call.  bus_dispatch() uses it;
 * so do the devices' unit tests.
 */
int bus_dev_access(const struct bus_dev *dev, uint64_t off, uint64_t *val,
		   unsigned int len, bool is_write);

#endif
