// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who may use the control API (docs/security.md): the socket is created
 * mode 0600 (0660 and the API group's with one), each connection's peer
 * credentials are checked, at most max_clients are served, and a client
 * that never negotiates is closed after negotiate_timeout_ms.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "qmp_internal.h"
#include "log.h"
#include "unix_listen.h"

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

/* SO_PEERCRED: our own uid, root, or a member of the API group. */
static bool peer_allowed(struct qmp_server *s, int fd)
{
	struct ucred cr;
	char msg[160];

	if (unix_peer_allowed(fd, s->owner, s->api_group ? &s->api_gid : NULL,
			      &cr))
		return true;
	if (cr.uid == (uid_t)-1 && !cr.pid) {
		pr_err("api: refusing a connection: no peer credentials");
		return false;
	}
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

void qmp_accept_clients(struct qmp_server *s)
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
		if (!c || !conns) {
			pr_err("api: dropping a new client: out of memory");
			free(c);
			close(fd);
			continue;
		}
		/*
		 * Replies must be JSON: c->lex refuses bytes that are not
		 * UTF-8, and everything else QEMU's grammar does not take.
		 */
		qmp_lex_reset(&c->lex, s->max_queued);
		c->fd = fd;
		c->id = ++s->next_conn_id;
		c->since_ms = hv_now_ms();
		s->conns[s->n_conns++] = c;
		atomic_store(&s->n_clients, s->n_conns);
		qmp_conn_send(s, c, s->greeting, strlen(s->greeting));
	}
}

/*
 * A client that never negotiates holds a slot for nothing: after
 * negotiate_timeout_ms it is closed.  Returns the poll timeout until the
 * next such deadline (-1: none).
 */
int qmp_expire_idle(struct qmp_server *s)
{
	long long now = hv_now_ms(), next = -1;

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
			qmp_conn_send_error(s, c,
					    "no qmp_capabilities in time; "
					    "closing");
			c->dead = true;
		} else if (next < 0 || left < next) {
			next = left;
		}
	}
	return (int)next;
}

int qmp_bind_socket(struct qmp_server *s)
{
	struct unix_listen_id id;
	int fd = unix_listen(s->path, s->api_group ? &s->api_gid : NULL, "api",
			     &id);

	if (fd < 0)
		return fd;
	s->dev = id.dev;
	s->ino = id.ino;
	s->listen_fd = fd;
	return 0;
}

void qmp_unlink_socket(struct qmp_server *s)
{
	unix_listen_unlink(s->path, &(struct unix_listen_id){ .dev = s->dev,
							      .ino = s->ino });
}
