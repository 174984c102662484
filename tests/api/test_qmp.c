// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP server over real unix sockets: framing, negotiation, errors,
 * events, hostile clients, serialisation and a leak-free stop.
 */
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "check.h"
#include "qmp.h"
#include "qmp_schema.h"
#include "qmp_test_util.h"

#define T_MS 5000 /* generous: ASan and busy CI machines */

struct tctx {
	struct qmp_server *s;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool blocked, release;
	atomic_int inside, max_inside, calls;
};

static struct tctx tc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void enter(struct tctx *c)
{
	int n = atomic_fetch_add(&c->inside, 1) + 1;
	int m = atomic_load(&c->max_inside);

	while (n > m && !atomic_compare_exchange_weak(&c->max_inside, &m, n))
		;
	atomic_fetch_add(&c->calls, 1);
}

static void leave(struct tctx *c)
{
	atomic_fetch_sub(&c->inside, 1);
}

static int h_echo(void *ctx, struct json_object *args, struct json_object **ret,
		  struct qmp_error *err)
{
	(void)err;
	enter(ctx);
	*ret = json_object_get(args);
	leave(ctx);
	return 0;
}

static int h_typed(void *ctx, struct json_object *args,
		   struct json_object **ret, struct qmp_error *err)
{
	(void)ctx;
	(void)err;
	/* The server checked them against typed_args: no checks here. */
	*ret = json_object_new_object();
	json_object_object_add(*ret, "n",
			       json_object_new_int64(qmp_int(args, "n", -1)));
	json_object_object_add(
		*ret, "s", json_object_new_string(qmp_str(args, "s", "none")));
	json_object_object_add(
		*ret, "b", json_object_new_boolean(qmp_bool(args, "b", false)));
	json_object_object_add(*ret, "t",
			       json_object_new_int64(qmp_int(args, "t", -1)));
	json_object_object_add(
		*ret, "mode",
		json_object_new_string(qmp_str(args, "mode", "none")));
	json_object_object_add(*ret, "has-x",
			       json_object_new_boolean(qmp_has(args, "x")));
	return 0;
}

static int h_fail(void *ctx, struct json_object *args, struct json_object **ret,
		  struct qmp_error *err)
{
	static const char *const classes[] = { QMP_ERROR_GENERIC,
					       QMP_ERROR_COMMAND_NOT_FOUND,
					       QMP_ERROR_DEVICE_NOT_ACTIVE,
					       QMP_ERROR_DEVICE_NOT_FOUND,
					       QMP_ERROR_KVM_MISSING_CAP };
	const char *want = qmp_str(args, "class", "");

	(void)ctx;
	(void)ret;
	for (size_t i = 0; i < 5; i++)
		if (!strcmp(want, classes[i]))
			return qmp_error_set(err, classes[i], "failed as %s",
					     want);
	return -ENODEV; /* no err: the server words it */
}

static int h_block(void *ctx, struct json_object *args,
		   struct json_object **ret, struct qmp_error *err)
{
	struct tctx *c = ctx;

	(void)args;
	(void)ret;
	(void)err;
	enter(c);
	pthread_mutex_lock(&c->lock);
	c->blocked = true;
	pthread_cond_broadcast(&c->cond);
	while (!c->release)
		pthread_cond_wait(&c->cond, &c->lock);
	c->blocked = false;
	pthread_mutex_unlock(&c->lock);
	leave(c);
	return 0;
}

static int h_slow(void *ctx, struct json_object *args, struct json_object **ret,
		  struct qmp_error *err)
{
	(void)args;
	(void)ret;
	(void)err;
	enter(ctx);
	usleep(500);
	leave(ctx);
	return 0;
}

static int h_emit(void *ctx, struct json_object *args, struct json_object **ret,
		  struct qmp_error *err)
{
	struct tctx *c = ctx;

	(void)args;
	(void)ret;
	(void)err;
	return qmp_emit_event(c->s, "FROM_HANDLER", NULL);
}

/* A query or a fast command: runs next to a blocked operation. */
static int h_look(void *ctx, struct json_object *args, struct json_object **ret,
		  struct qmp_error *err)
{
	(void)ctx;
	(void)args;
	(void)err;
	*ret = json_object_new_string("looked");
	return 0;
}

/* {"n": events, "keep": every how many a non-lossy one, "lossy": bool} */
static int h_flood(void *ctx, struct json_object *args,
		   struct json_object **ret, struct qmp_error *err)
{
	struct tctx *c = ctx;
	int64_t n = qmp_int(args, "n", 0), keep = qmp_int(args, "keep", 0);
	bool lossy = qmp_bool(args, "lossy", false);

	(void)ret;
	(void)err;
	for (int64_t i = 0; i < n; i++) {
		struct json_object *d = json_object_new_object();
		bool k = keep && i % keep == 0;

		json_object_object_add(d, "i", json_object_new_int64(i));
		json_object_object_add(
			d, "pad",
			json_object_new_string("......................"
					       "......................"
					       "......................"));
		if (lossy && !k)
			qmp_emit_event_lossy(c->s, "PROGRESS", d);
		else
			qmp_emit_event(c->s, k ? "KEEP" : "PROGRESS", d);
	}
	return 0;
}

static int64_t typed_max(void *ctx)
{
	(void)ctx;
	return 10;
}

static const char *const modes[] = { "fast", "slow", "odd", NULL };

static const struct qmp_arg typed_args[] = {
	{ .name = "n", .type = QMP_ARG_INT, .max_fn = typed_max },
	{ .name = "s", .type = QMP_ARG_STR, .optional = true },
	{ .name = "b", .type = QMP_ARG_BOOL, .optional = true },
	{ .name = "t", .type = QMP_ARG_INT_STR, .optional = true },
	{ .name = "st", .type = QMP_ARG_NAME_INT, .optional = true },
	{ .name = "nul",
	  .type = QMP_ARG_NAME_INT,
	  .optional = true,
	  .nullable = true },
	{ .name = "mode",
	  .type = QMP_ARG_STR,
	  .optional = true,
	  .values = modes },
	{ .name = "r",
	  .type = QMP_ARG_INT,
	  .optional = true,
	  .min = -2,
	  .max = 2 },
	{ 0 },
};

static const struct qmp_arg fail_args[] = {
	{ .name = "class", .type = QMP_ARG_STR },
	{ 0 },
};

static const struct qmp_arg flood_args[] = {
	{ .name = "n", .type = QMP_ARG_INT },
	{ .name = "keep", .type = QMP_ARG_INT, .optional = true },
	{ .name = "lossy", .type = QMP_ARG_BOOL, .optional = true },
	{ 0 },
};

static const struct qmp_arg open_args[] = {
	{ .name = "x", .type = QMP_ARG_INT, .optional = true },
	{ 0 },
};

static const struct qmp_command cmds[] = {
	{ .name = "echo", .handler = h_echo, .flags = QMP_CMD_OPEN_ARGS },
	{ .name = "ping", .handler = h_look, .flags = QMP_CMD_FAST },
	{ .name = "look", .handler = h_look, .flags = QMP_CMD_QUERY },
	{ .name = "flood", .handler = h_flood, .args = flood_args },
	{ .name = "typed", .handler = h_typed, .args = typed_args },
	{ .name = "open",
	  .handler = h_typed,
	  .flags = QMP_CMD_OPEN_ARGS,
	  .args = open_args },
	{ .name = "fail", .handler = h_fail, .args = fail_args },
	{ .name = "block", .handler = h_block },
	{ .name = "slow", .handler = h_slow },
	{ .name = "emit", .handler = h_emit },
};

static struct tdir td;

static struct qmp_server *start_opts(struct qmp_server_opts o)
{
	struct qmp_server *s = NULL;

	tdir_make(&td);
	atomic_store(&tc.inside, 0);
	atomic_store(&tc.max_inside, 0);
	atomic_store(&tc.calls, 0);
	tc.release = false;
	o.path = td.path;
	CHECK_EQ(qmp_server_create(&o, &s), 0);
	if (!s)
		exit(1);
	CHECK_EQ(qmp_server_register(s, cmds, sizeof(cmds) / sizeof(cmds[0]),
				     &tc),
		 0);
	CHECK_EQ(qmp_server_start(s), 0);
	tc.s = s;
	return s;
}

static struct qmp_server *start(unsigned int max_clients, size_t max_output)
{
	return start_opts((struct qmp_server_opts){
		.max_clients = max_clients,
		.max_output = max_output,
	});
}

static void stop(struct qmp_server *s)
{
	qmp_server_stop(s);
	tc.s = NULL;
	tdir_remove(&td);
}

/* Connects and reads the greeting. */
static void open_client(struct raw *r)
{
	struct json_object *g;

	CHECK_EQ(raw_open(r, td.path), 0);
	g = raw_recv(r, T_MS);
	CHECK(jget(g, "QMP"));
	json_object_put(g);
}

static void negotiate(struct raw *r)
{
	struct json_object *o;

	raw_send(r, "{\"execute\": \"qmp_capabilities\"}\n");
	o = raw_reply(r, T_MS);
	CHECK(json_object_is_type(jget(o, "return"), json_type_object));
	json_object_put(o);
}

