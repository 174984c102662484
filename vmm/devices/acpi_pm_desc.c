// SPDX-License-Identifier: GPL-2.0-only
/*
 * The power-management device as the DSDT describes it.  Linux offers
 * poweroff on a hardware-reduced machine only with a \_S5 object and the
 * FADT's sleep registers (acpi.c writes those), and binds its button
 * driver to a PNP0C0C device: a Notify 0x80 is a press, which it hands to
 * user space as KEY_POWER (acpid, systemd-logind).
 */
#include "acpi_pm.h"
#include "aml.h"
#include "hotvm/abi.h"

void pm_build_aml(struct aml_buf *b)
{
	/* SLP_TYPa, SLP_TYPb, two reserved. */
	aml_emit(b,
		 aml_name_decl("\\_S5_", AML_PACKAGE(aml_int(ABI_PM_SLP_TYP_S5),
						     aml_int(ABI_PM_SLP_TYP_S5),
						     aml_zero(), aml_zero())));
	AML_DEVICE(b, "PWRB") {
		aml_emit(b, aml_name_decl("_HID", aml_eisaid("PNP0C0C")));
		aml_emit(b, aml_name_decl("_UID", aml_zero()));
	}
}
