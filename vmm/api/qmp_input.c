// SPDX-License-Identifier: GPL-2.0-only
/*
 * A client's bytes to requests (qmp_internal.h).  Every input is hostile:
 * a request's bytes are checked strictly before json-c sees them
 * (qmp_lex.h: no raw control character in a string, nothing that is not
 * UTF-8), so no reply echoes bytes that are not UTF-8; bad JSON gets an
 * error and the parser starts over at the next line (or at the next
 * request, when a truncated one is followed by a new one on the next
 * line); a duplicate key is an error, not a silent overwrite; a request
 * longer than max_request drops the client.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "qmp_internal.h"
#include "log.h"

/*
 * json-c keeps the last of duplicate keys, so compare counts: each member
 * in the text has one ':' outside strings and comments; a duplicate (and
 * whatever its first value held) is missing from the tree.
 */
static size_t text_members(const char *p, size_t n)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		char q = p[i];

		if (q == '"' || q == '\'') {
			for (i++; i < n && p[i] != q; i++)
				if (p[i] == '\\')
					i++;
		} else if (q == '/' && i + 1 < n && p[i + 1] == '*') {
			for (i += 2;
			     i + 1 < n && !(p[i] == '*' && p[i + 1] == '/');
			     i++)
				;
			i++;
		} else if (q == '/' && i + 1 < n && p[i + 1] == '/') {
			while (i < n && p[i] != '\n')
				i++;
		} else if (q == ':') {
			count++;
		}
	}
	return count;
}

static size_t tree_members(struct json_object *o)
{
	size_t count = 0;

	if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			count += tree_members(json_object_array_get_idx(o, i));
	} else if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, key, val)
		{
			(void)key;
			count += 1 + tree_members(val);
		}
	}
	return count;
}

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
 * After a parse error, a new tokener: json_tokener_reset() keeps the high
 * half of a surrogate pair read last (json-c 0.16), and the next request's
 * first \u escape would get a U+FFFD in front of it.
 */
static void conn_new_tokener(struct qmp_conn *c)
{
	struct json_tokener *tok = json_tokener_new();

	json_tokener_reset(c->tok);
	if (!tok) {
		pr_err("api: dropping client fd %d: out of memory", c->fd);
		c->dead = true;
		return;
	}
	json_tokener_free(c->tok);
	c->tok = tok;
}

/*
 * The strict check stopped at in[bad]: the request is lost, and so is the
 * rest of that line from the bad byte on (a line end inside a string is
 * itself the bad byte: the request on the next line is read).
 */
static void conn_lex_error(struct qmp_server *s, struct qmp_conn *c, size_t bad)
{
	char what[192], desc[224];

	qmp_lex_describe(&c->lex, what, sizeof(what));
	snprintf(desc, sizeof(desc), "JSON parse error, %s", what);
	conn_new_tokener(c);
	qmp_lex_reset(&c->lex, s->max_queued);
	c->fed = 0;
	conn_consume(c, bad);
	c->skip_line = true;
	conn_parse_error(s, c, desc);
}

/* Whether c has sent something that must wait for its earlier replies. */
bool qmp_conn_stalled(const struct qmp_conn *c)
{
	return c->held || c->held_reply || c->overlong ||
	       (c->inflight && c->inflight_other) ||
	       c->inflight >= QMP_BATCH_MAX; /* a bound on what one queues */
}

/* Parses and dispatches what c sent, until it needs more or is stalled. */
void qmp_conn_process(struct qmp_server *s, struct qmp_conn *c)
{
	while (!c->dead && !qmp_conn_stalled(c)) {
		struct json_object *obj = NULL;
		enum json_tokener_error jerr = json_tokener_continue;
		size_t len, good, end;
		char desc[128];

		if (c->skip_line) {
			const char *nl = memchr(c->in, '\n', c->in_len);

			if (!nl) {
				c->in_len = 0;
				return;
			}
			conn_consume(c, nl - c->in + 1);
			c->skip_line = false;
			continue;
		}
		/* Whitespace between requests is not part of any. */
		if (!c->fed) {
			size_t ws = 0;

			while (ws < c->in_len && strchr(" \t\r\n", c->in[ws]))
				ws++;
			conn_consume(c, ws);
		}
		if (c->fed == c->in_len)
			return;
		len = c->in_len - c->fed;
		if (len > s->max_request - c->fed)
			len = s->max_request - c->fed;
		/* json-c sees only what the strict check passed. */
		good = qmp_lex_scan(&c->lex, c->in + c->fed, len);
		if (good) {
			obj = json_tokener_parse_ex(c->tok, c->in + c->fed,
						    (int)good);
			jerr = json_tokener_get_error(c->tok);
		}
		if (jerr == json_tokener_continue && good < len) {
			conn_lex_error(s, c, c->fed + good);
			continue;
		}
		if (jerr == json_tokener_continue) {
			c->fed += len;
			if (c->fed < s->max_request)
				continue;
			/* Its error and the hang-up come after earlier replies. */
			if (c->inflight) {
				c->overlong = true;
				return;
			}
			pr_err("api: dropping client fd %d: request longer "
			       "than %zu bytes",
			       c->fd, s->max_request);
			snprintf(desc, sizeof(desc),
				 "JSON parse error, request longer than %zu "
				 "bytes",
				 s->max_request);
			qmp_conn_send_error(s, c, desc);
			c->dead = true;
			return;
		}
		end = c->fed + json_tokener_get_parse_end(c->tok);
		json_tokener_reset(c->tok);
		/* It may have read past the end: the rest is scanned again. */
		qmp_lex_reset(&c->lex, s->max_queued);
		c->fed = 0;
		if (jerr != json_tokener_success) {
			conn_new_tokener(c);
			snprintf(desc, sizeof(desc), "JSON parse error, %s",
				 json_tokener_error_desc(jerr));
			/*
			 * The offending byte starts what to skip, unless it
			 * begins the next request: then only the truncated
			 * one before it is lost.
			 */
			if (end < c->in_len && !new_request_at(c, end))
				c->skip_line = true;
			conn_consume(c, end < c->in_len ? end : c->in_len);
			conn_parse_error(s, c, desc);
			continue;
		}
		if (text_members(c->in, end) != tree_members(obj)) {
			conn_consume(c, end);
			json_object_put(obj);
			conn_parse_error(s, c,
					 "JSON parse error, duplicate key in "
					 "an object");
			continue;
		}
		conn_consume(c, end);
		qmp_dispatch(s, c, obj, qmp_request_cost(obj));
	}
}

void qmp_conn_read(struct qmp_server *s, struct qmp_conn *c)
{
	size_t room, limit = s->max_request + QMP_READ_CHUNK;
	ssize_t n;

	if (c->in_cap - c->in_len < QMP_READ_CHUNK && c->in_cap < limit) {
		size_t cap = c->in_cap ? c->in_cap * 2 : QMP_READ_CHUNK;
		char *p;

		if (cap > limit)
			cap = limit;
		p = realloc(c->in, cap);
		if (!p) {
			pr_err("api: dropping client fd %d: out of memory",
			       c->fd);
			c->dead = true;
			return;
		}
		c->in = p;
		c->in_cap = cap;
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
