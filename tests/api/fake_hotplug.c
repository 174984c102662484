// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fake hotplug controller (see fake_hotplug.h).  Single-threaded: the
 * QMP server thread is its only caller, and it notifies from that thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hotplug.h"
#include "hotvm/guest_states.h"
#include "hotplug.h"

#define FAKE_STEP_NS 1000

struct fake_cpu {
	bool boot, present, created, busy;
	char id[64];
	struct cpuhp_cpu host;
	int guest_state, guest_fault, guest_target;
	int fail_next;
};

struct hotplug {
	unsigned int max, ops;
	struct hp_events ev;
	struct fake_cpu *cpus;
	struct hp_report *rep; /* of the operation in progress */
};

static const char *const host_names[HOST_NR_STATES] = {
	[HOST_OFFLINE] = "offline",
	[HOST_PREPARE] = "host:prepare",
	[HOST_VCPU_CREATE] = "vcpu:create",
	[HOST_AP_STARTING] = "guest:ap-starting",
	[HOST_ONLINE] = "online",
};

#define GUEST_NAME(id, n, f) [id] = n,
static const char *const guest_names[GUEST_NR_STATES] = { GUEST_STATES(
	GUEST_NAME) };

struct hotplug *fake_hp_create(unsigned int max, unsigned int boot)
{
	struct hotplug *hp = calloc(1, sizeof(*hp));

	hp->max = max;
	hp->cpus = calloc(max, sizeof(*hp->cpus));
	for (unsigned int i = 0; i < max; i++) {
		struct fake_cpu *c = &hp->cpus[i];
		bool b = i < boot;

		*c = (struct fake_cpu){
			.boot = b,
			.present = b,
			.created = b,
			.host = { .state = b ? HOST_ONLINE : HOST_OFFLINE,
				  .target = b ? HOST_ONLINE : HOST_OFFLINE,
				  .fail = CPUHP_INVALID },
			.guest_state = b ? GUEST_ONLINE : GUEST_OFFLINE,
			.guest_fault = CPUHP_INVALID,
			.guest_target = CPUHP_INVALID,
		};
	}
	return hp;
}

void fake_hp_destroy(struct hotplug *hp)
{
	if (!hp)
		return;
	free(hp->cpus);
	free(hp);
}

void fake_hp_fail_next(struct hotplug *hp, unsigned int cpu, int rc)
{
	hp->cpus[cpu].fail_next = rc;
}

void fake_hp_set_busy(struct hotplug *hp, unsigned int cpu, bool busy)
{
	hp->cpus[cpu].busy = busy;
}

unsigned int fake_hp_ops(struct hotplug *hp)
{
	return hp->ops;
}

void hotplug_set_events(struct hotplug *hp, const struct hp_events *ev)
{
	hp->ev = ev ? *ev : (struct hp_events){ 0 };
}

unsigned int hotplug_max_cpus(const struct hotplug *hp)
{
	return hp->max;
}

int hotplug_cpu_view(struct hotplug *hp, unsigned int cpu,
		     struct hp_cpu_view *v)
{
	struct fake_cpu *c;

	if (cpu >= hp->max)
		return -EINVAL;
	c = &hp->cpus[cpu];
	*v = (struct hp_cpu_view){
		.cpu = cpu,
		.apic_id = cpu,
		.boot = c->boot,
		.present = c->present,
		.host = c->host,
		.guest_state = c->guest_state,
		.guest_fault = c->guest_fault,
		.guest_target = c->guest_target,
		.host_tid = c->host.state >= HOST_VCPU_CREATE ? 1000 + cpu : 0,
		.parked = c->created && c->host.state < HOST_VCPU_CREATE,
		/* the fake plays a guest that reports, as the tiny guest */
		.guest_reports = true,
		.stage = c->present ? HP_STAGE_STARTED : HP_STAGE_ABSENT,
	};
	memcpy(v->id, c->id, sizeof(v->id));
	return 0;
}

