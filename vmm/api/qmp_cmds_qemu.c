// SPDX-License-Identifier: GPL-2.0-only
/*
 * QEMU's operations, with QEMU's shapes and words (docs/design.md §7):
 * device_add and device_del of a CPU, a burst of either as one batch of
 * the controller (hotplug_add_many(), hotplug_remove_many()), the power
 * button, reset and quit.
 *
 * Topology as QEMU shows it for -smp sockets=max,cores=1,threads=1: CPU
 * slot n is {socket-id: n, core-id: 0, thread-id: 0} with APIC ID n.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "hotplug_linux.h"
#include "hotplug_many.h"
#include "hotvm/guest_states.h"
#include "qmp.h"
#include "qmp_cmds_internal.h"
#include "vm.h"

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

static int device_add_check(struct qmp_cmds *qc, struct json_object *args,
			    const char **idp, unsigned int *cpu,
			    struct qmp_error *err)
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
		if (!qmp_arg_find(qc_device_add_args, key))
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Property '%s.%s' not found",
					     driver, key);
	}
	if (!qmp_has(args, "socket-id"))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "CPU socket-id is not set");
	if (socket < 0 || socket >= qc->max)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Invalid CPU socket-id: %lld must be in "
				     "range 0:%u",
				     (long long)socket, qc->max - 1);
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

static int device_add_exists(struct qmp_cmds *qc, struct qmp_error *err,
			     unsigned int cpu)
{
	struct hp_cpu_view v;

	qc_view(qc, cpu, &v);
	return qmp_error_set(err, QMP_ERROR_GENERIC,
			     "CPU[%u] with APIC ID %u exists", cpu, v.apic_id);
}

/* device_add's words for hotplug_add_check()'s and the walk's errors. */
static int device_add_done(struct qmp_cmds *qc, unsigned int cpu,
			   const char *id, int rc, const struct hp_report *rep,
			   struct qmp_error *err)
{
	if (rc == -EADDRINUSE)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Duplicate device ID '%s'", id);
	if (rc == -EEXIST)
		return device_add_exists(qc, err, cpu);
	if (rc)
		return qc_op_error(qc, err, cpu, "hot-add", rc, rep);
	qc_mark_added(qc, cpu, id);
	return 0;
}

/*
 * {} once the guest has the CPU online (QEMU replies when the CPU is
 * plugged; here the host table is walked to online first, so the reply
 * means the same and more).
 */
QC_HANDLER(qc_device_add)
{
	struct qmp_cmds *qc = ctx;
	struct hp_report rep = { 0 };
	const char *id = NULL;
	unsigned int cpu = 0;
	int rc;

	(void)ret;
	rc = device_add_check(qc, args, &id, &cpu, err);
	if (rc)
		return rc;
	rc = hotplug_add_check(qc->hp, cpu, id);
	if (rc)
		return device_add_done(qc, cpu, id, rc, NULL, err);
	rc = hotplug_cpu_add(qc->hp, cpu, id, 0, qc_arg_wait(args), &rep);
	return device_add_done(qc, cpu, id, rc, &rep, err);
}

/* A device id or a QOM path, as QEMU's find_device_state() takes them. */
static int find_device(struct qmp_cmds *qc, const char *id, unsigned int *cpu)
{
	for (unsigned int i = 0; i < qc->max; i++) {
		struct hp_cpu_view v;
		char path[QC_PATH_MAX];

		if (qc_view(qc, i, &v) ||
		    !*qc_qom_path(qc, &v, path, sizeof(path)))
			continue;
		if ((id[0] == '/' && !strcmp(path, id)) ||
		    (v.id[0] && !strcmp(v.id, id))) {
			*cpu = i;
			return 0;
		}
	}
	return -ENOENT;
}

int qc_remove_cpu(struct qmp_cmds *qc, unsigned int cpu, int timeout_ms,
		  struct hp_report *rep, struct qmp_error *err)
{
	int rc = hotplug_cpu_remove(qc->hp, cpu, timeout_ms, rep);

	return qc_remove_error(qc, cpu, rc, rep, err);
}

/* The CPU device_del's "id" names, if it may be removed. */
static int device_del_check(struct qmp_cmds *qc, struct json_object *args,
			    unsigned int *cpu, struct qmp_error *err)
{
	const char *id = qmp_str(args, "id", "");

	if (find_device(qc, id, cpu))
		return qmp_error_set(err, QMP_ERROR_DEVICE_NOT_FOUND,
				     "Device '%s' not found", id);
	return qc_check_removable(*cpu, err);
}

/*
 * {} after the guest ejected the CPU and its DEVICE_DELETED went out
 * (QEMU replies first and sends the event later; a tool waiting for the
 * event sees it either way).
 */
QC_HANDLER(qc_device_del)
{
	struct qmp_cmds *qc = ctx;
	struct hp_report rep = { 0 };
	unsigned int cpu;
	int rc;

	(void)ret;
	rc = device_del_check(qc, args, &cpu, err);
	return rc ? rc : qc_remove_cpu(qc, cpu, 0, &rep, err);
}

/* ---- bursts of device_add and device_del: one batch each ---- */

/*
 * A burst's well-formed requests as the controller takes them
 * (hotplug_add_many(), hotplug_remove_many()), and the call each answers.
 */
struct burst {
	struct qmp_cmds *qc;
	struct qmp_call *calls;
	struct hotplug_req *reqs;
	size_t *call; /* reqs[k] answers calls[call[k]] */
	unsigned int n;
};

