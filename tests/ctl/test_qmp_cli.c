// SPDX-License-Identifier: GPL-2.0-only
/*
 * The client library and `hotvm cpu` against a fake VMM: a qmp server
 * whose handlers answer with QEMU's real reply shapes (QEMU 7.2,
 * -smp 2,maxcpus=4,sockets=4,cores=1,threads=1, cpu1 hot-added) and record
 * what the CLI asked for.
 */
#include <pthread.h>

#include "check.h"
#include "cpu_cmd.h"
#include "cpu_render.h"
#include "qmp.h"
#include "qmp_schema.h"
#include "qmp_client.h"
#include "qmp_test_util.h"

#define T_MS 5000

static const char hotpluggable_reply[] =
	"[{\"props\": {\"core-id\": 0, \"thread-id\": 0, \"socket-id\": 3}, "
	"\"vcpus-count\": 1, \"type\": \"qemu64-x86_64-cpu\"}, "
	"{\"props\": {\"core-id\": 0, \"thread-id\": 0, \"socket-id\": 2}, "
	"\"vcpus-count\": 1, \"type\": \"qemu64-x86_64-cpu\"}, "
	"{\"props\": {\"core-id\": 0, \"thread-id\": 0, \"socket-id\": 1}, "
	"\"vcpus-count\": 1, \"qom-path\": \"/machine/peripheral/cpu1\", "
	"\"type\": \"qemu64-x86_64-cpu\"}, "
	"{\"props\": {\"core-id\": 0, \"thread-id\": 0, \"socket-id\": 0}, "
	"\"vcpus-count\": 1, \"qom-path\": \"/machine/unattached/device[0]\", "
	"\"type\": \"qemu64-x86_64-cpu\"}]";

static const char cpus_fast_reply[] =
	"[{\"thread-id\": 41803, \"props\": {\"core-id\": 0, \"thread-id\": 0, "
	"\"socket-id\": 0}, \"qom-path\": \"/machine/unattached/device[0]\", "
	"\"cpu-index\": 0, \"target\": \"x86_64\"}, "
	"{\"thread-id\": 41817, \"props\": {\"core-id\": 0, \"thread-id\": 0, "
	"\"socket-id\": 1}, \"qom-path\": \"/machine/peripheral/cpu1\", "
	"\"cpu-index\": 1, \"target\": \"x86_64\"}]";

/* The shape proposed for hotvm's query-cpuhp (the lead finalises it). */
static const char cpuhp_reply[] =
	"{\"host-states\": [{\"state\": 0, \"name\": \"offline\"}, "
	"{\"state\": 1, \"name\": \"host:prepare\"}, "
	"{\"state\": 2, \"name\": \"vcpu:create\"}, "
	"{\"state\": 3, \"name\": \"guest:ap-starting\"}, "
	"{\"state\": 4, \"name\": \"online\"}], "
	"\"cpus\": [{\"cpu\": 0, \"present\": true, "
	"\"host\": {\"state\": \"online\", \"target\": \"online\", "
	"\"fail\": null}, "
	"\"guest\": {\"state\": \"online\", \"target\": \"online\", "
	"\"states\": [{\"state\": 0, \"name\": \"offline\"}, "
	"{\"state\": 1, \"name\": \"sched:starting\"}, "
	"{\"state\": 2, \"name\": \"online\"}]}}, "
	"{\"cpu\": 1, \"present\": true, "
	"\"host\": {\"state\": \"vcpu:create\", \"target\": \"online\", "
	"\"fail\": \"guest:ap-starting\"}, "
	"\"guest\": {\"state\": \"offline\", \"target\": \"online\", "
	"\"states\": [{\"state\": 0, \"name\": \"offline\"}, "
	"{\"state\": 1, \"name\": \"sched:starting\"}, "
	"{\"state\": 2, \"name\": \"online\"}]}}]}";

struct fake {
	struct qmp_server *s;
	char last_cmd[64];
	char last_args[1024];
};

static struct fake fk;
static struct tdir td;

