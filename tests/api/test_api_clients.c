// SPDX-License-Identifier: GPL-2.0-only
/*
 * Several clients: requests serialised and every client told, batches of
 * queued operations, bursts (one write, their reasons).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <json-c/json.h>

#include "api_fixture.h"
#include "check.h"
#include "hotvm/guest_states.h"
#include "hotvm/ring.h"
#include "vm.h"

/* Several clients: requests serialised, every client sees the events. */
void test_two_clients(void)
{
	struct qmp_client *c2, *c1;
	struct qmp_client_error e;
	struct json_object *ev;

	setup(4, 1);
	CHECK_EQ(qmp_client_connect(t.path, 1, T_MS, &c2, &e), 0);
	json_object_put(ok("device_add", "{\"driver\": \"host-x86_64-cpu\", "
					 "\"socket-id\": 1, \"id\": \"a\"}"));
	CHECK_EQ(qmp_client_next_event(c2, &ev, T_MS), 0);
	CHECK(has(ev, "event"));
	json_object_put(ev);
	c1 = t.c;
	t.c = c2;
	fails("GenericError", "Duplicate device ID 'a'", "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 2, \"id\": "
	      "\"a\"}");
	t.c = c1;
	qmp_client_close(c2);
	teardown();
}

/* ---- bursts: requests queued together run as one batch ---- */

/*
 * Holds the operation thread: CPU 1's guest answers no eject, so c2's
 * removal of it waits ms for one (and then fails, CPU 1 staying online).
 * Returns once it runs; finish with unblock().
 */
static long block(struct qmp_client *c2, int ms)
{
	struct qmp_client_error e;
	struct json_object *a, *ev;
	char buf[96];
	long seq;

	sim_guest_keep(1, true);
	snprintf(buf, sizeof(buf),
		 "{\"cpu\": 1, \"state\": \"offline\", \"timeout-ms\": %d}",
		 ms);
	a = json_tokener_parse(buf);
	seq = qmp_client_send(c2, "cpu-hotplug", a, &e);
	json_object_put(a);
	CHECK(seq > 0);
	/* It runs once CPU 1 has left online (however loaded the host). */
	while (!qmp_client_next_event(t.c, &ev, T_MS)) {
		struct json_object *d = get(ev, "data");
		bool running = !strcmp(gs(ev, "event") ?: "", "CPUHP_STATE") &&
			       gi(d, "cpu") == 1 &&
			       !strcmp(gs(d, "direction") ?: "", "down");

		json_object_put(ev);
		if (running)
			return seq;
	}
	CHECK(!"the blocking operation never started");
	return seq;
}

static void unblock(struct qmp_client *c2, long seq)
{
	struct qmp_client_error e;

	CHECK_EQ(qmp_client_wait(c2, "cpu-hotplug", seq, NULL, &e, T_MS),
		 -EREMOTEIO);
	sim_guest_keep(1, false);
}

/* Waits until n operations are queued behind the one that runs. */
static void wait_queued(struct qmp_client *c3, long long n)
{
	struct qmp_client_error e;
	long long have = -1;

	for (int i = 0; i < 100000 && have != n; i++) {
		struct json_object *r = NULL;

		CHECK_EQ(qmp_client_execute(c3, "query-hotplug-stats", NULL, &r,
					    &e, T_MS),
			 0);
		have = gi(r, "queued-operations");
		json_object_put(r);
	}
	CHECK_EQ(have, n);
}

/* The reply to seq: ok (want NULL) or an error whose desc has want. */
static void reply_is(const char *cmd, long seq, const char *want)
{
	struct qmp_client_error e = { 0 };
	struct json_object *r = NULL;
	int rc = qmp_client_wait(t.c, cmd, seq, &r, &e, T_MS);

	json_object_put(r);
	if (want ? rc != -EREMOTEIO || !strstr(e.desc, want) : rc != 0)
		printf("# %s #%ld: %d '%s', want '%s'\n", cmd, seq, rc, e.desc,
		       want ?: "ok");
	CHECK(want ? rc == -EREMOTEIO && strstr(e.desc, want) : rc == 0);
}

/*
 * The order a batch leaves in the host's CPUHP_STATE events (Linux 6.5's
 * parallel bring-up): every CPU of it (@cpus, a mask) reaches @first
 * before any reaches @second.  Returns how many reached @second.
 */
