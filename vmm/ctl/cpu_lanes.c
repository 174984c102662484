// SPDX-License-Identifier: GPL-2.0-only
/*
 * A trace's lanes walked: each lane's observed stages placed among its
 * bars, for the text and the SVG printers of `hotvm cpu trace`.
 */
#include <string.h>

#include "cpu_json.h"
#include "cpu_lanes.h"

#define M(o, k) cpu_json_member((o), (k))

bool lane_has(struct json_object *o, const char *lane)
{
	return !strcmp(cpu_json_str(M(o, "lane")) ?: "", lane);
}

void lane_walk(struct json_object *t, struct lane_walk *w)
{
	struct json_object *bars = M(t, "bars"), *marks = M(t, "marks");
	size_t nb = json_object_array_length(bars);
	size_t nm = json_object_is_type(marks, json_type_array)
			    ? json_object_array_length(marks)
			    : 0;
	size_t m = 0;

	w->total = cpu_json_num(M(t, "total-us"), 0);
	for (size_t i = 0; i <= nb; i++) {
		struct json_object *b = json_object_array_get_idx(bars, i);
		int64_t start =
			i < nb ? cpu_json_num(M(b, "start-us"), 0) : INT64_MAX;

		/* Observed stages, where they fall among the states. */
		for (; m < nm; m++) {
			struct json_object *k =
				json_object_array_get_idx(marks, m);
			int64_t at = cpu_json_num(M(k, "at-us"), 0);

			if (at > start)
				break;
			if (lane_has(k, w->lane))
				w->mark(w, k, at);
		}
		if (i < nb && lane_has(b, w->lane))
			w->bar(w, b, start);
	}
}
