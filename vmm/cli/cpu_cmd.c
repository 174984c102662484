// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm cpu add|remove|list|states|target|inject|resize`: a QMP client of
 * a running hotvm (or QEMU, for the standard commands).  The shapes of
 * hotvm's own replies may still grow, so the printers show what is there
 * rather than insisting on a layout.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cpu_cmd.h"
#include "cpu_trace.h"
#include "cpu_verb.h"
#include "cpu_watch.h"
#include "libvirt.h"
#include "qmp_client.h"

#define DEFAULT_DRIVER	  "host-x86_64-cpu"
#define PERIPHERAL_PREFIX "/machine/peripheral/"
#define CELL_MAX	  128

/*
 * Each verb names the QMP commands it sends ("QMP:" lines), so that a user
 * can do the same from any QMP client; tests/qmp/test_qmp_cmds.c holds
 * those names to the server's declarations (vmm/api/qmp_cmds.c).
 */
static void usage(FILE *f)
{
	fputs("Usage: hotvm cpu COMMAND --api-socket PATH [--json] "
	      "[--timeout SECONDS]\n"
	      "\n"
	      "Commands:\n"
	      "  add [CPU]                 hot-add vCPU CPU (socket-id), or "
	      "the first free slot\n"
	      "                            QMP: query-hotpluggable-cpus, "
	      "device_add\n"
	      "  remove CPU|ID             hot-remove a vCPU (waits for "
	      "DEVICE_DELETED unless --no-wait)\n"
	      "                            QMP: query-hotpluggable-cpus, "
	      "device_del\n"
	      "  list                      possible vCPUs and the present "
	      "ones\n"
	      "                            QMP: query-hotpluggable-cpus, "
	      "query-cpus-fast\n"
	      "  states [CPU]              host and guest hotplug states\n"
	      "                            QMP: query-cpuhp\n"
	      "  target CPU host|guest STATE\n"
	      "                            bring a vCPU to a named state\n"
	      "                            QMP: cpuhp-set-target\n"
	      "  inject CPU host|guest STATE\n"
	      "                            make STATE's next callback fail "
	      "on CPU\n"
	      "                            QMP: cpuhp-inject-fault\n"
	      "  resize N                  add or remove vCPUs until N are "
	      "online\n"
	      "                            QMP: cpu-resize\n"
	      "  watch                     a live view of every vCPU's "
	      "states, from events\n"
	      "                            QMP: query-cpuhp\n"
	      "  trace add|remove CPU      hot-add or remove CPU and draw "
	      "its timeline\n"
	      "                            QMP: cpu-hotplug, query-cpuhp\n"
	      "  trace --from FILE|-       the timeline of an earlier "
	      "cpu-hotplug reply, or\n"
	      "                            one trace --json printed\n"
	      "\n"
	      "Options:\n"
	      "  --api-socket PATH         the VMM's control socket "
	      "(--api-socket of hotvm run)\n"
	      "  --json                    print the raw reply\n"
	      "  --connect URI --domain NAME  list/resize a libvirt domain "
	      "instead\n"
	      "  --libvirt-xml             list as libvirt's <vcpu>/<vcpus> "
	      "XML\n"
	      "  --timeout SECONDS         wait at most this long for a "
	      "reply (default 60)\n"
	      "  --no-wait                 remove: do not wait for "
	      "DEVICE_DELETED\n"
	      "  --wide                    states CPU: every column\n"
	      "  --svg FILE                trace: also draw it as SVG\n"
	      "  --wait STAGE              trace add: reply once the guest "
	      "is acknowledged|started\n"
	      "  -h, --help                this text\n"
	      "\n"
	      "A command that fails prints the server's reason as it gave it "
	      "(for an\n"
	      "operation: which step failed, why, and where the vCPU is now) "
	      "and exits 1.\n",
	      f);
}

/* ---- cells and tables ---- */

static const char *cell(struct json_object *o, char *buf, size_t len)
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

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (json_object_is_type(o, json_type_object))
		json_object_object_get_ex(o, key, &v);
	return v;
}

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

