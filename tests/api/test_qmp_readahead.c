// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP server's read-ahead: requests queued behind a running one,
 * in order, and the budget that bounds them.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/time.h>

#include "check.h"
#include "qmp_server_fixture.h"

/*
 * Reading ahead behind an operation: further operations queue (and run
 * after it); a parse error, a fast command and a request past the size
 * limit wait until every earlier reply is out, so the client sees its
 * replies in the order it sent the requests.
 */
void test_read_ahead(void)
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
void test_read_ahead_budget(void)
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
