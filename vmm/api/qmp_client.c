// SPDX-License-Identifier: GPL-2.0-only
/*
 * Blocking QMP client (see vmm/api/qmp_client.h).  Replies are matched by
 * the id the client puts in every request; events that arrive meanwhile
 * are kept in a bounded ring for qmp_client_next_event().
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "clock.h"
#include "qmp_client.h"

struct qmp_client {
	int fd;
	struct json_tokener *tok;
	size_t msg_bytes; /* fed into the message being parsed */
	char buf[65536];
	size_t buf_pos, buf_len;
	struct json_object *greeting;
	struct json_object *events[QMP_CLIENT_MAX_EVENTS];
	size_t ev_head, ev_count;
	unsigned long next_id;
};

static int fail(struct qmp_client_error *err, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct qmp_client_error *err, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->class[0] = '\0';
		va_start(ap, fmt);
		vsnprintf(err->desc, sizeof(err->desc), fmt, ap);
		va_end(ap);
	}
	return rc;
}

static long long deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : hv_now_ms() + timeout_ms;
}

static int remaining(long long deadline)
{
	long long left;

	if (deadline < 0)
		return -1;
	left = deadline - hv_now_ms();
	return left < 0 ? 0 : (int)left;
}

/* Reads one whole JSON message. */
static int read_message(struct qmp_client *c, struct json_object **out,
			long long deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		enum json_tokener_error jerr;
		struct json_object *obj;
		size_t len;
		ssize_t n;
		int rc;

		if (!c->msg_bytes)
			while (c->buf_pos < c->buf_len &&
			       strchr(" \t\r\n", c->buf[c->buf_pos]))
				c->buf_pos++;
		if (c->buf_pos < c->buf_len) {
			len = c->buf_len - c->buf_pos;
			obj = json_tokener_parse_ex(c->tok, c->buf + c->buf_pos,
						    (int)len);
			jerr = json_tokener_get_error(c->tok);
			if (jerr == json_tokener_success) {
				c->buf_pos +=
					json_tokener_get_parse_end(c->tok);
				json_tokener_reset(c->tok);
				c->msg_bytes = 0;
				*out = obj;
				return 0;
			}
			if (jerr != json_tokener_continue)
				return -EPROTO;
			c->buf_pos = c->buf_len;
			c->msg_bytes += len;
			if (c->msg_bytes > QMP_CLIENT_MAX_MESSAGE)
				return -EMSGSIZE;
		}
		c->buf_pos = c->buf_len = 0;
		rc = poll(&pfd, 1, remaining(deadline));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (!rc)
			return -ETIMEDOUT;
		n = recv(c->fd, c->buf, sizeof(c->buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -ECONNRESET;
		c->buf_len = n;
	}
}

static void keep_event(struct qmp_client *c, struct json_object *ev)
{
	if (c->ev_count == QMP_CLIENT_MAX_EVENTS) {
		json_object_put(c->events[c->ev_head]);
		c->ev_head = (c->ev_head + 1) % QMP_CLIENT_MAX_EVENTS;
		c->ev_count--;
	}
	c->events[(c->ev_head + c->ev_count) % QMP_CLIENT_MAX_EVENTS] = ev;
	c->ev_count++;
}

static bool is_event(struct json_object *m)
{
	return json_object_is_type(m, json_type_object) &&
	       json_object_object_get_ex(m, "event", NULL);
}

static int send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

static void copy_error(struct json_object *e, struct qmp_client_error *err)
{
	struct json_object *cls = NULL, *desc = NULL;

	if (!err)
		return;
	json_object_object_get_ex(e, "class", &cls);
	json_object_object_get_ex(e, "desc", &desc);
	snprintf(err->class, sizeof(err->class), "%s",
		 json_object_is_type(cls, json_type_string)
			 ? json_object_get_string(cls)
			 : "GenericError");
	snprintf(err->desc, sizeof(err->desc), "%s",
		 json_object_is_type(desc, json_type_string)
			 ? json_object_get_string(desc)
			 : "(no description)");
}

long qmp_client_send(struct qmp_client *c, const char *name,
		     struct json_object *args, struct qmp_client_error *err)
{
	struct json_object *req = json_object_new_object();
	char id[32], *line;
	size_t len;
	const char *text;
	int rc;

	snprintf(id, sizeof(id), "hotvm-%lu", ++c->next_id);
	json_object_object_add(req, "execute", json_object_new_string(name));
	if (args)
		json_object_object_add(req, "arguments", json_object_get(args));
	json_object_object_add(req, "id", json_object_new_string(id));
	text = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN,
						 &len);
	/*
	 * One write with its newline: a server may act on the object before
	 * the newline comes (quit closes the socket), and a separate "\n"
	 * would then fail with EPIPE though the request was served.
	 */
	line = malloc(len + 1);
	if (!line) {
		json_object_put(req);
		return fail(err, -ENOMEM, "sending %s: out of memory", name);
	}
	memcpy(line, text, len);
	line[len] = '\n';
	rc = send_all(c->fd, line, len + 1);
	free(line);
	json_object_put(req);
	if (rc)
		return fail(err, rc, "sending %s: %s", name, strerror(-rc));
	return (long)c->next_id;
}