static void record(const char *cmd, struct json_object *args)
{
	snprintf(fk.last_cmd, sizeof(fk.last_cmd), "%s", cmd);
	snprintf(fk.last_args, sizeof(fk.last_args), "%s",
		 json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN));
}

static int h_hotpluggable(void *ctx, struct json_object *args,
			  struct json_object **ret, struct qmp_error *err)
{
	(void)ctx;
	(void)args;
	(void)err;
	*ret = json_tokener_parse(hotpluggable_reply);
	return 0;
}

static int h_cpus_fast(void *ctx, struct json_object *args,
		       struct json_object **ret, struct qmp_error *err)
{
	(void)ctx;
	(void)args;
	(void)err;
	*ret = json_tokener_parse(cpus_fast_reply);
	return 0;
}

static int h_cpuhp(void *ctx, struct json_object *args,
		   struct json_object **ret, struct qmp_error *err)
{
	(void)ctx;
	(void)args;
	(void)err;
	*ret = json_tokener_parse(cpuhp_reply);
	return 0;
}

static int h_device_add(void *ctx, struct json_object *args,
			struct json_object **ret, struct qmp_error *err)
{
	int64_t sock = qmp_int(args, "socket-id", -1);

	(void)ctx;
	(void)ret;
	record("device_add", args);
	if (sock == 0)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "CPU[0] with APIC ID 0 exists");
	/* QEMU: ACPI_DEVICE_OST comes once the guest has acted. */
	qmp_emit_event(fk.s, "ACPI_DEVICE_OST", NULL);
	return 0;
}

static int h_device_del(void *ctx, struct json_object *args,
			struct json_object **ret, struct qmp_error *err)
{
	const char *id = qmp_str(args, "id", "");
	struct json_object *d;
	char path[96];

	(void)ctx;
	(void)ret;
	record("device_del", args);
	if (strncmp(id, "cpu", 3))
		return qmp_error_set(err, QMP_ERROR_DEVICE_NOT_FOUND,
				     "Device '%s' not found", id);
	d = json_object_new_object();
	snprintf(path, sizeof(path), "/machine/peripheral/%s", id);
	json_object_object_add(d, "device", json_object_new_string(id));
	json_object_object_add(d, "path", json_object_new_string(path));
	qmp_emit_event(fk.s, "DEVICE_DELETED", d);
	return 0;
}

static int h_record(const char *name, struct json_object *args,
		    struct json_object **ret)
{
	record(name, args);
	*ret = json_object_new_object();
	if (!strcmp(name, "cpu-resize"))
		json_object_object_add(*ret, "online", json_object_new_int(3));
	return 0;
}

static int h_target(void *ctx, struct json_object *args,
		    struct json_object **ret, struct qmp_error *err)
{
	(void)ctx;
	(void)err;
	return h_record("cpuhp-set-target", args, ret);
}

static int h_inject(void *ctx, struct json_object *args,
		    struct json_object **ret, struct qmp_error *err)
{
	(void)ctx;
	(void)err;
	return h_record("cpuhp-inject-fault", args, ret);
}

static int h_resize(void *ctx, struct json_object *args,
		    struct json_object **ret, struct qmp_error *err)
{
	(void)ctx;
	(void)err;
	return h_record("cpu-resize", args, ret);
}

/* Like QEMU's, not hotvm's: whatever arguments come are recorded. */
#define OPEN QMP_CMD_OPEN_ARGS
static const struct qmp_command cmds[] = {
	{ .name = "query-hotpluggable-cpus",
	  .handler = h_hotpluggable,
	  .flags = OPEN },
	{ .name = "query-cpus-fast", .handler = h_cpus_fast, .flags = OPEN },
	{ .name = "query-cpuhp", .handler = h_cpuhp, .flags = OPEN },
	{ .name = "device_add", .handler = h_device_add, .flags = OPEN },
	{ .name = "device_del", .handler = h_device_del, .flags = OPEN },
	{ .name = "cpuhp-set-target", .handler = h_target, .flags = OPEN },
	{ .name = "cpuhp-inject-fault", .handler = h_inject, .flags = OPEN },
	{ .name = "cpu-resize", .handler = h_resize, .flags = OPEN },
};

