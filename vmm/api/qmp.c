// SPDX-License-Identifier: GPL-2.0-only
/*
 * QMP server: the control API's transport (see vmm/api/qmp.h).
 *
 * The API is driven by orchestration and must never take the VMM down, so
 * every input is hostile: bad JSON gets an error and the parser starts
 * over at the next line (or at the next request, when a truncated one is
 * followed by a new one on the next line); a request's bytes are checked
 * strictly before json-c sees them (qmp_lex.h: no raw control character in
 * a string, nothing that is not UTF-8), so no reply echoes bytes that are
 * not UTF-8; a request longer than max_request or a client whose unread
 * replies exceed max_output is dropped; what a client has read ahead is
 * bounded in bytes (max_queued, max_queued_total: past them a request is
 * refused); and no write ever blocks the I/O thread (non-blocking sockets,
 * MSG_NOSIGNAL).  Handlers that may block run on worker threads, so that
 * nothing a guest or a hook does can stall events, queries or `quit`.
 *
 * Ownership across threads: a request's JSON object goes to a worker with
 * its job and never comes back; the worker hands back the reply as text.
 * No json-c object is ever shared by two threads.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "qmp.h"
#include "qmp_lex.h"
#include "log.h"
#include "seccomp_policy.h"

#ifndef HOTVM_VERSION
#define HOTVM_VERSION "0.1.0"
#endif

/* The QEMU version hotvm's greeting claims: what QMP tools key off. */
#define QMP_QEMU_MAJOR 7
#define QMP_QEMU_MINOR 2
#define QMP_QEMU_MICRO 0

#define QMP_READ_CHUNK 65536
#define QMP_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define QMP_MAX_GROUPS 256 /* of a peer, for the api_gid check */

struct qmp_event {
	struct qmp_event *next;
	bool lossy;
	size_t len;
	char text[]; /* serialised, without the line end */
};

struct qmp_conn {
	int fd;
	uint64_t id; /* a job's way back to its client, which may be gone */
	struct json_tokener *tok;
	struct qmp_lex lex; /* the same bytes as tok, checked strictly first */
	bool negotiated;
	bool dead;
	/* Sent all it will send (socat, nc -U): drain the replies, then close. */
	bool eof;
	/* After a parse error: drop input up to the next newline, then resync. */
	bool skip_line;
	/*
	 * Requests of this client on the workers, not yet answered; whether
	 * one of them is not an operation (then nothing is read ahead); and
	 * what came after them that must wait until they are answered (a
	 * parsed request, or a reply already made: a parse error's, a
	 * refusal's).  queued: the estimated bytes of the requests on the
	 * workers and held (its share of s->queued).
	 */
	unsigned int inflight;
	bool inflight_other;
	struct json_object *held;
	size_t held_cost;
	char *held_reply;
	size_t queued;
	bool refusal_logged;
	/* Reading ahead, a request reached max_request: judged after them. */
	bool overlong;
	long long since_ms; /* accepted at, for the negotiation timeout */
	/*
	 * Received bytes not yet consumed: the request being parsed from
	 * in[0] (fed bytes of it so far) and what follows it.
	 */
	char *in;
	size_t in_len, in_cap, fed;
	char *out;
	size_t out_pos, out_len, out_cap;
	unsigned long long lost; /* lossy events skipped, not yet reported */
};

/* One command on its way through a worker, and its reply on the way back. */
struct qmp_job {
	struct qmp_job *next;
	uint64_t conn_id;
	const struct qmp_command *cmd;
	struct json_object *req; /* owned; args and id point into it */
	struct json_object *args;
	size_t cost; /* req's estimated bytes, counted in the queues' share */
	char *reply; /* serialised by the worker */
	size_t reply_len;
};

struct qmp_worker {
	struct qmp_server *s;
	const char *name;
	pthread_t thread;
	bool started;
	pthread_cond_t cond;		     /* s->lock: a job came, or stop */
	struct qmp_job *head, **tail;	     /* s->lock */
	struct qmp_job *jobs[QMP_BATCH_MAX]; /* the ones it runs now */
};

enum { QMP_WORKER_QUERY, QMP_WORKER_OP, QMP_NR_WORKERS };

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
	size_t max_queued, max_queued_total;
	unsigned int negotiate_timeout_ms;
	bool api_group;
	gid_t api_gid;
	uid_t owner;
	char *greeting;

	const struct qmp_command **cmds;
	size_t n_cmds;

	/* The I/O thread's. */
	struct qmp_conn **conns;
	size_t n_conns;
	uint64_t next_conn_id;
	atomic_uint n_clients;
	/* Written by the I/O thread; read by anyone (qmp_server_refused()). */
	atomic_size_t queued; /* the clients' requests on the workers, held */
	atomic_ullong refused;

	pthread_t thread;
	bool started;
	bool accept_paused;
	atomic_bool stopping;

	pthread_mutex_t lock; /* the queues below */
	struct qmp_event *ev_head, **ev_tail;
	unsigned int n_lossy;
	unsigned long long lost; /* lossy events dropped before any client */
	struct qmp_job *done_head, **done_tail;
	bool workers_stopping;
	struct qmp_worker workers[QMP_NR_WORKERS];
};

