// SPDX-License-Identifier: GPL-2.0-only
/*
 * One vCPU slot's bookkeeping, shared by the host table (host_table.c),
 * the guest's side of the wire (hotplug_guest.c), the agreement check,
 * the controller's operations (cpu_ops.c) and the batches: the stage the
 * host observed, the current operation's report and reason, the waits for
 * the guest, and the online set.  It sits beneath all of them and calls
 * none of them, so the tables and the controller do not call each other
 * in a circle.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hotplug_internal.h"
#include "log.h"

uint64_t hp_cpu_ns(clockid_t clk)
{
	struct timespec t;

	if (clock_gettime(clk, &t))
		return 0;
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/*
 * @cpu_ns of a thread's CPU clock in @wall_ns: never more.  The two clocks
 * tick apart by some 0.05% (sched_clock against the clocksource, measured
 * on kvm-clock), which a thread that never slept shows as more CPU than
 * time.
 */
uint64_t hp_own_cap(uint64_t cpu_ns, uint64_t wall_ns)
{
	return cpu_ns < wall_ns ? cpu_ns : wall_ns;
}

/*
 * A host step's own work: the operation thread's CPU since the last host
 * step (or the operation's start), at most the time since then.
 */
static uint64_t host_own_locked(struct hotplug *hp, uint64_t now)
{
	uint64_t cpu = hp_cpu_ns(hp->op_clk);
	uint64_t own = cpu > hp->op_cpu_last_ns ? cpu - hp->op_cpu_last_ns : 0;

	own = hp_own_cap(
		own, now > hp->op_host_last_ns ? now - hp->op_host_last_ns : 0);
	hp->op_cpu_last_ns = cpu;
	hp->op_host_last_ns = now;
	return own;
}

void hp_record_locked(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		      const struct cpuhp_notice *n, uint64_t now)
{
	struct hp_report *rep = hp->rep;

	if (!hp->op_active || cpu != hp->op_cpu || !rep ||
	    n->kind != CPUHP_NOTICE_STEP)
		return;
	/* A ring entry older than the step before it: no negative time. */
	if (now < hp->op_last_ns)
		now = hp->op_last_ns;
	if (rep->n < HP_REPORT_MAX)
		rep->steps[rep->n++] = (struct hp_step_time){
			.side = side,
			.state = n->state,
			.up = n->bringup,
			.rollback = n->rollback,
			.injected = n->injected,
			.ret = n->ret,
			.ns = now - hp->op_last_ns,
			.own_ns = side == HP_SIDE_HOST
					  ? host_own_locked(hp, now)
					  : 0,
		};
	else
		rep->dropped++;
	hp->op_last_ns = now;
}

int hp_wait_locked(struct hotplug *hp, struct hp_slot *s,
		   int (*done)(const struct hp_slot *s), int timeout_ms)
{
	struct timespec dl;
	uint64_t end = hv_now_ns() + (uint64_t)timeout_ms * 1000000ull;

	dl.tv_sec = (time_t)(end / 1000000000ull);
	dl.tv_nsec = (long)(end % 1000000000ull);
	for (;;) {
		int ret;

		if (hp->stopping)
			return -ESHUTDOWN;
		if (hp->resetting)
			return -ECANCELED;
		ret = done(s);
		if (ret)
			return ret;
		if (pthread_cond_timedwait(&hp->cond, &hp->lock, &dl) ==
		    ETIMEDOUT) {
			ret = done(s);
			return ret ? ret : -ETIMEDOUT;
		}
	}
}

void hp_set_stage_locked(struct hotplug *hp, unsigned int cpu, enum hp_stage st,
			 struct hp_events *ev, char *id, size_t idlen)
{
	struct hp_slot *s = &hp->slots[cpu];

	*ev = (struct hp_events){ 0 };
	if (s->stage == st)
		return;
	s->stage = st;
	*ev = hp->ev;
	snprintf(id, idlen, "%s", s->id);
}

void hp_stage_notify(const struct hp_events *ev, unsigned int cpu,
		     const char *id, enum hp_stage st)
{
	if (ev->stage)
		ev->stage(ev->ctx, cpu, id, st);
}

