// SPDX-License-Identifier: GPL-2.0-only
/*
 * The text `hotvm cpu` prints of a reply (cpu_render.h): aligned tables for
 * the slots and the state tables, indented "key: value" lines for anything
 * else.  They show whatever the replies hold rather than insisting on a
 * layout: the shapes of hotvm's own replies may still grow.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cpu_json.h"
#include "cpu_render.h"
#include "cpu_slots.h"

#define CELL_MAX CPU_JSON_CELL_MAX

/* ---- aligned columns ---- */

struct table {
	size_t cols, n, cap;
	char **cells;
};

static void table_add(struct table *t, const char *s)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **p = realloc(t->cells, cap * sizeof(*p));

		if (!p)
			return;
		t->cells = p;
		t->cap = cap;
	}
	t->cells[t->n] = strdup(s ? s : "-");
	if (t->cells[t->n])
		t->n++;
}

/* The cell of o's member key. */
static void table_add_member(struct table *t, struct json_object *o,
			     const char *key)
{
	char buf[CELL_MAX];

	table_add(t, cpu_json_cell(cpu_json_member(o, key), buf, sizeof(buf)));
}

static void table_print(FILE *out, struct table *t)
{
	size_t width[32] = { 0 };

	if (t->cols > 32)
		return;
	for (size_t i = 0; i < t->n; i++) {
		size_t w = strlen(t->cells[i]);

		if (w > width[i % t->cols])
			width[i % t->cols] = w;
	}
	for (size_t i = 0; i < t->n; i++) {
		size_t col = i % t->cols;

		if (col == t->cols - 1 || i == t->n - 1)
			fprintf(out, "%s\n", t->cells[i]);
		else
			fprintf(out, "%-*s  ", (int)width[col], t->cells[i]);
	}
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->cells[i]);
	free(t->cells);
}

/* ---- list ---- */

void cpu_render_list(FILE *out, struct json_object *hp,
		     struct json_object *fast)
{
	static const char *const head[] = { "SOCKET",	"CORE", "THREAD",
					    "STATE",	"ID",	"CPU-INDEX",
					    "HOST-TID", "TYPE" };
	struct table t = { .cols = 8 };
	struct json_object **slots;
	size_t n;

	if (!json_object_is_type(hp, json_type_array)) {
		cpu_render_value(out, hp);
		return;
	}
	slots = cpu_slots_sorted(hp, &n);
	for (size_t i = 0; i < 8; i++)
		table_add(&t, head[i]);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = slots[i],
				   *props = cpu_json_member(e, "props");
		struct json_object *qom = cpu_json_member(e, "qom-path");
		struct json_object *f = cpu_slots_fast(fast, cpu_json_str(qom));
		char buf[CELL_MAX];
		const char *id = cpu_slots_qom_id(qom);

		table_add_member(&t, props, "socket-id");
		table_add_member(&t, props, "core-id");
		table_add_member(&t, props, "thread-id");
		table_add(&t, qom ? "present" : "free");
		table_add(&t, id ? id : cpu_json_cell(qom, buf, sizeof(buf)));
		table_add_member(&t, f, "cpu-index");
		table_add_member(&t, f, "thread-id");
		table_add_member(&t, e, "type");
	}
	table_print(out, &t);
	table_free(&t);
	free(slots);
}

/*
 * With the guest agent (query-cpuhp's guest.linux-*): what Linux itself
 * says of each vCPU, under the list; nothing without the agent.
 */
