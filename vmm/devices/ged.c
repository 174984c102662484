// SPDX-License-Identifier: GPL-2.0-only
/*
 * ACPI Generic Event Device: see vmm/devices/ged.h for the semantics.  The
 * register is a single atomic word, so the vCPU read path takes no lock;
 * only the interrupt pulse is serialised.
 */
#include <errno.h>

#include "ged.h"
#include "hotvm/abi.h"

/* The model below is one 32-bit register; a bigger window needs more. */
_Static_assert(ABI_GED_SIZE == 4, "GED window is one event register");

int ged_init(struct ged *g, ged_irq_fn irq, void *ctx)
{
	int ret;

	*g = (struct ged){ .irq = irq, .ctx = ctx };
	ret = pthread_mutex_init(&g->irq_lock, NULL);
	return ret ? -ret : 0;
}

void ged_destroy(struct ged *g)
{
	pthread_mutex_destroy(&g->irq_lock);
}

int ged_raise(struct ged *g, uint32_t bits)
{
	int ret = 0;

	if (!bits)
		return -EINVAL;
	atomic_fetch_add(&g->raises, 1);
	/* Bits first, edge second: the guest's handler must find them. */
	atomic_fetch_or(&g->pending, bits);
	if (!g->irq)
		return 0;
	pthread_mutex_lock(&g->irq_lock);
	ret = g->irq(g->ctx);
	pthread_mutex_unlock(&g->irq_lock);
	if (ret)
		atomic_fetch_add(&g->irq_errors, 1);
	return ret;
}

/* The bus has checked offset and width: a read or a (dropped) write. */
static int ged_trap(void *ctx, uint64_t offset, uint64_t *data,
		    unsigned int len, bool is_write)
{
	struct ged *g = ctx;

	(void)offset;
	(void)len;
	if (is_write) {
		atomic_fetch_add(&g->ign_write, 1);
		return 1;
	}
	/* Read and clear in one step: a concurrent raise lands before or after. */
	*data = atomic_exchange(&g->pending, 0);
	atomic_fetch_add(&g->reads, 1);
	return 0;
}

/* Writable too, so that a write of the right width is counted as such. */
static const struct bus_reg ged_regs[] = {
	{ .offset = ABI_GED_EVENT,
	  .width = ABI_GED_EVENT_WIDTH,
	  .dir = BUS_RW },
};

static struct bus_dev ged_dev(struct ged *g)
{
	return (struct bus_dev){
		.base = ABI_GED_MMIO,
		.len = ABI_GED_SIZE,
		.regs = ged_regs,
		.nr_regs = sizeof(ged_regs) / sizeof(ged_regs[0]),
		.name = "ged",
		.ignored = &g->bus_ign,
		.fn = ged_trap,
		.ctx = g,
	};
}

int ged_register(struct ged *g, struct bus *mmio, uint64_t base)
{
	struct bus_dev dev = ged_dev(g);

	dev.base = base;
	return bus_register(mmio, &dev);
}

bool ged_access(struct ged *g, uint64_t offset, unsigned int width,
		bool is_write, uint64_t *data)
{
	struct bus_dev dev = ged_dev(g);
	uint64_t v = 0;
	int ret = bus_dev_access(&dev, offset, &v, width, is_write);

	if (!is_write)
		*data = ret ? 0 : v;
	return ret == 0;
}

uint32_t ged_pending(struct ged *g)
{
	return atomic_load(&g->pending);
}

void ged_stats(struct ged *g, struct ged_stats *st)
{
	*st = (struct ged_stats){
		.reads = atomic_load(&g->reads),
		.raises = atomic_load(&g->raises),
		.irq_errors = atomic_load(&g->irq_errors),
		.ign_write = atomic_load(&g->ign_write),
		.ign_width = atomic_load(&g->bus_ign.width),
		.ign_offset = atomic_load(&g->bus_ign.offset),
	};
}

void ged_reset(struct ged *g)
{
	atomic_store(&g->pending, 0);
}
