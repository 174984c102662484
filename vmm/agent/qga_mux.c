// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest agent's socket for other clients (qga_mux.h).  Two threads:
 * the I/O thread accepts clients, reads their lines, answers the bad ones
 * itself and writes every reply; the call thread takes the clients'
 * requests in turn and makes each one a qga_forward() of its own.  A
 * client's slot carries a generation number, so that a reply to a client
 * that went away meanwhile is dropped, never written to its successor.
 */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "qga_mux.h"
#include "seccomp_policy.h"
#include "unix_listen.h"

/* A client's line: as long as a reply may be. */
#define MUX_LINE_MAX QGA_REPLY_MAX

enum mux_kind {
	MUX_CALL,	/* a command with a reply */
	MUX_NO_REPLY,	/* guest-shutdown and the suspends: none on success */
	MUX_SYNC,	/* guest-sync: {"return": id} */
	MUX_SYNC_DELIM, /* guest-sync-delimited: 0xff, then as guest-sync */
};

/* One client request, as the call thread runs it. */
struct mux_req {
	enum mux_kind kind;
	char *cmd;
	struct json_object *args, *id; /* id: the client's, echoed back */
};

struct mux_client {
	int fd; /* -1: a free slot */
	unsigned long gen;
	/* I/O thread only. */
	char *in;
	size_t in_len;
	bool discarding; /* an over-long line, until its newline */
	char *out;
	size_t out_len, out_off;
	/*
	 * Under the mux's lock: the request (the call thread's once taken),
	 * then its reply.
	 */
	bool busy;   /* a request is queued or running */
	bool queued; /* ...and not taken yet: in req */
	struct mux_req req;
	char *reply; /* ready for the I/O thread; NULL: no reply */
	bool replied;
};

struct qga_mux {
	struct qga *g;
	char *path;
	char *allow; /* ",name,name,": the commands allowed; NULL: all */
	struct unix_listen_id sock;
	int listen_fd;
	uid_t owner; /* who may connect, with root */
	int wake_fd; /* the call thread, or the stop, to the I/O thread */
	pthread_t io, call;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a request queued, or stopping */
	bool stopping;
	unsigned int next; /* the call thread's round robin */
	struct mux_client c[QGA_MUX_MAX_CLIENTS];
	struct qga_mux_stats stats;
};