void hp_set_stage(struct hotplug *hp, unsigned int cpu, enum hp_stage st)
{
	struct hp_events ev;
	char id[sizeof(hp->slots[0].id)];

	pthread_mutex_lock(&hp->lock);
	hp_set_stage_locked(hp, cpu, st, &ev, id, sizeof(id));
	pthread_mutex_unlock(&hp->lock);
	hp_stage_notify(&ev, cpu, id, st);
}

/* Logs why, and records it as @rep's reason unless one is there already. */
static int vrecord(struct hp_report *rep, unsigned int cpu, int code,
		   const char *fmt, va_list ap)
{
	char why[HV_ERR_MAX];

	vsnprintf(why, sizeof(why), fmt, ap);
	pr_err("CPU %u: %s", cpu, why);
	return hv_err_set(rep ? &rep->err : NULL, code, "%s", why);
}

/* hp->rep is set and cleared by the operation thread, which calls this. */
void hp_fail(struct hotplug *hp, unsigned int cpu, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	/* -EIO until op_end() knows the errno the walk returned. */
	vrecord(hp->rep, cpu, -EIO, fmt, ap);
	va_end(ap);
}

/*
 * Online in the announced set: accounted by the online state, unless the
 * guest agent says Linux has it offline (linux_view.c).  Locked.
 */
static bool announced_online(const struct hp_slot *s)
{
	return s->online && s->linux_online != 0;
}

/* Linux's cpulist ("0-2,5") of the slots announced online, into @buf. */
static unsigned int online_cpulist(struct hotplug *hp, char *buf, size_t len)
{
	unsigned int count = 0;
	size_t at = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i < hp->max_cpus && at < len; i++) {
		unsigned int j = i;

		if (!announced_online(&hp->slots[i]))
			continue;
		while (j + 1 < hp->max_cpus &&
		       announced_online(&hp->slots[j + 1]))
			j++;
		count += j - i + 1;
		at += (size_t)snprintf(buf + at, len - at,
				       j == i ? "%s%u" : "%s%u-%u",
				       at ? "," : "", i, j);
		i = j;
	}
	return count;
}

void hp_online_changed(struct hotplug *hp, unsigned int cpu, bool online)
{
	/* Every other CPU online and alone: "0,2,4,...,1022" fits. */
	size_t len = (size_t)hp->max_cpus * 5 + 1;
	char *list = malloc(len);
	struct hp_events ev;
	unsigned int count;

	if (!list) {
		pr_err("CPU %u: out of memory for the online-set event", cpu);
		return;
	}
	pthread_mutex_lock(&hp->lock);
	count = online_cpulist(hp, list, len);
	ev = hp->ev;
	pthread_mutex_unlock(&hp->lock);
	if (ev.online)
		ev.online(ev.ctx, cpu, online, count, list);
	free(list);
}

void hp_set_batched(struct hotplug *hp, unsigned int cpu, bool on)
{
	pthread_mutex_lock(&hp->lock);
	hp->slots[cpu].batched = on;
	pthread_mutex_unlock(&hp->lock);
}

void hp_set_prestaged(struct hotplug *hp, unsigned int cpu, bool on)
{
	pthread_mutex_lock(&hp->lock);
	hp->slots[cpu].prestaged = on;
	pthread_mutex_unlock(&hp->lock);
}

int hp_refuse(struct hp_report *rep, unsigned int cpu, int code,
	      const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vrecord(rep, cpu, code, fmt, ap);
	va_end(ap);
	return ret;
}

void hp_vcpu_started(void *ctx, unsigned int cpu)
{
	struct hotplug *hp = ctx;
	struct hp_events ev;
	char id[sizeof(hp->slots[0].id)];

	if (cpu >= hp->max_cpus)
		return;
	pthread_mutex_lock(&hp->lock);
	hp->slots[cpu].w.started = true;
	hp_set_stage_locked(hp, cpu, HP_STAGE_STARTED, &ev, id, sizeof(id));
	pthread_cond_broadcast(&hp->cond);
	pthread_mutex_unlock(&hp->lock);
	hp_stage_notify(&ev, cpu, id, HP_STAGE_STARTED);
}
