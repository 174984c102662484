// SPDX-License-Identifier: GPL-2.0-only
/*
 * hotvm's operations on the two tables (docs/design.md §8): a walk of one
 * side to a named state (cpuhp-set-target, Linux's cpuN/hotplug/target), a
 * fault injected into one side's next callback (cpuhp-inject-fault,
 * cpuN/hotplug/fail), a timed single-CPU operation (cpu-hotplug), the
 * recovery of a broken CPU (cpuhp-recover) and cpu-resize, the
 * controller's all-or-nothing batch (hotplug_resize()).  The members of
 * their replies are declared in qmp_cmds_table.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "hotplug_linux.h"
#include "hotplug_many.h"
#include "hotvm/guest_states.h"
#include "qmp_cmds_internal.h"

/* {"cpu", "side", "state", "name", "total-us", "steps"} after an operation. */
static struct json_object *op_reply(struct qmp_cmds *qc, unsigned int cpu,
				    enum hp_side side,
				    const struct hp_report *rep)
{
	struct json_object *o = json_object_new_object();
	struct hp_cpu_view v;
	int state;

	qc_view(qc, cpu, &v);
	state = side == HP_SIDE_HOST ? v.host.state : v.guest_state;
	qc_add_int(o, "cpu", cpu);
	qc_add_str(o, "side", qc_side_names[side]);
	qc_add_int(o, "state", state);
	json_object_object_add(o, "name", qc_name_or_null(qc, side, state));
	qc_report_json(qc, o, rep);
	return o;
}

/*
 * Linux's cpuN/hotplug/target: partial bring-up and take-down on either
 * side, to a state given by name or number.
 */
QC_HANDLER(qc_cpuhp_set_target)
{
	struct qmp_cmds *qc = ctx;
	struct hp_report rep = { 0 };
	enum hp_side side = qc_arg_side(args);
	unsigned int cpu = qc_arg_cpu(args);
	int target, rc;
	char name[QC_NAME_MAX];

	if (qc_arg_state(qc, args, "target", side, false, &target, err))
		return -EINVAL;
	qc_names_refresh(qc);
	rc = hotplug_set_target(qc->hp, cpu, side, target, qc_arg_timeout(args),
				&rep);
	qc_state_name(qc, side, target, name, sizeof(name));
	if (rc && hv_err_is_set(&rep.err))
		return qc_op_error(qc, err, cpu, "set-target", rc, &rep);
	/* The cpuhp library's own no, which carries no words. */
	if (rc == -EINVAL && !rep.n)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "cpu %u: %s state %s is not a valid "
				     "target",
				     cpu, qc_side_names[side], name);
	if (rc)
		return qc_op_error(qc, err, cpu, "set-target", rc, &rep);
	*ret = op_reply(qc, cpu, side, &rep);
	return 0;
}

/*
 * A Linux guest with the agent: the state is Linux's, by number or name
 * (its /sys/devices/system/cpu/hotplug/states), which hotvm's tables do
 * not know; linux_fault.c checks it against Linux's list.
 */
static int linux_inject(struct qmp_cmds *qc, unsigned int cpu,
			struct json_object *args, struct qmp_error *err)
{
	struct hp_report rep = { 0 };
	struct json_object *o = NULL;
	const char *name = NULL;
	int state = CPUHP_INVALID, rc;

	json_object_object_get_ex(args, "state", &o);
	if (json_object_is_type(o, json_type_int)) {
		int64_t v = json_object_get_int64(o);

		if (v < CPUHP_INVALID || v > INT32_MAX)
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Parameter 'state' expects one of "
					     "Linux's state numbers, or -1");
		state = (int)v;
	} else if (o && strcmp(json_object_get_string(o), "none")) {
		name = json_object_get_string(o);
	}
	rc = hotplug_linux_inject(qc->hp, cpu, state, name, &rep);
	if (rc)
		return qc_op_error(qc, err, cpu, "inject-fault", rc, &rep);
	return 0;
}

/*
 * Linux's cpuN/hotplug/fail: the next callback of that state fails; null,
 * "none" or -1 clears it.
 */
