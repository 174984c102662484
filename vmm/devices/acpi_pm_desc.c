// SPDX-License-Identifier: GPL-2.0-only
/*
 * The power-management device as a device (device.h): its registers on the
 * port bus, whose poweroff and reset are the VM's, and its DSDT part.
 * Linux offers poweroff on a hardware-reduced machine only with a \_S5
 * object and the FADT's sleep registers (acpi.c writes those), and binds
 * its button driver to a PNP0C0C device: a Notify 0x80 is a press, which
 * it hands to user space as KEY_POWER (acpid, systemd-logind).
 */
#include "acpi_pm.h"
#include "aml.h"
#include "hotvm/abi.h"
#include "vm.h"

/* The guest's poweroff and reboot, on the vCPU thread that wrote them. */
static void pm_poweroff(void *ctx)
{
	vm_shutdown(ctx, 0, VM_CAUSE_GUEST_SHUTDOWN,
		    "the guest powered the machine off");
}

static void pm_reboot(void *ctx)
{
	vm_request_reset(ctx, VM_CAUSE_GUEST_RESET, 0,
			 "the guest reset the machine (--no-reboot)");
}

static const struct pm_ops pm_vm_ops = {
	.poweroff = pm_poweroff,
	.reset = pm_reboot,
};

static int pm_setup(void *state, const struct dev_instance *d,
		    const struct dev_env *env)
{
	pm_init(state, &pm_vm_ops, env->vm);
	return dev_registered(d,
			      pm_register(state, env->io, (uint16_t)d->base));
}

static int pm_aml(struct aml_buf *b, const struct dev_instance *d,
		  const struct dev_table_env *env)
{
	(void)d;
	(void)env;
	/* SLP_TYPa, SLP_TYPb, two reserved. */
	aml_emit(b,
		 aml_name_decl("\\_S5_", AML_PACKAGE(aml_int(ABI_PM_SLP_TYP_S5),
						     aml_int(ABI_PM_SLP_TYP_S5),
						     aml_zero(), aml_zero())));
	AML_DEVICE(b, "PWRB") {
		aml_emit(b, aml_name_decl("_HID", aml_eisaid("PNP0C0C")));
		aml_emit(b, aml_name_decl("_UID", aml_zero()));
	}
	return 0;
}

const struct dev_desc pm_desc = {
	.name = "acpi-pm",
	.bus = DEV_BUS_IO,
	.size = ABI_PM_SIZE,
	.state_size = sizeof(struct pm),
	.setup = pm_setup,
	.aml = pm_aml,
};
