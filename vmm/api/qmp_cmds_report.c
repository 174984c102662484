// SPDX-License-Identifier: GPL-2.0-only
/*
 * What an operation says when it is over: the steps it ran with their
 * times (struct hp_report), and when it failed, why, on which CPU, and
 * where that CPU is now (docs/design.md §8).
 */
#include <errno.h>

#include <json-c/json.h>

#include "hotvm/guest_states.h"
#include "qmp_cmds_internal.h"
#include "vm.h"

static struct json_object *steps_json(struct qmp_cmds *qc,
				      const struct hp_report *rep)
{
	struct json_object *a = json_object_new_array();

	for (unsigned int i = 0; i < rep->n && i < HP_REPORT_MAX; i++) {
		const struct hp_step_time *st = &rep->steps[i];
		struct json_object *o = json_object_new_object();

		qc_add_str(o, "side", qc_side_names[st->side]);
		qc_add_int(o, "state", st->state);
		json_object_object_add(
			o, "name", qc_name_or_null(qc, st->side, st->state));
		qc_add_str(o, "direction", st->up ? "up" : "down");
		qc_add_bool(o, "rollback", st->rollback);
		qc_add_bool(o, "injected", st->injected);
		qc_add_int(o, "ret", st->ret);
		qc_add_int(o, "us", (int64_t)(st->ns / 1000));
		if (st->side == HP_SIDE_HOST)
			qc_add_int(o, "own-us", (int64_t)(st->own_ns / 1000));
		json_object_array_add(a, o);
	}
	return a;
}

struct json_object *qc_exits_json(struct qmp_cmds *qc,
				  const struct vmexit_counts *x)
{
	struct json_object *o = json_object_new_object();
	struct json_object *dev = json_object_new_object();
	char name[48];

	qc_add_int(o, "total", (int64_t)vmexit_total(x));
	for (unsigned int k = 0; k < VMEXIT_NR; k++)
		qc_add_int(o, vmexit_kind_name(k), (int64_t)x->kind[k]);
	for (unsigned int sp = 0; sp < VMEXIT_SPACES; sp++)
		for (unsigned int i = 0; i < VMEXIT_DEVS; i++)
			if (x->dev[sp][i])
				qc_add_int(
					dev,
					vmexit_dev_name(
						qc->vm ? &qc->vm->exits : NULL,
						sp, i, name, sizeof(name)),
					(int64_t)x->dev[sp][i]);
	json_object_object_add(o, "by-device", dev);
	return o;
}

void qc_report_json(struct qmp_cmds *qc, struct json_object *o,
		    const struct hp_report *rep)
{
	qc_add_int(o, "total-us", (int64_t)(rep->total_ns / 1000));
	qc_add_int(o, "own-us", (int64_t)(rep->own_ns / 1000));
	qc_add_int(o, "own-exit-us", (int64_t)(rep->exits.handled_ns / 1000));
	json_object_object_add(o, "exits", qc_exits_json(qc, &rep->exits));
	if (rep->onlined_by)
		qc_add_str(o, "onlined-by", rep->onlined_by);
	if (rep->offlined_by)
		qc_add_str(o, "offlined-by", rep->offlined_by);
	if (rep->linux_trace_pending)
		qc_add_bool(o, "linux-trace-pending", true);
	json_object_object_add(o, "steps", steps_json(qc, rep));
	if (rep->dropped)
		qc_add_int(o, "steps-dropped", rep->dropped);
}

/* The step that made the operation fail: the first failure, no rollback. */
static const struct hp_step_time *failed_step(const struct hp_report *rep)
{
	for (unsigned int i = 0; i < rep->n && i < HP_REPORT_MAX; i++)
		if (rep->steps[i].ret && !rep->steps[i].rollback)
			return &rep->steps[i];
	return NULL;
}

static bool rolled_back(const struct hp_report *rep)
{
	for (unsigned int i = 0; i < rep->n && i < HP_REPORT_MAX; i++)
		if (rep->steps[i].rollback)
			return true;
	return false;
}

/* The errnos of an operation refused before it ran a step. */
static bool refusal(int rc)
{
	return rc == -ENOTRECOVERABLE || rc == -EBUSY || rc == -ESHUTDOWN ||
	       rc == -EOPNOTSUPP || rc == -EPERM || rc == -ENODEV ||
	       rc == -EINVAL;
}

int qc_op_error(struct qmp_cmds *qc, struct qmp_error *err, unsigned int cpu,
		const char *what, int rc, const struct hp_report *rep)
{
	const struct hp_step_time *st = rep ? failed_step(rep) : NULL;
	bool refused = (!rep || !rep->n) && refusal(rc);
	char name[QC_NAME_MAX];
	struct hp_cpu_view v;

	err->class = QMP_ERROR_GENERIC;
	if (rep && hv_err_is_set(&rep->err)) {
		err->e = rep->err;
		hv_err_prepend(&err->e, "cpu %u: %s %s: ", cpu, what,
			       refused ? "refused" : "failed");
		if (refused)
			return -EINVAL;
	} else if (st) {
		hv_err_set(&err->e, rc, "cpu %u: %s%s failed: %s%s", cpu,
			   st->side == HP_SIDE_GUEST ? "guest state " : "",
			   qc_state_name(qc, st->side, st->state, name,
					 sizeof(name)),
			   qc_err_text(st->ret),
			   st->injected ? " (injected fault)" : "");
	} else {
		hv_err_set(&err->e, rc, "cpu %u: %s failed: %s", cpu, what,
			   qc_err_text(rc));
	}
	if (qc_view(qc, cpu, &v))
		return -EINVAL;
	qc_state_name(qc, HP_SIDE_HOST, v.host.state, name, sizeof(name));
	if (v.host.broken || v.guest_broken)
		hv_err_append(&err->e,
			      "; the %s rollback failed too: the cpu is broken "
			      "(host state %s)",
			      v.host.broken ? "host" : "guest", name);
	else if (rep && rolled_back(rep))
		hv_err_append(&err->e, "; rolled back to %s", name);
	else
		hv_err_append(&err->e, "; it stays at %s", name);
	return -EINVAL;
}

int qc_check_removable(unsigned int cpu, struct qmp_error *err)
{
	if (guest_cpu_removable(cpu))
		return 0;
	return qmp_error_set(err, QMP_ERROR_GENERIC, "Boot CPU is unpluggable");
}

int qc_remove_error(struct qmp_cmds *qc, unsigned int cpu, int rc,
		    const struct hp_report *rep, struct qmp_error *err)
{
	/* QEMU's words for the boot CPU only: a hook's veto is -EPERM too. */
	if (rc == -EPERM && qc_check_removable(cpu, err))
		return -EINVAL;
	if (rc == -ENODEV)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "cpu %u is not plugged", cpu);
	if (rc)
		qc_op_error(qc, err, cpu, "hot-remove", rc, rep);
	return rc; /* err is filled: the errno is for device_del's words */
}
