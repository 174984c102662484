// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every command's reply against its declaration (the .returns of
 * qc_commands[], vmm/api/qmp_cmds_table.c).  Each command of the table runs
 * through the real server and client, on the real controller with fake
 * vCPUs and the scripted guest (fake_vm.h), in states that bring out its
 * optional members; every reply must carry exactly the declared members,
 * no more and no fewer, each of the declared type, null only where the
 * declaration allows it.  Every command of the table must have run, and
 * every declared member must have been seen at least once.
 *
 * The checker is this test's own, not the server's, and before it judges
 * a reply it is shown replies that break a declaration in each way it
 * knows: it must catch every one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "api_fixture.h"
#include "check.h"
#include "fake_vm.h"
#include "hotvm/guest_states.h"
#include "qmp.h"
#include "qmp_client.h"
#include "qmp_cmds.h"
#include "qmp_schema.h"
#include "sim_guest.h"

#define MAX_SEEN 256

/* The declared members seen present in some reply, by declaration. */
static const struct qmp_field *seen[MAX_SEEN];
static size_t n_seen;

static void mark_seen(const struct qmp_field *f)
{
	for (size_t i = 0; i < n_seen; i++)
		if (seen[i] == f)
			return;
	if (n_seen < MAX_SEEN)
		seen[n_seen++] = f;
}

static bool was_seen(const struct qmp_field *f)
{
	for (size_t i = 0; i < n_seen; i++)
		if (seen[i] == f)
			return true;
	return false;
}

static const char *const type_names[] = {
	[QMP_T_INT] = "integer",  [QMP_T_STR] = "string",
	[QMP_T_BOOL] = "boolean", [QMP_T_OBJECT] = "object",
	[QMP_T_ARRAY] = "array",  [QMP_T_MAP] = "object",
};

static bool has_type(enum qmp_type t, struct json_object *v)
{
	switch (t) {
	case QMP_T_INT:
		return json_object_is_type(v, json_type_int);
	case QMP_T_STR:
		return json_object_is_type(v, json_type_string);
	case QMP_T_BOOL:
		return json_object_is_type(v, json_type_boolean);
	case QMP_T_OBJECT:
	case QMP_T_MAP:
		return json_object_is_type(v, json_type_object);
	case QMP_T_ARRAY:
		return json_object_is_type(v, json_type_array);
	}
	return false;
}

static size_t check_field(const struct qmp_field *f, struct json_object *v,
			  const char *path);

/* One problem with a reply, said with where it is; counted. */
static size_t problem(const char *path, const char *what)
{
	printf("# %s: %s\n", path, what);
	return 1;
}

static const struct qmp_field *member(const struct qmp_field *m,
				      const char *name)
{
	for (; m && m->name; m++)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

/* Exactly the declared members m in o, each as declared. */
static size_t check_members(const struct qmp_field *m, struct json_object *o,
			    const char *path)
{
	char sub[256];
	size_t bad = 0;

	json_object_object_foreach(o, key, val)
	{
		(void)val;
		snprintf(sub, sizeof(sub), "%s.%s", path, key);
		if (!member(m, key))
			bad += problem(sub, "not declared");
	}
	for (const struct qmp_field *f = m; f && f->name; f++) {
		struct json_object *v;

		snprintf(sub, sizeof(sub), "%s.%s", path, f->name);
		if (!json_object_object_get_ex(o, f->name, &v)) {
			if (!f->optional)
				bad += problem(sub, "declared, missing");
			continue;
		}
		bad += check_field(f, v, sub);
	}
	return bad;
}

/* An element of an array or a map: of type t, an object with members m. */
static size_t check_element(enum qmp_type t, const struct qmp_field *m,
			    struct json_object *v, const char *path)
{
	char want[64];

	if (!has_type(t, v)) {
		snprintf(want, sizeof(want), "not of type %s", type_names[t]);
		return problem(path, want);
	}
	return t == QMP_T_OBJECT ? check_members(m, v, path) : 0;
}

static size_t check_field(const struct qmp_field *f, struct json_object *v,
			  const char *path)
{
	char sub[256], want[64];
	size_t bad = 0;

	if (json_object_is_type(v, json_type_null))
		return f->nullable ? 0 : problem(path, "null, not nullable");
	if (!has_type(f->type, v)) {
		snprintf(want, sizeof(want), "not of type %s",
			 type_names[f->type]);
		return problem(path, want);
	}
	mark_seen(f);
	if (f->type == QMP_T_OBJECT)
		return check_members(f->members, v, path);
	if (f->type == QMP_T_ARRAY) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			bad += check_element(f->elem, f->members,
					     json_object_array_get_idx(v, i),
					     sub);
		}
	}
	if (f->type == QMP_T_MAP) {
		json_object_object_foreach(v, key, val)
		{
			snprintf(sub, sizeof(sub), "%s.%s", path, key);
			bad += check_element(f->elem, f->members, val, sub);
		}
	}
	return bad;
}

