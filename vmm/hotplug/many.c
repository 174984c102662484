// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whole operations on many vCPUs (hotplug_many.h): bursts of hot-adds or
 * hot-removals as one batch, and a resize that is all or nothing.  The
 * policy lives here so that every front end gets the same: who joins a
 * batch, what a CPU that fails is walked back to, the order in which
 * results are known, and the undo of a resize.  The walks themselves are
 * the controller's single-CPU operations and batch.c's phases; each takes
 * the operation gate for itself, so a burst is a sequence of operations,
 * as the same requests sent one by one would be.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hotplug_internal.h"
#include "hotvm/guest_states.h"
#include "log.h"

int hotplug_add_check(struct hotplug *hp, unsigned int cpu, const char *id)
{
	struct hp_cpu_view v;

	if (id)
		for (unsigned int i = 0; i < hp->max_cpus; i++)
			if (!hotplug_cpu_view(hp, i, &v) && !strcmp(v.id, id))
				return -EADDRINUSE;
	if (hotplug_cpu_view(hp, cpu, &v))
		return -EINVAL;
	/* Created ahead of the guest (--prestage, a host target) is free. */
	if (hotplug_cpu_plugged(&v) &&
	    (v.host.state > HOST_VCPU_CREATE || v.host.broken || v.present))
		return -EEXIST;
	return 0;
}

/* One call's working set: per call, not static. */
struct many {
	struct hotplug *hp;
	const struct hotplug_req *reqs;
	bool add;
	int timeout_ms;
	const struct hotplug_many_ops *ops;
	int *rcs;
	int failed;
	struct hp_report *rep; /* the walk in progress */
	/* The batch: request index, CPU, first-phase result and reason. */
	unsigned int *k, *cpus, nb;
	int *res;
	struct hv_err *errs;
	bool *alone; /* by request: left out of the batch */
};

static int many_alloc(struct many *m, unsigned int n)
{
	m->rep = malloc(sizeof(*m->rep));
	m->k = calloc(n, sizeof(*m->k));
	m->cpus = calloc(n, sizeof(*m->cpus));
	m->res = calloc(n, sizeof(*m->res));
	m->errs = calloc(n, sizeof(*m->errs));
	m->alone = calloc(n, sizeof(*m->alone));
	return m->rep && m->k && m->cpus && m->res && m->errs && m->alone
		       ? 0
		       : -ENOMEM;
}

static void many_free(struct many *m)
{
	free(m->rep);
	free(m->k);
	free(m->cpus);
	free(m->res);
	free(m->errs);
	free(m->alone);
}

static struct hp_report *fresh(struct hp_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	return rep;
}

static void done(struct many *m, const struct hotplug_result *r)
{
	m->failed += r->rc != 0;
	if (m->rcs)
		m->rcs[r->k] = r->rc;
	if (m->ops && m->ops->done)
		m->ops->done(m->ops->ctx, r);
}

static int admit(struct many *m, unsigned int k, enum hotplug_phase phase)
{
	const struct hotplug_req *q = &m->reqs[k];
	int rc = 0;

	if (m->add)
		rc = hotplug_add_check(m->hp, q->cpu, q->id);
	if (rc) {
		done(m, &(struct hotplug_result){
				.k = k,
				.cpu = q->cpu,
				.add = true,
				.phase = phase,
				.rc = rc,
			});
		return rc;
	}
	if (m->ops && m->ops->admit)
		rc = m->ops->admit(m->ops->ctx, k, phase);
	m->failed += rc != 0;
	if (rc && m->rcs)
		m->rcs[k] = rc;
	return rc;
}

/* Whether request @q names a CPU or an id a request of the batch names. */
static bool taken(const struct many *m, const struct hotplug_req *q)
{
	for (unsigned int i = 0; i < m->nb; i++) {
		const struct hotplug_req *b = &m->reqs[m->k[i]];

		if (b->cpu == q->cpu ||
		    (m->add && q->id && b->id && !strcmp(b->id, q->id)))
			return true;
	}
	return false;
}

/* Who joins the batch, in request order. */
static void gather(struct many *m, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		if (taken(m, &m->reqs[k])) {
			m->alone[k] = true;
			continue;
		}
		if (admit(m, k, HOTPLUG_PHASE_BEGIN))
			continue;
		m->k[m->nb] = k;
		m->cpus[m->nb++] = m->reqs[k].cpu;
	}
}