static int batched(unsigned int cpus, const char *dir, const char *first,
		   const char *second)
{
	struct json_object *ev;
	int last_first = -1, first_second = -1, n = 0, seconds = 0;

	while ((ev = event("CPUHP_STATE"))) {
		struct json_object *d = get(ev, "data");
		const char *name = gs(d, "name") ?: "";

		if (!strcmp(gs(d, "side") ?: "", "host") &&
		    !strcmp(gs(d, "kind") ?: "", "step") &&
		    !strcmp(gs(d, "direction") ?: "", dir) &&
		    !json_object_get_boolean(get(d, "rollback")) &&
		    (cpus >> gi(d, "cpu") & 1)) {
			if (!strcmp(name, first))
				last_first = n;
			if (!strcmp(name, second)) {
				seconds++;
				if (first_second < 0)
					first_second = n;
			}
		}
		n++;
		json_object_put(ev);
	}
	if (!(last_first >= 0 && last_first < first_second))
		printf("# %s: last %s at %d, first %s at %d\n", dir, first,
		       last_first, second, first_second);
	CHECK(last_first >= 0 && last_first < first_second);
	return seconds;
}

#define ADD(sock, id)                                                          \
	"{\"driver\": \"host-x86_64-cpu\", \"socket-id\": " #sock id "}"

/*
 * A burst of device_add and device_del from one client, queued while
 * another operation runs: each burst is one batch, every request answered
 * in order as if they had run one at a time, a failure in the middle of
 * the batch its own.
 */
void test_burst(void)
{
	struct qmp_client_error e;
	struct qmp_client *c2, *c3;
	long blk, seq[8];

	setup(8, 2);
	CHECK_EQ(qmp_client_connect(t.path, 1, T_MS, &c2, &e), 0);
	CHECK_EQ(qmp_client_connect(t.path, 1, T_MS, &c3, &e), 0);

	/* Eight adds; the batch takes 2, 3, 4, 5: 3 fails in its walk. */
	inject_host(3, "guest:ap-starting");
	drain_events();
	blk = block(c2, 1000);
	seq[0] = send_req("device_add", ADD(2, ", \"id\": \"b2\""));
	seq[1] = send_req("device_add", ADD(3, ", \"id\": \"b3\""));
	seq[2] = send_req("device_add", ADD(4, ""));
	seq[3] = send_req("device_add", ADD(2, ", \"id\": \"again\""));
	seq[4] = send_req("device_add", ADD(6, ", \"id\": \"b2\""));
	seq[5] = send_req("device_add", ADD(99, ""));
	seq[6] = send_req("device_add", ADD(3, ", \"id\": \"b3\""));
	seq[7] = send_req("device_add", ADD(5, ", \"id\": \"b5\""));
	wait_queued(c3, 8);
	unblock(c2, blk);
	reply_is("device_add", seq[0], NULL);
	reply_is("device_add", seq[1],
		 "cpu 3: guest:ap-starting failed: Resource temporarily "
		 "unavailable (injected fault); it stays at offline");
	reply_is("device_add", seq[2], NULL);
	reply_is("device_add", seq[3], "CPU[2] with APIC ID 2 exists");
	reply_is("device_add", seq[4], "Duplicate device ID 'b2'");
	reply_is("device_add", seq[5], "Invalid CPU socket-id: 99");
	/* After its twin failed, as it would have one at a time. */
	reply_is("device_add", seq[6], NULL);
	reply_is("device_add", seq[7], NULL);
	/* 3 is also walked after the batch, by itself. */
	CHECK_EQ(batched(1u << 2 | 1u << 4 | 1u << 5, "up", "vcpu:create",
			 "guest:ap-starting"),
		 3);
	for (unsigned int i = 0; i < 8; i++)
		CHECK_EQ(cpu_plugged(i), i != 6 && i != 7);

	/* Removals: one batch of 2, 4, 5 (one eject scan); 3 after it. */
	blk = block(c2, 1000);
	seq[0] = send_req("device_del", "{\"id\": \"b2\"}");
	seq[1] = send_req("device_del",
			  "{\"id\": \"/machine/peripheral-anon/device[0]\"}");
	seq[2] = send_req("device_del", "{\"id\": \"b5\"}");
	seq[3] = send_req("device_del", "{\"id\": \"b2\"}");
	seq[4] = send_req("device_del", "{\"id\": \"nosuch\"}");
	seq[5] = send_req("query-status", "{}");
	wait_queued(c3, 5);
	unblock(c2, blk);
	reply_is("device_del", seq[0], NULL);
	reply_is("device_del", seq[1], NULL);
	reply_is("device_del", seq[2], NULL);
	reply_is("device_del", seq[3], "Device 'b2' not found");
	reply_is("device_del", seq[4], "Device 'nosuch' not found");
	reply_is("query-status", seq[5], NULL);
	CHECK_EQ(batched(1u << 2 | 1u << 4 | 1u << 5, "down", "online",
			 "guest:ap-starting"),
		 3);
	for (unsigned int i = 0; i < 8; i++)
		CHECK_EQ(cpu_plugged(i), i < 2 || i == 3);
	qmp_client_close(c3);
	qmp_client_close(c2);
	teardown();
}

