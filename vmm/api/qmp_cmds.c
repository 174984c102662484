// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control API's commands (see vmm/api/qmp_cmds.h): QEMU's CPU-hotplug
 * commands with QEMU's shapes and words, and hotvm's own on top of the
 * hotplug controller (vmm/hotplug/hotplug.h).
 *
 * Operations (device_add, device_del, cpu-hotplug, cpu-resize, the cpuhp-*
 * commands) run one at a time on the server's operation thread, which is
 * what serialises them across clients; queries run on its query thread
 * meanwhile, and quit and query-status in its I/O thread (vmm/api/qmp.h).
 * The event callbacks run in whatever thread made the change (a vCPU
 * thread for the guest's notices), so what they and the queries read here
 * (state names, QOM paths) sits under qc.lock, and the callbacks never call
 * back into hotplug_*.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "hotvm/guest_states.h"
#include "hotplug.h"
#include "qga.h"
#include "qmp.h"
#include "qmp_cmds.h"
#include "qmp_schema.h"
#include "log.h"
#include "vm.h"

#define QC_NAME_MAX	   48
#define QC_PATH_MAX	   128
#define QC_TIMEOUT_MAX	   3600000 /* ms: an hour is surely a mistake already */
#define QC_X86_SUFFIX	   "-x86_64-cpu"
#define QC_UNATTACHED	   "/machine/unattached/device[%u]"
#define QC_PERIPHERAL	   "/machine/peripheral/%s"
#define QC_PERIPHERAL_ANON "/machine/peripheral-anon/device[%u]"

/* How QEMU would name a vCPU's object: fixed when it is plugged. */
enum qc_path_kind {
	QC_PATH_NONE,	    /* not plugged */
	QC_PATH_UNATTACHED, /* a boot CPU: /machine/unattached/device[cpu] */
	QC_PATH_PERIPHERAL, /* device_add with id: /machine/peripheral/<id> */
	QC_PATH_ANON,	    /* without id: /machine/peripheral-anon/... */
};

struct qc_slot {
	enum qc_path_kind kind;
	unsigned int anon; /* QC_PATH_ANON: device[anon] */
	char id[sizeof(((struct hp_cpu_view *)0)->id)];
};

struct qc_names {
	int n;
	char (*name)[QC_NAME_MAX]; /* "" for a free slot */
};

/*
 * One instance per process (hotvm has one VM and one server), static so
 * that a callback racing with qmp_cmds_unregister() finds it still there.
 */
static struct qmp_cmds {
	pthread_mutex_t lock; /* everything below once registered */
	struct qmp_server *s; /* NULL: unregistered, callbacks do nothing */
	struct hotplug *hp;
	struct vm *vm;
	unsigned int max;
	struct qc_slot *slots;
	unsigned int next_anon; /* QEMU numbers anonymous devices in order */
	struct qc_names names[2];
} qc = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *const side_names[] = {
	[HP_SIDE_HOST] = "host",
	[HP_SIDE_GUEST] = "guest",
};

/* ---- small helpers ---- */

static void add_int(struct json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

static void add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static void add_bool(struct json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

static const char *err_text(int rc)
{
	return strerror(rc < 0 ? -rc : rc);
}

/* Copies the controller's state names, for the event callbacks. */
static void names_refresh(void)
{
	for (int side = HP_SIDE_HOST; side <= HP_SIDE_GUEST; side++) {
		struct qc_names *nm = &qc.names[side];

		for (int i = 0; i < nm->n; i++) {
			struct cpuhp_state_info info;
			char name[QC_NAME_MAX] = "";

			if (!hotplug_state_info(qc.hp, side, i, &info) &&
			    info.name)
				snprintf(name, sizeof(name), "%s", info.name);
			pthread_mutex_lock(&qc.lock);
			memcpy(nm->name[i], name, sizeof(name));
			pthread_mutex_unlock(&qc.lock);
		}
	}
}

/* Under qc.lock.  NULL for a free slot or a state out of the table. */
static const char *name_locked(enum hp_side side, int state)
{
	const struct qc_names *nm = &qc.names[side];

	if (state < 0 || state >= nm->n || !nm->name[state][0])
		return NULL;
	return nm->name[state];
}

/* Into buf, for use without the lock; "-" style fallback is the number. */
static const char *state_name(enum hp_side side, int state, char *buf,
			      size_t len)
{
	const char *n;

	pthread_mutex_lock(&qc.lock);
	n = name_locked(side, state);
	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%d", state);
	pthread_mutex_unlock(&qc.lock);
	return buf;
}

static struct json_object *name_or_null(enum hp_side side, int state)
{
	struct json_object *o = NULL;

	pthread_mutex_lock(&qc.lock);
	if (name_locked(side, state))
		o = json_object_new_string(name_locked(side, state));
	pthread_mutex_unlock(&qc.lock);
	return o;
}

/*
 * The QOM path of a plugged vCPU, "" for one that is not.  A vCPU plugged
 * some other way than device_add (cpu-hotplug, cpu-resize, set-target)
 * gets an anonymous path the first time it is seen, as QEMU would give it.
 */
static const char *qom_path(const struct hp_cpu_view *v, char *buf, size_t len)
{
	struct qc_slot *sl = &qc.slots[v->cpu];

	buf[0] = '\0';
	pthread_mutex_lock(&qc.lock);
	if (!hotplug_cpu_plugged(v)) {
		if (sl->kind != QC_PATH_UNATTACHED || !v->boot)
			sl->kind = QC_PATH_NONE;
	} else if (v->id[0]) {
		sl->kind = QC_PATH_PERIPHERAL;
		snprintf(sl->id, sizeof(sl->id), "%s", v->id);
	} else if (sl->kind == QC_PATH_NONE || sl->kind == QC_PATH_PERIPHERAL) {
		sl->kind = QC_PATH_ANON;
		sl->anon = qc.next_anon++;
	}
	if (hotplug_cpu_plugged(v)) {
		if (sl->kind == QC_PATH_UNATTACHED)
			snprintf(buf, len, QC_UNATTACHED, v->cpu);
		else if (sl->kind == QC_PATH_PERIPHERAL)
			snprintf(buf, len, QC_PERIPHERAL, sl->id);
		else
			snprintf(buf, len, QC_PERIPHERAL_ANON, sl->anon);
	}
	pthread_mutex_unlock(&qc.lock);
	return buf;
}

static struct json_object *cpu_props(unsigned int cpu)
{
	struct json_object *p = json_object_new_object();

	add_int(p, "socket-id", cpu);
	add_int(p, "core-id", 0);
	add_int(p, "thread-id", 0);
	return p;
}

/* A report cleared for the next operation, its reason included. */
static struct hp_report *fresh(struct hp_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	return rep;
}

static int view(unsigned int cpu, struct hp_cpu_view *v)
{
	int rc = hotplug_cpu_view(qc.hp, cpu, v);

	if (rc)
		memset(v, 0, sizeof(*v));
	v->cpu = cpu;
	return rc;
}

/* ---- arguments of hotvm's commands (checked by the server first) ---- */

/* The highest CPU index and the most vCPUs, for the declarations. */
static int64_t max_cpu_index(void *ctx)
{
	(void)ctx;
	return (int64_t)qc.max - 1;
}

static int64_t max_cpus(void *ctx)
{
	(void)ctx;
	return qc.max;
}

static unsigned int arg_cpu(struct json_object *args)
{
	return (unsigned int)qmp_int(args, "cpu", 0);
}

static int arg_timeout(struct json_object *args)
{
	return (int)qmp_int(args, "timeout-ms", 0);
}

static enum hp_side arg_side(struct json_object *args)
{
	return strcmp(qmp_str(args, "side", ""), "guest") ? HP_SIDE_HOST
							  : HP_SIDE_GUEST;
}

/*
 * A state of one side's table, by name or number (QMP_ARG_NAME_INT; a
 * decimal string is looked up as a number).  With clear, null, "none" and
 * -1 mean CPUHP_INVALID.
 */
static int arg_state(struct json_object *args, const char *key,
		     enum hp_side side, bool clear, int *state,
		     struct qmp_error *err)
{
	struct json_object *o = NULL;
	int nr = hotplug_nr_states(qc.hp, side);

	json_object_object_get_ex(args, key, &o);
	if (clear && (!o || (json_object_is_type(o, json_type_string) &&
			     !strcmp(json_object_get_string(o), "none")))) {
		*state = CPUHP_INVALID;
		return 0;
	}
	if (json_object_is_type(o, json_type_int)) {
		int64_t v = json_object_get_int64(o);

		if (clear && v == CPUHP_INVALID) {
			*state = CPUHP_INVALID;
			return 0;
		}
		if (v < 0 || v >= nr)
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Parameter '%s' expects a %s "
					     "state between 0 and %d",
					     key, side_names[side], nr - 1);
		*state = (int)v;
		return 0;
	}
	*state = hotplug_state_lookup(qc.hp, side, json_object_get_string(o));
	if (*state < 0)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Parameter '%s': the %s table has no "
				     "state '%s' (see query-cpuhp)",
				     key, side_names[side],
				     json_object_get_string(o));
	return 0;
}

/* ---- reports and errors ---- */

static struct json_object *steps_json(const struct hp_report *rep)
{
	struct json_object *a = json_object_new_array();

	for (unsigned int i = 0; i < rep->n && i < HP_REPORT_MAX; i++) {
		const struct hp_step_time *st = &rep->steps[i];
		struct json_object *o = json_object_new_object();

		add_str(o, "side", side_names[st->side]);
		add_int(o, "state", st->state);
		json_object_object_add(o, "name",
				       name_or_null(st->side, st->state));
		add_str(o, "direction", st->up ? "up" : "down");
		add_bool(o, "rollback", st->rollback);
		add_bool(o, "injected", st->injected);
		add_int(o, "ret", st->ret);
		add_int(o, "us", (int64_t)(st->ns / 1000));
		json_object_array_add(a, o);
	}
	return a;
}

/*
 * {"total", "pio", "mmio", "hlt", "shutdown", "other", "by-device":
 * {"cpuhp-regs@0x...": n...}}: exits to user space, the devices that took
 * none left out.
 */
static struct json_object *exits_json(const struct vmexit_counts *x)
{
	struct json_object *o = json_object_new_object();
	struct json_object *dev = json_object_new_object();
	char name[48];

	add_int(o, "total", (int64_t)vmexit_total(x));
	for (unsigned int k = 0; k < VMEXIT_NR; k++)
		add_int(o, vmexit_kind_name(k), (int64_t)x->kind[k]);
	for (unsigned int sp = 0; sp < VMEXIT_SPACES; sp++)
		for (unsigned int i = 0; i < VMEXIT_DEVS; i++)
			if (x->dev[sp][i])
				add_int(dev,
					vmexit_dev_name(
						qc.vm ? &qc.vm->exits : NULL,
						sp, i, name, sizeof(name)),
					(int64_t)x->dev[sp][i]);
	json_object_object_add(o, "by-device", dev);
	return o;
}

static void report_json(struct json_object *o, const struct hp_report *rep)
{
	add_int(o, "total-us", (int64_t)(rep->total_ns / 1000));
	json_object_object_add(o, "exits", exits_json(&rep->exits));
	if (rep->onlined_by)
		add_str(o, "onlined-by", rep->onlined_by);
	json_object_object_add(o, "steps", steps_json(rep));
	if (rep->dropped)
		add_int(o, "steps-dropped", rep->dropped);
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

/*
 * GenericError for a failed operation on cpu: the reason the controller
 * wrote (rep->err), or the step that failed and its errno when it wrote
 * none (an injected fault), with which CPU and operation before it and
 * where the CPU is now after it, e.g. "cpu 3: hot-add failed: the guest
 * did not bring it up within 10000 ms (...); rolled back to offline".  An
 * operation refused before any step ran says "refused" and nothing more.
 * Returns -EINVAL.
 */
static int op_error(struct qmp_error *err, unsigned int cpu, const char *what,
		    int rc, const struct hp_report *rep)
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
			   state_name(st->side, st->state, name, sizeof(name)),
			   err_text(st->ret),
			   st->injected ? " (injected fault)" : "");
	} else {
		hv_err_set(&err->e, rc, "cpu %u: %s failed: %s", cpu, what,
			   err_text(rc));
	}
	if (view(cpu, &v))
		return -EINVAL;
	state_name(HP_SIDE_HOST, v.host.state, name, sizeof(name));
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

