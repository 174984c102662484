// SPDX-License-Identifier: GPL-2.0-only
/*
 * The GED as the guest's firmware tables describe it: its DSDT device and
 * its FDT node, from the same constants as the model in ged.c.  Apart from
 * the model so that the table builders (and their tests and fuzzer) need
 * only the AML encoder and libfdt.
 */
#include <stdio.h>

#include <libfdt.h>

#include "acpi_pm.h"
#include "aml.h"
#include "cpuhp_regs.h"
#include "ged.h"
#include "hotvm/regs.h"

/*
 * Linux's evged calls _EVT with the GSI; one interrupt, so Arg0 is unused.
 * Its _CRS may hold only the interrupt (evged rejects anything else).
 */
void ged_build_aml(struct aml_buf *b, uint32_t base, uint32_t irq)
{
	AML_DEVICE(b, "GED_") {
		aml_emit(b, aml_name_decl("_HID", aml_string("ACPI0013")));
		aml_emit(b, aml_name_decl("_UID", aml_zero()));
		aml_emit(b, aml_name_decl("_CRS", AML_RESOURCES(aml_interrupt(
							  AML_IRQ_CONSUMER |
								  AML_IRQ_EDGE,
							  &irq, 1))));
		aml_emit(b, aml_opregion("EREG", AML_SYSTEM_MEMORY, base,
					 ABI_GED_SIZE));
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
}

/* The node the tiny guest looks for: the event register and its GSI. */
int ged_build_fdt(void *fdt)
{
	const fdt64_t reg[] = { cpu_to_fdt64(ABI_GED_MMIO),
				cpu_to_fdt64(ABI_GED_SIZE) };
	char name[32];
	int ret;

	snprintf(name, sizeof(name), "ged@%lx", ABI_GED_MMIO);
	ret = fdt_begin_node(fdt, name);
	if (!ret)
		ret = fdt_property_string(fdt, "compatible", "hotvm,ged");
	if (!ret)
		ret = fdt_property(fdt, "reg", reg, sizeof(reg));
	if (!ret)
		ret = fdt_property_u32(fdt, "interrupts", ABI_GED_IRQ);
	if (!ret)
		ret = fdt_end_node(fdt);
	return ret;
}
