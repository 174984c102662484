// SPDX-License-Identifier: GPL-2.0-only
/*
 * hotvm's machine, device by device (board_devices.h).  The order is the
 * DSDT's: the processor container first, the power button last.  Addresses
 * and interrupts are the VMM-guest contract's (hotvm/abi.h, hotvm/regs.h;
 * docs/design.md §6.1).
 */
#include "acpi_pm.h"
#include "board.h"
#include "board_devices.h"
#include "cpuhp_regs.h"
#include "debug_exit.h"
#include "ged.h"
#include "hotvm/abi.h"
#include "hotvm/regs.h"
#include "mres.h"
#include "serial.h"

/* COM1's sink: --serial. */
static const void *com1_config(const void *machine)
{
	const struct board_config *c = machine;

	return &c->serial;
}

static const struct dev_instance devices[] = {
	{ .desc = &hpregs_desc, .name = "CPUS", .base = ABI_CPUHP_MMIO },
	{ .desc = &ged_desc,
	  .name = "GED_",
	  .base = ABI_GED_MMIO,
	  .irq = ABI_GED_IRQ },
	{ .desc = &serial_desc,
	  .name = "COM1",
	  .base = ABI_COM1_PORT,
	  .irq = ABI_COM1_IRQ,
	  .uid = 0,
	  .config = com1_config },
	{ .desc = &mres_desc, .name = "MRES" },
	{ .desc = &pm_desc, .name = "PWRB", .base = ABI_PM_PORT },
	{ .desc = &debug_exit_desc,
	  .name = "DBGX",
	  .base = ABI_DEBUG_EXIT_PORT },
};

_Static_assert(sizeof(devices) / sizeof(devices[0]) <= BOARD_MAX_DEVICES,
	       "board.dev_state[] holds every row");

const struct dev_instance *board_devices(size_t *n)
{
	*n = sizeof(devices) / sizeof(devices[0]);
	return devices;
}