/* Sends one request, returns the reply (events skipped). */
static struct json_object *req(struct raw *r, const char *text)
{
	CHECK_EQ(raw_send(r, text), 0);
	return raw_reply(r, T_MS);
}

static void expect_error(struct raw *r, const char *text, const char *class,
			 const char *desc)
{
	struct json_object *o = req(r, text);

	CHECK_STREQ(err_class(o), class);
	if (desc)
		CHECK_STREQ(err_desc(o), desc);
	if (!err_class(o))
		printf("# request %s got %s\n", text,
		       json_object_to_json_string(o));
	json_object_put(o);
}

static void wait_clients(struct qmp_server *s, unsigned int n)
{
	long long end = t_now_ms() + T_MS;

	while (qmp_server_clients(s) != n && t_now_ms() < end)
		usleep(1000);
	CHECK_EQ(qmp_server_clients(s), n);
}

static void test_greeting(void)
{
	struct qmp_server *s = start(0, 0);
	struct json_object *g, *ver, *qemu;
	struct stat st;
	struct raw r;

	CHECK_EQ(stat(td.path, &st), 0);
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK_EQ(raw_open(&r, td.path), 0);
	g = raw_recv(&r, T_MS);
	ver = jget(jget(g, "QMP"), "version");
	qemu = jget(ver, "qemu");
	CHECK_EQ(json_object_get_int(jget(qemu, "major")), 7);
	CHECK_EQ(json_object_get_int(jget(qemu, "minor")), 2);
	CHECK_EQ(json_object_get_int(jget(qemu, "micro")), 0);
	CHECK(json_object_is_type(jget(qemu, "micro"), json_type_int));
	CHECK_STREQ(jstr(ver, "package"), "hotvm-0.1.0");
	CHECK(json_object_is_type(jget(jget(g, "QMP"), "capabilities"),
				  json_type_array));
	CHECK_EQ(json_object_array_length(jget(jget(g, "QMP"), "capabilities")),
		 0);
	CHECK_EQ(json_object_object_length(g), 1);
	json_object_put(g);
	/* QEMU ends each message with CRLF. */
	CHECK(r.len >= 2 && !memcmp(r.buf + r.len - 2, "\r\n", 2));
	raw_close(&r);
	stop(s);
}

static void test_negotiation(void)
{
	struct qmp_server *s = start(0, 0);
	struct raw r;

	open_client(&r);
	expect_error(&r, "{\"execute\": \"echo\"}", "CommandNotFound",
		     "Expecting capabilities negotiation with "
		     "'qmp_capabilities'");
	expect_error(&r, "{\"execute\": \"query-commands\"}", "CommandNotFound",
		     NULL);
	expect_error(&r, "{\"execute\": \"nope\"}", "CommandNotFound",
		     "Expecting capabilities negotiation with "
		     "'qmp_capabilities'");
	expect_error(&r,
		     "{\"execute\": \"qmp_capabilities\", \"arguments\": "
		     "{\"enable\": [\"oob\"]}}",
		     "GenericError", "Capability 'oob' not available");
	expect_error(&r,
		     "{\"execute\": \"qmp_capabilities\", \"arguments\": "
		     "{\"x\": 1}}",
		     "GenericError", "Parameter 'x' is unexpected");
	CHECK_EQ(atomic_load(&tc.calls), 0);
	negotiate(&r);
	expect_error(&r, "{\"execute\": \"qmp_capabilities\"}",
		     "CommandNotFound",
		     "Capabilities negotiation is already complete, command "
		     "ignored");
	{
		struct json_object *o = req(&r, "{\"execute\": \"echo\", "
						"\"arguments\": {\"a\": 1}}");

		CHECK_EQ(json_object_get_int(jget(jget(o, "return"), "a")), 1);
		json_object_put(o);
	}
	raw_close(&r);
	stop(s);
}

static void test_id_echo(void)
{
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw r;

	open_client(&r);
	/* Even before negotiation and on errors, the id comes back. */
	o = req(&r, "{\"execute\": \"echo\", \"id\": \"early\"}");
	CHECK_STREQ(jstr(o, "id"), "early");
	json_object_put(o);
	negotiate(&r);
	o = req(&r, "{\"execute\": \"echo\", \"id\": 42}");
	CHECK_EQ(json_object_get_int(jget(o, "id")), 42);
	CHECK(jget(o, "return"));
	json_object_put(o);
	o = req(&r, "{\"id\": {\"a\": [1, 2]}, \"execute\": \"nope\"}");
	CHECK_EQ(json_object_get_int(json_object_array_get_idx(
			 jget(jget(o, "id"), "a"), 1)),
		 2);
	CHECK_STREQ(err_class(o), "CommandNotFound");
	json_object_put(o);
	o = req(&r, "{\"execute\": \"echo\"}");
	CHECK(!jget(o, "id"));
	CHECK_EQ(json_object_object_length(jget(o, "return")), 0);
	json_object_put(o);
	o = req(&r, "{\"execute\": \"query-commands\", \"id\": \"q\"}");
	{
		struct json_object *l = jget(o, "return");
		bool echo = false, caps = false, qc = false;

		for (size_t i = 0; i < json_object_array_length(l); i++) {
			const char *n =
				jstr(json_object_array_get_idx(l, i), "name");

			echo |= n && !strcmp(n, "echo");
			caps |= n && !strcmp(n, "qmp_capabilities");
			qc |= n && !strcmp(n, "query-commands");
		}
		CHECK(echo && caps && qc);
		CHECK_EQ(json_object_array_length(l),
			 2 + sizeof(cmds) / sizeof(cmds[0]));
	}
	json_object_put(o);
	raw_close(&r);
	stop(s);
}

/*
 * What a declaration checks beyond the basic types: integers given as
 * decimal strings (as Kata sends "socket-id": "1"), names or numbers,
 * null where it is a value, allowed values, ranges, open commands.
 */
static void test_declared_args(struct raw *r)
{
	struct json_object *o;

	o = req(r, "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		   "\"t\": \"12\"}}");
	CHECK_EQ(json_object_get_int(jget(jget(o, "return"), "t")), 12);
	json_object_put(o);
	o = req(r, "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		   "\"t\": -3, \"st\": \"name\", \"nul\": null, \"mode\": "
		   "\"odd\", \"r\": -2}}");
	CHECK_EQ(json_object_get_int(jget(jget(o, "return"), "t")), -3);
	CHECK_STREQ(jstr(jget(o, "return"), "mode"), "odd");
	json_object_put(o);
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"t\": \"1x\"}}",
		     "GenericError",
		     "Invalid parameter type for 't', expected: integer");
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"t\": \"\"}}",
		     "GenericError",
		     "Invalid parameter type for 't', expected: integer");
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"st\": true}}",
		     "GenericError",
		     "Invalid parameter type for 'st', expected: string or "
		     "integer");
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"st\": null}}",
		     "GenericError",
		     "Invalid parameter type for 'st', expected: string or "
		     "integer");
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"mode\": \"quick\"}}",
		     "GenericError",
		     "Parameter 'mode' does not accept value 'quick' (expected "
		     "'fast', 'slow' or 'odd')");
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"r\": 3}}",
		     "GenericError",
		     "Parameter 'r' expects a value between -2 and 2");
	expect_error(r, "{\"execute\": \"typed\", \"arguments\": {\"n\": -1}}",
		     "GenericError",
		     "Parameter 'n' expects a value between 0 and 10");
	/* Open: undeclared members reach the handler, declared are checked. */
	o = req(r, "{\"execute\": \"open\", \"arguments\": {\"zz\": 1}}");
	CHECK(json_object_is_type(jget(o, "return"), json_type_object));
	json_object_put(o);
	expect_error(r,
		     "{\"execute\": \"open\", \"arguments\": {\"x\": \"1\"}}",
		     "GenericError",
		     "Invalid parameter type for 'x', expected: integer");
	/* The server's own commands are declared too. */
	expect_error(r,
		     "{\"execute\": \"query-commands\", \"arguments\": "
		     "{\"x\": 1}}",
		     "GenericError", "Parameter 'x' is unexpected");
	expect_error(r,
		     "{\"execute\": \"qmp_capabilities\", \"arguments\": "
		     "{\"enable\": 1}}",
		     "GenericError",
		     "Invalid parameter type for 'enable', expected: array");
}

/* A declaration the server cannot check is refused at registration. */
static void test_bad_declarations(void)
{
	static const char *const v[] = { "a", NULL };
	static const struct qmp_arg twice[] = {
		{ .name = "a", .type = QMP_ARG_INT },
		{ .name = "a", .type = QMP_ARG_STR },
		{ 0 },
	};
	static const struct qmp_arg untyped[] = { { .name = "a" }, { 0 } };
	static const struct qmp_arg int_values[] = {
		{ .name = "a", .type = QMP_ARG_INT, .values = v },
		{ 0 },
	};
	const struct qmp_arg *bad[] = { twice, untyped, int_values };
	struct qmp_server_opts o = { 0 };
	struct qmp_server *s = NULL;

	tdir_make(&td);
	o.path = td.path;
	CHECK_EQ(qmp_server_create(&o, &s), 0);
	for (size_t i = 0; s && i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct qmp_command c = { .name = "c",
					 .handler = h_look,
					 .args = bad[i] };

		CHECK_EQ(qmp_server_register(s, &c, 1, NULL), -EINVAL);
	}
	if (s)
		qmp_server_stop(s);
	tdir_remove(&td);
}

