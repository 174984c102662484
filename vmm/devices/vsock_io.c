// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-vsock's I/O thread (vsock.h): the host's side of the sockets.
 * It accepts host clients on PATH and reads their `CONNECT <port>\n`,
 * connects the guest's requests to PATH_<port>, polls each connection's
 * socket for bytes while the guest has credit for them and for room
 * while the guest's bytes wait, times out a handshake or a request the
 * guest leaves unanswered, and is the only thread that closes a socket
 * (so no descriptor is reused under another thread's poll).  Never
 * blocks but in poll(); the device thread does the reads and writes that
 * fill and empty the queues.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "seccomp_policy.h"
#include "unix_listen.h"
#include "vsock.h"

#define NFIXED 3 /* stop, wake, listen */

static void notify_rx(struct vsock *s)
{
	if (s->mmio)
		virtio_mmio_notify(s->mmio, VSOCK_Q_RX);
}

/* Lock held: the slot's socket closed and the slot free again. */
static void release(struct vsock_conn *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	k->state = VSOCK_FREE;
	k->pend = 0;
}

/* Lock held: an RST to the guest, and the connection ends. */
static void reset_conn(struct vsock *s, struct vsock_conn *k)
{
	if (s->rst_n < VSOCK_RST_MAX) {
		s->rst[s->rst_n].src = k->peer_port;
		s->rst[s->rst_n].dst = k->local_port;
		s->rst_n++;
	} else {
		s->st.rst_dropped++;
	}
	vsock_conn_close(s, k);
}

/* Lock held: the guest's request for PATH_<port>, connected or refused. */
static void connect_out(struct vsock *s, struct vsock_conn *k)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = -1;

	/* vsock_parse() left room for "_4294967295". */
	if (snprintf(a.sun_path, sizeof(a.sun_path), "%s_%u", s->path,
		     k->local_port) < (int)sizeof(a.sun_path))
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		s->st.refused++; /* nobody listens there: the guest's ECONNRESET */
		reset_conn(s, k);
		return;
	}
	k->fd = fd;
	k->host_side = false;
	k->state = VSOCK_ESTABLISHED;
	k->pend |= VSOCK_P_RESPONSE;
}

/* "CONNECT <port>", nothing more; the port or -1. */
static int64_t connect_port(const char *l)
{
	int64_t v = 0;

	if (strncmp(l, "CONNECT ", 8) || !l[8])
		return -1;
	for (l += 8; *l; l++) {
		if (*l < '0' || *l > '9' || v > UINT32_MAX)
			return -1;
		v = v * 10 + (*l - '0');
	}
	return v > UINT32_MAX ? -1 : v;
}

/* Lock held: a host client's bytes until its line ends, one at a time. */
static void handshake(struct vsock *s, struct vsock_conn *k)
{
	for (;;) {
		char ch;
		ssize_t r = read(k->fd, &ch, 1);
		int64_t port;

		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r <= 0 || k->line_len == VSOCK_LINE_MAX - 1)
			break; /* gone, or a line too long */
		if (ch != '\n') {
			k->line[k->line_len++] = ch;
			continue;
		}
		k->line[k->line_len] = 0;
		port = connect_port(k->line);
		if (port < 0)
			break;
		k->state = VSOCK_REQUESTED;
		k->host_side = true;
		k->peer_port = (uint32_t)port;
		k->local_port = vsock_local_port(s);
		k->pend = VSOCK_P_REQUEST;
		k->deadline_ms = hv_now_ms() + VSOCK_CONNECT_MS;
		return;
	}
	s->st.refused++;
	s->st.closed++;
	release(k);
}

