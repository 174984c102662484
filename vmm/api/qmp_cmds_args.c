// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading hotvm's arguments once the server has checked them against
 * their declaration (qmp_cmds_table.c): only what a declaration cannot
 * say is judged here, such as a state that must be in one side's table.
 */
#include <string.h>

#include <json-c/json.h>

#include "qmp_cmds_internal.h"

/* The highest CPU index and the most vCPUs, for the declarations. */
int64_t qc_max_cpu_index(void *ctx)
{
	struct qmp_cmds *qc = ctx;

	return (int64_t)qc->max - 1;
}

int64_t qc_max_cpus(void *ctx)
{
	struct qmp_cmds *qc = ctx;

	return qc->max;
}

unsigned int qc_arg_cpu(struct json_object *args)
{
	return (unsigned int)qmp_int(args, "cpu", 0);
}

int qc_arg_timeout(struct json_object *args)
{
	return (int)qmp_int(args, "timeout-ms", 0);
}

enum hp_side qc_arg_side(struct json_object *args)
{
	return strcmp(qmp_str(args, "side", ""), "guest") ? HP_SIDE_HOST
							  : HP_SIDE_GUEST;
}

enum hotplug_wait qc_arg_wait(struct json_object *args)
{
	int w = hotplug_wait_parse(qmp_str(args, "wait", ""));

	return w < 0 ? HOTPLUG_WAIT_DEFAULT : (enum hotplug_wait)w;
}

int qc_arg_state(struct qmp_cmds *qc, struct json_object *args, const char *key,
		 enum hp_side side, bool clear, int *state,
		 struct qmp_error *err)
{
	struct json_object *o = NULL;
	int nr = hotplug_nr_states(qc->hp, side);

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
					     key, qc_side_names[side], nr - 1);
		*state = (int)v;
		return 0;
	}
	*state = hotplug_state_lookup(qc->hp, side, json_object_get_string(o));
	if (*state < 0)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Parameter '%s': the %s table has no "
				     "state '%s' (see query-cpuhp)",
				     key, qc_side_names[side],
				     json_object_get_string(o));
	return 0;
}

/*
 * device_add's: any other member is a property the CPU lacks.  Here,
 * beneath the table and qmp_cmds_qemu.c's handler, which both read it.
 */
const struct qmp_arg qc_device_add_args[] = {
	{ .name = "driver",
	  .type = QMP_ARG_STR,
	  .help = "a CPU model, \"" QMP_CMDS_CPU_TYPE "\" (any *" QC_X86_SUFFIX
		  ")" },
	{ .name = "id",
	  .type = QMP_ARG_STR,
	  .optional = true,
	  .help = "device id for device_del and DEVICE_DELETED" },
	QC_ARG_TOPO("socket-id"),
	QC_ARG_TOPO("die-id"),
	QC_ARG_TOPO("core-id"),
	QC_ARG_TOPO("thread-id"),
	QC_ARG_WAIT,
	{ 0 },
};
