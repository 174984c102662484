// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest agent's socket (vmm/agent/qga_mux.c) against the fake agent
 * (fake_agent.h): a client speaking the agent's line protocol as libvirt
 * does (guest-sync with an id, then one command a line), the delimited
 * sync, the agent's own errors passed through, and clients that misbehave:
 * garbage, an over-long line, a disconnect mid-call, a flood, too many of
 * them; lines QEMU's grammar refuses or that say one thing to a lenient
 * parser and another to the agent (a duplicate key, \u0000); the
 * allow-list; and hotvm's own calls, which go before every queued
 * client's.
 */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fake_agent.h"
#include "mux_client.h"
#include "qga_mux.h"

#define WAIT_MS 10000

static char sock[64];
static struct qga_mux *mux;

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void up_allow(enum fake_mode mode, const char *allow)
{
	fake_start(mode);
	CHECK_EQ(qga_mux_create(&fk.u.agent, sock, allow, &mux), 0);
	CHECK_EQ(qga_mux_start(mux), 0);
}

static void up(enum fake_mode mode)
{
	up_allow(mode, NULL);
}

static void down(void)
{
	qga_mux_stop(mux);
	mux = NULL;
	fake_stop();
	CHECK(access(sock, F_OK) && errno == ENOENT); /* removed */
}

static struct qga_mux_stats stats(void)
{
	struct qga_mux_stats st;

	qga_mux_get_stats(mux, &st);
	return st;
}

/* The reply's "return" is @want (JSON text), its "id" @id (or none). */
static void check_return(struct json_object *r, const char *want,
			 const char *id)
{
	struct json_object *v, *w = json_tokener_parse(want);

	CHECK(r != NULL);
	CHECK(json_object_object_get_ex(r, "return", &v));
	CHECK(json_object_equal(v, w));
	if (id)
		CHECK_EQ(strcmp(json_object_get_string(
					json_object_object_get(r, "id")),
				id),
			 0);
	else
		CHECK(!json_object_object_get_ex(r, "id", NULL));
	json_object_put(w);
	json_object_put(r);
}

/* The reply is an error whose desc contains @what. */
static void check_error(struct json_object *r, const char *what)
{
	struct json_object *e, *d;

	CHECK(r != NULL);
	if (!json_object_object_get_ex(r, "error", &e) ||
	    !json_object_object_get_ex(e, "desc", &d) ||
	    !json_object_is_type(d, json_type_string)) {
		printf("# not an error: %s\n", json_object_to_json_string(r));
		CHECK(!"an error reply");
		json_object_put(r);
		return;
	}
	printf("# error: %s\n", json_object_get_string(d));
	CHECK(strstr(json_object_get_string(d), what) != NULL);
	json_object_put(r);
}

/* libvirt's shape (src/qemu/qemu_agent.c): guest-sync {id}, a command. */
static void test_libvirt_shape(void)
{
	int fd, delim = -1;

	up(FAKE_OK);
	fd = mux_connect(sock);
	CHECK(fd >= 0);
	check_return(mux_ask(fd,
			     "{\"execute\":\"guest-sync\", "
			     "\"arguments\":{\"id\":1733400000123}}\n",
			     WAIT_MS, &delim),
		     "1733400000123", NULL);
	CHECK_EQ(delim, 0);
	check_return(
		mux_ask(fd, "{\"execute\":\"guest-info\"}\n", WAIT_MS, NULL),
		"{\"version\": \"fake-1\"}", NULL);
	/* The delimited sync: 0xff first, as the agent would. */
	check_return(mux_ask(fd,
			     "\xff{\"execute\":\"guest-sync-delimited\","
			     "\"arguments\":{\"id\":42}}\n",
			     WAIT_MS, &delim),
		     "42", NULL);
	CHECK_EQ(delim, 1);
	/* Arguments reach the agent; an "id" comes back. */
	check_return(mux_ask(fd,
			     "{\"execute\":\"guest-echo-len\",\"arguments\":"
			     "{\"data\":\"hello\"},\"id\":\"a1\"}\n",
			     WAIT_MS, NULL),
		     "{\"len\": 5}", "a1");
	/* The agent's own error, passed through as it sent it. */
	check_error(mux_ask(fd, "{\"execute\":\"guest-nonesuch\"}\n", WAIT_MS,
			    NULL),
		    "guest-nonesuch has not been found");
	CHECK_EQ(stats().requests, 5);
	CHECK_EQ(stats().failed, 1);
	close(fd);
	down();
}

