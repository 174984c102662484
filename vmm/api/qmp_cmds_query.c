// SPDX-License-Identifier: GPL-2.0-only
/*
 * The queries: QEMU's with QEMU's shapes, and hotvm's own (query-cpuhp,
 * both state tables and where each vCPU is in them, and the like).  Each
 * is named, with its reply's members, by its row in qmp_cmds_table.c.  They run on the
 * query thread (query-status on the I/O thread) while an operation may
 * run, and change nothing but the QOM paths they hand out.
 */
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include <string.h>

#include "hotplug_linux.h"
#include "qga.h"
#include "qmp.h"
#include "linux_cpuhp.h"
#include "qmp_cmds_internal.h"
#include "vm.h"

/* Every slot, highest first as QEMU lists them; a path once plugged. */
QC_HANDLER(qc_query_hotpluggable_cpus)
{
	struct qmp_cmds *qc = ctx;
	struct json_object *a = json_object_new_array();

	(void)args;
	(void)err;
	for (unsigned int cpu = qc->max; cpu-- > 0;) {
		struct json_object *o = json_object_new_object();
		struct hp_cpu_view v;
		char path[QC_PATH_MAX];

		qc_view(qc, cpu, &v);
		qc_add_str(o, "type", QMP_CMDS_CPU_TYPE);
		qc_add_int(o, "vcpus-count", 1);
		json_object_object_add(o, "props", qc_cpu_props(cpu));
		if (*qc_qom_path(qc, &v, path, sizeof(path)))
			qc_add_str(o, "qom-path", path);
		json_object_array_add(a, o);
	}
	*ret = a;
	return 0;
}

/* The vCPUs the guest runs (hotplug_cpu_counted()), in index order. */
QC_HANDLER(qc_query_cpus_fast)
{
	struct qmp_cmds *qc = ctx;
	struct json_object *a = json_object_new_array();

	(void)args;
	(void)err;
	for (unsigned int cpu = 0; cpu < qc->max; cpu++) {
		struct json_object *o;
		struct hp_cpu_view v;
		char path[QC_PATH_MAX];

		if (qc_view(qc, cpu, &v) ||
		    !*qc_qom_path(qc, &v, path, sizeof(path)) ||
		    !hotplug_cpu_counted(&v))
			continue;
		o = json_object_new_object();
		qc_add_int(o, "cpu-index", cpu);
		qc_add_str(o, "qom-path", path);
		qc_add_int(o, "thread-id", v.host_tid);
		json_object_object_add(o, "props", qc_cpu_props(cpu));
		qc_add_str(o, "target", "x86_64");
		json_object_array_add(a, o);
	}
	*ret = a;
	return 0;
}

/* QEMU's RunState: before the first boot, running, or shutting down. */
QC_HANDLER(qc_query_status)
{
	struct qmp_cmds *qc = ctx;
	bool stopping = qc->vm && vm_stopping(qc->vm);
	bool started = hotplug_started(qc->hp);
	struct json_object *o = json_object_new_object();

	(void)args;
	(void)err;
	qc_add_bool(o, "running", !stopping && started);
	qc_add_bool(o, "singlestep", false);
	qc_add_str(o, "status",
		   stopping  ? "shutdown"
		   : started ? "running"
			     : "prelaunch");
	*ret = o;
	return 0;
}

/* ---- query-cpuhp ---- */

static struct json_object *states_json(struct qmp_cmds *qc, enum hp_side side)
{
	struct json_object *a = json_object_new_array();
	int nr = hotplug_nr_states(qc->hp, side);

	for (int i = 0; i < nr; i++) {
		struct cpuhp_state_info info;
		struct json_object *o;

		if (hotplug_state_info(qc->hp, side, i, &info))
			continue;
		o = json_object_new_object();
		qc_add_int(o, "state", i);
		qc_add_str(o, "name", info.name);
		qc_add_bool(o, "startup", info.has_startup);
		qc_add_bool(o, "teardown", info.has_teardown);
		qc_add_str(o, "section", cpuhp_section_name(info.section));
		qc_add_bool(o, "cant-stop", info.flags & CPUHP_F_CANT_STOP);
		qc_add_bool(o, "no-fail", info.flags & CPUHP_F_NOFAIL);
		json_object_array_add(a, o);
	}
	return a;
}

