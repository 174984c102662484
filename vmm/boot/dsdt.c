// SPDX-License-Identifier: GPL-2.0-only
/*
 * DSDT body: \_SB with each device's own AML (the CPU hotplug container,
 * the GED, the UART) and the motherboard resources that claim the MMIO
 * windows.  See vmm/boot/dsdt.h for the namespace.
 */
#include <errno.h>
#include <string.h>

#include "acpi_pm.h"
#include "cpuhp_regs.h"
#include "dsdt.h"
#include "ged.h"
#include "hotvm/abi.h"
#include "serial.h"

_Static_assert(DSDT_MAX_CPUS == HPREGS_AML_MAX_CPUS, "one CPU limit");

/*
 * The GED's _CRS may hold only its interrupt, so its window and the
 * register block's are claimed here, keeping the OS from placing anything
 * over them.
 */
static void build_mres(struct aml_buf *b, uint32_t ged, uint32_t cpuhp)
{
	AML_DEVICE(b, "MRES") {
		aml_emit(b, aml_name_decl("_HID", aml_eisaid("PNP0C02")));
		aml_emit(b, aml_name_decl("_UID", aml_zero()));
		aml_emit(b,
			 aml_name_decl(
				 "_CRS",
				 AML_RESOURCES(
					 aml_memory32_fixed(AML_MEM_READ_WRITE,
							    ged, ABI_GED_SIZE),
					 aml_memory32_fixed(AML_MEM_READ_WRITE,
							    cpuhp,
							    ABI_CPUHP_SIZE))));
	}
}

int dsdt_build_aml(struct aml_buf *b, const struct dsdt_config *cfg)
{
	uint32_t ged = cfg->ged_mmio ? cfg->ged_mmio : ABI_GED_MMIO;
	uint32_t irq = cfg->ged_irq ? cfg->ged_irq : ABI_GED_IRQ;
	const struct hpregs_aml cpus = {
		.ncpus = cfg->ncpus,
		.apic_ids = cfg->apic_ids,
		.base = cfg->cpuhp_mmio ? cfg->cpuhp_mmio : ABI_CPUHP_MMIO,
	};
	int ret = -EINVAL;

	if (!cfg->ncpus || cfg->ncpus > DSDT_MAX_CPUS)
		return -EINVAL;
	AML_SCOPE(b, "\\_SB") {
		ret = hpregs_build_aml(b, &cpus);
		ged_build_aml(b, ged, irq);
		serial_build_aml(b, "COM1", ABI_COM1_PORT, ABI_COM1_IRQ, 0);
		build_mres(b, ged, cpus.base);
		pm_build_aml(b);
	}
	return ret ? ret : aml_finish(b);
}

long dsdt_build(void *buf, size_t size, const struct dsdt_config *cfg)
{
	struct aml_buf b = { .max = size };
	int err = dsdt_build_aml(&b, cfg);
	long len = (long)b.len;

	if (!err)
		memcpy(buf, b.data, b.len);
	aml_free(&b);
	return err ? err : len;
}
