// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm cpu states|target|inject|resize`: the verbs over hotvm's own
 * commands (query-cpuhp, cpuhp-set-target, cpuhp-inject-fault, cpu-resize).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cpu_json.h"
#include "cpu_render.h"
#include "cpu_state.h"
#include "cpu_verb.h"

/* The reply as the text shows it: the tables and that vCPU's entry. */
static void only_cpu(struct json_object *r, long cpu)
{
	struct json_object *cpus = cpu_json_member(r, "cpus"), *one;
	size_t n;

	if (!json_object_is_type(cpus, json_type_array))
		return;
	one = json_object_new_array();
	n = json_object_array_length(cpus);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);
		struct json_object *num = cpu_json_cpu(e);

		if (json_object_is_type(num, json_type_int) &&
		    json_object_get_int64(num) == cpu)
			json_object_array_add(one, json_object_get(e));
	}
	json_object_object_add(r, "cpus", one);
}

int cpu_state_show(struct cpu_ctx *x)
{
	struct json_object *ret = NULL;
	long cpu = -1;
	int rc;

	if (x->o->npos > 2 ||
	    (x->o->npos == 2 && cpu_verb_parse_cpu(x->o->pos[1], &cpu)))
		return -EINVAL;
	rc = cpu_verb_call(x, "query-cpuhp", NULL, &ret);
	if (!rc && x->o->json && cpu >= 0)
		only_cpu(ret, cpu);
	if (!rc && x->o->json)
		cpu_verb_print_json(x, ret);
	else if (!rc)
		cpu_render_states(x->out, ret, cpu, x->o->wide);
	json_object_put(ret);
	return rc;
}

/* target and inject: CPU host|guest STATE. */
static int state_op(struct cpu_ctx *x, const char *cmd, const char *key)
{
	struct json_object *args, *ret = NULL, *state;
	const char *side, *name;
	char what[160], *end;
	long cpu, num;
	int rc;

	if (x->o->npos != 4 || cpu_verb_parse_cpu(x->o->pos[1], &cpu))
		return -EINVAL;
	side = x->o->pos[2];
	name = x->o->pos[3];
	if (strcmp(side, "host") && strcmp(side, "guest"))
		return -EINVAL;
	/* States go by name; a number is passed as one. */
	num = strtol(name, &end, 10);
	state = *name && !*end ? json_object_new_int64(num)
			       : json_object_new_string(name);
	args = json_object_new_object();
	json_object_object_add(args, "cpu", json_object_new_int64(cpu));
	json_object_object_add(args, "side", json_object_new_string(side));
	json_object_object_add(args, key, state);
	rc = cpu_verb_call(x, cmd, args, &ret);
	if (!rc) {
		snprintf(what, sizeof(what), "cpu%ld: %s %s %s: ok", cpu, side,
			 key, name);
		cpu_verb_done(x, ret, what);
	}
	json_object_put(ret);
	return rc;
}

int cpu_state_resize(struct cpu_ctx *x)
{
	struct json_object *args, *ret = NULL;
	char what[64];
	long count;
	int rc;

	if (x->o->npos != 2 || cpu_verb_parse_cpu(x->o->pos[1], &count) ||
	    !strncmp(x->o->pos[1], "cpu", 3))
		return -EINVAL;
	args = json_object_new_object();
	json_object_object_add(args, "count", json_object_new_int64(count));
	rc = cpu_verb_call(x, "cpu-resize", args, &ret);
	if (!rc) {
		snprintf(what, sizeof(what), "resized to %ld vCPUs", count);
		cpu_verb_done(x, ret, what);
	}
	json_object_put(ret);
	return rc;
}

int cpu_state_target(struct cpu_ctx *x)
{
	return state_op(x, "cpuhp-set-target", "target");
}

int cpu_state_inject(struct cpu_ctx *x)
{
	return state_op(x, "cpuhp-inject-fault", "state");
}