int hotplug_nr_states(const struct hotplug *hp, enum hp_side side)
{
	(void)hp;
	return side == HP_SIDE_HOST ? HOST_NR_STATES : GUEST_NR_STATES;
}

static bool has_cb(enum hp_side side, int s)
{
	if (side == HP_SIDE_HOST)
		return s > HOST_OFFLINE && s < HOST_NR_STATES && host_names[s];
	return s > GUEST_OFFLINE && s < GUEST_NR_STATES && guest_names[s];
}

int hotplug_state_info(struct hotplug *hp, enum hp_side side, int state,
		       struct cpuhp_state_info *info)
{
	if (state < 0 || state >= hotplug_nr_states(hp, side))
		return -EINVAL;
	*info = (struct cpuhp_state_info){
		.state = state,
		.name = side == HP_SIDE_HOST ? host_names[state]
					     : guest_names[state],
		.has_startup = has_cb(side, state),
		.has_teardown = has_cb(side, state),
		.section = CPUHP_SECTION_PREPARE,
	};
	if (side == HP_SIDE_HOST && state >= HOST_DYN_FIRST)
		info->section = CPUHP_SECTION_ONLINE;
	if (side == HP_SIDE_GUEST && state >= GUEST_AP_WORK)
		info->section = CPUHP_SECTION_ONLINE;
	if (side == HP_SIDE_GUEST &&
	    (state == GUEST_AP_LAPIC || state == GUEST_AP_TIMER)) {
		info->section = CPUHP_SECTION_STARTING;
		info->flags = CPUHP_F_NOFAIL | CPUHP_F_AP;
	}
	if (side == HP_SIDE_GUEST && state == GUEST_KICK_AP)
		info->flags = CPUHP_F_KICK;
	if (side == HP_SIDE_GUEST && state == GUEST_BRINGUP_CPU)
		info->flags = CPUHP_F_CANT_STOP;
	return 0;
}

int hotplug_state_lookup(struct hotplug *hp, enum hp_side side,
			 const char *name)
{
	int n = hotplug_nr_states(hp, side);
	char *end;

	if (!name || !*name)
		return -ENOENT;
	if (*name >= '0' && *name <= '9') {
		long v = strtol(name, &end, 10);

		return !*end && v < n ? (int)v : -ENOENT;
	}
	for (int i = 0; i < n; i++) {
		const char *s =
			side == HP_SIDE_HOST ? host_names[i] : guest_names[i];

		if (s && !strcmp(s, name))
			return i;
	}
	return -ENOENT;
}

/* ---- walking ---- */

static void step(struct hotplug *hp, enum hp_side side, unsigned int cpu,
		 int state, bool up, bool rollback, bool injected, int ret)
{
	struct cpuhp_notice n = { .kind = CPUHP_NOTICE_STEP,
				  .cpu = cpu,
				  .state = state,
				  .bringup = up,
				  .rollback = rollback,
				  .injected = injected,
				  .ret = ret };
	struct hp_report *r = hp->rep;

	if (r) {
		if (r->n < HP_REPORT_MAX)
			r->steps[r->n++] = (struct hp_step_time){
				.side = side,
				.state = state,
				.up = up,
				.rollback = rollback,
				.injected = injected,
				.ret = ret,
				.ns = FAKE_STEP_NS,
			};
		else
			r->dropped++;
		r->total_ns += FAKE_STEP_NS;
	}
	if (hp->ev.state)
		hp->ev.state(hp->ev.ctx, side, &n);
}

static void done(struct hotplug *hp, enum hp_side side, unsigned int cpu,
		 int state, bool up, int ret)
{
	struct cpuhp_notice n = { .kind = CPUHP_NOTICE_DONE,
				  .cpu = cpu,
				  .state = state,
				  .bringup = up,
				  .ret = ret };

	if (hp->ev.state)
		hp->ev.state(hp->ev.ctx, side, &n);
}

/* One callback: an injected fault fails it without running it. */
static int run_cb(int *fail, int s, bool *injected)
{
	*injected = *fail == s;
	if (*injected) {
		*fail = CPUHP_INVALID;
		return -EAGAIN;
	}
	return 0;
}