QC_HANDLER(qc_cpuhp_inject_fault)
{
	struct qmp_cmds *qc = ctx;
	struct hp_report rep = { 0 }; /* a refusal's reason */
	enum hp_side side = qc_arg_side(args);
	unsigned int cpu = qc_arg_cpu(args);
	int state, rc;
	char name[QC_NAME_MAX];

	(void)ret;
	if (side == HP_SIDE_GUEST && hotplug_linux_faults(qc->hp))
		return linux_inject(qc, cpu, args, err);
	if (qc_arg_state(qc, args, "state", side, true, &state, err))
		return -EINVAL;
	rc = hotplug_inject(qc->hp, cpu, side, state, &rep);
	if (rc == -EINVAL)
		return qmp_error_set(
			err, QMP_ERROR_GENERIC,
			"cpu %u: %s state %s cannot fail (no "
			"callback, or a must-not-fail state)",
			cpu, qc_side_names[side],
			qc_state_name(qc, side, state, name, sizeof(name)));
	if (rc)
		return qc_op_error(qc, err, cpu, "inject-fault", rc, &rep);
	return 0;
}

/*
 * Replies once the host table reached its target (and with it the guest)
 * or failed and rolled back.
 */
QC_HANDLER(qc_cpu_hotplug)
{
	struct qmp_cmds *qc = ctx;
	struct hp_report rep = { 0 };
	struct json_object *o;
	const char *state = qmp_str(args, "state", "");
	unsigned int cpu = qc_arg_cpu(args);
	int timeout = qc_arg_timeout(args), rc;

	qc_names_refresh(qc);
	if (!strcmp(state, HOST_STATE_NAME(HOST_ONLINE))) {
		struct hp_cpu_view before;
		bool was = !qc_view(qc, cpu, &before) &&
			   hotplug_cpu_plugged(&before);

		rc = hotplug_cpu_add(qc->hp, cpu, NULL, timeout,
				     qc_arg_wait(args), &rep);
		/* A partly-up CPU keeps its id and path: it was plugged. */
		if (!rc && !was)
			qc_mark_added(qc, cpu, NULL);
		if (rc == -EEXIST)
			rc = 0; /* already there: a no-op, like Linux */
		if (rc)
			return qc_op_error(qc, err, cpu,
					   HOST_STATE_NAME(HOST_ONLINE), rc,
					   &rep);
	} else {
		struct hp_cpu_view v;

		if (!qc_view(qc, cpu, &v) && !hotplug_cpu_plugged(&v)) {
			rc = 0; /* already offline */
		} else if ((rc = qc_check_removable(cpu, err))) {
			return rc;
		} else {
			rc = qc_remove_cpu(qc, cpu, timeout, &rep, err);
			if (rc)
				return rc;
		}
	}
	o = json_object_new_object();
	qc_add_int(o, "cpu", cpu);
	qc_add_str(o, "state", state);
	qc_report_json(qc, o, &rep);
	*ret = o;
	return 0;
}

/*
 * After a failed rollback left the CPU broken, puts it back in line with
 * what the guest and the host really hold (hotplug.h,
 * hotplug_cpu_recover()): online if the guest has it, else offline.
 */
QC_HANDLER(qc_cpuhp_recover)
{
	struct qmp_cmds *qc = ctx;
	struct hp_report rep = { 0 };
	struct json_object *o;
	unsigned int cpu = qc_arg_cpu(args);
	int rc;
	bool online;

	qc_names_refresh(qc);
	rc = hotplug_cpu_recover(qc->hp, cpu, qc_arg_timeout(args), &rep,
				 &online);
	if (rc == -EPERM && !hv_err_is_set(&rep.err))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "cpu %u: the boot CPU is never walked: "
				     "there is nothing to recover",
				     cpu);
	if (rc)
		return qc_op_error(qc, err, cpu, "recover", rc, &rep);
	o = json_object_new_object();
	qc_add_int(o, "cpu", cpu);
	qc_add_str(o, "state",
		   HOST_STATE_NAME(online ? HOST_ONLINE : HOST_OFFLINE));
	qc_report_json(qc, o, &rep);
	*ret = o;
	return 0;
}

/* ---- cpu-resize: the controller's, all or nothing (hotplug_resize()) */