/* ---- events ---- */

static void ev_state(void *ctx, enum hp_side side, const struct cpuhp_notice *n)
{
	struct json_object *d;

	(void)ctx;
	pthread_mutex_lock(&qc.lock);
	if (!qc.s)
		goto out;
	d = json_object_new_object();
	add_int(d, "cpu", n->cpu);
	add_str(d, "side", side_names[side]);
	add_str(d, "kind", n->kind == CPUHP_NOTICE_DONE ? "done" : "step");
	add_int(d, "state", n->state);
	add_str(d, "name", name_locked(side, n->state));
	add_str(d, "direction", n->bringup ? "up" : "down");
	add_bool(d, "rollback", n->rollback);
	add_bool(d, "injected", n->injected);
	add_int(d, "ret", n->ret);
	/* Progress: a client that lags may miss some, and is told so. */
	qmp_emit_event_lossy(qc.s, "CPUHP_STATE", d);
out:
	pthread_mutex_unlock(&qc.lock);
}

/*
 * What the host observed of the guest (hp_stage): a CPUHP_STATE on the
 * guest side with "stage" instead of a state of the guest's table, which
 * is all there is to report for a guest that does not report its own.
 */
static void ev_stage(void *ctx, unsigned int cpu, const char *id,
		     enum hp_stage st)
{
	struct json_object *d;

	(void)ctx;
	pthread_mutex_lock(&qc.lock);
	if (!qc.s)
		goto out;
	d = json_object_new_object();
	add_int(d, "cpu", cpu);
	if (id && *id)
		add_str(d, "id", id);
	add_str(d, "side", side_names[HP_SIDE_GUEST]);
	add_str(d, "kind", "stage");
	add_str(d, "stage", hotplug_stage_name(st));
	add_str(d, "direction",
		st == HP_STAGE_ABSENT || st == HP_STAGE_EJECTING ? "down"
								 : "up");
	qmp_emit_event_lossy(qc.s, "CPUHP_STATE", d);
out:
	pthread_mutex_unlock(&qc.lock);
}

/* QEMU's ACPI_DEVICE_OST: {"info": ACPIOSTInfo}. */
static void ev_ost(void *ctx, unsigned int cpu, const char *id, uint32_t event,
		   uint32_t status)
{
	struct json_object *d, *info;
	char slot[16];

	(void)ctx;
	pthread_mutex_lock(&qc.lock);
	if (!qc.s)
		goto out;
	info = json_object_new_object();
	if (id && *id)
		add_str(info, "device", id);
	snprintf(slot, sizeof(slot), "%u", cpu);
	add_str(info, "slot", slot);
	add_str(info, "slot-type", "CPU");
	add_int(info, "source", event);
	add_int(info, "status", status);
	d = json_object_new_object();
	json_object_object_add(d, "info", info);
	qmp_emit_event(qc.s, "ACPI_DEVICE_OST", d);
out:
	pthread_mutex_unlock(&qc.lock);
}

/* QEMU's DEVICE_DELETED: {"device": id (only if it has one), "path"}. */
static void ev_deleted(void *ctx, unsigned int cpu, const char *id)
{
	struct json_object *d;
	struct qc_slot *sl;
	char path[QC_PATH_MAX];

	(void)ctx;
	pthread_mutex_lock(&qc.lock);
	if (!qc.s || cpu >= qc.max)
		goto out;
	sl = &qc.slots[cpu];
	if (id && *id)
		snprintf(path, sizeof(path), QC_PERIPHERAL, id);
	else if (sl->kind == QC_PATH_UNATTACHED)
		snprintf(path, sizeof(path), QC_UNATTACHED, cpu);
	else if (sl->kind == QC_PATH_ANON)
		snprintf(path, sizeof(path), QC_PERIPHERAL_ANON, sl->anon);
	else if (sl->kind == QC_PATH_PERIPHERAL)
		snprintf(path, sizeof(path), QC_PERIPHERAL, sl->id);
	else
		snprintf(path, sizeof(path), QC_PERIPHERAL_ANON,
			 qc.next_anon++);
	*sl = (struct qc_slot){ .kind = QC_PATH_NONE };
	d = json_object_new_object();
	if (id && *id)
		add_str(d, "device", id);
	add_str(d, "path", path);
	qmp_emit_event(qc.s, "DEVICE_DELETED", d);
out:
	pthread_mutex_unlock(&qc.lock);
}

/*
 * hotvm's CPUS_CHANGED: {"cpu", "online", "count", "cpulist"} whenever
 * the set of online vCPUs changes, whichever walk changed it; never
 * dropped, so an orchestrator can follow the set without polling.
 */
static void ev_online(void *ctx, unsigned int cpu, bool online,
		      unsigned int count, const char *cpulist)
{
	struct json_object *d;

	(void)ctx;
	pthread_mutex_lock(&qc.lock);
	if (qc.s) {
		d = json_object_new_object();
		add_int(d, "cpu", cpu);
		add_bool(d, "online", online);
		add_int(d, "count", count);
		add_str(d, "cpulist", cpulist);
		qmp_emit_event(qc.s, "CPUS_CHANGED", d);
	}
	pthread_mutex_unlock(&qc.lock);
}

/*
 * hotvm's CPUHP_AGREEMENT: {"cpu", "id"?, "agree", "reason"?}, when the
 * agreement check finds a vCPU's sides apart (it then needs
 * cpuhp-recover) and when cpuhp-recover has put them back in line.
 */
static void ev_agreement(void *ctx, unsigned int cpu, const char *id,
			 bool agree, const char *why)
{
	struct json_object *d;

	(void)ctx;
	pthread_mutex_lock(&qc.lock);
	if (qc.s) {
		d = json_object_new_object();
		add_int(d, "cpu", cpu);
		if (id && *id)
			add_str(d, "id", id);
		add_bool(d, "agree", agree);
		if (!agree)
			add_str(d, "reason", why);
		qmp_emit_event(qc.s, "CPUHP_AGREEMENT", d);
	}
	pthread_mutex_unlock(&qc.lock);
}

/* A hot-added vCPU gets its QOM path now, in the order QEMU would. */
static void mark_added(unsigned int cpu, const char *id)
{
	pthread_mutex_lock(&qc.lock);
	qc.slots[cpu] = (struct qc_slot){ .kind = QC_PATH_NONE };
	if (!id)
		qc.slots[cpu] = (struct qc_slot){ .kind = QC_PATH_ANON,
						  .anon = qc.next_anon++ };
	pthread_mutex_unlock(&qc.lock);
}

