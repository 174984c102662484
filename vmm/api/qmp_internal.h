/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the QMP server's files share and nobody else sees: the server's,
 * a client's and a job's state, and the calls from one part to another.
 *
 * Each file calls only those above it in this list:
 *
 *   qmp_schema.c    a request's shape and arguments (qmp_schema.h)
 *   qmp_output.c    replies to a client, in order, never blocking; the
 *                   I/O thread's wake-up
 *   qmp_events.c    events, queued from any thread, out to every client;
 *                   a reply made by the I/O thread, after the events
 *   qmp_worker.c    the query and operation threads, their jobs, bursts
 *   qmp_dispatch.c  where a request goes: inline, a worker, held, refused
 *   qmp_input.c     a client's bytes to requests
 *   qmp_replies.c   the workers' replies back, and what waited behind them
 *   qmp_access.c    the socket, who may connect, how many, for how long
 *   qmp_server.c    create, register, start, stop; the I/O thread's loop
 *
 * Ownership across threads: a request's JSON object goes to a worker with
 * its job and never comes back; the worker hands back the reply as text.
 * No json-c object is ever shared by two threads.  Everything in struct
 * qmp_conn is the I/O thread's.
 */
#ifndef HOTVM_QMP_INTERNAL_H
#define HOTVM_QMP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "qmp.h"
#include "qmp_lex.h"
#include "qmp_schema.h"

#define QMP_READ_CHUNK 65536
#define QMP_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

struct qmp_event {
	struct qmp_event *next;
	bool lossy;
	size_t len;
	char text[]; /* serialised, without the line end */
};

struct qmp_conn {
	int fd;
	uint64_t id; /* a job's way back to its client, which may be gone */
	struct qmp_lex lex; /* the request being read: its grammar, its end */
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

/* A registered command and the ctx its handler gets. */
struct qmp_entry {
	const struct qmp_command *cmd;
	void *ctx;
};

/* One command on its way through a worker, and its reply on the way back. */
struct qmp_job {
	struct qmp_job *next;
	uint64_t conn_id;
	struct qmp_entry e;	 /* the command and its ctx */
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
	unsigned int max_clients;
	size_t max_request;
	size_t max_output;
	size_t max_queued, max_queued_total;
	unsigned int negotiate_timeout_ms;
	bool api_group;
	gid_t api_gid;
	uid_t owner;
	char *greeting;

	struct qmp_entry *cmds;
	size_t n_cmds;

