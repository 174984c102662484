// SPDX-License-Identifier: GPL-2.0-only
/*
 * Platform discovery, FDT first.  The FDT describes a possible CPU as
 * /cpus/cpu@N with reg = <APIC ID> and status "okay" (present at boot) or
 * "disabled" (possible: may be hot-added later).
 */
#include "dt.h"
#include "hotvm_abi.h"
#include "printf.h"
#include "platform.h"
#include "pvh.h"

struct platform platform;

void platform_add_cpu(u32 apic_id, bool enabled)
{
	for (unsigned int i = 0; i < platform.nr_cpus; i++) {
		if (platform.cpus[i].apic_id == apic_id) {
			platform.cpus[i].enabled |= enabled;
			return;
		}
	}
	if (platform.nr_cpus >= GUEST_MAX_CPUS) {
		printk("platform: CPU with APIC ID %u ignored: more than %u\n",
		       apic_id, GUEST_MAX_CPUS);
		return;
	}
	platform.cpus[platform.nr_cpus++] = (struct platform_cpu){
		.apic_id = apic_id,
		.enabled = enabled,
	};
}

int platform_from_fdt(const void *blob)
{
	int root = dt_path_offset(blob, "/");
	int cpus, node;

	if (root < 0 || !dt_is_compatible(blob, root, ABI_FDT_COMPATIBLE))
		return -1;
	cpus = dt_path_offset(blob, "/cpus");
	if (cpus < 0)
		return -1;
	for (node = dt_first_subnode(blob, cpus); node >= 0;
	     node = dt_next_subnode(blob, node)) {
		const char *name = dt_get_name(blob, node);
		const u32 *reg;
		const char *status;
		int len, slen;

		if (strncmp(name, "cpu@", 4))
			continue;
		reg = dt_getprop(blob, node, "reg", &len);
		if (!reg || len < 4)
			continue;
		status = dt_getprop(blob, node, "status", &slen);
		/* No status property means "okay", as the DT spec says. */
		platform_add_cpu(dt32_to_cpu(*reg),
				 !status || slen <= 0 ||
					 !strcmp(status, "okay"));
	}
	return platform.nr_cpus ? 0 : -1;
}

int platform_init(void)
{
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