static void mux_wake(struct qga_mux *m)
{
	uint64_t one = 1;

	if (write(m->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_err("agent socket: cannot wake its thread: %s",
		       strerror(errno));
}

static void mux_count(struct qga_mux *m, unsigned long *stat)
{
	pthread_mutex_lock(&m->lock);
	(*stat)++;
	pthread_mutex_unlock(&m->lock);
}

/* An error line as qemu-ga writes them, with the client's id if any. */
static char *mux_error(const char *desc, struct json_object *id)
{
	struct json_object *o = json_object_new_object(),
			   *e = json_object_new_object();
	char *s = NULL;

	if (o && e) {
		json_object_object_add(e, "class",
				       json_object_new_string("GenericError"));
		json_object_object_add(e, "desc", json_object_new_string(desc));
		json_object_object_add(o, "error", json_object_get(e));
		if (id)
			json_object_object_add(o, "id", json_object_get(id));
		if (asprintf(&s, "%s\n",
			     json_object_to_json_string_ext(
				     o, JSON_C_TO_STRING_PLAIN)) < 0)
			s = NULL;
	}
	json_object_put(e);
	json_object_put(o);
	return s;
}

/* ---- the call thread ---- */

/* The reply line to a forwarded request (NULL: none, or out of memory). */
static char *mux_reply(const struct mux_req *q, struct json_object *r, int rc,
		       const struct hv_err *err)
{
	struct json_object *v;
	char *s = NULL;

	if (rc)
		return mux_error(*err->msg ? err->msg : strerror(-rc), q->id);
	if (!r)
		return NULL; /* no reply on success, as the agent */
	if (q->kind == MUX_SYNC || q->kind == MUX_SYNC_DELIM) {
		/* The agent echoed the id through hotvm's own handshake. */
		if (!json_object_object_get_ex(r, "return", &v) ||
		    !json_object_equal(v,
				       json_object_object_get(q->args, "id")))
			return mux_error("the guest agent did not echo the "
					 "sync id",
					 q->id);
	}
	if (q->id)
		json_object_object_add(r, "id", json_object_get(q->id));
	if (asprintf(&s, "%s%s\n", q->kind == MUX_SYNC_DELIM ? "\xff" : "",
		     json_object_to_json_string_ext(
			     r, JSON_C_TO_STRING_PLAIN)) < 0)
		s = NULL;
	return s;
}

static void mux_free_req(struct mux_req *q)
{
	free(q->cmd);
	json_object_put(q->args);
	json_object_put(q->id);
	*q = (struct mux_req){ 0 };
}

/*
 * Lock held: takes the next queued request, round robin, into @q (the
 * call thread's from now on); -1 when none.
 */
static int mux_take(struct qga_mux *m, struct mux_req *q)
{
	for (unsigned int k = 0; k < QGA_MUX_MAX_CLIENTS; k++) {
		unsigned int i = (m->next + k) % QGA_MUX_MAX_CLIENTS;
		struct mux_client *c = &m->c[i];

		if (c->fd >= 0 && c->queued) {
			c->queued = false;
			*q = c->req;
			c->req = (struct mux_req){ 0 };
			m->next = i + 1;
			return (int)i;
		}
	}
	return -1;
}

/* Runs @q for slot @i (lock held on entry and on return). */
static void mux_run(struct qga_mux *m, int i, struct mux_req *q)
{
	struct mux_client *c = &m->c[i];
	unsigned long gen = c->gen;
	struct json_object *r = NULL;
	struct hv_err err = { 0 };
	char *line;
	int rc;

	pthread_mutex_unlock(&m->lock);
	/* The delimited sync's 0xff is hotvm's to add, not the agent's. */
	rc = qga_forward(
		m->g, q->kind == MUX_SYNC_DELIM ? "guest-sync" : q->cmd,
		q->args, q->kind != MUX_NO_REPLY, &r, QGA_MUX_TIMEOUT_MS, &err);
	line = mux_reply(q, r, rc, &err);
	pthread_mutex_lock(&m->lock);
	if (rc || (r && json_object_object_get_ex(r, "error", NULL)))
		m->stats.failed++;
	json_object_put(r);
	mux_free_req(q);
	if (c->gen != gen) {
		/* Gone meanwhile (the slot may have a new client). */
		m->stats.dropped++;
		free(line);
		return;
	}
	c->reply = line;
	c->replied = true;
	mux_wake(m);
}

static void *mux_call_thread(void *arg)
{
	struct qga_mux *m = arg;

	seccomp_enter(SECCOMP_THREAD_AGENT_CALL);
	pthread_mutex_lock(&m->lock);
	while (!m->stopping) {
		struct mux_req q;
		int i = mux_take(m, &q);

		if (i < 0)
			pthread_cond_wait(&m->cond, &m->lock);
		else
			mux_run(m, i, &q);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* ---- the I/O thread ---- */

/* A request the call thread has taken is its own to free. */
static void mux_close(struct qga_mux *m, struct mux_client *c)
{
	pthread_mutex_lock(&m->lock);
	close(c->fd);
	c->fd = -1;
	c->gen++;
	mux_free_req(&c->req);
	free(c->reply);
	c->reply = NULL;
	c->busy = c->queued = c->replied = false;
	pthread_mutex_unlock(&m->lock);
	free(c->in);
	free(c->out);
	c->in = c->out = NULL;
	c->in_len = c->out_len = c->out_off = 0;
	c->discarding = false;
}

static void mux_send(struct mux_client *c, char *line)
{
	free(c->out);
	c->out = line;
	c->out_len = line ? strlen(line) : 0;
	c->out_off = 0;
}

/* The kind of request @cmd is, and whether its arguments fit it. */
static const char *mux_kind_of(const char *cmd, struct json_object *args,
			       enum mux_kind *kind)
{
	struct json_object *v;

	*kind = MUX_CALL;
	if (!strcmp(cmd, "guest-shutdown") ||
	    !strncmp(cmd, "guest-suspend-", strlen("guest-suspend-")))
		*kind = MUX_NO_REPLY;
	if (strcmp(cmd, "guest-sync") && strcmp(cmd, "guest-sync-delimited"))
		return NULL;
	*kind = strcmp(cmd, "guest-sync") ? MUX_SYNC_DELIM : MUX_SYNC;
	if (!args || !json_object_object_get_ex(args, "id", &v) ||
	    !json_object_is_type(v, json_type_int))
		return "guest-sync needs an integer \"id\" argument";
	return NULL;
}

bool qga_mux_allow_valid(const char *list)
{
	bool name = false;

	for (const char *p = list; *p; p++) {
		if (*p == ',') {
			if (!name)
				return false;
			name = false;
		} else if ((*p >= 'a' && *p <= 'z') ||
			   (*p >= 'A' && *p <= 'Z') ||
			   (*p >= '0' && *p <= '9') || *p == '-' || *p == '_') {
			name = true;
		} else {
			return false;
		}
	}
	return name;
}

/* Whether clients may send @cmd: the handshake always, else the list's. */
static bool mux_allowed(const struct qga_mux *m, const char *cmd)
{
	size_t n = strlen(cmd);
	const char *p;

	if (!m->allow || !strcmp(cmd, "guest-sync") ||
	    !strcmp(cmd, "guest-sync-delimited"))
		return true;
	if (!n || strchr(cmd, ','))
		return false;
	for (p = strstr(m->allow, cmd); p; p = strstr(p + 1, cmd))
		if (p[-1] == ',' && p[n] == ',')
			return true;
	return false;
}

/*
 * The refusal of a command not on the list, in the words qemu-ga uses for
 * a command disabled with its --block-rpcs (a long name is not repeated).
 */
static char *mux_not_allowed(const char *cmd, struct json_object *id)
{
	char desc[256];

	if (strlen(cmd) > 64)
		cmd = "asked for";
	snprintf(desc, sizeof(desc),
		 "The command %s has been disabled for this instance: it is "
		 "not in hotvm's --agent-allow list",
		 cmd);
	return mux_error(desc, id);
}

/* What is wrong with request @o, or NULL. */
static const char *mux_check(struct json_object *o, struct json_object **ex,
			     struct json_object **args, struct json_object *id)
{
	size_t members = 1 + (id != NULL);

	if (!json_object_object_get_ex(o, "execute", ex) ||
	    !json_object_is_type(*ex, json_type_string))
		return "no \"execute\" with a command name";
	if (json_object_object_get_ex(o, "arguments", args)) {
		if (!json_object_is_type(*args, json_type_object))
			return "\"arguments\" is not an object";
		members++;
	}
	if ((size_t)json_object_object_length(o) != members)
		return "members other than execute, arguments and id";
	return NULL;
}

/*
 * One request line (without its newline, after the last 0xff), checked
 * as strictly as the agent's replies are.  Queues it and returns NULL, or
 * returns the error line to send.
 */
static char *mux_request(struct qga_mux *m, struct mux_client *c, const char *s,
			 size_t len)
{
	struct json_object *o = NULL, *ex = NULL, *args = NULL, *id = NULL;
	struct mux_req q = { 0 };
	const char *bad;
	struct hv_err why = { 0 };
	char *e;

	if (qga_json_parse(s, len, &o, &why)) {
		mux_count(m, &m->stats.bad);
		return mux_error(hv_err_msg(&why), NULL);
	}
	json_object_object_get_ex(o, "id", &id);
	bad = mux_check(o, &ex, &args, id);
	if (!bad)
		bad = mux_kind_of(json_object_get_string(ex), args, &q.kind);
	if (!bad && !mux_allowed(m, json_object_get_string(ex))) {
		e = mux_not_allowed(json_object_get_string(ex), id);
		mux_count(m, &m->stats.refused);
		json_object_put(o);
		return e;
	}
	if (!bad && !(q.cmd = strdup(json_object_get_string(ex))))
		bad = "out of memory";
	if (bad) {
		e = mux_error(bad, id);
		mux_count(m, &m->stats.bad);
		json_object_put(o);
		return e;
	}
	q.args = json_object_get(args);
	q.id = json_object_get(id);
	json_object_put(o);
	pthread_mutex_lock(&m->lock);
	c->req = q;
	c->busy = c->queued = true;
	m->stats.requests++;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/*
 * Takes lines out of c->in while the client has nothing in flight and
 * nothing unsent: a blank one is skipped, a bad one answered, a good one
 * queued.
 */
static void mux_lines(struct qga_mux *m, struct mux_client *c)
{
	char *nl;

	while (!c->busy && !c->out_len &&
	       (nl = memchr(c->in, '\n', c->in_len))) {
		size_t n = (size_t)(nl - c->in), rest = c->in_len - n - 1;
		const char *s;
		size_t cut;
		char *e;

		/* A 0xff resets the line, as it resets qemu-ga's parser. */
		s = qga_line_trim(c->in, &n, &cut);
		e = n ? mux_request(m, c, s, n) : NULL;
		if (e)
			mux_send(c, e);
		memmove(c->in, nl + 1, rest);
		c->in_len = rest;
	}
}

/*
 * Reads what the client sent; false when it is gone.  Only as much as
 * the line buffer holds: it is read only when no complete line waits in
 * it (mux_lines() ran), so a full buffer is one line over the limit.
 */
static bool mux_read(struct qga_mux *m, struct mux_client *c)
{
	size_t room = MUX_LINE_MAX - c->in_len;
	char buf[4096];
	ssize_t n;

	if (!room) {
		/* Too long: answered once, dropped up to its newline. */
		c->in_len = 0;
		c->discarding = true;
		mux_count(m, &m->stats.bad);
		mux_send(c, mux_error("request longer than 1 MiB", NULL));
		return true;
	}
	n = recv(c->fd, buf, room < sizeof(buf) ? room : sizeof(buf),
		 MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		return false;
	for (ssize_t i = 0; i < n; i++) {
		if (c->discarding)
			c->discarding = buf[i] != '\n';
		else
			c->in[c->in_len++] = buf[i];
	}
	mux_lines(m, c);
	return true;
}

/* Writes what is pending; false when the client is gone. */
static bool mux_write(struct qga_mux *m, struct mux_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off,
				 c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		c->out_off += (size_t)n;
	}
	mux_send(c, NULL);
	mux_lines(m, c);
	return true;
}

static void mux_accept(struct qga_mux *m)
{
	int fd =
		accept4(m->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct mux_client *c = NULL;
	struct ucred cr;

	if (fd < 0)
		return;
	if (!unix_peer_allowed(fd, m->owner, NULL, &cr)) {
		pr_err("agent socket: refusing uid %d (pid %d): only hotvm's "
		       "user and root may use the guest agent",
		       (int)cr.uid, (int)cr.pid);
		mux_count(m, &m->stats.refused);
		close(fd);
		return;
	}
	for (size_t i = 0; i < QGA_MUX_MAX_CLIENTS && !c; i++)
		if (m->c[i].fd < 0)
			c = &m->c[i];
	if (c) {
		c->in = malloc(MUX_LINE_MAX);
		if (!c->in) {
			pr_err("agent socket: out of memory for a client");
			c = NULL;
		}
	}
	if (!c) {
		static const char full[] =
			"{\"error\":{\"class\":\"GenericError\",\"desc\":"
			"\"too many clients of the guest agent's socket\"}}\n";

		send(fd, full, sizeof(full) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		mux_count(m, &m->stats.refused);
		close(fd);
		return;
	}
	pthread_mutex_lock(&m->lock);
	c->fd = fd;
	m->stats.clients++;
	pthread_mutex_unlock(&m->lock);
}

/* The call thread's replies, moved to the clients' output. */
static void mux_collect(struct qga_mux *m)
{
	uint64_t v;

	if (read(m->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	for (size_t i = 0; i < QGA_MUX_MAX_CLIENTS; i++) {
		struct mux_client *c = &m->c[i];
		char *line;

		pthread_mutex_lock(&m->lock);
		if (c->fd < 0 || !c->replied) {
			pthread_mutex_unlock(&m->lock);
			continue;
		}
		line = c->reply;
		c->reply = NULL;
		c->replied = c->busy = false;
		pthread_mutex_unlock(&m->lock);
		mux_send(c, line);
		if (!mux_write(m, c)) {
			mux_count(m, &m->stats.dropped);
			mux_close(m, c);
		}
	}
}

static void *mux_io_thread(void *arg)
{
	struct qga_mux *m = arg;
	struct pollfd p[2 + QGA_MUX_MAX_CLIENTS];

	seccomp_enter(SECCOMP_THREAD_AGENT_IO);
	for (;;) {
		pthread_mutex_lock(&m->lock);
		if (m->stopping) {
			pthread_mutex_unlock(&m->lock);
			break;
		}
		pthread_mutex_unlock(&m->lock);
		p[0] = (struct pollfd){ .fd = m->wake_fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = m->listen_fd, .events = POLLIN };
		for (size_t i = 0; i < QGA_MUX_MAX_CLIENTS; i++) {
			struct mux_client *c = &m->c[i];

			/* Nothing read while a request is outstanding. */
			p[2 + i] = (struct pollfd){
				.fd = c->fd,
				.events = c->out_len ? POLLOUT
					  : c->busy  ? 0
						     : POLLIN,
			};
		}
		if (poll(p, 2 + QGA_MUX_MAX_CLIENTS, -1) < 0)
			continue;
		if (p[0].revents & POLLIN)
			mux_collect(m);
		if (p[1].revents & POLLIN)
			mux_accept(m);
		for (size_t i = 0; i < QGA_MUX_MAX_CLIENTS; i++) {
			struct mux_client *c = &m->c[i];
			short r = p[2 + i].revents;

			if (c->fd < 0 || c->fd != p[2 + i].fd || !r)
				continue;
			if (((r & POLLOUT) && !mux_write(m, c)) ||
			    ((r & POLLIN) && !mux_read(m, c)) ||
			    (r & (POLLERR | POLLNVAL)) ||
			    ((r & POLLHUP) && !(r & POLLIN)))
				mux_close(m, c);
		}
	}
	return NULL;
}

/* ---- life ---- */

int qga_mux_create(struct qga *g, const char *path, const char *allow,
		   struct qga_mux **out)
{
	struct qga_mux *m = calloc(1, sizeof(*m));
	int fd;

	*out = NULL;
	if (allow && !qga_mux_allow_valid(allow)) {
		pr_err("agent socket: '%s' is not a list of command names",
		       allow);
		free(m);
		return -EINVAL;
	}
	if (!m || !(m->path = strdup(path)) ||
	    (allow && asprintf(&m->allow, ",%s,", allow) < 0)) {
		if (m)
			free(m->path);
		free(m);
		return -ENOMEM;
	}
	fd = unix_listen(path, NULL, "agent socket", &m->sock);
	if (fd < 0) {
		free(m->allow);
		free(m->path);
		free(m);
		return fd;
	}
	m->listen_fd = fd;
	m->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (m->wake_fd < 0) {
		fd = -errno;
		close(m->listen_fd);
		unix_listen_unlink(path, &m->sock);
		free(m->allow);
		free(m->path);
		free(m);
		return fd;
	}
	m->g = g;
	m->owner = getuid();
	for (size_t i = 0; i < QGA_MUX_MAX_CLIENTS; i++)
		m->c[i].fd = -1;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	*out = m;
	return 0;
}

int qga_mux_start(struct qga_mux *m)
{
	int rc = pthread_create(&m->call, NULL, mux_call_thread, m);

	if (rc)
		return -rc;
	rc = pthread_create(&m->io, NULL, mux_io_thread, m);
	if (rc) {
		pthread_mutex_lock(&m->lock);
		m->stopping = true;
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		pthread_join(m->call, NULL);
		return -rc;
	}
	m->started = true;
	return 0;
}

void qga_mux_stop(struct qga_mux *m)
{
	if (!m)
		return;
	if (m->started) {
		pthread_mutex_lock(&m->lock);
		m->stopping = true;
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		mux_wake(m);
		pthread_join(m->io, NULL);
		pthread_join(m->call, NULL);
	}
	for (size_t i = 0; i < QGA_MUX_MAX_CLIENTS; i++) {
		struct mux_client *c = &m->c[i];

		if (c->fd >= 0)
			mux_close(m, c);
	}
	close(m->wake_fd);
	close(m->listen_fd);
	unix_listen_unlink(m->path, &m->sock);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m->allow);
	free(m->path);
	free(m);
}

void qga_mux_get_stats(struct qga_mux *m, struct qga_mux_stats *out)
{
	pthread_mutex_lock(&m->lock);
	*out = m->stats;
	pthread_mutex_unlock(&m->lock);
}
