/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The DSDT's AML: the devices that let an ACPI OS (Linux's acpi_processor
 * and evged drivers) hot-add and hot-remove CPUs through hotvm's GED and
 * CPU-hotplug register block (docs/design.md §6.4), the console UART and
 * the power button.  Each device builds its own AML (its descriptor's aml,
 * device.h); this module only walks the machine's device table
 * (vmm/board/board_devices.c) in order.  Only the AML body: the caller wraps it in the 36-byte
 * SDT header ("DSDT", revision 2 for 64-bit integers) and checksums it.
 *
 * Namespace, with hotvm's table:
 *   \_SB.CPUS   processor container (ACPI0010) and one ACPI0007 Device per
 *               possible CPU: hpregs_desc in cpuhp_regs.h
 *   \_SB.GED_   ACPI0013, _EVT(Arg0) calls \_SB.CPUS.CSCN: ged_desc
 *   \_SB.COM1   PNP0501, the 16550 at ABI_COM1_PORT, IRQ ABI_COM1_IRQ:
 *               serial_desc
 *   \_SB.MRES   PNP0C02, claims the MMIO windows: mres_desc
 *   \_SB.PWRB   PNP0C0C, the power button the GED notifies; \_S5_ the
 *               sleep type of poweroff: pm_desc
 */
#ifndef HOTVM_DSDT_H
#define HOTVM_DSDT_H

#include <stddef.h>
#include <stdint.h>

#include "aml.h"
#include "device.h"

/* Device names are C000..CFFF: three hex digits. */
#define DSDT_MAX_CPUS 4096

struct dsdt_config {
	unsigned int ncpus;	  /* possible CPUs, 1..DSDT_MAX_CPUS */
	const uint32_t *apic_ids; /* ncpus entries; NULL: CPU n has APIC ID n */
	const struct dev_instance *devs; /* the machine's devices, in order */
	size_t nr_devs;
};

/* Appends the DSDT body to b.  Returns 0 or a negative errno. */
int dsdt_build_aml(struct aml_buf *b, const struct dsdt_config *cfg);

/*
 * Writes the DSDT body to buf.  Returns its length, -E2BIG if it does not
 * fit in size, or another negative errno.
 */
long dsdt_build(void *buf, size_t size, const struct dsdt_config *cfg);

#endif
