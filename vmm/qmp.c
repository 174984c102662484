// SPDX-License-Identifier: GPL-2.0-only
/*
 * QMP server: the control API's transport (see include/qmp.h).
 *
 * The API is driven by orchestration and must never take the VMM down, so
 * every input is hostile: bad JSON gets an error and the parser starts
 * over at the next line, a request longer than max_request or a client whose
 * unread replies exceed max_output is dropped, and no write ever blocks the
 * server thread (non-blocking sockets, MSG_NOSIGNAL).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "qmp.h"
#include "vmm_log.h"

#ifndef HOTVM_VERSION
#define HOTVM_VERSION "0.1.0"
#endif

/* The QEMU version hotvm's greeting claims: what QMP tools key off. */
#define QMP_QEMU_MAJOR 7
#define QMP_QEMU_MINOR 2
#define QMP_QEMU_MICRO 0

#define QMP_READ_CHUNK 65536
#define QMP_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

struct qmp_event {
	struct qmp_event *next;
	size_t len;
	char text[]; /* serialised, without the line end */
};

struct qmp_conn {
	int fd;
	struct json_tokener *tok;
	bool negotiated;
	bool dead;
	/* Sent all it will send (socat, nc -U): drain the replies, then close. */
	bool eof;
	/* After a parse error: drop input up to the next newline, then resync. */
	bool skip_line;
	size_t req_bytes; /* fed into the request being parsed */
	char *out;
	size_t out_pos, out_len, out_cap;
};

struct qmp_server {
	char *path;
	dev_t dev;
	ino_t ino;
	int listen_fd;
	int wake_fd;
	void *ctx;
	unsigned int max_clients;
	size_t max_request;
	size_t max_output;
	char *greeting;

	const struct qmp_command **cmds;
	size_t n_cmds;

	struct qmp_conn **conns;
	size_t n_conns;
	atomic_uint n_clients;

	pthread_t thread;
	bool started;
	bool accept_paused;
	atomic_bool stopping;

	pthread_mutex_t lock; /* protects the event queue */
	struct qmp_event *ev_head, **ev_tail;
	unsigned int n_events;

	char rbuf[QMP_READ_CHUNK];
};

int qmp_error_set(struct qmp_error *err, const char *class, const char *fmt,
		  ...)
{
	va_list ap;

	err->class = class;
	va_start(ap, fmt);
	vsnprintf(err->desc, sizeof(err->desc), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ---- argument helpers ---- */

static int arg_get(struct json_object *args, const char *name, bool required,
		   struct json_object **val, struct qmp_error *err)
{
	if (!args || !json_object_object_get_ex(args, name, val)) {
		if (required)
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Parameter '%s' is missing", name);
		return 0;
	}
	return 1;
}

static int arg_type_error(const char *name, const char *type,
			  struct qmp_error *err)
{
	return qmp_error_set(err, QMP_ERROR_GENERIC,
			     "Invalid parameter type for '%s', expected: %s",
			     name, type);
}

int qmp_arg_int(struct json_object *args, const char *name, bool required,
		int64_t *val, struct qmp_error *err)
{
	struct json_object *o;
	int rc = arg_get(args, name, required, &o, err);

	if (rc <= 0)
		return rc;
	if (!json_object_is_type(o, json_type_int))
		return arg_type_error(name, "integer", err);
	/* json-c keeps values above INT64_MAX as unsigned: not ours. */
	if (json_object_get_uint64(o) > INT64_MAX &&
	    json_object_get_int64(o) >= 0)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Parameter '%s' expects %s", name,
				     "an integer that fits in int64");
	*val = json_object_get_int64(o);
	return 1;
}

int qmp_arg_int_range(struct json_object *args, const char *name, bool required,
		      int64_t min, int64_t max, int64_t *val,
		      struct qmp_error *err)
{
	int64_t v;
	int rc = qmp_arg_int(args, name, required, &v, err);

	if (rc <= 0)
		return rc;
	if (v < min || v > max)
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Parameter '%s' expects a value between "
				     "%lld and %lld",
				     name, (long long)min, (long long)max);
	*val = v;
	return 1;
}