	/* The I/O thread's. */
	unsigned int submit_held; /* qmp_submit_hold(): no wake-up yet */
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
	/* qmp_server_after_ops(): set before the start, then read only. */
	void (*after_ops)(void *ctx);
	void *after_ops_ctx;
};

/* c's request of cost bytes is held or on a worker: counted until it is not. */
static inline void qmp_charge(struct qmp_server *s, struct qmp_conn *c,
			      size_t cost)
{
	c->queued += cost;
	atomic_fetch_add(&s->queued, cost);
}

/* c: NULL once the client is gone (only the server's share is counted). */
static inline void qmp_uncharge(struct qmp_server *s, struct qmp_conn *c,
				size_t cost)
{
	if (c)
		c->queued -= cost;
	atomic_fetch_sub(&s->queued, cost);
}

/* ---- qmp_output.c ---- */

/* Wakes the I/O thread: a reply or an event is waiting. */
void qmp_wake(struct qmp_server *s);

/* Bytes queued for c and not yet sent. */
static inline size_t qmp_conn_backlog(const struct qmp_conn *c)
{
	return c->out_len - c->out_pos;
}

/*
 * Grows one of c's buffers (*buf, *buf_cap: c->in or c->out) to @cap
 * bytes; out of memory, c is dropped (dead) and false returned.
 */
bool qmp_conn_grow(struct qmp_conn *c, char **buf, size_t *buf_cap, size_t cap);
/* Sends what it can of c's backlog without blocking. */
void qmp_conn_flush(struct qmp_conn *c);
/* Queues one message and its "\r\n" (QEMU's line end) and tries to send. */
void qmp_conn_send(struct qmp_server *s, struct qmp_conn *c, const char *text,
		   size_t len);
void qmp_conn_send_json(struct qmp_server *s, struct qmp_conn *c,
			struct json_object *o);
void qmp_conn_send_error(struct qmp_server *s, struct qmp_conn *c,
			 const char *desc);
/* {"error": {"class", "desc"}}: a new object. */
struct json_object *qmp_error_object(const char *class, const char *desc);

/* ---- qmp_events.c ---- */

/* Writes every queued event to every negotiated client (I/O thread). */
void qmp_deliver_events(struct qmp_server *s);
/* c caught up after skipping lossy events: tells it how many. */
void qmp_report_lost(struct qmp_server *s, struct qmp_conn *c);
void qmp_events_free(struct qmp_server *s);
/*
 * A reply made by the I/O thread, in its place among c's replies: now, or
 * once every earlier one is out.  Takes resp.
 */
void qmp_conn_reply(struct qmp_server *s, struct qmp_conn *c,
		    struct json_object *resp);

/* ---- qmp_worker.c ---- */

/* Neither run inline nor a query: it runs on the operation thread. */
static inline bool qmp_is_operation(const struct qmp_command *cmd)
{
	return !(cmd->flags & (QMP_CMD_FAST | QMP_CMD_QUERY));
}

/* Checks the arguments against the declaration, then runs the handler. */
int qmp_call_handler(const struct qmp_entry *e, struct json_object *args,
		     struct json_object **ret, struct qmp_error *err);
/* {"return": ret} or {"error": err}, with the request's id; takes ret. */
struct json_object *qmp_response(int rc, struct json_object *ret,
				 const struct qmp_error *err,
				 struct json_object *req);
/*
 * Around the requests of one read (I/O thread): qmp_submit queues them
 * without waking the workers, and the release wakes each that has work.
 * So a burst sent in one write is queued whole before the operation thread
 * looks, and runs as one batch instead of its first request alone.
 */
void qmp_submit_hold(struct qmp_server *s);
void qmp_submit_release(struct qmp_server *s);
/* Hands req to a worker; false (req still ours) once they are stopping. */
bool qmp_submit(struct qmp_server *s, struct qmp_conn *c,
		const struct qmp_entry *e, struct json_object *req,
		struct json_object *args, size_t cost);
void qmp_job_free(struct qmp_job *j);
void qmp_workers_init(struct qmp_server *s);
int qmp_workers_start(struct qmp_server *s);
/* Lets every worker finish and joins it; queued jobs get the shutdown. */
void qmp_workers_stop(struct qmp_server *s);
void qmp_workers_destroy(struct qmp_server *s);

/* ---- qmp_dispatch.c ---- */

/* What a parsed request holds in memory, about (qmp_lex.h). */
size_t qmp_request_cost(struct json_object *req);
/*
 * Answers req at once, hands it to a worker, holds it until the client's
 * earlier requests are answered, or, read ahead past a limit, refuses it.
 * Takes over req (cost: its estimated bytes).
 */
void qmp_dispatch(struct qmp_server *s, struct qmp_conn *c,
		  struct json_object *req, size_t cost);
/* The server's own commands (qmp_capabilities, query-commands). */
bool qmp_is_builtin(const char *name);
const struct qmp_entry *qmp_find_command(struct qmp_server *s,
					 const char *name);

/* ---- qmp_input.c ---- */

/* Reads what c sent and goes on as qmp_conn_process(). */
void qmp_conn_read(struct qmp_server *s, struct qmp_conn *c);
/* Parses and dispatches what c sent, until it needs more or is stalled. */
void qmp_conn_process(struct qmp_server *s, struct qmp_conn *c);
/* Whether c has sent something that must wait for its earlier replies. */
bool qmp_conn_stalled(const struct qmp_conn *c);

/* ---- qmp_replies.c ---- */

/* Replies from the workers, after the events their commands raised. */
void qmp_deliver_replies(struct qmp_server *s);

/* ---- qmp_access.c ---- */

/* Binds s->path (qmp_server_create()'s rules) into s->listen_fd. */
int qmp_bind_socket(struct qmp_server *s);
/* Unlinks s->path if it is still the socket qmp_bind_socket() made. */
void qmp_unlink_socket(struct qmp_server *s);
/* Accepts every pending connection that may connect. */
void qmp_accept_clients(struct qmp_server *s);
/*
 * Closes the clients that did not negotiate in time; returns the poll
 * timeout until the next such deadline (-1: none).
 */
int qmp_expire_idle(struct qmp_server *s);

#endif
