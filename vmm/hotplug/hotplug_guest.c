// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's side of the wire, as the controller sees it: the register
 * block's callbacks (on vCPU threads) and the guest's table for
 * introspection.  Everything here comes from an untrusted guest: values
 * are checked, nothing blocks, and nothing the guest says can make the
 * host do more than wake a waiter or update the mirror.
 */
#include <errno.h>
#include <string.h>

#include "hotvm/guest_states.h"
#include "hotplug_internal.h"
#include "hotvm/abi.h"

/* _OST status "ejection in progress": not a failure (ACPI 6.3, 6.3.5). */
#define OST_EJECT_IN_PROGRESS 0x84
#define OST_EVENT_INSERT      1
#define OST_EVENT_EJECT	      3

static const char *const guest_names[GUEST_NR_STATES] = GUEST_STATE_NAMES;

/* The guest's flags (guest/hotplug/cpuhp_table.c), for introspection only. */
static const unsigned int guest_flags[GUEST_NR_STATES] = {
	[GUEST_KICK_AP] = CPUHP_F_KICK,
	[GUEST_BRINGUP_CPU] = CPUHP_F_CANT_STOP,
	[GUEST_AP_LAPIC] = CPUHP_F_AP | CPUHP_F_NOFAIL | CPUHP_F_CANT_STOP,
	[GUEST_AP_TIMER] = CPUHP_F_AP | CPUHP_F_NOFAIL | CPUHP_F_CANT_STOP,
	[GUEST_AP_WORK] = CPUHP_F_AP,
	[GUEST_AP_DYN_0] = CPUHP_F_AP | CPUHP_F_DYN_ONLINE,
	[GUEST_AP_DYN_1] = CPUHP_F_AP | CPUHP_F_DYN_ONLINE,
};

int hp_guest_nr_states(void)
{
	return GUEST_NR_STATES;
}

int hp_guest_state_info(int state, struct cpuhp_state_info *info)
{
	const char *name;
	unsigned int f;
	bool cb;

	if (state < 0 || state >= GUEST_NR_STATES)
		return -EINVAL;
	name = guest_names[state];
	f = guest_flags[state];
	cb = name && state != GUEST_OFFLINE;
	*info = (struct cpuhp_state_info){
		.state = state,
		.name = name,
		.has_startup = cb,
		.has_teardown = cb,
		.flags = f,
		.section = (f & CPUHP_F_NOFAIL) ? CPUHP_SECTION_STARTING
			   : (f & CPUHP_F_AP)	? CPUHP_SECTION_ONLINE
						: CPUHP_SECTION_PREPARE,
	};
	return 0;
}

int hp_guest_state_by_name(const char *name)
{
	for (int s = 0; s < GUEST_NR_STATES; s++)
		if (guest_names[s] && !strcmp(guest_names[s], name))
			return s;
	return -ENOENT;
}

/* As cpuhp_set_fail(): a named state with callbacks that may fail. */
bool hp_guest_fault_valid(int state)
{
	if (state == CPUHP_INVALID)
		return true;
	if (state <= GUEST_OFFLINE || state >= GUEST_NR_STATES)
		return false;
	return guest_names[state] && !(guest_flags[state] & CPUHP_F_NOFAIL);
}

/* As cpuhp_set_target(): offline, online or a named state one may stop at. */
bool hp_guest_target_valid(int state)
{
	if (state == GUEST_OFFLINE || state == GUEST_ONLINE)
		return true;
	if (state < 0 || state >= GUEST_NR_STATES)
		return false;
	return guest_names[state] && !(guest_flags[state] & CPUHP_F_CANT_STOP);
}

const char *hp_ost_status_name(uint32_t status)
{
	/* ACPI 6.4 table 6.200, the codes for an eject request. */
	switch (status) {
	case 0x80:
		return "device ejection not supported by the OS";
	case 0x81:
		return "device in use by an application";
	case 0x82:
		return "device busy";
	case 0x83:
		return "ejection dependency is busy";
	case 0x84:
		return "ejection in progress";
	case 1:
		return "non-specific failure";
	default:
		return "failure";
	}
}

static struct hp_slot *slot_of(struct hotplug *hp, unsigned int cpu)
{
	return cpu < hp->max_cpus ? &hp->slots[cpu] : NULL;
}

static void on_eject(void *ctx, unsigned int cpu)
{
	struct hotplug *hp = ctx;
	struct hp_slot *s = slot_of(hp, cpu);

	if (!s)
		return;
	pthread_mutex_lock(&hp->lock);
	s->w.ejected = true;
	pthread_cond_broadcast(&hp->cond);
	pthread_mutex_unlock(&hp->lock);
}