int qmp_arg_string(struct json_object *args, const char *name, bool required,
		   const char **val, struct qmp_error *err)
{
	struct json_object *o;
	int rc = arg_get(args, name, required, &o, err);

	if (rc <= 0)
		return rc;
	if (!json_object_is_type(o, json_type_string))
		return arg_type_error(name, "string", err);
	*val = json_object_get_string(o);
	return 1;
}

int qmp_arg_bool(struct json_object *args, const char *name, bool required,
		 bool *val, struct qmp_error *err)
{
	struct json_object *o;
	int rc = arg_get(args, name, required, &o, err);

	if (rc <= 0)
		return rc;
	if (!json_object_is_type(o, json_type_boolean))
		return arg_type_error(name, "boolean", err);
	*val = json_object_get_boolean(o);
	return 1;
}

int qmp_check_args(struct json_object *args, const char *const allowed[],
		   struct qmp_error *err)
{
	if (!args)
		return 0;
	json_object_object_foreach(args, key, val)
	{
		size_t i;

		(void)val;
		for (i = 0; allowed && allowed[i]; i++)
			if (!strcmp(key, allowed[i]))
				break;
		if (!allowed || !allowed[i])
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Parameter '%s' is unexpected",
					     key);
	}
	return 0;
}

/* ---- output ---- */

static void conn_flush(struct qmp_conn *c)
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

/* Queues one message and its "\r\n" (QEMU's line end) and tries to send. */
static void conn_send(struct qmp_server *s, struct qmp_conn *c,
		      const char *text, size_t len)
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
		char *p;

		while (cap < need)
			cap *= 2;
		p = realloc(c->out, cap);
		if (!p) {
			pr_err("api: dropping client fd %d: out of memory",
			       c->fd);
			c->dead = true;
			return;
		}
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, text, len);
	memcpy(c->out + c->out_len + len, "\r\n", 2);
	c->out_len += len + 2;
	conn_flush(c);
}

static void conn_send_json(struct qmp_server *s, struct qmp_conn *c,
			   struct json_object *o)
{
	size_t len;
	const char *text =
		json_object_to_json_string_length(o, QMP_JSON_FLAGS, &len);

	if (text)
		conn_send(s, c, text, len);
}

static struct json_object *error_object(const char *class, const char *desc)
{
	struct json_object *e = json_object_new_object();
	struct json_object *r = json_object_new_object();

	json_object_object_add(e, "class", json_object_new_string(class));
	json_object_object_add(e, "desc", json_object_new_string(desc));
	json_object_object_add(r, "error", e);
	return r;
}

/* ---- events ---- */

int qmp_emit_event(struct qmp_server *s, const char *name,
		   struct json_object *data)
{
	struct json_object *ev = json_object_new_object();
	struct json_object *ts = json_object_new_object();
	struct qmp_event *e;
	struct timeval tv;
	const char *text;
	size_t len;
	uint64_t one = 1;
	int rc = 0;

	/* Stamped when it happened, not when the server gets to write it. */
	gettimeofday(&tv, NULL);
	json_object_object_add(ev, "event", json_object_new_string(name));
	if (data)
		json_object_object_add(ev, "data", data);
	json_object_object_add(ts, "seconds", json_object_new_int64(tv.tv_sec));
	json_object_object_add(ts, "microseconds",
			       json_object_new_int64(tv.tv_usec));
	json_object_object_add(ev, "timestamp", ts);
	/*
	 * Serialised here, in the emitting thread: json-c objects are not
	 * thread-safe, so none crosses to the server thread.
	 */
	text = json_object_to_json_string_length(ev, QMP_JSON_FLAGS, &len);
	e = text ? malloc(sizeof(*e) + len + 1) : NULL;
	if (!e) {
		json_object_put(ev);
		return -ENOMEM;
	}
	e->next = NULL;
	e->len = len;
	memcpy(e->text, text, len + 1);
	json_object_put(ev);

