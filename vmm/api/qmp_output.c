// SPDX-License-Identifier: GPL-2.0-only
/*
 * Replies to a client (qmp_internal.h).  No write ever blocks the I/O
 * thread (non-blocking sockets, MSG_NOSIGNAL): what the client does not
 * read waits in its output buffer, and a client whose unread replies and
 * events pass max_output is dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "qmp_internal.h"
#include "log.h"

/* Wakes the I/O thread: a reply or an event is waiting. */
void qmp_wake(struct qmp_server *s)
{
	uint64_t one = 1;

	while (write(s->wake_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

void qmp_conn_flush(struct qmp_conn *c)
{
	while (!c->dead && c->out_pos < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_pos,
				 c->out_len - c->out_pos,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				c->dead = true; /* EPIPE, ECONNRESET: gone */
			break;
		}
		c->out_pos += n;
	}
	if (c->out_pos == c->out_len)
		c->out_pos = c->out_len = 0;
}

bool qmp_conn_grow(struct qmp_conn *c, char **buf, size_t *buf_cap, size_t cap)
{
	char *p = realloc(*buf, cap);

	if (!p) {
		pr_err("api: dropping client fd %d: out of memory", c->fd);
		c->dead = true;
		return false;
	}
	*buf = p;
	*buf_cap = cap;
	return true;
}

/* Queues one message and its "\r\n" (QEMU's line end) and tries to send. */
void qmp_conn_send(struct qmp_server *s, struct qmp_conn *c, const char *text,
		   size_t len)
{
	size_t need;

	if (c->dead)
		return;
	if (c->out_pos) {
		memmove(c->out, c->out + c->out_pos, c->out_len - c->out_pos);
		c->out_len -= c->out_pos;
		c->out_pos = 0;
	}
	/* One oversized reply to a reading client is fine; a backlog is not. */
	if (c->out_len && c->out_len + len + 2 > s->max_output) {
		pr_err("api: dropping client fd %d: %zu bytes of replies and "
		       "events unread (limit %zu)",
		       c->fd, c->out_len, s->max_output);
		c->dead = true;
		return;
	}
	need = c->out_len + len + 2;
	if (need > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;

		while (cap < need)
			cap *= 2;
		if (!qmp_conn_grow(c, &c->out, &c->out_cap, cap))
			return;
	}
	memcpy(c->out + c->out_len, text, len);
	memcpy(c->out + c->out_len + len, "\r\n", 2);
	c->out_len += len + 2;
	qmp_conn_flush(c);
}

void qmp_conn_send_json(struct qmp_server *s, struct qmp_conn *c,
			struct json_object *o)
{
	size_t len;
	const char *text =
		json_object_to_json_string_length(o, QMP_JSON_FLAGS, &len);

	if (text)
		qmp_conn_send(s, c, text, len);
}

struct json_object *qmp_error_object(const char *class, const char *desc)
{
	struct json_object *e = json_object_new_object();
	struct json_object *r = json_object_new_object();

	json_object_object_add(e, "class", json_object_new_string(class));
	json_object_object_add(e, "desc", json_object_new_string(desc));
	json_object_object_add(r, "error", e);
	return r;
}

void qmp_conn_send_error(struct qmp_server *s, struct qmp_conn *c,
			 const char *desc)
{
	struct json_object *e = qmp_error_object(QMP_ERROR_GENERIC, desc);

	qmp_conn_send_json(s, c, e);
	json_object_put(e);
}