static void fake_start(unsigned int max_clients)
{
	struct qmp_server_opts o = { .max_clients = max_clients };

	tdir_make(&td);
	o.path = td.path;
	memset(&fk, 0, sizeof(fk));
	CHECK_EQ(qmp_server_create(&o, &fk.s), 0);
	if (!fk.s)
		exit(1);
	CHECK_EQ(qmp_server_register(fk.s, cmds, sizeof(cmds) / sizeof(cmds[0]),
				     NULL),
		 0);
	CHECK_EQ(qmp_server_start(fk.s), 0);
}

static void fake_stop(void)
{
	qmp_server_stop(fk.s);
	fk.s = NULL;
	tdir_remove(&td);
}

struct run {
	int rc;
	char *out, *err;
};

/* Runs `hotvm cpu ARGS... --api-socket PATH`, capturing its output. */
static struct run cli(const char *a0, const char *a1, const char *a2,
		      const char *a3, const char *a4)
{
	const char *in[] = { a0, a1, a2, a3, a4 };
	char *argv[12] = { "cpu" };
	int argc = 1;
	size_t ol, el;
	FILE *out, *errf;
	struct run r;

	for (int i = 0; i < 5 && in[i]; i++)
		argv[argc++] = (char *)in[i];
	argv[argc++] = "--api-socket";
	argv[argc++] = td.path;
	out = open_memstream(&r.out, &ol);
	errf = open_memstream(&r.err, &el);
	r.rc = cpu_cmd_run(argc, argv, out, errf);
	fclose(out);
	fclose(errf);
	if (r.rc)
		printf("# cpu %s: rc %d, stderr: %.*s\n", a0 ? a0 : "", r.rc,
		       (int)strcspn(r.err, "\n"), r.err);
	return r;
}

