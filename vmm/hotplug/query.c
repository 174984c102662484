// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the controller answers without walking (hotplug.h): each vCPU
 * slot's view and whether it is plugged or counted, the two tables'
 * states, the operations' sums, the devices' counters, and whether the
 * guest has started.  A query never waits for a walk: it reads the copy
 * the walk's last step left (platform.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hotplug_internal.h"

unsigned int hotplug_max_cpus(const struct hotplug *hp)
{
	return hp->max_cpus;
}

int hotplug_cpu_view(struct hotplug *hp, unsigned int cpu,
		     struct hp_cpu_view *v)
{
	struct hp_slot *s;

	if (cpu >= hp->max_cpus)
		return -EINVAL;
	/* The guest's latest states, which its ring may still hold. */
	hpregs_ring_drain(hp->regs);
	s = &hp->slots[cpu];
	*v = (struct hp_cpu_view){
		.cpu = cpu,
		.apic_id = cpu,
		.boot = s->boot,
		.present = hpregs_is_enabled(hp->regs, cpu),
	};
	/*
	 * A walk holds table_lock for as long as the guest takes: a query
	 * then reads the copy its last step left instead of waiting.
	 */
	if (!pthread_mutex_trylock(&hp->table_lock)) {
		hp_snap_host(hp, cpu);
		pthread_mutex_unlock(&hp->table_lock);
	}
	v->host_tid = vcpu_tid(&s->vcpu);
	pthread_mutex_lock(&hp->lock);
	v->host = s->host_view;
	v->parked = s->parked_view;
	memcpy(v->id, s->id, sizeof(v->id));
	v->guest_state = hp_guest_state_locked(hp, cpu);
	v->guest_fault = hp_guest_fault_locked(hp, cpu);
	v->guest_target = s->guest_target;
	v->guest_broken = s->guest_broken;
	v->guest_reports = hp->guest_ext;
	v->stage = s->stage;
	v->linux_cpu = s->linux_cpu;
	v->linux_online = s->linux_online;
	v->prestaged = s->prestaged && v->host.state == HOST_VCPU_CREATE &&
		       !v->present;
	v->disagree = s->disagree || s->lied;
	v->guest_lied = s->lied && !s->disagree;
	memcpy(v->disagree_why, s->disagree ? s->disagree_why : s->lie_why,
	       sizeof(v->disagree_why));
	pthread_mutex_unlock(&hp->lock);
	v->linux_state = hp_lx_trace_state(hp, cpu);
	return 0;
}

bool hotplug_cpu_plugged(const struct hp_cpu_view *v)
{
	return v->host.state != HOST_OFFLINE && !v->prestaged;
}

bool hotplug_cpu_counted(const struct hp_cpu_view *v)
{
	return v->host.state == HOST_ONLINE && !v->host.broken &&
	       !v->guest_broken && (!v->disagree || v->guest_lied) &&
	       (!v->guest_reports || v->guest_state == GUEST_ONLINE) &&
	       v->linux_online != 0; /* the guest agent's word, if any */
}

/* The host table, or the mirror of the guest's: the same questions. */
static const struct cpuhp_machine *table(const struct hotplug *hp,
					 enum hp_side side)
{
	return side == HP_SIDE_HOST ? &hp->m : &hp->guest_m;
}

int hotplug_nr_states(const struct hotplug *hp, enum hp_side side)
{
	return (int)table(hp, side)->nr_states;
}

int hotplug_state_info(struct hotplug *hp, enum hp_side side, int state,
		       struct cpuhp_state_info *info)
{
	return cpuhp_state_info(table(hp, side), state, info);
}

int hotplug_state_lookup(struct hotplug *hp, enum hp_side side,
			 const char *name)
{
	int n = hotplug_nr_states(hp, side);
	char *end;
	long v;

	if (!name || !*name)
		return -ENOENT;
	if (*name >= '0' && *name <= '9') {
		v = strtol(name, &end, 10);
		return !*end && v < n ? (int)v : -ENOENT;
	}
	return cpuhp_state_by_name(table(hp, side), name);
}

void hotplug_own_stats(struct hotplug *hp, struct hp_own_stats out[HP_OP_KINDS])
{
	pthread_mutex_lock(&hp->lock);
	memcpy(out, hp->own, sizeof(hp->own));
	pthread_mutex_unlock(&hp->lock);
}

void hotplug_device_stats(struct hotplug *hp, struct hpregs_stats *regs,
			  struct ged_stats *ged)
{
	hpregs_ring_drain(hp->regs);
	hpregs_stats(hp->regs, regs);
	ged_stats(hp->ged, ged);
	pthread_mutex_lock(&hp->lock);
	regs->refused_states = hp->refused_reports;
	pthread_mutex_unlock(&hp->lock);
}

bool hotplug_started(struct hotplug *hp)
{
	bool r;

	pthread_mutex_lock(&hp->lock);
	r = hp->started;
	pthread_mutex_unlock(&hp->lock);
	return r;
}
