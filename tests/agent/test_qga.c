// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent protocol (vmm/agent/qga.c) against a fake agent on a guest
 * thread that drives the real UART model through the I/O bus.  The fake
 * misbehaves in the ways a guest can: it never reads, reads but never
 * answers, writes garbage, answers with bad JSON, with a reply over the
 * cap, too late (so that its reply reaches the next call), with an old
 * sync id, or restarts in the middle of a request.  Every call must end
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
#include "uart_guest.h"

enum fake_mode {
	FAKE_OK,
	FAKE_DEAF,	  /* never reads the port */
	FAKE_MUTE,	  /* reads, never answers */
	FAKE_GARBAGE,	  /* garbage before each sync reply */
	FAKE_BAD_JSON,	  /* a malformed reply to each request */
	FAKE_HUGE,	  /* a reply over QGA_REPLY_MAX */
	FAKE_SLOW,	  /* answers a request only at the next sync */
	FAKE_OLD_ID,	  /* an old sync reply before the right one */
	FAKE_OLD_ONLY,	  /* only ever an old sync reply */
	FAKE_RESTART,	  /* dies half-way through a request line */
	FAKE_RANDOM,	  /* random bytes for every line */
	FAKE_STRAY_DELIM, /* a 0xff in the garbage before the sync reply */
	FAKE_HEAVY,	  /* a short reply that would parse into a lot */
};

#define LINE_MAX_FAKE (64 * 1024)

static struct fake {
	struct uart_guest u;
	pthread_t thread;
	_Atomic bool stop;
	_Atomic int mode;
	_Atomic int shutdowns; /* guest-shutdown requests seen */
	char line[LINE_MAX_FAKE];
	size_t len;
	bool synced; /* a sync line has been handled since the last 0xff */
	char *late;  /* FAKE_SLOW: the reply it still owes */
	int bad;     /* FAKE_BAD_JSON: which bad reply comes next */
	uint64_t rnd;
} fk;

static void say(const char *s)
{
	uart_guest_write(&fk.u, s, strlen(s));
}

static uint64_t rnd(void)
{
	fk.rnd ^= fk.rnd << 13;
	fk.rnd ^= fk.rnd >> 7;
	fk.rnd ^= fk.rnd << 17;
	return fk.rnd;
}

/* Bytes a broken agent might write: biased towards JSON and framing. */
static void say_random(void)
{
	static const char pick[] = "{}[]\":,\n\xff\x00 0123456789ertun\\";
	unsigned int n = rnd() % 300;

	for (unsigned int i = 0; i < n; i++)
		uart_guest_putc(
			&fk.u,
			rnd() % 4 ? (unsigned char)
					    pick[rnd() % (sizeof(pick) - 1)]
				  : (unsigned char)rnd());
}

static void say_sync(uint64_t id)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "\xff{\"return\": %llu}\n",
		 (unsigned long long)id);
	say(buf);
}

#define BAD(s)                                                                 \
	{                                                                      \
		s, sizeof(s) - 1                                               \
	}
static const struct {
	const char *s;
	size_t len;
} bad_replies[] = {
	BAD("{\"return\": [1, 2,}\n"),		  /* not JSON */
	BAD("{\"return\": {}, \"error\": {}}\n"), /* two members */
	BAD("[\"return\"]\n"),			  /* not an object */
	BAD("{\"return\": \"\xc3\x28\"}\n"),	  /* invalid UTF-8 */
	BAD("{\"return\": {}} trailing\n"),	  /* something after it */
	BAD("{\"result\": {}}\n"),		  /* neither member */
	BAD("{\"return\": \"a\0b\"}\n"),	  /* a NUL inside */
	BAD("{\"return\": 1}\0\n"),		  /* a NUL after it */
	BAD("{\"return\": \"a\nb\"}\n"),	  /* a line cut in a string */
	BAD("{\"return\": \"\x01\"}\n"),	  /* a raw control character */
	BAD("{\"return\": \"\\ud800\"}\n"),	  /* a lone surrogate */
};
#define NR_BAD (sizeof(bad_replies) / sizeof(bad_replies[0]))

static void say_huge(void)
{
	say("{\"return\": \"");
	for (size_t i = 0; i < QGA_REPLY_MAX + QGA_REPLY_MAX / 2; i++)
		uart_guest_putc(&fk.u, 'A');
	say("\"}\n");
}

/* What a working agent answers to @cmd. */
static char *answer(const char *cmd, struct json_object *args)
{
	struct json_object *d;
	char *s = NULL;

	if (!strcmp(cmd, "guest-ping"))
		return strdup("{\"return\": {}}\n");
	if (!strcmp(cmd, "guest-info"))
		return strdup("{\"return\": {\"version\": \"fake-1\"}}\n");
	if (!strcmp(cmd, "guest-echo-len") &&
	    json_object_object_get_ex(args, "data", &d)) {
		if (asprintf(&s, "{\"return\": {\"len\": %d}}\n",
			     json_object_get_string_len(d)) < 0)
			return NULL;
		return s;
	}
	if (asprintf(&s,
		     "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": "
		     "\"The command %s has not been found\"}}\n",
		     cmd) < 0)
		return NULL;
	return s;
}