void cpu_render_linux(FILE *out, struct json_object *cpuhp)
{
	struct json_object *cpus = cpu_json_member(cpuhp, "cpus");
	size_t n = json_object_is_type(cpus, json_type_array)
			   ? json_object_array_length(cpus)
			   : 0;
	struct table t = { .cols = 4 };

	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);
		struct json_object *g = cpu_json_member(e, "guest");
		char buf[CELL_MAX];

		if (!cpu_json_member(g, "linux-cpu"))
			continue;
		if (!t.n) {
			table_add(&t, "CPU-INDEX");
			table_add(&t, "LINUX-CPU");
			table_add(&t, "LINUX");
			table_add(&t, "LINUX-STATE");
		}
		table_add_member(&t, e, "cpu");
		table_add_member(&t, g, "linux-cpu");
		table_add(&t, cpu_json_flag(cpu_json_member(g, "linux-online"))
				      ? "online"
				      : "offline");
		table_add(&t,
			  cpu_json_cell(cpu_json_member(g, "linux-state-name"),
					buf, sizeof(buf)));
	}
	if (t.n) {
		fputs("\nLinux's own word (the guest agent):\n", out);
		table_print(out, &t);
	}
	table_free(&t);
}

/* ---- states ---- */

static struct json_object *cpu_list(struct json_object *r)
{
	if (json_object_is_type(r, json_type_array))
		return r;
	return json_object_is_type(cpu_json_member(r, "cpus"), json_type_array)
		       ? cpu_json_member(r, "cpus")
		       : NULL;
}

static bool is_side(const char *key)
{
	return !strcmp(key, "host") || !strcmp(key, "guest");
}

/* Columns: the scalars of each entry and of its host and guest objects. */
struct columns {
	char name[24][48];
	size_t n;
};

static void column_add(struct columns *c, const char *side, const char *key)
{
	char name[48];

	snprintf(name, sizeof(name), "%s%s%s", side ? side : "",
		 side ? ":" : "", key);
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->name[i], name))
			return;
	if (c->n < 24)
		snprintf(c->name[c->n++], sizeof(c->name[0]), "%s", name);
}

static struct json_object *column_value(struct json_object *e, const char *name)
{
	char side[48];
	const char *colon = strchr(name, ':');

	if (!colon)
		return cpu_json_member(e, name);
	snprintf(side, sizeof(side), "%.*s", (int)(colon - name), name);
	return cpu_json_member(cpu_json_member(e, side), colon + 1);
}

/*
 * query-cpuhp's own shape (a host side with its name): its columns by
 * name, not every member, and with the guest agent Linux's word beside
 * the host's view.  Adds nothing for any other shape.
 */
static void hotvm_columns(struct columns *cols, struct json_object *cpus,
			  size_t n)
{
	static const char *const hotvm_cols[] = {
		"cpu",
		"id",
		"present",
		"host:name",
		"host:target-name",
		"host:fail-name",
		"guest:name",
		"guest:stage",
		"guest:target-name",
		"guest:fail-name",
		"host:broken",
		"guest:broken",
		"parked",
		"thread-id",
	};
	struct json_object *first = json_object_array_get_idx(cpus, 0);

	if (n &&
	    json_object_is_type(
		    cpu_json_member(cpu_json_member(first, "host"), "name"),
		    json_type_string))
		for (size_t i = 0; i < sizeof(hotvm_cols) / sizeof(*hotvm_cols);
		     i++)
			snprintf(cols->name[cols->n++], sizeof(cols->name[0]),
				 "%s", hotvm_cols[i]);
	for (size_t i = 0; cols->n && i < n; i++)
		if (cpu_json_member(
			    cpu_json_member(json_object_array_get_idx(cpus, i),
					    "guest"),
			    "linux-cpu")) {
			column_add(cols, "guest", "linux-cpu");
			column_add(cols, "guest", "linux-online");
			column_add(cols, "guest", "linux-state-name");
			break;
		}
}

/*
 * Any other shape: the first object entry's scalar members, and those of
 * its sides one level down, in its order.
 */
static void member_columns(struct columns *cols, struct json_object *cpus,
			   size_t n)
{
	for (size_t i = 0; i < n && !cols->n; i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);

		if (!json_object_is_type(e, json_type_object))
			continue;
		json_object_object_foreach(e, key, v)
		{
			if (is_side(key) &&
			    json_object_is_type(v, json_type_object)) {
				json_object_object_foreach(v, k2, v2)
				{
					if (cpu_json_scalar(v2))
						column_add(cols, key, k2);
				}
			} else if (is_side(key) || cpu_json_scalar(v)) {
				column_add(cols, NULL, key);
			}
		}
	}
}

