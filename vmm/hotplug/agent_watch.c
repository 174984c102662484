// SPDX-License-Identifier: GPL-2.0-only
/*
 * The periodic agent check's thread (docs/design.md §6.6, §11): every
 * period it asks Linux for its CPUs (linux_view.c's
 * hotplug_agent_refresh(), which stays off the wire while an operation
 * runs) and, once the agent answers, has what Linux's trace windows need
 * done ahead (linux_trace.c's hp_lx_trace_prepare()).  Its own thread,
 * so the agent never holds the machine thread.
 */
#include <errno.h>
#include <pthread.h>

#include "clock.h"
#include "hotplug_internal.h"
#include "hotplug_vmm.h"
#include "qga.h"
#include "seccomp_policy.h"

/* The periodic check's thread: until hotplug_agent_watch_stop(). */
static void *agent_watch(void *arg)
{
	struct hotplug *hp = arg;
	int period = hp->watch_period_ms;
	struct timespec at;

	seccomp_enter(SECCOMP_THREAD_AGENT_CHECK);
	pthread_mutex_lock(&hp->lock);
	while (!hp->watch_stop) {
		at = hv_deadline(period);
		/* hp->cond is broadcast at every change: wait out the period. */
		while (!hp->watch_stop &&
		       pthread_cond_timedwait(&hp->cond, &hp->lock, &at) !=
			       ETIMEDOUT)
			;
		if (hp->watch_stop)
			break;
		pthread_mutex_unlock(&hp->lock);
		/*
		 * A missing agent costs this thread one timeout a check and
		 * nothing else, so the period stays: one that starts late
		 * (Linux's boot) is found at once.
		 */
		if (!hotplug_agent_refresh(hp, false))
			hp_lx_trace_prepare(hp); /* off an operation's path */
		pthread_mutex_lock(&hp->lock);
	}
	pthread_mutex_unlock(&hp->lock);
	return NULL;
}

int hotplug_agent_watch_start(struct hotplug *hp, int period_ms)
{
	int ret;

	if (!hp->agent)
		return 0;
	hp->watch_period_ms = period_ms;
	hp->watch_stop = false;
	ret = -pthread_create(&hp->watch, NULL, agent_watch, hp);
	if (!ret)
		hp->watching = true;
	return ret;
}

void hotplug_agent_watch_stop(struct hotplug *hp)
{
	if (!hp->watching)
		return;
	pthread_mutex_lock(&hp->lock);
	hp->watch_stop = true;
	pthread_cond_broadcast(&hp->cond);
	pthread_mutex_unlock(&hp->lock);
	qga_cancel(hp->agent);
	pthread_join(hp->watch, NULL);
	hp->watching = false;
}
