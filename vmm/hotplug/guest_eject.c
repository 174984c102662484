// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's own eject (docs/design.md §9), on the machine's work
 * thread: a CPU the guest ejected unasked is walked down and deleted, or,
 * with --guest-eject deny, presented to the guest again.
 */
#include <string.h>

#include "hotplug_internal.h"
#include "hotvm/abi.h"
#include "log.h"

/*
 * The guest ejected @cpu by itself and the register block let it go: the
 * host table follows, as after a removal (the hooks run, in reverse; they
 * cannot veto what the guest has done), and the slot is free.
 */
static void guest_eject(struct hotplug *hp, unsigned int cpu)
{
	/* Gone already, or plugged again since: nothing to follow. */
	if (hp_host_state(hp, cpu) == HOST_OFFLINE ||
	    hpregs_is_enabled(hp->regs, cpu))
		return;
	pr_err("CPU %u: the guest ejected it; its vCPU is removed", cpu);
	hp->forced = true;
	/*
	 * A walk that did not get down went back up (and presented the CPU
	 * again): the device is still there, so no DEVICE_DELETED, and the
	 * agreement check judges where it ended.
	 */
	if (hp_force_down(hp, cpu))
		hp_deleted(hp, cpu);
	hp->forced = false;
}

/*
 * --guest-eject deny kept a CPU the guest let go: its vCPU starts afresh
 * (same thread, so whatever placed it stays) and the guest is shown it
 * again, as a hot-add it acknowledges and starts.
 */
static void guest_reinsert(struct hotplug *hp, unsigned int cpu)
{
	struct hp_slot *s = &hp->slots[cpu];
	char id[sizeof(s->id)];
	struct hp_events ev;
	int ret;

	if (hp_host_state(hp, cpu) < HOST_AP_STARTING)
		return;
	vcpu_pause(&s->vcpu);
	ret = vcpu_unpark(&s->vcpu, false);
	vcpu_resume(&s->vcpu);
	pthread_mutex_lock(&hp->lock);
	s->w.started = false;
	s->asked |= HP_ASK_UP; /* the guest takes it back: believed */
	hp_set_stage_locked(hp, cpu, HP_STAGE_PRESENTED, &ev, id, sizeof(id));
	pthread_mutex_unlock(&hp->lock);
	hp_stage_notify(&ev, cpu, id, HP_STAGE_PRESENTED);
	if (!ret)
		ret = hpregs_reinsert(hp->regs, cpu);
	if (!ret)
		ret = ged_raise(hp->ged, ABI_GED_EVT_CPU);
	if (ret)
		pr_err("CPU %u: cannot present it to the guest again: %s", cpu,
		       strerror(-ret));
}

void hotplug_guest_work(struct hotplug *hp)
{
	/* Busy: the operation's end wakes the machine thread again. */
	if (!hp_op_try_enter(hp, &hp->eject_work))
		return;
	for (unsigned int cpu = 0; cpu < hp->max_cpus; cpu++) {
		bool pending, reinsert;

		pthread_mutex_lock(&hp->lock);
		pending = hp->slots[cpu].eject_pending;
		reinsert = hp->slots[cpu].reinsert_pending;
		hp->slots[cpu].eject_pending = false;
		hp->slots[cpu].reinsert_pending = false;
		pthread_mutex_unlock(&hp->lock);
		if (pending)
			guest_eject(hp, cpu);
		if (reinsert)
			guest_reinsert(hp, cpu);
	}
	hp_op_exit(hp);
}
