// SPDX-License-Identifier: GPL-2.0-only
/*
 * The platform's record (platform.h), its defaults and the CPUs found,
 * and its discovery from an FDT, which describes a possible CPU as
 * /cpus/cpu@N with reg = <APIC ID> and status "okay" (present at boot) or
 * "disabled" (possible: may be hot-added later).  ACPI's is acpi.c.
 */
#include "dt.h"
#include "hotvm/abi.h"
#include "hotvm/ring.h"
#include "printf.h"
#include "platform.h"

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

void platform_set_defaults(void)
{
	platform.ioapic_base = PLATFORM_IOAPIC_DEFAULT;
	platform.ioapic_found = false;
	platform.ged_base = ABI_GED_MMIO;
	platform.ged_irq = ABI_GED_IRQ;
	platform.ged_found = false;
	platform.cpuhp_base = ABI_CPUHP_MMIO;
	platform.cpuhp_found = false;
	platform.ring_base = platform.ring_size = 0;
	platform.ring_doorbell = 0;
	platform.fadt_found = false;
	platform.hw_reduced = false;
	platform.gpe0_blk = 0;
	platform.gpe0_len = 0;
}

/* The cpuhp node's ring: <u64 base, u64 size> and <u32 doorbell port>. */
static void fdt_ring(const void *blob, int node)
{
	int len, dlen;
	const u32 *r = dt_getprop(blob, node, ABI_RING_FDT_PROP, &len);
	const u32 *d = dt_getprop(blob, node, ABI_RING_FDT_DOORBELL, &dlen);

	if (!r || len != 16 || !d || dlen != 4)
		return;
	platform.ring_base = (u64)dt32_to_cpu(r[0]) << 32 | dt32_to_cpu(r[1]);
	platform.ring_size = (u64)dt32_to_cpu(r[2]) << 32 | dt32_to_cpu(r[3]);
	platform.ring_doorbell = dt32_to_cpu(d[0]);
}

/* A root-level cell count (#address-cells, #size-cells), or @def. */
static u32 root_cells(const void *blob, int root, const char *prop, u32 def)
{
	int len;
	const u32 *p = dt_getprop(blob, root, prop, &len);

	return p && len == 4 ? dt32_to_cpu(*p) : def;
}

/* The first address of @node's reg, in the root's #address-cells. */
static bool node_base(const void *blob, int root, int node, u64 *base)
{
	u32 ac = root_cells(blob, root, "#address-cells", 2);
	u32 sc = root_cells(blob, root, "#size-cells", 1);
	const u32 *reg;
	int len;

	reg = dt_getprop(blob, node, "reg", &len);
	if (!reg || ac < 1 || ac > 2 || sc > 2 || len < (int)((ac + sc) * 4))
		return false;
	*base = ac == 2 ? ((u64)dt32_to_cpu(reg[0]) << 32) | dt32_to_cpu(reg[1])
			: dt32_to_cpu(reg[0]);
	return true;
}

/*
 * /ged@... (compatible "hotvm,ged", reg, interrupts = <GSI>) and
 * /cpuhp@... ("hotvm,cpuhp-regs", reg).  A node without the compatible
 * or a usable reg is ignored: the ABI defaults stay.
 */
static void platform_hotplug_from_fdt(const void *blob, int root)
{
	int node, len;
	const u32 *irq;
	u64 base;

	node = dt_path_offset(blob, "/ged");
	if (node >= 0 && dt_is_compatible(blob, node, "hotvm,ged") &&
	    node_base(blob, root, node, &base)) {
		platform.ged_base = base;
		platform.ged_found = true;
		irq = dt_getprop(blob, node, "interrupts", &len);
		if (irq && len >= 4)
			platform.ged_irq = dt32_to_cpu(irq[0]);
	}
	node = dt_path_offset(blob, "/cpuhp");
	if (node >= 0 && dt_is_compatible(blob, node, "hotvm,cpuhp-regs") &&
	    node_base(blob, root, node, &base)) {
		platform.cpuhp_base = base;
		platform.cpuhp_found = true;
		fdt_ring(blob, node);
	}
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
	if (!platform.nr_cpus)
		return -1;
	platform_hotplug_from_fdt(blob, root);
	return 0;
}