static long long prop(struct json_object *entry, const char *key)
{
	struct json_object *v = member(member(entry, "props"), key);

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
		long long p = prop(x, keys[i]), q = prop(y, keys[i]);

		if (p != q)
			return p < q ? -1 : 1;
	}
	return 0;
}

/* Sorted by slot: QEMU lists them highest first. */
static struct json_object **sorted_slots(struct json_object *hp, size_t *n)
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

static struct json_object *find_fast(struct json_object *fast,
				     struct json_object *qom)
{
	size_t n = json_object_is_type(fast, json_type_array)
			   ? json_object_array_length(fast)
			   : 0;

	if (!json_object_is_type(qom, json_type_string))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(fast, i);
		struct json_object *q = member(e, "qom-path");

		if (json_object_is_type(q, json_type_string) &&
		    !strcmp(json_object_get_string(q),
			    json_object_get_string(qom)))
			return e;
	}
	return NULL;
}

/* A device id from a QOM path, as device_del wants it. */
static const char *qom_id(struct json_object *qom)
{
	const char *p = json_object_get_string(qom);

	if (!json_object_is_type(qom, json_type_string))
		return NULL;
	return strncmp(p, PERIPHERAL_PREFIX, strlen(PERIPHERAL_PREFIX))
		       ? NULL
		       : p + strlen(PERIPHERAL_PREFIX);
}

void cpu_cmd_print_list(FILE *out, struct json_object *hp,
			struct json_object *fast)
{
	static const char *const head[] = { "SOCKET",	"CORE", "THREAD",
					    "STATE",	"ID",	"CPU-INDEX",
					    "HOST-TID", "TYPE" };
	struct table t = { .cols = 8 };
	struct json_object **slots;
	size_t n;

	if (!json_object_is_type(hp, json_type_array)) {
		cpu_cmd_print_value(out, hp);
		return;
	}
	slots = sorted_slots(hp, &n);
	for (size_t i = 0; i < 8; i++)
		table_add(&t, head[i]);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = slots[i], *props = member(e, "props");
		struct json_object *qom = member(e, "qom-path");
		struct json_object *f = find_fast(fast, qom);
		char buf[CELL_MAX];
		const char *id = qom_id(qom);

		table_add(&t,
			  cell(member(props, "socket-id"), buf, sizeof(buf)));
		table_add(&t, cell(member(props, "core-id"), buf, sizeof(buf)));
		table_add(&t,
			  cell(member(props, "thread-id"), buf, sizeof(buf)));
		table_add(&t, qom ? "present" : "free");
		table_add(&t, id ? id : cell(qom, buf, sizeof(buf)));
		table_add(&t, cell(member(f, "cpu-index"), buf, sizeof(buf)));
		table_add(&t, cell(member(f, "thread-id"), buf, sizeof(buf)));
		table_add(&t, cell(member(e, "type"), buf, sizeof(buf)));
	}
	table_print(out, &t);
	table_free(&t);
	free(slots);
}

/* ---- states ---- */

static struct json_object *cpu_list(struct json_object *r)
{
	if (json_object_is_type(r, json_type_array))
		return r;
	return json_object_is_type(member(r, "cpus"), json_type_array)
		       ? member(r, "cpus")
		       : NULL;
}

static struct json_object *cpu_number(struct json_object *e)
{
	static const char *const keys[] = { "cpu", "cpu-index", "id" };

	for (size_t i = 0; i < 3; i++)
		if (member(e, keys[i]))
			return member(e, keys[i]);
	return NULL;
}

static bool is_side(const char *key)
{
	return !strcmp(key, "host") || !strcmp(key, "guest");
}

static bool scalar(struct json_object *v)
{
	return !json_object_is_type(v, json_type_object) &&
	       !json_object_is_type(v, json_type_array);
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
		return member(e, name);
	snprintf(side, sizeof(side), "%.*s", (int)(colon - name), name);
	return member(member(e, side), colon + 1);
}

