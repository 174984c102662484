// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cpuhp library's platform for the host table (its lock, its log, the
 * notice of every step), and the copy of each CPU's entry that queries
 * read while a walk holds the table (docs/design.md §4).
 */
#include <stdarg.h>
#include <stdio.h>

#include "hotplug_internal.h"

static void plat_lock(void *ctx)
{
	pthread_mutex_lock(&((struct hotplug *)ctx)->table_lock);
}

static void plat_unlock(void *ctx)
{
	pthread_mutex_unlock(&((struct hotplug *)ctx)->table_lock);
}

static void plat_log(void *ctx, enum cpuhp_log_level level, const char *fmt,
		     va_list ap)
{
	(void)ctx;
	if (level >= CPUHP_LOG_DEBUG)
		return;
	/* The library's messages end in a newline already. */
	fputs("hotvm: ", stderr);
	vfprintf(stderr, fmt, ap);
}

/*
 * Takes a fresh copy of @cpu's host table entry for queries.  table_lock
 * is recursive: a walk that notifies already holds it.
 */
static void snap_host_at(struct hotplug *hp, unsigned int cpu,
			 const struct cpuhp_notice *n)
{
	struct hp_slot *s = &hp->slots[cpu];
	struct cpuhp_cpu c;
	bool parked;

	pthread_mutex_lock(&hp->table_lock);
	cpuhp_cpu_info(&hp->m, cpu, &c);
	/* A step is notified before the library moves the CPU past it. */
	if (n && n->kind == CPUHP_NOTICE_STEP && !n->ret)
		c.state = n->bringup ? n->state : n->state - 1;
	parked = vcpu_is_parked(&s->vcpu);
	pthread_mutex_unlock(&hp->table_lock);
	pthread_mutex_lock(&hp->lock);
	s->host_view = c;
	s->parked_view = parked;
	pthread_mutex_unlock(&hp->lock);
}

void hp_snap_host(struct hotplug *hp, unsigned int cpu)
{
	snap_host_at(hp, cpu, NULL);
}

static void plat_notify(void *ctx, const struct cpuhp_notice *n)
{
	struct hotplug *hp = ctx;
	struct hp_events ev;
	uint64_t now = hv_now_ns();

	if (n->cpu < hp->max_cpus)
		snap_host_at(hp, n->cpu, n);
	pthread_mutex_lock(&hp->lock);
	hp_record_locked(hp, n->cpu, HP_SIDE_HOST, n, now);
	ev = hp->ev;
	pthread_mutex_unlock(&hp->lock);
	if (ev.state)
		ev.state(ev.ctx, HP_SIDE_HOST, n, now);
}

int hp_host_state(struct hotplug *hp, unsigned int cpu)
{
	struct cpuhp_cpu c;

	pthread_mutex_lock(&hp->table_lock);
	cpuhp_cpu_info(&hp->m, cpu, &c);
	pthread_mutex_unlock(&hp->table_lock);
	return c.state;
}

void hp_platform_init(struct hotplug *hp)
{
	hp->plat = (struct cpuhp_platform){
		.lock = plat_lock,
		.unlock = plat_unlock,
		.log = plat_log,
		.notify = plat_notify,
		.ctx = hp,
	};
}
