// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ACPI power-management registers (acpi_pm.h).  Linux on a
 * hardware-reduced FADT powers off by writing SLP_TYP | SLP_EN to the
 * sleep control register (after clearing WAK_STS in the status register),
 * and reboots by writing the reset value to the reset register.
 */
#include "acpi_pm.h"
#include "hotvm/abi.h"

enum pm_result {
	PM_OK = 0,
	PM_IGNORED = 1,
};

static const struct bus_reg pm_regs[] = {
	{ .offset = ABI_PM_SLEEP_CTL, .width = 1, .dir = BUS_W },
	{ .offset = ABI_PM_SLEEP_STS, .width = 1, .dir = BUS_RW },
	{ .offset = ABI_PM_RESET, .width = 1, .dir = BUS_W },
};

void pm_init(struct pm *pm, const struct pm_ops *ops, void *ctx)
{
	*pm = (struct pm){ .ops = *ops, .ctx = ctx };
}

static int pm_sleep(struct pm *pm, uint8_t v)
{
	unsigned int typ = (v & ABI_PM_SLP_TYP_MASK) >> ABI_PM_SLP_TYP_SHIFT;

	if (!(v & ABI_PM_SLP_EN))
		return PM_OK; /* the type alone: nothing happens yet */
	/* S5 is the only sleep state the DSDT offers. */
	if (typ != ABI_PM_SLP_TYP_S5) {
		atomic_fetch_add(&pm->stats.ignored, 1);
		return PM_IGNORED;
	}
	atomic_fetch_add(&pm->stats.poweroffs, 1);
	if (pm->ops.poweroff)
		pm->ops.poweroff(pm->ctx);
	return PM_OK;
}

/* One guest access, as the bus delivers it. */
static int pm_access(void *ctx, uint64_t offset, uint64_t *data,
		     unsigned int len, bool is_write)
{
	struct pm *pm = ctx;
	uint8_t v = (uint8_t)*data;

	(void)len; /* the bus lets only the declared byte widths through */
	if (!is_write) {
		*data = 0; /* WAK_STS clear: the machine never wakes */
		return PM_OK;
	}
	switch (offset) {
	case ABI_PM_SLEEP_CTL:
		return pm_sleep(pm, v);
	case ABI_PM_SLEEP_STS:
		return PM_OK; /* writing 1 clears WAK_STS, which is 0 */
	case ABI_PM_RESET:
		if (v != ABI_PM_RESET_VALUE) {
			atomic_fetch_add(&pm->stats.ignored, 1);
			return PM_IGNORED;
		}
		atomic_fetch_add(&pm->stats.resets, 1);
		if (pm->ops.reset)
			pm->ops.reset(pm->ctx);
		return PM_OK;
	default:
		return PM_IGNORED;
	}
}

int pm_register(struct pm *pm, struct bus *io, uint16_t base)
{
	return bus_register(
		io, &(struct bus_dev){
			    .name = "pm",
			    .base = base,
			    .len = ABI_PM_SIZE,
			    .regs = pm_regs,
			    .nr_regs = sizeof(pm_regs) / sizeof(pm_regs[0]),
			    .ignored = &pm->bus_ign,
			    .fn = pm_access,
			    .ctx = pm,
		    });
}