/*
 * A report holding only the reason the first phase gave for batch member
 * @i, as the same request sent alone would have it; NULL without one.
 */
static const struct hp_report *reason(struct many *m, unsigned int i)
{
	if (!hv_err_is_set(&m->errs[i]))
		return NULL;
	fresh(m->rep)->err = m->errs[i];
	return m->rep;
}

/* One CPU's own walk, by itself: no batch is waiting for it. */
static int walk(struct many *m, const struct hotplug_req *q)
{
	if (m->add)
		return hotplug_cpu_add(m->hp, q->cpu, q->id, m->timeout_ms,
				       q->wait, fresh(m->rep));
	return hotplug_cpu_remove(m->hp, q->cpu, m->timeout_ms, fresh(m->rep));
}

/*
 * Batch member @i finishes its walk.  A failed add is walked back to
 * offline before its result is told, so the result says where it ended;
 * a failed removal is told first (where its walk left it), then walked
 * back to online.
 */
static void finish(struct many *m, unsigned int i)
{
	const struct hotplug_req *q = &m->reqs[m->k[i]];
	struct hotplug_result r = {
		.k = m->k[i],
		.cpu = q->cpu,
		.add = m->add,
		.phase = HOTPLUG_PHASE_BEGIN,
		.rc = m->res[i],
		.rep = reason(m, i),
	};

	if (!r.rc) {
		r.phase = HOTPLUG_PHASE_FINISH;
		r.rc = walk(m, q);
		r.rep = m->rep;
		r.walk_back = r.rc && !m->add;
		if (r.rc && m->add)
			hotplug_batch_abandon(m->hp, q->cpu, true,
					      m->timeout_ms);
	}
	done(m, &r);
	if (r.walk_back)
		hotplug_batch_abandon(m->hp, q->cpu, false, m->timeout_ms);
}

/* A request run by itself, after the batch (or without one). */
static void run_alone(struct many *m, unsigned int k)
{
	const struct hotplug_req *q = &m->reqs[k];
	struct hotplug_result r = {
		.k = k,
		.cpu = q->cpu,
		.add = m->add,
		.phase = HOTPLUG_PHASE_ALONE,
	};

	if (admit(m, k, HOTPLUG_PHASE_ALONE))
		return;
	r.rc = walk(m, q);
	r.rep = m->rep;
	done(m, &r);
}

static int many(struct many *m, unsigned int n)
{
	for (unsigned int k = 0; m->rcs && k < n; k++)
		m->rcs[k] = 0;
	if (many_alloc(m, n)) {
		/* No room for a batch: one at a time, as they came. */
		struct hp_report rep;

		free(m->rep);
		m->rep = &rep;
		for (unsigned int k = 0; k < n; k++)
			run_alone(m, k);
		m->rep = NULL;
	} else {
		gather(m, n);
		if (m->add)
			hotplug_batch_add_begin(m->hp, m->cpus, m->nb,
						m->timeout_ms, m->res, m->errs);
		else
			hotplug_batch_remove_begin(m->hp, m->cpus, m->nb,
						   m->timeout_ms, m->res,
						   m->errs);
		for (unsigned int i = 0; i < m->nb; i++)
			finish(m, i);
		for (unsigned int k = 0; k < n; k++)
			if (m->alone[k])
				run_alone(m, k);
	}
	many_free(m);
	return m->failed;
}

/* A whole burst, with Linux's side traced around it (linux_trace.c). */
static int many_traced(struct many *m, unsigned int n)
{
	bool traced = hp_lx_trace_begin(m->hp);
	int ret = many(m, n);

	hp_lx_trace_end(m->hp, traced);
	return ret;
}

int hotplug_add_many(struct hotplug *hp, const struct hotplug_req *reqs,
		     unsigned int n, int timeout_ms,
		     const struct hotplug_many_ops *ops, int *rcs)
{
	return many_traced(&(struct many){ .hp = hp,
					   .reqs = reqs,
					   .add = true,
					   .timeout_ms = timeout_ms,
					   .ops = ops,
					   .rcs = rcs },
			   n);
}

int hotplug_remove_many(struct hotplug *hp, const struct hotplug_req *reqs,
			unsigned int n, int timeout_ms,
			const struct hotplug_many_ops *ops, int *rcs)
{
	return many_traced(&(struct many){ .hp = hp,
					   .reqs = reqs,
					   .timeout_ms = timeout_ms,
					   .ops = ops,
					   .rcs = rcs },
			   n);
}