	pthread_mutex_lock(&s->lock);
	if (s->n_events >= QMP_MAX_PENDING_EVENTS) {
		rc = -ENOSPC;
	} else {
		*s->ev_tail = e;
		s->ev_tail = &e->next;
		s->n_events++;
	}
	pthread_mutex_unlock(&s->lock);
	if (rc) {
		pr_err("api: event %s dropped: %u events already queued", name,
		       QMP_MAX_PENDING_EVENTS);
		free(e);
		return rc;
	}
	while (write(s->wake_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	return 0;
}

static void deliver_events(struct qmp_server *s)
{
	struct qmp_event *e, *next;

	pthread_mutex_lock(&s->lock);
	e = s->ev_head;
	s->ev_head = NULL;
	s->ev_tail = &s->ev_head;
	s->n_events = 0;
	pthread_mutex_unlock(&s->lock);

	for (; e; e = next) {
		next = e->next;
		for (size_t i = 0; i < s->n_conns; i++)
			if (s->conns[i]->negotiated)
				conn_send(s, s->conns[i], e->text, e->len);
		free(e);
	}
}

/* ---- dispatch ---- */

static const struct qmp_command *find_command(struct qmp_server *s,
					      const char *name)
{
	for (size_t i = 0; i < s->n_cmds; i++)
		if (!strcmp(s->cmds[i]->name, name))
			return s->cmds[i];
	return NULL;
}

static int builtin_capabilities(struct qmp_conn *c, struct json_object *args,
				struct qmp_error *err)
{
	static const char *const allowed[] = { "enable", NULL };
	struct json_object *en;
	int rc = qmp_check_args(args, allowed, err);

	if (rc)
		return rc;
	if (c->negotiated)
		return qmp_error_set(err, QMP_ERROR_COMMAND_NOT_FOUND,
				     "Capabilities negotiation is already "
				     "complete, command ignored");
	if (json_object_object_get_ex(args, "enable", &en)) {
		if (!json_object_is_type(en, json_type_array))
			return arg_type_error("enable", "array", err);
		/* The greeting offers no capability, so none can be enabled. */
		if (json_object_array_length(en)) {
			struct json_object *cap =
				json_object_array_get_idx(en, 0);

			if (!json_object_is_type(cap, json_type_string))
				return arg_type_error("enable", "string", err);
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Capability '%s' not available",
					     json_object_get_string(cap));
		}
	}
	c->negotiated = true;
	return 0;
}

static int builtin_query_commands(struct qmp_server *s,
				  struct json_object *args,
				  struct json_object **ret,
				  struct qmp_error *err)
{
	static const char *const builtins[] = { "qmp_capabilities",
						"query-commands" };
	static const char *const allowed[] = { NULL };
	struct json_object *list;
	int rc = qmp_check_args(args, allowed, err);

	if (rc)
		return rc;
	list = json_object_new_array();
	for (size_t i = 0; i < 2 + s->n_cmds; i++) {
		struct json_object *o = json_object_new_object();
		const char *name = i < 2 ? builtins[i] : s->cmds[i - 2]->name;

		json_object_object_add(o, "name", json_object_new_string(name));
		json_object_array_add(list, o);
	}
	*ret = list;
	return 0;
}

/*
 * QEMU's checks of a request's shape (qmp_dispatch_check_obj), with its
 * words: tools match on them.  Returns the command name or NULL with err set.
 */
static const char *check_request(struct json_object *req,
				 struct json_object **args,
				 struct qmp_error *err)
{
	const char *exec = NULL;