static void print_state_rows(FILE *out, struct json_object *cpus, long cpu)
{
	/* query-cpuhp's own shape: the names, not every member. */
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
	struct columns cols = { .n = 0 };
	struct table t = { 0 };
	size_t n = json_object_array_length(cpus);
	struct json_object *first = json_object_array_get_idx(cpus, 0);

	if (n && json_object_is_type(member(member(first, "host"), "name"),
				     json_type_string))
		for (size_t i = 0; i < sizeof(hotvm_cols) / sizeof(*hotvm_cols);
		     i++)
			snprintf(cols.name[cols.n++], sizeof(cols.name[0]),
				 "%s", hotvm_cols[i]);
	for (size_t i = 0; i < n && !cols.n; i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);

		if (!json_object_is_type(e, json_type_object))
			continue;
		json_object_object_foreach(e, key, v)
		{
			if (is_side(key) &&
			    json_object_is_type(v, json_type_object)) {
				json_object_object_foreach(v, k2, v2)
				{
					if (scalar(v2))
						column_add(&cols, key, k2);
				}
			} else if (is_side(key) || scalar(v)) {
				column_add(&cols, NULL, key);
			}
		}
	}
	t.cols = cols.n ? cols.n : 1;
	for (size_t i = 0; i < cols.n; i++) {
		char up[48];
		size_t j;

		for (j = 0; cols.name[i][j] && j < sizeof(up) - 1; j++)
			up[j] = cols.name[i][j] >= 'a' && cols.name[i][j] <= 'z'
					? cols.name[i][j] - 'a' + 'A'
					: cols.name[i][j];
		up[j] = '\0';
		table_add(&t, up);
	}
	for (size_t i = 0; i < n && cols.n; i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);
		struct json_object *num = cpu_number(e);

		if (cpu >= 0 && (!json_object_is_type(num, json_type_int) ||
				 json_object_get_int64(num) != cpu))
			continue;
		for (size_t c = 0; c < cols.n; c++) {
			char buf[CELL_MAX];

			table_add(&t, cell(column_value(e, cols.name[c]), buf,
					   sizeof(buf)));
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
	struct json_object *v = member(member(e, side), "states");

	if (json_object_is_type(v, json_type_array))
		return v;
	snprintf(key, sizeof(key), "%s-states", side);
	v = member(r, key);
	if (json_object_is_type(v, json_type_array))
		return v;
	v = member(member(r, "states"), side);
	return json_object_is_type(v, json_type_array) ? v : NULL;
}