static int walk_guest(struct hotplug *hp, unsigned int cpu, int target)
{
	struct fake_cpu *c = &hp->cpus[cpu];
	int cur = c->guest_state, s, ret = 0;
	bool up = target > cur, inj;

	for (s = cur; s != target && !ret;) {
		int next = up ? s + 1 : s - 1, cb = up ? next : s;

		if (has_cb(HP_SIDE_GUEST, cb)) {
			ret = run_cb(&c->guest_fault, cb, &inj);
			step(hp, HP_SIDE_GUEST, cpu, cb, up, false, inj, ret);
		}
		if (!ret)
			s = next;
	}
	if (ret) /* roll back to where the walk began */
		for (; s != cur; s = up ? s - 1 : s + 1) {
			int cb = up ? s : s + 1;

			if (has_cb(HP_SIDE_GUEST, cb))
				step(hp, HP_SIDE_GUEST, cpu, cb, !up, true,
				     false, 0);
		}
	c->guest_state = s;
	done(hp, HP_SIDE_GUEST, cpu, s, up, ret);
	return ret ? -EIO : 0;
}

/* A host callback: guest:ap-starting presents or ejects the CPU. */
static int host_cb(struct hotplug *hp, unsigned int cpu, int s, bool up,
		   bool *inj)
{
	struct fake_cpu *c = &hp->cpus[cpu];
	int ret = run_cb(&c->host.fail, s, inj);

	if (ret || s != HOST_AP_STARTING)
		return ret;
	if (c->fail_next) {
		ret = c->fail_next;
		c->fail_next = 0;
		return ret;
	}
	if (up) {
		c->present = true;
		c->created = true;
		if (hp->ev.ost)
			hp->ev.ost(hp->ev.ctx, cpu, c->id, 1, 0);
		ret = walk_guest(hp, cpu, GUEST_ONLINE);
		if (ret)
			c->present = false;
	} else {
		if (hp->ev.ost)
			hp->ev.ost(hp->ev.ctx, cpu, c->id, 3, 0);
		ret = walk_guest(hp, cpu, GUEST_OFFLINE);
		if (!ret)
			c->present = false;
	}
	return ret;
}

static int walk_host(struct hotplug *hp, unsigned int cpu, int target)
{
	struct fake_cpu *c = &hp->cpus[cpu];
	int cur = c->host.state, s, ret = 0;
	bool up = target > cur, inj = false;

	c->host.target = target;
	c->host.rollback = false;
	for (s = cur; s != target && !ret;) {
		int next = up ? s + 1 : s - 1, cb = up ? next : s;

		if (has_cb(HP_SIDE_HOST, cb)) {
			ret = host_cb(hp, cpu, cb, up, &inj);
			step(hp, HP_SIDE_HOST, cpu, cb, up, false, inj, ret);
		}
		if (!ret)
			s = next;
		c->host.state = s;
	}
	if (ret) {
		c->host.rollback = true;
		for (; s != cur; s = up ? s - 1 : s + 1) {
			int cb = up ? s : s + 1;

			if (has_cb(HP_SIDE_HOST, cb)) {
				if (cb == HOST_AP_STARTING) {
					c->present = up ? false : true;
					c->guest_state = up ? GUEST_OFFLINE
							    : GUEST_ONLINE;
				}
				step(hp, HP_SIDE_HOST, cpu, cb, !up, true,
				     false, 0);
			}
		}
		c->host.state = cur;
		c->host.target = cur;
	}
	done(hp, HP_SIDE_HOST, cpu, c->host.state, up, ret);
	return ret;
}

static int op(struct hotplug *hp, unsigned int cpu, struct hp_report *rep)
{
	if (cpu >= hp->max)
		return -EINVAL;
	if (hp->cpus[cpu].busy)
		return -EBUSY;
	if (rep)
		memset(rep, 0, sizeof(*rep));
	hp->rep = rep;
	hp->ops++;
	return 0;
}

const char *hotplug_op_reason(struct hotplug *hp)
{
	(void)hp;
	return "";
}

