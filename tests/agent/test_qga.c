// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent protocol (vmm/agent/qga.c) against a fake agent on a guest
 * thread that drives the real UART model through the I/O bus.  The fake
 * misbehaves in the ways a guest can: it never reads, reads but never
 * answers, writes garbage, answers with bad JSON, with a reply over the
 * cap, too late (so that its reply reaches the next call), with an old
 * sync id, restarts in the middle of a request, or closes the port (as
 * virtio-console says) with a call in flight.  Every call must end
 * within its deadline with the error that says what happened, and the
 * next call must work again.
 */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "fake_agent.h"

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A call that must work; returns its "return" member (caller puts it). */
static struct json_object *call_ok(const char *cmd, struct json_object *args)
{
	struct hv_err err = { 0 };
	struct json_object *r = NULL;
	int ret = qga_call(&fk.u.agent, cmd, args, &r, 10000, &err);

	if (ret)
		printf("# %s: %s\n", cmd, hv_err_msg(&err));
	CHECK_EQ(ret, 0);
	return r;
}

static int call_err(const char *cmd, int timeout_ms, struct hv_err *err)
{
	struct json_object *r = (struct json_object *)1;
	int ret = qga_call(&fk.u.agent, cmd, NULL, &r, timeout_ms, err);

	CHECK(r == NULL);
	return ret;
}

/* The fake answers again: the failure left nothing behind. */
static void check_recovers(void)
{
	struct json_object *r;

	atomic_store(&fk.mode, FAKE_OK);
	r = call_ok("guest-info", NULL);
	CHECK_STREQ(
		json_object_get_string(json_object_object_get(r, "version")),
		"fake-1");
	json_object_put(r);
}

static void test_ok(void)
{
	struct hv_err err = { 0 };
	struct qga_stats st;
	struct json_object *r;

	fake_start(FAKE_OK);
	r = call_ok("guest-ping", NULL);
	CHECK(json_object_is_type(r, json_type_object));
	CHECK_EQ(json_object_object_length(r), 0);
	json_object_put(r);
	check_recovers();
	/* The agent's own error: its class and words, not a protocol one. */
	CHECK_EQ(call_err("guest-nonesuch", 2000, &err), -EREMOTEIO);
	CHECK(strstr(err.msg, "CommandNotFound"));
	CHECK(strstr(err.msg, "guest-nonesuch"));
	/* A NULL @ret is allowed. */
	CHECK_EQ(qga_call(&fk.u.agent, "guest-ping", NULL, NULL, 2000, NULL),
		 0);
	qga_get_stats(&fk.u.agent, &st);
	CHECK_EQ(st.calls, 4);
	CHECK_EQ(st.failed, 1);
	CHECK_EQ(st.timeouts, 0);
	CHECK_EQ(st.bad_replies, 0);
	CHECK_EQ(st.skipped, 0);
	fake_stop();
}

/* A request bigger than the UART's ring goes out as the guest reads. */
static void test_big_request(void)
{
	size_t n = 5 * SERIAL_RX_SIZE + 17;
	char *data = malloc(n + 1);
	struct json_object *args = json_object_new_object(), *r;

	memset(data, 'x', n);
	data[n] = '\0';
	json_object_object_add(args, "data", json_object_new_string(data));
	fake_start(FAKE_OK);
	r = call_ok("guest-echo-len", args);
	CHECK_EQ(json_object_get_int(json_object_object_get(r, "len")),
		 (long long)n);
	json_object_put(r);
	fake_stop();
	json_object_put(args);
	free(data);
}

/* A deadline of @ms is kept, neither cut short nor overrun. */
static void check_timeout(const char *why, int ms)
{
	struct hv_err err = { 0 };
	long t0 = now_ms(), dt;

	CHECK_EQ(call_err("guest-info", ms, &err), -ETIMEDOUT);
	dt = now_ms() - t0;
	printf("# %s: -ETIMEDOUT after %ld ms (deadline %d)\n", why, dt, ms);
	CHECK(dt >= ms);
	CHECK(dt < ms + 500);
	CHECK(strstr(err.msg, "did not"));
}