/* Lock held: what waits for the host socket, written. */
static void flush(struct vsock *s, struct vsock_conn *k)
{
	while (k->buf_len) {
		uint32_t run = VSOCK_BUF_ALLOC - k->buf_head;
		ssize_t w;

		if (run > k->buf_len)
			run = k->buf_len;
		w = write(k->fd, k->buf + k->buf_head, run);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (w <= 0) {
			reset_conn(s, k); /* the host reader is gone */
			return;
		}
		k->buf_head = (k->buf_head + (uint32_t)w) % VSOCK_BUF_ALLOC;
		k->buf_len -= (uint32_t)w;
		k->fwd_cnt += (uint32_t)w;
	}
	vsock_credit_check(k);
	if (!k->buf_len && k->rst_after)
		reset_conn(s, k);
}

/* Lock held: the events @k's socket is polled for now (0: none). */
static short conn_events(struct vsock *s, struct vsock_conn *k, int64_t now,
			 int64_t *next)
{
	short ev = 0;

	if (k->deadline_ms) {
		if (now >= k->deadline_ms) {
			k->deadline_ms = 0;
			if (k->state == VSOCK_HANDSHAKE) {
				s->st.closed++;
				release(k);
			} else {
				reset_conn(s, k); /* the guest did not answer */
			}
			return 0;
		}
		if (!*next || k->deadline_ms < *next)
			*next = k->deadline_ms;
	}
	switch (k->state) {
	case VSOCK_CLOSING:
		release(k);
		return 0;
	case VSOCK_CONNECTING:
		connect_out(s, k);
		/* Connected: polled from now on, as any other. */
		return k->state == VSOCK_ESTABLISHED
			       ? conn_events(s, k, now, next)
			       : 0;
	case VSOCK_HANDSHAKE:
		return POLLIN;
	case VSOCK_ESTABLISHED:
		if (k->host)
			return 0;
		if (k->guest_no_snd && !k->buf_len && !k->shut_wr_done) {
			shutdown(k->fd, SHUT_WR);
			k->shut_wr_done = true;
		}
		/* Bytes only while the guest has credit for them. */
		if (!k->readable && !k->host_eof && !k->guest_no_rcv &&
		    k->rx_cnt - k->peer_fwd_cnt < k->peer_buf_alloc)
			ev |= POLLIN;
		if (k->buf_len)
			ev |= POLLOUT;
		return ev;
	default:
		return 0;
	}
}

static void accept_all(struct vsock *s)
{
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		int i;

		if (fd < 0)
			return;
		pthread_mutex_lock(&s->lock);
		i = vsock_conn_new(s);
		if (i < 0) {
			s->st.refused++;
			close(fd);
		} else {
			s->c[i].state = VSOCK_HANDSHAKE;
			s->c[i].host_side = true;
			s->c[i].fd = fd;
			s->c[i].deadline_ms = hv_now_ms() + VSOCK_CONNECT_MS;
		}
		pthread_mutex_unlock(&s->lock);
	}
}

/* Lock held: what poll said of @k's socket. */
static bool polled(struct vsock *s, struct vsock_conn *k, short re)
{
	bool rx = false;

	if (k->state == VSOCK_HANDSHAKE) {
		handshake(s, k);
		return k->state == VSOCK_REQUESTED;
	}
	if (k->state != VSOCK_ESTABLISHED)
		return false;
	if (re & (POLLIN | POLLHUP | POLLERR)) {
		/* Bytes, EOF or an error: the device thread's read says. */
		k->readable = true;
		rx = true;
	}
	if (re & (POLLOUT | POLLHUP | POLLERR))
		flush(s, k);
	return rx || vsock_conn_has_rx(s, k);
}

/* A polled connection's slot, and its seq then: still the same one? */
struct io_slot {
	int slot;
	unsigned int seq;
};

/*
 * The poll set: the fixed three, then each connection's socket with the
 * events it waits for now (conn_events(), which also ends what timed
 * out, the earliest deadline left in *@next).  Tells the device thread
 * when a connection has bytes or an RST waits.  Returns how many.
 */
