/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A trace's lanes walked (host, guest, linux): each lane's bars in order,
 * each after the observed stages (marks) that fall before it, for
 * `hotvm cpu trace`'s text and SVG alike.
 */
#ifndef HOTVM_CPU_LANES_H
#define HOTVM_CPU_LANES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

/* One lane's walk, and where the printer that walks it draws. */
struct lane_walk {
	const char *lane;
	int64_t total; /* the trace's "total-us", set by lane_walk() */
	FILE *out;
	int w;	  /* text: the bar's width */
	double y; /* SVG: the next row's top */
	void (*mark)(struct lane_walk *w, struct json_object *k, int64_t at);
	void (*bar)(struct lane_walk *w, struct json_object *b, int64_t start);
};

/* Whether bar or mark @o is on @lane. */
bool lane_has(struct json_object *o, const char *lane);

/*
 * Calls w->mark for each mark of w->lane and w->bar for each bar of it,
 * a mark before the first bar (of any lane) that starts after it, the
 * marks after the last bar last.
 */
void lane_walk(struct json_object *t, struct lane_walk *w);

#endif
