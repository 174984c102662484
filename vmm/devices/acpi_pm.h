/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ACPI power-management device of a hardware-reduced machine: the
 * FADT's sleep control and status registers and its reset register, on
 * the I/O port bus at ABI_PM_PORT (layout in hotvm/abi.h), and the DSDT's
 * \_S5 package and power button.  What the guest writes becomes a request
 * to the machine: power off (S5) or reset.  Anything else it writes is
 * counted and ignored: the guest is untrusted.
 */
#ifndef HOTVM_ACPI_PM_H
#define HOTVM_ACPI_PM_H

#include <stdatomic.h>
#include <stdint.h>

#include "bus.h"
#include "device.h"

/* Called on the vCPU thread that wrote the register. */
struct pm_ops {
	void (*poweroff)(void *ctx);
	void (*reset)(void *ctx);
};

struct pm_stats {
	_Atomic uint64_t poweroffs, resets;
	_Atomic uint64_t ignored; /* a sleep type other than S5, a bad value */
};

struct pm {
	struct pm_ops ops;
	void *ctx;
	struct pm_stats stats;
	struct bus_ignored bus_ign;
};

void pm_init(struct pm *pm, const struct pm_ops *ops, void *ctx);
/* On the port bus at base (ABI_PM_PORT): 0, or the bus's error. */
int pm_register(struct pm *pm, struct bus *io, uint16_t base);

/*
 * As a device (device.h): the registers at the instance's base (the FADT
 * points at ABI_PM_PORT), a poweroff or reset asked of the VM; in the
 * DSDT, \_S5_ (SLP_TYP ABI_PM_SLP_TYP_S5), by its root path, and PWRB,
 * the control-method power button (PNP0C0C) that the GED's
 * ABI_GED_EVT_PWRBTN event notifies (0x80: pressed).
 */
#define PM_AML_PWRB "\\_SB.PWRB"
extern const struct dev_desc pm_desc;

#endif