/* Bad lines get an error each; the connection and the agent stay. */
static void test_garbage(void)
{
	static const char *const bad[] = {
		"not json\n",
		"[1,2]\n",
		"{\"execute\": 5}\n",
		"{\"execute\": \"guest-ping\", \"arguments\": []}\n",
		"{\"execute\": \"guest-ping\", \"oob\": 1}\n",
		"{\"execute\": \"guest-sync\"}\n",
		"{\"execute\": \"guest-ping\"} trailing\n",
		"{\"execute\": \"\xc3\x28\"}\n",
		"{\"execute\": \"a\x01\"}\n",
	};
	int fd;

	up(FAKE_OK);
	fd = mux_connect(sock);
	CHECK(fd >= 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_error(mux_ask(fd, bad[i], WAIT_MS, NULL), "");
	/* Blank lines are nothing; a 0xff drops the partial line. */
	check_return(mux_ask(fd,
			     "\n  \r\n{\"execute\": \xff{\"execute\":"
			     "\"guest-ping\"}\n",
			     WAIT_MS, NULL),
		     "{}", NULL);
	CHECK_EQ(stats().bad, sizeof(bad) / sizeof(bad[0]));
	CHECK_EQ(stats().requests, 1);
	close(fd);
	down();
}

/* A line over 1 MiB: one error, dropped to its newline, then served. */
static void test_long_line(void)
{
	static const char nonesuch[] = "{\"execute\":\"guest-nonesuch\"}\n";
	size_t n = QGA_REPLY_MAX + 4096;
	char *big = malloc(n + 2);
	int fd;

	up(FAKE_OK);
	fd = mux_connect(sock);
	CHECK(fd >= 0 && big);
	memset(big, 'x', n);
	strcpy(big + n, "\n");
	CHECK_EQ(mux_say(fd, big), 0);
	check_error(mux_ask(fd, NULL, WAIT_MS, NULL), "longer than 1 MiB");
	check_return(
		mux_ask(fd, "{\"execute\":\"guest-ping\"}\n", WAIT_MS, NULL),
		"{}", NULL);
	/* Just under the limit, the next request in the same write: past it. */
	n = QGA_REPLY_MAX - 10 + 20;
	memset(big, ' ', n);
	memset(big, '\n', 20); /* blank lines: the reads fall unaligned */
	memcpy(big + n - sizeof(nonesuch) + 1, nonesuch, sizeof(nonesuch) - 1);
	strcpy(big + n, "{\"execute\":\"guest-ping\"}\n");
	CHECK_EQ(mux_say(fd, big), 0);
	check_error(mux_ask(fd, NULL, WAIT_MS, NULL), "has not been found");
	check_return(mux_ask(fd, NULL, WAIT_MS, NULL), "{}", NULL);
	free(big);
	close(fd);
	down();
}

/* No agent: the sync fails within the deadline, and says why. */
static void test_no_agent(void)
{
	long t0;
	int fd;

	up(FAKE_DEAF);
	fd = mux_connect(sock);
	CHECK(fd >= 0);
	t0 = now_ms();
	check_error(mux_ask(fd,
			    "{\"execute\":\"guest-sync\","
			    "\"arguments\":{\"id\":1}}\n",
			    QGA_MUX_TIMEOUT_MS + WAIT_MS, NULL),
		    "did not");
	CHECK(now_ms() - t0 >= QGA_MUX_TIMEOUT_MS - 100);
	close(fd);
	down();
}

/* Whether a call has the agent's port (qga.c's turn). */
static bool port_busy(void)
{
	bool b;

	pthread_mutex_lock(&fk.u.agent.lock);
	b = fk.u.agent.busy;
	pthread_mutex_unlock(&fk.u.agent.lock);
	return b;
}

/* A client gone mid-call: its reply is dropped, the next client served. */
static void test_disconnect_mid_call(void)
{
	long end;
	int fd;

	up(FAKE_MUTE_FIRST);
	fd = mux_connect(sock);
	CHECK(fd >= 0);
	CHECK_EQ(mux_say(fd, "{\"execute\":\"guest-info\"}\n"), 0);
	end = now_ms() + WAIT_MS;
	while (!port_busy() && now_ms() < end)
		usleep(1000);
	close(fd);
	fd = mux_connect(sock);
	CHECK(fd >= 0);
	/* Served after the abandoned call's deadline, by a fresh sync. */
	check_return(mux_ask(fd, "{\"execute\":\"guest-ping\"}\n",
			     QGA_MUX_TIMEOUT_MS + WAIT_MS, NULL),
		     "{}", NULL);
	end = now_ms() + WAIT_MS;
	while (stats().dropped < 1 && now_ms() < end)
		usleep(1000);
	printf("# requests %lu failed %lu dropped %lu\n", stats().requests,
	       stats().failed, stats().dropped);
	CHECK_EQ(stats().dropped, 1);
	close(fd);
	down();
}

/* The guest-shutdown shape: no reply on success, as from the agent. */
static void test_shutdown(void)
{
	long end;
	int fd;

	up(FAKE_OK);
	fd = mux_connect(sock);
	CHECK(fd >= 0);
	CHECK_EQ(mux_say(fd, "{\"execute\":\"guest-shutdown\","
			     "\"arguments\":{\"mode\":\"powerdown\"}}\n"),
		 0);
	end = now_ms() + WAIT_MS;
	while (!atomic_load(&fk.shutdowns) && now_ms() < end)
		usleep(1000);
	CHECK_EQ(atomic_load(&fk.shutdowns), 1);
	/* The next request's reply is the next line: none came between. */
	check_return(
		mux_ask(fd, "{\"execute\":\"guest-ping\"}\n", WAIT_MS, NULL),
		"{}", NULL);
	close(fd);
	down();
}

/*
 * Issue 32, item 10: a line means one thing.  A key given twice was the
 * last one's to json-c ({"execute":"guest-ping","execute":"guest-info"}
 * ran guest-info), and "guest-shutdown\u0000x" went to the agent as
 * guest-shutdown; both are refused now, as are comments and NaN, and
 * nothing reaches the agent: the next request's reply comes first.
 */
static void test_one_meaning(void)
{
	static const char *const bad[] = {
		"{\"execute\":\"guest-ping\",\"execute\":\"guest-info\"}\n",
		"{\"execute\":\"guest-shutdown\\u0000x\"}\n",
		"{\"execute\":\"guest-shutdown\",\"arguments\":{\"mode\":"
		"\"powerdown\",\"mode\":\"reboot\"}}\n",
		"{\"execute\":\"guest-ping\"} // c\n",
		"{\"execute\":\"guest-ping\",\"id\":NaN}\n",
	};
	static const char *const why[] = {
		"duplicate key",       "\\u0000",   "duplicate key",
		"more than one value", "stray 'N'",
	};
	int fd;

	up(FAKE_OK);
	fd = mux_connect(sock);
	CHECK(fd >= 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_error(mux_ask(fd, bad[i], WAIT_MS, NULL), why[i]);
	/* QEMU's single quotes, as the agent takes them. */
	check_return(mux_ask(fd, "{'execute':'guest-info'}\n", WAIT_MS, NULL),
		     "{\"version\": \"fake-1\"}", NULL);
	CHECK_EQ(atomic_load(&fk.shutdowns), 0);
	CHECK_EQ(stats().bad, sizeof(bad) / sizeof(bad[0]));
	CHECK_EQ(stats().requests, 1);
	close(fd);
	down();
}

/*
 * --agent-allow: only the commands named reach the agent; another is
 * refused as qemu-ga refuses a disabled command, naming the option; the
 * handshake is always allowed.  Without it, everything goes through.
 */
static void test_allow_list(void)
{
	int fd;

	CHECK(qga_mux_allow_valid("guest-ping"));
	CHECK(qga_mux_allow_valid("guest-ping,guest_x,Guest-9"));
	CHECK(!qga_mux_allow_valid(""));
	CHECK(!qga_mux_allow_valid("guest-ping,"));
	CHECK(!qga_mux_allow_valid(",guest-ping"));
	CHECK(!qga_mux_allow_valid("guest-ping,,guest-info"));
	CHECK(!qga_mux_allow_valid("guest ping"));
	CHECK(!qga_mux_allow_valid("guest-ping:guest-info"));
	fake_start(FAKE_OK);
	CHECK_EQ(qga_mux_create(&fk.u.agent, sock, "guest-ping,", &mux),
		 -EINVAL);
	fake_stop();

	up_allow(FAKE_OK, "guest-ping,guest-info");
	fd = mux_connect(sock);
	CHECK(fd >= 0);
	check_return(mux_ask(fd,
			     "{\"execute\":\"guest-sync\", "
			     "\"arguments\":{\"id\":42}}\n",
			     WAIT_MS, NULL),
		     "42", NULL);
	check_return(mux_ask(fd, "{\"execute\":\"guest-ping\",\"id\":\"a\"}\n",
			     WAIT_MS, NULL),
		     "{}", "a");
	check_error(mux_ask(fd,
			    "{\"execute\":\"guest-shutdown\",\"arguments\":"
			    "{\"mode\":\"powerdown\"}}\n",
			    WAIT_MS, NULL),
		    "The command guest-shutdown has been disabled for this "
		    "instance: it is not in hotvm's --agent-allow list");
	check_error(mux_ask(fd, "{\"execute\":\"guest-pin\"}\n", WAIT_MS, NULL),
		    "--agent-allow");
	check_error(mux_ask(fd, "{\"execute\":\"guest-ping,guest-info\"}\n",
			    WAIT_MS, NULL),
		    "--agent-allow");
	check_error(mux_ask(fd, "{\"execute\":\"\"}\n", WAIT_MS, NULL),
		    "--agent-allow");
	check_return(
		mux_ask(fd, "{\"execute\":\"guest-info\"}\n", WAIT_MS, NULL),
		"{\"version\": \"fake-1\"}", NULL);
	CHECK_EQ(atomic_load(&fk.shutdowns), 0);
	CHECK_EQ(stats().refused, 4);
	CHECK_EQ(stats().requests, 3);
	close(fd);
	down();
}

/* A fifth client is told why and closed; the four are still served. */
static void test_too_many(void)
{
	int fd[QGA_MUX_MAX_CLIENTS + 1];
	char buf[256];

	up(FAKE_OK);
	for (int i = 0; i <= QGA_MUX_MAX_CLIENTS; i++)
		CHECK((fd[i] = mux_connect(sock)) >= 0);
	CHECK(mux_line(fd[QGA_MUX_MAX_CLIENTS], buf, sizeof(buf), WAIT_MS) > 0);
	CHECK(strstr(buf, "too many clients") != NULL);
	CHECK_EQ(mux_line(fd[QGA_MUX_MAX_CLIENTS], buf, sizeof(buf), WAIT_MS),
		 0);
	for (int i = 0; i < QGA_MUX_MAX_CLIENTS; i++)
		check_return(mux_ask(fd[i], "{\"execute\":\"guest-ping\"}\n",
				     WAIT_MS, NULL),
			     "{}", NULL);
	CHECK_EQ(stats().refused, 1);
	for (int i = 0; i <= QGA_MUX_MAX_CLIENTS; i++)
		close(fd[i]);
	down();
}

struct own_call {
	pthread_t t;
	int rc;
	long done_ms;
};

static void *own_main(void *arg)
{
	struct own_call *o = arg;

	o->rc = qga_call(&fk.u.agent, "guest-ping", NULL, NULL, WAIT_MS, NULL);
	o->done_ms = now_ms();
	return NULL;
}

/*
 * hotvm's own call goes before a queued client's: client A holds the
 * port (the agent does not answer its handshake), client B queues, hotvm
 * asks; once A's call has timed out, hotvm's runs before B's.
 */
static void test_own_first(void)
{
	struct own_call own = { 0 };
	struct json_object *r;
	long end, b_ms;
	int a, b;

	up(FAKE_MUTE_FIRST);
	a = mux_connect(sock);
	b = mux_connect(sock);
	CHECK(a >= 0 && b >= 0);
	CHECK_EQ(mux_say(a, "{\"execute\":\"guest-info\"}\n"), 0);
	end = now_ms() + WAIT_MS;
	while (!port_busy() && now_ms() < end)
		usleep(1000);
	CHECK_EQ(mux_say(b, "{\"execute\":\"guest-ping\"}\n"), 0);
	end = now_ms() + WAIT_MS;
	while (stats().requests < 2 && now_ms() < end)
		usleep(1000);
	CHECK_EQ(pthread_create(&own.t, NULL, own_main, &own), 0);
	check_error(mux_ask(a, NULL, QGA_MUX_TIMEOUT_MS + WAIT_MS, NULL),
		    "did not");
	r = mux_ask(b, NULL, QGA_MUX_TIMEOUT_MS + WAIT_MS, NULL);
	b_ms = now_ms();
	check_return(r, "{}", NULL);
	pthread_join(own.t, NULL);
	CHECK_EQ(own.rc, 0);
	CHECK(own.done_ms <= b_ms);
	close(a);
	close(b);
	down();
}

/*
 * A client that floods and never reads does not wedge hotvm: its lines
 * wait in its socket, one at a time, and hotvm's own calls go on.
 */
static void test_flood(void)
{
	static const char req[] = "{\"execute\":\"guest-ping\"}\n";
	unsigned long sent = 0;
	int fd;

	up(FAKE_OK);
	fd = mux_connect(sock);
	CHECK(fd >= 0);
	/* Until the socket is full: hotvm reads only one line at a time. */
	while (send(fd, req, sizeof(req) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) ==
	       (ssize_t)sizeof(req) - 1)
		sent++;
	printf("# %lu requests written before the socket filled\n", sent);
	CHECK(sent > 2);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(qga_call(&fk.u.agent, "guest-ping", NULL, NULL,
				  WAIT_MS, NULL),
			 0);
	CHECK(stats().requests < sent);
	close(fd);
	down();
}

int check_failures;

int main(void)
{
	static const struct check_case cases[] = {
		TEST(test_libvirt_shape),
		TEST(test_garbage),
		TEST(test_long_line),
		TEST(test_no_agent),
		TEST(test_disconnect_mid_call),
		TEST(test_shutdown),
		TEST(test_one_meaning),
		TEST(test_allow_list),
		TEST(test_too_many),
		TEST(test_own_first),
		TEST(test_flood),
	};

	snprintf(sock, sizeof(sock), "/tmp/hotvm-mux-%d.sock", (int)getpid());
	return check_run(cases, sizeof(cases) / sizeof(cases[0]));
}
