// SPDX-License-Identifier: GPL-2.0-only
/* Port I/O dispatch: a short table, searched linearly (a few entries). */
#include <errno.h>
#include <string.h>

#include "ioport.h"

int ioport_register(struct ioport_bus *bus, uint16_t base, uint16_t len,
		    ioport_fn fn, void *opaque)
{
	if (!len || !fn || (uint32_t)base + len > 0x10000)
		return -EINVAL;
	for (unsigned int i = 0; i < bus->nr; i++) {
		const struct ioport_range *r = &bus->ranges[i];

		if (base < r->base + r->len && r->base < base + len)
			return -EBUSY;
	}
	if (bus->nr >= IOPORT_MAX_RANGES)
		return -ENOSPC;
	bus->ranges[bus->nr++] = (struct ioport_range){
		.base = base,
		.len = len,
		.fn = fn,
		.opaque = opaque,
	};
	return 0;
}

void ioport_dispatch(const struct ioport_bus *bus, uint16_t port, bool is_write,
		     uint8_t *data, unsigned int size)
{
	for (unsigned int i = 0; i < bus->nr; i++) {
		const struct ioport_range *r = &bus->ranges[i];

		if (port >= r->base && port - r->base < r->len) {
			r->fn(r->opaque, port, is_write, data, size);
			return;
		}
	}
	if (!is_write)
		memset(data, 0xff, size);
}
