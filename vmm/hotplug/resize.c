// SPDX-License-Identifier: GPL-2.0-only
/*
 * Resize to a number of vCPUs (hotplug_many.h, hotplug_resize()), as Cloud
 * Hypervisor's CpuManager::resize does it, all or nothing: the lowest free
 * slots are hot-added, or the highest counted CPUs hot-removed, as one
 * batch (many.c); if any CPU fails, or the count cannot be reached, every
 * step that was done is undone, newest first, so the VM ends as it began
 * or says which steps stayed.
 *
 * The whole resize is one operation (hp_op_enter()): it counts and picks
 * its slots inside the gate, so a reset or another operation cannot run
 * between its look and its walk (a reset has the boot CPUs walked down
 * for a while: counted then, they looked free).  A reset during the
 * resize cancels it whole, its undo done on the host's side alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hotplug_internal.h"
#include "hotvm/guest_states.h"
#include "log.h"

struct resize {
	struct hotplug *hp;
	int timeout_ms;
	const struct hotplug_many_ops *ops; /* the caller's */
	struct hotplug_resize_result *res;
	struct hotplug_req *reqs;
	unsigned int n;
	int first; /* the first CPU's failure */
	/* A removed CPU's id, by slot, to give back if it is undone. */
	char (*ids)[sizeof(((struct hp_slot *)0)->id)];
	struct hp_report rep;
};

static void tell(struct resize *z, const struct hotplug_result *r)
{
	if (z->ops && z->ops->done)
		z->ops->done(z->ops->ctx, r);
}

/* Each CPU of the batch as it ends: a step done, or the failure. */
static void step_done(void *ctx, const struct hotplug_result *r)
{
	struct resize *z = ctx;
	struct hotplug_resize_result *res = z->res;

	if (r->rc && !z->first)
		z->first = r->rc;
	if (!r->rc) {
		res->steps[res->n++] =
			(struct hotplug_step){ .cpu = r->cpu, .added = r->add };
		if (r->add)
			res->count++;
		else
			res->count--;
	}
	tell(z, r);
}

/*
 * Whether the host holds @v online: the host's table alone, never the
 * guest's word (its reports, the agent's online list), so a guest
 * cannot buy a vCPU by saying it lacks one.
 */
static bool held(const struct hp_cpu_view *v)
{
	return v->host.state == HOST_ONLINE && !v->host.broken;
}

static unsigned int counted(struct hotplug *hp)
{
	unsigned int have = 0;
	struct hp_cpu_view v;

	for (unsigned int cpu = 0; cpu < hp->max_cpus; cpu++)
		have += !hotplug_cpu_view(hp, cpu, &v) && held(&v);
	return have;
}

/* The lowest free slots, enough to reach @count. */
static void choose_add(struct resize *z, unsigned int count)
{
	struct hp_cpu_view v;

	for (unsigned int cpu = 0;
	     z->res->count + z->n < count && cpu < z->hp->max_cpus; cpu++)
		if (!hotplug_cpu_view(z->hp, cpu, &v) &&
		    !hotplug_cpu_plugged(&v))
			z->reqs[z->n++] = (struct hotplug_req){ .cpu = cpu };
}

/*
 * The highest held CPUs but the boot CPU, down to @count; one marked for
 * cpuhp-recover by the host's side would be refused, so it stays.
 */
static void choose_remove(struct resize *z, unsigned int count)
{
	struct hp_cpu_view v;

	for (unsigned int cpu = z->hp->max_cpus;
	     z->res->count - z->n > count && cpu-- > 0;) {
		if (!guest_cpu_removable(cpu) ||
		    hotplug_cpu_view(z->hp, cpu, &v) || !held(&v) ||
		    (v.disagree && !v.guest_lied))
			continue;
		memcpy(z->ids[cpu], v.id, sizeof(z->ids[cpu]));
		z->reqs[z->n++] = (struct hotplug_req){ .cpu = cpu };
	}
}

