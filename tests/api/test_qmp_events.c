// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP server's events and its control plane: events to every
 * negotiated client, queries and fast commands beside a blocked operation,
 * events emitted while a command runs, the work after an operation.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/time.h>
#include <time.h>

#include "check.h"
#include "clock.h"
#include "qmp_server_fixture.h"

static void *emitter(void *arg)
{
	for (int i = 0; i < 50; i++) {
		struct json_object *d = json_object_new_object();

		json_object_object_add(d, "n", json_object_new_int(i));
		qmp_emit_event(arg, "THREADED", d);
	}
	return NULL;
}

void test_events(void)
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

/*
 * While an operation blocks (a guest that ignores hotplug, a slow hook):
 * a second operation waits its turn, but queries, fast commands and
 * events go through, and the blocked client's own requests stay in order.
 */
void test_control_plane(void)
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
void test_events_during_command(void)
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
 * qmp_server_after_ops(): the work after an operation runs on the
 * operation thread once that command's reply is out (the client reads it
 * while the work waits for that), once per operation.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool replied;
	int ran, early;
} aft = { .lock = PTHREAD_MUTEX_INITIALIZER }; /* cond: test_after_ops() */

static void after_op(void *ctx)
{
	struct timespec dl = hv_deadline(T_MS);

	CHECK(ctx == &aft);
	pthread_mutex_lock(&aft.lock);
	while (!aft.replied &&
	       pthread_cond_timedwait(&aft.cond, &aft.lock, &dl) != ETIMEDOUT)
		;
	aft.early += !aft.replied; /* the reply did not get out first */
	aft.ran++;
	aft.replied = false;
	pthread_cond_broadcast(&aft.cond);
	pthread_mutex_unlock(&aft.lock);
}

/* Says the reply came; waits until the work after it has run @n times. */
static int replied_then_ran(int n)
{
	struct timespec dl = hv_deadline(T_MS);
	int ran;

	pthread_mutex_lock(&aft.lock);
	aft.replied = true;
	pthread_cond_broadcast(&aft.cond);
	while (aft.ran < n &&
	       pthread_cond_timedwait(&aft.cond, &aft.lock, &dl) != ETIMEDOUT)
		;
	ran = aft.ran;
	pthread_mutex_unlock(&aft.lock);
	return ran;
}

void test_after_ops(void)
{
	struct qmp_server_opts o = { .path = NULL };
	struct qmp_server *s = NULL;
	struct json_object *r;
	pthread_condattr_t ca;
	struct raw c;

	/* Deadlines from hv_deadline() are CLOCK_MONOTONIC's. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&aft.cond, &ca);
	pthread_condattr_destroy(&ca);
	tdir_make(&td);
	o.path = td.path;
	CHECK_EQ(qmp_server_create(&o, &s), 0);
	if (!s)
		return;
	CHECK_EQ(qmp_server_register(s, cmds, sizeof(cmds) / sizeof(cmds[0]),
				     &tc),
		 0);
	qmp_server_after_ops(s, after_op, &aft);
	CHECK_EQ(qmp_server_start(s), 0);
	tc.s = s;
	open_client(&c);
	negotiate(&c); /* qmp_capabilities: the I/O thread's, no work after */
	r = req(&c, "{\"execute\": \"echo\", \"arguments\": {\"a\": 1}}");
	CHECK(jget(r, "return"));
	json_object_put(r);
	CHECK_EQ(replied_then_ran(1), 1);
	r = req(&c, "{\"execute\": \"echo\"}");
	json_object_put(r);
	CHECK_EQ(replied_then_ran(2), 2);
	pthread_mutex_lock(&aft.lock);
	CHECK_EQ(aft.early, 0);
	pthread_mutex_unlock(&aft.lock);
	raw_close(&c);
	stop(s);
}