/* "key": n and "key-name": s, or both null for CPUHP_INVALID. */
static void add_state(struct qmp_cmds *qc, struct json_object *o,
		      const char *key, enum hp_side side, int state)
{
	char name_key[32];

	snprintf(name_key, sizeof(name_key), "%s-name", key);
	if (state == CPUHP_INVALID) {
		json_object_object_add(o, key, NULL);
		json_object_object_add(o, name_key, NULL);
		return;
	}
	qc_add_int(o, key, state);
	json_object_object_add(o, name_key, qc_name_or_null(qc, side, state));
}

static struct json_object *host_json(struct qmp_cmds *qc,
				     const struct hp_cpu_view *v)
{
	struct json_object *h = json_object_new_object();

	qc_add_int(h, "state", v->host.state);
	json_object_object_add(
		h, "name", qc_name_or_null(qc, HP_SIDE_HOST, v->host.state));
	add_state(qc, h, "target", HP_SIDE_HOST, v->host.target);
	add_state(qc, h, "fail", HP_SIDE_HOST, v->host.fail);
	qc_add_bool(h, "broken", v->host.broken);
	qc_add_bool(h, "rollback", v->host.rollback);
	return h;
}

/* Only a reporting guest has a table to show: the others a stage. */
static struct json_object *guest_json(struct qmp_cmds *qc,
				      const struct hp_cpu_view *v,
				      const struct lx_states *lx)
{
	struct json_object *g = json_object_new_object();
	bool r = v->guest_reports;

	qc_add_bool(g, "reports", r);
	qc_add_str(g, "stage", hotplug_stage_name(v->stage));
	json_object_object_add(g, "state",
			       r ? json_object_new_int(v->guest_state) : NULL);
	json_object_object_add(
		g, "name",
		r ? qc_name_or_null(qc, HP_SIDE_GUEST, v->guest_state) : NULL);
	add_state(qc, g, "target", HP_SIDE_GUEST, v->guest_target);
	add_state(qc, g, "fail", HP_SIDE_GUEST, v->guest_fault);
	qc_add_bool(g, "broken", v->guest_broken);
	/* With the guest agent: Linux's number for it and its word. */
	if (v->linux_cpu >= 0) {
		qc_add_int(g, "linux-cpu", v->linux_cpu);
		qc_add_bool(g, "linux-online", v->linux_online == 1);
	}
	/* ... and where Linux's own table has it, as its trace said. */
	if (v->linux_state >= 0) {
		const char *n = lx ? lx_states_name(lx, v->linux_state) : NULL;

		qc_add_int(g, "linux-state", v->linux_state);
		json_object_object_add(g, "linux-state-name",
				       n ? json_object_new_string(n) : NULL);
	}
	return g;
}

static struct json_object *cpu_json(struct qmp_cmds *qc,
				    const struct hp_cpu_view *v,
				    const struct lx_states *lx)
{
	struct json_object *o = json_object_new_object();
	char path[QC_PATH_MAX];

	qc_add_int(o, "cpu", v->cpu);
	qc_add_int(o, "apic-id", v->apic_id);
	qc_add_bool(o, "boot", v->boot);
	qc_add_bool(o, "present", v->present);
	if (v->id[0])
		qc_add_str(o, "id", v->id);
	if (*qc_qom_path(qc, v, path, sizeof(path)))
		qc_add_str(o, "qom-path", path);
	json_object_object_add(o, "host", host_json(qc, v));
	json_object_object_add(o, "guest", guest_json(qc, v, lx));
	qc_add_int(o, "thread-id", v->host_tid);
	qc_add_bool(o, "parked", v->parked);
	/* The agreement check's verdict (hotplug_check()). */
	qc_add_bool(o, "agree", !v->disagree);
	if (v->disagree)
		qc_add_str(o, "disagreement", v->disagree_why);
	return o;
}

