// SPDX-License-Identifier: GPL-2.0-only
/* Device bus dispatch: a short table, searched linearly (a few devices). */
#include <errno.h>
#include <string.h>

#include "bus.h"

static bool valid_width(unsigned int w)
{
	return w == 1 || w == 2 || w == 4 || w == 8;
}

static int check_dev(const struct bus *bus, const struct bus_dev *dev)
{
	if (!dev->fn || !dev->len || dev->base + dev->len < dev->base ||
	    (bus->limit && dev->base + dev->len > bus->limit))
		return -EINVAL;
	for (unsigned int i = 0; i < dev->nr_regs; i++) {
		const struct bus_reg *r = &dev->regs[i];

		if (!valid_width(r->width) || !(r->dir & BUS_RW) ||
		    r->offset >= dev->len || r->width > dev->len - r->offset)
			return -EINVAL;
	}
	return 0;
}

int bus_register(struct bus *bus, const struct bus_dev *dev)
{
	int ret = check_dev(bus, dev);

	if (ret)
		return ret;
	for (unsigned int i = 0; i < bus->nr; i++) {
		const struct bus_dev *d = &bus->devs[i];

		if (dev->base < d->base + d->len &&
		    d->base < dev->base + dev->len)
			return -EBUSY;
	}
	if (bus->nr >= BUS_MAX_DEVS)
		return -ENOSPC;
	bus->devs[bus->nr++] = *dev;
	return 0;
}

/* Byte by byte: independent of host endianness and alignment. */
static uint64_t get_le(const uint8_t *p, unsigned int len)
{
	uint64_t v = 0;

	for (unsigned int i = len; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

static void put_le(uint8_t *p, unsigned int len, uint64_t v)
{
	for (unsigned int i = 0; i < len; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* The declared register this access hits, or why there is none. */
static int match_reg(const struct bus_dev *dev, uint64_t off, unsigned int len,
		     bool is_write)
{
	uint8_t dir = is_write ? BUS_W : BUS_R;

	if (!dev->regs)
		return 0;
	for (unsigned int i = 0; i < dev->nr_regs; i++) {
		const struct bus_reg *r = &dev->regs[i];

		if (r->offset != off || !(r->dir & dir))
			continue;
		return r->width == len ? 0 : BUS_IGN_WIDTH;
	}
	return BUS_IGN_OFFSET;
}

static void count(const struct bus_dev *dev, int why)
{
	if (!dev->ignored)
		return;
	if (why == BUS_IGN_WIDTH)
		atomic_fetch_add(&dev->ignored->width, 1);
	else
		atomic_fetch_add(&dev->ignored->offset, 1);
}

int bus_dev_access(const struct bus_dev *dev, uint64_t off, uint64_t *val,
		   unsigned int len, bool is_write)
{
	int ret = match_reg(dev, off, len, is_write);

	if (ret) {
		count(dev, ret);
		return ret;
	}
	return dev->fn(dev->ctx, off, val, len, is_write);
}

int bus_find(const struct bus *bus, uint64_t addr, unsigned int len)
{
	for (unsigned int i = 0; i < bus->nr; i++) {
		const struct bus_dev *d = &bus->devs[i];
		uint64_t off = addr - d->base;

		if (addr < d->base || off >= d->len ||
		    (!bus->first_byte_decodes && len > d->len - off))
			continue;
		return (int)i;
	}
	return BUS_UNCLAIMED;
}

int bus_dispatch(const struct bus *bus, uint64_t addr, uint8_t *data,
		 unsigned int len, bool is_write)
{
	const struct bus_dev *d;
	uint64_t val;
	int i, ret;

	/* KVM never sends a bad length; the run area is shared, so check. */
	i = len && len <= 8 ? bus_find(bus, addr, len) : BUS_UNCLAIMED;
	if (i < 0) {
		if (!is_write)
			memset(data, bus->unclaimed, len <= 8 ? len : 0);
		return BUS_UNCLAIMED;
	}
	d = &bus->devs[i];
	val = is_write ? get_le(data, len) : 0;
	ret = bus_dev_access(d, addr - d->base, &val, len, is_write);
	if (!is_write && ret < 0)
		memset(data, bus->unclaimed, len);
	else if (!is_write)
		put_le(data, len, val);
	return ret;
}