/* How many ways the reply text breaks the declaration r. */
static size_t judge(const struct qmp_field *r, const char *text,
		    const char *name)
{
	struct json_object *v = json_tokener_parse(text);
	size_t bad;

	CHECK(v);
	bad = check_field(r, v, name);
	json_object_put(v);
	return bad;
}

/* The checker catches each way a reply can break a declaration. */
static void test_checker(void)
{
	static const struct qmp_field inner[] = {
		{ .name = "n", .type = QMP_T_INT },
		{ 0 },
	};
	static const struct qmp_field members[] = {
		{ .name = "i", .type = QMP_T_INT },
		{ .name = "s", .type = QMP_T_STR, .optional = true },
		{ .name = "b", .type = QMP_T_BOOL, .nullable = true },
		{ .name = "o", .type = QMP_T_OBJECT, .members = inner },
		{ .name = "a", .type = QMP_T_ARRAY, .elem = QMP_T_INT },
		{ .name = "l",
		  .type = QMP_T_ARRAY,
		  .elem = QMP_T_OBJECT,
		  .members = inner },
		{ .name = "m", .type = QMP_T_MAP, .elem = QMP_T_INT },
		{ 0 },
	};
	static const struct qmp_field decl = QMP_RETURNS_OBJECT(members);
	static const struct qmp_field list = QMP_RETURNS_LIST(inner);
	static const struct qmp_field none = QMP_RETURNS_NOTHING;
	/* Each breaks the declaration once. */
	static const char *const broken[] = {
		"{\"b\":true,\"o\":{\"n\":1},\"a\":[],\"l\":[],\"m\":{}}",
		"{\"i\":\"1\",\"b\":true,\"o\":{\"n\":1},\"a\":[],\"l\":[],"
		"\"m\":{}}",
		"{\"i\":1,\"b\":true,\"o\":{\"n\":1},\"a\":[],\"l\":[],\"m\":{}"
		","
		"\"x\":1}",
		"{\"i\":null,\"b\":true,\"o\":{\"n\":1},\"a\":[],\"l\":[],"
		"\"m\":{}}",
		"{\"i\":1,\"b\":1,\"o\":{\"n\":1},\"a\":[],\"l\":[],\"m\":{}}",
		"{\"i\":1,\"b\":true,\"o\":{},\"a\":[],\"l\":[],\"m\":{}}",
		"{\"i\":1,\"b\":true,\"o\":{\"n\":1,\"k\":2},\"a\":[],\"l\":[],"
		"\"m\":{}}",
		"{\"i\":1,\"b\":true,\"o\":{\"n\":1},\"a\":[1,\"2\"],\"l\":[],"
		"\"m\":{}}",
		"{\"i\":1,\"b\":true,\"o\":{\"n\":1},\"a\":[],\"l\":[{\"n\":1},"
		"{\"n\":true}],\"m\":{}}",
		"{\"i\":1,\"b\":true,\"o\":{\"n\":1},\"a\":[],\"l\":[7],\"m\":{"
		"}}",
		"{\"i\":1,\"b\":true,\"o\":{\"n\":1},\"a\":[],\"l\":[],"
		"\"m\":{\"r\":1,\"q\":\"2\"}}",
		"{\"i\":1,\"b\":true,\"o\":[],\"a\":[],\"l\":[],\"m\":{}}",
		"{\"i\":1,\"s\":null,\"b\":true,\"o\":{\"n\":1},\"a\":[],"
		"\"l\":[],\"m\":{}}",
	};

	printf("# the checker's own test: each reply below breaks one rule\n");
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++)
		CHECK_EQ(judge(&decl, broken[i], "broken"), 1);
	CHECK_EQ(judge(&decl,
		       "{\"i\":-1,\"s\":\"x\",\"b\":null,\"o\":{\"n\":1},"
		       "\"a\":[1,2],\"l\":[{\"n\":3}],\"m\":{\"r\":4}}",
		       "good"),
		 0);
	CHECK_EQ(judge(&list, "[{\"n\":1},{\"n\":2}]", "good"), 0);
	CHECK_EQ(judge(&list, "{\"n\":1}", "broken"), 1);
	CHECK_EQ(judge(&none, "{}", "good"), 0);
	CHECK_EQ(judge(&none, "{\"n\":1}", "broken"), 1);
	CHECK_EQ(judge(&none, "[]", "broken"), 1);
	n_seen = 0; /* what the real replies show is what counts */
}

static const struct qmp_command *declared(const char *name)
{
	size_t n;
	const struct qmp_command *tbl = qmp_cmds_table(&n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(tbl[i].name, name))
			return &tbl[i];
	return NULL;
}

/* Which commands of the table have run, with their reply judged. */
static bool ran[64];

/* Runs cmd with args (JSON text or NULL); its reply must be as declared. */
static void run(const char *cmd, const char *args)
{
	const struct qmp_command *c = declared(cmd);
	struct json_object *a = args ? json_tokener_parse(args) : NULL;
	struct json_object *r = NULL;
	struct qmp_client_error e = { 0 };
	size_t n;
	int rc;

	CHECK(c);
	if (!c)
		return;
	rc = qmp_client_execute(t.c, cmd, a, &r, &e, T_MS);
	json_object_put(a);
	if (rc)
		printf("# %s %s: %s: %s\n", cmd, args ? args : "", e.class,
		       e.desc);
	CHECK_EQ(rc, 0);
	if (!rc) {
		/* A reply of {} comes back as NULL from the client. */
		if (!r)
			r = json_object_new_object();
		CHECK_EQ(check_field(&c->returns, r, cmd), 0);
		ran[c - qmp_cmds_table(&n)] = true;
	}
	json_object_put(r);
}