	*args = NULL;
	if (!json_object_is_type(req, json_type_object)) {
		qmp_error_set(err, QMP_ERROR_GENERIC,
			      "QMP input must be a JSON object");
		return NULL;
	}
	json_object_object_foreach(req, key, val)
	{
		if (!strcmp(key, "execute")) {
			if (!json_object_is_type(val, json_type_string)) {
				qmp_error_set(err, QMP_ERROR_GENERIC,
					      "QMP input member 'execute' must "
					      "be a string");
				return NULL;
			}
			exec = json_object_get_string(val);
		} else if (!strcmp(key, "arguments")) {
			if (!json_object_is_type(val, json_type_object)) {
				qmp_error_set(err, QMP_ERROR_GENERIC,
					      "QMP input member 'arguments' "
					      "must be an object");
				return NULL;
			}
			*args = val;
		} else if (strcmp(key, "id")) {
			qmp_error_set(err, QMP_ERROR_GENERIC,
				      "QMP input member '%s' is unexpected",
				      key);
			return NULL;
		}
	}
	if (!exec)
		qmp_error_set(err, QMP_ERROR_GENERIC,
			      "QMP input lacks member 'execute'");
	return exec;
}

static int run_command(struct qmp_server *s, struct qmp_conn *c,
		       const char *name, struct json_object *args,
		       struct json_object **ret, struct qmp_error *err)
{
	const struct qmp_command *cmd;
	int rc;

	if (!strcmp(name, "qmp_capabilities"))
		return builtin_capabilities(c, args, err);
	if (!c->negotiated)
		return qmp_error_set(err, QMP_ERROR_COMMAND_NOT_FOUND,
				     "Expecting capabilities negotiation "
				     "with 'qmp_capabilities'");
	if (!strcmp(name, "query-commands"))
		return builtin_query_commands(s, args, ret, err);
	cmd = find_command(s, name);
	if (!cmd)
		return qmp_error_set(err, QMP_ERROR_COMMAND_NOT_FOUND,
				     "The command %s has not been found", name);
	rc = cmd->handler(s->ctx, args, ret, err);
	if (rc && !err->class)
		qmp_error_set(err, QMP_ERROR_GENERIC, "%s",
			      strerror(rc < 0 ? -rc : EIO));
	if (!rc && err->class) /* a handler that filled err but returned 0 */
		err->class = NULL;
	return rc;
}

static void dispatch(struct qmp_server *s, struct qmp_conn *c,
		     struct json_object *req)
{
	struct qmp_error err = { 0 };
	struct json_object *args, *ret = NULL, *resp, *id = NULL;
	const char *name;
	int rc = -EINVAL;