static void test_error_classes(void)
{
	static const char *const classes[] = {
		"GenericError", "CommandNotFound", "DeviceNotActive",
		"DeviceNotFound", "KVMMissingCap"
	};
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	char text[256], desc[64];
	struct raw r;

	open_client(&r);
	negotiate(&r);
	for (size_t i = 0; i < 5; i++) {
		snprintf(text, sizeof(text),
			 "{\"execute\": \"fail\", \"arguments\": {\"class\": "
			 "\"%s\"}, \"id\": %zu}",
			 classes[i], i);
		snprintf(desc, sizeof(desc), "failed as %s", classes[i]);
		o = req(&r, text);
		CHECK_STREQ(err_class(o), classes[i]);
		CHECK_STREQ(err_desc(o), desc);
		CHECK_EQ(json_object_get_int(jget(o, "id")), i);
		CHECK(!jget(o, "return"));
		json_object_put(o);
	}
	expect_error(
		&r,
		"{\"execute\": \"fail\", \"arguments\": {\"class\": \"x\"}}",
		"GenericError", "No such device");
	expect_error(&r, "{\"execute\": \"nope\"}", "CommandNotFound",
		     "The command nope has not been found");
	expect_error(&r, "{\"execute\": \"typed\"}", "GenericError",
		     "Parameter 'n' is missing");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": \"1\"}}",
		     "GenericError",
		     "Invalid parameter type for 'n', expected: integer");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 1.5}}",
		     "GenericError",
		     "Invalid parameter type for 'n', expected: integer");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": null}}",
		     "GenericError",
		     "Invalid parameter type for 'n', expected: integer");
	expect_error(&r, "{\"execute\": \"typed\", \"arguments\": {\"n\": 11}}",
		     "GenericError",
		     "Parameter 'n' expects a value between 0 and 10");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": "
		     "{\"n\": 18446744073709551615}}",
		     "GenericError", NULL);
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 1, "
		     "\"s\": 2}}",
		     "GenericError",
		     "Invalid parameter type for 's', expected: string");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 1, "
		     "\"b\": \"yes\"}}",
		     "GenericError",
		     "Invalid parameter type for 'b', expected: boolean");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 1, "
		     "\"zz\": 0}}",
		     "GenericError", "Parameter 'zz' is unexpected");
	o = req(&r, "{\"execute\": \"typed\", \"arguments\": {\"n\": 10, "
		    "\"s\": \"hi\", \"b\": true}}");
	CHECK_EQ(json_object_get_int(jget(jget(o, "return"), "n")), 10);
	CHECK_STREQ(jstr(jget(o, "return"), "s"), "hi");
	CHECK(json_object_get_boolean(jget(jget(o, "return"), "b")));
	json_object_put(o);
	test_declared_args(&r);
	raw_close(&r);
	stop(s);
}

static void test_malformed(void)
{
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw r;

	open_client(&r);
	negotiate(&r);
	expect_error(&r, "null\n", "GenericError",
		     "QMP input must be a JSON object");
	expect_error(&r, "[1, 2]", "GenericError",
		     "QMP input must be a JSON object");
	expect_error(&r, "\"execute\"", "GenericError",
		     "QMP input must be a JSON object");
	expect_error(&r, "{\"execute\": 1}", "GenericError",
		     "QMP input member 'execute' must be a string");
	expect_error(&r, "{\"arguments\": {}}", "GenericError",
		     "QMP input lacks member 'execute'");
	expect_error(&r, "{}", "GenericError",
		     "QMP input lacks member 'execute'");
	expect_error(&r, "{\"execute\": \"echo\", \"arguments\": [1]}",
		     "GenericError",
		     "QMP input member 'arguments' must be an object");
	expect_error(&r, "{\"execute\": \"echo\", \"foo\": 1}", "GenericError",
		     "QMP input member 'foo' is unexpected");
	/* Bad JSON, then a good request in the same write. */
	CHECK_EQ(raw_send(&r, "{\"execute\": ]]] \n"
			      "{\"execute\": \"echo\", \"id\": \"after\"}\n"),
		 0);
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	CHECK(err_desc(o) && !strncmp(err_desc(o), "JSON parse error, ", 18));
	json_object_put(o);
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(jstr(o, "id"), "after");
	CHECK(jget(o, "return"));
	json_object_put(o);
	/* Garbage split over writes, binary bytes, then a good one. */
	raw_send(&r, "}}} \xff\xfe");
	usleep(20000);
	raw_send(&r, "still garbage\n");
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	json_object_put(o);
	/* A request split byte by byte is still one request. */
	{
		const char *t = "{\"execute\": \"echo\", \"id\": \"split\"}";

		for (; *t; t++) {
			char b[2] = { *t, 0 };

			raw_send(&r, b);
		}
	}
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(jstr(o, "id"), "split");
	json_object_put(o);
	/* Two requests in one line, no separator. */
	raw_send(&r, "{\"execute\":\"echo\",\"id\":1}{\"execute\":\"echo\","
		     "\"id\":2}");
	o = raw_reply(&r, T_MS);
	CHECK_EQ(json_object_get_int(jget(o, "id")), 1);
	json_object_put(o);
	o = raw_reply(&r, T_MS);
	CHECK_EQ(json_object_get_int(jget(o, "id")), 2);
	json_object_put(o);
	/* Too deep for the parser: an error, not a crash. */
	{
		char deep[2100];

		memset(deep, '[', 2000);
		strcpy(deep + 2000, "\n");
		raw_send(&r, deep);
		o = raw_reply(&r, T_MS);
		CHECK_STREQ(err_class(o), "GenericError");
		json_object_put(o);
	}
	o = req(&r, "{\"execute\": \"echo\", \"id\": \"alive\"}");
	CHECK_STREQ(jstr(o, "id"), "alive");
	json_object_put(o);
	raw_close(&r);
	stop(s);
}

