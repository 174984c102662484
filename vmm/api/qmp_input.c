// SPDX-License-Identifier: GPL-2.0-only
/*
 * A client's bytes to requests (qmp_internal.h).  Every input is hostile:
 * a request's bytes are checked against QEMU's JSON grammar as they
 * arrive (qmp_lex.h), which also finds where the request ends, and only a
 * whole, good request is built into json-c's tree (qmp_json.h), so no
 * reply echoes bytes that are not JSON.  Bad JSON gets an error at the
 * byte where it went wrong, and reading starts over at the next line (or
 * at that byte, when it opens a new request at the start of a line: a
 * request cut short loses only itself); a duplicate key is an error, not
 * a silent overwrite; a request longer than max_request drops the client.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "qmp_internal.h"
#include "qmp_json.h"
#include "log.h"

static void conn_consume(struct qmp_conn *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
}

/*
 * A parse error at in[at]: was the request cut short by a new one?  True if
 * in[at] opens an object at the start of a line the request reached (only
 * whitespace before it on that line).
 */
static bool new_request_at(const struct qmp_conn *c, size_t at)
{
	if (c->in[at] != '{')
		return false;
	while (at-- > 0) {
		if (c->in[at] == '\n')
			return true;
		if (!strchr(" \t\r", c->in[at]))
			return false;
	}
	return false;
}

/* A parse error's reply, in its place among c's replies. */
static void conn_parse_error(struct qmp_server *s, struct qmp_conn *c,
			     const char *desc)
{
	qmp_conn_reply(s, c, qmp_error_object(QMP_ERROR_GENERIC, desc));
}

/*
 * The grammar check stopped at in[bad]: the request is lost, and so is
 * the rest of that line from the bad byte on (a line end inside a string
 * is itself the bad byte: the request on the next line is read), unless
 * the bad byte opens a new request at the start of a line.
 */
static void conn_lex_error(struct qmp_server *s, struct qmp_conn *c, size_t bad)
{
	struct hv_err err = { 0 };
	char desc[224];

	qmp_lex_describe(&c->lex, &err);
	snprintf(desc, sizeof(desc), "JSON parse error, %s", hv_err_msg(&err));
	qmp_lex_reset(&c->lex, s->max_queued);
	c->fed = 0;
	c->skip_line = !new_request_at(c, bad);
	conn_consume(c, bad);
	conn_parse_error(s, c, desc);
}

/* Whether c has sent something that must wait for its earlier replies. */
bool qmp_conn_stalled(const struct qmp_conn *c)
{
	return c->held || c->held_reply || c->overlong ||
	       (c->inflight && c->inflight_other) ||
	       c->inflight >= QMP_BATCH_MAX; /* a bound on what one queues */
}

/*
 * After a parse error the rest of its line is dropped, so that the next
 * line starts a new request.  False when c has not sent the line's end
 * yet (all it sent is dropped), true once the line is gone.
 */
static bool conn_skip_line(struct qmp_conn *c)
{
	const char *nl = memchr(c->in, '\n', c->in_len);

	if (!nl) {
		c->in_len = 0;
		return false;
	}
	conn_consume(c, nl - c->in + 1);
	c->skip_line = false;
	return true;
}

static void conn_skip_space(struct qmp_conn *c)
{
	size_t ws = 0;

	while (ws < c->in_len && strchr(" \t\r\n", c->in[ws]))
		ws++;
	conn_consume(c, ws);
}

/*
 * A request longer than the server takes: its error and the hang-up, but
 * only after the replies c is still owed (held as overlong till then).
 */
static void conn_overlong(struct qmp_server *s, struct qmp_conn *c)
{
	char desc[128];

	if (c->inflight) {
		c->overlong = true;
		return;
	}
	pr_err("api: dropping client fd %d: request longer than %zu bytes",
	       c->fd, s->max_request);
	snprintf(desc, sizeof(desc),
		 "JSON parse error, request longer than %zu bytes",
		 s->max_request);
	qmp_conn_send_error(s, c, desc);
	c->dead = true;
}

/* Parses and dispatches what c sent, until it needs more or is stalled. */
void qmp_conn_process(struct qmp_server *s, struct qmp_conn *c)
{
	while (!c->dead && !qmp_conn_stalled(c)) {
		struct json_object *obj = NULL;
		size_t len, good, end;
		struct hv_err err = { 0 };
		int rc;

		if (c->skip_line) {
			if (!conn_skip_line(c))
				return;
			continue;
		}
		/* Whitespace between requests is not part of any. */
		if (!c->fed)
			conn_skip_space(c);
		if (c->fed == c->in_len)
			return;
		len = c->in_len - c->fed;
		if (len > s->max_request - c->fed)
			len = s->max_request - c->fed;
		good = qmp_lex_scan(&c->lex, c->in + c->fed, len);
		if (c->lex.error) {
			conn_lex_error(s, c, c->fed + good);
			continue;
		}
		if (!c->lex.done) {
			c->fed += len;
			if (c->fed < s->max_request)
				continue;
			conn_overlong(s, c);
			return;
		}
		end = c->fed + good;
		qmp_lex_reset(&c->lex, s->max_queued);
		c->fed = 0;
		rc = qmp_json_build(c->in, end, &obj, &err);
		conn_consume(c, end);
		if (rc == -ENOMEM) {
			pr_err("api: dropping client fd %d: out of memory",
			       c->fd);
			c->dead = true;
			return;
		}
		if (rc) {
			char desc[160];

			snprintf(desc, sizeof(desc), "JSON parse error, %s",
				 hv_err_msg(&err));
			conn_parse_error(s, c, desc);
			continue;
		}
		qmp_dispatch(s, c, obj, qmp_request_cost(obj));
	}
}

void qmp_conn_read(struct qmp_server *s, struct qmp_conn *c)
{
	size_t room, limit = s->max_request + QMP_READ_CHUNK;
	ssize_t n;

	if (c->in_cap - c->in_len < QMP_READ_CHUNK && c->in_cap < limit) {
		size_t cap = c->in_cap ? c->in_cap * 2 : QMP_READ_CHUNK;

		if (cap > limit)
			cap = limit;
		if (!qmp_conn_grow(c, &c->in, &c->in_cap, cap))
			return;
	}
	room = c->in_cap - c->in_len;
	if (room > QMP_READ_CHUNK)
		room = QMP_READ_CHUNK;
	do
		n = recv(c->fd, c->in + c->in_len, room, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n == 0) {
		/* A half-close still wants its replies; mid-request, no matter. */
		c->eof = true;
		c->dead = c->out_pos == c->out_len && !c->inflight;
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			c->dead = true;
		return;
	}
	c->in_len += n;
	/* What this read brought is queued whole: a burst is one batch. */
	qmp_submit_hold(s);
	qmp_conn_process(s, c);
	qmp_submit_release(s);
}
