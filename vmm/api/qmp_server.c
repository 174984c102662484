// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP server's life (see vmm/api/qmp.h): create and bind, register the
 * commands, start the threads, stop; and the I/O thread's loop, which
 * polls the listening socket, every client and a wakeup eventfd.
 *
 * The API is driven by orchestration and must never take the VMM down, so
 * every input is hostile (qmp_input.c), no write blocks (qmp_output.c),
 * what is read ahead is bounded (qmp_dispatch.c), and handlers that may
 * block run on the workers (qmp_worker.c).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "qmp_internal.h"
#include "log.h"
#include "seccomp_policy.h"

#ifndef HOTVM_VERSION
#define HOTVM_VERSION "0.1.0"
#endif

/* The QEMU version hotvm's greeting claims: what QMP tools key off. */
#define QMP_QEMU_MAJOR 7
#define QMP_QEMU_MINOR 2
#define QMP_QEMU_MICRO 0

static void conn_free(struct qmp_server *s, struct qmp_conn *c)
{
	close(c->fd);
	json_object_put(c->held);
	/* Its jobs still on the workers are uncounted when they are done. */
	qmp_uncharge(s, NULL, c->held_cost);
	free(c->held_reply);
	free(c->in);
	free(c->out);
	free(c);
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

/*
 * The poll set: the wake fd, the listener and each connection, which is
 * polled for input only while it may take more and for output only while
 * it has some waiting.  Returns the poll's timeout: out of fds, accepting
 * stops for a while (100 ms at most) rather than spin.
 */
static int fill_pollfds(struct qmp_server *s, struct pollfd *pfd, int timeout)
{
	pfd[0] = (struct pollfd){ .fd = s->wake_fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = s->accept_paused ? -1 : s->listen_fd,
				  .events = POLLIN };
	if (s->accept_paused && (timeout < 0 || timeout > 100))
		timeout = 100;
	for (size_t i = 0; i < s->n_conns; i++) {
		struct qmp_conn *c = s->conns[i];

		pfd[2 + i] = (struct pollfd){
			.fd = c->fd,
			.events = (c->eof || qmp_conn_stalled(c) ? 0 : POLLIN) |
				  (qmp_conn_backlog(c) ? POLLOUT : 0),
		};
	}
	return timeout;
}

/*
 * The first @n connections' events after a poll (@pfd is theirs): output
 * flushed, a closed or stalled one marked dead once its replies are out
 * or its peer is gone, input read.
 */
static void serve_conns(struct qmp_server *s, const struct pollfd *pfd,
			size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct qmp_conn *c = s->conns[i];
		short re = pfd[i].revents;

		if (re & POLLOUT) {
			qmp_conn_flush(c);
			qmp_report_lost(s, c);
		}
		if (c->eof) {
			c->dead |= (qmp_conn_backlog(c) == 0 && !c->inflight) ||
				   (re & (POLLERR | POLLHUP));
			continue;
		}
		if (qmp_conn_stalled(c)) {
			/* Gone for good: its reply has nowhere to go. */
			c->dead |= (re & (POLLERR | POLLHUP)) != 0;
			continue;
		}
		if (re & (POLLIN | POLLHUP | POLLERR))
			qmp_conn_read(s, c);
	}
}

static void *server_thread(void *arg)
{
	struct qmp_server *s = arg;
	struct pollfd *pfd = NULL;
	size_t pfd_cap = 0;

	seccomp_enter(SECCOMP_THREAD_QMP_IO);
	while (!atomic_load(&s->stopping)) {
		int n, timeout = qmp_expire_idle(s);
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
		timeout = fill_pollfds(s, pfd, timeout);
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
		qmp_deliver_replies(s);
		qmp_deliver_events(s);
		serve_conns(s, pfd + 2, nfds - 2);
		reap(s);
		if (pfd[1].revents)
			qmp_accept_clients(s);
	}
	/* Last words: the reply to `quit`, a SHUTDOWN event. */
	qmp_deliver_replies(s);
	qmp_deliver_events(s);
	for (size_t i = 0; i < s->n_conns; i++)
		qmp_conn_flush(s->conns[i]);
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

static void server_free(struct qmp_server *s)
{
	for (size_t i = 0; i < s->n_conns; i++)
		conn_free(s, s->conns[i]);
	free(s->conns);
	qmp_events_free(s);
	qmp_workers_destroy(s);
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		qmp_unlink_socket(s);
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
	qmp_workers_init(s);
	s->path = strdup(opts->path);
	rc = s->path ? make_greeting(s, opts->package ?: "hotvm-" HOTVM_VERSION)
		     : -ENOMEM;
	if (!rc) {
		s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		rc = s->wake_fd < 0 ? -errno : 0;
	}
	if (!rc)
		rc = qmp_bind_socket(s);
	if (rc) {
		server_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int qmp_server_register(struct qmp_server *s, const struct qmp_command *cmds,
			size_t n, void *ctx)
{
	struct qmp_entry *p;

	if (s->started)
		return -EBUSY;
	for (size_t i = 0; i < n; i++) {
		if (!qmp_command_ok(&cmds[i]))
			return -EINVAL;
		if (qmp_is_builtin(cmds[i].name) ||
		    qmp_find_command(s, cmds[i].name))
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
		s->cmds[s->n_cmds++] =
			(struct qmp_entry){ .cmd = &cmds[i], .ctx = ctx };
	return 0;
}

int qmp_server_start(struct qmp_server *s)
{
	int rc;

	if (s->started)
		return -EBUSY;
	rc = qmp_workers_start(s);
	if (!rc)
		rc = -pthread_create(&s->thread, NULL, server_thread, s);
	if (rc) {
		pr_err("api: cannot start the control threads: %s",
		       strerror(-rc));
		qmp_workers_stop(s);
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
		qmp_workers_stop(s);
		atomic_store(&s->stopping, true);
		qmp_wake(s);
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
