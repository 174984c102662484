// SPDX-License-Identifier: GPL-2.0-only
/*
 * The public entry points of the single-CPU operations (hotplug.h): each
 * waits at the operation gate (op.c) and runs its operation (cpu_ops.c);
 * a hot-add and a removal also open Linux's trace window around it
 * (linux_trace.c) and refill the pool of vCPUs created ahead
 * (prestage.c) when they used it; after the reply, Linux's trace is read
 * (hotplug_after_reply()).
 */
#include "hotplug_internal.h"
#include "hotplug_linux.h"
#include "linux_file.h"

/*
 * A hot-add and a removal (alone, or as a burst's or resize's parts, which
 * open the window around the whole) are traced on Linux's side with the
 * guest agent: hp_lx_trace_begin() and _end() run outside the gate, and
 * the window is read after the reply (hotplug_after_reply()).
 */
/*
 * Linux's trace window opened, then the gate entered: 0, or the refusal
 * (the VM is shutting down) with the window closed again.
 */
static int traced_enter(struct hotplug *hp, struct hp_report *rep, bool *traced)
{
	int ret;

	*traced = hp_lx_trace_begin(hp);
	ret = hp_op_enter(hp, false);
	if (ret) {
		hp_lx_trace_end(hp, *traced);
		return hv_err_set(rep ? &rep->err : NULL, ret,
				  "the VM is shutting down");
	}
	return 0;
}

/* The window is read after the reply, which says so. */
static void traced_exit(struct hotplug *hp, bool traced, struct hp_report *rep)
{
	hp_op_exit(hp);
	hp_lx_trace_end(hp, traced);
	if (traced && rep)
		rep->linux_trace_pending = true;
}

int hotplug_cpu_add(struct hotplug *hp, unsigned int cpu, const char *id,
		    int timeout_ms, enum hotplug_wait wait,
		    struct hp_report *rep)
{
	bool traced;
	int ret = traced_enter(hp, rep, &traced);

	if (ret)
		return ret;
	ret = hp_cpu_add(hp, cpu, id, timeout_ms, wait, rep);
	if (!ret)
		hp_prestage_took(hp, cpu);
	traced_exit(hp, traced, rep);
	return ret;
}

int hotplug_cpu_remove(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		       struct hp_report *rep)
{
	bool traced;
	int ret = traced_enter(hp, rep, &traced);

	if (ret)
		return ret;
	ret = hp_cpu_remove(hp, cpu, timeout_ms, rep);
	if (!ret)
		hp_prestage_fill(hp); /* a pool slot may have gone to a batch */
	traced_exit(hp, traced, rep);
	return ret;
}

int hotplug_set_target(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		       int state, int timeout_ms, struct hp_report *rep)
{
	int ret = hp_op_enter(hp, false);

	if (ret)
		return hv_err_set(rep ? &rep->err : NULL, ret,
				  "the VM is shutting down");
	ret = hp_set_target(hp, cpu, side, state, timeout_ms, rep);
	hp_op_exit(hp);
	return ret;
}

int hotplug_cpu_recover(struct hotplug *hp, unsigned int cpu, int timeout_ms,
			struct hp_report *rep, bool *online)
{
	int ret = hp_op_enter(hp, false);

	*online = false;
	if (ret)
		return hv_err_set(rep ? &rep->err : NULL, ret,
				  "the VM is shutting down");
	ret = hp_cpu_recover(hp, cpu, timeout_ms, rep, online);
	hp_op_exit(hp);
	return ret;
}

void hotplug_after_reply(void *hp)
{
	hp_lx_trace_settle(hp);
}

void hotplug_linux_trace_wait(struct hotplug *hp)
{
	/* The read's calls, each within its own deadline. */
	hp_lx_trace_wait(hp, 8 * LINUX_AGENT_TIMEOUT_MS);
}