/* ---- QEMU's commands ---- */

/*
 * [{"type": "host-x86_64-cpu", "vcpus-count": 1, "props": {"socket-id": n,
 * "core-id": 0, "thread-id": 0}, "qom-path": s (plugged only)}...],
 * highest slot first as QEMU lists them.
 */
static int cmd_query_hotpluggable_cpus(void *ctx, struct json_object *args,
				       struct json_object **ret,
				       struct qmp_error *err)
{
	struct json_object *a;

	(void)ctx;
	(void)args;
	(void)err;
	a = json_object_new_array();
	for (unsigned int cpu = qc.max; cpu-- > 0;) {
		struct json_object *o = json_object_new_object();
		struct hp_cpu_view v;
		char path[QC_PATH_MAX];

		view(cpu, &v);
		add_str(o, "type", QMP_CMDS_CPU_TYPE);
		add_int(o, "vcpus-count", 1);
		json_object_object_add(o, "props", cpu_props(cpu));
		if (*qom_path(&v, path, sizeof(path)))
			add_str(o, "qom-path", path);
		json_object_array_add(a, o);
	}
	*ret = a;
	return 0;
}

/* QEMU's id_wellformed(): a letter, then letters, digits, '-', '.', '_'. */
static bool id_wellformed(const char *id)
{
	if (!((*id >= 'a' && *id <= 'z') || (*id >= 'A' && *id <= 'Z')))
		return false;
	for (id++; *id; id++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
			    "YZ"
			    "0123456789-._",
			    *id))
			return false;
	return true;
}

/* hotvm's "wait": "acknowledged" | "started", for a non-reporting guest. */
static enum hotplug_wait arg_wait(struct json_object *args)
{
	int w = hotplug_wait_parse(qmp_str(args, "wait", ""));

	return w < 0 ? HOTPLUG_WAIT_DEFAULT : (enum hotplug_wait)w;
}

static const struct qmp_arg device_add_args[];

static int device_add_check(struct json_object *args, const char **idp,
			    unsigned int *cpu, struct qmp_error *err)
{
	const char *driver = qmp_str(args, "driver", "");
	const char *id = qmp_str(args, "id", NULL);
	int64_t socket = qmp_int(args, "socket-id", -1);
	int64_t die = qmp_int(args, "die-id", 0);
	int64_t core = qmp_int(args, "core-id", 0);
	int64_t thread = qmp_int(args, "thread-id", 0);
	size_t dl = strlen(driver), sl = strlen(QC_X86_SUFFIX);

	if (dl <= sl || strcmp(driver + dl - sl, QC_X86_SUFFIX))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "'%s' is not a valid device model name",
				     driver);
	if (id && (!id_wellformed(id) ||
		   strlen(id) >= sizeof(((struct hp_cpu_view *)0)->id)))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Parameter 'id' expects an identifier "
				     "(a letter, then letters, digits, '-', "
				     "'.', '_'; at most %zu characters)",
				     sizeof(((struct hp_cpu_view *)0)->id) - 1);
	/* What the declaration does not name is a property the CPU lacks. */
	json_object_object_foreach(args, key, val)
	{
		(void)val;
		if (!qmp_arg_find(device_add_args, key))
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Property '%s.%s' not found",
					     driver, key);
	}
	if (!qmp_has(args, "socket-id"))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "CPU socket-id is not set");
	if (socket < 0 || socket >= qc.max)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Invalid CPU socket-id: %lld must be in "
				     "range 0:%u",
				     (long long)socket, qc.max - 1);
	if (die)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Invalid CPU die-id: %lld must be in "
				     "range 0:0",
				     (long long)die);
	if (core)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Invalid CPU core-id: %lld must be in "
				     "range 0:0",
				     (long long)core);
	if (thread)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Invalid CPU thread-id: %lld must be in "
				     "range 0:0",
				     (long long)thread);
	*idp = id;
	*cpu = (unsigned int)socket;
	return 0;
}

/*
 * {"driver": "*-x86_64-cpu", "id"?, "socket-id": n, "core-id"?: 0,
 * "thread-id"?: 0, "die-id"?: 0} -> {} once the guest has the CPU online
 * (QEMU replies when the CPU is plugged; here the host table is walked to
 * online first, so the reply means the same and more).
 */
static int device_add_exists(struct qmp_error *err, unsigned int cpu)
{
	struct hp_cpu_view v;

	view(cpu, &v);
	return qmp_error_set(err, QMP_ERROR_GENERIC,
			     "CPU[%u] with APIC ID %u exists", cpu, v.apic_id);
}

/* device_add's words for hotplug_add_check()'s and the walk's errors. */
static int device_add_done(unsigned int cpu, const char *id, int rc,
			   const struct hp_report *rep, struct qmp_error *err)
{
	if (rc == -EADDRINUSE)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Duplicate device ID '%s'", id);
	if (rc == -EEXIST)
		return device_add_exists(err, cpu);
	if (rc)
		return op_error(err, cpu, "hot-add", rc, rep);
	mark_added(cpu, id);
	return 0;
}

static int cmd_device_add(void *ctx, struct json_object *args,
			  struct json_object **ret, struct qmp_error *err)
{
	static struct hp_report rep; /* the server thread only */
	const char *id = NULL;
	unsigned int cpu = 0;
	int rc;

	(void)ctx;
	(void)ret;
	rc = device_add_check(args, &id, &cpu, err);
	if (rc)
		return rc;
	rc = hotplug_add_check(qc.hp, cpu, id);
	if (rc)
		return device_add_done(cpu, id, rc, NULL, err);
	rc = hotplug_cpu_add(qc.hp, cpu, id, 0, arg_wait(args), fresh(&rep));
	return device_add_done(cpu, id, rc, &rep, err);
}

/* A device id or a QOM path, as QEMU's find_device_state() takes them. */
static int find_device(const char *id, unsigned int *cpu)
{
	for (unsigned int i = 0; i < qc.max; i++) {
		struct hp_cpu_view v;
		char path[QC_PATH_MAX];

		if (view(i, &v) || !*qom_path(&v, path, sizeof(path)))
			continue;
		if ((id[0] == '/' && !strcmp(path, id)) ||
		    (v.id[0] && !strcmp(v.id, id))) {
			*cpu = i;
			return 0;
		}
	}
	return -ENOENT;
}

/* A hot-remove that ended with rc: err in QEMU's words where it has them. */
static int remove_error(unsigned int cpu, int rc, const struct hp_report *rep,
			struct qmp_error *err)
{
	/* QEMU's words for the boot CPU only: a hook's veto is -EPERM too. */
	if (rc == -EPERM && !guest_cpu_removable(cpu))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Boot CPU is unpluggable");
	if (rc == -ENODEV)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "cpu %u is not plugged", cpu);
	if (rc)
		op_error(err, cpu, "hot-remove", rc, rep);
	return rc; /* err is filled: the errno is for device_del's words */
}

static int remove_cpu(unsigned int cpu, int timeout_ms, struct hp_report *rep,
		      struct qmp_error *err)
{
	int rc = hotplug_cpu_remove(qc.hp, cpu, timeout_ms, fresh(rep));

	return remove_error(cpu, rc, rep, err);
}

/*
 * {"id": id or QOM path} -> {} after the guest ejected the CPU and its
 * DEVICE_DELETED went out (QEMU replies first and sends the event later;
 * a tool waiting for the event sees it either way).
 */
/* The CPU device_del's "id" names, if it may be removed. */
static int device_del_check(struct json_object *args, unsigned int *cpu,
			    struct qmp_error *err)
{
	const char *id = qmp_str(args, "id", "");

	if (find_device(id, cpu))
		return qmp_error_set(err, QMP_ERROR_DEVICE_NOT_FOUND,
				     "Device '%s' not found", id);
	if (!guest_cpu_removable(*cpu))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Boot CPU is unpluggable");
	return 0;
}

static int cmd_device_del(void *ctx, struct json_object *args,
			  struct json_object **ret, struct qmp_error *err)
{
	static struct hp_report rep;
	unsigned int cpu;
	int rc;

	(void)ctx;
	(void)ret;
	rc = device_del_check(args, &cpu, err);
	return rc ? rc : remove_cpu(cpu, 0, &rep, err);
}

/* ---- bursts of device_add and device_del: one batch each ---- */

/*
 * A burst's well-formed requests as the controller takes them
 * (hotplug_add_many(), hotplug_remove_many()), and the call each answers.
 */
struct burst {
	struct qmp_call *calls;
	struct hotplug_req *reqs;
	size_t *call; /* reqs[k] answers calls[call[k]] */
	unsigned int n;
};

static int burst_init(struct burst *b, struct qmp_call *calls, size_t n)
{
	*b = (struct burst){
		.calls = calls,
		.reqs = calloc(n, sizeof(*b->reqs)),
		.call = calloc(n, sizeof(*b->call)),
	};
	if (b->reqs && b->call)
		return 0;
	free(b->reqs);
	free(b->call);
	return -ENOMEM;
}

static void burst_add(struct burst *b, size_t i, struct hotplug_req q)
{
	b->call[b->n] = i;
	b->reqs[b->n++] = q;
}

static struct qmp_call *burst_call(const struct burst *b, unsigned int k)
{
	return &b->calls[b->call[k]];
}

static void burst_free(struct burst *b)
{
	free(b->reqs);
	free(b->call);
}