int hotplug_cpu_add(struct hotplug *hp, unsigned int cpu, const char *id,
		    int timeout_ms, enum hotplug_wait wait,
		    struct hp_report *rep)
{
	struct fake_cpu *c;
	int ret;

	(void)timeout_ms;
	(void)wait;
	if (cpu < hp->max && hp->cpus[cpu].host.state == HOST_ONLINE)
		return -EEXIST;
	ret = op(hp, cpu, rep);
	if (ret)
		return ret;
	c = &hp->cpus[cpu];
	snprintf(c->id, sizeof(c->id), "%s", id ? id : "");
	ret = walk_host(hp, cpu, HOST_ONLINE);
	if (ret)
		c->id[0] = '\0';
	hp->rep = NULL;
	return ret;
}

int hotplug_cpu_remove(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		       struct hp_report *rep)
{
	struct fake_cpu *c;
	char id[64];
	int ret;

	(void)timeout_ms;
	if (cpu == 0)
		return -EPERM;
	if (cpu < hp->max && hp->cpus[cpu].host.state == HOST_OFFLINE)
		return -ENODEV;
	ret = op(hp, cpu, rep);
	if (ret)
		return ret;
	c = &hp->cpus[cpu];
	ret = walk_host(hp, cpu, HOST_OFFLINE);
	hp->rep = NULL;
	if (ret)
		return ret;
	memcpy(id, c->id, sizeof(id));
	c->id[0] = '\0';
	if (hp->ev.deleted)
		hp->ev.deleted(hp->ev.ctx, cpu, id);
	return 0;
}

int hotplug_set_target(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		       int state, int timeout_ms, struct hp_report *rep)
{
	int ret;

	(void)timeout_ms;
	if (cpu >= hp->max || state < 0 || state >= hotplug_nr_states(hp, side))
		return -EINVAL;
	if (cpu == 0 &&
	    state != (side == HP_SIDE_HOST ? HOST_ONLINE : GUEST_ONLINE))
		return -EPERM;
	if (side == HP_SIDE_GUEST &&
	    hp->cpus[cpu].host.state < HOST_AP_STARTING)
		return -ENODEV;
	ret = op(hp, cpu, rep);
	if (ret)
		return ret;
	if (side == HP_SIDE_GUEST)
		ret = walk_guest(hp, cpu, state);
	else
		ret = walk_host(hp, cpu, state);
	hp->rep = NULL;
	return ret;
}

/* As the real one, without a guest to ask: by the fake guest's state. */
int hotplug_cpu_recover(struct hotplug *hp, unsigned int cpu, int timeout_ms,
			struct hp_report *rep, bool *online)
{
	struct fake_cpu *c;
	int ret;

	(void)timeout_ms;
	*online = false;
	if (cpu == 0)
		return -EPERM;
	ret = op(hp, cpu, rep);
	if (ret)
		return ret;
	c = &hp->cpus[cpu];
	c->host.broken = false;
	*online = c->present && c->guest_state == GUEST_ONLINE;
	ret = walk_host(hp, cpu, *online ? HOST_ONLINE : HOST_OFFLINE);
	hp->rep = NULL;
	return ret;
}

int hotplug_inject(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		   int state)
{
	struct cpuhp_state_info info;

	if (cpu >= hp->max)
		return -EINVAL;
	if (state != CPUHP_INVALID &&
	    (hotplug_state_info(hp, side, state, &info) || !info.has_startup ||
	     (info.flags & CPUHP_F_NOFAIL)))
		return -EINVAL;
	if (side == HP_SIDE_HOST)
		hp->cpus[cpu].host.fail = state;
	else
		hp->cpus[cpu].guest_fault = state;
	return 0;
}

/* The fake has no devices: a guest that never touched them. */
void hotplug_device_stats(struct hotplug *hp, struct hpregs_stats *regs,
			  struct ged_stats *ged)
{
	(void)hp;
	*regs = (struct hpregs_stats){ 0 };
	*ged = (struct ged_stats){ 0 };
}
