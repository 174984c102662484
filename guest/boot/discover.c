// SPDX-License-Identifier: GPL-2.0-only
/*
 * Platform discovery: the FDT first (platform.c), then ACPI (acpi.c),
 * both filling the one record.
 */
#include "platform.h"
#include "pvh.h"

int platform_init(void)
{
	platform_set_defaults();
	if (boot_info.fdt_paddr &&
	    !platform_from_fdt((const void *)(uintptr_t)boot_info.fdt_paddr)) {
		platform.source = "fdt";
		return 0;
	}
	platform.nr_cpus = 0;
	if (!platform_from_acpi(boot_info.rsdp_paddr)) {
		platform.source = "acpi";
		return 0;
	}
	return -1;
}