/* Linux's state list: [{"state", "name"}], its numbers and names. */
static struct json_object *linux_states_json(const struct lx_states *lx)
{
	struct json_object *a = json_object_new_array();

	for (unsigned int i = 0; i < lx->n; i++) {
		struct json_object *o = json_object_new_object();

		qc_add_int(o, "state", lx->s[i].num);
		qc_add_str(o, "name", lx->s[i].name);
		json_object_array_add(a, o);
	}
	return a;
}

/* Both state tables and every vCPU in them; "cpu" limits it to one. */
QC_HANDLER(qc_query_cpuhp)
{
	struct qmp_cmds *qc = ctx;
	struct json_object *o, *cpus;
	int64_t only = qmp_int(args, "cpu", -1);
	struct lx_states *lx = malloc(sizeof(*lx));

	(void)err;
	/* The last operation's trace of Linux read first: its states. */
	hotplug_linux_trace_wait(qc->hp);
	/* With the guest agent, once read: Linux's own list. */
	if (lx && !hotplug_linux_states(qc->hp, lx)) {
		free(lx);
		lx = NULL;
	}
	qc_names_refresh(qc);
	/* On demand too; while an operation runs, its end checks. */
	hotplug_check(qc->hp);
	o = json_object_new_object();
	json_object_object_add(o, "host-states", states_json(qc, HP_SIDE_HOST));
	json_object_object_add(o, "guest-states",
			       states_json(qc, HP_SIDE_GUEST));
	cpus = json_object_new_array();
	for (unsigned int cpu = 0; cpu < qc->max; cpu++) {
		struct hp_cpu_view v;

		if ((only >= 0 && cpu != only) || qc_view(qc, cpu, &v))
			continue;
		json_object_array_add(cpus, cpu_json(qc, &v, lx));
	}
	json_object_object_add(o, "cpus", cpus);
	if (lx)
		json_object_object_add(o, "linux-states",
				       linux_states_json(lx));
	free(lx);
	*ret = o;
	return 0;
}

/* ---- query-hotplug-stats ---- */

static struct json_object *regs_stats_json(const struct hpregs_stats *rs)
{
	struct json_object *r = json_object_new_object();
	struct json_object *ign = json_object_new_object();

	qc_add_int(r, "accesses", (int64_t)rs->accesses);
	for (int i = 0; i < HPREGS_IGN_NR; i++)
		qc_add_int(ign, hpregs_ign_name(i), (int64_t)rs->ignored[i]);
	json_object_object_add(r, "ignored", ign);
	qc_add_int(r, "ejects", (int64_t)rs->ejects);
	qc_add_int(r, "osts", (int64_t)rs->osts);
	qc_add_int(r, "guest-states", (int64_t)rs->guest_states);
	qc_add_int(r, "guest-faults", (int64_t)rs->guest_faults);
	qc_add_int(r, "guest-targets", (int64_t)rs->guest_targets);
	qc_add_int(r, "refused-states", (int64_t)rs->refused_states);
	return r;
}

static struct json_object *ring_stats_json(const struct hpregs_stats *rs)
{
	const struct hpring_stats *st = &rs->ring;
	struct json_object *r = json_object_new_object();
	struct json_object *ign = json_object_new_object();

	qc_add_bool(r, "enabled", rs->ring_enabled);
	qc_add_int(r, "doorbells", (int64_t)st->doorbells);
	qc_add_int(r, "drains", (int64_t)st->drains);
	qc_add_int(r, "entries", (int64_t)st->entries);
	qc_add_int(r, "console-bytes", (int64_t)st->console);
	qc_add_int(r, "clamped-times", (int64_t)st->clamped);
	for (int i = 0; i < HPRING_IGN_NR; i++)
		qc_add_int(ign, hpring_ign_name(i), (int64_t)st->ignored[i]);
	json_object_object_add(r, "ignored", ign);
	return r;
}

