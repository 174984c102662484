// SPDX-License-Identifier: GPL-2.0-only
/* Reading query-hotpluggable-cpus and query-cpus-fast (cpu_slots.h). */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cpu_json.h"
#include "cpu_slots.h"

long long cpu_slots_prop(struct json_object *slot, const char *key)
{
	struct json_object *v =
		cpu_json_member(cpu_json_member(slot, "props"), key);

	return json_object_is_type(v, json_type_int) ? json_object_get_int64(v)
						     : -1;
}

static int cmp_slot(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a;
	struct json_object *y = *(struct json_object *const *)b;
	static const char *const keys[] = { "socket-id", "die-id", "core-id",
					    "thread-id" };

	for (size_t i = 0; i < 4; i++) {
		long long p = cpu_slots_prop(x, keys[i]);
		long long q = cpu_slots_prop(y, keys[i]);

		if (p != q)
			return p < q ? -1 : 1;
	}
	return 0;
}

struct json_object **cpu_slots_sorted(struct json_object *hp, size_t *n)
{
	struct json_object **v;

	*n = json_object_is_type(hp, json_type_array)
		     ? json_object_array_length(hp)
		     : 0;
	v = calloc(*n ? *n : 1, sizeof(*v));
	if (!v) {
		*n = 0;
		return NULL;
	}
	for (size_t i = 0; i < *n; i++)
		v[i] = json_object_array_get_idx(hp, i);
	qsort(v, *n, sizeof(*v), cmp_slot);
	return v;
}

struct json_object *cpu_slots_of(struct json_object **slots, size_t n, long cpu)
{
	for (size_t i = 0; i < n; i++)
		if (cpu_slots_prop(slots[i], "socket-id") == cpu)
			return slots[i];
	return NULL;
}

const char *cpu_slots_qom_id(struct json_object *qom)
{
	const char *p = json_object_get_string(qom);
	size_t len = strlen(CPU_SLOTS_PERIPHERAL);

	if (!json_object_is_type(qom, json_type_string))
		return NULL;
	return strncmp(p, CPU_SLOTS_PERIPHERAL, len) ? NULL : p + len;
}

struct json_object *cpu_slots_fast(struct json_object *fast, const char *qom)
{
	size_t n = json_object_is_type(fast, json_type_array)
			   ? json_object_array_length(fast)
			   : 0;

	for (size_t i = 0; qom && i < n; i++) {
		struct json_object *e = json_object_array_get_idx(fast, i);
		const char *q = cpu_json_str(cpu_json_member(e, "qom-path"));

		if (q && !strcmp(q, qom))
			return e;
	}
	return NULL;
}