/*
 * Every command, in states that show every optional member: a vCPU with
 * an id and one without, one partly up, one the sides disagree about.
 */
static void test_replies(void)
{
	size_t n;
	const struct qmp_command *tbl = qmp_cmds_table(&n);

	CHECK(n <= sizeof(ran) / sizeof(ran[0]));
	setup(4, 1);
	run("query-status", NULL);
	run("query-hotpluggable-cpus", NULL);
	run("device_add", "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 1, "
			  "\"id\": \"c1\"}");
	run("query-hotpluggable-cpus", NULL);
	run("query-cpus-fast", NULL);
	run("cpuhp-set-target",
	    "{\"cpu\": 2, \"side\": \"host\", \"target\": \"vcpu:create\"}");
	run("cpuhp-inject-fault",
	    "{\"cpu\": 2, \"side\": \"host\", \"state\": \"vcpu:create\"}");
	/* Pending until the guest walks cpu 2: shown as its guest fail. */
	run("cpuhp-inject-fault", "{\"cpu\": 2, \"side\": \"guest\", "
				  "\"state\": \"percpu:prepare\"}");
	run("query-cpuhp", NULL);
	run("cpuhp-inject-fault",
	    "{\"cpu\": 2, \"side\": \"host\", \"state\": null}");
	run("cpuhp-inject-fault",
	    "{\"cpu\": 2, \"side\": \"guest\", \"state\": \"none\"}");
	run("cpuhp-set-target",
	    "{\"cpu\": 2, \"side\": \"host\", \"target\": 0}");
	run("cpu-hotplug", "{\"cpu\": 2, \"state\": \"online\"}");
	run("cpu-hotplug", "{\"cpu\": 2, \"state\": \"offline\"}");
	/* A guest that claims a CPU it was never shown: a disagreement. */
	sim_guest_report(3, GUEST_ONLINE);
	run("query-cpuhp", "{\"cpu\": 3}");
	run("cpuhp-recover", "{\"cpu\": 3}");
	run("cpu-resize", "{\"count\": 3}");
	run("cpu-resize", "{\"count\": 2}");
	run("query-hotplug-stats", NULL);
	run("device_del", "{\"id\": \"c1\"}");
	run("query-cpuhp", NULL);
	run("system_powerdown", NULL);
	run("system_reset", NULL);
	run("quit", NULL); /* the fake VM only records the stop */
	teardown();
	for (size_t i = 0; i < n; i++) {
		if (!ran[i])
			printf("# %s: never ran\n", tbl[i].name);
		CHECK(ran[i]);
	}
}

/*
 * Every declared member appeared in some reply, but for those no state
 * between two commands brings out (said why).
 */
static bool unreachable(const char *path)
{
	/* More steps than a report holds (HP_REPORT_MAX). */
	if (strstr(path, ".steps-dropped"))
		return true;
	/*
	 * The guest agent's counters and Linux's word through it: this
	 * machine has no agent (tests/hotplug/test_linux_view.c drives it
	 * without QMP).
	 */
	if (!strncmp(path, "query-hotplug-stats.agent", 25) ||
	    strstr(path, ".onlined-by") || strstr(path, ".offlined-by") ||
	    strstr(path, ".linux-trace-pending") ||
	    !strcmp(path, "query-cpuhp.cpus.guest.linux-cpu") ||
	    !strcmp(path, "query-cpuhp.cpus.guest.linux-online") ||
	    !strncmp(path, "query-cpuhp.cpus.guest.linux-state", 34) ||
	    !strncmp(path, "query-cpuhp.linux-states", 24))
		return true;
	/*
	 * A guest-side target is pending only until the guest takes it (GED
	 * 0x10, at once), and cpuhp-set-target waits for the guest's walk.
	 */
	return !strcmp(path, "query-cpuhp.cpus.guest.target") ||
	       !strcmp(path, "query-cpuhp.cpus.guest.target-name");
}

static void all_seen(const struct qmp_field *m, const char *path)
{
	char sub[256];

	for (const struct qmp_field *f = m; f && f->name; f++) {
		snprintf(sub, sizeof(sub), "%s.%s", path, f->name);
		if (!was_seen(f) && !unreachable(sub)) {
			printf("# %s: declared, never seen\n", sub);
			check_failures++;
		}
		all_seen(f->members, sub);
	}
}

static void test_members_seen(void)
{
	size_t n;
	const struct qmp_command *tbl = qmp_cmds_table(&n);

	for (size_t i = 0; i < n; i++)
		all_seen(tbl[i].returns.members, tbl[i].name);
}

CHECK_MAIN(TEST(test_checker), TEST(test_replies), TEST(test_members_seen))
