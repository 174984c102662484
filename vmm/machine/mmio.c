// SPDX-License-Identifier: GPL-2.0-only
/* MMIO dispatch: a short table, searched linearly (two entries today). */
#include <errno.h>
#include <string.h>

#include "mmio.h"

int mmio_register(struct mmio_bus *bus, uint64_t base, uint64_t len, mmio_fn fn,
		  void *opaque)
{
	if (!len || !fn || base + len < base)
		return -EINVAL;
	for (unsigned int i = 0; i < bus->nr; i++) {
		const struct mmio_range *r = &bus->ranges[i];

		if (base < r->base + r->len && r->base < base + len)
			return -EBUSY;
	}
	if (bus->nr >= MMIO_MAX_RANGES)
		return -ENOSPC;
	bus->ranges[bus->nr++] = (struct mmio_range){
		.base = base,
		.len = len,
		.fn = fn,
		.opaque = opaque,
	};
	return 0;
}

/* Byte by byte: independent of host endianness and alignment. */
static uint64_t mmio_get_le(const uint8_t *p, unsigned int len)
{
	uint64_t v = 0;

	for (unsigned int i = len; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

static void mmio_put_le(uint8_t *p, unsigned int len, uint64_t v)
{
	for (unsigned int i = 0; i < len; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

void mmio_dispatch(const struct mmio_bus *bus, uint64_t addr, bool is_write,
		   uint8_t *data, unsigned int len)
{
	if (!len || len > 8) {
		/* KVM never does this; the run area is shared, so check. */
		return;
	}
	for (unsigned int i = 0; i < bus->nr; i++) {
		const struct mmio_range *r = &bus->ranges[i];
		uint64_t off = addr - r->base, val;

		if (addr < r->base || off >= r->len || len > r->len - off)
			continue;
		val = is_write ? mmio_get_le(data, len) : 0;
		r->fn(r->opaque, off, is_write, &val, len);
		if (!is_write)
			mmio_put_le(data, len, val);
		return;
	}
	if (!is_write)
		memset(data, 0, len);
}