	name = check_request(req, &args, &err);
	if (json_object_is_type(req, json_type_object))
		json_object_object_get_ex(req, "id", &id);
	if (name) {
		struct json_object *empty = NULL;

		if (!args)
			args = empty = json_object_new_object();
		rc = run_command(s, c, name, args, &ret, &err);
		json_object_put(empty);
	}
	if (rc) {
		json_object_put(ret);
		resp = error_object(err.class ? err.class : QMP_ERROR_GENERIC,
				    err.desc);
	} else {
		resp = json_object_new_object();
		json_object_object_add(resp, "return",
				       ret ? ret : json_object_new_object());
	}
	if (id)
		json_object_object_add(resp, "id", json_object_get(id));
	/* Events raised while the handler ran happened before its reply. */
	deliver_events(s);
	conn_send_json(s, c, resp);
	json_object_put(resp);
}

/* ---- input ---- */

/* Sends a last error and drops the client once it has been written. */
static void conn_fail(struct qmp_server *s, struct qmp_conn *c,
		      const char *desc)
{
	struct json_object *e = error_object(QMP_ERROR_GENERIC, desc);

	conn_send_json(s, c, e);
	json_object_put(e);
	c->dead = true;
}

static void conn_feed(struct qmp_server *s, struct qmp_conn *c, const char *buf,
		      size_t n)
{
	size_t off = 0;

	while (off < n && !c->dead) {
		struct json_object *obj;
		enum json_tokener_error jerr;
		size_t len, room;

		if (c->skip_line) {
			const char *nl = memchr(buf + off, '\n', n - off);

			if (!nl)
				return;
			off = nl - buf + 1;
			c->skip_line = false;
			continue;
		}
		/* Whitespace between requests is not part of any. */
		if (!c->req_bytes) {
			while (off < n && strchr(" \t\r\n", buf[off]))
				off++;
			if (off == n)
				return;
		}
		room = s->max_request - c->req_bytes;
		if (!room) {
			char desc[96];

			pr_err("api: dropping client fd %d: request longer "
			       "than %zu bytes",
			       c->fd, s->max_request);
			snprintf(desc, sizeof(desc),
				 "JSON parse error, request longer than %zu "
				 "bytes",
				 s->max_request);
			conn_fail(s, c, desc);
			return;
		}
		len = n - off < room ? n - off : room;
		obj = json_tokener_parse_ex(c->tok, buf + off, (int)len);
		jerr = json_tokener_get_error(c->tok);
		if (jerr == json_tokener_continue) {
			c->req_bytes += len;
			off += len;
			continue;
		}
		if (jerr != json_tokener_success) {
			struct json_object *e;
			char desc[128];

			snprintf(desc, sizeof(desc), "JSON parse error, %s",
				 json_tokener_error_desc(jerr));
			/* The offending byte starts the line to skip. */
			off += json_tokener_get_parse_end(c->tok);
			json_tokener_reset(c->tok);
			c->req_bytes = 0;
			c->skip_line = true;
			deliver_events(s);
			e = error_object(QMP_ERROR_GENERIC, desc);
			conn_send_json(s, c, e);
			json_object_put(e);
			continue;
		}
		off += json_tokener_get_parse_end(c->tok);
		json_tokener_reset(c->tok);
		c->req_bytes = 0;
		dispatch(s, c, obj);
		json_object_put(obj);
	}
}

static void conn_read(struct qmp_server *s, struct qmp_conn *c)
{
	ssize_t n;

	do
		n = recv(c->fd, s->rbuf, sizeof(s->rbuf), MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n == 0) {
		/* A half-close still wants its replies; mid-request, no matter. */
		c->eof = true;
		c->dead = c->out_pos == c->out_len;
		return;
	}
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
		c->dead = true;
		return;
	}
	if (n > 0)
		conn_feed(s, c, s->rbuf, n);
}

/* ---- connections ---- */

static void conn_free(struct qmp_conn *c)
{
	close(c->fd);
	json_tokener_free(c->tok);
	free(c->out);
	free(c);
}

static void refuse(struct qmp_server *s, int fd)
{
	static const char msg[] =
		"{\"error\":{\"class\":\"GenericError\",\"desc\":\"too many "
		"clients of the control API\"}}\r\n";

	pr_err("api: refusing a connection: %u clients already connected "
	       "(limit %u)",
	       s->max_clients, s->max_clients);
	while (send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) <
		       0 &&
	       errno == EINTR)
		;
	close(fd);
}