int qmp_client_wait(struct qmp_client *c, const char *name, long seq,
		    struct json_object **reply, struct qmp_client_error *err,
		    int timeout_ms)
{
	long long deadline = deadline_of(timeout_ms);
	char id[32];
	int rc;

	if (reply)
		*reply = NULL;
	snprintf(id, sizeof(id), "hotvm-%ld", seq);
	for (;;) {
		struct json_object *m, *mid, *val;

		rc = read_message(c, &m, deadline);
		if (rc)
			return fail(err, rc, "waiting for the reply to %s: %s",
				    name, strerror(-rc));
		if (is_event(m)) {
			keep_event(c, m);
			continue;
		}
		/*
		 * A reply without an id answers a request the server could
		 * not read (parse error): with one request in flight, ours;
		 * one with an earlier id, a request nobody waits for.
		 */
		if (json_object_object_get_ex(m, "id", &mid) &&
		    (!json_object_is_type(mid, json_type_string) ||
		     strcmp(json_object_get_string(mid), id))) {
			json_object_put(m);
			continue;
		}
		if (json_object_object_get_ex(m, "return", &val)) {
			if (reply)
				*reply = json_object_get(val);
			json_object_put(m);
			return 0;
		}
		if (json_object_object_get_ex(m, "error", &val)) {
			copy_error(val, err);
			json_object_put(m);
			return -EREMOTEIO;
		}
		json_object_put(m);
		return fail(err, -EPROTO,
			    "reply to %s has neither return "
			    "nor error",
			    name);
	}
}

int qmp_client_execute(struct qmp_client *c, const char *name,
		       struct json_object *args, struct json_object **reply,
		       struct qmp_client_error *err, int timeout_ms)
{
	long seq = qmp_client_send(c, name, args, err);

	if (reply)
		*reply = NULL;
	if (seq < 0)
		return (int)seq;
	return qmp_client_wait(c, name, seq, reply, err, timeout_ms);
}

int qmp_client_next_event(struct qmp_client *c, struct json_object **event,
			  int timeout_ms)
{
	long long deadline = deadline_of(timeout_ms);

	for (;;) {
		struct json_object *m;
		int rc;

		if (c->ev_count) {
			*event = c->events[c->ev_head];
			c->ev_head = (c->ev_head + 1) % QMP_CLIENT_MAX_EVENTS;
			c->ev_count--;
			return 0;
		}
		rc = read_message(c, &m, deadline);
		if (rc)
			return rc;
		if (is_event(m))
			keep_event(c, m);
		else
			json_object_put(m); /* a stray reply: nobody waits */
	}
}

size_t qmp_client_pending_events(struct qmp_client *c)
{
	return c->ev_count;
}

int qmp_client_connect(const char *path, int negotiate, int timeout_ms,
		       struct qmp_client **out, struct qmp_client_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct json_object *m, *val;
	struct qmp_client *c;
	int rc;

	if (strlen(path) >= sizeof(sa.sun_path))
		return fail(err, -ENAMETOOLONG, "socket path %s is too long",
			    path);
	strcpy(sa.sun_path, path);
	c = calloc(1, sizeof(*c));
	if (!c)
		return fail(err, -ENOMEM, "out of memory");
	c->tok = json_tokener_new();
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!c->tok || c->fd < 0) {
		rc = fail(err, c->tok ? -errno : -ENOMEM, "socket: %s",
			  strerror(c->tok ? errno : ENOMEM));
		goto out_free;
	}
	while ((rc = connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) &&
	       errno == EINTR)
		;
	if (rc) {
		rc = fail(err, -errno,
			  "cannot connect to %s: %s; is a VM running with "
			  "--api-socket %s?",
			  path, strerror(errno), path);
		goto out_free;
	}
	rc = read_message(c, &m, deadline_of(timeout_ms));
	if (rc) {
		rc = fail(err, rc, "no greeting from %s: %s", path,
			  strerror(-rc));
		goto out_free;
	}
	if (json_object_object_get_ex(m, "error", &val)) {
		copy_error(val, err);
		json_object_put(m);
		rc = -ECONNREFUSED;
		goto out_free;
	}
	if (!json_object_object_get_ex(m, "QMP", NULL)) {
		json_object_put(m);
		rc = fail(err, -EPROTO, "%s did not greet with QMP", path);
		goto out_free;
	}
	c->greeting = m;
	if (negotiate) {
		rc = qmp_client_execute(c, "qmp_capabilities", NULL, NULL, err,
					timeout_ms);
		if (rc)
			goto out_free;
	}
	*out = c;
	return 0;

out_free:
	qmp_client_close(c);
	return rc;
}

struct json_object *qmp_client_greeting(struct qmp_client *c)
{
	return c->greeting;
}

int qmp_client_fd(struct qmp_client *c)
{
	return c->fd;
}

void qmp_client_close(struct qmp_client *c)
{
	if (!c)
		return;
	while (c->ev_count) {
		json_object_put(c->events[c->ev_head]);
		c->ev_head = (c->ev_head + 1) % QMP_CLIENT_MAX_EVENTS;
		c->ev_count--;
	}
	if (c->fd >= 0)
		close(c->fd);
	json_tokener_free(c->tok);
	json_object_put(c->greeting);
	free(c);
}
