// SPDX-License-Identifier: GPL-2.0-only
/*
 * The controller's events as QMP events (docs/control-api.md): QEMU's
 * ACPI_DEVICE_OST, DEVICE_DELETED, POWERDOWN and the lifecycle's
 * SHUTDOWN and RESET with QEMU's shapes, and hotvm's CPUHP_STATE,
 * CPUS_CHANGED and CPUHP_AGREEMENT.  The callbacks run in whatever thread
 * made the change, under qc->lock; once the commands are detached they do
 * nothing.
 */
#include <stdio.h>

#include <json-c/json.h>

#include "hotplug_linux.h"
#include "qmp.h"
#include "qmp_cmds_internal.h"
#include "vm.h"

/* @v as a JSON string ("..." with escapes) into @buf, or null. */
static void json_quote(const char *v, char *buf, size_t len)
{
	struct json_object *o = v ? json_object_new_string(v) : NULL;

	snprintf(buf, len, "%s",
		 o ? json_object_to_json_string_ext(
			     o, JSON_C_TO_STRING_PLAIN |
					JSON_C_TO_STRING_NOSLASHESCAPE)
		   : "null");
	json_object_put(o);
}

/*
 * CPUHP_STATE for every step on either side: the event of the hot path
 * (some 20 a hot-add), so its data is written as text at once rather than
 * built of json-c objects (docs/design.md §14).  Only the state's name
 * (a hook's, on the host's dynamic range) needs escaping.
 */
static void ev_state(void *ctx, enum hp_side side, const struct cpuhp_notice *n,
		     uint64_t at_ns)
{
	struct qmp_cmds *qc = ctx;
	char name[QC_NAME_MAX * 6 + 3], d[QC_NAME_MAX * 6 + 256];

	pthread_mutex_lock(&qc->lock);
	if (!qc->s)
		goto out;
	json_quote(qc_name_locked(qc, side, n->state), name, sizeof(name));
	snprintf(d, sizeof(d),
		 "{\"cpu\":%u,\"side\":\"%s\",\"kind\":\"%s\",\"state\":%d,"
		 "\"name\":%s,\"direction\":\"%s\",\"rollback\":%s,"
		 "\"injected\":%s,\"ret\":%d}",
		 n->cpu, qc_side_names[side],
		 n->kind == CPUHP_NOTICE_DONE ? "done" : "step", n->state, name,
		 n->bringup ? "up" : "down", n->rollback ? "true" : "false",
		 n->injected ? "true" : "false", n->ret);
	/*
	 * Progress: a client that lags may miss some, and is told so.  The
	 * timestamp is when the step ended (the guest's own clock for what
	 * its report ring carried), not when the host read of it.
	 */
	qmp_emit_event_text_lossy_at(qc->s, "CPUHP_STATE", d, at_ns);
out:
	pthread_mutex_unlock(&qc->lock);
}

/* An event's data that names a CPU: {"cpu", "id"?}, the id if it has one. */
static struct json_object *cpu_data(unsigned int cpu, const char *id)
{
	struct json_object *d = json_object_new_object();

	qc_add_int(d, "cpu", cpu);
	if (id && *id)
		qc_add_str(d, "id", id);
	return d;
}

/*
 * Sends event @name with data @d (its reference taken over) to the
 * clients, unless the server has gone; @lossy as qmp_emit_event_lossy().
 */
static void send_event(struct qmp_cmds *qc, const char *name,
		       struct json_object *d, bool lossy)
{
	pthread_mutex_lock(&qc->lock);
	if (!qc->s)
		json_object_put(d);
	else if (lossy)
		qmp_emit_event_lossy(qc->s, name, d);
	else
		qmp_emit_event(qc->s, name, d);
	pthread_mutex_unlock(&qc->lock);
}

/*
 * What the host observed of the guest (hp_stage): a CPUHP_STATE on the
 * guest side with "stage" instead of a state of the guest's table, which
 * is all there is to report for a guest that does not report its own.
 */
static void ev_stage(void *ctx, unsigned int cpu, const char *id,
		     enum hp_stage st)
{
	struct json_object *d = cpu_data(cpu, id);

	qc_add_str(d, "side", qc_side_names[HP_SIDE_GUEST]);
	qc_add_str(d, "kind", "stage");
	qc_add_str(d, "stage", hotplug_stage_name(st));
	qc_add_str(d, "direction",
		   st == HP_STAGE_ABSENT || st == HP_STAGE_EJECTING ? "down"
								    : "up");
	send_event(ctx, "CPUHP_STATE", d, true);
}

/* QEMU's ACPI_DEVICE_OST: {"info": ACPIOSTInfo}. */
static void ev_ost(void *ctx, unsigned int cpu, const char *id, uint32_t event,
		   uint32_t status)
{
	struct qmp_cmds *qc = ctx;
	struct json_object *d, *info;
	char slot[16];

	pthread_mutex_lock(&qc->lock);
	if (!qc->s)
		goto out;
	info = json_object_new_object();
	if (id && *id)
		qc_add_str(info, "device", id);
	snprintf(slot, sizeof(slot), "%u", cpu);
	qc_add_str(info, "slot", slot);
	qc_add_str(info, "slot-type", "CPU");
	qc_add_int(info, "source", event);
	qc_add_int(info, "status", status);
	d = json_object_new_object();
	json_object_object_add(d, "info", info);
	qmp_emit_event(qc->s, "ACPI_DEVICE_OST", d);
out:
	pthread_mutex_unlock(&qc->lock);
}