static void accept_clients(struct qmp_server *s)
{
	for (;;) {
		struct qmp_conn *c, **conns;
		int fd = accept4(s->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				s->accept_paused = true;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				pr_err("api: accept: %s", strerror(errno));
			return;
		}
		if (s->n_conns >= s->max_clients) {
			refuse(s, fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		conns = realloc(s->conns, (s->n_conns + 1) * sizeof(*conns));
		if (conns)
			s->conns = conns;
		if (!c || !conns || !(c->tok = json_tokener_new())) {
			pr_err("api: dropping a new client: out of memory");
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		s->conns[s->n_conns++] = c;
		atomic_store(&s->n_clients, s->n_conns);
		conn_send(s, c, s->greeting, strlen(s->greeting));
	}
}

static void reap(struct qmp_server *s)
{
	size_t j = 0;

	for (size_t i = 0; i < s->n_conns; i++) {
		if (s->conns[i]->dead)
			conn_free(s->conns[i]);
		else
			s->conns[j++] = s->conns[i];
	}
	s->n_conns = j;
	atomic_store(&s->n_clients, j);
}

static void *server_thread(void *arg)
{
	struct qmp_server *s = arg;
	struct pollfd *pfd = NULL;
	size_t pfd_cap = 0;

	while (!atomic_load(&s->stopping)) {
		size_t nfds = 2 + s->n_conns;
		int n;

		if (nfds > pfd_cap) {
			struct pollfd *p = realloc(pfd, nfds * sizeof(*p));

			if (!p) {
				pr_err("api: out of memory; server stopped");
				break;
			}
			pfd = p;
			pfd_cap = nfds;
		}
		pfd[0] = (struct pollfd){ .fd = s->wake_fd, .events = POLLIN };
		/* Out of fds: stop accepting for a while rather than spin. */
		pfd[1] = (struct pollfd){ .fd = s->accept_paused ? -1
								 : s->listen_fd,
					  .events = POLLIN };
		for (size_t i = 0; i < s->n_conns; i++) {
			struct qmp_conn *c = s->conns[i];

			pfd[2 + i] = (struct pollfd){
				.fd = c->fd,
				.events =
					(c->eof ? 0 : POLLIN) |
					(c->out_len > c->out_pos ? POLLOUT : 0),
			};
		}
		n = poll(pfd, nfds, s->accept_paused ? 100 : -1);
		s->accept_paused = false;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pr_err("api: poll: %s; server stopped",
			       strerror(errno));
			break;
		}
		if (pfd[0].revents) {
			uint64_t v;

			while (read(s->wake_fd, &v, sizeof(v)) < 0 &&
			       errno == EINTR)
				;
		}
		deliver_events(s);
		for (size_t i = 0; i < nfds - 2; i++) {
			struct qmp_conn *c = s->conns[i];
			short re = pfd[2 + i].revents;

			if (re & POLLOUT)
				conn_flush(c);
			if (c->eof) {
				c->dead |= c->out_pos == c->out_len ||
					   (re & (POLLERR | POLLHUP));
				continue;
			}
			if (re & (POLLIN | POLLHUP | POLLERR))
				conn_read(s, c);
		}
		reap(s);
		if (pfd[1].revents)
			accept_clients(s);
	}
	/* Last words: the reply to `quit`, a SHUTDOWN event. */
	deliver_events(s);
	for (size_t i = 0; i < s->n_conns; i++)
		conn_flush(s->conns[i]);
	free(pfd);
	return NULL;
}

/* ---- lifecycle ---- */

static int make_greeting(struct qmp_server *s, const char *package)
{
	struct json_object *g = json_object_new_object();
	struct json_object *qmp = json_object_new_object();
	struct json_object *ver = json_object_new_object();
	struct json_object *qemu = json_object_new_object();

	json_object_object_add(qemu, "micro",
			       json_object_new_int(QMP_QEMU_MICRO));
	json_object_object_add(qemu, "minor",
			       json_object_new_int(QMP_QEMU_MINOR));
	json_object_object_add(qemu, "major",
			       json_object_new_int(QMP_QEMU_MAJOR));
	json_object_object_add(ver, "qemu", qemu);
	json_object_object_add(ver, "package", json_object_new_string(package));
	json_object_object_add(qmp, "version", ver);
	json_object_object_add(qmp, "capabilities", json_object_new_array());
	json_object_object_add(g, "QMP", qmp);
	s->greeting = strdup(json_object_to_json_string_ext(g, QMP_JSON_FLAGS));
	json_object_put(g);
	return s->greeting ? 0 : -ENOMEM;
}

/* A socket at path: stale (nobody accepts) or in use by a live process? */
static int probe_stale(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int rc;

	if (fd < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	rc = rc ? -errno : -EADDRINUSE;
	close(fd);
	return rc == -ECONNREFUSED ? 0 : rc;
}

static int bind_socket(struct qmp_server *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, rc;

	if (strlen(s->path) >= sizeof(sa.sun_path)) {
		pr_err("api: socket path %s is too long (limit %zu bytes)",
		       s->path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, s->path);
	if (!lstat(s->path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			pr_err("api: %s exists and is not a socket; refusing "
			       "to replace it",
			       s->path);
			return -EEXIST;
		}
		rc = probe_stale(&sa);
		if (rc) {
			pr_err("api: %s: %s; is another hotvm using it?",
			       s->path,
			       rc == -EADDRINUSE ? "a server is listening"
						 : strerror(-rc));
			return rc;
		}
		unlink(s->path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Linux gives the socket file the inode's mode: no 0777 window. */
	if (fchmod(fd, 0600) || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(s->path, 0600) || stat(s->path, &st) || listen(fd, 64)) {
		rc = -errno;
		pr_err("api: cannot listen on %s: %s", s->path, strerror(-rc));
		close(fd);
		return rc;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->listen_fd = fd;
	return 0;
}

static void server_free(struct qmp_server *s)
{
	struct qmp_event *e, *next;
	struct stat st;

	for (size_t i = 0; i < s->n_conns; i++)
		conn_free(s->conns[i]);
	free(s->conns);
	for (e = s->ev_head; e; e = next) {
		next = e->next;
		free(e);
	}
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		/* Only our own socket: a successor may have replaced it. */
		if (!lstat(s->path, &st) && S_ISSOCK(st.st_mode) &&
		    st.st_dev == s->dev && st.st_ino == s->ino)
			unlink(s->path);
	}
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	pthread_mutex_destroy(&s->lock);
	free(s->cmds);
	free(s->greeting);
	free(s->path);
	free(s);
}

int qmp_server_create(const struct qmp_server_opts *opts,
		      struct qmp_server **out)
{
	struct qmp_server *s;
	int rc;

	if (!opts->path || !*opts->path)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct qmp_server){
		.listen_fd = -1,
		.wake_fd = -1,
		.ctx = opts->ctx,
		.max_clients = opts->max_clients ?: QMP_DEFAULT_MAX_CLIENTS,
		.max_request = opts->max_request ?: QMP_DEFAULT_MAX_REQUEST,
		.max_output = opts->max_output ?: QMP_DEFAULT_MAX_OUTPUT,
	};
	s->ev_tail = &s->ev_head;
	pthread_mutex_init(&s->lock, NULL);
	s->path = strdup(opts->path);
	rc = s->path ? make_greeting(s, opts->package ?: "hotvm-" HOTVM_VERSION)
		     : -ENOMEM;
	if (!rc) {
		s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		rc = s->wake_fd < 0 ? -errno : 0;
	}
	if (!rc)
		rc = bind_socket(s);
	if (rc) {
		server_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int qmp_server_register(struct qmp_server *s, const struct qmp_command *cmds,
			size_t n)
{
	const struct qmp_command **p;

	if (s->started)
		return -EBUSY;
	for (size_t i = 0; i < n; i++) {
		if (!cmds[i].name || !cmds[i].handler)
			return -EINVAL;
		if (!strcmp(cmds[i].name, "qmp_capabilities") ||
		    !strcmp(cmds[i].name, "query-commands") ||
		    find_command(s, cmds[i].name))
			return -EEXIST;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(cmds[i].name, cmds[j].name))
				return -EEXIST;
	}
	p = realloc(s->cmds, (s->n_cmds + n) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->cmds = p;
	for (size_t i = 0; i < n; i++)
		s->cmds[s->n_cmds++] = &cmds[i];
	return 0;
}

int qmp_server_start(struct qmp_server *s)
{
	int rc;

	if (s->started)
		return -EBUSY;
	rc = -pthread_create(&s->thread, NULL, server_thread, s);
	if (!rc)
		s->started = true;
	return rc;
}

void qmp_server_stop(struct qmp_server *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	if (s->started) {
		atomic_store(&s->stopping, true);
		while (write(s->wake_fd, &one, sizeof(one)) < 0 &&
		       errno == EINTR)
			;
		pthread_join(s->thread, NULL);
	}
	server_free(s);
}

unsigned int qmp_server_clients(struct qmp_server *s)
{
	return atomic_load(&s->n_clients);
}
