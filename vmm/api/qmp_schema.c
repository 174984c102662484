// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control API's schema (see vmm/api/qmp_schema.h): a request's shape
 * and arguments checked against a command's declaration, in QEMU's words
 * (tools match on them), then read by the handler without checking again.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "qmp_schema.h"

int qmp_error_set(struct qmp_error *err, const char *class, const char *fmt,
		  ...)
{
	va_list ap;

	if (hv_err_is_set(&err->e))
		return -EINVAL; /* the first reason is the cause */
	err->class = class;
	err->e.code = -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err->e.msg, sizeof(err->e.msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ---- arguments: checked against the declaration, then read ---- */

static const char *const arg_type_names[] = {
	[QMP_ARG_INT] = "integer",     [QMP_ARG_STR] = "string",
	[QMP_ARG_BOOL] = "boolean",    [QMP_ARG_ARRAY] = "array",
	[QMP_ARG_INT_STR] = "integer", [QMP_ARG_NAME_INT] = "string or integer",
};

const struct qmp_arg *qmp_arg_find(const struct qmp_arg *decl, const char *name)
{
	for (; decl && decl->name; decl++)
		if (!strcmp(decl->name, name))
			return decl;
	return NULL;
}

/* A decimal string as QemuOpts reads a number; false if it is not one. */
static bool decimal(const char *s, int64_t *v)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !*end && !errno;
}

/* json-c keeps integers above INT64_MAX as unsigned: not ours. */
static bool fits_int64(struct json_object *o)
{
	return !(json_object_get_uint64(o) > INT64_MAX &&
		 json_object_get_int64(o) >= 0);
}

static bool type_ok(const struct qmp_arg *a, struct json_object *o)
{
	int64_t v;

	switch (a->type) {
	case QMP_ARG_INT:
		return json_object_is_type(o, json_type_int);
	case QMP_ARG_STR:
		return json_object_is_type(o, json_type_string);
	case QMP_ARG_BOOL:
		return json_object_is_type(o, json_type_boolean);
	case QMP_ARG_ARRAY:
		return json_object_is_type(o, json_type_array);
	case QMP_ARG_INT_STR:
		return json_object_is_type(o, json_type_int) ||
		       (json_object_is_type(o, json_type_string) &&
			decimal(json_object_get_string(o), &v));
	case QMP_ARG_NAME_INT:
		return json_object_is_type(o, json_type_int) ||
		       json_object_is_type(o, json_type_string);
	}
	return false;
}

/* "'a' or 'b'", "'a', 'b' or 'c'" */
static void values_text(const char *const *v, char *buf, size_t len)
{
	size_t n = 0, at = 0;

	while (v[n])
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n && at < len; i++)
		at += snprintf(buf + at, len - at, "%s'%s'",
			       !i	    ? ""
			       : i == n - 1 ? " or "
					    : ", ",
			       v[i]);
}

static int check_value(const struct qmp_arg *a, struct json_object *o,
		       void *ctx, struct qmp_error *err)
{
	char expect[256];

	if (json_object_is_type(o, json_type_null) && a->nullable)
		return 0;
	if (!type_ok(a, o))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Invalid parameter type for '%s', "
				     "expected: %s",
				     a->name, arg_type_names[a->type]);
	if (json_object_is_type(o, json_type_int) && !fits_int64(o))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Parameter '%s' expects %s", a->name,
				     "an integer that fits in int64");
	if (a->type == QMP_ARG_INT && (a->min || a->max || a->max_fn)) {
		int64_t v = json_object_get_int64(o);
		int64_t max = a->max_fn ? a->max_fn(ctx) : a->max;

		if (v < a->min || v > max)
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Parameter '%s' expects a value "
					     "between %lld and %lld",
					     a->name, (long long)a->min,
					     (long long)max);
	}
	if (a->type == QMP_ARG_STR && a->values) {
		const char *s = json_object_get_string(o);
		size_t i;

		for (i = 0; a->values[i] && strcmp(a->values[i], s); i++)
			;
		if (!a->values[i]) {
			values_text(a->values, expect, sizeof(expect));
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Parameter '%s' does not accept "
					     "value '%s' (expected %s)",
					     a->name, s, expect);
		}
	}
	return 0;
}

int qmp_check_args(struct json_object *args, const struct qmp_arg *decl,
		   bool open, void *ctx, struct qmp_error *err)
{
	for (const struct qmp_arg *a = decl; a && a->name; a++) {
		struct json_object *o;

		if (!args || !json_object_object_get_ex(args, a->name, &o)) {
			if (!a->optional)
				return qmp_error_set(err, QMP_ERROR_GENERIC,
						     "Parameter '%s' is "
						     "missing",
						     a->name);
			continue;
		}
		if (check_value(a, o, ctx, err))
			return -EINVAL;
	}
	if (!args || open)
		return 0;
	json_object_object_foreach(args, key, val)
	{
		(void)val;
		if (!qmp_arg_find(decl, key))
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Parameter '%s' is unexpected",
					     key);
	}
	return 0;
}

