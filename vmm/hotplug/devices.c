// SPDX-License-Identifier: GPL-2.0-only
/*
 * The machine's devices as the controller holds them: the register
 * block's and the report ring's callbacks attached to the controller and
 * detached again, and the GED's power button (docs/design.md §6).
 */
#include <errno.h>

#include "hotplug_internal.h"
#include "hotvm/abi.h"

/* The register block's callbacks are the controller's from now on. */
int hp_devices_attach(struct hotplug *hp)
{
	if (!hp->mmio || !hp->ged || !hp->regs ||
	    hp->regs->max_cpus != hp->max_cpus)
		return -EINVAL;
	hpregs_attach(hp->regs, &hp_regs_ops, hp,
		      hp->guest_eject == HOTPLUG_GUEST_EJECT_DENY);
	hpring_attach(&hp->regs->ring, &hp_ring_ops, hp);
	return 0;
}

/* ... and no longer: the guest's accesses reach nobody. */
void hp_devices_detach(struct hotplug *hp)
{
	if (!hp->regs)
		return;
	hpregs_attach(hp->regs, NULL, NULL, false);
	hpring_attach(&hp->regs->ring, NULL, NULL);
}

int hotplug_power_button(struct hotplug *hp)
{
	return ged_raise(hp->ged, ABI_GED_EVT_PWRBTN);
}