/* TAP: anything else we print is a comment. */
static void show(const char *what, const char *text)
{
	printf("# %s:\n", what);
	while (*text) {
		size_t n = strcspn(text, "\n");

		printf("#   %.*s\n", (int)n, text);
		text += n + !!text[n];
	}
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static void test_client_library(void)
{
	struct qmp_client *c = NULL;
	struct qmp_client_error e;
	struct json_object *ret = NULL, *ev = NULL, *args;

	fake_start(2);
	CHECK_EQ(qmp_client_connect(td.path, 1, T_MS, &c, &e), 0);
	if (!c)
		return;
	CHECK_EQ(json_object_get_int(
			 jget(jget(jget(jget(qmp_client_greeting(c), "QMP"),
					"version"),
				   "qemu"),
			      "major")),
		 7);
	CHECK_EQ(qmp_client_execute(c, "query-hotpluggable-cpus", NULL, &ret,
				    &e, T_MS),
		 0);
	CHECK_EQ(json_object_array_length(ret), 4);
	json_object_put(ret);
	/* An error reply: class and desc as the server said them. */
	args = json_object_new_object();
	json_object_object_add(args, "id", json_object_new_string("nope"));
	CHECK_EQ(qmp_client_execute(c, "device_del", args, &ret, &e, T_MS),
		 -EREMOTEIO);
	CHECK_STREQ(e.class, "DeviceNotFound");
	CHECK_STREQ(e.desc, "Device 'nope' not found");
	CHECK(!ret);
	CHECK_EQ(qmp_client_execute(c, "no-such", NULL, &ret, &e, T_MS),
		 -EREMOTEIO);
	CHECK_STREQ(e.class, "CommandNotFound");
	/* Events that come before a reply are kept. */
	json_object_put(args);
	args = json_object_new_object();
	json_object_object_add(args, "id", json_object_new_string("cpu1"));
	CHECK_EQ(qmp_client_execute(c, "device_del", args, NULL, &e, T_MS), 0);
	json_object_put(args);
	CHECK_EQ(qmp_client_pending_events(c), 1);
	CHECK_EQ(qmp_client_next_event(c, &ev, T_MS), 0);
	CHECK_STREQ(jstr(ev, "event"), "DEVICE_DELETED");
	CHECK_STREQ(jstr(jget(ev, "data"), "device"), "cpu1");
	CHECK(jget(jget(ev, "timestamp"), "seconds"));
	json_object_put(ev);
	CHECK_EQ(qmp_client_next_event(c, &ev, 50), -ETIMEDOUT);
	qmp_emit_event(fk.s, "LATER", NULL);
	CHECK_EQ(qmp_client_next_event(c, &ev, T_MS), 0);
	CHECK_STREQ(jstr(ev, "event"), "LATER");
	json_object_put(ev);
	/* A full server says why it refuses. */
	{
		struct qmp_client *c2 = NULL, *c3 = NULL;

		CHECK_EQ(qmp_client_connect(td.path, 0, T_MS, &c2, &e), 0);
		CHECK_EQ(qmp_client_connect(td.path, 1, T_MS, &c3, &e),
			 -ECONNREFUSED);
		CHECK(strstr(e.desc, "too many"));
		/* Not negotiated: only qmp_capabilities is accepted. */
		CHECK_EQ(qmp_client_execute(c2, "query-cpus-fast", NULL, &ret,
					    &e, T_MS),
			 -EREMOTEIO);
		CHECK_STREQ(e.class, "CommandNotFound");
		qmp_client_close(c2);
	}
	qmp_client_close(c);
	fake_stop();
	/* No server at all. */
	CHECK_EQ(qmp_client_connect(td.path, 1, T_MS, &c, &e), -ENOENT);
	CHECK(strstr(e.desc, "cannot connect"));
}

static void test_cli_add_remove(void)
{
	struct run r;

	fake_start(0);
	/* No CPU: the first free slot, with the slot's own type and props. */
	r = cli("add", NULL, NULL, NULL, NULL);
	CHECK_EQ(r.rc, 0);
	CHECK_STREQ(fk.last_cmd, "device_add");
	CHECK_STREQ(fk.last_args,
		    "{\"driver\":\"qemu64-x86_64-cpu\",\"id\":\"cpu2\","
		    "\"core-id\":0,\"thread-id\":0,\"socket-id\":2}");
	CHECK(strstr(r.out, "cpu2: added (socket-id 2)"));
	run_free(&r);
	r = cli("add", "3", NULL, NULL, NULL);
	CHECK_EQ(r.rc, 0);
	CHECK(strstr(fk.last_args, "\"id\":\"cpu3\""));
	CHECK(strstr(fk.last_args, "\"socket-id\":3"));
	run_free(&r);
	/* The VMM's refusal, shown as it is. */
	r = cli("add", "0", NULL, NULL, NULL);
	CHECK_EQ(r.rc, 1);
	CHECK_STREQ(
		r.err,
		"hotvm: error: GenericError: CPU[0] with APIC ID 0 exists\n");
	run_free(&r);
	/* By slot number: the id from its QOM path; waits for the event. */
	r = cli("remove", "1", NULL, NULL, NULL);
	CHECK_EQ(r.rc, 0);
	CHECK_STREQ(fk.last_cmd, "device_del");
	CHECK_STREQ(fk.last_args, "{\"id\":\"cpu1\"}");
	CHECK(strstr(r.out, "cpu1: removed"));
	run_free(&r);
	r = cli("remove", "cpu5", "--no-wait", NULL, NULL);
	CHECK_EQ(r.rc, 0);
	CHECK_STREQ(fk.last_args, "{\"id\":\"cpu5\"}");
	run_free(&r);
	r = cli("remove", "disk0", NULL, NULL, NULL);
	CHECK_EQ(r.rc, 1);
	CHECK_STREQ(r.err,
		    "hotvm: error: DeviceNotFound: Device 'disk0' not found\n");
	run_free(&r);
	r = cli("add", "--json", "2", NULL, NULL);
	CHECK_EQ(r.rc, 0);
	CHECK_STREQ(r.out, "{}\n");
	run_free(&r);
	fake_stop();
}

static void test_cli_list_states(void)
{
	struct json_object *o;
	struct run r;
	char *l;

	fake_start(0);
	r = cli("list", NULL, NULL, NULL, NULL);
	CHECK_EQ(r.rc, 0);
	show("list", r.out);
	CHECK(!strncmp(r.out, "SOCKET", 6));
	CHECK(strstr(r.out, "HOST-TID"));
	/* Ascending slots; present ones with their id and host thread. */
	l = strchr(r.out, '\n');
	CHECK(l && !strncmp(l + 1, "0 ", 2));
	CHECK(l && strstr(l, "/machine/unattached/device[0]"));
	CHECK(strstr(r.out, "41817"));
	CHECK(strstr(r.out, "cpu1"));
	CHECK(strstr(r.out, "free"));
	CHECK(strstr(r.out, "qemu64-x86_64-cpu"));
	run_free(&r);
	r = cli("list", "--json", NULL, NULL, NULL);
	CHECK_EQ(r.rc, 0);
	o = json_tokener_parse(r.out);
	CHECK_EQ(json_object_array_length(jget(o, "query-hotpluggable-cpus")),
		 4);
	CHECK_EQ(json_object_array_length(jget(o, "query-cpus-fast")), 2);
	json_object_put(o);
	run_free(&r);
	r = cli("states", NULL, NULL, NULL, NULL);
	CHECK_EQ(r.rc, 0);
	show("states", r.out);
	CHECK(strstr(r.out, "HOST:STATE"));
	CHECK(strstr(r.out, "GUEST:STATE"));
	CHECK(strstr(r.out, "guest:ap-starting"));
	run_free(&r);
	r = cli("states", "1", NULL, NULL, NULL);
	CHECK_EQ(r.rc, 0);
	show("states 1", r.out);
	/* Host table from host-states, guest's from the vCPU's own list. */
	CHECK(strstr(r.out, "*     2 vcpu:create"));
	CHECK(strstr(r.out, "  !   3 guest:ap-starting"));
	CHECK(strstr(r.out, " >    4 online"));
	CHECK(strstr(r.out, "sched:starting"));
	CHECK(!strstr(r.out, "\n0 ")); /* the row of cpu 0 is filtered out */
	run_free(&r);
	r = cli("states", "--json", NULL, NULL, NULL);
	o = json_tokener_parse(r.out);
	CHECK(jget(o, "cpus"));
	json_object_put(o);
	run_free(&r);
	fake_stop();
}

static void test_cli_hotvm_commands(void)
{
	struct run r;

	fake_start(0);
	r = cli("target", "1", "guest", "sched:starting", NULL);
	CHECK_EQ(r.rc, 0);
	CHECK_STREQ(fk.last_cmd, "cpuhp-set-target");
	CHECK_STREQ(fk.last_args, "{\"cpu\":1,\"side\":\"guest\",\"target\":"
				  "\"sched:starting\"}");
	run_free(&r);
	r = cli("inject", "cpu2", "host", "3", NULL);
	CHECK_EQ(r.rc, 0);
	CHECK_STREQ(fk.last_cmd, "cpuhp-inject-fault");
	CHECK_STREQ(fk.last_args, "{\"cpu\":2,\"side\":\"host\",\"state\":3}");
	run_free(&r);
	r = cli("resize", "3", NULL, NULL, NULL);
	CHECK_EQ(r.rc, 0);
	CHECK_STREQ(fk.last_args, "{\"count\":3}");
	CHECK(strstr(r.out, "online: 3"));
	run_free(&r);
	fake_stop();
}

static void test_cli_usage(void)
{
	static const char *const bad[][4] = {
		{ NULL },
		{ "bogus" },
		{ "add", "x" },
		{ "add", "1", "2" },
		{ "remove" },
		{ "list", "1" },
		{ "target", "1", "sideways", "s" },
		{ "inject", "1", "host" },
		{ "resize", "cpu1" },
		{ "states", "--frobnicate" },
	};
	char *argv[4];
	struct run r;
	FILE *out, *errf;
	size_t ol, el;

	tdir_make(&td);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = cli(bad[i][0], bad[i][1], bad[i][2], bad[i][3], NULL);
		CHECK_EQ(r.rc, 2);
		CHECK(strstr(r.err, "Usage: hotvm cpu"));
		run_free(&r);
	}
	/* No --api-socket at all. */
	argv[0] = "cpu";
	argv[1] = "list";
	out = open_memstream(&r.out, &ol);
	errf = open_memstream(&r.err, &el);
	CHECK_EQ(cpu_cmd_run(2, argv, out, errf), 2);
	fclose(out);
	fclose(errf);
	CHECK(strstr(r.err, "--api-socket"));
	run_free(&r);
	r = cli("--help", NULL, NULL, NULL, NULL);
	CHECK_EQ(r.rc, 0);
	CHECK(strstr(r.out, "Usage: hotvm cpu"));
	run_free(&r);
	/* Nobody listening: an error, not a usage error. */
	r = cli("list", NULL, NULL, NULL, NULL);
	CHECK_EQ(r.rc, 1);
	CHECK(!strncmp(r.err, "hotvm: error: cannot connect to ", 32));
	run_free(&r);
	tdir_remove(&td);
}

