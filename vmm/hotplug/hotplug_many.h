/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hotplug controller's operations on many vCPUs (docs/design.md §8):
 * the phases of a batch (batch.c), a burst of hot-adds or removals as one
 * batch (many.c), and a resize, all or nothing (resize.c).
 */
#ifndef HOTVM_HOTPLUG_MANY_H
#define HOTVM_HOTPLUG_MANY_H

#include <stdbool.h>

#include "hotplug_types.h"
#include "hv_err.h"

/*
 * Batches (batch.c), Linux 6.5's parallel bring-up on the host: begin
 * walks every CPU of @cpus to vcpu:create (add) or down to
 * guest:ap-starting (remove), then presents them (asks for their
 * removal) all at once under one GED event; results[i] is each CPU's
 * errno, and the first is returned, errs[i] (errs may be NULL) the
 * reason in the step's words.  The caller then finishes each CPU
 * with results[i] == 0 by hotplug_cpu_add() or hotplug_cpu_remove(),
 * which wait for the guest's answer without asking again; a CPU whose
 * finish failed goes back where it was with hotplug_batch_abandon() (an
 * add to offline, a removal back to online), so every CPU of the batch
 * ends fully done or as it was.
 */
int hotplug_batch_add_begin(struct hotplug *hp, const unsigned int *cpus,
			    unsigned int n, int timeout_ms, int *results,
			    struct hv_err *errs);
int hotplug_batch_remove_begin(struct hotplug *hp, const unsigned int *cpus,
			       unsigned int n, int timeout_ms, int *results,
			       struct hv_err *errs);
void hotplug_batch_abandon(struct hotplug *hp, unsigned int cpu, bool add,
			   int timeout_ms);

/*
 * Whole operations on many vCPUs (many.c): a burst of hot-adds or
 * hot-removals as one batch (hotplug_batch_*() above, one GED event for
 * all), and a resize, all or nothing.  The caller names the CPUs and
 * says what to call them; the controller orders the walks, decides who
 * joins the batch, walks back what failed and says, CPU by CPU, what
 * became of each and why.
 */

/* One request of a burst: a slot, the QMP id to give it, what to wait for. */
struct hotplug_req {
	unsigned int cpu;
	const char *id;		/* hot-add only; may be NULL */
	enum hotplug_wait wait; /* hot-add only */
};

enum hotplug_phase {
	HOTPLUG_PHASE_BEGIN,  /* refused by the batch's first phase */
	HOTPLUG_PHASE_FINISH, /* its own walk, after the batch's event */
	HOTPLUG_PHASE_ALONE,  /* run by itself after the batch */
	HOTPLUG_PHASE_UNDO,   /* a failed resize putting it back */
};

/* What became of one CPU. */
struct hotplug_result {
	unsigned int k; /* the request's index (resize: the CPU's step) */
	unsigned int cpu;
	bool add; /* this walk was a hot-add (an undo: the reverse step) */
	enum hotplug_phase phase;
	int rc; /* 0 or -errno */
	/*
	 * The walk's report and reason.  BEGIN: no steps, only the first
	 * phase's reason, or NULL when it gave none.
	 */
	const struct hp_report *rep;
	/*
	 * A batched removal whose own walk failed: it is walked back to
	 * online as soon as done() returns (done() still sees where the
	 * removal left it).  A failed batched add was walked back to
	 * offline before done().
	 */
	bool walk_back;
};

/*
 * The caller's part, called on the thread of the operation, one at a
 * time, in the order the walks end.  Either may be NULL.
 */
struct hotplug_many_ops {
	void *ctx;
	/*
	 * Request @k is about to join the batch (BEGIN) or to run by itself
	 * (ALONE), after the controller's own checks: 0, or an errno that
	 * ends it there (the caller has said why; done() is not called).
	 */
	int (*admit)(void *ctx, unsigned int k, enum hotplug_phase phase);
	/* One CPU's result, as soon as it is known. */
	void (*done)(void *ctx, const struct hotplug_result *r);
};

/*
 * A burst of @n hot-adds (hot-removals) as one batch: every request that
 * passes hotplug_add_check() (a removal: any) and names no CPU or id an
 * earlier one of the batch names joins it; the batch begins, then each
 * CPU finishes on its own, in request order; one that fails goes back
 * where it was and the others still finish.  Then the requests left out
 * run one by one, as they would have had the burst come one at a time.
 * Each request's rc goes to rcs[k] (may be NULL).  Returns how many
 * failed.  @timeout_ms as hotplug_cpu_add().
 */
int hotplug_add_many(struct hotplug *hp, const struct hotplug_req *reqs,
		     unsigned int n, int timeout_ms,
		     const struct hotplug_many_ops *ops, int *rcs);
int hotplug_remove_many(struct hotplug *hp, const struct hotplug_req *reqs,
			unsigned int n, int timeout_ms,
			const struct hotplug_many_ops *ops, int *rcs);

/* One step of a resize: @cpu hot-added, or hot-removed. */
struct hotplug_step {
	unsigned int cpu;
	bool added;
};

struct hotplug_resize_result {
	unsigned int count; /* counted vCPUs when the resize ended */
	/* The caller's, hotplug_max_cpus() long: the steps, in order. */
	struct hotplug_step *steps;
	unsigned int n;		  /* steps done (on failure: and undone) */
	unsigned int undo_failed; /* of those, how many stayed done */
};

/*
 * Resize to @count vCPUs the host table holds online (the host's count,
 * never the guest's word): hot-adds the lowest free slots, or hot-removes
 * the highest such CPUs but the boot CPU, as one batch.  All or nothing: when a CPU fails (its rc is
 * returned, its done() is the first with an error), or fewer than @count
 * can be reached (-ENOSPC), every step done is undone, newest first,
 * each with a done() of phase UNDO.  0 on success.
 */
int hotplug_resize(struct hotplug *hp, unsigned int count, int timeout_ms,
		   const struct hotplug_many_ops *ops,
		   struct hotplug_resize_result *res);

#endif
