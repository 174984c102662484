// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest agent's wire: JSON requests in, one reply line out per request
 * ("{...}\n").  guest-sync-delimited makes the agent put a 0xff byte before
 * its reply, and a 0xff byte sent to it resets its JSON parser, so a
 * handshake of "0xff, sync {id}" and "0xff, {return: id}" re-aligns the
 * two ends whatever state the last conversation left them in.
 *
 * The guest's bytes go into a ring on the vCPU thread; the calling thread
 * takes whole lines out of it.  Nothing the guest sends is trusted: a line
 * is read only up to QGA_REPLY_MAX, parsed strictly, and a line that is
 * not the one expected is skipped (during the handshake) or fails the
 * call (after it).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "qga.h"
#include "qmp_json.h"

#define QGA_DELIM     0xff
#define QGA_RING_MASK (QGA_REPLY_MAX - 1)

static void qga_out(void *ctx, uint8_t c);
static void qga_drained(void *ctx);
static void qga_closed(void *ctx);

int qga_init(struct qga *g, struct serial_host *host)
{
	pthread_condattr_t ca;

	*g = (struct qga){ .sync_id = (uint64_t)time(NULL) << 16 };
	g->in = malloc(QGA_REPLY_MAX);
	g->line = malloc(QGA_REPLY_MAX + 1);
	if (!g->in || !g->line) {
		free(g->in);
		free(g->line);
		*g = (struct qga){ 0 };
		return -ENOMEM;
	}
	pthread_mutex_init(&g->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cond, &ca);
	pthread_cond_init(&g->turn, &ca);
	pthread_condattr_destroy(&ca);
	*host = (struct serial_host){
		.out = qga_out,
		.drained = qga_drained,
		.closed = qga_closed,
		.ctx = g,
	};
	return 0;
}

static size_t qga_uart_send(void *ctx, const void *buf, size_t len)
{
	return serial_receive(ctx, buf, len);
}

static void qga_uart_flush(void *ctx)
{
	serial_rx_flush(ctx);
}

void qga_attach(struct qga *g, struct serial *port)
{
	qga_attach_port(g,
			&(struct qga_port){
				.send = qga_uart_send,
				.flush = qga_uart_flush,
				.ctx = port,
				.hint = "qemu-ga -m isa-serial -p /dev/ttyS1",
			});
}

void qga_attach_port(struct qga *g, const struct qga_port *port)
{
	g->port = *port;
}

void qga_destroy(struct qga *g)
{
	if (!g->in)
		return;
	pthread_cond_destroy(&g->turn);
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	free(g->in);
	free(g->line);
	g->in = NULL;
	g->line = NULL;
}

/*
 * A byte from the guest (vCPU thread, UART lock held).  Kept only while a
 * call listens and while the ring has room: a guest that talks when not
 * asked, or without end, costs a count, not memory.
 */
static void qga_out(void *ctx, uint8_t c)
{
	struct qga *g = ctx;

	pthread_mutex_lock(&g->lock);
	if (!g->listening || g->in_len == QGA_REPLY_MAX) {
		g->stats.stray_bytes++;
	} else {
		g->in[(g->in_head + g->in_len++) & QGA_RING_MASK] = (char)c;
		/* A line is complete, or the ring is full: the caller acts. */
		if (c == '\n' || g->in_len == QGA_REPLY_MAX)
			pthread_cond_broadcast(&g->cond);
	}
	pthread_mutex_unlock(&g->lock);
}