static void test_printers_defensive(void)
{
	static const char *const odd[] = {
		"null",
		"\"text\"",
		"42",
		"[]",
		"[1, \"a\", null]",
		"{\"cpus\": 3}",
		"{\"cpus\": [1, {}, {\"cpu\": \"x\"}]}",
		"[{\"props\": 7}, {\"qom-path\": 5, \"type\": []}]",
		"{\"cpus\": [{\"cpu\": 1, \"host\": \"online\", \"guest\": "
		"[1]}], \"host-states\": [\"offline\", \"online\"]}",
	};
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		struct json_object *o = json_tokener_parse(odd[i]);

		cpu_render_list(f, o, o);
		cpu_render_states(f, o, -1, false);
		cpu_render_states(f, o, 1, false);
		cpu_render_value(f, o);
		json_object_put(o);
	}
	cpu_render_list(f, NULL, NULL);
	cpu_render_states(f, NULL, 0, false);
	fclose(f);
	/* A bare state name marks the current entry of a string table. */
	CHECK(strstr(buf, "*       online"));
	free(buf);
}

/*
 * With the guest agent, query-cpuhp has Linux's word on each vCPU and
 * Linux's own table: cpu list's Linux section, cpu states' columns and a
 * vCPU's Linux table (the rows a VM without the agent has none of).
 */
