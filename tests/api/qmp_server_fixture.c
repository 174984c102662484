// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP server the test_qmp*.c cases run: a server on a temporary socket
 * with the test's own commands (echo, typed arguments, failures, a blocking
 * and a slow command, events, a flood), and a raw client's first steps.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"
#include "qmp_server_fixture.h"

struct tctx tc = {
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

int h_echo(void *ctx, struct json_object *args, struct json_object **ret,
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
int h_look(void *ctx, struct json_object *args, struct json_object **ret,
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

const struct qmp_command cmds[] = {
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

struct tdir td;

struct qmp_server *start_opts(struct qmp_server_opts o)
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

struct qmp_server *start(unsigned int max_clients, size_t max_output)
{
	return start_opts((struct qmp_server_opts){
		.max_clients = max_clients,
		.max_output = max_output,
	});
}

void stop(struct qmp_server *s)
{
	qmp_server_stop(s);
	tc.s = NULL;
	tdir_remove(&td);
}

/* Connects and reads the greeting. */
void open_client(struct raw *r)
{
	struct json_object *g;

	CHECK_EQ(raw_open(r, td.path), 0);
	g = raw_recv(r, T_MS);
	CHECK(jget(g, "QMP"));
	json_object_put(g);
}

void negotiate(struct raw *r)
{
	struct json_object *o;

	raw_send(r, "{\"execute\": \"qmp_capabilities\"}\n");
	o = raw_reply(r, T_MS);
	CHECK(json_object_is_type(jget(o, "return"), json_type_object));
	json_object_put(o);
}

/* Sends one request, returns the reply (events skipped). */
struct json_object *req(struct raw *r, const char *text)
{
	CHECK_EQ(raw_send(r, text), 0);
	return raw_reply(r, T_MS);
}

void expect_error(struct raw *r, const char *text, const char *class,
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

void wait_clients(struct qmp_server *s, unsigned int n)
{
	long long end = t_now_ms() + T_MS;

	while (qmp_server_clients(s) != n && t_now_ms() < end)
		usleep(1000);
	CHECK_EQ(qmp_server_clients(s), n);
}

void wait_blocked(void)
{
	pthread_mutex_lock(&tc.lock);
	while (!tc.blocked)
		pthread_cond_wait(&tc.cond, &tc.lock);
	pthread_mutex_unlock(&tc.lock);
}

void release_block(void)
{
	pthread_mutex_lock(&tc.lock);
	tc.release = true;
	pthread_cond_broadcast(&tc.cond);
	pthread_mutex_unlock(&tc.lock);
}