/* Without memory for a burst: each request by itself, as it came. */
static void burst_alone(struct qmp_call *calls, size_t n,
			int (*cmd)(void *, struct json_object *,
				   struct json_object **, struct qmp_error *))
{
	for (size_t i = 0; i < n; i++)
		calls[i].rc =
			cmd(NULL, calls[i].args, &calls[i].ret, &calls[i].err);
}

static void burst_add_done(void *ctx, const struct hotplug_result *r)
{
	struct burst *b = ctx;
	struct qmp_call *c = burst_call(b, r->k);

	c->rc = device_add_done(r->cpu, b->reqs[r->k].id, r->rc, r->rep,
				&c->err);
}

/*
 * A burst of device_add as one batch: the controller presents every CPU
 * under one GED event, then finishes each (hotplug_add_many()); each call
 * is answered in QEMU's words for its own CPU.
 */
static void batch_device_add(void *ctx, struct qmp_call *calls, size_t n)
{
	struct burst b;

	(void)ctx;
	if (burst_init(&b, calls, n)) {
		burst_alone(calls, n, cmd_device_add);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct qmp_call *c = &calls[i];
		const char *id = NULL;
		unsigned int cpu = 0;

		c->rc = device_add_check(c->args, &id, &cpu, &c->err);
		if (!c->rc)
			burst_add(&b, i,
				  (struct hotplug_req){
					  .cpu = cpu,
					  .id = id,
					  .wait = arg_wait(c->args),
				  });
	}
	hotplug_add_many(qc.hp, b.reqs, b.n, 0,
			 &(const struct hotplug_many_ops){
				 .ctx = &b,
				 .done = burst_add_done,
			 },
			 NULL);
	burst_free(&b);
}

/*
 * A removal run after the batch, because an earlier request of the burst
 * named its CPU: its id is looked up again, as it would be had the burst
 * come one request at a time.
 */
static int burst_del_admit(void *ctx, unsigned int k, enum hotplug_phase phase)
{
	struct burst *b = ctx;
	struct qmp_call *c = burst_call(b, k);
	unsigned int cpu;

	if (phase != HOTPLUG_PHASE_ALONE)
		return 0;
	c->rc = device_del_check(c->args, &cpu, &c->err);
	if (!c->rc && cpu != b->reqs[k].cpu)
		c->rc = qmp_error_set(&c->err, QMP_ERROR_DEVICE_NOT_FOUND,
				      "Device '%s' not found",
				      qmp_str(c->args, "id", ""));
	return c->rc;
}

static void burst_del_done(void *ctx, const struct hotplug_result *r)
{
	struct qmp_call *c = burst_call(ctx, r->k);

	c->rc = remove_error(r->cpu, r->rc, r->rep, &c->err);
	if (c->rc && r->walk_back)
		hv_err_append(&c->err.e, ", then back to online");
}

/*
 * A burst of device_del as one batch: every removal put to the guest under
 * one GED event, so one eject scan takes them all (hotplug_remove_many());
 * one that fails goes back to online.
 */
static void batch_device_del(void *ctx, struct qmp_call *calls, size_t n)
{
	struct burst b;

	(void)ctx;
	if (burst_init(&b, calls, n)) {
		burst_alone(calls, n, cmd_device_del);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct qmp_call *c = &calls[i];
		unsigned int cpu = 0;

		c->rc = device_del_check(c->args, &cpu, &c->err);
		if (!c->rc)
			burst_add(&b, i, (struct hotplug_req){ .cpu = cpu });
	}
	hotplug_remove_many(qc.hp, b.reqs, b.n, 0,
			    &(const struct hotplug_many_ops){
				    .ctx = &b,
				    .admit = burst_del_admit,
				    .done = burst_del_done,
			    },
			    NULL);
	burst_free(&b);
}

/*
 * [{"cpu-index": n, "qom-path": s, "thread-id": host tid, "props": {...},
 * "target": "x86_64"}...] for every plugged vCPU, in index order.
 */
static int cmd_query_cpus_fast(void *ctx, struct json_object *args,
			       struct json_object **ret, struct qmp_error *err)
{
	struct json_object *a;

	(void)ctx;
	(void)args;
	(void)err;
	a = json_object_new_array();
	for (unsigned int cpu = 0; cpu < qc.max; cpu++) {
		struct json_object *o;
		struct hp_cpu_view v;
		char path[QC_PATH_MAX];

		if (view(cpu, &v) || !*qom_path(&v, path, sizeof(path)) ||
		    !hotplug_cpu_counted(&v))
			continue;
		o = json_object_new_object();
		add_int(o, "cpu-index", cpu);
		add_str(o, "qom-path", path);
		add_int(o, "thread-id", v.host_tid);
		json_object_object_add(o, "props", cpu_props(cpu));
		add_str(o, "target", "x86_64");
		json_object_array_add(a, o);
	}
	*ret = a;
	return 0;
}

/* {"running": true, "singlestep": false, "status": "running"} */
/* QEMU's RunState: before the first boot, running, or shutting down. */
static int cmd_query_status(void *ctx, struct json_object *args,
			    struct json_object **ret, struct qmp_error *err)
{
	bool stopping = qc.vm && vm_stopping(qc.vm);
	bool started = qc.hp && hotplug_started(qc.hp);
	struct json_object *o;

	(void)ctx;
	(void)args;
	(void)err;
	o = json_object_new_object();
	add_bool(o, "running", !stopping && started);
	add_bool(o, "singlestep", false);
	add_str(o, "status",
		stopping  ? "shutdown"
		: started ? "running"
			  : "prelaunch");
	*ret = o;
	return 0;
}

/*
 * {} once the power button is pressed, with QEMU's POWERDOWN event; what
 * happens next is the guest's choice (Linux: acpid or logind's poweroff).
 */
/*
 * {"mode"?: "acpi" | "agent"} -> {}.  "agent" (libvirt's shutdown --mode
 * agent): the guest agent's guest-shutdown, answered once the agent has
 * read it; the guest then powers off as it would on the button.
 */
static int cmd_system_powerdown(void *ctx, struct json_object *args,
				struct json_object **ret, struct qmp_error *err)
{
	struct hv_err why = { 0 };
	int rc;

	(void)ctx;
	(void)ret;
	if (!strcmp(qmp_str(args, "mode", "acpi"), "agent")) {
		rc = hotplug_agent_shutdown(qc.hp, &why);
		if (rc)
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "cannot ask the guest agent to "
					     "power off: %s",
					     hv_err_msg(&why));
		return 0;
	}
	/*
	 * The event first, as QEMU: the guest may act on the press at once,
	 * and stop the VM (and this server) before this handler ends.
	 */
	pthread_mutex_lock(&qc.lock);
	if (qc.s)
		qmp_emit_event(qc.s, "POWERDOWN", json_object_new_object());
	pthread_mutex_unlock(&qc.lock);
	rc = hotplug_power_button(qc.hp);
	if (rc)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "cannot press the power button: %s",
				     err_text(rc));
	return 0;
}

/*
 * {} at once; the reset follows, with its RESET event (or, under
 * --no-reboot, the VM stops with SHUTDOWN).
 */
static int cmd_system_reset(void *ctx, struct json_object *args,
			    struct json_object **ret, struct qmp_error *err)
{
	(void)ctx;
	(void)args;
	(void)ret;
	(void)err;
	if (qc.vm)
		vm_request_reset(qc.vm, VM_CAUSE_HOST_QMP_SYSTEM_RESET, 0,
				 "system_reset from the control API "
				 "(--no-reboot)");
	return 0;
}

void qmp_cmds_event_cause(const char *event, enum vm_cause cause)
{
	struct json_object *d;

	pthread_mutex_lock(&qc.lock);
	if (qc.s) {
		d = json_object_new_object();
		add_bool(d, "guest", vm_cause_guest(cause));
		add_str(d, "reason", vm_cause_name(cause));
		qmp_emit_event(qc.s, event, d);
	}
	pthread_mutex_unlock(&qc.lock);
}

/*
 * {"cpuhp-regs": {"accesses", "ignored": {reason: n...}, "ejects", "osts",
 * "guest-states", "guest-faults", "guest-targets"}, "ged": {"reads",
 * "raises", "irq-errors", "ignored": {"write", "width", "offset"}}}
 */
/* With --agent: "agent": {"answers", the protocol's counters}. */
static void agent_stats_json(struct json_object *o)
{
	struct json_object *a;
	struct qga_stats st;
	bool up;

	if (hotplug_agent_stats(qc.hp, &st, &up))
		return;
	a = json_object_new_object();
	add_bool(a, "answers", up);
	add_int(a, "calls", (int64_t)st.calls);
	add_int(a, "failed", (int64_t)st.failed);
	add_int(a, "timeouts", (int64_t)st.timeouts);
	add_int(a, "bad-replies", (int64_t)st.bad_replies);
	add_int(a, "stray-bytes", (int64_t)st.stray_bytes);
	add_int(a, "late-replies", (int64_t)st.skipped);
	json_object_object_add(o, "agent", a);
}

static int cmd_query_hotplug_stats(void *ctx, struct json_object *args,
				   struct json_object **ret,
				   struct qmp_error *err)
{
	struct json_object *o, *r, *g, *ign;
	struct hpregs_stats rs;
	struct ged_stats gs;
	struct vmexit_counts x;
	struct qmp_server *s;

