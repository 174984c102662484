// SPDX-License-Identifier: GPL-2.0-only
/*
 * Batched hotplug (Linux 6.5's parallel bring-up shape, on the host): every
 * vCPU of a batch is walked to the host's kick state, vcpu:create, then all
 * of them are presented (or asked to go) at once under one GED event, so
 * the guest's CPU scan finds them together and its parallel bring-up takes
 * them in one go; then each CPU's own walk finishes (hotplug_cpu_add or
 * hotplug_cpu_remove), and each gets its own result.  See hotplug_many.h.
 *
 * The one hook into the host table: a slot marked @batched has had its
 * request put to the guest here, so guest:ap-starting only waits for the
 * answer (ask_guest() in host_table.c) instead of asking again.
 */
#include <errno.h>
#include <string.h>

#include "hotplug_internal.h"
#include "hotvm/abi.h"
#include "log.h"

/* Puts @request for every CPU with results[i] == 0, then one GED event. */
static void batch_ask(struct hotplug *hp, const unsigned int *cpus,
		      unsigned int n, int *results,
		      int (*request)(struct hpregs *, unsigned int))
{
	unsigned int asked = 0;
	int ret;

	for (unsigned int i = 0; i < n; i++) {
		struct hp_slot *s = &hp->slots[cpus[i]];

		if (results[i])
			continue;
		/* Linux offlines it first, in its own walk (linux_fault.c). */
		if (request == hpregs_request_unplug &&
		    hp_linux_fault_armed(hp, cpus[i]))
			continue;
		/*
		 * Armed before the request: an answer cannot come first.
		 * Marked batched before it too: the batch runs outside the
		 * operation gate between its CPUs' walks, and an agreement
		 * check on demand (query-cpuhp) must not judge a CPU shown
		 * to the guest before its walk is on (hp->lock: the check
		 * reads the mark under it).
		 */
		pthread_mutex_lock(&hp->lock);
		s->w = (struct hp_wait_flags){ .started = atomic_load(
						       &s->vcpu.started) };
		s->batched = true;
		/* Its reports are believed from now on. */
		s->asked |= request == hpregs_plug ? HP_ASK_UP : HP_ASK_DOWN;
		pthread_mutex_unlock(&hp->lock);
		if (request == hpregs_plug)
			hp_set_stage(hp, cpus[i], HP_STAGE_PRESENTED);
		ret = request(hp->regs, cpus[i]);
		if (ret) {
			pr_err("CPU %u: the register block refused the "
			       "request: %s",
			       cpus[i], strerror(-ret));
			hp_set_batched(hp, cpus[i], false);
			results[i] = ret;
			continue;
		}
		asked++;
	}
	if (!asked)
		return;
	ret = ged_raise(hp->ged, ABI_GED_EVT_CPU);
	if (!ret)
		return;
	/* No event: each CPU's own walk asks again (and raises again). */
	pr_err("batch: cannot raise the GED interrupt: %s", strerror(-ret));
	for (unsigned int i = 0; i < n; i++)
		hp_set_batched(hp, cpus[i], false);
}

int hotplug_batch_add_begin(struct hotplug *hp, const unsigned int *cpus,
			    unsigned int n, int timeout_ms, int *results,
			    struct hv_err *errs)
{
	static struct hp_report rep; /* the operation thread only */
	int first = 0;

	for (unsigned int i = 0; i < n; i++) {
		hv_err_clear(&rep.err);
		results[i] =
			hotplug_set_target(hp, cpus[i], HP_SIDE_HOST,
					   HOST_VCPU_CREATE, timeout_ms, &rep);
		if (errs)
			errs[i] = rep.err;
		if (results[i] && !first)
			first = results[i];
	}
	batch_ask(hp, cpus, n, results, hpregs_plug);
	return first;
}

int hotplug_batch_remove_begin(struct hotplug *hp, const unsigned int *cpus,
			       unsigned int n, int timeout_ms, int *results,
			       struct hv_err *errs)
{
	static struct hp_report rep;
	int first = 0;

	for (unsigned int i = 0; i < n; i++) {
		hv_err_clear(&rep.err);
		results[i] =
			cpus[i] ? hotplug_set_target(hp, cpus[i], HP_SIDE_HOST,
						     HOST_AP_STARTING,
						     timeout_ms, &rep)
				: -EPERM;
		if (errs)
			errs[i] = rep.err;
		if (results[i] && !first)
			first = results[i];
	}
	batch_ask(hp, cpus, n, results, hpregs_request_unplug);
	return first;
}

void hotplug_batch_abandon(struct hotplug *hp, unsigned int cpu, bool add,
			   int timeout_ms)
{
	static struct hp_report rep;
	int ret;

	/*
	 * An add: vcpu:create's teardown sees the batch's plug still out and
	 * has the guest give the CPU back first.  A removal: the request to
	 * eject is withdrawn (an eject already done is the guest's word: the
	 * walk back presents the CPU again).
	 */
	if (add) {
		ret = hotplug_set_target(hp, cpu, HP_SIDE_HOST, HOST_OFFLINE,
					 timeout_ms, &rep);
	} else {
		hp_set_batched(hp, cpu, false);
		hpregs_cancel_unplug(hp->regs, cpu);
		ret = hotplug_cpu_add(hp, cpu, NULL, timeout_ms,
				      HOTPLUG_WAIT_DEFAULT, &rep);
	}
	if (ret)
		hp_mark_disagree(
			hp, cpu, "a batch could not walk it back %s (%s)",
			add ? "to offline" : "to online", strerror(-ret));
}