/* One cpu-resize call: its error, and the QOM paths an undo gives back. */
struct resize_call {
	struct qmp_cmds *qc;
	struct qmp_error *err;
	int rc;		       /* the first CPU's failure, said in err */
	struct qc_slot *slots; /* as they were before the resize */
};

static void resize_done(void *ctx, const struct hotplug_result *r)
{
	struct resize_call *z = ctx;
	struct qmp_cmds *qc = z->qc;

	if (r->phase == HOTPLUG_PHASE_UNDO) {
		/* A removal undone: the CPU gets its old path back. */
		if (!r->rc && r->add) {
			pthread_mutex_lock(&qc->lock);
			qc->slots[r->cpu] = z->slots[r->cpu];
			pthread_mutex_unlock(&qc->lock);
		}
		return;
	}
	if (!r->rc) {
		if (r->add)
			qc_mark_added(qc, r->cpu, NULL);
		return;
	}
	if (z->rc)
		return;
	if (r->add) {
		z->rc = qc_op_error(qc, z->err, r->cpu, "hot-add", r->rc,
				    r->rep);
		return;
	}
	z->rc = qc_remove_error(qc, r->cpu, r->rc, r->rep, z->err);
	if (r->walk_back) /* err says where its own walk left it */
		hv_err_append(&z->err->e, ", then back to online");
}

/* cpu-resize's error once hotplug_resize() failed with rc and undid. */
static int resize_error(struct resize_call *z, int rc, long long count,
			const struct hotplug_resize_result *res)
{
	if (rc == -ENOSPC)
		z->rc = qmp_error_set(z->err, QMP_ERROR_GENERIC,
				      "cpu-resize: only %u vCPUs can be "
				      "plugged",
				      res->count);
	else if (!z->rc)
		z->rc = qmp_error_set(z->err, QMP_ERROR_GENERIC,
				      "cpu-resize: %s", qc_err_text(rc));
	hv_err_append(
		&z->err->e,
		res->undo_failed ? "; cpu-resize to %lld: %u of %u steps could "
				   "not be undone"
				 : "; cpu-resize to %lld: nothing changed (%u "
				   "of %u steps undone)",
		count, res->undo_failed ? res->undo_failed : res->n, res->n);
	return z->rc;
}

static struct json_object *resize_reply(const struct hotplug_resize_result *r)
{
	struct json_object *o = json_object_new_object();
	struct json_object *added = json_object_new_array();
	struct json_object *removed = json_object_new_array();

	for (unsigned int i = 0; i < r->n; i++)
		json_object_array_add(r->steps[i].added ? added : removed,
				      json_object_new_int(r->steps[i].cpu));
	qc_add_int(o, "count", r->count);
	json_object_object_add(o, "added", added);
	json_object_object_add(o, "removed", removed);
	return o;
}

/*
 * Hot-adds the lowest free slots or hot-removes the highest plugged CPUs
 * (never CPU 0) until count are plugged.  All or nothing: if one step
 * fails, the steps already done are undone before the error.
 */
QC_HANDLER(qc_cpu_resize)
{
	struct qmp_cmds *qc = ctx;
	struct hotplug_resize_result res = {
		.steps = calloc(qc->max, sizeof(*res.steps)),
	};
	struct resize_call z = {
		.qc = qc,
		.err = err,
		.slots = calloc(qc->max, sizeof(*z.slots)),
	};
	int64_t count = qmp_int(args, "count", 1);
	int rc = -ENOMEM;

	qc_names_refresh(qc);
	if (res.steps && z.slots) {
		pthread_mutex_lock(&qc->lock);
		memcpy(z.slots, qc->slots, qc->max * sizeof(*z.slots));
		pthread_mutex_unlock(&qc->lock);
		rc = hotplug_resize(qc->hp, (unsigned int)count,
				    qc_arg_timeout(args),
				    &(const struct hotplug_many_ops){
					    .ctx = &z,
					    .done = resize_done,
				    },
				    &res);
		if (rc)
			rc = resize_error(&z, rc, (long long)count, &res);
		else
			*ret = resize_reply(&res);
	}
	free(res.steps);
	free(z.slots);
	return rc;
}