/* The header row: each column's name in upper case. */
static void header_row(struct table *t, const struct columns *cols)
{
	for (size_t i = 0; i < cols->n; i++) {
		char up[48];
		size_t j;

		for (j = 0; cols->name[i][j] && j < sizeof(up) - 1; j++)
			up[j] = cols->name[i][j] >= 'a' &&
						cols->name[i][j] <= 'z'
					? cols->name[i][j] - 'a' + 'A'
					: cols->name[i][j];
		up[j] = '\0';
		table_add(t, up);
	}
}

static void print_state_rows(FILE *out, struct json_object *cpus, long cpu)
{
	struct columns cols = { .n = 0 };
	struct table t = { 0 };
	size_t n = json_object_array_length(cpus);

	hotvm_columns(&cols, cpus, n);
	member_columns(&cols, cpus, n);
	t.cols = cols.n ? cols.n : 1;
	header_row(&t, &cols);
	for (size_t i = 0; i < n && cols.n; i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);
		struct json_object *num = cpu_json_cpu(e);

		if (cpu >= 0 && (!json_object_is_type(num, json_type_int) ||
				 json_object_get_int64(num) != cpu))
			continue;
		for (size_t c = 0; c < cols.n; c++) {
			char buf[CELL_MAX];

			table_add(&t,
				  cpu_json_cell(column_value(e, cols.name[c]),
						buf, sizeof(buf)));
		}
	}
	table_print(out, &t);
	table_free(&t);
}

/* A side's state table: per vCPU, or one for all vCPUs. */
static struct json_object *state_table(struct json_object *r,
				       struct json_object *e, const char *side)
{
	char key[32];
	struct json_object *v =
		cpu_json_member(cpu_json_member(e, side), "states");

	if (json_object_is_type(v, json_type_array))
		return v;
	snprintf(key, sizeof(key), "%s-states", side);
	v = cpu_json_member(r, key);
	if (json_object_is_type(v, json_type_array))
		return v;
	v = cpu_json_member(cpu_json_member(r, "states"), side);
	return json_object_is_type(v, json_type_array) ? v : NULL;
}

/* Does a per-vCPU value (state, target, fail) name this table entry? */
static bool names(struct json_object *val, struct json_object *entry,
		  size_t index)
{
	struct json_object *num = cpu_json_member(entry, "state");
	struct json_object *name = cpu_json_member(entry, "name");

	if (!num)
		num = cpu_json_member(entry, "number");
	if (json_object_is_type(entry, json_type_string))
		name = entry;
	if (json_object_is_type(val, json_type_int))
		return num ? json_object_is_type(num, json_type_int) &&
				       json_object_get_int64(num) ==
					       json_object_get_int64(val)
			   : (size_t)json_object_get_int64(val) == index;
	if (json_object_is_type(val, json_type_string))
		return json_object_is_type(name, json_type_string) &&
		       !strcmp(json_object_get_string(name),
			       json_object_get_string(val));
	return false;
}

static char **side_lines(struct json_object *r, struct json_object *e,
			 const char *side, size_t *n)
{
	struct json_object *tab = state_table(r, e, side);
	struct json_object *st = cpu_json_member(e, side);
	char **lines;

	*n = tab ? json_object_array_length(tab) : 0;
	lines = calloc(*n + 1, sizeof(*lines));
	if (!lines) {
		*n = 0;
		return NULL;
	}
	for (size_t i = 0; i < *n; i++) {
		struct json_object *ent = json_object_array_get_idx(tab, i);
		struct json_object *num = cpu_json_member(ent, "state");
		struct json_object *name = cpu_json_member(ent, "name");
		char nbuf[CELL_MAX], sbuf[CELL_MAX], line[CELL_MAX * 2 + 8];
		bool cur = names(cpu_json_member(st, "state"), ent, i);

		if (!json_object_is_type(st, json_type_object))
			cur = names(st, ent, i);
		if (!num)
			num = cpu_json_member(ent, "number");
		if (json_object_is_type(ent, json_type_string))
			name = ent;
		snprintf(line, sizeof(line), "%c%c%c %3s %s", cur ? '*' : ' ',
			 names(cpu_json_member(st, "target"), ent, i) ? '>'
								      : ' ',
			 names(cpu_json_member(st, "fail"), ent, i) ? '!' : ' ',
			 num ? cpu_json_cell(num, nbuf, sizeof(nbuf)) : "",
			 cpu_json_cell(name, sbuf, sizeof(sbuf)));
		lines[i] = strdup(line);
	}
	return lines;
}

