// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agreement check (hotplug.h, hotplug_check()): the invariant that
 * the host's table and the guest's never disagree, made executable.  It
 * runs as each operation ends, with the operation gate still held, so no
 * walk is half done, and looks at what each side says of every vCPU:
 *
 *  - the host table, and the online set its online state announced;
 *  - the register block: whether the guest is shown the CPU;
 *  - a reporting guest's last report (the mirror of its table).
 *
 * A CPU the host holds (guest:ap-starting or above) that the guest no
 * longer has in the register block was ejected by the guest: that is the
 * guest's word, followed by the machine thread (hotplug_guest_work()).
 * Anything else apart marks the CPU as needing cpuhp-recover, with an
 * event; operations on it are refused until then.
 *
 * The guest's word is weighed for every CPU: a report it made about a
 * CPU nobody asked it to move was refused (hotplug_guest.c) and kept; if
 * it differs from what the host holds, the CPU is flagged the same way,
 * as the guest's doing, but neither refused nor left out of a count: a
 * guest gains nothing by a false report.
 *
 * The operation gate's outermost exit (op.c) runs the check
 * (hp_agree_check()), as hotplug_check() does on demand; nothing here
 * calls back up into the gate.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotplug_internal.h"
#include "hotvm/guest_states.h"
#include "log.h"
#include "vm.h"

/*
 * Why @cpu's sides are apart, or "" (hp->lock and table_lock held).
 * @why is a verdict, not an error: "" is the usual answer, and the text
 * is the slot's own state (disagree_why, lie_why: fixed fields under
 * hp->lock, sent in the agreement event), so it stays a buffer of that
 * field's size rather than a struct hv_err.
 */
static void judge(struct hotplug *hp, unsigned int cpu, char *why, size_t len,
		  bool *follow)
{
	struct hp_slot *s = &hp->slots[cpu];
	struct cpuhp_cpu c;
	bool enabled = hpregs_is_enabled(hp->regs, cpu);
	bool held;
	int g;

	why[0] = 0;
	*follow = false;
	cpuhp_cpu_info(&hp->m, cpu, &c);
	if (c.broken)
		return; /* flagged already, by the walk that broke it */
	/* A batch asked the guest already; its CPU's own walk is next. */
	if (s->batched)
		return;
	held = c.state >= HOST_AP_STARTING;
	if (held && !enabled) {
		/* The guest ejected it: its word, not a disagreement. */
		*follow = guest_cpu_removable(cpu);
		return;
	}
	if (!held && enabled) {
		snprintf(why, len,
			 "the guest is shown the CPU but the host table is at "
			 "%s",
			 HOST_STATE_NAME(c.state));
		return;
	}
	if (s->online != (c.state == HOST_ONLINE)) {
		snprintf(why, len,
			 "the events announced it %s but the host table is at "
			 "%s",
			 s->online ? "online" : "offline",
			 HOST_STATE_NAME(c.state));
		return;
	}
	/* A guest-side target may leave a CPU the host holds anywhere. */
	g = hp_guest_state_locked(hp, cpu);
	if (hp->guest_ext && !s->guest_walking && !held && g != GUEST_OFFLINE &&
	    guest_cpu_removable(cpu))
		snprintf(why, len,
			 "the guest reports it at %s but the host table is at "
			 "%s",
			 hp->guest_steps[g].name, HOST_STATE_NAME(c.state));
}

/*
 * Whether the guest's refused report about @cpu, if any, was false: the
 * guest claimed a state its mirror (what the host let it walk to) does
 * not have.  Weighed once (hp->lock held).
 */
static void judge_claim(struct hotplug *hp, unsigned int cpu, char *why,
			size_t len)
{
	struct hp_slot *s = &hp->slots[cpu];
	struct cpuhp_cpu c;
	int g = hp_guest_state_locked(hp, cpu);

	why[0] = 0;
	if (!s->claimed)
		return;
	s->claimed = false;
	if (s->claim == g) /* a walk the host asked for since took it there */
		return;
	cpuhp_cpu_info(&hp->m, cpu, &c);
	snprintf(why, len,
		 "the guest reported it at %s unasked (refused); the host "
		 "holds it at %s",
		 hp->guest_steps[s->claim].name, HOST_STATE_NAME(c.state));
}

struct verdict {
	unsigned int cpu;
	char id[sizeof(((struct hp_slot *)0)->id)];
	char why[sizeof(((struct hp_slot *)0)->disagree_why)];
	bool lie; /* the guest's doing: flagged only */
};

/* What a check found new, said once its locks are dropped. */
static void announce(const struct hp_events *ev, const struct verdict *news,
		     unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (news[i].lie)
			pr_err("CPU %u: the guest's word is false: %s; the "
			       "CPU is still counted and operable",
			       news[i].cpu, news[i].why);
		else
			pr_err("CPU %u: the host and the guest disagree: %s; "
			       "cpuhp-recover it",
			       news[i].cpu, news[i].why);
		if (ev->agreement)
			ev->agreement(ev->ctx, news[i].cpu, news[i].id, false,
				      news[i].why);
	}
}

void hp_agree_check(struct hotplug *hp)
{
	struct verdict *news = NULL;
	unsigned int n = 0;
	bool follow_any = false;
	struct hp_events ev;

	pthread_mutex_lock(&hp->table_lock);
	pthread_mutex_lock(&hp->lock);
	for (unsigned int cpu = 0; cpu < hp->max_cpus; cpu++) {
		struct hp_slot *s = &hp->slots[cpu];
		char why[sizeof(s->disagree_why)];
		bool follow, lie = false;

		judge(hp, cpu, why, sizeof(why), &follow);
		if (follow && !s->eject_pending) {
			s->eject_pending = true;
			hp->eject_work = follow_any = true;
		}
		if (!why[0] || s->disagree) {
			judge_claim(hp, cpu, why, sizeof(why));
			lie = true;
		}
		if (!why[0] || s->disagree || (lie && s->lied))
			continue;
		if (lie) {
			s->lied = true;
			memcpy(s->lie_why, why, sizeof(why));
		} else {
			s->disagree = true;
			memcpy(s->disagree_why, why, sizeof(why));
		}
		if (!news)
			news = calloc(hp->max_cpus, sizeof(*news));
		if (news) {
			news[n].cpu = cpu;
			memcpy(news[n].id, s->id, sizeof(s->id));
			memcpy(news[n].why, why, sizeof(why));
			news[n].lie = lie;
			n++;
		}
	}
	ev = hp->ev;
	pthread_mutex_unlock(&hp->lock);
	pthread_mutex_unlock(&hp->table_lock);
	announce(&ev, news, n);
	free(news);
	if (follow_any)
		vm_notify(hp->vm);
}

void hp_mark_disagree(struct hotplug *hp, unsigned int cpu, const char *fmt,
		      ...)
{
	struct hp_slot *s = &hp->slots[cpu];
	char why[sizeof(s->disagree_why)], id[sizeof(s->id)];
	struct hp_events ev;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	pr_err("CPU %u: %s; cpuhp-recover it", cpu, why);
	pthread_mutex_lock(&hp->lock);
	s->disagree = true;
	memcpy(s->disagree_why, why, sizeof(why));
	memcpy(id, s->id, sizeof(id));
	ev = hp->ev;
	pthread_mutex_unlock(&hp->lock);
	if (ev.agreement)
		ev.agreement(ev.ctx, cpu, id, false, why);
}