static void on_sync(uint64_t id)
{
	switch (atomic_load(&fk.mode)) {
	case FAKE_MUTE:
		return;
	case FAKE_GARBAGE:
		say("garbage {\"return\": 1}\n\x01\x02{{{\n\xc3\x28 no "
		    "newline ");
		break;
	case FAKE_STRAY_DELIM:
		say("junk\xffmore junk\xff{\"return\": 7}\n");
		break;
	case FAKE_OLD_ID:
		say_sync(id - 1);
		break;
	case FAKE_OLD_ONLY:
		say_sync(id - 1);
		return;
	case FAKE_RANDOM:
		say_random();
		return;
	default:
		break;
	}
	if (fk.late) {
		say(fk.late);
		free(fk.late);
		fk.late = NULL;
	}
	say_sync(id);
}

static void on_request(const char *cmd, struct json_object *args)
{
	int mode = atomic_load(&fk.mode);
	char *a;

	if (!strcmp(cmd, "guest-shutdown")) {
		atomic_fetch_add(&fk.shutdowns, 1); /* never answers */
		return;
	}
	switch (mode) {
	case FAKE_MUTE:
		return;
	case FAKE_RANDOM:
		say_random();
		return;
	case FAKE_BAD_JSON:
		uart_guest_write(&fk.u, bad_replies[fk.bad % NR_BAD].s,
				 bad_replies[fk.bad % NR_BAD].len);
		fk.bad++;
		return;
	case FAKE_HUGE:
		say_huge();
		return;
	case FAKE_HEAVY:
		say("{\"return\": [");
		for (int i = 0; i < 30000; i++)
			say("{},");
		say("{}]}\n");
		return;
	default:
		break;
	}
	a = answer(cmd, args);
	if (!a)
		return;
	if (mode == FAKE_SLOW) {
		free(fk.late);
		fk.late = a;
		return;
	}
	say(a);
	free(a);
}

/* One line, as the agent's parser would see it. */
static void on_line(void)
{
	struct json_object *o, *c, *args = NULL, *id;

	fk.line[fk.len] = '\0';
	o = json_tokener_parse(fk.line);
	if (!o || !json_object_object_get_ex(o, "execute", &c)) {
		if (fk.len && atomic_load(&fk.mode) != FAKE_MUTE)
			say("{\"error\": {\"class\": \"GenericError\", "
			    "\"desc\": \"JSON parse error\"}}\n");
		json_object_put(o);
		return;
	}
	json_object_object_get_ex(o, "arguments", &args);
	if (!strcmp(json_object_get_string(c), "guest-sync-delimited") &&
	    json_object_object_get_ex(args, "id", &id)) {
		fk.synced = true;
		on_sync((uint64_t)json_object_get_int64(id));
	} else {
		on_request(json_object_get_string(c), args);
	}
	json_object_put(o);
}

static void on_byte(int c)
{
	if (c == 0xff) { /* the host's resync: the parser starts afresh */
		fk.len = 0;
		fk.synced = false;
		return;
	}
	/* Restarted half-way through the request: the rest is new input. */
	if (atomic_load(&fk.mode) == FAKE_RESTART && fk.synced &&
	    fk.len == 10) {
		atomic_store(&fk.mode, FAKE_OK);
		fk.len = 0;
		fk.synced = false;
	}
	if (c == '\n') {
		on_line();
		fk.len = 0;
	} else if (fk.len < LINE_MAX_FAKE - 1) {
		fk.line[fk.len++] = (char)c;
	}
}

/* The guest: sleeps until the UART interrupts, then reads all it has. */
static void *fake_main(void *arg)
{
	struct pollfd p = { .fd = uart_guest_irq_fd(), .events = POLLIN };
	int c;

	(void)arg;
	if (atomic_load(&fk.mode) != FAKE_DEAF)
		uart_guest_rx_irq(&fk.u, true);
	while (!atomic_load(&fk.stop)) {
		if (poll(&p, 1, -1) < 0)
			continue;
		uart_guest_irq_ack();
		if (atomic_load(&fk.mode) == FAKE_DEAF)
			continue;
		while ((c = uart_guest_getc(&fk.u)) >= 0)
			on_byte(c);
	}
	return NULL;
}

static void fake_start(enum fake_mode mode)
{
	memset(&fk, 0, sizeof(fk));
	fk.rnd = 0x9e3779b97f4a7c15ull;
	atomic_store(&fk.mode, mode);
	CHECK_EQ(uart_guest_init(&fk.u), 0);
	CHECK_EQ(pthread_create(&fk.thread, NULL, fake_main, NULL), 0);
}

static void fake_stop(void)
{
	atomic_store(&fk.stop, true);
	uart_guest_kick();
	pthread_join(fk.thread, NULL);
	free(fk.late);
	uart_guest_destroy(&fk.u);
}

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
	int ret = qga_call(&fk.u.agent, cmd, args, &r, 2000, &err);

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
	size_t n = NR_BAD;
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

static void test_old_sync_id(void)
{
	struct qga_stats st;

	fake_start(FAKE_OLD_ID);
	json_object_put(call_ok("guest-ping", NULL));
	qga_get_stats(&fk.u.agent, &st);
	CHECK_EQ(st.skipped, 1);
	atomic_store(&fk.mode, FAKE_OLD_ONLY);
	check_timeout("only old sync ids", 200);
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
	   TEST(test_random), TEST(test_send), TEST(test_concurrent))