static void test_linux_views(void)
{
	static const char reply[] =
		"{\"host-states\": [{\"state\": 0, \"name\": \"offline\"}, "
		"{\"state\": 1, \"name\": \"online\"}], \"guest-states\": [], "
		"\"linux-states\": [{\"state\": 0, \"name\": \"offline\"}, "
		"{\"state\": 238, \"name\": \"online\"}], \"cpus\": [{\"cpu\": "
		"1, "
		"\"present\": true, \"host\": {\"state\": 1, \"name\": "
		"\"online\"}, \"guest\": {\"reports\": false, \"stage\": "
		"\"started\", \"state\": null, \"name\": null, \"linux-cpu\": "
		"1, "
		"\"linux-online\": true, \"linux-state\": 238, "
		"\"linux-state-name\": \"online\"}}]}";
	struct json_object *o = json_tokener_parse(reply);
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	cpu_render_linux(f, o);
	cpu_render_states(f, o, -1, false);
	cpu_render_states(f, o, 1, false);
	fclose(f);
	CHECK(strstr(buf, "LINUX-CPU"));
	CHECK(strstr(buf, "GUEST:LINUX-STATE-NAME"));
	CHECK(strstr(buf, "LINUX cpu1 online, stage started"));
	CHECK(strstr(buf, "*  238 online"));
	free(buf);
	json_object_put(o);
}

CHECK_MAIN(TEST(test_client_library), TEST(test_cli_add_remove),
	   TEST(test_cli_list_states), TEST(test_cli_hotvm_commands),
	   TEST(test_cli_usage), TEST(test_printers_defensive),
	   TEST(test_linux_views))