/*
 * With the guest agent: Linux's own table (query-cpuhp's linux-states)
 * instead of the stage alone, the state Linux's trace last put the CPU
 * in marked.  Replaces g[0..ng); NULL-terminated lines.
 */
static char **linux_lines(struct json_object *r, struct json_object *guest,
			  size_t *n)
{
	struct json_object *tab = cpu_json_member(r, "linux-states");
	struct json_object *cur = cpu_json_member(guest, "linux-state");
	char **lines;

	*n = json_object_array_length(tab) + 1;
	lines = calloc(*n + 1, sizeof(*lines));
	if (!lines) {
		*n = 0;
		return NULL;
	}
	{
		char line[CELL_MAX + 40];

		snprintf(line, sizeof(line), "LINUX cpu%s %s, stage %s",
			 json_object_get_string(
				 cpu_json_member(guest, "linux-cpu")),
			 cpu_json_flag(cpu_json_member(guest, "linux-online"))
				 ? "online"
				 : "offline",
			 json_object_get_string(
				 cpu_json_member(guest, "stage")));
		lines[0] = strdup(line);
	}
	for (size_t i = 1; i < *n; i++) {
		struct json_object *ent = json_object_array_get_idx(tab, i - 1);
		char line[CELL_MAX + 16];

		snprintf(line, sizeof(line), "%c  %3lld %s",
			 names(cur, ent, i - 1) ? '*' : ' ',
			 (long long)cpu_json_num(cpu_json_member(ent, "state"),
						 -1),
			 json_object_get_string(cpu_json_member(ent, "name")));
		lines[i] = strdup(line);
	}
	return lines;
}

static void print_state_tables(FILE *out, struct json_object *r,
			       struct json_object *e)
{
	size_t nh, ng, w = 5;
	char **h = side_lines(r, e, "host", &nh);
	char **g = side_lines(r, e, "guest", &ng);
	struct json_object *guest = cpu_json_member(e, "guest");
	struct json_object *reports = cpu_json_member(guest, "reports");

	/*
	 * A guest that does not report its table (Linux): the stage the
	 * host observed is all there is, not a column of "offline".
	 */
	if (json_object_is_type(reports, json_type_boolean) &&
	    !json_object_get_boolean(reports) &&
	    cpu_json_member(guest, "linux-cpu") &&
	    json_object_is_type(cpu_json_member(r, "linux-states"),
				json_type_array)) {
		for (size_t i = 0; i < ng; i++)
			free(g[i]);
		free(g);
		g = linux_lines(r, guest, &ng);
	} else if (json_object_is_type(reports, json_type_boolean) &&
		   !json_object_get_boolean(reports) && g) {
		char line[CELL_MAX + 40];

		for (size_t i = 0; i < ng; i++) {
			free(g[i]);
			g[i] = NULL;
		}
		snprintf(line, sizeof(line), "stage: %s",
			 json_object_get_string(
				 cpu_json_member(guest, "stage")));
		g[0] = strdup(line);
		if (ng > 1)
			g[1] = strdup("(the guest does not report its states)");
	}

	for (size_t i = 0; i < nh; i++)
		if (h[i] && strlen(h[i]) > w)
			w = strlen(h[i]);
	fprintf(out, "%-*s    %s\n", (int)w, "HOST", "GUEST");
	for (size_t i = 0; i < nh || i < ng; i++) {
		const char *l = i < nh && h[i] ? h[i] : "";
		const char *rt = i < ng && g[i] ? g[i] : "";

		if (*rt)
			fprintf(out, "%-*s    %s\n", (int)w, l, rt);
		else
			fprintf(out, "%s\n", l);
	}
	fputs("(* current, > target, ! fault injected)\n", out);
	for (size_t i = 0; i < nh; i++)
		free(h[i]);
	for (size_t i = 0; i < ng; i++)
		free(g[i]);
	free(h);
	free(g);
}

