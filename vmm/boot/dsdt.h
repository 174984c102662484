/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The DSDT's AML: the Generic Event Device and the CPU hotplug container
 * that let an ACPI OS (Linux's acpi_processor and evged drivers) hot-add and
 * hot-remove CPUs through hotvm's GED and CPU-hotplug register block
 * (DESIGN.md section 3).  Only the AML body: the caller wraps it in the
 * 36-byte SDT header ("DSDT", revision 2 for 64-bit integers) and checksums
 * it.
 *
 * Namespace:
 *   \_SB.CPUS            processor container (ACPI0010)
 *     PRST, fields       the register block: CSEL CPEN CINS CRMV CEJT CCMD CDAT
 *     CPLK               mutex around every select-then-access sequence
 *     CSTA(i)            _STA of CPU i: 0xF if enabled, else 0
 *     CEJ0(i)            eject CPU i
 *     COST(i, ev, st, b) _OST of CPU i to the VMM
 *     CTFY(i, code)      Notify(Cxxx, code) for CPU i
 *     CSCN()             drain insert/remove events, notify the OS
 *     CMTL/CMTX(i, id)   _MAT: Local APIC / Local x2APIC entry
 *     Cxxx               one ACPI0007 Device per possible CPU (hex index)
 *   \_SB.GED_            ACPI0013, _EVT(Arg0) calls \_SB.CPUS.CSCN
 *   \_SB.COM1            PNP0501, the 16550 at ABI_COM1_PORT, IRQ ABI_COM1_IRQ
 *   \_SB.MRES            PNP0C02, claims the GED and register block windows
 */
#ifndef HOTVM_DSDT_H
#define HOTVM_DSDT_H

#include <stddef.h>
#include <stdint.h>

#include "aml.h"

/* Device names are C000..CFFF: three hex digits. */
#define DSDT_MAX_CPUS 4096

struct dsdt_config {
	unsigned int ncpus;	  /* possible CPUs, 1..DSDT_MAX_CPUS */
	const uint32_t *apic_ids; /* ncpus entries; NULL: CPU n has APIC ID n */
	/* Zero selects the value from hotvm_abi.h. */
	uint32_t ged_mmio;
	uint32_t ged_irq;
	uint32_t cpuhp_mmio;
};

/* Appends the DSDT body to b.  Returns 0 or a negative errno. */
int dsdt_build_aml(struct aml_buf *b, const struct dsdt_config *cfg);

/*
 * Writes the DSDT body to buf.  Returns its length, -E2BIG if it does not
 * fit in size, or another negative errno.
 */
long dsdt_build(void *buf, size_t size, const struct dsdt_config *cfg);

#endif