static void test_deaf(void)
{
	struct qga_stats st;

	fake_start(FAKE_DEAF);
	check_timeout("never reads", 200);
	check_timeout("still never reads", 200);
	/* A request that does not fit the ring waits for the reader. */
	{
		char *data = malloc(3 * SERIAL_RX_SIZE);
		struct json_object *a = json_object_new_object();
		struct hv_err err = { 0 };

		memset(data, 'y', 3 * SERIAL_RX_SIZE - 1);
		data[3 * SERIAL_RX_SIZE - 1] = '\0';
		json_object_object_add(a, "data", json_object_new_string(data));
		CHECK_EQ(qga_call(&fk.u.agent, "guest-echo-len", a, NULL, 200,
				  &err),
			 -ETIMEDOUT);
		json_object_put(a);
		free(data);
	}
	CHECK_EQ(qga_send(&fk.u.agent, "guest-shutdown", NULL, 200, NULL),
		 -ETIMEDOUT);
	qga_get_stats(&fk.u.agent, &st);
	CHECK_EQ(st.timeouts, 4);
	CHECK_EQ(st.failed, 4);
	/* The guest starts reading: the host's stale bytes are flushed. */
	uart_guest_rx_irq(&fk.u, true);
	check_recovers();
	fake_stop();
}

static void test_mute(void)
{
	fake_start(FAKE_MUTE);
	check_timeout("reads, never answers", 200);
	check_recovers();
	fake_stop();
}

static void test_garbage(void)
{
	struct qga_stats st;

	fake_start(FAKE_GARBAGE);
	for (int i = 0; i < 3; i++) {
		struct json_object *r = call_ok("guest-info", NULL);

		CHECK(r != NULL);
		json_object_put(r);
	}
	qga_get_stats(&fk.u.agent, &st);
	CHECK_EQ(st.failed, 0);
	CHECK(st.stray_bytes > 0);
	printf("# stray bytes %lu, skipped replies %lu\n", st.stray_bytes,
	       st.skipped);
	atomic_store(&fk.mode, FAKE_STRAY_DELIM);
	json_object_put(call_ok("guest-ping", NULL));
	fake_stop();
}

static void test_bad_json(void)
{
	size_t n = fake_nr_bad;
	struct qga_stats st;

	fake_start(FAKE_BAD_JSON);
	for (size_t i = 0; i < n; i++) {
		struct hv_err err = { 0 };

		CHECK_EQ(call_err("guest-info", 2000, &err), -EPROTO);
		CHECK(strstr(err.msg, "reply is bad"));
	}
	qga_get_stats(&fk.u.agent, &st);
	CHECK_EQ(st.bad_replies, n);
	check_recovers();
	fake_stop();
}

static void test_huge(void)
{
	struct hv_err err = { 0 };

	fake_start(FAKE_HUGE);
	CHECK_EQ(call_err("guest-info", 5000, &err), -EMSGSIZE);
	CHECK(strstr(err.msg, "longer than"));
	/* The rest of the long line arrives during the next handshake. */
	check_recovers();
	fake_stop();
}

/* 90 KB of "{}," would be about 24 MB in json-c: refused unparsed. */
static void test_heavy(void)
{
	struct hv_err err = { 0 };

	fake_start(FAKE_HEAVY);
	CHECK_EQ(call_err("guest-info", 5000, &err), -EPROTO);
	printf("# %s\n", err.msg);
	check_recovers();
	fake_stop();
}

/* A late reply reaches the next call, which must not take it for its own. */
static void test_slow_then_stale(void)
{
	struct qga_stats st;
	struct json_object *r;

	fake_start(FAKE_SLOW);
	check_timeout("answers too late", 200);
	atomic_store(&fk.mode, FAKE_OK);
	r = call_ok("guest-ping", NULL);
	CHECK_EQ(json_object_object_length(r), 0); /* not guest-info's */
	json_object_put(r);
	qga_get_stats(&fk.u.agent, &st);
	CHECK_EQ(st.skipped, 1);
	fake_stop();
}

/*
 * Only a call after a failure (or the first) has the handshake: a call
 * after one that got its reply goes at once (the stream is in step).
 */
static void test_old_sync_id(void)
{
	struct qga_stats st;
	unsigned long skipped;

	fake_start(FAKE_OLD_ONLY);
	check_timeout("only old sync ids", 200);
	qga_get_stats(&fk.u.agent, &st);
	skipped = st.skipped;
	atomic_store(&fk.mode, FAKE_OLD_ID);
	json_object_put(call_ok("guest-ping", NULL));
	qga_get_stats(&fk.u.agent, &st);
	CHECK_EQ(st.skipped, skipped + 1);
	/* In step now: no handshake, so no old id to skip. */
	json_object_put(call_ok("guest-ping", NULL));
	qga_get_stats(&fk.u.agent, &st);
	CHECK_EQ(st.skipped, skipped + 1);
	check_recovers();
	fake_stop();
}

/*
 * The agent dies after reading part of the request; its successor sees
 * the rest as a line of its own and complains, and the call fails with
 * that.  The call after it works.
 */