/* Shown by the tables already: the summary leaves them out. */
static bool in_tables(const char *key)
{
	static const char *const keys[] = { "state",	   "name", "target",
					    "target-name", "fail", "fail-name",
					    "states" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

/* "key value" pairs, wrapped to fit 80 columns. */
static void summary_add(FILE *out, size_t *col, const char *key,
			struct json_object *v)
{
	char buf[CELL_MAX], item[CELL_MAX + 64];
	size_t len;

	snprintf(item, sizeof(item), "%s %s", key,
		 cpu_json_cell(v, buf, sizeof(buf)));
	len = strlen(item);
	if (*col && *col + 2 + len > 80) {
		fputc('\n', out);
		*col = 0;
	}
	fprintf(out, "%s%s", *col ? "  " : "", item);
	*col += (*col ? 2 : 0) + len;
}

/* One vCPU's scalars that its state tables do not show. */
static void print_state_summary(FILE *out, struct json_object *e)
{
	size_t col = 0;

	json_object_object_foreach(e, key, v)
	{
		if (!is_side(key) && cpu_json_scalar(v))
			summary_add(out, &col, key, v);
	}
	for (int s = 0; s < 2; s++) {
		const char *side = s ? "guest" : "host";
		struct json_object *o = cpu_json_member(e, side);

		if (!json_object_is_type(o, json_type_object))
			continue;
		json_object_object_foreach(o, k2, v2)
		{
			char name[64];

			if (in_tables(k2) || !cpu_json_scalar(v2))
				continue;
			snprintf(name, sizeof(name), "%s:%s", side, k2);
			summary_add(out, &col, name, v2);
		}
	}
	if (col)
		fputc('\n', out);
}

void cpu_render_states(FILE *out, struct json_object *r, long cpu, bool wide)
{
	struct json_object *cpus = cpu_list(r);
	size_t n;

	if (!cpus) {
		cpu_render_value(out, r);
		return;
	}
	if (cpu < 0 || wide)
		print_state_rows(out, cpus, cpu);
	if (cpu < 0)
		return;
	n = json_object_array_length(cpus);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);
		struct json_object *num = cpu_json_cpu(e);

		if (json_object_is_type(num, json_type_int) &&
		    json_object_get_int64(num) == cpu) {
			if (!wide && json_object_is_type(e, json_type_object))
				print_state_summary(out, e);
			fputc('\n', out);
			print_state_tables(out, r, e);
			return;
		}
	}
}

/* ---- any other reply ---- */

static void print_indented(FILE *out, struct json_object *v, int depth)
{
	char buf[CELL_MAX];

	if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, val)
		{
			fprintf(out, "%*s%s:", depth * 2, "", key);
			if (cpu_json_scalar(val)) {
				fprintf(out, " %s\n",
					cpu_json_cell(val, buf, sizeof(buf)));
			} else {
				fputc('\n', out);
				print_indented(out, val, depth + 1);
			}
		}
	} else if (json_object_is_type(v, json_type_array)) {
		size_t n = json_object_array_length(v);

		for (size_t i = 0; i < n; i++) {
			struct json_object *e = json_object_array_get_idx(v, i);

			if (cpu_json_scalar(e)) {
				fprintf(out, "%*s- %s\n", depth * 2, "",
					cpu_json_cell(e, buf, sizeof(buf)));
			} else {
				fprintf(out, "%*s-\n", depth * 2, "");
				print_indented(out, e, depth + 1);
			}
		}
	} else {
		fprintf(out, "%*s%s\n", depth * 2, "",
			cpu_json_cell(v, buf, sizeof(buf)));
	}
}

void cpu_render_value(FILE *out, struct json_object *v)
{
	print_indented(out, v, 0);
}