	(void)ctx;
	(void)args;
	(void)err;
	pthread_mutex_lock(&qc.lock);
	s = qc.s;
	pthread_mutex_unlock(&qc.lock);
	hotplug_device_stats(qc.hp, &rs, &gs);
	r = json_object_new_object();
	add_int(r, "accesses", (int64_t)rs.accesses);
	ign = json_object_new_object();
	for (int i = 0; i < HPREGS_IGN_NR; i++)
		add_int(ign, hpregs_ign_name(i), (int64_t)rs.ignored[i]);
	json_object_object_add(r, "ignored", ign);
	add_int(r, "ejects", (int64_t)rs.ejects);
	add_int(r, "osts", (int64_t)rs.osts);
	add_int(r, "guest-states", (int64_t)rs.guest_states);
	add_int(r, "guest-faults", (int64_t)rs.guest_faults);
	add_int(r, "guest-targets", (int64_t)rs.guest_targets);
	g = json_object_new_object();
	add_int(g, "reads", (int64_t)gs.reads);
	add_int(g, "raises", (int64_t)gs.raises);
	add_int(g, "irq-errors", (int64_t)gs.irq_errors);
	ign = json_object_new_object();
	add_int(ign, "write", (int64_t)gs.ign_write);
	add_int(ign, "width", (int64_t)gs.ign_width);
	add_int(ign, "offset", (int64_t)gs.ign_offset);
	json_object_object_add(g, "ignored", ign);
	o = json_object_new_object();
	json_object_object_add(o, "cpuhp-regs", r);
	json_object_object_add(o, "ged", g);
	memset(&x, 0, sizeof(x));
	if (qc.vm)
		vmexit_read(&qc.vm->exits, &x);
	json_object_object_add(o, "exits", exits_json(&x));
	agent_stats_json(o);
	/* Waiting for the operation thread: the next batch, if they can. */
	add_int(o, "queued-operations", s ? qmp_server_queued(s) : 0);
	*ret = o;
	return 0;
}

/*
 * {} and the VM stops with exit status 0.  vm_shutdown() only signals
 * the main thread, which sends SHUTDOWN and stops the server after this
 * reply went out.
 */
static int cmd_quit(void *ctx, struct json_object *args,
		    struct json_object **ret, struct qmp_error *err)
{
	(void)ctx;
	(void)ret;
	(void)args;
	(void)err;
	if (qc.vm)
		vm_shutdown(qc.vm, 0, VM_CAUSE_HOST_QMP_QUIT,
			    "quit from the control API");
	return 0;
}

/* ---- hotvm's commands ---- */

static struct json_object *states_json(enum hp_side side)
{
	struct json_object *a = json_object_new_array();
	int nr = hotplug_nr_states(qc.hp, side);

	for (int i = 0; i < nr; i++) {
		struct cpuhp_state_info info;
		struct json_object *o;

		if (hotplug_state_info(qc.hp, side, i, &info))
			continue;
		o = json_object_new_object();
		add_int(o, "state", i);
		add_str(o, "name", info.name);
		add_bool(o, "startup", info.has_startup);
		add_bool(o, "teardown", info.has_teardown);
		add_str(o, "section", cpuhp_section_name(info.section));
		add_bool(o, "cant-stop", info.flags & CPUHP_F_CANT_STOP);
		add_bool(o, "no-fail", info.flags & CPUHP_F_NOFAIL);
		json_object_array_add(a, o);
	}
	return a;
}

/* "key": n and "key-name": s, or both null for CPUHP_INVALID. */
static void add_state(struct json_object *o, const char *key, enum hp_side side,
		      int state)
{
	char name_key[32];

	snprintf(name_key, sizeof(name_key), "%s-name", key);
	if (state == CPUHP_INVALID) {
		json_object_object_add(o, key, NULL);
		json_object_object_add(o, name_key, NULL);
		return;
	}
	add_int(o, key, state);
	json_object_object_add(o, name_key, name_or_null(side, state));
}

static struct json_object *cpu_json(const struct hp_cpu_view *v)
{
	struct json_object *o = json_object_new_object();
	struct json_object *h = json_object_new_object();
	struct json_object *g = json_object_new_object();
	char path[QC_PATH_MAX];

	add_int(o, "cpu", v->cpu);
	add_int(o, "apic-id", v->apic_id);
	add_bool(o, "boot", v->boot);
	add_bool(o, "present", v->present);
	if (v->id[0])
		add_str(o, "id", v->id);
	if (*qom_path(v, path, sizeof(path)))
		add_str(o, "qom-path", path);

	add_int(h, "state", v->host.state);
	json_object_object_add(h, "name",
			       name_or_null(HP_SIDE_HOST, v->host.state));
	add_state(h, "target", HP_SIDE_HOST, v->host.target);
	add_state(h, "fail", HP_SIDE_HOST, v->host.fail);
	add_bool(h, "broken", v->host.broken);
	add_bool(h, "rollback", v->host.rollback);
	json_object_object_add(o, "host", h);

	/* Only a reporting guest has a table to show: the others a stage. */
	add_bool(g, "reports", v->guest_reports);
	add_str(g, "stage", hotplug_stage_name(v->stage));
	json_object_object_add(
		g, "state",
		v->guest_reports ? json_object_new_int(v->guest_state) : NULL);
	json_object_object_add(
		g, "name",
		v->guest_reports ? name_or_null(HP_SIDE_GUEST, v->guest_state)
				 : NULL);
	add_state(g, "target", HP_SIDE_GUEST, v->guest_target);
	add_state(g, "fail", HP_SIDE_GUEST, v->guest_fault);
	add_bool(g, "broken", v->guest_broken);
	/* With the guest agent: Linux's number for it and its word. */
	if (v->linux_cpu >= 0) {
		add_int(g, "linux-cpu", v->linux_cpu);
		add_bool(g, "linux-online", v->linux_online == 1);
	}
	json_object_object_add(o, "guest", g);

	add_int(o, "thread-id", v->host_tid);
	add_bool(o, "parked", v->parked);
	/* The agreement check's verdict (hotplug_check()). */
	add_bool(o, "agree", !v->disagree);
	if (v->disagree)
		add_str(o, "disagreement", v->disagree_why);
	return o;
}

/*
 * {"host-states": [{"state", "name", "startup", "teardown", "section",
 * "cant-stop", "no-fail"}...], "guest-states": [...], "cpus": [{"cpu",
 * "apic-id", "boot", "present", "id"?, "qom-path"?, "host": {"state",
 * "name", "target", "target-name", "fail", "fail-name", "broken",
 * "rollback"}, "guest": {"state", "name", "target", "target-name", "fail",
 * "fail-name", "broken"}, "thread-id", "parked", "agree",
 * "disagreement"?}...]}.  Optional "cpu"
 * limits "cpus" to one vCPU.
 */
static int cmd_query_cpuhp(void *ctx, struct json_object *args,
			   struct json_object **ret, struct qmp_error *err)
{
	struct json_object *o, *cpus;
	int64_t only = qmp_int(args, "cpu", -1);

	(void)ctx;
	(void)err;
	names_refresh();
	/* On demand too; while an operation runs, its end checks. */
	hotplug_check(qc.hp);
	o = json_object_new_object();
	json_object_object_add(o, "host-states", states_json(HP_SIDE_HOST));
	json_object_object_add(o, "guest-states", states_json(HP_SIDE_GUEST));
	cpus = json_object_new_array();
	for (unsigned int cpu = 0; cpu < qc.max; cpu++) {
		struct hp_cpu_view v;

		if ((only >= 0 && cpu != only) || view(cpu, &v))
			continue;
		json_object_array_add(cpus, cpu_json(&v));
	}
	json_object_object_add(o, "cpus", cpus);
	*ret = o;
	return 0;
}

/* {"cpu", "side", "state", "name", "total-us", "steps"} after an operation. */
static struct json_object *op_reply(unsigned int cpu, enum hp_side side,
				    const struct hp_report *rep)
{
	struct json_object *o = json_object_new_object();
	struct hp_cpu_view v;
	int state;

	view(cpu, &v);
	state = side == HP_SIDE_HOST ? v.host.state : v.guest_state;
	add_int(o, "cpu", cpu);
	add_str(o, "side", side_names[side]);
	add_int(o, "state", state);
	json_object_object_add(o, "name", name_or_null(side, state));
	report_json(o, rep);
	return o;
}

/*
 * {"cpu", "side": "host"|"guest", "target": name or number, "timeout-ms"?}
 * -> {"cpu", "side", "state", "name", "total-us", "steps": [...]}: Linux's
 * cpuN/hotplug/target, partial bring-up and take-down on either side.
 */
static int cmd_cpuhp_set_target(void *ctx, struct json_object *args,
				struct json_object **ret, struct qmp_error *err)
{
	static struct hp_report rep;
	enum hp_side side = arg_side(args);
	unsigned int cpu = arg_cpu(args);
	int target, rc;
	char name[QC_NAME_MAX];

	(void)ctx;
	if (arg_state(args, "target", side, false, &target, err))
		return -EINVAL;
	names_refresh();
	rc = hotplug_set_target(qc.hp, cpu, side, target, arg_timeout(args),
				fresh(&rep));
	state_name(side, target, name, sizeof(name));
	if (rc && hv_err_is_set(&rep.err))
		return op_error(err, cpu, "set-target", rc, &rep);
	/* The cpuhp library's own no, which carries no words. */
	if (rc == -EINVAL && !rep.n)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "cpu %u: %s state %s is not a valid "
				     "target",
				     cpu, side_names[side], name);
	if (rc)
		return op_error(err, cpu, "set-target", rc, &rep);
	*ret = op_reply(cpu, side, &rep);
	return 0;
}