int qmp_error_set(struct qmp_error *err, const char *class, const char *fmt,
		  ...)
{
	va_list ap;

	if (hv_err_is_set(&err->e))
		return -EINVAL; /* the first reason is the cause */
	err->class = class;
	err->e.code = -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err->e.msg, sizeof(err->e.msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ---- arguments: checked against the declaration, then read ---- */

static const char *const arg_type_names[] = {
	[QMP_ARG_INT] = "integer",     [QMP_ARG_STR] = "string",
	[QMP_ARG_BOOL] = "boolean",    [QMP_ARG_ARRAY] = "array",
	[QMP_ARG_INT_STR] = "integer", [QMP_ARG_NAME_INT] = "string or integer",
};

const struct qmp_arg *qmp_arg_find(const struct qmp_arg *decl, const char *name)
{
	for (; decl && decl->name; decl++)
		if (!strcmp(decl->name, name))
			return decl;
	return NULL;
}

/* A decimal string as QemuOpts reads a number; false if it is not one. */
static bool decimal(const char *s, int64_t *v)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !*end && !errno;
}

/* json-c keeps integers above INT64_MAX as unsigned: not ours. */
static bool fits_int64(struct json_object *o)
{
	return !(json_object_get_uint64(o) > INT64_MAX &&
		 json_object_get_int64(o) >= 0);
}

static bool type_ok(const struct qmp_arg *a, struct json_object *o)
{
	int64_t v;

	switch (a->type) {
	case QMP_ARG_INT:
		return json_object_is_type(o, json_type_int);
	case QMP_ARG_STR:
		return json_object_is_type(o, json_type_string);
	case QMP_ARG_BOOL:
		return json_object_is_type(o, json_type_boolean);
	case QMP_ARG_ARRAY:
		return json_object_is_type(o, json_type_array);
	case QMP_ARG_INT_STR:
		return json_object_is_type(o, json_type_int) ||
		       (json_object_is_type(o, json_type_string) &&
			decimal(json_object_get_string(o), &v));
	case QMP_ARG_NAME_INT:
		return json_object_is_type(o, json_type_int) ||
		       json_object_is_type(o, json_type_string);
	}
	return false;
}

/* "'a' or 'b'", "'a', 'b' or 'c'" */
static void values_text(const char *const *v, char *buf, size_t len)
{
	size_t n = 0, at = 0;

	while (v[n])
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n && at < len; i++)
		at += snprintf(buf + at, len - at, "%s'%s'",
			       !i	    ? ""
			       : i == n - 1 ? " or "
					    : ", ",
			       v[i]);
}

static int check_value(const struct qmp_arg *a, struct json_object *o,
		       struct qmp_error *err)
{
	char expect[256];

	if (json_object_is_type(o, json_type_null) && a->nullable)
		return 0;
	if (!type_ok(a, o))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Invalid parameter type for '%s', "
				     "expected: %s",
				     a->name, arg_type_names[a->type]);
	if (json_object_is_type(o, json_type_int) && !fits_int64(o))
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Parameter '%s' expects %s", a->name,
				     "an integer that fits in int64");
	if (a->type == QMP_ARG_INT && (a->min || a->max || a->max_fn)) {
		int64_t v = json_object_get_int64(o);
		int64_t max = a->max_fn ? a->max_fn() : a->max;

		if (v < a->min || v > max)
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Parameter '%s' expects a value "
					     "between %lld and %lld",
					     a->name, (long long)a->min,
					     (long long)max);
	}
	if (a->type == QMP_ARG_STR && a->values) {
		const char *s = json_object_get_string(o);
		size_t i;

		for (i = 0; a->values[i] && strcmp(a->values[i], s); i++)
			;
		if (!a->values[i]) {
			values_text(a->values, expect, sizeof(expect));
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Parameter '%s' does not accept "
					     "value '%s' (expected %s)",
					     a->name, s, expect);
		}
	}
	return 0;
}

int qmp_check_args(struct json_object *args, const struct qmp_arg *decl,
		   bool open, struct qmp_error *err)
{
	for (const struct qmp_arg *a = decl; a && a->name; a++) {
		struct json_object *o;

		if (!args || !json_object_object_get_ex(args, a->name, &o)) {
			if (!a->optional)
				return qmp_error_set(err, QMP_ERROR_GENERIC,
						     "Parameter '%s' is "
						     "missing",
						     a->name);
			continue;
		}
		if (check_value(a, o, err))
			return -EINVAL;
	}
	if (!args || open)
		return 0;
	json_object_object_foreach(args, key, val)
	{
		(void)val;
		if (!qmp_arg_find(decl, key))
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Parameter '%s' is unexpected",
					     key);
	}
	return 0;
}

static struct json_object *arg_value(struct json_object *args, const char *name)
{
	struct json_object *o = NULL;

	if (!args || !json_object_object_get_ex(args, name, &o) ||
	    json_object_is_type(o, json_type_null))
		return NULL;
	return o;
}

bool qmp_has(struct json_object *args, const char *name)
{
	struct json_object *o;

	return args && json_object_object_get_ex(args, name, &o);
}

int64_t qmp_int(struct json_object *args, const char *name, int64_t dflt)
{
	struct json_object *o = arg_value(args, name);
	int64_t v;

	if (json_object_is_type(o, json_type_int))
		return json_object_get_int64(o);
	if (json_object_is_type(o, json_type_string) &&
	    decimal(json_object_get_string(o), &v))
		return v;
	return dflt;
}

const char *qmp_str(struct json_object *args, const char *name,
		    const char *dflt)
{
	struct json_object *o = arg_value(args, name);

	return json_object_is_type(o, json_type_string)
		       ? json_object_get_string(o)
		       : dflt;
}

bool qmp_bool(struct json_object *args, const char *name, bool dflt)
{
	struct json_object *o = arg_value(args, name);

	return json_object_is_type(o, json_type_boolean)
		       ? json_object_get_boolean(o)
		       : dflt;
}

/* ---- output ---- */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static size_t backlog(const struct qmp_conn *c)
{
	return c->out_len - c->out_pos;
}

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

static void conn_send_error(struct qmp_server *s, struct qmp_conn *c,
			    const char *desc)
{
	struct json_object *e = error_object(QMP_ERROR_GENERIC, desc);

	conn_send_json(s, c, e);
	json_object_put(e);
}

/* ---- events ---- */