/* QEMU's DEVICE_DELETED: {"device": id (only if it has one), "path"}. */
static void ev_deleted(void *ctx, unsigned int cpu, const char *id)
{
	struct qmp_cmds *qc = ctx;
	struct json_object *d;
	struct qc_slot *sl;
	char path[QC_PATH_MAX];

	pthread_mutex_lock(&qc->lock);
	if (!qc->s || cpu >= qc->max)
		goto out;
	sl = &qc->slots[cpu];
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
			 qc->next_anon++);
	*sl = (struct qc_slot){ .kind = QC_PATH_NONE };
	d = json_object_new_object();
	if (id && *id)
		qc_add_str(d, "device", id);
	qc_add_str(d, "path", path);
	qmp_emit_event(qc->s, "DEVICE_DELETED", d);
out:
	pthread_mutex_unlock(&qc->lock);
}

/*
 * hotvm's CPUS_CHANGED: {"cpu", "online", "count", "cpulist"} whenever
 * the set of online vCPUs changes, whichever walk changed it; never
 * dropped, so an orchestrator can follow the set without polling.
 */
static void ev_online(void *ctx, unsigned int cpu, bool online,
		      unsigned int count, const char *cpulist)
{
	struct json_object *d = cpu_data(cpu, NULL);

	qc_add_bool(d, "online", online);
	qc_add_int(d, "count", count);
	qc_add_str(d, "cpulist", cpulist);
	send_event(ctx, "CPUS_CHANGED", d, false);
}

/*
 * hotvm's CPUHP_HOOK_IGNORED: {"cpu", "id"?, "state", "direction",
 * "reason"}: a hook failed or timed out in a walk it cannot veto (a
 * reset's, the guest's own eject), which went on without it.
 */
static void ev_hook_ignored(void *ctx, unsigned int cpu, const char *id,
			    const char *state, bool up, const char *why)
{
	struct json_object *d = cpu_data(cpu, id);

	qc_add_str(d, "state", state);
	qc_add_str(d, "direction", up ? "up" : "down");
	qc_add_str(d, "reason", why);
	send_event(ctx, "CPUHP_HOOK_IGNORED", d, false);
}

/*
 * hotvm's CPUHP_AGREEMENT: {"cpu", "id"?, "agree", "reason"?}, when the
 * agreement check finds a vCPU's sides apart (it then needs
 * cpuhp-recover) and when cpuhp-recover has put them back in line.
 */
static void ev_agreement(void *ctx, unsigned int cpu, const char *id,
			 bool agree, const char *why)
{
	struct json_object *d = cpu_data(cpu, id);

	qc_add_bool(d, "agree", agree);
	if (!agree)
		qc_add_str(d, "reason", why);
	send_event(ctx, "CPUHP_AGREEMENT", d, false);
}

static void add_time(struct json_object *o, const char *k, int64_t us)
{
	struct json_object *t = json_object_new_object();

	qc_add_int(t, "seconds", us / 1000000);
	qc_add_int(t, "microseconds", us % 1000000);
	json_object_object_add(o, k, t);
}

/*
 * One step of Linux's own table (linux_trace.c): a CPUHP_STATE on the
 * "linux" side, numbered and named as Linux's state list, sent after the
 * operation with its place on the host's clock ("start", "end").
 */
static void ev_linux_step(void *ctx, unsigned int cpu,
			  const struct hp_linux_step *st)
{
	struct json_object *d = cpu_data(cpu, NULL);

	qc_add_str(d, "side", "linux");
	qc_add_str(d, "kind", "step");
	qc_add_int(d, "state", st->state);
	qc_add_str(d, "name", st->name ? st->name : st->fn);
	qc_add_str(d, "callback", st->fn);
	qc_add_int(d, "linux-cpu", st->linux_cpu);
	qc_add_str(d, "direction", st->up ? "up" : "down");
	qc_add_bool(d, "multi", st->multi);
	qc_add_bool(d, "rollback", false);
	qc_add_bool(d, "injected", false);
	qc_add_int(d, "ret", st->ret);
	add_time(d, "start", st->start_us);
	add_time(d, "end", st->end_us);
	qc_add_int(d, "us", st->end_us - st->start_us);
	send_event(ctx, "CPUHP_STATE", d, true);
}

/* hotvm's CPUHP_LINUX_TRACE: what the read of Linux's trace found. */
static void ev_linux_trace(void *ctx, const struct hp_linux_trace *t)
{
	struct json_object *d = json_object_new_object();

	qc_add_int(d, "steps", t->steps);
	qc_add_int(d, "enters", t->enters);
	qc_add_int(d, "exits", t->exits);
	qc_add_int(d, "unmatched", t->unmatched);
	qc_add_int(d, "malformed", t->malformed);
	qc_add_int(d, "unmapped", t->unmapped);
	qc_add_bool(d, "truncated", t->truncated);
	qc_add_int(d, "align-us", t->align_us);
	if (t->error)
		qc_add_str(d, "error", t->error);
	send_event(ctx, "CPUHP_LINUX_TRACE", d, false);
}

void qmp_cmds_event_cause(struct qmp_cmds *qc, const char *event,
			  enum vm_cause cause)
{
	struct json_object *d;

	if (!qc)
		return;
	d = json_object_new_object();
	qc_add_bool(d, "guest", vm_cause_guest(cause));
	qc_add_str(d, "reason", vm_cause_name(cause));
	send_event(qc, event, d, false);
}

struct hp_events qc_events(struct qmp_cmds *qc)
{
	return (struct hp_events){
		.ctx = qc,
		.state = ev_state,
		.ost = ev_ost,
		.deleted = ev_deleted,
		.stage = ev_stage,
		.online = ev_online,
		.agreement = ev_agreement,
		.hook_ignored = ev_hook_ignored,
		.linux_step = ev_linux_step,
		.linux_trace = ev_linux_trace,
	};
}