static struct json_object *ged_stats_json(const struct ged_stats *gs)
{
	struct json_object *g = json_object_new_object();
	struct json_object *ign = json_object_new_object();

	qc_add_int(g, "reads", (int64_t)gs->reads);
	qc_add_int(g, "raises", (int64_t)gs->raises);
	qc_add_int(g, "irq-errors", (int64_t)gs->irq_errors);
	qc_add_int(ign, "write", (int64_t)gs->ign_write);
	qc_add_int(ign, "width", (int64_t)gs->ign_width);
	qc_add_int(ign, "offset", (int64_t)gs->ign_offset);
	json_object_object_add(g, "ignored", ign);
	return g;
}

/* With --agent: "agent": {"answers", the protocol's counters}. */
static void agent_stats_json(struct qmp_cmds *qc, struct json_object *o)
{
	struct json_object *a;
	struct qga_stats st;
	bool up;

	if (hotplug_agent_stats(qc->hp, &st, &up))
		return;
	a = json_object_new_object();
	qc_add_bool(a, "answers", up);
	qc_add_int(a, "calls", (int64_t)st.calls);
	qc_add_int(a, "failed", (int64_t)st.failed);
	qc_add_int(a, "timeouts", (int64_t)st.timeouts);
	qc_add_int(a, "bad-replies", (int64_t)st.bad_replies);
	qc_add_int(a, "stray-bytes", (int64_t)st.stray_bytes);
	qc_add_int(a, "late-replies", (int64_t)st.skipped);
	qc_add_int(a, "port-closed", (int64_t)st.closed);
	qc_add_int(a, "call-us", (int64_t)st.own_us);
	qc_add_int(a, "set-vcpus-us", (int64_t)st.set_vcpus_us);
	json_object_object_add(o, "agent", a);
}

/* Each operation kind's time and hotvm's own share of it. */
static struct json_object *own_stats_json(struct qmp_cmds *qc)
{
	struct json_object *o = json_object_new_object();
	struct hp_own_stats st[HP_OP_KINDS];

	hotplug_own_stats(qc->hp, st);
	for (unsigned int k = 0; k < HP_OP_KINDS; k++) {
		struct json_object *a = json_object_new_object();

		qc_add_int(a, "operations", (int64_t)st[k].ops);
		qc_add_int(a, "total-us", (int64_t)(st[k].wall_ns / 1000));
		qc_add_int(a, "own-us", (int64_t)(st[k].own_ns / 1000));
		qc_add_int(a, "own-exit-us", (int64_t)(st[k].exit_ns / 1000));
		qc_add_int(a, "exits", (int64_t)st[k].exits);
		json_object_object_add(o, hotplug_op_kind_name(k), a);
	}
	return o;
}

/*
 * Every guest access to the GED and register block, by what came of it;
 * the exits to user space; each operation kind's own share; the guest
 * agent's calls.
 */
QC_HANDLER(qc_query_hotplug_stats)
{
	struct qmp_cmds *qc = ctx;
	struct json_object *o = json_object_new_object();
	struct hpregs_stats rs;
	struct ged_stats gs;
	struct vmexit_counts x;
	struct qmp_server *s;

	(void)args;
	(void)err;
	pthread_mutex_lock(&qc->lock);
	s = qc->s;
	pthread_mutex_unlock(&qc->lock);
	hotplug_device_stats(qc->hp, &rs, &gs);
	json_object_object_add(o, "cpuhp-regs", regs_stats_json(&rs));
	json_object_object_add(o, "ring", ring_stats_json(&rs));
	json_object_object_add(o, "ged", ged_stats_json(&gs));
	memset(&x, 0, sizeof(x));
	if (qc->vm)
		vmexit_read(&qc->vm->exits, &x);
	json_object_object_add(o, "exits", qc_exits_json(qc, &x));
	json_object_object_add(o, "own", own_stats_json(qc));
	agent_stats_json(qc, o);
	/* Waiting for the operation thread: the next batch, if they can. */
	qc_add_int(o, "queued-operations", s ? qmp_server_queued(s) : 0);
	*ret = o;
	return 0;
}