/* {"event", "data", "timestamp"} as text; takes over data. */
static struct qmp_event *event_new(const char *name, struct json_object *data,
				   bool lossy)
{
	struct json_object *ev = json_object_new_object();
	struct json_object *ts = json_object_new_object();
	struct qmp_event *e = NULL;
	struct timeval tv;
	const char *text;
	size_t len;

	gettimeofday(&tv, NULL);
	json_object_object_add(ev, "event", json_object_new_string(name));
	if (data)
		json_object_object_add(ev, "data", data);
	json_object_object_add(ts, "seconds", json_object_new_int64(tv.tv_sec));
	json_object_object_add(ts, "microseconds",
			       json_object_new_int64(tv.tv_usec));
	json_object_object_add(ev, "timestamp", ts);
	text = json_object_to_json_string_length(ev, QMP_JSON_FLAGS, &len);
	if (text)
		e = malloc(sizeof(*e) + len + 1);
	if (e) {
		*e = (struct qmp_event){ .lossy = lossy, .len = len };
		memcpy(e->text, text, len + 1);
	}
	json_object_put(ev);
	return e;
}

static void wake(struct qmp_server *s)
{
	uint64_t one = 1;

	while (write(s->wake_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

static int emit(struct qmp_server *s, const char *name,
		struct json_object *data, bool lossy)
{
	struct qmp_event *e = event_new(name, data, lossy);
	bool dropped = false;

	if (!e) {
		pr_err("api: event %s dropped: out of memory", name);
		return -ENOMEM;
	}
	pthread_mutex_lock(&s->lock);
	if (lossy && s->n_lossy >= QMP_MAX_PENDING_EVENTS) {
		s->lost++;
		dropped = true;
	} else {
		*s->ev_tail = e;
		s->ev_tail = &e->next;
		s->n_lossy += lossy;
	}
	pthread_mutex_unlock(&s->lock);
	if (dropped)
		free(e); /* counted: the clients get an EVENTS_LOST */
	wake(s);
	return 0;
}

int qmp_emit_event(struct qmp_server *s, const char *name,
		   struct json_object *data)
{
	return emit(s, name, data, false);
}

int qmp_emit_event_lossy(struct qmp_server *s, const char *name,
			 struct json_object *data)
{
	return emit(s, name, data, true);
}

/* The client caught up after skipping lossy events: say how many. */
static void report_lost(struct qmp_server *s, struct qmp_conn *c)
{
	struct qmp_event *e;
	struct json_object *d;

	if (!c->lost || c->dead || backlog(c) > s->max_output / 2)
		return;
	d = json_object_new_object();
	json_object_object_add(d, "count", json_object_new_int64(c->lost));
	e = event_new(QMP_EVENT_LOST, d, false);
	if (!e)
		return; /* still counted: the next try reports it */
	conn_send(s, c, e->text, e->len);
	c->lost = 0;
	free(e);
}

static void conn_send_event(struct qmp_server *s, struct qmp_conn *c,
			    const struct qmp_event *e)
{
	if (!c->negotiated || c->dead)
		return;
	if (e->lossy && backlog(c) > s->max_output / 2) {
		c->lost++;
		return;
	}
	report_lost(s, c);
	conn_send(s, c, e->text, e->len);
}

static void deliver_events(struct qmp_server *s)
{
	struct qmp_event *e, *next;
	unsigned long long lost;

	pthread_mutex_lock(&s->lock);
	e = s->ev_head;
	s->ev_head = NULL;
	s->ev_tail = &s->ev_head;
	s->n_lossy = 0;
	lost = s->lost;
	s->lost = 0;
	pthread_mutex_unlock(&s->lock);

	if (lost)
		pr_err("api: %llu progress events dropped: the control thread "
		       "fell behind",
		       lost);
	for (size_t i = 0; i < s->n_conns; i++)
		if (s->conns[i]->negotiated)
			s->conns[i]->lost += lost;
	for (; e; e = next) {
		next = e->next;
		for (size_t i = 0; i < s->n_conns; i++)
			conn_send_event(s, s->conns[i], e);
		free(e);
	}
	for (size_t i = 0; i < s->n_conns; i++)
		report_lost(s, s->conns[i]);
}

/* ---- dispatch ---- */

/* Neither run inline nor a query: it runs on the operation thread. */
static bool is_operation(const struct qmp_command *cmd)
{
	return !(cmd->flags & (QMP_CMD_FAST | QMP_CMD_QUERY));
}

static const struct qmp_command *find_command(struct qmp_server *s,
					      const char *name)
{
	for (size_t i = 0; i < s->n_cmds; i++)
		if (!strcmp(s->cmds[i]->name, name))
			return s->cmds[i];
	return NULL;
}

static const struct qmp_arg capabilities_args[] = {
	{ .name = "enable",
	  .type = QMP_ARG_ARRAY,
	  .optional = true,
	  .help = "capabilities to enable (none is offered)" },
	{ 0 },
};

/* The server's own commands, declared like the others; handled inline. */
static const struct qmp_command builtins[] = {
	{ .name = "qmp_capabilities",
	  .flags = QMP_CMD_FAST,
	  .help = "leave negotiation mode: the first command of a session",
	  .args = capabilities_args },
	{ .name = "query-commands",
	  .flags = QMP_CMD_FAST,
	  .help = "the commands this server runs" },
};

#define QMP_NR_BUILTINS (sizeof(builtins) / sizeof(builtins[0]))

static int builtin_capabilities(struct qmp_conn *c, struct json_object *args,
				struct qmp_error *err)
{
	struct json_object *en;

	if (c->negotiated)
		return qmp_error_set(err, QMP_ERROR_COMMAND_NOT_FOUND,
				     "Capabilities negotiation is already "
				     "complete, command ignored");
	if (json_object_object_get_ex(args, "enable", &en) &&
	    json_object_array_length(en)) {
		/* The greeting offers no capability, so none can be enabled. */
		struct json_object *cap = json_object_array_get_idx(en, 0);

		if (!json_object_is_type(cap, json_type_string))
			return qmp_error_set(err, QMP_ERROR_GENERIC,
					     "Invalid parameter type for "
					     "'enable', expected: string");
		return qmp_error_set(err, QMP_ERROR_GENERIC,
				     "Capability '%s' not available",
				     json_object_get_string(cap));
	}
	c->negotiated = true;
	return 0;
}

static struct json_object *builtin_query_commands(struct qmp_server *s)
{
	struct json_object *list = json_object_new_array();

	for (size_t i = 0; i < QMP_NR_BUILTINS + s->n_cmds; i++) {
		struct json_object *o = json_object_new_object();
		const char *name = i < QMP_NR_BUILTINS
					   ? builtins[i].name
					   : s->cmds[i - QMP_NR_BUILTINS]->name;

		json_object_object_add(o, "name", json_object_new_string(name));
		json_object_array_add(list, o);
	}
	return list;
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

/* A handler's outcome, with a reason whatever the handler left in err. */
static int call_result(int rc, struct qmp_error *err)
{
	if (rc && !hv_err_is_set(&err->e))
		qmp_error_set(err, QMP_ERROR_GENERIC, "%s",
			      strerror(rc < 0 ? -rc : EIO));
	if (!rc) /* a handler that filled err but returned 0 */
		*err = (struct qmp_error){ 0 };
	return rc;
}

/* Checks the arguments against the declaration, then runs the handler. */
static int call_handler(struct qmp_server *s, const struct qmp_command *cmd,
			struct json_object *args, struct json_object **ret,
			struct qmp_error *err)
{
	int rc = qmp_check_args(args, cmd->args, cmd->flags & QMP_CMD_OPEN_ARGS,
				err);

	if (!rc)
		rc = cmd->handler(s->ctx, args, ret, err);
	return call_result(rc, err);
}

/* {"return": ret} or {"error": err}, with the request's id; takes ret. */
static struct json_object *response(int rc, struct json_object *ret,
				    const struct qmp_error *err,
				    struct json_object *req)
{
	struct json_object *resp, *id = NULL;

	if (rc) {
		json_object_put(ret);
		resp = error_object(err->class ? err->class : QMP_ERROR_GENERIC,
				    hv_err_msg(&err->e));
	} else {
		resp = json_object_new_object();
		json_object_object_add(resp, "return",
				       ret ? ret : json_object_new_object());
	}
	if (json_object_is_type(req, json_type_object) &&
	    json_object_object_get_ex(req, "id", &id))
		json_object_object_add(resp, "id", json_object_get(id));
	return resp;
}

static void job_free(struct qmp_job *j)
{
	json_object_put(j->req);
	free(j->reply);
	free(j);
}

/* Serialises the outcome into j->reply; takes ret, frees the request. */
static void job_answer(struct qmp_job *j, int rc, struct json_object *ret,
		       const struct qmp_error *err)
{
	struct json_object *resp = response(rc, ret, err, j->req);
	const char *text;
	size_t len;

	text = json_object_to_json_string_length(resp, QMP_JSON_FLAGS, &len);
	j->reply = text ? malloc(len + 1) : NULL;
	if (j->reply) {
		memcpy(j->reply, text, len + 1);
		j->reply_len = len;
	}
	json_object_put(resp);
	/* The request is the worker's: free it here, not in the I/O thread. */
	json_object_put(j->req);
	j->req = NULL;
	j->args = NULL;
}

/* On a worker: runs the job's command (unless stopping) into j->reply. */
static void job_run(struct qmp_server *s, struct qmp_job *j, bool stopping)
{
	struct qmp_error err = { 0 };
	struct json_object *ret = NULL;
	int rc;

	if (stopping)
		rc = qmp_error_set(&err, QMP_ERROR_GENERIC,
				   "%s not run: the VM is shutting down",
				   j->cmd->name);
	else
		rc = call_handler(s, j->cmd, j->args, &ret, &err);
	job_answer(j, rc, ret, &err);
}

/*
 * On the operation thread: jobs[0..n) of one command with a batch handler,
 * queued one after another.  Those whose arguments pass the declaration
 * go to the handler together; each is answered on its own.
 */
static void batch_run(struct qmp_server *s, struct qmp_job **jobs, size_t n)
{
	const struct qmp_command *cmd = jobs[0]->cmd;
	struct qmp_call *calls = calloc(n, sizeof(*calls));
	struct qmp_call *todo = calloc(n, sizeof(*todo));
	size_t *at = calloc(n, sizeof(*at)), nt = 0;

	if (!calls || !todo || !at) {
		for (size_t i = 0; i < n; i++)
			job_run(s, jobs[i], false);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct qmp_call *c = &calls[i];

		c->args = jobs[i]->args;
		c->rc = qmp_check_args(c->args, cmd->args,
				       cmd->flags & QMP_CMD_OPEN_ARGS, &c->err);
		if (!c->rc) {
			at[nt] = i;
			todo[nt++] = *c;
		}
	}
	if (nt)
		cmd->batch(s->ctx, todo, nt);
	for (size_t k = 0; k < nt; k++)
		calls[at[k]] = todo[k];
	for (size_t i = 0; i < n; i++) {
		struct qmp_call *c = &calls[i];

		c->rc = call_result(c->rc, &c->err);
		job_answer(jobs[i], c->rc, c->ret, &c->err);
	}
out:
	free(calls);
	free(todo);
	free(at);
}

/*
 * Takes the next job off w's queue (s->lock held), with the jobs of the
 * same command queued right after it when that command batches.  Returns
 * how many are in jobs[].
 */
static size_t take_jobs(struct qmp_worker *w, struct qmp_job **jobs)
{
	size_t n = 0;

	do {
		jobs[n++] = w->head;
		w->head = w->head->next;
	} while (jobs[0]->cmd->batch && w->head &&
		 w->head->cmd == jobs[0]->cmd && n < QMP_BATCH_MAX);
	if (!w->head)
		w->tail = &w->head;
	return n;
}

static void *worker_thread(void *arg)
{
	struct qmp_worker *w = arg;
	struct qmp_server *s = w->s;

	seccomp_enter(w == &s->workers[QMP_WORKER_OP]
			      ? SECCOMP_THREAD_QMP_OP
			      : SECCOMP_THREAD_QMP_QUERY);
	pthread_mutex_lock(&s->lock);
	for (;;) {
		bool stopping = s->workers_stopping;
		struct qmp_job **js = w->jobs;
		size_t n;

		if (!w->head) {
			if (stopping)
				break;
			pthread_cond_wait(&w->cond, &s->lock);
			continue;
		}
		n = take_jobs(w, js);
		pthread_mutex_unlock(&s->lock);

		if (n > 1 && !stopping)
			batch_run(s, js, n);
		else
			for (size_t i = 0; i < n; i++)
				job_run(s, js[i], stopping);

		pthread_mutex_lock(&s->lock);
		for (size_t i = 0; i < n; i++) {
			js[i]->next = NULL;
			*s->done_tail = js[i];
			s->done_tail = &js[i]->next;
		}
		pthread_mutex_unlock(&s->lock);
		wake(s);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/*
 * What a parsed request holds in memory, about (qmp_lex.h: json-c's
 * allocations, measured).  The text is no measure: "[{},{},...]" takes 260
 * times its length, a long string only its length.
 */
static size_t tree_cost(struct json_object *o)
{
	size_t cost;

	switch (json_object_get_type(o)) {
	case json_type_null:
		return 0; /* json-c's null is a NULL pointer */
	case json_type_string:
		return QMP_LEX_COST_STRING +
		       (size_t)json_object_get_string_len(o);
	case json_type_double:
		return QMP_LEX_COST_DOUBLE;
	case json_type_array:
		cost = QMP_LEX_COST_ARRAY;
		for (size_t i = 0; i < json_object_array_length(o); i++)
			cost += QMP_LEX_COST_ELEMENT +
				tree_cost(json_object_array_get_idx(o, i));
		return cost;
	case json_type_object:
		cost = QMP_LEX_COST_OBJECT;
		json_object_object_foreach(o, key, val)
		{
			cost += QMP_LEX_COST_MEMBER + strlen(key) +
				tree_cost(val);
		}
		return cost;
	default:
		return QMP_LEX_COST_INT;
	}
}

/* c's request of cost bytes is held or on a worker: counted until it is not. */
static void charge(struct qmp_server *s, struct qmp_conn *c, size_t cost)
{
	c->queued += cost;
	atomic_fetch_add(&s->queued, cost);
}

static void uncharge(struct qmp_server *s, struct qmp_conn *c, size_t cost)
{
	if (c)
		c->queued -= cost;
	atomic_fetch_sub(&s->queued, cost);
}

static size_t kib(size_t bytes)
{
	return (bytes + 1023) / 1024;
}

/*
 * Whether reading ahead a request of cost bytes (earlier ones of c are
 * unanswered) would pass a limit: then err says which, and what to do.
 * One request alone is bounded while it is parsed (qmp_lex.h).
 */
static bool over_budget(struct qmp_server *s, struct qmp_conn *c, size_t cost,
			struct qmp_error *err)
{
	size_t all = atomic_load(&s->queued);
	const char *which;

	if (c->queued + cost > s->max_queued) {
		which = "per client";
		qmp_error_set(err, QMP_ERROR_GENERIC,
			      "request not queued: the read-ahead limit per "
			      "client is %zu KiB, and this client's requests "
			      "waiting for a reply would take %zu KiB with it; "
			      "send it again once earlier requests are "
			      "answered",
			      kib(s->max_queued), kib(c->queued + cost));
	} else if (all + cost > s->max_queued_total) {
		which = "for all clients";
		qmp_error_set(err, QMP_ERROR_GENERIC,
			      "request not queued: the read-ahead limit for "
			      "all clients is %zu KiB, and the requests of all "
			      "clients waiting for a reply would take %zu KiB "
			      "with it; send it again once earlier requests "
			      "are answered",
			      kib(s->max_queued_total), kib(all + cost));
	} else {
		return false;
	}
	if (!c->refusal_logged)
		pr_err("api: client fd %d: refusing requests sent ahead of "
		       "their turn: past the read-ahead limit %s (logged "
		       "once per client)",
		       c->fd, which);
	c->refusal_logged = true;
	return true;
}

/* Hands req to a worker; false (req still ours) once they are stopping. */
static bool submit(struct qmp_server *s, struct qmp_conn *c,
		   const struct qmp_command *cmd, struct json_object *req,
		   struct json_object *args, size_t cost)
{
	struct qmp_worker *w =
		&s->workers[cmd->flags & QMP_CMD_QUERY ? QMP_WORKER_QUERY
						       : QMP_WORKER_OP];
	struct qmp_job *j = calloc(1, sizeof(*j));
	bool ok;

	if (!j)
		return false;
	*j = (struct qmp_job){
		.conn_id = c->id,
		.cmd = cmd,
		.req = req,
		.args = args,
		.cost = cost,
	};
	pthread_mutex_lock(&s->lock);
	ok = !s->workers_stopping;
	if (ok) {
		*w->tail = j;
		w->tail = &j->next;
		pthread_cond_signal(&w->cond);
	}
	pthread_mutex_unlock(&s->lock);
	if (!ok) {
		free(j);
		return false;
	}
	c->inflight++;
	c->inflight_other |= w != &s->workers[QMP_WORKER_OP];
	charge(s, c, cost);
	return true;
}

/*
 * Whether req may be dispatched now, with earlier requests of c still
 * unanswered: only an operation behind operations, which queues on the same
 * thread behind them, so the replies keep their order.
 */
static bool may_go_ahead(struct qmp_server *s, struct qmp_conn *c,
			 const char *name)
{
	const struct qmp_command *cmd;

	if (!c->inflight)
		return true;
	if (c->inflight_other || !name || !c->negotiated)
		return false;
	cmd = find_command(s, name);
	return cmd && is_operation(cmd);
}

static void conn_reply(struct qmp_server *s, struct qmp_conn *c,
		       struct json_object *resp);

/*
 * Answers req at once, hands it to a worker, holds it until the client's
 * earlier requests are answered, or, read ahead past a limit, refuses it.
 * Takes over req (cost: its estimated bytes).
 */
static void dispatch(struct qmp_server *s, struct qmp_conn *c,
		     struct json_object *req, size_t cost)
{
	struct qmp_error err = { 0 }, budget = { 0 };
	const struct qmp_command *cmd = NULL;
	struct json_object *args, *ret = NULL, *resp;
	const char *name = check_request(req, &args, &err);
	int rc = -EINVAL;

	/* Read ahead (earlier ones unanswered): within the limits, or not. */
	if (c->inflight && over_budget(s, c, cost, &budget)) {
		atomic_fetch_add(&s->refused, 1);
		conn_reply(s, c, response(-EINVAL, NULL, &budget, req));
		json_object_put(req);
		return;
	}
	if (!may_go_ahead(s, c, name)) {
		c->held = req; /* dispatched again once c's replies are out */
		c->held_cost = cost;
		charge(s, c, cost);
		return;
	}
	if (name && !args) {
		/* Handlers always get an object; it lives as long as req. */
		args = json_object_new_object();
		json_object_object_add(req, "arguments", args);
	}
	if (!name) {
		/* err says what is wrong with the request */
	} else if (!strcmp(name, "qmp_capabilities")) {
		rc = qmp_check_args(args, capabilities_args, false, &err);
		if (!rc)
			rc = builtin_capabilities(c, args, &err);
	} else if (!c->negotiated) {
		rc = qmp_error_set(&err, QMP_ERROR_COMMAND_NOT_FOUND,
				   "Expecting capabilities negotiation "
				   "with 'qmp_capabilities'");
	} else if (!strcmp(name, "query-commands")) {
		rc = qmp_check_args(args, NULL, false, &err);
		if (!rc)
			ret = builtin_query_commands(s);
	} else if (!(cmd = find_command(s, name))) {
		rc = qmp_error_set(&err, QMP_ERROR_COMMAND_NOT_FOUND,
				   "The command %s has not been found", name);
	} else if (cmd->flags & QMP_CMD_FAST) {
		rc = call_handler(s, cmd, args, &ret, &err);
	} else if (submit(s, c, cmd, req, args, cost)) {
		return;
	} else {
		rc = qmp_error_set(&err, QMP_ERROR_GENERIC,
				   "%s not run: the VM is shutting down", name);
	}
	resp = response(rc, ret, &err, req);
	/* Events raised by an inline handler happened before its reply. */
	deliver_events(s);
	conn_send_json(s, c, resp);
	json_object_put(resp);
	json_object_put(req);
}

static struct qmp_conn *conn_by_id(struct qmp_server *s, uint64_t id)
{
	for (size_t i = 0; i < s->n_conns; i++)
		if (s->conns[i]->id == id)
			return s->conns[i];
	return NULL;
}

static void conn_process(struct qmp_server *s, struct qmp_conn *c);

/* Every earlier reply of c is out: what waited behind them goes now. */
static void conn_release(struct qmp_server *s, struct qmp_conn *c)
{
	struct json_object *req = c->held;
	size_t cost = c->held_cost;

	c->inflight_other = false;
	c->overlong = false;
	c->held = NULL;
	c->held_cost = 0;
	uncharge(s, c, cost);
	if (c->held_reply) {
		conn_send(s, c, c->held_reply, strlen(c->held_reply));
		free(c->held_reply);
		c->held_reply = NULL;
	}
	if (req)
		dispatch(s, c, req, cost);
}

/* Replies from the workers, after the events their commands raised. */
static void deliver_replies(struct qmp_server *s)
{
	struct qmp_job *j, *next;

	pthread_mutex_lock(&s->lock);
	j = s->done_head;
	s->done_head = NULL;
	s->done_tail = &s->done_head;
	pthread_mutex_unlock(&s->lock);
	if (!j)
		return;
	/* Taken after the replies: every event a command raised is here. */
	deliver_events(s);
	for (; j; j = next) {
		struct qmp_conn *c = conn_by_id(s, j->conn_id);

		next = j->next;
		uncharge(s, c, j->cost);
		if (c) {
			c->inflight--;
			if (j->reply)
				conn_send(s, c, j->reply, j->reply_len);
			else
				conn_send_error(s, c, "out of memory");
			if (!c->inflight)
				conn_release(s, c);
			/* What the client sent meanwhile is next. */
			conn_process(s, c);
		}
		job_free(j);
	}
}

/* ---- input ---- */

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

/*
 * A reply made by the I/O thread, in its place among c's replies: now, or
 * once every earlier one is out.  Takes resp.
 */
static void conn_reply(struct qmp_server *s, struct qmp_conn *c,
		       struct json_object *resp)
{
	const char *text =
		c->inflight
			? json_object_to_json_string_ext(resp, QMP_JSON_FLAGS)
			: NULL;

	if (text && (c->held_reply = strdup(text))) {
		json_object_put(resp);
		return;
	}
	deliver_events(s);
	conn_send_json(s, c, resp);
	json_object_put(resp);
}

/* A parse error's reply, in its place among c's replies. */
static void conn_parse_error(struct qmp_server *s, struct qmp_conn *c,
			     const char *desc)
{
	conn_reply(s, c, error_object(QMP_ERROR_GENERIC, desc));
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
static bool conn_stalled(const struct qmp_conn *c)
{
	return c->held || c->held_reply || c->overlong ||
	       (c->inflight && c->inflight_other) ||
	       c->inflight >= QMP_BATCH_MAX; /* a bound on what one queues */
}

/* Parses and dispatches what c sent, until it needs more or is stalled. */
static void conn_process(struct qmp_server *s, struct qmp_conn *c)
{
	while (!c->dead && !conn_stalled(c)) {
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
			conn_send_error(s, c, desc);
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
		dispatch(s, c, obj, tree_cost(obj));
	}
}

static void conn_read(struct qmp_server *s, struct qmp_conn *c)
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
	conn_process(s, c);
}

/* ---- connections ---- */

static void conn_free(struct qmp_server *s, struct qmp_conn *c)
{
	close(c->fd);
	json_object_put(c->held);
	/* Its jobs still on the workers are uncounted when they are done. */
	uncharge(s, NULL, c->held_cost);
	free(c->held_reply);
	json_tokener_free(c->tok);
	free(c->in);
	free(c->out);
	free(c);
}

static void send_now(int fd, const char *msg)
{
	while (send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
	       errno == EINTR)
		;
}

static void refuse(struct qmp_server *s, int fd)
{
	pr_err("api: refusing a connection: %u clients already connected "
	       "(limit %u)",
	       s->max_clients, s->max_clients);
	send_now(fd, "{\"error\":{\"class\":\"GenericError\",\"desc\":\"too "
		     "many clients of the control API\"}}\r\n");
	close(fd);
}

static bool peer_in_group(int fd, gid_t gid, gid_t primary)
{
	gid_t groups[QMP_MAX_GROUPS];
	socklen_t len = sizeof(groups);

	if (primary == gid)
		return true;
	/* The peer's supplementary groups, as they were at connect(). */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (size_t i = 0; i < len / sizeof(groups[0]); i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* SO_PEERCRED: our own uid, root, or a member of the API group. */
static bool peer_allowed(struct qmp_server *s, int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char msg[160];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len)) {
		pr_err("api: refusing a connection: no peer credentials: %s",
		       strerror(errno));
		return false;
	}
	if (cr.uid == s->owner || cr.uid == 0 ||
	    (s->api_group && peer_in_group(fd, s->api_gid, cr.gid)))
		return true;
	pr_err("api: refusing a connection from uid %u (pid %d): only uid "
	       "%u, root%s may use the control API",
	       (unsigned int)cr.uid, (int)cr.pid, (unsigned int)s->owner,
	       s->api_group ? " and the members of --api-group" : "");
	snprintf(msg, sizeof(msg),
		 "{\"error\":{\"class\":\"GenericError\",\"desc\":\"uid %u "
		 "may not use this control API\"}}\r\n",
		 (unsigned int)cr.uid);
	send_now(fd, msg);
	return false;
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
		if (!peer_allowed(s, fd)) {
			close(fd);
			continue;
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
		/*
		 * Replies must be JSON: c->lex refuses bytes that are not
		 * UTF-8.  Not json-c's JSON_TOKENER_VALIDATE_UTF8 too: it
		 * fails a character split across two reads.
		 */
		qmp_lex_reset(&c->lex, s->max_queued);
		c->fd = fd;
		c->id = ++s->next_conn_id;
		c->since_ms = now_ms();
		s->conns[s->n_conns++] = c;
		atomic_store(&s->n_clients, s->n_conns);
		conn_send(s, c, s->greeting, strlen(s->greeting));
	}
}

/*
 * A client that never negotiates holds a slot for nothing: after
 * negotiate_timeout_ms it is closed.  Returns the poll timeout until the
 * next such deadline (-1: none).
 */
static int expire_idle(struct qmp_server *s)
{
	long long now = now_ms(), next = -1;

	for (size_t i = 0; i < s->n_conns; i++) {
		struct qmp_conn *c = s->conns[i];
		long long left;

		if (c->negotiated || c->dead || c->inflight)
			continue;
		left = c->since_ms + s->negotiate_timeout_ms - now;
		if (left <= 0) {
			pr_err("api: closing client fd %d: no "
			       "qmp_capabilities within %u ms",
			       c->fd, s->negotiate_timeout_ms);
			conn_send_error(s, c,
					"no qmp_capabilities in time; "
					"closing");
			c->dead = true;
		} else if (next < 0 || left < next) {
			next = left;
		}
	}
	return (int)next;
}

static void reap(struct qmp_server *s)
{
	size_t j = 0;

	for (size_t i = 0; i < s->n_conns; i++) {
		if (s->conns[i]->dead)
			conn_free(s, s->conns[i]);
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

	seccomp_enter(SECCOMP_THREAD_QMP_IO);
	while (!atomic_load(&s->stopping)) {
		int n, timeout = expire_idle(s);
		size_t nfds;

		reap(s);
		nfds = 2 + s->n_conns;
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
		if (s->accept_paused && (timeout < 0 || timeout > 100))
			timeout = 100;
		for (size_t i = 0; i < s->n_conns; i++) {
			struct qmp_conn *c = s->conns[i];

			pfd[2 + i] = (struct pollfd){
				.fd = c->fd,
				.events = (c->eof || conn_stalled(c) ? 0
								     : POLLIN) |
					  (backlog(c) ? POLLOUT : 0),
			};
		}
		n = poll(pfd, nfds, timeout);
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
		deliver_replies(s);
		deliver_events(s);
		for (size_t i = 0; i < nfds - 2; i++) {
			struct qmp_conn *c = s->conns[i];
			short re = pfd[2 + i].revents;

			if (re & POLLOUT) {
				conn_flush(c);
				report_lost(s, c);
			}
			if (c->eof) {
				c->dead |= (backlog(c) == 0 && !c->inflight) ||
					   (re & (POLLERR | POLLHUP));
				continue;
			}
			if (conn_stalled(c)) {
				/* Gone for good: its reply has nowhere to go. */
				c->dead |= (re & (POLLERR | POLLHUP)) != 0;
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
	deliver_replies(s);
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
	mode_t mode = s->api_group ? 0660 : 0600;
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
	if (fchmod(fd, 0600) || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		pr_err("api: cannot listen on %s: %s", s->path, strerror(-rc));
		close(fd);
		return rc;
	}
	/* The group first, then its access: never open to the old group. */
	if ((s->api_group && lchown(s->path, (uid_t)-1, s->api_gid)) ||
	    chmod(s->path, mode) || stat(s->path, &st) || listen(fd, 64)) {
		rc = -errno;
		pr_err("api: cannot listen on %s: %s%s", s->path, strerror(-rc),
		       s->api_group && rc == -EPERM
			       ? " (giving the socket to --api-group needs "
				 "membership of that group)"
			       : "");
		unlink(s->path);
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
	struct qmp_job *j, *jn;
	struct stat st;

	for (size_t i = 0; i < s->n_conns; i++)
		conn_free(s, s->conns[i]);
	free(s->conns);
	for (e = s->ev_head; e; e = next) {
		next = e->next;
		free(e);
	}
	for (j = s->done_head; j; j = jn) {
		jn = j->next;
		job_free(j);
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
	for (int i = 0; i < QMP_NR_WORKERS; i++)
		pthread_cond_destroy(&s->workers[i].cond);
	pthread_mutex_destroy(&s->lock);
	free(s->cmds);
	free(s->greeting);
	free(s->path);
	free(s);
}

int qmp_server_create(const struct qmp_server_opts *opts,
		      struct qmp_server **out)
{
	static const char *const names[QMP_NR_WORKERS] = {
		[QMP_WORKER_QUERY] = "qmp-query",
		[QMP_WORKER_OP] = "qmp-op",
	};
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
		.max_queued = opts->max_queued ?: QMP_DEFAULT_MAX_QUEUED,
		.max_queued_total =
			opts->max_queued_total ?: QMP_DEFAULT_MAX_QUEUED_TOTAL,
		.negotiate_timeout_ms =
			opts->negotiate_timeout_ms
				?: QMP_DEFAULT_NEGOTIATE_TIMEOUT_MS,
		.api_group = opts->api_group,
		.api_gid = opts->api_gid,
		.owner = geteuid(),
	};
	s->ev_tail = &s->ev_head;
	s->done_tail = &s->done_head;
	pthread_mutex_init(&s->lock, NULL);
	for (int i = 0; i < QMP_NR_WORKERS; i++) {
		struct qmp_worker *w = &s->workers[i];

		*w = (struct qmp_worker){ .s = s, .name = names[i] };
		w->tail = &w->head;
		pthread_cond_init(&w->cond, NULL);
	}
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

static bool is_builtin(const char *name)
{
	for (size_t i = 0; i < QMP_NR_BUILTINS; i++)
		if (!strcmp(builtins[i].name, name))
			return true;
	return false;
}

/* A declaration the checks can use: known types, no name twice. */
static bool decl_ok(const struct qmp_arg *decl)
{
	for (const struct qmp_arg *a = decl; a && a->name; a++) {
		if (a->type < QMP_ARG_INT || a->type > QMP_ARG_NAME_INT ||
		    qmp_arg_find(decl, a->name) != a ||
		    (a->values && a->type != QMP_ARG_STR))
			return false;
	}
	return true;
}

int qmp_server_register(struct qmp_server *s, const struct qmp_command *cmds,
			size_t n)
{
	const struct qmp_command **p;

	if (s->started)
		return -EBUSY;
	for (size_t i = 0; i < n; i++) {
		if (!cmds[i].name || !cmds[i].handler ||
		    (cmds[i].flags & QMP_CMD_FAST &&
		     cmds[i].flags & QMP_CMD_QUERY) ||
		    (cmds[i].batch && !is_operation(&cmds[i])) ||
		    !decl_ok(cmds[i].args))
			return -EINVAL;
		if (is_builtin(cmds[i].name) || find_command(s, cmds[i].name))
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

/* Lets every worker finish and joins it; queued jobs get the shutdown. */
static void stop_workers(struct qmp_server *s)
{
	pthread_mutex_lock(&s->lock);
	s->workers_stopping = true;
	for (int i = 0; i < QMP_NR_WORKERS; i++)
		pthread_cond_broadcast(&s->workers[i].cond);
	pthread_mutex_unlock(&s->lock);
	for (int i = 0; i < QMP_NR_WORKERS; i++) {
		if (s->workers[i].started)
			pthread_join(s->workers[i].thread, NULL);
		s->workers[i].started = false;
	}
}

int qmp_server_start(struct qmp_server *s)
{
	int rc = 0;

	if (s->started)
		return -EBUSY;
	for (int i = 0; i < QMP_NR_WORKERS && !rc; i++) {
		struct qmp_worker *w = &s->workers[i];

		rc = -pthread_create(&w->thread, NULL, worker_thread, w);
		if (!rc) {
			w->started = true;
			pthread_setname_np(w->thread, w->name);
		}
	}
	if (!rc)
		rc = -pthread_create(&s->thread, NULL, server_thread, s);
	if (rc) {
		pr_err("api: cannot start the control threads: %s",
		       strerror(-rc));
		stop_workers(s);
		return rc;
	}
	pthread_setname_np(s->thread, "qmp-io");
	s->started = true;
	return 0;
}

void qmp_server_stop(struct qmp_server *s)
{
	if (!s)
		return;
	if (s->started) {
		/* The I/O thread still serves while the workers finish. */
		stop_workers(s);
		atomic_store(&s->stopping, true);
		wake(s);
		pthread_join(s->thread, NULL);
	}
	server_free(s);
}

unsigned int qmp_server_queued(struct qmp_server *s)
{
	unsigned int n = 0;

	pthread_mutex_lock(&s->lock);
	for (struct qmp_job *j = s->workers[QMP_WORKER_OP].head; j; j = j->next)
		n++;
	pthread_mutex_unlock(&s->lock);
	return n;
}

unsigned int qmp_server_clients(struct qmp_server *s)
{
	return atomic_load(&s->n_clients);
}

size_t qmp_server_queued_bytes(struct qmp_server *s)
{
	return atomic_load(&s->queued);
}

unsigned long long qmp_server_refused(struct qmp_server *s)
{
	return atomic_load(&s->refused);
}