/*
 * {"cpu", "side", "state": name, number, or null/"none"/-1 to clear} -> {}:
 * Linux's cpuN/hotplug/fail; the next callback of that state fails.
 */
static int cmd_cpuhp_inject_fault(void *ctx, struct json_object *args,
				  struct json_object **ret,
				  struct qmp_error *err)
{
	/* The operation thread's alone, as set-target's. */
	static struct hp_report rep;
	enum hp_side side = arg_side(args);
	unsigned int cpu = arg_cpu(args);
	int state, rc;
	char name[QC_NAME_MAX];

	(void)ctx;
	(void)ret;
	if (arg_state(args, "state", side, true, &state, err))
		return -EINVAL;
	rc = hotplug_inject(qc.hp, cpu, side, state, fresh(&rep));
	if (rc == -EINVAL)
		return qmp_error_set(
			err, QMP_ERROR_GENERIC,
			"cpu %u: %s state %s cannot fail (no "
			"callback, or a must-not-fail state)",
			cpu, side_names[side],
			state_name(side, state, name, sizeof(name)));
	if (rc)
		return op_error(err, cpu, "inject-fault", rc, &rep);
	return 0;
}

/*
 * {"cpu", "state": "online"|"offline", "timeout-ms"?} -> {"cpu", "state",
 * "total-us", "steps": [{"side", "state", "name", "direction", "rollback",
 * "injected", "ret", "us"}...]}, once the host table reached its target
 * (and with it the guest) or failed and rolled back.
 */
static int cmd_cpu_hotplug(void *ctx, struct json_object *args,
			   struct json_object **ret, struct qmp_error *err)
{
	static struct hp_report rep;
	struct json_object *o;
	const char *state = qmp_str(args, "state", "");
	unsigned int cpu = arg_cpu(args);
	int timeout = arg_timeout(args), rc;

	(void)ctx;
	names_refresh();
	memset(&rep, 0, sizeof(rep));
	if (!strcmp(state, HOST_STATE_NAME(HOST_ONLINE))) {
		struct hp_cpu_view before;
		bool was = !view(cpu, &before) && hotplug_cpu_plugged(&before);

		rc = hotplug_cpu_add(qc.hp, cpu, NULL, timeout, arg_wait(args),
				     &rep);
		/* A partly-up CPU keeps its id and path: it was plugged. */
		if (!rc && !was)
			mark_added(cpu, NULL);
		if (rc == -EEXIST)
			rc = 0; /* already there: a no-op, like Linux */
		if (rc)
			return op_error(err, cpu, HOST_STATE_NAME(HOST_ONLINE),
					rc, &rep);
	} else {
		struct hp_cpu_view v;

		if (!view(cpu, &v) && !hotplug_cpu_plugged(&v)) {
			rc = 0; /* already offline */
		} else if (!guest_cpu_removable(cpu)) {
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Boot CPU is unpluggable");
		} else {
			rc = remove_cpu(cpu, timeout, &rep, err);
			if (rc)
				return rc;
		}
	}
	o = json_object_new_object();
	add_int(o, "cpu", cpu);
	add_str(o, "state", state);
	report_json(o, &rep);
	*ret = o;
	return 0;
}

/*
 * {"cpu", "timeout-ms"?} -> {"cpu", "state": "online"|"offline", "total-us",
 * "steps"}: after a failed rollback left the CPU broken, puts it back in
 * line with what the guest and the host really hold (hotplug.h,
 * hotplug_cpu_recover()): online if the guest has it, else offline.
 */
static int cmd_cpuhp_recover(void *ctx, struct json_object *args,
			     struct json_object **ret, struct qmp_error *err)
{
	static struct hp_report rep;
	struct json_object *o;
	unsigned int cpu = arg_cpu(args);
	int rc;
	bool online;

	(void)ctx;
	names_refresh();
	rc = hotplug_cpu_recover(qc.hp, cpu, arg_timeout(args), fresh(&rep),
				 &online);
	if (rc == -EPERM && !hv_err_is_set(&rep.err))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "cpu %u: the boot CPU is never walked: "
				     "there is nothing to recover",
				     cpu);
	if (rc)
		return op_error(err, cpu, "recover", rc, &rep);
	o = json_object_new_object();
	add_int(o, "cpu", cpu);
	add_str(o, "state",
		HOST_STATE_NAME(online ? HOST_ONLINE : HOST_OFFLINE));
	report_json(o, &rep);
	*ret = o;
	return 0;
}

/* ---- cpu-resize: the controller's, all or nothing (hotplug_resize()) */

/* One cpu-resize call: its error, and the QOM paths an undo gives back. */
struct resize_call {
	struct qmp_error *err;
	int rc;		       /* the first CPU's failure, said in err */
	struct qc_slot *slots; /* as they were before the resize */
};

static void resize_done(void *ctx, const struct hotplug_result *r)
{
	struct resize_call *z = ctx;

	if (r->phase == HOTPLUG_PHASE_UNDO) {
		/* A removal undone: the CPU gets its old path back. */
		if (!r->rc && r->add) {
			pthread_mutex_lock(&qc.lock);
			qc.slots[r->cpu] = z->slots[r->cpu];
			pthread_mutex_unlock(&qc.lock);
		}
		return;
	}
	if (!r->rc) {
		if (r->add)
			mark_added(r->cpu, NULL);
		return;
	}
	if (z->rc)
		return;
	if (r->add) {
		z->rc = op_error(z->err, r->cpu, "hot-add", r->rc, r->rep);
		return;
	}
	z->rc = remove_error(r->cpu, r->rc, r->rep, z->err);
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
				      "cpu-resize: %s", err_text(rc));
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
	add_int(o, "count", r->count);
	json_object_object_add(o, "added", added);
	json_object_object_add(o, "removed", removed);
	return o;
}

/*
 * {"count": n, "timeout-ms"?} -> {"count", "added": [cpu...], "removed":
 * [cpu...]}: hot-adds the lowest free slots or hot-removes the highest
 * plugged CPUs (never CPU 0) until n are plugged.  All or nothing: if one
 * step fails, the steps already done are undone before the error.
 */
static int cmd_cpu_resize(void *ctx, struct json_object *args,
			  struct json_object **ret, struct qmp_error *err)
{
	struct hotplug_resize_result res = {
		.steps = calloc(qc.max, sizeof(*res.steps)),
	};
	struct resize_call z = {
		.err = err,
		.slots = calloc(qc.max, sizeof(*z.slots)),
	};
	int64_t count = qmp_int(args, "count", 1);
	int rc = -ENOMEM;