static int burst_init(struct burst *b, struct qmp_cmds *qc,
		      struct qmp_call *calls, size_t n)
{
	*b = (struct burst){
		.qc = qc,
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
static void burst_alone(struct qmp_cmds *qc, struct qmp_call *calls, size_t n,
			int (*cmd)(void *, struct json_object *,
				   struct json_object **, struct qmp_error *))
{
	for (size_t i = 0; i < n; i++)
		calls[i].rc =
			cmd(qc, calls[i].args, &calls[i].ret, &calls[i].err);
}

static void burst_add_done(void *ctx, const struct hotplug_result *r)
{
	struct burst *b = ctx;
	struct qmp_call *c = burst_call(b, r->k);

	c->rc = device_add_done(b->qc, r->cpu, b->reqs[r->k].id, r->rc, r->rep,
				&c->err);
}

/*
 * A burst of device_add as one batch: the controller presents every CPU
 * under one GED event, then finishes each (hotplug_add_many()); each call
 * is answered in QEMU's words for its own CPU.
 */
void qc_device_add_burst(void *ctx, struct qmp_call *calls, size_t n)
{
	struct qmp_cmds *qc = ctx;
	struct burst b;

	if (burst_init(&b, qc, calls, n)) {
		burst_alone(qc, calls, n, qc_device_add);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct qmp_call *c = &calls[i];
		const char *id = NULL;
		unsigned int cpu = 0;

		c->rc = device_add_check(qc, c->args, &id, &cpu, &c->err);
		if (!c->rc)
			burst_add(&b, i,
				  (struct hotplug_req){
					  .cpu = cpu,
					  .id = id,
					  .wait = qc_arg_wait(c->args),
				  });
	}
	hotplug_add_many(qc->hp, b.reqs, b.n, 0,
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
	c->rc = device_del_check(b->qc, c->args, &cpu, &c->err);
	if (!c->rc && cpu != b->reqs[k].cpu)
		c->rc = qmp_error_set(&c->err, QMP_ERROR_DEVICE_NOT_FOUND,
				      "Device '%s' not found",
				      qmp_str(c->args, "id", ""));
	return c->rc;
}

static void burst_del_done(void *ctx, const struct hotplug_result *r)
{
	struct burst *b = ctx;
	struct qmp_call *c = burst_call(b, r->k);

	c->rc = qc_remove_error(b->qc, r->cpu, r->rc, r->rep, &c->err);
	if (c->rc && r->walk_back)
		hv_err_append(&c->err.e, ", then back to online");
}

/*
 * A burst of device_del as one batch: every removal put to the guest under
 * one GED event, so one eject scan takes them all (hotplug_remove_many());
 * one that fails goes back to online.
 */
void qc_device_del_burst(void *ctx, struct qmp_call *calls, size_t n)
{
	struct qmp_cmds *qc = ctx;
	struct burst b;

	if (burst_init(&b, qc, calls, n)) {
		burst_alone(qc, calls, n, qc_device_del);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct qmp_call *c = &calls[i];
		unsigned int cpu = 0;

		c->rc = device_del_check(qc, c->args, &cpu, &c->err);
		if (!c->rc)
			burst_add(&b, i, (struct hotplug_req){ .cpu = cpu });
	}
	hotplug_remove_many(qc->hp, b.reqs, b.n, 0,
			    &(const struct hotplug_many_ops){
				    .ctx = &b,
				    .admit = burst_del_admit,
				    .done = burst_del_done,
			    },
			    NULL);
	burst_free(&b);
}

/*
 * {} once the power button is pressed, with QEMU's POWERDOWN event; what
 * happens next is the guest's choice (Linux: acpid or logind's poweroff).
 * "mode": "agent" (libvirt's shutdown --mode agent) asks the guest agent
 * instead (guest-shutdown), answered once the agent has read it.
 */
QC_HANDLER(qc_system_powerdown)
{
	struct qmp_cmds *qc = ctx;
	struct hv_err why = { 0 };
	int rc;

	(void)ret;
	if (!strcmp(qmp_str(args, "mode", "acpi"), "agent")) {
		rc = hotplug_agent_shutdown(qc->hp, &why);
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
	pthread_mutex_lock(&qc->lock);
	if (qc->s)
		qmp_emit_event(qc->s, "POWERDOWN", json_object_new_object());
	pthread_mutex_unlock(&qc->lock);
	rc = hotplug_power_button(qc->hp);
	if (rc)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "cannot press the power button: %s",
				     qc_err_text(rc));
	return 0;
}

/*
 * {} at once; the reset follows, with its RESET event (or, under
 * --no-reboot, the VM stops with SHUTDOWN).
 */
QC_HANDLER(qc_system_reset)
{
	struct qmp_cmds *qc = ctx;

	(void)args;
	(void)ret;
	(void)err;
	if (qc->vm)
		vm_request_reset(qc->vm, VM_CAUSE_HOST_QMP_SYSTEM_RESET, 0,
				 "system_reset from the control API "
				 "(--no-reboot)");
	return 0;
}

/*
 * {} and the VM stops with exit status 0.  vm_shutdown() only signals
 * the main thread, which sends SHUTDOWN and stops the server after this
 * reply went out.
 */
QC_HANDLER(qc_quit)
{
	struct qmp_cmds *qc = ctx;

	(void)ret;
	(void)args;
	(void)err;
	if (qc->vm)
		vm_shutdown(qc->vm, 0, VM_CAUSE_HOST_QMP_QUIT,
			    "quit from the control API");
	return 0;
}
