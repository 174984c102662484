// SPDX-License-Identifier: GPL-2.0-only
/* Defensive accessors for QMP replies (cpu_json.h). */
#include <stdio.h>

#include <json-c/json.h>

#include "cpu_json.h"

struct json_object *cpu_json_member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (json_object_is_type(o, json_type_object))
		json_object_object_get_ex(o, key, &v);
	return v;
}

const char *cpu_json_cell(struct json_object *o, char *buf, size_t len)
{
	if (!o)
		return "-";
	switch (json_object_get_type(o)) {
	case json_type_string:
		snprintf(buf, len, "%s", json_object_get_string(o));
		break;
	case json_type_int:
		snprintf(buf, len, "%lld", (long long)json_object_get_int64(o));
		break;
	case json_type_boolean:
		snprintf(buf, len, "%s",
			 json_object_get_boolean(o) ? "yes" : "no");
		break;
	case json_type_null:
		return "-";
	default:
		snprintf(buf, len, "%s",
			 json_object_to_json_string_ext(
				 o, JSON_C_TO_STRING_PLAIN));
	}
	return buf;
}

bool cpu_json_scalar(struct json_object *o)
{
	return !json_object_is_type(o, json_type_object) &&
	       !json_object_is_type(o, json_type_array);
}

struct json_object *cpu_json_cpu(struct json_object *e)
{
	static const char *const keys[] = { "cpu", "cpu-index", "id" };

	for (size_t i = 0; i < 3; i++)
		if (cpu_json_member(e, keys[i]))
			return cpu_json_member(e, keys[i]);
	return NULL;
}

int64_t cpu_json_num(struct json_object *o, int64_t dflt)
{
	return json_object_is_type(o, json_type_int) ? json_object_get_int64(o)
						     : dflt;
}

bool cpu_json_flag(struct json_object *o)
{
	return json_object_is_type(o, json_type_boolean) &&
	       json_object_get_boolean(o);
}

const char *cpu_json_str(struct json_object *o)
{
	return json_object_is_type(o, json_type_string)
		       ? json_object_get_string(o)
		       : NULL;
}