static struct json_object *arg_value(struct json_object *args, const char *name)
{
	struct json_object *o = NULL;

	if (!args || !json_object_object_get_ex(args, name, &o) ||
	    json_object_is_type(o, json_type_null))
		return NULL;
	return o;
}

bool qmp_has(struct json_object *args, const char *name)
{
	struct json_object *o;

	return args && json_object_object_get_ex(args, name, &o);
}

int64_t qmp_int(struct json_object *args, const char *name, int64_t dflt)
{
	struct json_object *o = arg_value(args, name);
	int64_t v;

	if (json_object_is_type(o, json_type_int))
		return json_object_get_int64(o);
	if (json_object_is_type(o, json_type_string) &&
	    decimal(json_object_get_string(o), &v))
		return v;
	return dflt;
}

const char *qmp_str(struct json_object *args, const char *name,
		    const char *dflt)
{
	struct json_object *o = arg_value(args, name);

	return json_object_is_type(o, json_type_string)
		       ? json_object_get_string(o)
		       : dflt;
}

bool qmp_bool(struct json_object *args, const char *name, bool dflt)
{
	struct json_object *o = arg_value(args, name);

	return json_object_is_type(o, json_type_boolean)
		       ? json_object_get_boolean(o)
		       : dflt;
}

/*
 * QEMU's checks of a request's shape (qmp_dispatch_check_obj), with its
 * words: tools match on them.  Returns the command name or NULL with err set.
 */
const char *qmp_check_request(struct json_object *req,
			      struct json_object **args, struct qmp_error *err)
{
	const char *exec = NULL;

	*args = NULL;
	if (!json_object_is_type(req, json_type_object)) {
		qmp_error_set(err, QMP_ERROR_GENERIC,
			      "QMP input must be a JSON object");
		return NULL;
	}
	json_object_object_foreach(req, key, val)
	{
		if (!strcmp(key, "execute")) {
			if (!json_object_is_type(val, json_type_string)) {
				qmp_error_set(err, QMP_ERROR_GENERIC,
					      "QMP input member 'execute' must "
					      "be a string");
				return NULL;
			}
			exec = json_object_get_string(val);
		} else if (!strcmp(key, "arguments")) {
			if (!json_object_is_type(val, json_type_object)) {
				qmp_error_set(err, QMP_ERROR_GENERIC,
					      "QMP input member 'arguments' "
					      "must be an object");
				return NULL;
			}
			*args = val;
		} else if (strcmp(key, "id")) {
			qmp_error_set(err, QMP_ERROR_GENERIC,
				      "QMP input member '%s' is unexpected",
				      key);
			return NULL;
		}
	}
	if (!exec)
		qmp_error_set(err, QMP_ERROR_GENERIC,
			      "QMP input lacks member 'execute'");
	return exec;
}

/* A declaration the checks can use: known types, no name twice. */
static bool decl_ok(const struct qmp_arg *decl)
{
	for (const struct qmp_arg *a = decl; a && a->name; a++) {
		if (a->type < QMP_ARG_INT || a->type > QMP_ARG_NAME_INT ||
		    qmp_arg_find(decl, a->name) != a ||
		    (a->values && a->type != QMP_ARG_STR))
			return false;
	}
	return true;
}

static bool field_ok(const struct qmp_field *f);

/* Members that can be checked: each sound, no name twice. */
static bool members_ok(const struct qmp_field *m)
{
	for (const struct qmp_field *f = m; f && f->name; f++) {
		for (const struct qmp_field *g = m; g != f; g++)
			if (!strcmp(g->name, f->name))
				return false;
		if (!field_ok(f))
			return false;
	}
	return true;
}

static bool field_ok(const struct qmp_field *f)
{
	bool container = f->type == QMP_T_ARRAY || f->type == QMP_T_MAP;
	enum qmp_type t = container ? f->elem : f->type;

	if (f->type < QMP_T_INT || f->type > QMP_T_MAP || t < QMP_T_INT ||
	    t > QMP_T_OBJECT)
		return false;
	/* Members belong to an object, or to the objects of a container. */
	if (f->members && t != QMP_T_OBJECT)
		return false;
	return members_ok(f->members);
}

bool qmp_command_ok(const struct qmp_command *cmd)
{
	unsigned int where = cmd->flags & (QMP_CMD_FAST | QMP_CMD_QUERY);

	/* A batch is a burst of operations: on the operation thread only. */
	return cmd->name && cmd->handler &&
	       where != (QMP_CMD_FAST | QMP_CMD_QUERY) &&
	       (!cmd->batch || !where) && decl_ok(cmd->args) &&
	       (!cmd->returns.type || field_ok(&cmd->returns));
}
