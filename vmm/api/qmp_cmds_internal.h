/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the command files share (see vmm/api/qmp_cmds.h).  Each calls
 * only those above it in this list:
 *
 *   qmp_cmds.c          what every family reads of the command state:
 *                       state names and QOM paths as QEMU would give
 *                       them; the replies' JSON helpers
 *   qmp_cmds_args.c     reading hotvm's arguments (cpu, side, state, ...);
 *                       the declarations more than one file reads
 *   qmp_cmds_report.c   an operation's report and its error, in words
 *   qmp_cmds_events.c   the controller's events as QMP events
 *   qmp_cmds_qemu.c     QEMU's operations: device_add/del (and their
 *                       bursts), system_powerdown/reset, quit
 *   qmp_cmds_query.c    the queries, QEMU's and hotvm's
 *   qmp_cmds_cpuhp.c    hotvm's operations: cpuhp-*, cpu-hotplug,
 *                       cpu-resize
 *   qmp_cmds_table.c    every command declared once: arguments, reply
 *   qmp_cmds_register.c the command state's life: register, detach, free
 *
 * One struct qmp_cmds per registration is every handler's and event
 * callback's ctx; what a call needs beyond it (its report, its burst)
 * lives in the call.
 *
 * Threads: operations run on the server's operation thread, queries on
 * its query thread meanwhile, quit and query-status in its I/O thread
 * (vmm/api/qmp.h); the event callbacks run in whatever thread made the
 * change (a vCPU thread for the guest's notices).  So what they share
 * (state names, QOM paths, the server) sits under qc->lock, and no
 * callback calls back into hotplug_*.
 */
#ifndef HOTVM_QMP_CMDS_INTERNAL_H
#define HOTVM_QMP_CMDS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hotplug.h"
#include "qmp_cmds.h"
#include "qmp_schema.h"

struct json_object;
struct qmp_server;
struct vm;
struct vmexit_counts;

#define QC_NAME_MAX	   48
#define QC_PATH_MAX	   128
#define QC_TIMEOUT_MAX	   3600000 /* ms: an hour is surely a mistake already */
#define QC_X86_SUFFIX	   "-x86_64-cpu"
#define QC_UNATTACHED	   "/machine/unattached/device[%u]"
#define QC_PERIPHERAL	   "/machine/peripheral/%s"
#define QC_PERIPHERAL_ANON "/machine/peripheral-anon/device[%u]"
#define QC_ID_MAX	   sizeof(((struct hp_cpu_view *)0)->id)

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
	char id[QC_ID_MAX];
};

/* A copy of one side's state names, for the event callbacks. */
struct qc_names {
	int n;
	char (*name)[QC_NAME_MAX]; /* "" for a free slot */
};

struct qmp_cmds {
	pthread_mutex_t lock; /* s, slots, next_anon, names */
	struct qmp_server *s; /* NULL once detached: callbacks do nothing */
	bool detached;	      /* hp's events no longer ours */
	struct hotplug *hp;
	struct vm *vm; /* what quit and system_reset act on; may be NULL */
	unsigned int max;
	struct qc_slot *slots;
	unsigned int next_anon; /* QEMU numbers anonymous devices in order */
	struct qc_names names[2];
};

/* "host", "guest": the words for enum hp_side. */
extern const char *const qc_side_names[];

/* Arguments more than one declaration has (qmp_cmds_args.c). */
#define QC_ARG_WAIT                                                            \
	{                                                                      \
		.name = "wait", .type = QMP_ARG_STR, .optional = true,         \
		.values = hotplug_wait_words,                                  \
		.help = "with a guest that does not report: what to wait "     \
			"for (default --hotplug-wait)"                         \
	}
#define QC_ARG_TOPO(n)                                                         \
	{                                                                      \
		.name = n, .type = QMP_ARG_INT_STR, .optional = true,          \
		.help = "topology property, as query-hotpluggable-cpus "       \
			"gives it"                                             \
	}

/* ---- qmp_cmds.c ---- */

void qc_add_int(struct json_object *o, const char *k, int64_t v);
/* A string member, or null for a NULL v. */
void qc_add_str(struct json_object *o, const char *k, const char *v);
void qc_add_bool(struct json_object *o, const char *k, bool v);
const char *qc_err_text(int rc);

/* A vCPU as the controller sees it; zeroed but for cpu if it has none. */
int qc_view(struct qmp_cmds *qc, unsigned int cpu, struct hp_cpu_view *v);
/* Copies the controller's state names, for the event callbacks. */
void qc_names_refresh(struct qmp_cmds *qc);
/* Under qc->lock: a state's name, NULL for a free slot or none. */
const char *qc_name_locked(struct qmp_cmds *qc, enum hp_side side, int state);
/* A state's name into buf, or its number; without the lock held. */
const char *qc_state_name(struct qmp_cmds *qc, enum hp_side side, int state,
			  char *buf, size_t len);
