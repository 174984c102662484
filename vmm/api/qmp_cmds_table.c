// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every command, declared once (docs/design.md §7): its name, where it
 * runs (no flags: an operation, one at a time; vmm/api/qmp_schema.h),
 * what it does, its arguments and, beside them, the members of its reply
 * (as QAPI's "returns" does for QEMU).  The server checks requests
 * against the arguments before a handler runs and query-commands lists
 * the table; tests/api/test_qmp_cmds.c holds README.md's command table
 * and `hotvm cpu --help` to it, and tests/api/test_api_replies.c runs
 * every command and holds its reply to the declared members.
 */
#include "qmp_cmds_internal.h"

static const char *const side_values[] = { "host", "guest", NULL };
static const char *const online_values[] = { "online", "offline", NULL };

#define ARG_CPU                                                                \
	{                                                                      \
		.name = "cpu", .type = QMP_ARG_INT,                            \
		.max_fn = qc_max_cpu_index,                                    \
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

/* ---- reply members more than one command has ---- */

/* QEMU's CpuInstanceProperties for -smp sockets=max,cores=1,threads=1. */
static const struct qmp_field props_ret[] = {
	RET("socket-id", QMP_T_INT),
	RET("core-id", QMP_T_INT),
	RET("thread-id", QMP_T_INT),
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
	/* Host steps: the operation thread's CPU time in it (hp_step_time). */
	RET_OPT("own-us", QMP_T_INT),
	{ 0 },
};

/*
 * An operation's report (struct hp_report); with the guest agent,
 * "onlined-by" and "offlined-by" say who onlined or offlined the CPU in
 * Linux: "guest" (Linux by itself) or "agent" (hotvm through the agent);
 * "linux-trace-pending" (true) that Linux's trace of it is read after the
 * reply (--agent-trace): CPUHP_LINUX_TRACE follows.
 */
#define RET_REPORT                                                             \
	RET("total-us", QMP_T_INT), RET("own-us", QMP_T_INT),                  \
		RET("own-exit-us", QMP_T_INT), RET_OBJ("exits", exits_ret),    \
		RET_OPT("onlined-by", QMP_T_STR),                              \
		RET_OPT("offlined-by", QMP_T_STR),                             \
		RET_OPT("linux-trace-pending", QMP_T_BOOL),                    \
		RET_LIST("steps", step_ret),                                   \
		RET_OPT("steps-dropped", QMP_T_INT)

/* ---- QEMU's commands ---- */

static const struct qmp_field hotpluggable_ret[] = {
	RET("type", QMP_T_STR),
	RET("vcpus-count", QMP_T_INT),
	RET_OBJ("props", props_ret),
	RET_OPT("qom-path", QMP_T_STR), /* plugged only */
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

/* ---- hotvm's commands ---- */

static const struct qmp_arg query_cpuhp_args[] = {
	{ .name = "cpu",
	  .type = QMP_ARG_INT,
	  .optional = true,
	  .max_fn = qc_max_cpu_index,
	  .help = "only this vCPU" },
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
	/* ... and where Linux's own table has it, from its trace. */
	RET_OPT("linux-state", QMP_T_INT),
	{ .name = "linux-state-name",
	  .type = QMP_T_STR,
	  .optional = true,
	  .nullable = true },
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

/* Linux's own state list, read through the guest agent. */
static const struct qmp_field linux_state_ret[] = {
	RET("state", QMP_T_INT),
	RET("name", QMP_T_STR),
	{ 0 },
};

static const struct qmp_field cpuhp_ret[] = {
	RET_LIST("host-states", state_info_ret),
	RET_LIST("guest-states", state_info_ret),
	RET_LIST("cpus", cpuhp_cpu_ret),
	{ .name = "linux-states",
	  .type = QMP_T_ARRAY,
	  .elem = QMP_T_OBJECT,
	  .optional = true,
	  .members = linux_state_ret },
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

static const struct qmp_field set_target_ret[] = {
	RET("cpu", QMP_T_INT),
	RET("side", QMP_T_STR),
	RET("state", QMP_T_INT),
	RET_NULL("name", QMP_T_STR),
	RET_REPORT,
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
	QC_ARG_WAIT,
	{ 0 },
};

/* cpu-hotplug and cpuhp-recover: where the vCPU ended, and the steps. */
static const struct qmp_field cpu_op_ret[] = {
	RET("cpu", QMP_T_INT),
	RET("state", QMP_T_STR),
	RET_REPORT,
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
	  .max_fn = qc_max_cpus,
	  .help = "how many vCPUs are to run" },
	ARG_TIMEOUT,
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
	RET("refused-states", QMP_T_INT),
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
	RET("answers", QMP_T_BOOL),
	RET("calls", QMP_T_INT),
	RET("failed", QMP_T_INT),
	RET("timeouts", QMP_T_INT),
	RET("bad-replies", QMP_T_INT),
	RET("stray-bytes", QMP_T_INT),
	RET("late-replies", QMP_T_INT),
	RET("call-us", QMP_T_INT),
	RET("set-vcpus-us", QMP_T_INT),
	RET("port-closed", QMP_T_INT),
	{ 0 },
};

/* The tiny guest's report ring (docs/design.md §6.8). */
static const struct qmp_field ring_stats_ret[] = {
	RET("enabled", QMP_T_BOOL),
	RET("doorbells", QMP_T_INT),
	RET("drains", QMP_T_INT),
	RET("entries", QMP_T_INT),
	RET("console-bytes", QMP_T_INT),
	RET("clamped-times", QMP_T_INT),
	/* By reason, as hpring_ign_name() names them. */
	{ .name = "ignored", .type = QMP_T_MAP, .elem = QMP_T_INT },
	{ 0 },
};

/*
 * One operation kind's sums (struct hp_own_stats): hotvm's own share of
 * its time (docs/design.md §14).
 */
static const struct qmp_field own_kind_ret[] = {
	RET("operations", QMP_T_INT), RET("total-us", QMP_T_INT),
	RET("own-us", QMP_T_INT),     RET("own-exit-us", QMP_T_INT),
	RET("exits", QMP_T_INT),      { 0 },
};

/* By hotplug_op_kind_name(). */
static const struct qmp_field own_ret[] = {
	RET_OBJ("hot-add", own_kind_ret),
	RET_OBJ("hot-remove", own_kind_ret),
	RET_OBJ("set-target", own_kind_ret),
	RET_OBJ("recover", own_kind_ret),
	RET_OBJ("prestage", own_kind_ret),
	{ 0 },
};

static const struct qmp_field stats_ret[] = {
	RET_OBJ("cpuhp-regs", regs_stats_ret),
	RET_OBJ("ring", ring_stats_ret),
	RET_OBJ("ged", ged_stats_ret),
	RET_OBJ("exits", exits_ret),
	RET_OBJ("own", own_ret),
	{ .name = "agent",
	  .type = QMP_T_OBJECT,
	  .optional = true,
	  .members = agent_stats_ret },
	RET("queued-operations", QMP_T_INT),
	{ 0 },
};

/*
 * The handlers, one per row below, each defined in its family's file
 * (qmp_cmds_qemu.c, qmp_cmds_query.c, qmp_cmds_cpuhp.c) as
 * "QC_HANDLER(name) { ... }": a new command is its row, its declaration
 * here and its handler, and the server registers it from the row.
 */
QC_HANDLER(qc_query_hotpluggable_cpus);
QC_HANDLER(qc_device_add);
QC_HANDLER(qc_device_del);
QC_HANDLER(qc_query_cpus_fast);
QC_HANDLER(qc_query_status);
QC_HANDLER(qc_quit);
QC_HANDLER(qc_system_powerdown);
QC_HANDLER(qc_system_reset);
QC_HANDLER(qc_query_cpuhp);
QC_HANDLER(qc_cpuhp_set_target);
QC_HANDLER(qc_cpuhp_inject_fault);
QC_HANDLER(qc_cpu_hotplug);
QC_HANDLER(qc_cpuhp_recover);
QC_HANDLER(qc_cpu_resize);
QC_HANDLER(qc_query_hotplug_stats);

static const struct qmp_command qc_commands[] = {
	{ .name = "query-hotpluggable-cpus",
	  .handler = qc_query_hotpluggable_cpus,
	  .flags = QMP_CMD_QUERY,
	  .help = "every vCPU slot, its topology and QOM path if plugged",
	  .returns = QMP_RETURNS_LIST(hotpluggable_ret) },
	{ .name = "device_add",
	  .handler = qc_device_add,
	  .batch = qc_device_add_burst,
	  .flags = QMP_CMD_OPEN_ARGS,
	  .help = "hot-add a vCPU; replies once the guest has it online",
	  .args = qc_device_add_args,
	  .returns = QMP_RETURNS_NOTHING },
	{ .name = "device_del",
	  .handler = qc_device_del,
	  .batch = qc_device_del_burst,
	  .help = "hot-remove a vCPU; replies after its DEVICE_DELETED",
	  .args = device_del_args,
	  .returns = QMP_RETURNS_NOTHING },
	{ .name = "query-cpus-fast",
	  .handler = qc_query_cpus_fast,
	  .flags = QMP_CMD_QUERY,
	  .help = "the vCPUs the guest runs",
	  .returns = QMP_RETURNS_LIST(cpus_fast_ret) },
	{ .name = "query-status",
	  .handler = qc_query_status,
	  .flags = QMP_CMD_FAST,
	  .help = "whether the VM runs",
	  .returns = QMP_RETURNS_OBJECT(status_ret) },
	{ .name = "quit",
	  .handler = qc_quit,
	  .flags = QMP_CMD_FAST,
	  .help = "stop the VM (exit status 0)",
	  .returns = QMP_RETURNS_NOTHING },
	/* An operation: the interrupt is an ioctl the I/O thread may not make. */
	{ .name = "system_powerdown",
	  .handler = qc_system_powerdown,
	  .help = "press the ACPI power button, or ask the guest agent; the "
		  "guest decides",
	  .args = powerdown_args,
	  .returns = QMP_RETURNS_NOTHING },
	{ .name = "system_reset",
	  .handler = qc_system_reset,
	  .flags = QMP_CMD_FAST,
	  .help = "reset the VM (with --no-reboot: stop it)",
	  .returns = QMP_RETURNS_NOTHING },
	{ .name = "query-cpuhp",
	  .handler = qc_query_cpuhp,
	  .flags = QMP_CMD_QUERY,
	  .help = "the host and guest state tables and where each vCPU is",
	  .args = query_cpuhp_args,
	  .returns = QMP_RETURNS_OBJECT(cpuhp_ret) },
	{ .name = "cpuhp-set-target",
	  .handler = qc_cpuhp_set_target,
	  .help = "walk one side of a vCPU to a named state",
	  .args = set_target_args,
	  .returns = QMP_RETURNS_OBJECT(set_target_ret) },
	{ .name = "cpuhp-inject-fault",
	  .handler = qc_cpuhp_inject_fault,
	  .help = "make a state's next callback fail on one vCPU",
	  .args = inject_args,
	  .returns = QMP_RETURNS_NOTHING },
	{ .name = "cpu-hotplug",
	  .handler = qc_cpu_hotplug,
	  .help = "online or offline a vCPU, with the time of every step",
	  .args = cpu_hotplug_args,
	  .returns = QMP_RETURNS_OBJECT(cpu_op_ret) },
	{ .name = "cpuhp-recover",
	  .handler = qc_cpuhp_recover,
	  .help = "put a vCPU a failed rollback left broken back in line",
	  .args = recover_args,
	  .returns = QMP_RETURNS_OBJECT(cpu_op_ret) },
	{ .name = "cpu-resize",
	  .handler = qc_cpu_resize,
	  .help = "add or remove vCPUs until count run; all or nothing",
	  .args = resize_args,
	  .returns = QMP_RETURNS_OBJECT(resize_ret) },
	{ .name = "query-hotplug-stats",
	  .handler = qc_query_hotplug_stats,
	  .flags = QMP_CMD_QUERY,
	  .help = "guest accesses to the GED, register block and report "
		  "ring, and the ignored ones by reason; exits to user space "
		  "by kind and "
		  "device; operations queued; the guest agent's calls "
		  "and failures",
	  .returns = QMP_RETURNS_OBJECT(stats_ret) },
};

const struct qmp_command *qmp_cmds_table(size_t *n)
{
	*n = sizeof(qc_commands) / sizeof(qc_commands[0]);
	return qc_commands;
}