static void test_long_request(void)
{
	struct qmp_server *s = start(0, 0);
	size_t n = QMP_DEFAULT_MAX_REQUEST + 4096;
	char *big = malloc(n + 1);
	struct json_object *o;
	struct raw r, other;

	open_client(&r);
	open_client(&other);
	negotiate(&r);
	memset(big, 'x', n);
	memcpy(big, "{\"execute\": \"echo\", \"arguments\": {\"s\": \"", 40);
	big[n] = '\0';
	raw_send(&r, big); /* may fail part way: the server hangs up */
	o = raw_recv(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	CHECK(err_desc(o) && strstr(err_desc(o), "longer than"));
	json_object_put(o);
	o = raw_recv(&r, T_MS);
	CHECK(!o && r.eof);
	raw_close(&r);
	/* Just under the limit is fine. */
	negotiate(&other);
	n = QMP_DEFAULT_MAX_REQUEST - 64;
	memset(big, 'y', n);
	memcpy(big, "{\"execute\": \"echo\", \"arguments\": {\"s\": \"", 40);
	strcpy(big + n - 3, "\"}}");
	o = req(&other, big);
	CHECK_EQ(strlen(jstr(jget(o, "return"), "s")), n - 43);
	json_object_put(o);
	raw_close(&other);
	free(big);
	stop(s);
}

static void test_many_clients(void)
{
	struct qmp_server *s = start(0, 0);
	struct raw r[40], extra;
	struct json_object *o;

	for (int i = 0; i < 40; i++) {
		CHECK_EQ(raw_open(&r[i], td.path), 0);
		o = raw_recv(&r[i], T_MS);
		if (i < QMP_DEFAULT_MAX_CLIENTS) {
			CHECK(jget(o, "QMP"));
		} else {
			CHECK_STREQ(err_class(o), "GenericError");
			json_object_put(o);
			o = raw_recv(&r[i], T_MS);
			CHECK(!o && r[i].eof);
		}
		json_object_put(o);
	}
	CHECK_EQ(qmp_server_clients(s), QMP_DEFAULT_MAX_CLIENTS);
	for (int i = 32; i < 40; i++)
		raw_close(&r[i]);
	/* Every admitted client is served. */
	for (int i = 0; i < 32; i++) {
		negotiate(&r[i]);
		o = req(&r[i], "{\"execute\": \"echo\", \"id\": \"x\"}");
		CHECK_STREQ(jstr(o, "id"), "x");
		json_object_put(o);
	}
	/* A freed slot is reusable. */
	raw_close(&r[0]);
	wait_clients(s, 31);
	open_client(&extra);
	negotiate(&extra);
	raw_close(&extra);
	for (int i = 1; i < 32; i++)
		raw_close(&r[i]);
	wait_clients(s, 0);
	stop(s);
}

static void test_disconnect_mid_request(void)
{
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw a, b;

	open_client(&a);
	open_client(&b);
	negotiate(&a);
	raw_send(&a, "{\"execute\": \"echo\", \"argu");
	raw_close(&a);
	/* And one that leaves right after a request, before the reply. */
	open_client(&a);
	negotiate(&a);
	raw_send(&a, "{\"execute\": \"echo\"}");
	raw_close(&a);
	wait_clients(s, 1);
	/* A scripted client (socat, nc -U) half-closes: replies still come. */
	open_client(&a);
	raw_send(&a, "{\"execute\": \"qmp_capabilities\"}\n");
	for (int i = 0; i < 200; i++)
		raw_send(&a, "{\"execute\": \"echo\", \"id\": 1}\n");
	shutdown(a.fd, SHUT_WR);
	{
		int replies = 0;

		while ((o = raw_recv(&a, T_MS))) {
			replies += !!jget(o, "return");
			json_object_put(o);
		}
		CHECK_EQ(replies, 201);
		CHECK(a.eof);
	}
	raw_close(&a);
	wait_clients(s, 1);
	negotiate(&b);
	o = req(&b, "{\"execute\": \"echo\", \"id\": 7}");
	CHECK_EQ(json_object_get_int(jget(o, "id")), 7);
	json_object_put(o);
	raw_close(&b);
	stop(s);
}

static void test_never_reads(void)
{
	struct qmp_server *s = start(0, 64 << 10);
	char *line = malloc(16384);
	struct json_object *o;
	struct raw slow, good;
	int sent = 0;
	long long end;

	open_client(&slow);
	open_client(&good);
	negotiate(&slow);
	negotiate(&good);
	memset(line, 'z', 16000);
	memcpy(line, "{\"execute\": \"echo\", \"arguments\": {\"s\": \"", 40);
	strcpy(line + 16000, "\"}}\n");
	/* Requests, never a read: ~16 KB of reply each. */
	end = t_now_ms() + T_MS;
	while (qmp_server_clients(s) == 2 && t_now_ms() < end) {
		ssize_t n = send(slow.fd, line, strlen(line),
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		if (n > 0)
			sent++;
		if (sent % 16 == 0) {
			o = req(&good, "{\"execute\": \"echo\", \"id\": 1}");
			CHECK_EQ(json_object_get_int(jget(o, "id")), 1);
			json_object_put(o);
		}
	}
	wait_clients(s, 1);
	CHECK(sent > 4);
	o = req(&good, "{\"execute\": \"echo\", \"id\": 2}");
	CHECK_EQ(json_object_get_int(jget(o, "id")), 2);
	json_object_put(o);
	raw_close(&slow);
	raw_close(&good);
	free(line);
	stop(s);
}

static void *emitter(void *arg)
{
	for (int i = 0; i < 50; i++) {
		struct json_object *d = json_object_new_object();

		json_object_object_add(d, "n", json_object_new_int(i));
		qmp_emit_event(arg, "THREADED", d);
	}
	return NULL;
}

static void test_events(void)
{
	struct qmp_server *s = start(0, 0);
	struct json_object *o, *ts;
	struct raw a, b;
	struct timeval tv;
	pthread_t th[4];
	int got = 0;

	open_client(&a);
	open_client(&b);
	negotiate(&a);
	/*
	 * b has not negotiated: it must see nothing of the events below.
	 * Its greeting is read, so the server has it as a client; the proof
	 * is an event, not a quiet interval: the first line b reads after
	 * them must be the reply to its own qmp_capabilities.
	 */
	gettimeofday(&tv, NULL);
	{
		struct json_object *d = json_object_new_object();

		json_object_object_add(d, "device",
				       json_object_new_string("cpu1"));
		CHECK_EQ(qmp_emit_event(s, "DEVICE_DELETED", d), 0);
	}
	o = raw_recv(&a, T_MS);
	CHECK_STREQ(jstr(o, "event"), "DEVICE_DELETED");
	CHECK_STREQ(jstr(jget(o, "data"), "device"), "cpu1");
	ts = jget(o, "timestamp");
	CHECK(json_object_is_type(jget(ts, "seconds"), json_type_int));
	CHECK(json_object_is_type(jget(ts, "microseconds"), json_type_int));
	CHECK(llabs(json_object_get_int64(jget(ts, "seconds")) - tv.tv_sec) <
	      5);
	CHECK(json_object_get_int64(jget(ts, "microseconds")) >= 0 &&
	      json_object_get_int64(jget(ts, "microseconds")) < 1000000);
	json_object_put(o);
	CHECK_EQ(qmp_emit_event(s, "NO_DATA", NULL), 0);
	o = raw_recv(&a, T_MS);
	CHECK_STREQ(jstr(o, "event"), "NO_DATA");
	CHECK(!jget(o, "data"));
	json_object_put(o);
	/* The first thing b receives is its own reply, not an event. */
	raw_send(&b, "{\"execute\": \"qmp_capabilities\", \"id\": \"b\"}");
	o = raw_recv(&b, T_MS);
	CHECK(o && !jget(o, "event"));
	CHECK_STREQ(jstr(o, "id"), "b");
	CHECK(jget(o, "return"));
	json_object_put(o);
	/* Raised during a command: delivered first, then the reply. */
	raw_send(&a, "{\"execute\": \"emit\", \"id\": \"e\"}");
	o = raw_recv(&a, T_MS);
	CHECK_STREQ(jstr(o, "event"), "FROM_HANDLER");
	json_object_put(o);
	o = raw_recv(&a, T_MS);
	CHECK_STREQ(jstr(o, "id"), "e");
	json_object_put(o);
	/* Now both are negotiated: both get b's share of events. */
	o = raw_recv(&b, T_MS);
	CHECK_STREQ(jstr(o, "event"), "FROM_HANDLER");
	json_object_put(o);
	/* From many threads at once: none lost, each thread's in order. */
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, emitter, s);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	while ((o = raw_recv(&a, got < 200 ? T_MS : 100))) {
		CHECK_STREQ(jstr(o, "event"), "THREADED");
		got++;
		json_object_put(o);
	}
	CHECK_EQ(got, 200);
	raw_close(&a);
	raw_close(&b);
	stop(s);
}

static void wait_blocked(void)
{
	pthread_mutex_lock(&tc.lock);
	while (!tc.blocked)
		pthread_cond_wait(&tc.cond, &tc.lock);
	pthread_mutex_unlock(&tc.lock);
}

static void release_block(void)
{
	pthread_mutex_lock(&tc.lock);
	tc.release = true;
	pthread_cond_broadcast(&tc.cond);
	pthread_mutex_unlock(&tc.lock);
}

/*
 * While an operation blocks (a guest that ignores hotplug, a slow hook):
 * a second operation waits its turn, but queries, fast commands and
 * events go through, and the blocked client's own requests stay in order.
 */
static void test_control_plane(void)
{
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw a, b, c;
	long long t0;

	open_client(&a);
	open_client(&b);
	open_client(&c);
	negotiate(&a);
	negotiate(&b);
	negotiate(&c);
	raw_send(&a, "{\"execute\": \"block\", \"id\": \"a\"}"
		     "{\"execute\": \"ping\", \"id\": \"a2\"}");
	wait_blocked();
	/* Operations are serialised... */
	raw_send(&b, "{\"execute\": \"echo\", \"id\": \"b\"}");
	o = raw_recv(&b, 200);
	CHECK(!o && !b.eof);
	json_object_put(o);
	CHECK_EQ(atomic_load(&tc.calls), 1);
	/* ...but the rest of the control plane is not held up. */
	t0 = t_now_ms();
	o = req(&c, "{\"execute\": \"ping\", \"id\": \"c1\"}");
	CHECK_STREQ(jstr(o, "id"), "c1");
	json_object_put(o);
	o = req(&c, "{\"execute\": \"look\", \"id\": \"c2\"}");
	CHECK_STREQ(jstr(o, "id"), "c2");
	CHECK_STREQ(json_object_get_string(jget(o, "return")), "looked");
	json_object_put(o);
	o = req(&c, "{\"execute\": \"query-commands\", \"id\": \"c3\"}");
	CHECK_STREQ(jstr(o, "id"), "c3");
	json_object_put(o);
	CHECK(t_now_ms() - t0 < 2000);
	/* Events reach everyone at once, the blocked client included. */
	qmp_emit_event(s, "WHILE_BLOCKED", NULL);
	o = raw_recv(&a, T_MS);
	CHECK_STREQ(jstr(o, "event"), "WHILE_BLOCKED");
	json_object_put(o);
	o = raw_recv(&b, T_MS);
	CHECK_STREQ(jstr(o, "event"), "WHILE_BLOCKED");
	json_object_put(o);
	o = raw_recv(&c, T_MS);
	CHECK_STREQ(jstr(o, "event"), "WHILE_BLOCKED");
	json_object_put(o);
	/* a's second request waits for its first: replies stay in order. */
	o = raw_recv(&a, 100);
	CHECK(!o);
	json_object_put(o);
	release_block();
	o = raw_reply(&a, T_MS);
	CHECK_STREQ(jstr(o, "id"), "a");
	json_object_put(o);
	o = raw_reply(&a, T_MS);
	CHECK_STREQ(jstr(o, "id"), "a2");
	json_object_put(o);
	o = raw_reply(&b, T_MS);
	CHECK_STREQ(jstr(o, "id"), "b");
	json_object_put(o);
	CHECK_EQ(atomic_load(&tc.max_inside), 1);
	raw_close(&a);
	raw_close(&b);
	raw_close(&c);
	stop(s);
}

static void *emit_many(void *arg)
{
	for (int i = 0; i < 5000; i++)
		qmp_emit_event(arg, "DEVICE_DELETED", NULL);
	return NULL;
}

/*
 * Events raised while a command runs reach the clients while it runs, and
 * none is dropped however many come (they used to wait for the reply in a
 * queue of 4096: a failed cpu-resize lost most of its DEVICE_DELETED).
 */
static void test_events_during_command(void)
{
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw a, b;
	pthread_t th;
	int got_a = 0, got_b = 0;

	open_client(&a);
	open_client(&b);
	negotiate(&a);
	negotiate(&b);
	raw_send(&a, "{\"execute\": \"block\", \"id\": \"a\"}");
	wait_blocked();
	pthread_create(&th, NULL, emit_many, s);
	while (got_a < 5000 && (o = raw_recv(&a, T_MS))) {
		got_a += !!jstr(o, "event");
		CHECK(!jget(o, "return"));
		json_object_put(o);
	}
	while (got_b < 5000 && (o = raw_recv(&b, T_MS))) {
		got_b += !!jstr(o, "event");
		json_object_put(o);
	}
	pthread_join(th, NULL);
	CHECK_EQ(got_a, 5000);
	CHECK_EQ(got_b, 5000);
	release_block();
	o = raw_reply(&a, T_MS);
	CHECK_STREQ(jstr(o, "id"), "a");
	json_object_put(o);
	/* From a handler too: all 6000 before its reply. */
	raw_send(&a, "{\"execute\": \"flood\", \"arguments\": {\"n\": 6000}, "
		     "\"id\": \"f\"}");
	got_a = 0;
	while ((o = raw_recv(&a, T_MS)) && jstr(o, "event")) {
		got_a++;
		json_object_put(o);
	}
	CHECK_EQ(got_a, 6000);
	CHECK_STREQ(jstr(o, "id"), "f");
	json_object_put(o);
	raw_close(&a);
	raw_close(&b);
	stop(s);
}

/*
 * A client that does not read: lossy events are skipped for it and it is
 * told how many with EVENTS_LOST; the others all arrive, and it stays
 * connected.
 */
static void test_slow_reader(void)
{
	struct qmp_server *s = start(0, 256 << 10);
	struct json_object *o;
	long long lost = 0;
	int keep = 0, progress = 0, lost_events = 0;
	bool replied = false;
	struct raw a;

	open_client(&a);
	negotiate(&a);
	/* 20000 events of ~170 bytes: far more than the socket holds. */
	raw_send(&a, "{\"execute\": \"flood\", \"arguments\": {\"n\": 20000, "
		     "\"keep\": 100, \"lossy\": true}, \"id\": \"f\"}");
	usleep(300000); /* the handler is fast; give the writes time */
	while ((o = raw_recv(&a, 1000))) {
		const char *ev = jstr(o, "event");

		if (ev && !strcmp(ev, "KEEP"))
			keep++;
		else if (ev && !strcmp(ev, "PROGRESS"))
			progress++;
		else if (ev && !strcmp(ev, QMP_EVENT_LOST)) {
			lost_events++;
			lost += json_object_get_int64(
				jget(jget(o, "data"), "count"));
		} else if (jstr(o, "id"))
			replied = true;
		json_object_put(o);
	}
	CHECK(!a.eof);
	CHECK(replied);
	CHECK_EQ(keep, 200);
	CHECK(lost > 0);
	CHECK(lost_events >= 1);
	CHECK_EQ(progress + lost, 20000 - 200);
	printf("# slow reader: %d progress events delivered, %lld lost in %d "
	       "EVENTS_LOST\n",
	       progress, lost, lost_events);
	/* Still a working client. */
	o = req(&a, "{\"execute\": \"ping\", \"id\": \"p\"}");
	CHECK_STREQ(jstr(o, "id"), "p");
	json_object_put(o);
	raw_close(&a);
	stop(s);
}

/* Bytes until a reply with "id": "last" arrives, for checks on the wire. */
static size_t read_until_last(struct raw *r, char *buf, size_t cap)
{
	long long end = t_now_ms() + T_MS;
	size_t len = 0;

	while (len + 1 < cap && t_now_ms() < end) {
		struct pollfd p = { .fd = r->fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(r->fd, buf + len, cap - len - 1, 0);
		if (n <= 0)
			break;
		len += n;
		buf[len] = 0;
		if (strstr(buf, "\"id\": \"last\"") ||
		    strstr(buf, "\"id\":\"last\""))
			break;
	}
	buf[len] = 0;
	return len;
}

/* Strict UTF-8 (RFC 3629): no overlong form, surrogate, or beyond U+10FFFF. */
static bool valid_utf8(const unsigned char *p, size_t n)
{
	static const uint32_t least[] = { 0, 0x80, 0x800, 0x10000 };

	for (size_t i = 0; i < n;) {
		unsigned char b = p[i];
		size_t k = b < 0x80		   ? 0
			   : b >= 0xc2 && b < 0xe0 ? 1
			   : b >= 0xe0 && b < 0xf0 ? 2
			   : b >= 0xf0 && b < 0xf5 ? 3
						   : 9;
		uint32_t cp;

		if (k == 9 || n - i <= k)
			return false;
		cp = k ? b & (0x3fu >> k) : b;
		for (size_t j = 1; j <= k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		if (cp < least[k] || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

/*
 * Issue 32, item 9: QMP input is QEMU's grammar and nothing else.  No
 * comment, NaN or trailing comma is taken, and no reply echoes a value
 * that is not JSON (raw_open() parses replies strictly); \u0000 cuts no
 * name short; a complete request is answered before a bad one after it is
 * refused.  Every case of QEMU's grammar is in test_qmp_lex.c.
 */
static void test_qemu_grammar(void)
{
	static const char *const refused[] = {
		"{\"execute\": \"echo\", \"id\": NaN}",
		"{\"execute\": \"echo\", \"id\": -Infinity}",
		"{\"execute\": \"echo\", \"id\": 007}",
		"{\"execute\": \"echo\", \"id\": TRUE}",
		"{\"execute\": \"echo\", \"id\": Null}",
		"{\"execute\": \"echo\", \"id\": 1,}",
		"{\"execute\": \"echo\", /* c */ \"id\": 1}",
		"{\"execute\": \"echo\\u0000please-not\", \"id\": 1}",
		"{\"execute\": \"echo\", \"arguments\": {\"id\": "
		"\"ab\\u0000cd\"}}",
		"{\"execute\": \"echo\", \"arguments\": {\"a\\u0000b\": 1}}",
	};
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw r;

	open_client(&r);
	negotiate(&r);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int calls = atomic_load(&tc.calls);
		char line[256];

		snprintf(line, sizeof(line), "%s\n", refused[i]);
		o = req(&r, line);
		if (!err_desc(o) ||
		    strncmp(err_desc(o), "JSON parse error, ", 18))
			printf("# %s: got %s\n", refused[i],
			       o ? json_object_to_json_string(o)
				 : "no strict JSON");
		CHECK(err_desc(o) &&
		      !strncmp(err_desc(o), "JSON parse error, ", 18));
		CHECK_STREQ(err_class(o), "GenericError");
		CHECK(!jget(o, "id"));
		CHECK_EQ(atomic_load(&tc.calls), calls);
		json_object_put(o);
		/* The next request is read whole. */
		o = req(&r, "{\"execute\": \"echo\", \"id\": \"next\"}\n");
		CHECK_STREQ(jstr(o, "id"), "next");
		json_object_put(o);
	}
	/* QEMU's single quotes and \' are taken; an id is echoed as sent. */
	o = req(&r, "{'execute': 'echo', 'arguments': {'s': 'it\\'s'}, "
		    "'id': 1e999}\n");
	CHECK_STREQ(jstr(jget(o, "return"), "s"), "it's");
	CHECK_EQ(json_object_get_type(jget(o, "id")), json_type_double);
	json_object_put(o);
	/* An unterminated comment after a whole request: it is answered. */
	raw_send(&r, "{\"execute\": \"echo\", \"id\": 3} /*\n");
	o = raw_reply(&r, T_MS);
	CHECK_EQ(json_object_get_int(jget(o, "id")), 3);
	CHECK(jget(o, "return"));
	json_object_put(o);
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	json_object_put(o);
	o = req(&r, "{\"execute\": \"echo\", \"id\": 4}\n");
	CHECK_EQ(json_object_get_int(jget(o, "id")), 4);
	json_object_put(o);
	raw_close(&r);
	stop(s);
}

/* Issue 8, item 7: the parser's smaller wrong answers. */
static void test_parse_resync(void)
{
	struct qmp_server *s = start(0, 0);
	static char buf[65536];
	struct json_object *o;
	struct raw r;
	size_t n;

	open_client(&r);
	negotiate(&r);
	/* A truncated request, then a valid one on the next line. */
	raw_send(&r, "{\"execute\": \"echo\", \"id\": 1\n"
		     "{\"execute\": \"echo\", \"id\": 2}\n");
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	CHECK(err_desc(o) && !strncmp(err_desc(o), "JSON parse error, ", 18));
	json_object_put(o);
	o = raw_reply(&r, T_MS);
	CHECK_EQ(json_object_get_int(jget(o, "id")), 2);
	CHECK(jget(o, "return"));
	json_object_put(o);
	/* The same, with the new request split over two writes. */
	raw_send(&r, "{\"execute\": \"echo\", \"id\": 3,\n  {\"exec");
	usleep(20000);
	raw_send(&r, "ute\": \"echo\", \"id\": 4}\n");
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	json_object_put(o);
	o = raw_reply(&r, T_MS);
	CHECK_EQ(json_object_get_int(jget(o, "id")), 4);
	json_object_put(o);
	/* Bytes that are not UTF-8: an error, and every reply is UTF-8. */
	raw_send(&r,
		 "{\"execute\": \"ec\xff\xfeho\", \"id\": \"\xc3\"}\n"
		 "{\"execute\": \"no\xe2\x82such\", \"id\": 5}\n"
		 "{\"execute\": \"echo\", \"arguments\": {\"\xf0\x28\": 1}}\n"
		 "{\"execute\": \"echo\", \"arguments\": {\"s\": "
		 "\"caf\xc3\xa9\"}, \"id\": \"last\"}\n");
	n = read_until_last(&r, buf, sizeof(buf));
	CHECK(valid_utf8((unsigned char *)buf, n));
	CHECK(strstr(buf, "caf\xc3\xa9") != NULL);
	CHECK(!strstr(buf, "\xff"));
	{
		const char *p = buf;
		int errors = 0;

		while ((p = strstr(p, "JSON parse error")))
			errors++, p++;
		CHECK_EQ(errors, 3);
	}
	/* Duplicate keys are an error, at any depth; the same key in two
	 * objects is not. */
	expect_error(&r, "{\"execute\": \"echo\", \"execute\": \"echo\"}",
		     "GenericError", NULL);
	o = req(&r, "{\"execute\": \"echo\", \"arguments\": {\"a\": 1, "
		    "\"a\": 2}, \"id\": 6}");
	CHECK_STREQ(err_class(o), "GenericError");
	CHECK(err_desc(o) && strstr(err_desc(o), "duplicate key"));
	json_object_put(o);
	expect_error(&r,
		     "{\"execute\": \"echo\", \"arguments\": {\"x\": [{\"b\": "
		     "1, \"b\": {\"c\": 1}}]}}",
		     "GenericError", NULL);
	o = req(&r, "{\"execute\": \"echo\", \"arguments\": {\"a\": {\"a\": "
		    "\"x:y\", 'q': \"a\\\":\"}, \"b\": [{\"a\": 1}]}, "
		    "\"id\": 7}");
	CHECK_EQ(json_object_get_int(jget(o, "id")), 7);
	CHECK(jget(o, "return"));
	json_object_put(o);
	raw_close(&r);
	stop(s);
}

/*
 * Clients that never negotiate are closed after the timeout, so idle
 * connections cannot lock everyone out; a negotiated one may stay.
 */
static void test_negotiate_timeout(void)
{
	struct qmp_server *s = start_opts((struct qmp_server_opts){
		.max_clients = 4,
		.negotiate_timeout_ms = 300,
	});
	struct json_object *o;
	struct raw idle[3], keeper, late;

	open_client(&keeper);
	negotiate(&keeper);
	for (int i = 0; i < 3; i++)
		open_client(&idle[i]);
	wait_clients(s, 4);
	/* Full: the fifth is refused... */
	CHECK_EQ(raw_open(&late, td.path), 0);
	o = raw_recv(&late, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	json_object_put(o);
	raw_close(&late);
	/* ...until the idle ones are closed. */
	for (int i = 0; i < 3; i++) {
		o = raw_recv(&idle[i], T_MS);
		CHECK_STREQ(err_class(o), "GenericError");
		json_object_put(o);
		o = raw_recv(&idle[i], T_MS);
		CHECK(!o && idle[i].eof);
		raw_close(&idle[i]);
	}
	wait_clients(s, 1);
	open_client(&late);
	negotiate(&late);
	usleep(400000);
	o = req(&keeper, "{\"execute\": \"ping\", \"id\": \"k\"}");
	CHECK_STREQ(jstr(o, "id"), "k");
	json_object_put(o);
	o = req(&late, "{\"execute\": \"ping\", \"id\": \"l\"}");
	CHECK_STREQ(jstr(o, "id"), "l");
	json_object_put(o);
	raw_close(&keeper);
	raw_close(&late);
	stop(s);
}

/*
 * In a child with other credentials: 1 if it got the greeting, 0 if the
 * server refused it with an error, 2 if the socket file did.
 */
static int connect_as(uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct raw r;
		struct json_object *o;

		if (setgroups(ngroups, groups) || setgid(gid) || setuid(uid))
			_exit(3);
		if (raw_open(&r, td.path))
			_exit(2);
		o = raw_recv(&r, T_MS);
		_exit(jget(o, "QMP") ? 1 : err_class(o) ? 0 : 4);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Deliverable 2: SO_PEERCRED, and --api-group. */
static void test_peer_credentials(void)
{
	const gid_t grp = 4242, nobody = 65534;
	struct qmp_server *s;
	struct stat st;

	if (geteuid()) {
		printf("# not root: cannot connect as another uid; skipped\n");
		return;
	}
	s = start(0, 0);
	CHECK_EQ(chmod(td.dir, 0711), 0);
	CHECK_EQ(stat(td.path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK_EQ(connect_as(nobody, nobody, NULL, 0), 2);
	/* Past the file mode, the credential check still refuses. */
	CHECK_EQ(chmod(td.path, 0666), 0);
	CHECK_EQ(connect_as(0, 0, NULL, 0), 1);
	CHECK_EQ(connect_as(nobody, nobody, NULL, 0), 0);
	CHECK_EQ(connect_as(nobody, grp, NULL, 0), 0);
	stop(s);

	s = start_opts(
		(struct qmp_server_opts){ .api_group = true, .api_gid = grp });
	CHECK_EQ(chmod(td.dir, 0711), 0);
	CHECK_EQ(stat(td.path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0660);
	CHECK_EQ(st.st_gid, grp);
	CHECK_EQ(connect_as(nobody, grp, NULL, 0), 1);
	CHECK_EQ(connect_as(nobody, nobody, &grp, 1), 1);
	CHECK_EQ(connect_as(nobody, nobody, NULL, 0), 2);
	CHECK_EQ(chmod(td.path, 0666), 0);
	CHECK_EQ(connect_as(nobody, nobody, NULL, 0), 0);
	stop(s);
}

static void *hammer(void *arg)
{
	struct raw r;
	int ok = 0;

	(void)arg;
	open_client(&r);
	negotiate(&r);
	for (int i = 0; i < 20; i++) {
		char text[96];
		struct json_object *o;

		snprintf(text, sizeof(text),
			 "{\"execute\": \"%s\", \"id\": %d}",
			 i % 2 ? "slow" : "echo", i);
		o = req(&r, text);
		ok += json_object_get_int(jget(o, "id")) == i &&
		      jget(o, "return");
		json_object_put(o);
	}
	raw_close(&r);
	return (void *)(intptr_t)ok;
}

static void test_concurrent_clients(void)
{
	struct qmp_server *s = start(0, 0);
	pthread_t th[8];
	int ok = 0;

	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, hammer, NULL);
	for (int i = 0; i < 8; i++) {
		void *v;

		pthread_join(th[i], &v);
		ok += (int)(intptr_t)v;
	}
	CHECK_EQ(ok, 160);
	CHECK_EQ(atomic_load(&tc.calls), 160);
	CHECK_EQ(atomic_load(&tc.max_inside), 1);
	stop(s);
}

static void test_stop_no_leaks(void)
{
	int before = count_fds();
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw a, b, c;
	struct stat st;

	open_client(&a);
	open_client(&b);
	open_client(&c);
	negotiate(&a);
	raw_send(&b, "{\"execute\": \"ec"); /* left mid-request */
	wait_clients(s, 3);
	/* Queued right before the stop: still delivered. */
	qmp_emit_event(s, "SHUTDOWN", NULL);
	qmp_server_stop(s);
	CHECK(stat(td.path, &st) && errno == ENOENT);
	o = raw_recv(&a, T_MS);
	CHECK_STREQ(jstr(o, "event"), "SHUTDOWN");
	json_object_put(o);
	o = raw_recv(&a, T_MS);
	CHECK(!o && a.eof);
	o = raw_recv(&b, T_MS);
	CHECK(!o && b.eof);
	raw_close(&a);
	raw_close(&b);
	raw_close(&c);
	tdir_remove(&td);
	CHECK_EQ(count_fds(), before);
	/* Created but never started: stop still cleans up. */
	tdir_make(&td);
	{
		struct qmp_server_opts opts = { .path = td.path };

		CHECK_EQ(qmp_server_create(&opts, &s), 0);
		qmp_server_stop(s);
	}
	CHECK(stat(td.path, &st) && errno == ENOENT);
	tdir_remove(&td);
	CHECK_EQ(count_fds(), before);
}

static void test_socket_path(void)
{
	struct qmp_server_opts o = { .path = NULL };
	struct qmp_server *s = NULL, *s2 = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char longpath[200];
	struct stat st;
	FILE *f;
	int fd;

	tdir_make(&td);
	o.path = td.path;
	/* Not a socket: left alone. */
	f = fopen(td.path, "w");
	fputs("precious\n", f);
	fclose(f);
	CHECK_EQ(qmp_server_create(&o, &s), -EEXIST);
	CHECK_EQ(stat(td.path, &st), 0);
	CHECK(S_ISREG(st.st_mode) && st.st_size == 9);
	unlink(td.path);
	/* A stale socket (its server died) is replaced. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sa.sun_path, td.path);
	CHECK_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	CHECK_EQ(qmp_server_create(&o, &s), 0);
	/* A live one is not. */
	CHECK_EQ(qmp_server_create(&o, &s2), -EADDRINUSE);
	CHECK_EQ(qmp_server_register(s, cmds, 1, NULL), 0);
	CHECK_EQ(qmp_server_register(s, cmds, 1, NULL), -EEXIST);
	{
		static const struct qmp_command builtin[] = {
			{ .name = "query-commands", .handler = h_echo },
		};

		CHECK_EQ(qmp_server_register(s, builtin, 1, NULL), -EEXIST);
	}
	CHECK_EQ(qmp_server_start(s), 0);
	CHECK_EQ(qmp_server_register(s, cmds + 1, 1, NULL), -EBUSY);
	qmp_server_stop(s);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	o.path = longpath;
	CHECK_EQ(qmp_server_create(&o, &s), -ENAMETOOLONG);
	tdir_remove(&td);
}

/*
 * Reading ahead behind an operation: further operations queue (and run
 * after it); a parse error, a fast command and a request past the size
 * limit wait until every earlier reply is out, so the client sees its
 * replies in the order it sent the requests.
 */
static void test_read_ahead(void)
{
	struct qmp_server *s = start(0, 0);
	size_t n = QMP_DEFAULT_MAX_REQUEST + 4096;
	char *big = malloc(n + 1);
	static const char *const want[] = { "a", "b", NULL, "d", "e" };
	struct json_object *o;
	struct raw r;

	open_client(&r);
	negotiate(&r);
	raw_send(&r, "{\"execute\": \"block\", \"id\": \"a\"}\n"
		     "{\"execute\": \"echo\", \"id\": \"b\"}\n"
		     "{\"execute\": nope}\n"
		     "{\"execute\": \"ping\", \"id\": \"d\"}\n"
		     "{\"execute\": \"echo\", \"id\": \"e\"}\n");
	wait_blocked();
	o = raw_recv(&r, 100);
	CHECK(!o); /* the parse error waits behind a and b */
	json_object_put(o);
	release_block();
	for (int i = 0; i < 5; i++) {
		o = raw_reply(&r, T_MS);
		if (want[i])
			CHECK_STREQ(jstr(o, "id"), want[i]);
		else
			CHECK(err_desc(o) &&
			      strstr(err_desc(o), "parse error"));
		json_object_put(o);
	}

	/* Past the size limit: its error and the hang-up after a's reply. */
	pthread_mutex_lock(&tc.lock);
	tc.release = false;
	pthread_mutex_unlock(&tc.lock);
	raw_send(&r, "{\"execute\": \"block\", \"id\": \"a\"}\n");
	wait_blocked();
	memset(big, 'x', n);
	memcpy(big, "{\"execute\": \"echo\", \"arguments\": {\"s\": \"", 40);
	big[n] = '\0';
	/* All of it goes: the server reads up to the limit, the rest fits. */
	CHECK_EQ(raw_send(&r, big), 0);
	o = raw_recv(&r, 100);
	CHECK(!o && !r.eof);
	json_object_put(o);
	release_block();
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(jstr(o, "id"), "a");
	json_object_put(o);
	o = raw_recv(&r, T_MS);
	CHECK(err_desc(o) && strstr(err_desc(o), "longer than"));
	json_object_put(o);
	o = raw_recv(&r, T_MS);
	CHECK(!o && r.eof);
	raw_close(&r);
	free(big);
	stop(s);
}

/*
 * Issue 21, item 7: a request cut short at a line end, then a good one.
 * Cut inside a string, the line end used to be taken into the string, so
 * the good request went down with the cut one; a raw control character in
 * a string is now the error (as in RFC 8259 and QEMU's lexer) and parsing
 * resumes after the line end.  The 8 ways, each with LF and with CRLF.
 */
static void test_lex_cut_short(void)
{
	/* Cut: after the brace, in a key, after it, in a value, after a
	 * backslash, in a \u escape, in the id, in a single-quoted string. */
	static const char *const cuts[] = {
		"{",
		"{\"exec",
		"{\"execute\"",
		"{\"execute\": \"ec",
		"{\"execute\": \"echo\", \"arguments\": {\"s\": \"a\\",
		"{\"execute\": \"echo\", \"arguments\": {\"s\": \"\\u00",
		"{\"execute\": \"echo\", \"id\": \"x",
		"{'execute': 'ec",
	};
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	int answered = 0;
	struct raw r;

	open_client(&r);
	negotiate(&r);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		for (int crlf = 0; crlf < 2; crlf++) {
			const char *eol = crlf ? "\r\n" : "\n";
			char text[256], id[32];

			snprintf(id, sizeof(id), "next-%zu-%d", i + 1, crlf);
			snprintf(
				text, sizeof(text),
				"%s%s{\"execute\": \"echo\", \"id\": \"%s\"}%s",
				cuts[i], eol, id, eol);
			raw_send(&r, text);
			o = raw_reply(&r, T_MS);
			CHECK(err_desc(o) &&
			      !strncmp(err_desc(o), "JSON parse error, ", 18));
			json_object_put(o);
			o = raw_reply(&r, T_MS);
			if (jstr(o, "id") && !strcmp(jstr(o, "id"), id) &&
			    jget(o, "return"))
				answered++;
			else
				printf("# cut %zu (%s): the next request was "
				       "swallowed\n",
				       i + 1, crlf ? "CRLF" : "LF");
			json_object_put(o);
		}
	}
	CHECK_EQ(answered, 16);
	/* A raw tab is refused, with words; escaped it is fine, DEL too. */
	o = req(&r, "{\"execute\": \"echo\", \"arguments\": {\"s\": \"a\tb\"}, "
		    "\"id\": 1}\n");
	CHECK_STREQ(err_class(o), "GenericError");
	CHECK(err_desc(o) && strstr(err_desc(o), "control character U+0009"));
	json_object_put(o);
	o = req(&r, "{\"execute\": \"echo\", \"arguments\": {\"s\": "
		    "\"a\\tb\x7f\"}, \"id\": 2}\n");
	CHECK_STREQ(jstr(jget(o, "return"), "s"), "a\tb\x7f");
	json_object_put(o);
	raw_close(&r);
	stop(s);
}

/*
 * Issue 21, item 7: the 11 classes of invalid UTF-8 (7 were echoed raw:
 * overlong forms, surrogates, above U+10FFFF, F5) and \u escapes that are
 * half a surrogate pair, each in a request's id: a parse error that names
 * it, the next request answered, and not one byte on the wire that is not
 * strict UTF-8.
 */
static void test_lex_utf8(void)
{
	static const char *const bad[] = {
		"\xc0\xaf",
		"\xe0\x80\xaf",
		"\xf0\x80\x80\xaf",
		"\xed\xa0\x80",
		"\xed\xbf\xbf",
		"\xf4\x90\x80\x80",
		"\xf5\x80\x80\x80",
		"\x80",
		"\xc3",
		"\xf8\x88\x80\x80\x80",
		"\xff",
		"\\ud800",
		"\\udc00",
		"\\ud800\\u0041",
	};
	size_t nbad = sizeof(bad) / sizeof(bad[0]);
	struct qmp_server *s = start(0, 0);
	static char buf[65536], text[8192];
	size_t n, at = 0, line = 0;
	struct json_object *o;
	char *p;
	struct raw r;

	open_client(&r);
	negotiate(&r);
	/*
	 * A character split across two reads is still a character (json-c's
	 * own check failed it): once "p" is answered, the server has read
	 * the first half, which came in the same write.
	 */
	raw_send(&r, "{\"execute\": \"ping\", \"id\": \"p\"}"
		     "{\"execute\": \"echo\", \"id\": \"caf\xc3");
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(jstr(o, "id"), "p");
	json_object_put(o);
	o = req(&r, "\xa9\"}");
	CHECK_STREQ(jstr(o, "id"), "caf\xc3\xa9");
	json_object_put(o);
	for (size_t i = 0; i < nbad; i++)
		at += snprintf(text + at, sizeof(text) - at,
			       "{\"execute\": \"echo\", \"id\": \"a%sb\"}\n"
			       "{\"execute\": \"echo\", \"id\": \"ok-%zu\"}\n",
			       bad[i], i);
	snprintf(text + at, sizeof(text) - at,
		 "{\"execute\": \"echo\", \"id\": \"\\ud83d\\ude00\"}\n"
		 "{\"execute\": \"echo\", \"id\": \"last\"}\n");
	raw_send(&r, text);
	n = read_until_last(&r, buf, sizeof(buf));
	CHECK(valid_utf8((unsigned char *)buf, n));
	/* Line by line: an error and the next reply, for each. */
	for (p = buf; p < buf + n; line++) {
		char *nl = strstr(p, "\r\n");
		char want[32];

		if (!nl)
			break;
		*nl = 0;
		o = json_tokener_parse(p);
		p = nl + 2;
		if (line < 2 * nbad && line % 2 == 0) {
			const char *d = err_desc(o);
			bool named = d &&
				     !strncmp(d, "JSON parse error, ", 18) &&
				     (strstr(d, "invalid UTF-8") ||
				      strstr(d, "surrogate pair"));

			CHECK(named);
			if (!named)
				printf("# bad %zu: got %s\n", line / 2,
				       json_object_to_json_string(o));
		} else if (line < 2 * nbad) {
			snprintf(want, sizeof(want), "ok-%zu", line / 2);
			CHECK_STREQ(jstr(o, "id"), want);
		} else if (line == 2 * nbad) {
			/* A proper pair is a character: back as UTF-8. */
			CHECK_STREQ(jstr(o, "id"), "\xf0\x9f\x98\x80");
		} else {
			CHECK_STREQ(jstr(o, "id"), "last");
		}
		json_object_put(o);
	}
	CHECK_EQ(line, 2 * nbad + 2);
	raw_close(&r);
	stop(s);
}

static void wait_refused(struct qmp_server *s, unsigned long long n)
{
	long long end = t_now_ms() + T_MS;

	while (qmp_server_refused(s) < n && t_now_ms() < end)
		usleep(1000);
	CHECK_EQ(qmp_server_refused(s), n);
}

static void wait_queued(struct qmp_server *s, unsigned int n)
{
	long long end = t_now_ms() + T_MS;

	while (qmp_server_queued(s) < n && t_now_ms() < end)
		usleep(1000);
	CHECK_EQ(qmp_server_queued(s), n);
}

/* An echo with a 10000-byte string: about 10 KiB parsed. */
static void send_big(struct raw *r, const char *id)
{
	static char line[10240];
	int n = snprintf(line, sizeof(line),
			 "{\"execute\": \"echo\", \"arguments\": {\"s\": \"");

	memset(line + n, 'q', 10000);
	snprintf(line + n + 10000, sizeof(line) - n - 10000,
		 "\"}, \"id\": \"%s\"}\n", id);
	raw_send(r, line);
}

/*
 * Replies to ids prefix1..prefixN in order: the first `first` run, then
 * one refused; after it each either ran or was refused.  Returns how many
 * ran before the first refusal (-1 if none was refused).
 */
static int check_in_order(struct raw *r, const char *prefix, int n,
			  const char *limit)
{
	int ran = -1;

	for (int i = 1; i <= n; i++) {
		struct json_object *o = raw_reply(r, T_MS);
		char id[32];

		snprintf(id, sizeof(id), "%s%d", prefix, i);
		CHECK_STREQ(jstr(o, "id"), id);
		if (err_class(o)) {
			CHECK_STREQ(err_class(o), "GenericError");
			CHECK(err_desc(o) &&
			      strstr(err_desc(o), "read-ahead limit"));
			if (ran < 0) {
				ran = i - 1;
				CHECK(err_desc(o) &&
				      strstr(err_desc(o), limit));
				printf("# %s: %s\n", id, err_desc(o));
			}
		} else {
			CHECK(jget(o, "return"));
		}
		json_object_put(o);
	}
	return ran;
}

/*
 * Issue 21, item 5: what a client sends behind a running operation is read
 * ahead, parsed, in memory; it is bounded in bytes, per client and in all.
 * A request past a limit is refused, with its id, in its place among the
 * replies; the client stays connected; a client with nothing queued is
 * still served; a full burst of small operations fits the defaults.
 */
static void test_read_ahead_budget(void)
{
	struct qmp_server *s = start_opts((struct qmp_server_opts){
		.max_queued = 34 << 10,
		.max_queued_total = 44 << 10,
	});
	struct json_object *o;
	struct raw a, b, c;
	unsigned int queued;
	int ran;

	open_client(&a);
	open_client(&b);
	open_client(&c);
	negotiate(&a);
	negotiate(&b);
	negotiate(&c);
	raw_send(&a, "{\"execute\": \"block\", \"id\": \"a\"}\n");
	wait_blocked();
	/* One client: a few fit in 34 KiB, the next is refused. */
	for (int i = 1; i <= 10; i++) {
		char id[16];

		snprintf(id, sizeof(id), "a%d", i);
		send_big(&a, id);
	}
	wait_refused(s, 1);
	queued = qmp_server_queued(s);
	CHECK(queued >= 1 && queued < 10);
	CHECK(qmp_server_queued_bytes(s) <= 34 << 10);
	/* All clients: b's first is served, its next passes the total. */
	send_big(&b, "b1");
	send_big(&b, "b2");
	send_big(&b, "b3");
	wait_refused(s, 2);
	wait_queued(s, queued + 1);
	CHECK(qmp_server_queued_bytes(s) <= 44 << 10);
	/* Nothing queued: served, whatever the others hold. */
	send_big(&c, "c1");
	wait_queued(s, queued + 2);
	CHECK_EQ(qmp_server_refused(s), 2);
	release_block();
	o = raw_reply(&a, T_MS);
	CHECK_STREQ(jstr(o, "id"), "a");
	json_object_put(o);
	ran = check_in_order(&a, "a", 10, "per client");
	CHECK_EQ(ran, (int)queued);
	ran = check_in_order(&b, "b", 3, "all clients");
	CHECK_EQ(ran, 1);
	ran = check_in_order(&c, "c", 1, "");
	CHECK_EQ(ran, -1);
	/* Still connected, and nothing left counted. */
	o = req(&a, "{\"execute\": \"ping\", \"id\": \"end\"}");
	CHECK_STREQ(jstr(o, "id"), "end");
	json_object_put(o);
	CHECK_EQ(qmp_server_queued_bytes(s), 0);
	/* One request past the limit per client by itself: refused too. */
	{
		static char line[40 << 10];
		int n = snprintf(line, sizeof(line),
				 "{\"execute\": \"echo\", \"arguments\": "
				 "{\"s\": \"");

		memset(line + n, 'q', 36 << 10);
		strcpy(line + n + (36 << 10), "\"}, \"id\": \"huge\"}\n");
		o = req(&b, line);
		CHECK(err_desc(o) && strstr(err_desc(o), "too big") &&
		      strstr(err_desc(o), "smaller requests"));
		json_object_put(o);
	}
	/*
	 * Small text, but parsed it would pass the limit (60 objects, 800
	 * bytes each): refused while it is parsed; the next line is read.
	 */
	{
		char line[1024];
		int n = snprintf(line, sizeof(line),
				 "{\"execute\": \"echo\", \"arguments\": "
				 "{\"a\": [");

		for (int i = 0; i < 60; i++)
			n += snprintf(line + n, sizeof(line) - n, "{},");
		snprintf(line + n - 1, sizeof(line) - n + 1,
			 "]}, \"id\": \"heavy\"}\n"
			 "{\"execute\": \"ping\", \"id\": \"after\"}\n");
		raw_send(&b, line);
		o = raw_reply(&b, T_MS);
		CHECK(err_desc(o) && strstr(err_desc(o), "too big"));
		json_object_put(o);
		o = raw_reply(&b, T_MS);
		CHECK_STREQ(jstr(o, "id"), "after");
		json_object_put(o);
	}
	raw_close(&a);
	raw_close(&b);
	raw_close(&c);
	stop(s);

	/* Defaults: a full batch of small operations is never refused. */
	s = start(0, 0);
	open_client(&a);
	negotiate(&a);
	raw_send(&a, "{\"execute\": \"block\", \"id\": \"a\"}\n");
	wait_blocked();
	for (int i = 1; i < QMP_BATCH_MAX; i++) {
		char line[256];

		snprintf(line, sizeof(line),
			 "{\"execute\": \"echo\", \"arguments\": {\"driver\": "
			 "\"host-x86_64-cpu\", \"socket-id\": %d, \"core-id\": "
			 "0, \"thread-id\": 0, \"id\": \"cpu%d\"}, \"id\": "
			 "\"d%d\"}\n",
			 i, i, i);
		raw_send(&a, line);
	}
	wait_queued(s, QMP_BATCH_MAX - 1);
	CHECK_EQ(qmp_server_refused(s), 0);
	printf("# %d device_add-sized requests queued: about %zu bytes\n",
	       QMP_BATCH_MAX - 1, qmp_server_queued_bytes(s));
	release_block();
	o = raw_reply(&a, T_MS);
	CHECK_STREQ(jstr(o, "id"), "a");
	json_object_put(o);
	CHECK_EQ(check_in_order(&a, "d", QMP_BATCH_MAX - 1, ""), -1);
	raw_close(&a);
	stop(s);
}

CHECK_MAIN(TEST(test_greeting), TEST(test_negotiation), TEST(test_id_echo),
	   TEST(test_error_classes), TEST(test_malformed),
	   TEST(test_long_request), TEST(test_many_clients),
	   TEST(test_disconnect_mid_request), TEST(test_never_reads),
	   TEST(test_events), TEST(test_control_plane),
	   TEST(test_events_during_command), TEST(test_slow_reader),
	   TEST(test_parse_resync), TEST(test_qemu_grammar),
	   TEST(test_negotiate_timeout), TEST(test_peer_credentials),
	   TEST(test_concurrent_clients), TEST(test_stop_no_leaks),
	   TEST(test_socket_path), TEST(test_bad_declarations),
	   TEST(test_read_ahead), TEST(test_lex_cut_short), TEST(test_lex_utf8),
	   TEST(test_read_ahead_budget))
