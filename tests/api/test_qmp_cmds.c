// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command table (vmm/api/qmp_cmds_table.c, qc_commands[]) is the one
 * home of the QMP command list: query-commands, README.md's list
 * (arguments and reply members) and `hotvm cpu --help` are held to it
 * here, and the declarations to what the rest of hotvm accepts.  HOTVM_README names
 * README.md (readme_section.h).
 *
 * No controller is needed: query-commands is the server's own, and nothing
 * here runs a handler.
 */
#include <stdint.h>

#include "check.h"
#include "cpu_cmd.h"
#include "hotplug.h"
#include "qmp.h"
#include "qmp_schema.h"
#include "qmp_client.h"
#include "qmp_cmds.h"
#include "qmp_test_util.h"
#include "readme_section.h"

#define T_MS 5000

static const struct qmp_command *table(size_t *n)
{
	const struct qmp_command *t = qmp_cmds_table(n);

	CHECK(t && *n > 0);
	return t;
}

static const struct qmp_command *find(const char *name)
{
	size_t n;
	const struct qmp_command *t = table(&n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

/*
 * A reply's declaration as README shows it: {} for nothing, {`a`, `b`?}
 * for an object's members (? marks an optional one), [{...}] for a list
 * of such objects.
 */
static size_t returns_text(const struct qmp_field *r, char *buf, size_t len)
{
	bool list = r->type == QMP_T_ARRAY;
	size_t at = snprintf(buf, len, "%s{", list ? "[" : "");

	for (const struct qmp_field *f = r->members; f && f->name && at < len;
	     f++)
		at += snprintf(buf + at, len - at, "%s`%s`%s",
			       f == r->members ? "" : ", ", f->name,
			       f->optional ? "?" : "");
	if (at < len)
		at += snprintf(buf + at, len - at, "}%s", list ? "]" : "");
	return at;
}

/* The README row a declaration gives, as the test expects to find it. */
static void readme_row(const struct qmp_command *c, char *buf, size_t len)
{
	size_t at;

	at = snprintf(buf, len, "| `%s` | %s | ", c->name,
		      c->flags & QMP_CMD_FAST	 ? "I/O thread"
		      : c->flags & QMP_CMD_QUERY ? "query"
						 : "operation");
	for (const struct qmp_arg *a = c->args; a && a->name && at < len; a++) {
		at += snprintf(buf + at, len - at, "%s`%s`%s",
			       a == c->args ? "" : ", ", a->name,
			       a->optional ? "?" : "");
		for (size_t i = 0; a->values && a->values[i] && at < len; i++)
			at += snprintf(buf + at, len - at, "%s%s%s",
				       i ? " or " : " (", a->values[i],
				       a->values[i + 1] ? "" : ")");
		if (a->max && !a->max_fn && at < len)
			at += snprintf(buf + at, len - at, " (%lld-%lld)",
				       (long long)a->min, (long long)a->max);
	}
	if (at < len)
		at += snprintf(buf + at, len - at, "%s | ",
			       c->args && c->args->name ? "" : "-");
	if (at < len)
		at += returns_text(&c->returns, buf + at, len - at);
	if (at < len)
		snprintf(buf + at, len - at, " | %s |", c->help);
}

/* Every declaration is complete and usable by the server. */
static void test_declarations(void)
{
	size_t n;
	const struct qmp_command *t = table(&n);
	struct qmp_server_opts o = { 0 };
	struct qmp_server *s = NULL;
	struct tdir td;

	for (size_t i = 0; i < n; i++) {
		CHECK(t[i].name && t[i].handler);
		CHECK(t[i].help && *t[i].help && !strchr(t[i].help, '|'));
		for (const struct qmp_arg *a = t[i].args; a && a->name; a++)
			CHECK(a->help && *a->help);
		/* Every reply is declared: an object or a list of them. */
		CHECK(t[i].returns.type == QMP_T_OBJECT ||
		      (t[i].returns.type == QMP_T_ARRAY &&
		       t[i].returns.elem == QMP_T_OBJECT));
	}
	/* The server takes the whole table (types, no duplicate names). */
	tdir_make(&td);
	o.path = td.path;
	CHECK_EQ(qmp_server_create(&o, &s), 0);
	if (s) {
		CHECK_EQ(qmp_server_register(s, t, n, NULL), 0);
		qmp_server_stop(s);
	}
	tdir_remove(&td);
}

/* The values the table allows are the ones the controller parses. */
static void test_values_match_controller(void)
{
	const struct qmp_command *c = find("cpu-hotplug");
	const struct qmp_arg *w = c ? qmp_arg_find(c->args, "wait") : NULL;
	const struct qmp_arg *d = NULL;
	size_t nv = 0;

	CHECK(w && w->values);
	for (size_t i = 0; w && w->values && w->values[i]; i++, nv++)
		CHECK(hotplug_wait_parse(w->values[i]) > HOTPLUG_WAIT_DEFAULT);
	CHECK_EQ(nv, 2);
	/* device_add's "wait" is the same argument. */
	c = find("device_add");
	d = c ? qmp_arg_find(c->args, "wait") : NULL;
	CHECK(d && w && d->values == w->values);
	/* Kata sends topology ids as strings: still taken. */
	CHECK(c && qmp_arg_find(c->args, "socket-id") &&
	      qmp_arg_find(c->args, "socket-id")->type == QMP_ARG_INT_STR);
	CHECK(c && (c->flags & QMP_CMD_OPEN_ARGS));
}

/* query-commands lists the server's two and the table, nothing else. */
static void test_query_commands(void)
{
	static const char *const builtin[] = { "qmp_capabilities",
					       "query-commands" };
	size_t n, got;
	const struct qmp_command *t = table(&n);
	struct qmp_server_opts o = { 0 };
	struct qmp_client_error e = { 0 };
	struct json_object *r = NULL;
	struct qmp_server *s = NULL;
	struct qmp_client *c = NULL;
	struct tdir td;

	tdir_make(&td);
	o.path = td.path;
	CHECK_EQ(qmp_server_create(&o, &s), 0);
	if (!s)
		return;
	CHECK_EQ(qmp_server_register(s, t, n, NULL), 0);
	CHECK_EQ(qmp_server_start(s), 0);
	CHECK_EQ(qmp_client_connect(td.path, 1, T_MS, &c, &e), 0);
	if (c)
		CHECK_EQ(qmp_client_execute(c, "query-commands", NULL, &r, &e,
					    T_MS),
			 0);
	got = json_object_is_type(r, json_type_array)
		      ? json_object_array_length(r)
		      : 0;
	CHECK_EQ(got, n + 2);
	for (size_t i = 0; i < got; i++) {
		const char *name =
			jstr(json_object_array_get_idx(r, i), "name");
		bool known = name && (find(name) || !strcmp(name, builtin[0]) ||
				      !strcmp(name, builtin[1]));

		if (!known)
			printf("# query-commands lists '%s', not declared\n",
			       name ? name : "(null)");
		CHECK(known);
	}
	for (size_t i = 0; i < n; i++) {
		bool listed = false;

		for (size_t j = 0; j < got; j++)
			listed |= !strcmp(
				jstr(json_object_array_get_idx(r, j), "name"),
				t[i].name);
		CHECK(listed);
	}
	json_object_put(r);
	qmp_client_close(c);
	qmp_server_stop(s);
	tdir_remove(&td);
}

/*
 * README.md's list, between its qmp-commands markers, is the table's: a
 * header and one row per command, in the table's order and words.
 */
static void test_readme_list(void)
{
	size_t n, len = 0;
	const struct qmp_command *t = table(&n);
	char *text = NULL, row[1024];
	FILE *f = open_memstream(&text, &len);

	CHECK(f);
	if (!f)
		return;
	fputs("| command | runs | arguments | replies | what it does |\n"
	      "|---|---|---|---|---|\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		readme_row(&t[i], row, sizeof(row));
		fprintf(f, "%s\n", row);
	}
	fclose(f);
	CHECK(readme_section_check("qmp-commands", text));
	free(text);
}

/* Every QMP command `hotvm cpu --help` names is a declared one. */
static void test_cpu_help(void)
{
	char *argv[] = { "cpu", "--help", NULL };
	char *out = NULL, *p;
	size_t len = 0, named = 0;
	FILE *f = open_memstream(&out, &len);

	CHECK(f);
	if (!f)
		return;
	CHECK_EQ(cpu_cmd_run(2, argv, f, stderr), 0);
	fclose(f);
	for (p = out; (p = strstr(p, "QMP: "));) {
		p += 5;
		while (*p && *p != '\n') {
			size_t w = strcspn(p, ", \n");
			char name[64];

			snprintf(name, sizeof(name), "%.*s", (int)w, p);
			if (!find(name))
				printf("# hotvm cpu --help names '%s'\n", name);
			CHECK(find(name));
			named++;
			p += w;
			p += strspn(p, ", ");
		}
	}
	/* Each of the seven verbs says what it sends. */
	CHECK(named >= 7);
	free(out);
}

CHECK_MAIN(TEST(test_declarations), TEST(test_values_match_controller),
	   TEST(test_query_commands), TEST(test_readme_list),
	   TEST(test_cpu_help))