static void on_ost(void *ctx, unsigned int cpu, uint32_t event, uint32_t status)
{
	struct hotplug *hp = ctx;
	struct hp_slot *s = slot_of(hp, cpu);
	struct hp_events ev, sev = { 0 };
	char id[sizeof(s->id)], sid[sizeof(s->id)];
	int stage = -1;

	if (!s)
		return;
	pthread_mutex_lock(&hp->lock);
	/*
	 * A guest that speaks hotvm's extension is waited for by its own
	 * reports; _OST is what a real Linux gives instead.
	 */
	if (event == OST_EVENT_INSERT && status == 0 && !hp->guest_ext)
		s->w.ost_ok = true;
	if (event == OST_EVENT_INSERT && status == 0 &&
	    s->stage == HP_STAGE_PRESENTED)
		stage = HP_STAGE_ACKNOWLEDGED;
	if (event == OST_EVENT_EJECT && status == OST_EJECT_IN_PROGRESS &&
	    s->stage != HP_STAGE_ABSENT)
		stage = HP_STAGE_EJECTING;
	if (event == OST_EVENT_EJECT && status != 0 &&
	    status != OST_EJECT_IN_PROGRESS) {
		s->w.ost_fail = true;
		s->w.ost_status = status;
		if (s->stage == HP_STAGE_EJECTING)
			stage = s->w.started ? HP_STAGE_STARTED
					     : HP_STAGE_ACKNOWLEDGED;
	}
	if (stage >= 0)
		hp_set_stage_locked(hp, cpu, (enum hp_stage)stage, &sev, sid,
				    sizeof(sid));
	memcpy(id, s->id, sizeof(id));
	ev = hp->ev;
	pthread_cond_broadcast(&hp->cond);
	pthread_mutex_unlock(&hp->lock);
	if (ev.ost)
		ev.ost(ev.ctx, cpu, id, event, status);
	if (stage >= 0)
		hp_stage_notify(&sev, cpu, sid, (enum hp_stage)stage);
}

/*
 * The state whose callback ran: the report gives the state *after* the
 * step (unchanged when it failed), which is the step's own state going up
 * and the one below it going down.
 */
static int step_state(uint32_t v)
{
	int st = (int)(v & ABI_GUEST_STATE_MASK);
	bool up = v & ABI_GUEST_STATE_UP;

	if (v & ABI_GUEST_STATE_FAILED)
		return up ? st + 1 : st;
	return up ? st : st + 1;
}

static void on_guest_state(void *ctx, unsigned int cpu, uint32_t v)
{
	struct hotplug *hp = ctx;
	struct hp_slot *s = slot_of(hp, cpu);
	int st = (int)(v & ABI_GUEST_STATE_MASK);
	bool done = v & ABI_GUEST_STATE_DONE;
	bool failed = v & ABI_GUEST_STATE_FAILED;
	struct cpuhp_notice n = {
		.kind = done ? CPUHP_NOTICE_DONE : CPUHP_NOTICE_STEP,
		.cpu = cpu,
		.state = done ? st : step_state(v),
		.bringup = v & ABI_GUEST_STATE_UP,
		.rollback = v & ABI_GUEST_STATE_ROLLBACK,
		.ret = failed ? -EIO : 0,
	};
	struct hp_events ev;

	/* A state the guest's table does not have: a confused guest. */
	if (!s || st >= GUEST_NR_STATES || n.state >= GUEST_NR_STATES)
		return;
	pthread_mutex_lock(&hp->lock);
	hp->guest_ext = true;
	s->guest_state = st;
	if (done) {
		s->guest_walking = false;
		s->w.done = true;
		if (failed)
			s->w.failed = true;
	} else {
		s->guest_walking = true;
		if (failed && n.rollback)
			s->guest_broken = true;
		if (failed && n.state == s->fault_given) {
			n.injected = true;
			n.ret = -EAGAIN;
			s->fault_given = CPUHP_INVALID;
		}
		if (n.bringup && !failed && st >= GUEST_AP_WORK)
			s->w.reached = true;
	}
	hp_record_locked(hp, cpu, HP_SIDE_GUEST, &n);
	ev = hp->ev;
	pthread_cond_broadcast(&hp->cond);
	pthread_mutex_unlock(&hp->lock);
	if (ev.state)
		ev.state(ev.ctx, HP_SIDE_GUEST, &n);
}

/* Both one-shot: taken under the lock, so a fault is handed over once. */
static uint32_t on_guest_fault(void *ctx, unsigned int cpu)
{
	struct hotplug *hp = ctx;
	struct hp_slot *s = slot_of(hp, cpu);
	int f;

	if (!s)
		return 0;
	pthread_mutex_lock(&hp->lock);
	f = s->guest_fault;
	s->guest_fault = CPUHP_INVALID;
	if (f != CPUHP_INVALID)
		s->fault_given = f;
	pthread_mutex_unlock(&hp->lock);
	return f == CPUHP_INVALID ? 0 : (uint32_t)f + 1;
}

static uint32_t on_guest_target(void *ctx, unsigned int cpu)
{
	struct hotplug *hp = ctx;
	struct hp_slot *s = slot_of(hp, cpu);
	bool r;
	int t;

	if (!s)
		return 0;
	pthread_mutex_lock(&hp->lock);
	t = s->guest_target;
	r = s->guest_recover;
	s->guest_target = CPUHP_INVALID;
	s->guest_recover = false;
	pthread_mutex_unlock(&hp->lock);
	if (t == CPUHP_INVALID)
		return 0;
	return ((uint32_t)t + 1) | (r ? ABI_GUEST_TARGET_RECOVER : 0);
}

const struct hpregs_ops hp_regs_ops = {
	.eject = on_eject,
	.ost = on_ost,
	.guest_state = on_guest_state,
	.guest_fault = on_guest_fault,
	.guest_target = on_guest_target,
};