/* The guest has read all the host sent (vCPU thread, UART lock held). */
static void qga_drained(void *ctx)
{
	struct qga *g = ctx;

	pthread_mutex_lock(&g->lock);
	g->drained = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

/*
 * The guest closed its end of the port (device thread): the program that
 * had the call in flight is gone with its request, so the call ends now
 * (-EPIPE), not at its deadline.  A call that starts later waits, within
 * its deadline, for the port to open again: its bytes wait in the port.
 */
static void qga_closed(void *ctx)
{
	struct qga *g = ctx;

	pthread_mutex_lock(&g->lock);
	if (g->listening) {
		g->closed = true;
		pthread_cond_broadcast(&g->cond);
	}
	pthread_mutex_unlock(&g->lock);
}

/* Counts under the lock: the vCPU thread counts stray bytes meanwhile. */
static void qga_count(struct qga *g, unsigned long *stat, unsigned long n)
{
	pthread_mutex_lock(&g->lock);
	*stat += n;
	pthread_mutex_unlock(&g->lock);
}

static int qga_timeout(struct qga *g, struct hv_err *err, const char *what)
{
	qga_count(g, &g->stats.timeouts, 1);
	return hv_err_set(err, -ETIMEDOUT,
			  "the guest agent did not %s in time (is qemu-ga "
			  "running on the guest's agent port, e.g. `%s`?)",
			  what, g->port.hint ? g->port.hint : "qemu-ga");
}

static int qga_lost(struct qga *g, struct hv_err *err)
{
	qga_count(g, &g->stats.closed, 1);
	return hv_err_set(
		err, -EPIPE,
		"the guest closed the agent's port during the call "
		"(qemu-ga stopped or restarted); the request is lost");
}

/*
 * Hands @len bytes to the guest, waiting (until @dl) for it to read what
 * does not fit in the UART's ring; with @all_read, also until it has read
 * the last byte.  The UART is never called with @g->lock held: its
 * callbacks take that lock under the UART's own.
 */
static int qga_write(struct qga *g, const char *buf, size_t len, bool all_read,
		     const struct timespec *dl, struct hv_err *err)
{
	size_t done = 0;
	int rc = 0;

	pthread_mutex_lock(&g->lock);
	for (;;) {
		g->drained = false;
		pthread_mutex_unlock(&g->lock);
		done += g->port.send(g->port.ctx, buf + done, len - done);
		pthread_mutex_lock(&g->lock);
		if (done == len && !all_read)
			break;
		while (!g->drained && rc != ETIMEDOUT && !g->cancelled &&
		       !g->closed)
			rc = pthread_cond_timedwait(&g->cond, &g->lock, dl);
		if (g->cancelled)
			rc = ETIMEDOUT; /* hotvm stops: as the deadline */
		else if (g->closed && !g->drained)
			rc = EPIPE;
		if (rc == ETIMEDOUT || rc == EPIPE || done == len)
			break;
	}
	pthread_mutex_unlock(&g->lock);
	if (rc == EPIPE)
		return qga_lost(g, err);
	if (rc == ETIMEDOUT)
		return qga_timeout(g, err, "read the request");
	return 0;
}

/* Lock held: the length of the first line in the ring with its newline. */
static size_t qga_find_line(struct qga *g)
{
	for (; g->in_scan < g->in_len; g->in_scan++)
		if (g->in[(g->in_head + g->in_scan) & QGA_RING_MASK] == '\n')
			return g->in_scan + 1;
	return 0;
}

/* Lock held: moves @n bytes out of the ring into @g->line. */
static void qga_take(struct qga *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		g->line[i] = g->in[(g->in_head + i) & QGA_RING_MASK];
	g->in_head = (g->in_head + n) & QGA_RING_MASK;
	g->in_len -= n;
	g->in_scan = 0;
}

/*
 * Waits for the next line from the guest and copies it, without its
 * newline, to @g->line.  Returns its length, -ETIMEDOUT, -EPIPE (the
 * guest closed the port), or -EMSGSIZE when the ring filled up without
 * a newline (then it is emptied).
 */
static long qga_next_line(struct qga *g, const struct timespec *dl)
{
	long ret;

	pthread_mutex_lock(&g->lock);
	for (;;) {
		size_t n = qga_find_line(g);

		if (n) {
			qga_take(g, n);
			ret = (long)n - 1;
			break;
		}
		if (g->in_len == QGA_REPLY_MAX) {
			g->stats.stray_bytes += g->in_len;
			g->in_head = g->in_len = g->in_scan = 0;
			ret = -EMSGSIZE;
			break;
		}
		if (g->closed) {
			ret = -EPIPE;
			break;
		}
		if (g->cancelled || pthread_cond_timedwait(&g->cond, &g->lock,
							   dl) == ETIMEDOUT) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	pthread_mutex_unlock(&g->lock);
	return ret;
}

static bool qga_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

const char *qga_line_trim(const char *s, size_t *len, size_t *cut)
{
	const char *d = memrchr(s, QGA_DELIM, *len);
	size_t n = *len;

	*cut = 0;
	if (d) {
		*cut = (size_t)(d - s);
		n -= (size_t)(d - s) + 1;
		s = d + 1;
	}
	while (n && qga_blank(*s)) {
		s++;
		n--;
	}
	while (n && qga_blank(s[n - 1]))
		n--;
	*len = n;
	return s;
}

/* A line's part that counts (qga_line_trim); what is cut counts as stray. */
static const char *qga_trim(struct qga *g, size_t *len)
{
	size_t cut;
	const char *s = qga_line_trim(g->line, len, &cut);

	if (cut)
		qga_count(g, &g->stats.stray_bytes, (unsigned long)cut);
	return s;
}

int qga_json_parse(const char *s, size_t len, struct json_object **out,
		   struct hv_err *err)
{
	struct json_object *o;
	int rc = qmp_json_parse(s, len, QGA_PARSED_MAX, &o, err);

	if (rc)
		return rc;
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return hv_err_set(err, -EPROTO, "not a JSON object");
	}
	*out = o;
	return 0;
}

/*
 * One reply: a JSON object (qga_json_parse()) with exactly one member,
 * "return" or "error".  Returns 0 with the object in *out, or -EPROTO
 * with the reason in @err.
 */
static int qga_parse(const char *s, size_t len, struct json_object **out,
		     struct hv_err *err)
{
	struct json_object *o = NULL;
	int ret = qga_json_parse(s, len, &o, err);

	if (ret)
		return ret;
	if (json_object_object_length(o) == 1 &&
	    (json_object_object_get_ex(o, "return", NULL) ||
	     json_object_object_get_ex(o, "error", NULL))) {
		*out = o;
		return 0;
	}
	json_object_put(o);
	return hv_err_set(err, -EPROTO,
			  "not a JSON object with \"return\" or \"error\"");
}

/* The next non-blank line, parsed; errors set @err. */
static int qga_reply(struct qga *g, const struct timespec *dl,
		     struct json_object **out, struct hv_err *err)
{
	struct hv_err bad = { 0 };
	const char *s;
	size_t len;
	long n;

	do {
		n = qga_next_line(g, dl);
		if (n == -ETIMEDOUT)
			return qga_timeout(g, err, "answer");
		if (n == -EPIPE)
			return qga_lost(g, err);
		if (n == -EMSGSIZE) {
			qga_count(g, &g->stats.bad_replies, 1);
			return hv_err_set(err, -EMSGSIZE,
					  "the guest agent's reply is longer "
					  "than %u bytes",
					  QGA_REPLY_MAX);
		}
		len = (size_t)n;
		s = qga_trim(g, &len);
	} while (!len);
	if (!qga_parse(s, len, out, &bad))
		return 0;
	qga_count(g, &g->stats.bad_replies, 1);
	return hv_err_set(err, -EPROTO, "the guest agent's reply is bad: %s",
			  hv_err_msg(&bad));
}

/* Whether the handshake line of @len bytes answers sync @id. */
static bool qga_is_sync(struct qga *g, size_t len, uint64_t id)
{
	struct json_object *r = NULL, *v;
	const char *s = qga_trim(g, &len);
	bool ours = false;

	if (!len)
		return false;
	if (qga_parse(s, len, &r, NULL)) {
		qga_count(g, &g->stats.stray_bytes, len);
		return false;
	}
	ours = json_object_object_get_ex(r, "return", &v) &&
	       json_object_is_type(v, json_type_int) &&
	       (uint64_t)json_object_get_int64(v) == id;
	/*
	 * Another "return" answers an earlier call that gave up on it (or an
	 * old sync).  An "error" is qemu-ga's complaint about the 0xff byte
	 * ("JSON parse error, stray ..."), which comes with every handshake:
	 * not worth a count.
	 */
	if (!ours && json_object_object_get_ex(r, "return", NULL))
		qga_count(g, &g->stats.skipped, 1);
	json_object_put(r);
	return ours;
}

/* Drops what the guest has not read yet and starts listening afresh. */
static uint64_t qga_listen(struct qga *g)
{
	uint64_t id;

	g->port.flush(g->port.ctx);
	pthread_mutex_lock(&g->lock);
	g->stats.stray_bytes += g->in_len;
	g->in_head = g->in_len = g->in_scan = 0;
	g->listening = true;
	g->closed = false;
	id = ++g->sync_id;
	pthread_mutex_unlock(&g->lock);
	return id;
}

/*
 * The handshake: "0xff" + guest-sync-delimited {id}, then lines until
 * "0xff" + {"return": id}.  Whatever comes before it (an earlier call's
 * late reply, an old sync, garbage, an over-long line) is skipped and
 * counted; only the deadline ends the wait.
 */
static int qga_sync(struct qga *g, const struct timespec *dl,
		    struct hv_err *err)
{
	uint64_t id = qga_listen(g);
	char req[128];
	int ret;
	long n;

	snprintf(req, sizeof(req),
		 "%c{\"execute\":\"guest-sync-delimited\","
		 "\"arguments\":{\"id\":%llu}}\n",
		 QGA_DELIM, (unsigned long long)id);
	ret = qga_write(g, req, strlen(req), false, dl, err);
	if (ret)
		return ret;
	for (;;) {
		n = qga_next_line(g, dl);
		if (n == -ETIMEDOUT)
			return qga_timeout(g, err, "answer the handshake");
		if (n == -EPIPE)
			return qga_lost(g, err);
		if (n < 0)
			continue; /* an over-long line: gone already */
		if (qga_is_sync(g, (size_t)n, id))
			return 0;
	}
}

static char *qga_request(const char *cmd, struct json_object *args)
{
	struct json_object *o = json_object_new_object();
	char *s;

	if (!o)
		return NULL;
	json_object_object_add(o, "execute", json_object_new_string(cmd));
	if (args)
		json_object_object_add(o, "arguments", json_object_get(args));
	if (asprintf(&s, "%s\n",
		     json_object_to_json_string_ext(
			     o, JSON_C_TO_STRING_PLAIN)) < 0)
		s = NULL;
	json_object_put(o);
	return s;
}

/* Turns the agent's {"error": {"class", "desc"}} into @err. */
static int qga_remote_error(struct json_object *e, struct hv_err *err)
{
	struct json_object *c = NULL, *d = NULL;

	json_object_object_get_ex(e, "class", &c);
	json_object_object_get_ex(e, "desc", &d);
	return hv_err_set(err, -EREMOTEIO, "the guest agent says: %s (%s)",
			  d ? json_object_get_string(d) : "no reason given",
			  c ? json_object_get_string(c) : "GenericError");
}

/*
 * The port is one caller's at a time.  hotvm's own callers (@own) wait
 * as long as it takes (each call before them ends by its deadline) and go
 * before every other client's (qga_forward()), which wait at most until
 * @dl: an outside client can delay hotvm's use of the agent by at most
 * one call, never by a queue of them.
 */
static int qga_claim(struct qga *g, bool own, const struct timespec *dl)
{
	bool ok;

	pthread_mutex_lock(&g->lock);
	if (own)
		g->own_waiting++;
	while ((g->busy || (!own && g->own_waiting)) && !g->cancelled) {
		if (own)
			pthread_cond_wait(&g->turn, &g->lock);
		else if (pthread_cond_timedwait(&g->turn, &g->lock, dl) ==
			 ETIMEDOUT)
			break;
	}
	if (own)
		g->own_waiting--;
	ok = !g->busy && (own || !g->own_waiting) && !g->cancelled;
	if (ok)
		g->busy = true;
	pthread_mutex_unlock(&g->lock);
	return ok ? 0 : -ETIMEDOUT;
}

static void qga_end(struct qga *g, int ret)
{
	pthread_mutex_lock(&g->lock);
	g->listening = false;
	g->stats.calls++;
	if (ret)
		g->stats.failed++;
	g->busy = false;
	pthread_cond_broadcast(&g->turn);
	pthread_mutex_unlock(&g->lock);
}

/*
 * The call itself, the port claimed: with @raw, the whole reply object
 * ("return" or "error") goes there; else an error reply becomes
 * -EREMOTEIO and "return" goes to @ret.
 */
static int qga_exchange(struct qga *g, const char *cmd,
			struct json_object *args, struct json_object **ret,
			struct json_object **raw, bool answer,
			const struct timespec *dl, struct hv_err *err)
{
	struct json_object *r = NULL, *v;
	char *req = qga_request(cmd, args);
	int rc;

	if (!req)
		return hv_err_set(err, -ENOMEM, NULL);
	/*
	 * After a call of hotvm's that got its reply, nothing is left in
	 * flight: the request goes at once (what the guest sent meanwhile
	 * was not listened to, and is counted stray).  After anything else
	 * (a failure, a client's call) the handshake finds the stream again;
	 * a send without answer always has it, as the agent's only word
	 * that it is there.
	 */
	if (g->in_step && answer) {
		g->in_step = false;
		qga_listen(g);
		rc = 0;
	} else {
		rc = qga_sync(g, dl, err);
	}
	if (!rc) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		pthread_mutex_lock(&g->lock);
		g->sent_us = (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
		pthread_mutex_unlock(&g->lock);
		rc = qga_write(g, req, strlen(req), !answer, dl, err);
	}
	free(req);
	if (rc || !answer)
		return rc;
	rc = qga_reply(g, dl, &r, err);
	if (rc)
		return rc;
	if (raw) {
		*raw = r;
		return 0;
	}
	if (json_object_object_get_ex(r, "error", &v)) {
		rc = qga_remote_error(v, err);
	} else if (ret) {
		json_object_object_get_ex(r, "return", &v);
		*ret = json_object_get(v);
	}
	json_object_put(r);
	return rc;
}

/* hotvm's own call: its deadline starts once it has the port. */
static int qga_own(struct qga *g, const char *cmd, struct json_object *args,
		   struct json_object **ret, bool answer, int timeout_ms,
		   struct hv_err *err)
{
	struct timespec dl, t0, t1;
	unsigned long long us;
	int rc;

	if (qga_claim(g, true, NULL))
		return hv_err_set(err, -ECANCELED,
				  "hotvm stops: no more calls to the guest "
				  "agent");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	dl = hv_deadline(timeout_ms);
	rc = qga_exchange(g, cmd, args, ret, NULL, answer, &dl, err);
	g->in_step = !rc && answer;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = (unsigned long long)((t1.tv_sec - t0.tv_sec) * 1000000 +
				  (t1.tv_nsec - t0.tv_nsec) / 1000);
	pthread_mutex_lock(&g->lock);
	g->stats.own_us += us;
	if (!strcmp(cmd, "guest-set-vcpus"))
		g->stats.set_vcpus_us += us;
	pthread_mutex_unlock(&g->lock);
	qga_end(g, rc);
	return rc;
}

int qga_call(struct qga *g, const char *cmd, struct json_object *args,
	     struct json_object **ret, int timeout_ms, struct hv_err *err)
{
	if (ret)
		*ret = NULL;
	return qga_own(g, cmd, args, ret, true, timeout_ms, err);
}

int qga_send(struct qga *g, const char *cmd, struct json_object *args,
	     int timeout_ms, struct hv_err *err)
{
	return qga_own(g, cmd, args, NULL, false, timeout_ms, err);
}

int qga_forward(struct qga *g, const char *cmd, struct json_object *args,
		bool answer, struct json_object **reply, int timeout_ms,
		struct hv_err *err)
{
	struct timespec dl = hv_deadline(timeout_ms);
	int rc;

	*reply = NULL;
	if (qga_claim(g, false, &dl)) {
		qga_count(g, &g->stats.timeouts, 1);
		return hv_err_set(err, -ETIMEDOUT,
				  "the guest agent stayed busy with hotvm's "
				  "own calls");
	}
	g->in_step = false; /* its late reply must not be hotvm's */
	rc = qga_exchange(g, cmd, args, NULL, answer ? reply : NULL, answer,
			  &dl, err);
	qga_end(g, rc);
	return rc;
}

void qga_cancel(struct qga *g)
{
	pthread_mutex_lock(&g->lock);
	g->cancelled = true;
	pthread_cond_broadcast(&g->cond);
	pthread_cond_broadcast(&g->turn);
	pthread_mutex_unlock(&g->lock);
}

void qga_get_stats(struct qga *g, struct qga_stats *out)
{
	pthread_mutex_lock(&g->lock);
	*out = g->stats;
	pthread_mutex_unlock(&g->lock);
}

int64_t qga_last_sent_us(struct qga *g)
{
	int64_t us;

	pthread_mutex_lock(&g->lock);
	us = g->sent_us;
	pthread_mutex_unlock(&g->lock);
	return us;
}
