// SPDX-License-Identifier: GPL-2.0-only
/*
 * The GED as a device (device.h): the model in ged.c on the MMIO bus with
 * its interrupt, and how the guest's firmware tables describe it, its DSDT
 * device and its FDT node.
 */
#include <stdio.h>

#include <libfdt.h>

#include "acpi_pm.h"
#include "aml.h"
#include "cpuhp_regs.h"
#include "ged.h"
#include "hotvm/regs.h"
#include "vm.h"

/*
 * Linux's evged calls _EVT with the GSI; one interrupt, so Arg0 is unused.
 * Its _CRS may hold only the interrupt (evged rejects anything else).
 */
static int ged_aml(struct aml_buf *b, const struct dev_instance *d,
		   const struct dev_table_env *env)
{
	uint32_t irq = d->irq;

	(void)env;
	AML_DEVICE(b, d->name) {
		aml_emit(b, aml_name_decl("_HID", aml_string("ACPI0013")));
		aml_emit(b, aml_name_decl("_UID", aml_zero()));
		aml_emit(b, aml_name_decl("_CRS", AML_RESOURCES(aml_interrupt(
							  AML_IRQ_CONSUMER |
								  AML_IRQ_EDGE,
							  &irq, 1))));
		aml_emit(b, aml_opregion("EREG", AML_SYSTEM_MEMORY,
					 (uint32_t)d->base, ABI_GED_SIZE));
		AML_FIELD(b, "EREG", AML_DWORD_ACC, AML_NOLOCK,
			  AML_WRITE_AS_ZEROS) {
			aml_field_offset(b, ABI_GED_EVENT);
			aml_field_unit(b, "ESEL", 8 * ABI_GED_EVENT_WIDTH);
		}
		AML_METHOD(b, "_EVT", 1, AML_SERIALIZED) {
			/* Reading the register clears the pending events. */
			aml_emit(b, aml_store(aml_name("ESEL"), aml_local(0)));
			AML_IF(b,
			       aml_and(aml_local(0), aml_int(ABI_GED_EVT_CPU),
				       aml_no_target())) {
				aml_emit(b, aml_call0(HPREGS_AML_SCAN));
			}
			AML_IF(b, aml_and(aml_local(0),
					  aml_int(ABI_GED_EVT_PWRBTN),
					  aml_no_target())) {
				aml_emit(b, aml_notify(aml_name(PM_AML_PWRB),
						       aml_int(0x80)));
			}
		}
	}
	return 0;
}

/* The node the tiny guest looks for: the event register and its GSI. */
static int ged_fdt(void *fdt, const struct dev_instance *d)
{
	const fdt64_t reg[] = { cpu_to_fdt64(d->base),
				cpu_to_fdt64(ABI_GED_SIZE) };
	char name[32];
	int ret;

	snprintf(name, sizeof(name), "ged@%llx", (unsigned long long)d->base);
	ret = fdt_begin_node(fdt, name);
	if (!ret)
		ret = fdt_property_string(fdt, "compatible", "hotvm,ged");
	if (!ret)
		ret = fdt_property(fdt, "reg", reg, sizeof(reg));
	if (!ret)
		ret = fdt_property_u32(fdt, "interrupts", d->irq);
	if (!ret)
		ret = fdt_end_node(fdt);
	return ret;
}

/* The interrupt is an edge: the IOAPIC pin is edge-triggered, active high. */
static int ged_pulse(void *ctx)
{
	struct ged *g = ctx;
	int ret = vm_irq_line(g->vm, g->gsi, 1);

	if (!ret)
		ret = vm_irq_line(g->vm, g->gsi, 0);
	return ret;
}

static int ged_setup(void *state, const struct dev_instance *d,
		     const struct dev_env *env)
{
	struct ged *g = state;
	int ret = ged_init(g, ged_pulse, g);

	if (ret)
		return ret;
	g->vm = env->vm;
	g->gsi = d->irq;
	ret = dev_registered(d, ged_register(g, env->mmio, d->base));
	if (ret)
		ged_destroy(g);
	return ret;
}

static void ged_teardown(void *state)
{
	ged_destroy(state);
}

const struct dev_desc ged_desc = {
	.name = "ged",
	.bus = DEV_BUS_MMIO,
	.size = ABI_GED_SIZE,
	.state_size = sizeof(struct ged),
	.setup = ged_setup,
	.teardown = ged_teardown,
	.aml = ged_aml,
	.fdt = ged_fdt,
};