static bool resetting(struct hotplug *hp)
{
	bool r;

	pthread_mutex_lock(&hp->lock);
	r = hp->resetting;
	pthread_mutex_unlock(&hp->lock);
	return r;
}

/*
 * Undoes step @i; its result is told with phase UNDO.  During a reset the
 * guest is going away and answers nothing (every wait for it ends with
 * -ECANCELED), so the step is undone on the host's side alone, as the
 * reset's own walk would do it (no hook's veto): a hot-added CPU walked
 * down, a removed one brought back as a boot CPU is at boot (presented
 * without an event, its vCPU waiting for INIT/SIPI).  The reset's next
 * boot then finds the CPUs the VM had before the resize.
 */
static void undo_step(struct resize *z, unsigned int i)
{
	const struct hotplug_step *st = &z->res->steps[i];
	const char *id = z->ids[st->cpu][0] ? z->ids[st->cpu] : NULL;
	bool host_only = resetting(z->hp);
	int rc;

	memset(&z->rep, 0, sizeof(z->rep));
	z->hp->forced = host_only;
	z->hp->booting = host_only && !st->added;
	if (st->added)
		rc = hotplug_cpu_remove(z->hp, st->cpu, z->timeout_ms, &z->rep);
	else
		rc = hotplug_cpu_add(z->hp, st->cpu, id, z->timeout_ms,
				     HOTPLUG_WAIT_DEFAULT, &z->rep);
	z->hp->forced = z->hp->booting = false;
	if (rc) {
		pr_err("resize: cannot undo the %s of CPU %u: %s",
		       st->added ? "hot-add" : "hot-remove", st->cpu,
		       hv_err_is_set(&z->rep.err) ? z->rep.err.msg
						  : strerror(-rc));
		z->res->undo_failed++;
	}
	tell(z, &(struct hotplug_result){
			.k = i,
			.cpu = st->cpu,
			.add = !st->added,
			.phase = HOTPLUG_PHASE_UNDO,
			.rc = rc,
			.rep = &z->rep,
		});
}

static int resize(struct resize *z, unsigned int count)
{
	const struct hotplug_many_ops step_ops = { .ctx = z,
						   .done = step_done };
	int rc;

	z->res->count = counted(z->hp);
	if (z->res->count < count) {
		choose_add(z, count);
		hotplug_add_many(z->hp, z->reqs, z->n, z->timeout_ms, &step_ops,
				 NULL);
	} else if (z->res->count > count) {
		choose_remove(z, count);
		hotplug_remove_many(z->hp, z->reqs, z->n, z->timeout_ms,
				    &step_ops, NULL);
	}
	rc = z->first;
	if (!rc && z->res->count != count)
		rc = -ENOSPC;
	for (unsigned int i = z->res->n; rc && i-- > 0;)
		undo_step(z, i);
	return rc;
}

int hotplug_resize(struct hotplug *hp, unsigned int count, int timeout_ms,
		   const struct hotplug_many_ops *ops,
		   struct hotplug_resize_result *res)
{
	struct resize *z = calloc(1, sizeof(*z));
	int rc = -ENOMEM;

	res->count = res->n = res->undo_failed = 0;
	if (z) {
		*z = (struct resize){
			.hp = hp,
			.timeout_ms = timeout_ms,
			.ops = ops,
			.res = res,
			.reqs = calloc(hp->max_cpus, sizeof(*z->reqs)),
			.ids = calloc(hp->max_cpus, sizeof(*z->ids))
		};
		if (z->reqs && z->ids) {
			bool traced = hp_lx_trace_begin(hp);

			rc = hp_op_enter(hp, false);
			if (!rc) {
				rc = resize(z, count);
				hp_op_exit(hp);
			}
			hp_lx_trace_end(hp, traced);
		}
		free(z->reqs);
		free(z->ids);
	}
	free(z);
	return rc;
}