	(void)ctx;
	names_refresh();
	if (res.steps && z.slots) {
		pthread_mutex_lock(&qc.lock);
		memcpy(z.slots, qc.slots, qc.max * sizeof(*z.slots));
		pthread_mutex_unlock(&qc.lock);
		rc = hotplug_resize(qc.hp, (unsigned int)count,
				    arg_timeout(args),
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

/* ---- registration ---- */

/*
 * Every command, declared once: name, where it runs (no flags: an
 * operation, one at a time; vmm/api/qmp.h), what it does, and its
 * arguments.  The server checks requests against this table before a
 * handler runs, query-commands lists it, and tests/qmp/test_qmp_cmds.c
 * holds README.md's command list and `hotvm cpu --help` to it.
 */
static const char *const side_values[] = { "host", "guest", NULL };
static const char *const online_values[] = { "online", "offline", NULL };
static const char *const wait_values[] = { "acknowledged", "started", NULL };

#define ARG_CPU                                                                \
	{                                                                      \
		.name = "cpu", .type = QMP_ARG_INT, .max_fn = max_cpu_index,   \
		.help = "the vCPU slot, 0 to max-1 (socket-id)"                \
	}
#define ARG_SIDE                                                               \
	{                                                                      \
		.name = "side", .type = QMP_ARG_STR, .values = side_values,    \
		.help = "which table: the host's or the guest's"               \
	}
#define ARG_TIMEOUT                                                            \
	{                                                                      \
		.name = "timeout-ms", .type = QMP_ARG_INT, .optional = true,   \
		.max = QC_TIMEOUT_MAX,                                         \
		.help = "bound on each wait for the guest; 0 or absent: "      \
			"--hotplug-timeout"                                    \
	}
#define ARG_WAIT                                                               \
	{                                                                      \
		.name = "wait", .type = QMP_ARG_STR, .optional = true,         \
		.values = wait_values,                                         \
		.help = "with a guest that does not report: what to wait "     \
			"for (default --hotplug-wait)"                         \
	}
#define ARG_TOPO(n)                                                            \
	{                                                                      \
		.name = n, .type = QMP_ARG_INT_STR, .optional = true,          \
		.help = "topology property, as query-hotpluggable-cpus "       \
			"gives it"                                             \
	}

static const struct qmp_arg device_add_args[] = {
	{ .name = "driver",
	  .type = QMP_ARG_STR,
	  .help = "a CPU model, \"" QMP_CMDS_CPU_TYPE "\" (any *" QC_X86_SUFFIX
		  ")" },
	{ .name = "id",
	  .type = QMP_ARG_STR,
	  .optional = true,
	  .help = "device id for device_del and DEVICE_DELETED" },
	ARG_TOPO("socket-id"),
	ARG_TOPO("die-id"),
	ARG_TOPO("core-id"),
	ARG_TOPO("thread-id"),
	ARG_WAIT,
	{ 0 },
};

static const struct qmp_arg device_del_args[] = {
	{ .name = "id",
	  .type = QMP_ARG_STR,
	  .help = "the device id, or its QOM path" },
	{ 0 },
};

static const char *const powerdown_modes[] = { "acpi", "agent", NULL };

static const struct qmp_arg powerdown_args[] = {
	{ .name = "mode",
	  .type = QMP_ARG_STR,
	  .optional = true,
	  .values = powerdown_modes,
	  .help = "acpi (the power button, the default) or agent (the guest "
		  "agent's guest-shutdown; needs --agent)" },
	{ 0 },
};

static const struct qmp_arg query_cpuhp_args[] = {
	{ .name = "cpu",
	  .type = QMP_ARG_INT,
	  .optional = true,
	  .max_fn = max_cpu_index,
	  .help = "only this vCPU" },
	{ 0 },
};

static const struct qmp_arg set_target_args[] = {
	ARG_CPU,
	ARG_SIDE,
	{ .name = "target",
	  .type = QMP_ARG_NAME_INT,
	  .help = "a state of that table, by name or number" },
	ARG_TIMEOUT,
	{ 0 },
};

static const struct qmp_arg inject_args[] = {
	ARG_CPU,
	ARG_SIDE,
	{ .name = "state",
	  .type = QMP_ARG_NAME_INT,
	  .nullable = true,
	  .help = "the state whose next callback fails; null, \"none\" "
		  "or -1 clears it" },
	{ 0 },
};

static const struct qmp_arg cpu_hotplug_args[] = {
	ARG_CPU,
	{ .name = "state",
	  .type = QMP_ARG_STR,
	  .values = online_values,
	  .help = "where the vCPU is to be" },
	ARG_TIMEOUT,
	ARG_WAIT,
	{ 0 },
};

static const struct qmp_arg recover_args[] = {
	ARG_CPU,
	ARG_TIMEOUT,
	{ 0 },
};

static const struct qmp_arg resize_args[] = {
	{ .name = "count",
	  .type = QMP_ARG_INT,
	  .min = 1,
	  .max_fn = max_cpus,
	  .help = "how many vCPUs are to run" },
	ARG_TIMEOUT,
	{ 0 },
};

/*
 * What each command's reply holds (QAPI's "returns"): README.md's table
 * and tests/api/test_api_replies.c are made from these.
 */
#define RET(n, t)                                                              \
	{                                                                      \
		.name = n, .type = t                                           \
	}
#define RET_OPT(n, t)                                                          \
	{                                                                      \
		.name = n, .type = t, .optional = true                         \
	}
#define RET_NULL(n, t)                                                         \
	{                                                                      \
		.name = n, .type = t, .nullable = true                         \
	}
#define RET_OBJ(n, m)                                                          \
	{                                                                      \
		.name = n, .type = QMP_T_OBJECT, .members = m                  \
	}
#define RET_LIST(n, m)                                                         \
	{                                                                      \
		.name = n, .type = QMP_T_ARRAY, .elem = QMP_T_OBJECT,          \
		.members = m                                                   \
	}

/* QEMU's CpuInstanceProperties for -smp sockets=max,cores=1,threads=1. */
static const struct qmp_field props_ret[] = {
	RET("socket-id", QMP_T_INT),
	RET("core-id", QMP_T_INT),
	RET("thread-id", QMP_T_INT),
	{ 0 },
};

static const struct qmp_field hotpluggable_ret[] = {
	RET("type", QMP_T_STR),
	RET("vcpus-count", QMP_T_INT),
	RET_OBJ("props", props_ret),
	RET_OPT("qom-path", QMP_T_STR), /* plugged only */
	{ 0 },
};

static const struct qmp_field cpus_fast_ret[] = {
	RET("cpu-index", QMP_T_INT),
	RET("qom-path", QMP_T_STR),
	RET("thread-id", QMP_T_INT), /* the host thread that runs it */
	RET_OBJ("props", props_ret),
	RET("target", QMP_T_STR),
	{ 0 },
};

static const struct qmp_field status_ret[] = {
	RET("running", QMP_T_BOOL),
	RET("singlestep", QMP_T_BOOL),
	RET("status", QMP_T_STR),
	{ 0 },
};

/* One state of a table. */
static const struct qmp_field state_info_ret[] = {
	RET("state", QMP_T_INT),
	RET_NULL("name", QMP_T_STR), /* a free dynamic slot has none */
	RET("startup", QMP_T_BOOL),
	RET("teardown", QMP_T_BOOL),
	RET("section", QMP_T_STR),
	RET("cant-stop", QMP_T_BOOL),
	RET("no-fail", QMP_T_BOOL),
	{ 0 },
};

/* Where a vCPU is in the host table; a null target or fail: none. */
static const struct qmp_field cpu_host_ret[] = {
	RET("state", QMP_T_INT),
	RET_NULL("name", QMP_T_STR),
	RET_NULL("target", QMP_T_INT),
	RET_NULL("target-name", QMP_T_STR),
	RET_NULL("fail", QMP_T_INT),
	RET_NULL("fail-name", QMP_T_STR),
	RET("broken", QMP_T_BOOL),
	RET("rollback", QMP_T_BOOL),
	{ 0 },
};

/* ... and in the guest's. */
static const struct qmp_field cpu_guest_ret[] = {
	RET("reports", QMP_T_BOOL),
	RET("stage", QMP_T_STR),
	RET_NULL("state", QMP_T_INT), /* only a guest that reports has one */
	RET_NULL("name", QMP_T_STR),
	RET_NULL("target", QMP_T_INT),
	RET_NULL("target-name", QMP_T_STR),
	RET_NULL("fail", QMP_T_INT),
	RET_NULL("fail-name", QMP_T_STR),
	RET("broken", QMP_T_BOOL),
	/* With the guest agent: Linux's number for the CPU, and its word. */
	RET_OPT("linux-cpu", QMP_T_INT),
	RET_OPT("linux-online", QMP_T_BOOL),
	{ 0 },
};

static const struct qmp_field cpuhp_cpu_ret[] = {
	RET("cpu", QMP_T_INT),
	RET("apic-id", QMP_T_INT),
	RET("boot", QMP_T_BOOL),
	RET("present", QMP_T_BOOL),
	RET_OPT("id", QMP_T_STR),
	RET_OPT("qom-path", QMP_T_STR),
	RET_OBJ("host", cpu_host_ret),
	RET_OBJ("guest", cpu_guest_ret),
	RET("thread-id", QMP_T_INT),
	RET("parked", QMP_T_BOOL),
	RET("agree", QMP_T_BOOL),
	RET_OPT("disagreement", QMP_T_STR),
	{ 0 },
};

static const struct qmp_field cpuhp_ret[] = {
	RET_LIST("host-states", state_info_ret),
	RET_LIST("guest-states", state_info_ret),
	RET_LIST("cpus", cpuhp_cpu_ret),
	{ 0 },
};

/*
 * Exits to user space by kind (vmexit_kind_name()), and by the bus device
 * that took each, the devices that took none left out.
 */
static const struct qmp_field exits_ret[] = {
	RET("total", QMP_T_INT),
	RET("pio", QMP_T_INT),
	RET("mmio", QMP_T_INT),
	RET("hlt", QMP_T_INT),
	RET("shutdown", QMP_T_INT),
	RET("other", QMP_T_INT),
	{ .name = "by-device", .type = QMP_T_MAP, .elem = QMP_T_INT },
	{ 0 },
};

/* One step an operation ran, with its time (struct hp_step_time). */
static const struct qmp_field step_ret[] = {
	RET("side", QMP_T_STR),
	RET("state", QMP_T_INT),
	RET_NULL("name", QMP_T_STR),
	RET("direction", QMP_T_STR),
	RET("rollback", QMP_T_BOOL),
	RET("injected", QMP_T_BOOL),
	RET("ret", QMP_T_INT),
	RET("us", QMP_T_INT),
	{ 0 },
};

/*
 * An operation's report (struct hp_report); "onlined-by" says who onlined
 * a CPU a Linux guest left offline (with the guest agent).
 */
#define RET_REPORT                                                             \
	RET("total-us", QMP_T_INT), RET_OBJ("exits", exits_ret),               \
		RET_OPT("onlined-by", QMP_T_STR), RET_LIST("steps", step_ret), \
		RET_OPT("steps-dropped", QMP_T_INT)

static const struct qmp_field set_target_ret[] = {
	RET("cpu", QMP_T_INT),
	RET("side", QMP_T_STR),
	RET("state", QMP_T_INT),
	RET_NULL("name", QMP_T_STR),
	RET_REPORT,
	{ 0 },
};

/* cpu-hotplug and cpuhp-recover: where the vCPU ended, and the steps. */
static const struct qmp_field cpu_op_ret[] = {
	RET("cpu", QMP_T_INT),
	RET("state", QMP_T_STR),
	RET_REPORT,
	{ 0 },
};

static const struct qmp_field resize_ret[] = {
	RET("count", QMP_T_INT),
	{ .name = "added", .type = QMP_T_ARRAY, .elem = QMP_T_INT },
	{ .name = "removed", .type = QMP_T_ARRAY, .elem = QMP_T_INT },
	{ 0 },
};

static const struct qmp_field regs_stats_ret[] = {
	RET("accesses", QMP_T_INT),
	/* By reason, as hpregs_ign_name() names them. */
	{ .name = "ignored", .type = QMP_T_MAP, .elem = QMP_T_INT },
	RET("ejects", QMP_T_INT),
	RET("osts", QMP_T_INT),
	RET("guest-states", QMP_T_INT),
	RET("guest-faults", QMP_T_INT),
	RET("guest-targets", QMP_T_INT),
	{ 0 },
};

static const struct qmp_field ged_ignored_ret[] = {
	RET("write", QMP_T_INT),
	RET("width", QMP_T_INT),
	RET("offset", QMP_T_INT),
	{ 0 },
};

static const struct qmp_field ged_stats_ret[] = {
	RET("reads", QMP_T_INT),
	RET("raises", QMP_T_INT),
	RET("irq-errors", QMP_T_INT),
	RET_OBJ("ignored", ged_ignored_ret),
	{ 0 },
};

/* With --agent: the guest agent's calls and how they went. */
static const struct qmp_field agent_stats_ret[] = {
	RET("answers", QMP_T_BOOL),	RET("calls", QMP_T_INT),
	RET("failed", QMP_T_INT),	RET("timeouts", QMP_T_INT),
	RET("bad-replies", QMP_T_INT),	RET("stray-bytes", QMP_T_INT),
	RET("late-replies", QMP_T_INT), { 0 },
};

static const struct qmp_field stats_ret[] = {
	RET_OBJ("cpuhp-regs", regs_stats_ret),
	RET_OBJ("ged", ged_stats_ret),
	RET_OBJ("exits", exits_ret),
	{ .name = "agent",
	  .type = QMP_T_OBJECT,
	  .optional = true,
	  .members = agent_stats_ret },
	RET("queued-operations", QMP_T_INT),
	{ 0 },
};

static const struct qmp_command qc_commands[] = {
	{ .name = "query-hotpluggable-cpus",
	  .handler = cmd_query_hotpluggable_cpus,
	  .flags = QMP_CMD_QUERY,
	  .help = "every vCPU slot, its topology and QOM path if plugged",
	  .returns = QMP_RETURNS_LIST(hotpluggable_ret) },
	{ .name = "device_add",
	  .handler = cmd_device_add,
	  .batch = batch_device_add,
	  .flags = QMP_CMD_OPEN_ARGS,
	  .help = "hot-add a vCPU; replies once the guest has it online",
	  .args = device_add_args,
	  .returns = QMP_RETURNS_NOTHING },
	{ .name = "device_del",
	  .handler = cmd_device_del,
	  .batch = batch_device_del,
	  .help = "hot-remove a vCPU; replies after its DEVICE_DELETED",
	  .args = device_del_args,
	  .returns = QMP_RETURNS_NOTHING },
	{ .name = "query-cpus-fast",
	  .handler = cmd_query_cpus_fast,
	  .flags = QMP_CMD_QUERY,
	  .help = "the vCPUs the guest runs",
	  .returns = QMP_RETURNS_LIST(cpus_fast_ret) },
	{ .name = "query-status",
	  .handler = cmd_query_status,
	  .flags = QMP_CMD_FAST,
	  .help = "whether the VM runs",
	  .returns = QMP_RETURNS_OBJECT(status_ret) },
	{ .name = "quit",
	  .handler = cmd_quit,
	  .flags = QMP_CMD_FAST,
	  .help = "stop the VM (exit status 0)",
	  .returns = QMP_RETURNS_NOTHING },
	/* An operation: the interrupt is an ioctl the I/O thread may not make. */
	{ .name = "system_powerdown",
	  .handler = cmd_system_powerdown,
	  .help = "press the ACPI power button, or ask the guest agent; the "
		  "guest decides",
	  .args = powerdown_args,
	  .returns = QMP_RETURNS_NOTHING },
	{ .name = "system_reset",
	  .handler = cmd_system_reset,
	  .flags = QMP_CMD_FAST,
	  .help = "reset the VM (with --no-reboot: stop it)",
	  .returns = QMP_RETURNS_NOTHING },
	{ .name = "query-cpuhp",
	  .handler = cmd_query_cpuhp,
	  .flags = QMP_CMD_QUERY,
	  .help = "the host and guest state tables and where each vCPU is",
	  .args = query_cpuhp_args,
	  .returns = QMP_RETURNS_OBJECT(cpuhp_ret) },
	{ .name = "cpuhp-set-target",
	  .handler = cmd_cpuhp_set_target,
	  .help = "walk one side of a vCPU to a named state",
	  .args = set_target_args,
	  .returns = QMP_RETURNS_OBJECT(set_target_ret) },
	{ .name = "cpuhp-inject-fault",
	  .handler = cmd_cpuhp_inject_fault,
	  .help = "make a state's next callback fail on one vCPU",
	  .args = inject_args,
	  .returns = QMP_RETURNS_NOTHING },
	{ .name = "cpu-hotplug",
	  .handler = cmd_cpu_hotplug,
	  .help = "online or offline a vCPU, with the time of every step",
	  .args = cpu_hotplug_args,
	  .returns = QMP_RETURNS_OBJECT(cpu_op_ret) },
	{ .name = "cpuhp-recover",
	  .handler = cmd_cpuhp_recover,
	  .help = "put a vCPU a failed rollback left broken back in line",
	  .args = recover_args,
	  .returns = QMP_RETURNS_OBJECT(cpu_op_ret) },
	{ .name = "cpu-resize",
	  .handler = cmd_cpu_resize,
	  .help = "add or remove vCPUs until count run; all or nothing",
	  .args = resize_args,
	  .returns = QMP_RETURNS_OBJECT(resize_ret) },
	{ .name = "query-hotplug-stats",
	  .handler = cmd_query_hotplug_stats,
	  .flags = QMP_CMD_QUERY,
	  .help = "guest accesses to the GED and register block, and the "
		  "ignored ones by reason; exits to user space by kind and "
		  "device; operations queued; the guest agent's calls "
		  "and failures",
	  .returns = QMP_RETURNS_OBJECT(stats_ret) },
};

const struct qmp_command *qmp_cmds_table(size_t *n)
{
	*n = sizeof(qc_commands) / sizeof(qc_commands[0]);
	return qc_commands;
}

static const struct hp_events qc_events = {
	.state = ev_state,
	.ost = ev_ost,
	.deleted = ev_deleted,
	.stage = ev_stage,
	.online = ev_online,
	.agreement = ev_agreement,
};

static void qc_free_locked(void)
{
	free(qc.slots);
	free(qc.names[0].name);
	free(qc.names[1].name);
	qc.slots = NULL;
	qc.names[0] = qc.names[1] = (struct qc_names){ 0 };
	qc.s = NULL;
	qc.hp = NULL;
	qc.vm = NULL;
	qc.max = 0;
	qc.next_anon = 0;
}

void qmp_cmds_detach(struct hotplug *hp)
{
	if (hp)
		hotplug_set_events(hp, NULL);
	/* A callback that copied the old events before finishes first. */
	pthread_mutex_lock(&qc.lock);
	if (!hp || hp == qc.hp)
		qc.s = NULL;
	pthread_mutex_unlock(&qc.lock);
}

void qmp_cmds_unregister(struct hotplug *hp)
{
	qmp_cmds_detach(hp);
	pthread_mutex_lock(&qc.lock);
	if (!hp || hp == qc.hp)
		qc_free_locked();
	pthread_mutex_unlock(&qc.lock);
}

int qmp_cmds_register(struct qmp_server *s, struct hotplug *hp, struct vm *vm)
{
	unsigned int max = hotplug_max_cpus(hp);
	struct qc_slot *slots = calloc(max ? max : 1, sizeof(*slots));
	int nh = hotplug_nr_states(hp, HP_SIDE_HOST);
	int ng = hotplug_nr_states(hp, HP_SIDE_GUEST);
	char(*hn)[QC_NAME_MAX] = calloc(nh > 0 ? nh : 1, sizeof(*hn));
	char(*gn)[QC_NAME_MAX] = calloc(ng > 0 ? ng : 1, sizeof(*gn));
	int rc;

	if (!slots || !hn || !gn || !max || nh <= 0 || ng <= 0) {
		free(slots);
		free(hn);
		free(gn);
		return max && nh > 0 && ng > 0 ? -ENOMEM : -EINVAL;
	}
	rc = qmp_server_register(s, qc_commands,
				 sizeof(qc_commands) / sizeof(qc_commands[0]),
				 NULL);
	if (rc) {
		free(slots);
		free(hn);
		free(gn);
		return rc;
	}
	if (qc.hp)
		qmp_cmds_unregister(qc.hp);
	for (unsigned int cpu = 0; cpu < max; cpu++) {
		struct hp_cpu_view v;

		if (!hotplug_cpu_view(hp, cpu, &v) && v.boot)
			slots[cpu].kind = QC_PATH_UNATTACHED;
	}
	pthread_mutex_lock(&qc.lock);
	qc.s = s;
	qc.hp = hp;
	qc.vm = vm;
	qc.max = max;
	qc.slots = slots;
	qc.next_anon = 0;
	qc.names[HP_SIDE_HOST] = (struct qc_names){ .n = nh, .name = hn };
	qc.names[HP_SIDE_GUEST] = (struct qc_names){ .n = ng, .name = gn };
	pthread_mutex_unlock(&qc.lock);
	names_refresh();
	hotplug_set_events(hp, &qc_events);
	return 0;
}