/* Does a per-vCPU value (state, target, fail) name this table entry? */
static bool names(struct json_object *val, struct json_object *entry,
		  size_t index)
{
	struct json_object *num = member(entry, "state");
	struct json_object *name = member(entry, "name");

	if (!num)
		num = member(entry, "number");
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
	struct json_object *st = member(e, side);
	char **lines;

	*n = tab ? json_object_array_length(tab) : 0;
	lines = calloc(*n + 1, sizeof(*lines));
	if (!lines) {
		*n = 0;
		return NULL;
	}
	for (size_t i = 0; i < *n; i++) {
		struct json_object *ent = json_object_array_get_idx(tab, i);
		struct json_object *num = member(ent, "state");
		struct json_object *name = member(ent, "name");
		char nbuf[CELL_MAX], sbuf[CELL_MAX], line[CELL_MAX * 2 + 8];
		bool cur = names(member(st, "state"), ent, i);

		if (!json_object_is_type(st, json_type_object))
			cur = names(st, ent, i);
		if (!num)
			num = member(ent, "number");
		if (json_object_is_type(ent, json_type_string))
			name = ent;
		snprintf(line, sizeof(line), "%c%c%c %3s %s", cur ? '*' : ' ',
			 names(member(st, "target"), ent, i) ? '>' : ' ',
			 names(member(st, "fail"), ent, i) ? '!' : ' ',
			 num ? cell(num, nbuf, sizeof(nbuf)) : "",
			 cell(name, sbuf, sizeof(sbuf)));
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
	struct json_object *guest = member(e, "guest");
	struct json_object *reports = member(guest, "reports");

	/*
	 * A guest that does not report its table (Linux): the stage the
	 * host observed is all there is, not a column of "offline".
	 */
	if (json_object_is_type(reports, json_type_boolean) &&
	    !json_object_get_boolean(reports) && g) {
		char line[CELL_MAX + 40];

		for (size_t i = 0; i < ng; i++) {
			free(g[i]);
			g[i] = NULL;
		}
		snprintf(line, sizeof(line), "stage: %s",
			 json_object_get_string(member(guest, "stage")));
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

	snprintf(item, sizeof(item), "%s %s", key, cell(v, buf, sizeof(buf)));
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
		if (!is_side(key) && scalar(v))
			summary_add(out, &col, key, v);
	}
	for (int s = 0; s < 2; s++) {
		const char *side = s ? "guest" : "host";
		struct json_object *o = member(e, side);

		if (!json_object_is_type(o, json_type_object))
			continue;
		json_object_object_foreach(o, k2, v2)
		{
			char name[64];

			if (in_tables(k2) || !scalar(v2))
				continue;
			snprintf(name, sizeof(name), "%s:%s", side, k2);
			summary_add(out, &col, name, v2);
		}
	}
	if (col)
		fputc('\n', out);
}

static void print_states(FILE *out, struct json_object *r, long cpu, bool wide)
{
	struct json_object *cpus = cpu_list(r);
	size_t n;

	if (!cpus) {
		cpu_cmd_print_value(out, r);
		return;
	}
	if (cpu < 0 || wide)
		print_state_rows(out, cpus, cpu);
	if (cpu < 0)
		return;
	n = json_object_array_length(cpus);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);
		struct json_object *num = cpu_number(e);

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

void cpu_cmd_print_states(FILE *out, struct json_object *r, long cpu)
{
	print_states(out, r, cpu, false);
}

void cpu_cmd_print_states_wide(FILE *out, struct json_object *r, long cpu)
{
	print_states(out, r, cpu, true);
}

/* ---- any other reply ---- */

static void print_indented(FILE *out, struct json_object *v, int depth)
{
	char buf[CELL_MAX];

	if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, val)
		{
			fprintf(out, "%*s%s:", depth * 2, "", key);
			if (scalar(val)) {
				fprintf(out, " %s\n",
					cell(val, buf, sizeof(buf)));
			} else {
				fputc('\n', out);
				print_indented(out, val, depth + 1);
			}
		}
	} else if (json_object_is_type(v, json_type_array)) {
		size_t n = json_object_array_length(v);

		for (size_t i = 0; i < n; i++) {
			struct json_object *e = json_object_array_get_idx(v, i);

			if (scalar(e)) {
				fprintf(out, "%*s- %s\n", depth * 2, "",
					cell(e, buf, sizeof(buf)));
			} else {
				fprintf(out, "%*s-\n", depth * 2, "");
				print_indented(out, e, depth + 1);
			}
		}
	} else {
		fprintf(out, "%*s%s\n", depth * 2, "",
			cell(v, buf, sizeof(buf)));
	}
}

void cpu_cmd_print_value(FILE *out, struct json_object *v)
{
	print_indented(out, v, 0);
}

/* ---- commands ---- */

static int vmm_error(struct cpu_ctx *x, const struct qmp_client_error *e)
{
	fflush(x->out); /* a partial line of results first, whole */
	if (e->class[0])
		fprintf(x->errf, "hotvm: error: %s: %s\n", e->class, e->desc);
	else
		fprintf(x->errf, "hotvm: error: %s\n", e->desc);
	return 1;
}

static int call(struct cpu_ctx *x, const char *name, struct json_object *args,
		struct json_object **ret)
{
	struct qmp_client_error e;
	int rc =
		qmp_client_execute(x->c, name, args, ret, &e, x->o->timeout_ms);

	json_object_put(args);
	return rc ? vmm_error(x, &e) : 0;
}