static void test_restart_mid_call(void)
{
	struct hv_err err = { 0 };

	fake_start(FAKE_RESTART);
	CHECK_EQ(call_err("guest-info", 2000, &err), -EREMOTEIO);
	CHECK(strstr(err.msg, "JSON parse error"));
	CHECK_EQ(atomic_load(&fk.mode), FAKE_OK);
	check_recovers();
	fake_stop();
}

/* Whatever bytes come back, each call ends in time, with an error. */
static void test_random(void)
{
	struct qga_stats st;
	int ok = 0;

	fake_start(FAKE_RANDOM);
	for (int i = 0; i < 40; i++) {
		struct hv_err err = { 0 };
		int ret = call_err("guest-info", 50, &err);

		CHECK(ret == -ETIMEDOUT || ret == -EPROTO ||
		      ret == -EREMOTEIO || ret == -EMSGSIZE || ret == 0);
		ok += !ret;
	}
	qga_get_stats(&fk.u.agent, &st);
	printf("# 40 random conversations: %d succeeded, %lu stray bytes\n", ok,
	       st.stray_bytes);
	check_recovers();
	fake_stop();
}

/* guest-shutdown never answers: qga_send() waits only until it is read. */
static void test_send(void)
{
	fake_start(FAKE_OK);
	CHECK_EQ(qga_send(&fk.u.agent, "guest-shutdown", NULL, 2000, NULL), 0);
	/* The next call's handshake shows the fake has handled it. */
	check_recovers();
	CHECK_EQ(atomic_load(&fk.shutdowns), 1);
	fake_stop();
}

/*
 * The channel says the guest closed its end (virtio-console's PORT_OPEN 0,
 * what the port would call) once the call is in flight.
 */
static void *closer(void *arg)
{
	struct qga *g = &fk.u.agent;
	bool listening = false;

	(void)arg;
	for (int i = 0; i < 2000 && !listening; i++) {
		pthread_mutex_lock(&g->lock);
		listening = g->listening;
		pthread_mutex_unlock(&g->lock);
		if (!listening)
			poll(NULL, 0, 1);
	}
	CHECK(listening);
	fk.u.port.host.closed(fk.u.port.host.ctx);
	return NULL;
}

/*
 * qemu-ga stopped with a call in flight: the call fails at once with
 * -EPIPE, not at its deadline; a close between calls fails none, and the
 * next call works.
 */
static void test_port_closed(void)
{
	struct hv_err err = { 0 };
	struct qga_stats st;
	pthread_t t;
	long t0, dt;

	fake_start(FAKE_MUTE);
	pthread_create(&t, NULL, closer, NULL);
	t0 = now_ms();
	CHECK_EQ(call_err("guest-info", 10000, &err), -EPIPE);
	dt = now_ms() - t0;
	pthread_join(t, NULL);
	printf("# closed in flight: -EPIPE after %ld ms (deadline 10000)\n",
	       dt);
	CHECK(dt < 5000);
	CHECK(strstr(err.msg, "closed the agent's port"));
	qga_get_stats(&fk.u.agent, &st);
	CHECK_EQ(st.closed, 1);
	CHECK_EQ(st.timeouts, 0);
	/* Between calls: nothing in flight, nothing fails. */
	fk.u.port.host.closed(fk.u.port.host.ctx);
	check_recovers();
	qga_get_stats(&fk.u.agent, &st);
	CHECK_EQ(st.closed, 1);
	fake_stop();
}

static void *caller(void *arg)
{
	for (int i = 0; i < 20; i++)
		json_object_put(call_ok(arg, NULL));
	return NULL;
}

/* Two threads calling at once: one request at a time, each its reply. */
static void test_concurrent(void)
{
	pthread_t t;

	fake_start(FAKE_OK);
	pthread_create(&t, NULL, caller, "guest-ping");
	for (int i = 0; i < 20; i++) {
		struct json_object *r = call_ok("guest-info", NULL);

		CHECK_STREQ(json_object_get_string(
				    json_object_object_get(r, "version")),
			    "fake-1");
		json_object_put(r);
	}
	pthread_join(t, NULL);
	fake_stop();
}

CHECK_MAIN(TEST(test_ok), TEST(test_big_request), TEST(test_deaf),
	   TEST(test_mute), TEST(test_garbage), TEST(test_bad_json),
	   TEST(test_huge), TEST(test_heavy), TEST(test_slow_then_stale),
	   TEST(test_old_sync_id), TEST(test_restart_mid_call),
	   TEST(test_random), TEST(test_send), TEST(test_concurrent),
	   TEST(test_port_closed))