static unsigned int poll_set(struct vsock *s, struct pollfd *p,
			     struct io_slot *map, int64_t now, int64_t *next)
{
	unsigned int n = NFIXED;
	bool rx = false;

	p[0] = (struct pollfd){ .fd = s->stop_fd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = s->wake_fd, .events = POLLIN };
	p[2] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *k = &s->c[i];
		short ev;

		if (k->state == VSOCK_FREE)
			continue;
		ev = conn_events(s, k, now, next);
		rx |= vsock_conn_has_rx(s, k) || s->rst_n;
		if (!ev || k->fd < 0)
			continue;
		map[n - NFIXED].slot = i;
		map[n - NFIXED].seq = k->seq;
		p[n++] = (struct pollfd){ .fd = k->fd, .events = ev };
	}
	pthread_mutex_unlock(&s->lock);
	if (rx)
		notify_rx(s);
	return n;
}

/*
 * What poll said of the connections' sockets, each still in the slot it
 * was polled in; tells the device thread when bytes wait.
 */
static void serve_conns(struct vsock *s, const struct pollfd *p,
			const struct io_slot *map, unsigned int n)
{
	bool rx = false;

	for (unsigned int j = NFIXED; j < n; j++) {
		struct vsock_conn *k = &s->c[map[j - NFIXED].slot];

		if (!p[j].revents)
			continue;
		pthread_mutex_lock(&s->lock);
		if (k->seq == map[j - NFIXED].seq)
			rx |= polled(s, k, p[j].revents);
		pthread_mutex_unlock(&s->lock);
	}
	if (rx)
		notify_rx(s);
}

static void *io_thread(void *arg)
{
	struct vsock *s = arg;
	struct pollfd p[NFIXED + VSOCK_MAX_CONNS];
	struct io_slot map[VSOCK_MAX_CONNS];

	prctl(PR_SET_NAME, "vsock-io", 0, 0, 0);
	seccomp_enter(SECCOMP_THREAD_VSOCK);
	for (;;) {
		int64_t now = hv_now_ms(), next = 0;
		unsigned int n = poll_set(s, p, map, now, &next);
		int timeout = next ? (int)(next - now) : -1;

		if (poll(p, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			pr_err("vsock: poll: %s; the device's sockets stop",
			       strerror(errno));
			break;
		}
		if (p[0].revents)
			break;
		if (p[1].revents) {
			uint64_t c;
			ssize_t r = read(s->wake_fd, &c, sizeof(c));

			(void)r;
		}
		if (p[2].revents)
			accept_all(s);
		serve_conns(s, p, map, n);
	}
	return NULL;
}

int vsock_io_start(struct vsock *s)
{
	struct unix_listen_id id;
	int ret;

	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_fd < 0 || s->wake_fd < 0) {
		ret = -errno;
		pr_err("--vsock: eventfd: %s", strerror(-ret));
		goto fail;
	}
	ret = unix_listen(s->path, NULL, "--vsock", &id);
	if (ret < 0)
		goto fail;
	s->listen_fd = ret;
	s->lid.dev = id.dev;
	s->lid.ino = id.ino;
	ret = -pthread_create(&s->thread, NULL, io_thread, s);
	if (ret) {
		pr_err("--vsock: cannot start its thread: %s", strerror(-ret));
		goto fail;
	}
	s->started = true;
	return 0;
fail:
	vsock_io_stop(s);
	return ret;
}

void vsock_io_stop(struct vsock *s)
{
	uint64_t one = 1;

	if (s->started) {
		ssize_t w = write(s->stop_fd, &one, sizeof(one));

		(void)w;
		pthread_join(s->thread, NULL);
		s->started = false;
	}
	if (s->listen_fd >= 0) {
		struct unix_listen_id id = { .dev = s->lid.dev,
					     .ino = s->lid.ino };

		close(s->listen_fd);
		unix_listen_unlink(s->path, &id);
	}
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	s->listen_fd = s->stop_fd = s->wake_fd = -1;
}