static void print_json(struct cpu_ctx *x, struct json_object *v)
{
	fprintf(x->out, "%s\n",
		json_object_to_json_string_ext(
			v, JSON_C_TO_STRING_PLAIN |
				   JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* "3" or "cpu3". */
static int parse_cpu(const char *s, long *cpu)
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

static void print_done(struct cpu_ctx *x, struct json_object *ret,
		       const char *what)
{
	if (x->o->json) {
		print_json(x, ret);
		return;
	}
	fprintf(x->out, "%s\n", what);
	if (json_object_is_type(ret, json_type_object) &&
	    json_object_object_length(ret))
		cpu_cmd_print_value(x->out, ret);
	else if (ret && !json_object_is_type(ret, json_type_object))
		cpu_cmd_print_value(x->out, ret);
}

static struct json_object *slot_of(struct json_object **slots, size_t n,
				   long cpu)
{
	for (size_t i = 0; i < n; i++)
		if (prop(slots[i], "socket-id") == cpu)
			return slots[i];
	return NULL;
}

static int do_add(struct cpu_ctx *x)
{
	struct json_object *hp = NULL, *slot = NULL, *args, *ret = NULL;
	struct json_object **slots;
	struct qmp_client_error e;
	char id[32], what[96];
	size_t n = 0;
	long cpu = -1;
	int rc;

	if (x->o->npos > 2)
		return -EINVAL;
	if (x->o->npos == 2 && parse_cpu(x->o->pos[1], &cpu))
		return -EINVAL;
	rc = qmp_client_execute(x->c, "query-hotpluggable-cpus", NULL, &hp, &e,
				x->o->timeout_ms);
	if (rc && cpu < 0)
		return vmm_error(x, &e);
	slots = sorted_slots(hp, &n);
	if (cpu >= 0) {
		slot = slot_of(slots, n, cpu);
	} else {
		for (size_t i = 0; i < n && !slot; i++)
			if (!member(slots[i], "qom-path") &&
			    prop(slots[i], "socket-id") >= 0)
				slot = slots[i];
		if (!slot) {
			fprintf(x->errf, "hotvm: error: no free vCPU slot\n");
			free(slots);
			json_object_put(hp);
			return 1;
		}
		cpu = prop(slot, "socket-id");
	}
	snprintf(id, sizeof(id), "cpu%ld", cpu);
	args = json_object_new_object();
	json_object_object_add(
		args, "driver",
		json_object_new_string(
			json_object_is_type(member(slot, "type"),
					    json_type_string)
				? json_object_get_string(member(slot, "type"))
				: DEFAULT_DRIVER));
	json_object_object_add(args, "id", json_object_new_string(id));
	/* The slot's own props, as QEMU wants them all (die-id, ...). */
	if (json_object_is_type(member(slot, "props"), json_type_object)) {
		json_object_object_foreach(member(slot, "props"), k, v)
		{
			json_object_object_add(args, k, json_object_get(v));
		}
	}
	if (!member(args, "socket-id"))
		json_object_object_add(args, "socket-id",
				       json_object_new_int64(cpu));
	if (!member(args, "core-id"))
		json_object_object_add(args, "core-id", json_object_new_int(0));
	if (!member(args, "thread-id"))
		json_object_object_add(args, "thread-id",
				       json_object_new_int(0));
	free(slots);
	json_object_put(hp);
	rc = call(x, "device_add", args, &ret);
	if (!rc) {
		snprintf(what, sizeof(what), "%s: added (socket-id %ld)", id,
			 cpu);
		print_done(x, ret, what);
	}
	json_object_put(ret);
	return rc;
}

/* QEMU's device_del only starts the removal; the event says it is done. */
static int wait_deleted(struct cpu_ctx *x, const char *id)
{
	for (;;) {
		struct json_object *ev;
		const char *name, *dev;
		int rc = qmp_client_next_event(x->c, &ev, x->o->timeout_ms);

		if (rc) {
			fprintf(x->errf,
				"hotvm: error: %s: no DEVICE_DELETED event: "
				"%s\n",
				id, strerror(-rc));
			return 1;
		}
		name = json_object_get_string(member(ev, "event"));
		/* device_del took an id or a path: the event has both. */
		dev = json_object_get_string(member(
			member(ev, "data"), *id == '/' ? "path" : "device"));
		rc = name && dev && !strcmp(name, "DEVICE_DELETED") &&
		     !strcmp(dev, id);
		json_object_put(ev);
		if (rc)
			return 0;
	}
}

static int do_remove(struct cpu_ctx *x)
{
	struct json_object *args, *ret = NULL;
	char id[128], what[160];
	long cpu;
	int rc;

	if (x->o->npos != 2)
		return -EINVAL;
	snprintf(id, sizeof(id), "%s", x->o->pos[1]);
	/* A bare number names a slot: find the id it was added with. */
	if (x->o->pos[1][0] >= '0' && x->o->pos[1][0] <= '9') {
		struct json_object *hp = NULL, **slots, *slot;
		struct qmp_client_error e;
		size_t n = 0;

		if (parse_cpu(x->o->pos[1], &cpu))
			return -EINVAL;
		snprintf(id, sizeof(id), "cpu%ld", cpu);
		if (!qmp_client_execute(x->c, "query-hotpluggable-cpus", NULL,
					&hp, &e, x->o->timeout_ms)) {
			slots = sorted_slots(hp, &n);
			slot = slot_of(slots, n, cpu);
			/* No id (a boot or anonymous CPU): its QOM path. */
			if (qom_id(member(slot, "qom-path")))
				snprintf(id, sizeof(id), "%s",
					 qom_id(member(slot, "qom-path")));
			else if (json_object_is_type(member(slot, "qom-path"),
						     json_type_string))
				snprintf(id, sizeof(id), "%s",
					 json_object_get_string(
						 member(slot, "qom-path")));
			free(slots);
		}
		json_object_put(hp);
	}
	args = json_object_new_object();
	json_object_object_add(args, "id", json_object_new_string(id));
	rc = call(x, "device_del", args, &ret);
	if (!rc && !x->o->no_wait)
		rc = wait_deleted(x, id);
	if (!rc) {
		snprintf(what, sizeof(what), "%s: removed", id);
		print_done(x, ret, what);
	}
	json_object_put(ret);
	return rc;
}

static int do_list(struct cpu_ctx *x)
{
	struct json_object *hp = NULL, *fast = NULL;
	int rc;

	if (x->o->npos != 1)
		return -EINVAL;
	rc = call(x, "query-hotpluggable-cpus", NULL, &hp);
	if (!rc)
		rc = call(x, "query-cpus-fast", NULL, &fast);
	if (!rc && x->o->json) {
		struct json_object *both = json_object_new_object();

		json_object_object_add(both, "query-hotpluggable-cpus",
				       json_object_get(hp));
		json_object_object_add(both, "query-cpus-fast",
				       json_object_get(fast));
		print_json(x, both);
		json_object_put(both);
	} else if (!rc && x->o->libvirt_xml) {
		cli_libvirt_print_xml(x->out, hp, fast);
	} else if (!rc) {
		cpu_cmd_print_list(x->out, hp, fast);
	}
	json_object_put(hp);
	json_object_put(fast);
	return rc;
}

/* The reply as the text shows it: the tables and that vCPU's entry. */
static void only_cpu(struct json_object *r, long cpu)
{
	struct json_object *cpus = member(r, "cpus"), *one;
	size_t n;

	if (!json_object_is_type(cpus, json_type_array))
		return;
	one = json_object_new_array();
	n = json_object_array_length(cpus);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);
		struct json_object *num = cpu_number(e);

		if (json_object_is_type(num, json_type_int) &&
		    json_object_get_int64(num) == cpu)
			json_object_array_add(one, json_object_get(e));
	}
	json_object_object_add(r, "cpus", one);
}

static int do_states(struct cpu_ctx *x)
{
	struct json_object *ret = NULL;
	long cpu = -1;
	int rc;

	if (x->o->npos > 2 ||
	    (x->o->npos == 2 && parse_cpu(x->o->pos[1], &cpu)))
		return -EINVAL;
	rc = call(x, "query-cpuhp", NULL, &ret);
	if (!rc && x->o->json && cpu >= 0)
		only_cpu(ret, cpu);
	if (!rc && x->o->json)
		print_json(x, ret);
	else if (!rc)
		print_states(x->out, ret, cpu, x->o->wide);
	json_object_put(ret);
	return rc;
}

/* target and inject: CPU host|guest STATE. */
static int do_state_op(struct cpu_ctx *x, const char *cmd, const char *key)
{
	struct json_object *args, *ret = NULL, *state;
	const char *side, *name;
	char what[160], *end;
	long cpu, num;
	int rc;

	if (x->o->npos != 4 || parse_cpu(x->o->pos[1], &cpu))
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
	rc = call(x, cmd, args, &ret);
	if (!rc) {
		snprintf(what, sizeof(what), "cpu%ld: %s %s %s: ok", cpu, side,
			 key, name);
		print_done(x, ret, what);
	}
	json_object_put(ret);
	return rc;
}

static int do_resize(struct cpu_ctx *x)
{
	struct json_object *args, *ret = NULL;
	char what[64];
	long count;
	int rc;

	if (x->o->npos != 2 || parse_cpu(x->o->pos[1], &count) ||
	    !strncmp(x->o->pos[1], "cpu", 3))
		return -EINVAL;
	args = json_object_new_object();
	json_object_object_add(args, "count", json_object_new_int64(count));
	rc = call(x, "cpu-resize", args, &ret);
	if (!rc) {
		snprintf(what, sizeof(what), "resized to %ld vCPUs", count);
		print_done(x, ret, what);
	}
	json_object_put(ret);
	return rc;
}

static int parse_opts(int argc, char **argv, struct cpu_opts *o, bool *help)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			*help = true;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--no-wait")) {
			o->no_wait = true;
		} else if (!strcmp(a, "--wide")) {
			o->wide = true;
		} else if (!strcmp(a, "--svg") || !strcmp(a, "--from") ||
			   !strcmp(a, "--wait")) {
			if (++i == argc)
				return -EINVAL;
			*(a[2] == 's'	? &o->svg
			  : a[2] == 'f' ? &o->from
					: &o->wait) = argv[i];
		} else if (!strcmp(a, "--libvirt-xml")) {
			o->libvirt_xml = true;
		} else if (!strcmp(a, "--connect") || !strcmp(a, "--domain")) {
			if (++i == argc)
				return -EINVAL;
			*(a[2] == 'c' ? &o->connect : &o->domain) = argv[i];
		} else if (!strcmp(a, "--api-socket") ||
			   !strcmp(a, "--timeout")) {
			if (++i == argc)
				return -EINVAL;
			if (a[2] == 'a') {
				o->socket = argv[i];
			} else {
				char *end;
				long s = strtol(argv[i], &end, 10);

				if (*end || s <= 0 || s > 86400)
					return -EINVAL;
				o->timeout_ms = (int)s * 1000;
			}
		} else if (!strncmp(a, "--api-socket=", 13)) {
			o->socket = a + 13;
		} else if (a[0] == '-' && a[1] &&
			   !(a[1] >= '0' && a[1] <= '9')) {
			return -EINVAL;
		} else if (o->npos <
			   (int)(sizeof(o->pos) / sizeof(o->pos[0]))) {
			o->pos[o->npos++] = a;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

static int do_target(struct cpu_ctx *x)
{
	return do_state_op(x, "cpuhp-set-target", "target");
}

static int do_inject(struct cpu_ctx *x)
{
	return do_state_op(x, "cpuhp-inject-fault", "state");
}

/* Positional counts include the verb; checked before connecting. */
static const struct verb {
	const char *name;
	int min, max;
	int (*fn)(struct cpu_ctx *x);
} verbs[] = {
	{ .name = "add", .min = 1, .max = 2, .fn = do_add },
	{ .name = "remove", .min = 2, .max = 2, .fn = do_remove },
	{ .name = "list", .min = 1, .max = 1, .fn = do_list },
	{ .name = "states", .min = 1, .max = 2, .fn = do_states },
	{ .name = "target", .min = 4, .max = 4, .fn = do_target },
	{ .name = "inject", .min = 4, .max = 4, .fn = do_inject },
	{ .name = "resize", .min = 2, .max = 2, .fn = do_resize },
	{ .name = "watch", .min = 1, .max = 1, .fn = cpu_watch_verb },
	{ .name = "trace", .min = 1, .max = 3, .fn = cpu_trace_verb },
};

static bool args_ok(const struct verb *v, const struct cpu_opts *o)
{
	long n;

	if (o->npos < v->min || o->npos > v->max)
		return false;
	if (v->fn == do_remove)
		return true; /* a number or any device id */
	if (v->fn == cpu_trace_verb)
		return cpu_trace_args_ok(o);
	if (v->min == 4 && strcmp(o->pos[2], "host") &&
	    strcmp(o->pos[2], "guest"))
		return false;
	if (v->fn == do_resize && !strncmp(o->pos[1], "cpu", 3))
		return false;
	return o->npos < 2 || !parse_cpu(o->pos[1], &n);
}

int cpu_cmd_run(int argc, char **argv, FILE *out, FILE *errf)
{
	struct cpu_opts o = { .timeout_ms = CPU_CMD_DEFAULT_TIMEOUT_S * 1000 };
	struct cpu_ctx x = { .o = &o, .out = out, .errf = errf };
	struct qmp_client_error e;
	bool help = false;
	size_t v;
	int rc;

	if (parse_opts(argc, argv, &o, &help)) {
		fprintf(errf, "hotvm: cpu: bad option or argument\n");
		usage(errf);
		return 2;
	}
	if (help) {
		usage(out);
		return 0;
	}
	for (v = 0; o.npos && v < sizeof(verbs) / sizeof(verbs[0]); v++)
		if (!strcmp(o.pos[0], verbs[v].name))
			break;
	if (!o.npos || v == sizeof(verbs) / sizeof(verbs[0])) {
		if (o.npos)
			fprintf(errf, "hotvm: cpu: unknown command '%s'\n",
				o.pos[0]);
		usage(errf);
		return 2;
	}
	if (!args_ok(&verbs[v], &o)) {
		fprintf(errf, "hotvm: cpu %s: bad arguments\n", o.pos[0]);
		usage(errf);
		return 2;
	}
	if (o.connect || o.domain)
		return cli_libvirt_run(o.pos[0], o.npos > 1 ? o.pos[1] : NULL,
				       o.connect, o.domain, o.json, out, errf);
	/* trace --from reads an earlier reply: no VMM needed. */
	if (!o.socket && !(verbs[v].fn == cpu_trace_verb && o.from)) {
		fprintf(errf, "hotvm: cpu: --api-socket PATH is required\n");
		usage(errf);
		return 2;
	}
	if (o.socket) {
		rc = qmp_client_connect(o.socket, 1, o.timeout_ms, &x.c, &e);
		if (rc)
			return vmm_error(&x, &e);
	}
	rc = verbs[v].fn(&x);
	if (x.c)
		qmp_client_close(x.c);
	if (rc == -EINVAL) {
		fprintf(errf, "hotvm: cpu %s: bad arguments\n", o.pos[0]);
		usage(errf);
		return 2;
	}
	fflush(out);
	return rc ? 1 : 0;
}

int cpu_cmd_main(int argc, char **argv)
{
	/* Whole lines, so that stderr's never land inside one of stdout's. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cpu_cmd_run(argc, argv, stdout, stderr);
}

/* ---- for the other verbs (cpu_verb.h) ---- */

int cpu_verb_call(struct cpu_ctx *x, const char *name, struct json_object *args,
		  struct json_object **ret)
{
	return call(x, name, args, ret);
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
	print_json(x, v);
}

int cpu_verb_parse_cpu(const char *s, long *cpu)
{
	return parse_cpu(s, cpu);
}

struct json_object *cpu_verb_member(struct json_object *o, const char *key)
{
	return member(o, key);
}

const char *cpu_verb_cell(struct json_object *o, char *buf, size_t len)
{
	return cell(o, buf, len);
}

int64_t cpu_verb_num(struct json_object *o, int64_t dflt)
{
	return json_object_is_type(o, json_type_int) ? json_object_get_int64(o)
						     : dflt;
}

bool cpu_verb_flag(struct json_object *o)
{
	return json_object_is_type(o, json_type_boolean) &&
	       json_object_get_boolean(o);
}

const char *cpu_verb_str(struct json_object *o)
{
	return json_object_is_type(o, json_type_string)
		       ? json_object_get_string(o)
		       : NULL;
}
