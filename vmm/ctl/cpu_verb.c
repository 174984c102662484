// SPDX-License-Identifier: GPL-2.0-only
/* The calls and output helpers every `hotvm cpu` verb uses (cpu_verb.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cpu_render.h"
#include "cpu_verb.h"
#include "qmp_client.h"

int cpu_verb_vmm_error(struct cpu_ctx *x, const struct qmp_client_error *e)
{
	fflush(x->out); /* a partial line of results first, whole */
	if (e->class[0])
		fprintf(x->errf, "hotvm: error: %s: %s\n", e->class, e->desc);
	else
		fprintf(x->errf, "hotvm: error: %s\n", e->desc);
	return 1;
}

int cpu_verb_call(struct cpu_ctx *x, const char *name, struct json_object *args,
		  struct json_object **ret)
{
	struct qmp_client_error e;
	int rc =
		qmp_client_execute(x->c, name, args, ret, &e, x->o->timeout_ms);

	json_object_put(args);
	return rc ? cpu_verb_vmm_error(x, &e) : 0;
}

void cpu_verb_error(struct cpu_ctx *x, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fflush(x->out);
	fprintf(x->errf, "hotvm: %s\n", msg);
}

void cpu_verb_print_json(struct cpu_ctx *x, struct json_object *v)
{
	fprintf(x->out, "%s\n",
		json_object_to_json_string_ext(
			v, JSON_C_TO_STRING_PLAIN |
				   JSON_C_TO_STRING_NOSLASHESCAPE));
}

void cpu_verb_done(struct cpu_ctx *x, struct json_object *ret, const char *what)
{
	if (x->o->json) {
		cpu_verb_print_json(x, ret);
		return;
	}
	fprintf(x->out, "%s\n", what);
	if (json_object_is_type(ret, json_type_object) &&
	    json_object_object_length(ret))
		cpu_render_value(x->out, ret);
	else if (ret && !json_object_is_type(ret, json_type_object))
		cpu_render_value(x->out, ret);
}

int cpu_verb_parse_cpu(const char *s, long *cpu)
{
	char *end;

	if (!strncmp(s, "cpu", 3))
		s += 3;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*cpu = strtol(s, &end, 10);
	return *end || errno || *cpu > UINT32_MAX ? -EINVAL : 0;
}