/* A state's name as a JSON string, or NULL (JSON null). */
struct json_object *qc_name_or_null(struct qmp_cmds *qc, enum hp_side side,
				    int state);
/*
 * The QOM path of a plugged vCPU into buf, "" for one that is not.  A
 * vCPU plugged some other way than device_add (cpu-hotplug, cpu-resize,
 * set-target) gets an anonymous path the first time it is seen, as QEMU
 * would give it.
 */
const char *qc_qom_path(struct qmp_cmds *qc, const struct hp_cpu_view *v,
			char *buf, size_t len);
/* A hot-added vCPU gets its QOM path now, in the order QEMU would. */
void qc_mark_added(struct qmp_cmds *qc, unsigned int cpu, const char *id);
/* QEMU's CpuInstanceProperties of slot cpu. */
struct json_object *qc_cpu_props(unsigned int cpu);

/* ---- qmp_cmds_args.c: after the server checked them (qmp_schema.h) ---- */

int64_t qc_max_cpu_index(void *ctx);
int64_t qc_max_cpus(void *ctx);
unsigned int qc_arg_cpu(struct json_object *args);
int qc_arg_timeout(struct json_object *args);
enum hp_side qc_arg_side(struct json_object *args);
/* hotvm's "wait": "acknowledged" | "started", for a non-reporting guest. */
enum hotplug_wait qc_arg_wait(struct json_object *args);
/*
 * A state of one side's table, by name or number (QMP_ARG_NAME_INT; a
 * decimal string is looked up as a number).  With clear, null, "none" and
 * -1 mean CPUHP_INVALID.
 */
int qc_arg_state(struct qmp_cmds *qc, struct json_object *args, const char *key,
		 enum hp_side side, bool clear, int *state,
		 struct qmp_error *err);
/* device_add's declared arguments: any other member is a property. */
extern const struct qmp_arg qc_device_add_args[];

/* ---- qmp_cmds_report.c ---- */

/*
 * Exits to user space: "total", one count per kind and "by-device", the
 * devices that took none left out.
 */
struct json_object *qc_exits_json(struct qmp_cmds *qc,
				  const struct vmexit_counts *x);
/* "total-us", "exits", "steps"... of an operation's report. */
void qc_report_json(struct qmp_cmds *qc, struct json_object *o,
		    const struct hp_report *rep);
/*
 * GenericError for a failed operation on cpu: the reason the controller
 * wrote (rep->err), or the step that failed and its errno when it wrote
 * none (an injected fault), with which CPU and operation before it and
 * where the CPU is now after it, e.g. "cpu 3: hot-add failed: the guest
 * did not bring it up within 10000 ms (...); rolled back to offline".  An
 * operation refused before any step ran says "refused" and nothing more.
 * Returns -EINVAL.
 */
int qc_op_error(struct qmp_cmds *qc, struct qmp_error *err, unsigned int cpu,
		const char *what, int rc, const struct hp_report *rep);
/*
 * Whether cpu may be hot-removed at all (guest_cpu_removable(): the boot
 * CPU may not): 0, or -EINVAL with QEMU's words, "Boot CPU is unpluggable",
 * in err.  The one place that decides and words it.
 */
int qc_check_removable(unsigned int cpu, struct qmp_error *err);
/*
 * A hot-remove that ended with rc: err in QEMU's words where it has them
 * (the boot CPU, a CPU not plugged), else qc_op_error()'s.  Returns rc.
 */
int qc_remove_error(struct qmp_cmds *qc, unsigned int cpu, int rc,
		    const struct hp_report *rep, struct qmp_error *err);

/* ---- qmp_cmds_events.c ---- */

/* The callbacks hotplug_set_events() installs, for ctx qc. */
struct hp_events qc_events(struct qmp_cmds *qc);

/* ---- the handlers ---- */

/*
 * A command handler's signature (struct qmp_command's handler), used both
 * where it is declared, beside its row in qmp_cmds_table.c, and where it
 * is defined ("QC_HANDLER(qc_quit) { ... }"), so the two cannot differ.
 * Only the table calls handlers: no header declares them.
 */
#define QC_HANDLER(fn)                                                         \
	int fn(void *ctx, struct json_object *args, struct json_object **ret,  \
	       struct qmp_error *err)

/* qmp_cmds_qemu.c */
/* Hot-removes cpu into rep; err in device_del's words (qc_remove_error()). */
int qc_remove_cpu(struct qmp_cmds *qc, unsigned int cpu, int timeout_ms,
		  struct hp_report *rep, struct qmp_error *err);
void qc_device_add_burst(void *ctx, struct qmp_call *calls, size_t n);
void qc_device_del_burst(void *ctx, struct qmp_call *calls, size_t n);

#endif