/* One line from a raw client's socket, without its end; false on timeout. */
static bool raw_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char ch;

		if (poll(&p, 1, T_MS) != 1 || read(fd, &ch, 1) != 1)
			return false;
		if (ch == '\n') {
			buf[n] = 0;
			return true;
		}
		if (n + 1 < len && ch != '\r')
			buf[n++] = ch;
	}
}

/* Reads lines until the next reply ("return" or "error"); false if none. */
static bool raw_reply(int fd, char *buf, size_t len)
{
	while (raw_line(fd, buf, len))
		if (!strncmp(buf, "{\"return\"", 9) ||
		    !strncmp(buf, "{\"error\"", 8))
			return true;
	return false;
}

/*
 * A burst sent in one write to an idle server, as a client that does not
 * wait for each reply sends it: queued whole before the operation thread
 * takes its first request (qmp_submit_hold), so it is one batch, not the
 * first alone and then the rest.
 */
void test_burst_one_write(void)
{
	static const char burst[] =
		"{\"execute\": \"device_add\", \"arguments\": " ADD(
			2,
			"") "}\n"
			    "{\"execute\": \"device_add\", \"arguments\": " ADD(
				    3, "") "}\n"
					   "{\"execute\": \"device_add\", "
					   "\"arguments\": " ADD(4, "") "}\n";
	static const char caps[] = "{\"execute\": \"qmp_capabilities\"}\n";
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char line[4096];
	int fd;

	setup(8, 2);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", t.path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	CHECK_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK(raw_line(fd, line, sizeof(line))); /* the greeting */
	CHECK_EQ(write(fd, caps, strlen(caps)), (ssize_t)strlen(caps));
	CHECK(raw_reply(fd, line, sizeof(line)));
	drain_events();
	CHECK_EQ(write(fd, burst, strlen(burst)), (ssize_t)strlen(burst));
	for (int i = 0; i < 3; i++) {
		CHECK(raw_reply(fd, line, sizeof(line)));
		CHECK(!strncmp(line, "{\"return\"", 9));
	}
	/* Every one created before any is shown to the guest: one batch. */
	CHECK_EQ(batched(1u << 2 | 1u << 3 | 1u << 4, "up", "vcpu:create",
			 "guest:ap-starting"),
		 3);
	for (unsigned int i = 0; i < 8; i++)
		CHECK_EQ(cpu_plugged(i), i < 5);
	close(fd);
	teardown();
}

/*
 * A request of a burst refused in the batch's first phase keeps the
 * reason the same request sent alone gets (it used to say only
 * "State not recoverable").
 */
void test_burst_reasons(void)
{
	struct qmp_client_error e;
	struct qmp_client *c2, *c3;
	struct json_object *c;
	long blk, seq[2];

	setup(4, 2);
	CHECK_EQ(qmp_client_connect(t.path, 1, T_MS, &c2, &e), 0);
	CHECK_EQ(qmp_client_connect(t.path, 1, T_MS, &c3, &e), 0);
	late_claim(2);
	c = cpuhp_cpu(2); /* the check flags it */
	CHECK(!gb(c, "agree"));
	json_object_put(c);
	drain_events();
	blk = block(c2, 1000);
	seq[0] = send_req("device_add", ADD(2, ""));
	seq[1] = send_req("device_add", ADD(3, ""));
	wait_queued(c3, 2);
	unblock(c2, blk);
	reply_is("device_add", seq[0],
		 "the host and the guest disagree about it");
	reply_is("device_add", seq[1], NULL);
	json_object_put(ok("cpuhp-recover", "{\"cpu\": 2}"));
	qmp_client_close(c2);
	qmp_client_close(c3);
	teardown();
}
