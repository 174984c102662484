// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-vsock's packets (vsock.h): the driver's packets checked and
 * acted on, the receive queue's packets chosen and built, credit both
 * ways, resets.  The header, ops, flags and the credit rule (the sender
 * may have at most buf_alloc - (tx_cnt - fwd_cnt) bytes in flight) from
 * the virtio 1.x spec (5.10) and Linux's linux/virtio_vsock.h.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_ids.h>

#include "clock.h"
#include "vsock.h"

#ifndef VIRTIO_ID_VSOCK
#define VIRTIO_ID_VSOCK 19
#endif

/* Guest-initiated connections leave this many slots to the host's. */
#define VSOCK_HOST_RESERVED 8

void vsock_io_wake(struct vsock *s)
{
	uint64_t one = 1;

	if (s->wake_fd >= 0) {
		ssize_t w = write(s->wake_fd, &one, sizeof(one));

		(void)w;
	}
}

static void notify_rx(struct vsock *s)
{
	if (s->mmio)
		virtio_mmio_notify(s->mmio, VSOCK_Q_RX);
}

int vsock_conn_new(struct vsock *s)
{
	for (int i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *k = &s->c[i];

		if (k->state != VSOCK_FREE)
			continue;
		*k = (struct vsock_conn){
			.seq = k->seq + 1,
			.fd = -1,
			.buf = k->buf, /* kept for the next user */
		};
		s->st.opened++;
		return i;
	}
	return -1;
}

uint32_t vsock_local_port(struct vsock *s)
{
	for (;;) {
		uint32_t p = s->next_port++;
		bool used = false;

		if (s->next_port == UINT32_MAX ||
		    s->next_port < VSOCK_LOCAL_PORT0)
			s->next_port = VSOCK_LOCAL_PORT0;
		for (int i = 0; i < VSOCK_MAX_CONNS && !used; i++)
			used = s->c[i].state != VSOCK_FREE &&
			       s->c[i].local_port == p;
		if (!used)
			return p;
	}
}

/* Lock held: hotvm's endpoint lets go of what the guest did not get. */
static void host_drop(struct vsock *s)
{
	s->st.host_dropped += s->hring_len;
	s->hring_head = s->hring_len = 0;
}

void vsock_conn_close(struct vsock *s, struct vsock_conn *k)
{
	if (k->state == VSOCK_FREE || k->state == VSOCK_CLOSING)
		return;
	s->st.closed++;
	k->pend = 0;
	if (k->host) {
		/* The next send connects afresh. */
		s->host_slot = -1;
		host_drop(s);
		k->state = VSOCK_FREE;
		return;
	}
	k->state = VSOCK_CLOSING; /* the I/O thread closes its socket */
	vsock_io_wake(s);
}

/* Lock held: an RST to the guest for (local, peer), if there is room. */
static void queue_rst(struct vsock *s, uint32_t local, uint32_t peer)
{
	if (s->rst_n == VSOCK_RST_MAX) {
		s->st.rst_dropped++;
		return;
	}
	s->rst[s->rst_n].src = peer;
	s->rst[s->rst_n].dst = local;
	s->rst_n++;
}

/* Lock held: the connection ends with an RST to the guest. */
static void conn_reset(struct vsock *s, struct vsock_conn *k)
{
	queue_rst(s, k->local_port, k->peer_port);
	vsock_conn_close(s, k);
}

/* What the guest can still take of a connection's bytes. */
static uint32_t peer_credit(const struct vsock_conn *k)
{
	uint32_t inflight = k->rx_cnt - k->peer_fwd_cnt;

	return inflight >= k->peer_buf_alloc ? 0 : k->peer_buf_alloc - inflight;
}

bool vsock_conn_has_rx(const struct vsock *s, const struct vsock_conn *k)
{
	if (k->state == VSOCK_FREE || k->state == VSOCK_CLOSING)
		return false;
	if (k->pend)
		return true;
	if (k->state != VSOCK_ESTABLISHED || k->guest_no_rcv || !peer_credit(k))
		return false;
	if (k->host)
		return s->hring_len > 0;
	return k->readable && !k->host_eof;
}

void vsock_credit_check(struct vsock_conn *k)
{
	/* Said often enough that a guest waiting for credit gets it. */
	if (k->fwd_cnt - k->fwd_said >= VSOCK_BUF_ALLOC / 4)
		k->pend |= VSOCK_P_CREDIT;
}

static struct vsock_conn *find(struct vsock *s, uint32_t local, uint32_t peer)
{
	for (int i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *k = &s->c[i];

		if (k->state != VSOCK_FREE && k->state != VSOCK_CLOSING &&
		    k->state != VSOCK_HANDSHAKE && k->local_port == local &&
		    k->peer_port == peer)
			return k;
	}
	return NULL;
}

static unsigned int guest_conns(const struct vsock *s)
{
	unsigned int n = 0;

	for (int i = 0; i < VSOCK_MAX_CONNS; i++)
		n += s->c[i].state != VSOCK_FREE && !s->c[i].host_side;
	return n;
}

/* Lock held: the guest asks for the host's port @local. */
static void guest_request(struct vsock *s, uint32_t local, uint32_t peer,
			  uint32_t buf_alloc, uint32_t fwd_cnt)
{
	struct vsock_conn *k;
	int i = -1;

	if (guest_conns(s) < VSOCK_MAX_CONNS - VSOCK_HOST_RESERVED)
		i = vsock_conn_new(s);
	if (i < 0) {
		s->st.refused++;
		queue_rst(s, local, peer);
		return;
	}
	k = &s->c[i];
	k->state = VSOCK_CONNECTING; /* the I/O thread connects PATH_local */
	k->local_port = local;
	k->peer_port = peer;
	k->peer_buf_alloc = buf_alloc;
	k->peer_fwd_cnt = fwd_cnt;
	vsock_io_wake(s);
}

/* Lock held: the guest accepted hotvm's request. */
static void response(struct vsock *s, struct vsock_conn *k)
{
	char ok[24];
	int n;

	k->state = VSOCK_ESTABLISHED;
	k->deadline_ms = 0;
	if (k->host)
		return;
	/* Hybrid vsock: the host client learns its port. */
	n = snprintf(ok, sizeof(ok), "OK %" PRIu32 "\n", k->local_port);
	if (write(k->fd, ok, (size_t)n) != n)
		conn_reset(s, k);
}

/* Lock held: the guest's bytes for @k's host end (not hotvm's). */
static void rw_to_socket(struct vsock *s, struct vsock_conn *k,
			 const uint8_t *p, uint32_t len)
{
	uint32_t done = 0;

	if (!k->buf_len) {
		ssize_t w = write(k->fd, p, len);

		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			conn_reset(s, k); /* the host end is gone */
			return;
		}
		done = w > 0 ? (uint32_t)w : 0;
		k->fwd_cnt += done;
	}
	if (done < len) {
		/* The credit check keeps buf_len + len within the buffer. */
		if (!k->buf) {
			k->buf = malloc(VSOCK_BUF_ALLOC);
			if (!k->buf) {
				conn_reset(s, k);
				return;
			}
		}
		for (uint32_t i = done; i < len; i++)
			k->buf[(k->buf_head + k->buf_len++) % VSOCK_BUF_ALLOC] =
				p[i];
		vsock_io_wake(s); /* it flushes when the socket has room */
	}
}

struct vsock_deliver {
	const uint8_t *p; /* to hotvm's endpoint, after the lock */
	uint32_t len;
};

/* Lock held: the guest's RW packet on @k. */
static void rw(struct vsock *s, struct vsock_conn *k, const uint8_t *p,
	       uint32_t len, struct vsock_deliver *dv)
{
	uint32_t held = k->tx_cnt - k->fwd_cnt;

	if (k->state != VSOCK_ESTABLISHED || k->guest_no_snd) {
		s->st.bad_op++;
		conn_reset(s, k);
		return;
	}
	if (held > VSOCK_BUF_ALLOC || len > VSOCK_BUF_ALLOC - held) {
		s->st.credit_over++;
		conn_reset(s, k);
		return;
	}
	s->st.from_guest += len;
	k->tx_cnt += len;
	if (k->host) {
		k->fwd_cnt += len;
		*dv = (struct vsock_deliver){ .p = p, .len = len };
	} else if (len) {
		rw_to_socket(s, k, p, len);
	}
	if (k->state == VSOCK_ESTABLISHED)
		vsock_credit_check(k);
}

/* Lock held: the guest's SHUTDOWN on @k. */
static void shutdown_pkt(struct vsock *s, struct vsock_conn *k, uint32_t flags)
{
	if (flags & ~(uint32_t)(VIRTIO_VSOCK_SHUTDOWN_RCV |
				VIRTIO_VSOCK_SHUTDOWN_SEND)) {
		s->st.bad_pkt++;
		conn_reset(s, k);
		return;
	}
	k->guest_no_rcv |= !!(flags & VIRTIO_VSOCK_SHUTDOWN_RCV);
	k->guest_no_snd |= !!(flags & VIRTIO_VSOCK_SHUTDOWN_SEND);
	if (k->host || k->state != VSOCK_ESTABLISHED) {
		conn_reset(s, k);
		return;
	}
	if (k->guest_no_rcv && k->guest_no_snd) {
		/* Done both ways: RST once the host has all the guest sent. */
		if (k->buf_len)
			k->rst_after = true;
		else
			conn_reset(s, k);
		return;
	}
	if (k->guest_no_snd)
		vsock_io_wake(s); /* the host socket's write side shuts */
}

/* Lock held: one packet on the connection it names. */
static void on_conn(struct vsock *s, struct vsock_conn *k, uint16_t op,
		    uint32_t flags, const uint8_t *p, uint32_t len,
		    struct vsock_deliver *dv)
{
	switch (op) {
	case VIRTIO_VSOCK_OP_RESPONSE:
		if (k->state != VSOCK_REQUESTED)
			break;
		response(s, k);
		return;
	case VIRTIO_VSOCK_OP_RST:
		vsock_conn_close(s, k);
		return;
	case VIRTIO_VSOCK_OP_SHUTDOWN:
		shutdown_pkt(s, k, flags);
		return;
	case VIRTIO_VSOCK_OP_RW:
		rw(s, k, p, len, dv);
		return;
	case VIRTIO_VSOCK_OP_CREDIT_UPDATE:
		return; /* the credit was taken from the header */
	case VIRTIO_VSOCK_OP_CREDIT_REQUEST:
		if (k->state != VSOCK_ESTABLISHED)
			break;
		k->pend |= VSOCK_P_CREDIT;
		return;
	}
	/* A second REQUEST, an early RESPONSE, an unknown op. */
	s->st.bad_op++;
	conn_reset(s, k);
}

static int vsock_tx_locked(struct vsock *s, const struct virtio_vsock_hdr *h,
			   const uint8_t *p, uint32_t len,
			   struct vsock_deliver *dv)
{
	uint16_t op = le16toh(h->op), type = le16toh(h->type);
	uint32_t src = le32toh(h->src_port), dst = le32toh(h->dst_port);
	struct vsock_conn *k;

	if (le64toh(h->src_cid) != s->cid ||
	    le64toh(h->dst_cid) != VSOCK_HOST_CID || le32toh(h->len) != len ||
	    (len && op != VIRTIO_VSOCK_OP_RW)) {
		s->st.bad_pkt++;
		return -EINVAL;
	}
	if (type != VIRTIO_VSOCK_TYPE_STREAM) {
		/* No SEQPACKET (not offered): refused as Linux does. */
		s->st.bad_pkt++;
		if (op != VIRTIO_VSOCK_OP_RST)
			queue_rst(s, dst, src);
		return -EINVAL;
	}
	k = find(s, dst, src);
	if (!k) {
		if (op == VIRTIO_VSOCK_OP_REQUEST) {
			guest_request(s, dst, src, le32toh(h->buf_alloc),
				      le32toh(h->fwd_cnt));
			return 0;
		}
		if (op == VIRTIO_VSOCK_OP_RST)
			return 0;
		s->st.no_conn++;
		queue_rst(s, dst, src);
		return -EINVAL;
	}
	/* Every packet says the guest's credit. */
	k->peer_buf_alloc = le32toh(h->buf_alloc);
	k->peer_fwd_cnt = le32toh(h->fwd_cnt);
	on_conn(s, k, op, le32toh(h->flags), p, len, dv);
	return 0;
}

int vsock_tx(struct vsock *s, const struct virtio_vsock_hdr *h,
	     const uint8_t *p, uint32_t len)
{
	struct vsock_deliver dv = { 0 };
	bool wake = false;
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = vsock_tx_locked(s, h, p, len, &dv);
	for (int i = 0; i < VSOCK_MAX_CONNS && !wake; i++)
		wake = vsock_conn_has_rx(s, &s->c[i]);
	wake |= s->rst_n > 0;
	pthread_mutex_unlock(&s->lock);
	/* hotvm's endpoint's callbacks take the agent's lock: not ours. */
	for (uint32_t i = 0; i < dv.len && s->host.out; i++)
		s->host.out(s->host.ctx, dv.p[i]);
	if (wake)
		notify_rx(s);
	return ret;
}

/* --- the receive queue -------------------------------------------------- */

static void fill_hdr(struct vsock *s, struct virtio_vsock_hdr *h,
		     uint32_t local, uint32_t peer, uint16_t op, uint32_t len)
{
	*h = (struct virtio_vsock_hdr){
		.src_cid = htole64(VSOCK_HOST_CID),
		.dst_cid = htole64(s->cid),
		.src_port = htole32(local),
		.dst_port = htole32(peer),
		.len = htole32(len),
		.type = htole16(VIRTIO_VSOCK_TYPE_STREAM),
		.op = htole16(op),
		.buf_alloc = htole32(VSOCK_BUF_ALLOC),
	};
}

/* Lock held: @k's next control packet; false when it owes none. */
static bool conn_ctl(struct vsock *s, struct vsock_conn *k,
		     struct virtio_vsock_hdr *h)
{
	static const struct {
		uint32_t bit;
		uint16_t op;
	} order[] = {
		{ VSOCK_P_RESPONSE, VIRTIO_VSOCK_OP_RESPONSE },
		{ VSOCK_P_REQUEST, VIRTIO_VSOCK_OP_REQUEST },
		{ VSOCK_P_SHUTDOWN, VIRTIO_VSOCK_OP_SHUTDOWN },
		{ VSOCK_P_CREDIT, VIRTIO_VSOCK_OP_CREDIT_UPDATE },
	};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!(k->pend & order[i].bit))
			continue;
		k->pend &= ~order[i].bit;
		fill_hdr(s, h, k->local_port, k->peer_port, order[i].op, 0);
		if (order[i].op == VIRTIO_VSOCK_OP_SHUTDOWN)
			h->flags = htole32(VIRTIO_VSOCK_SHUTDOWN_SEND);
		return true;
	}
	k->pend = 0;
	return false;
}

/* Lock held: up to @room of @k's bytes into s->bounce; how many. */
static uint32_t conn_data(struct vsock *s, struct vsock_conn *k, uint32_t room,
			  bool *drained)
{
	uint32_t want = peer_credit(k), got = 0;

	if (want > room)
		want = room;
	if (want > VSOCK_MAX_PAYLOAD)
		want = VSOCK_MAX_PAYLOAD;
	if (k->host) {
		while (got < want && s->hring_len) {
			s->bounce[got++] = s->hring[s->hring_head];
			s->hring_head = (s->hring_head + 1) % VSOCK_AGENT_RING;
			s->hring_len--;
		}
		*drained = got && !s->hring_len;
		return got;
	}
	ssize_t r = read(k->fd, s->bounce, want);

	if (r > 0)
		return (uint32_t)r;
	if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
		k->readable = false; /* the I/O thread polls it again */
		vsock_io_wake(s);
	} else if (r == 0) {
		/* The host will send no more: the guest's reads see EOF. */
		k->host_eof = true;
		k->pend |= VSOCK_P_SHUTDOWN;
	} else {
		conn_reset(s, k);
	}
	return 0;
}

/* Lock held: the next packet for the guest into @c; bytes written. */
static uint32_t fill_rx(struct vsock *s, const struct virtq_chain *c,
			bool *drained)
{
	struct virtio_vsock_hdr h;
	uint32_t len = 0;

	if (c->in_len < VSOCK_HDR)
		return 0; /* too small for any packet: returned empty */
	if (s->rst_n) {
		fill_hdr(s, &h, s->rst[0].dst, s->rst[0].src,
			 VIRTIO_VSOCK_OP_RST, 0);
		memmove(&s->rst[0], &s->rst[1], --s->rst_n * sizeof(s->rst[0]));
		return (uint32_t)virtq_chain_write(c, 0, &h, VSOCK_HDR);
	}
	for (unsigned int n = 0; n < VSOCK_MAX_CONNS; n++) {
		unsigned int i = (s->rr + n) % VSOCK_MAX_CONNS;
		struct vsock_conn *k = &s->c[i];

		if (!vsock_conn_has_rx(s, k))
			continue;
		s->rr = i + 1; /* the next buffer starts past it: fairness */
		if (!conn_ctl(s, k, &h)) {
			uint64_t room = c->in_len - VSOCK_HDR;

			len = conn_data(s, k,
					room > UINT32_MAX ? UINT32_MAX
							  : (uint32_t)room,
					drained);
			if (!len) {
				/* EOF or an error: its packet is owed now. */
				if (!conn_ctl(s, k, &h))
					continue;
			} else {
				fill_hdr(s, &h, k->local_port, k->peer_port,
					 VIRTIO_VSOCK_OP_RW, len);
				k->rx_cnt += len;
				s->st.to_guest += len;
			}
		}
		h.fwd_cnt = htole32(k->fwd_cnt);
		k->fwd_said = k->fwd_cnt;
		virtq_chain_write(c, 0, &h, VSOCK_HDR);
		if (len)
			virtq_chain_write(c, VSOCK_HDR, s->bounce, len);
		return VSOCK_HDR + len;
	}
	return 0;
}

static uint32_t vsock_handle(void *ctx, unsigned int q, struct virtq_chain *c)
{
	struct vsock *s = ctx;
	struct virtio_vsock_hdr h;
	bool drained = false;
	uint32_t done, len;

	switch (q) {
	case VSOCK_Q_TX:
		if (virtq_chain_read(c, 0, &h, VSOCK_HDR) != VSOCK_HDR) {
			pthread_mutex_lock(&s->lock);
			s->st.bad_pkt++;
			pthread_mutex_unlock(&s->lock);
			return 0;
		}
		len = le32toh(h.len);
		if (len > VSOCK_MAX_PAYLOAD || len > c->out_len - VSOCK_HDR) {
			pthread_mutex_lock(&s->lock);
			s->st.bad_pkt++;
			pthread_mutex_unlock(&s->lock);
			return 0;
		}
		/* The device thread's own copy: the guest cannot change it. */
		virtq_chain_read(c, VSOCK_HDR, s->bounce, len);
		vsock_tx(s, &h, s->bounce, len);
		return 0;
	case VSOCK_Q_RX:
		pthread_mutex_lock(&s->lock);
		done = fill_rx(s, c, &drained);
		pthread_mutex_unlock(&s->lock);
		if (drained && s->host.drained)
			s->host.drained(s->host.ctx);
		return done;
	}
	return 0; /* the event queue's buffers are never taken */
}

static bool vsock_can_take(void *ctx, unsigned int q)
{
	struct vsock *s = ctx;
	bool ok = false;

	if (q == VSOCK_Q_TX)
		return true;
	if (q != VSOCK_Q_RX)
		return false;
	pthread_mutex_lock(&s->lock);
	ok = s->rst_n > 0;
	for (int i = 0; i < VSOCK_MAX_CONNS && !ok; i++)
		ok = vsock_conn_has_rx(s, &s->c[i]);
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static void vsock_config_read(void *ctx, uint32_t off, void *buf, uint32_t len)
{
	struct vsock *s = ctx;

	memcpy(buf, (const uint8_t *)&s->cfg + off, len);
}

/* Status 0 or the VM's reset: every connection closes. */
static void vsock_reset(void *ctx)
{
	struct vsock *s = ctx;

	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *k = &s->c[i];

		if (k->state == VSOCK_HANDSHAKE) {
			s->st.closed++;
			k->state = VSOCK_CLOSING;
		}
		vsock_conn_close(s, k);
	}
	s->rst_n = 0;
	host_drop(s);
	pthread_mutex_unlock(&s->lock);
	vsock_io_wake(s);
}

int vsock_init(struct vsock *s, const struct vsock_config *c)
{
	if (c->cid <= VSOCK_HOST_CID || c->cid >= UINT32_MAX)
		return -EINVAL;
	if (c->path && strlen(c->path) >= sizeof(s->path))
		return -ENAMETOOLONG;
	memset(s, 0, sizeof(*s));
	s->cid = c->cid;
	if (c->path)
		strcpy(s->path, c->path);
	s->cfg.guest_cid = htole64(c->cid);
	s->next_port = VSOCK_LOCAL_PORT0;
	s->host_slot = -1;
	s->listen_fd = s->wake_fd = s->stop_fd = -1;
	for (int i = 0; i < VSOCK_MAX_CONNS; i++)
		s->c[i].fd = -1;
	s->ops = (struct virtio_dev_ops){
		.name = "vsock",
		.device_id = VIRTIO_ID_VSOCK,
		.nr_queues = VSOCK_NR_QUEUES,
		.queue_max = VSOCK_QUEUE_SIZE,
		.config_size = sizeof(s->cfg),
		.config_read = vsock_config_read,
		.handle = vsock_handle,
		.can_take = vsock_can_take,
		.reset = vsock_reset,
	};
	pthread_mutex_init(&s->lock, NULL);
	return 0;
}

void vsock_destroy(struct vsock *s)
{
	for (int i = 0; i < VSOCK_MAX_CONNS; i++) {
		if (s->c[i].fd >= 0)
			close(s->c[i].fd);
		s->c[i].fd = -1;
		free(s->c[i].buf);
		s->c[i].buf = NULL;
	}
	pthread_mutex_destroy(&s->lock);
}

void vsock_attach(struct vsock *s, struct virtio_mmio *v)
{
	s->mmio = v;
}

void vsock_host_attach(struct vsock *s, uint32_t port,
		       const struct serial_host *h)
{
	pthread_mutex_lock(&s->lock);
	s->host_on = true;
	s->host_port = port;
	s->host = *h;
	pthread_mutex_unlock(&s->lock);
}

size_t vsock_host_send(void *ctx, const void *buf, size_t len)
{
	struct vsock *s = ctx;
	struct vsock_conn *k = NULL;
	size_t done = 0;
	bool wake;

	pthread_mutex_lock(&s->lock);
	while (done < len && s->hring_len < VSOCK_AGENT_RING)
		s->hring[(s->hring_head + s->hring_len++) % VSOCK_AGENT_RING] =
			((const uint8_t *)buf)[done++];
	if (s->host_slot < 0 && s->host_on) {
		/* Not connected: ask the guest's port for a connection. */
		int i = vsock_conn_new(s);

		if (i >= 0) {
			k = &s->c[i];
			k->state = VSOCK_REQUESTED;
			k->host = k->host_side = true;
			k->local_port = vsock_local_port(s);
			k->peer_port = s->host_port;
			k->pend = VSOCK_P_REQUEST;
			k->deadline_ms = hv_now_ms() + VSOCK_CONNECT_MS;
			s->host_slot = i;
			vsock_io_wake(s); /* it times the request out */
		} else {
			s->st.refused++;
		}
	}
	wake = s->host_slot >= 0 && vsock_conn_has_rx(s, &s->c[s->host_slot]);
	pthread_mutex_unlock(&s->lock);
	if (wake)
		notify_rx(s);
	return done;
}

void vsock_host_flush(void *ctx)
{
	struct vsock *s = ctx;

	pthread_mutex_lock(&s->lock);
	host_drop(s);
	pthread_mutex_unlock(&s->lock);
}

void vsock_get_stats(struct vsock *s, struct vsock_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->st;
	pthread_mutex_unlock(&s->lock);
}

/* "cid=N,socket=PATH", in either order, both needed. */
int vsock_parse(char *text, struct vsock_config *c, struct hv_err *err)
{
	char *save = NULL, *tok;
	bool have_cid = false;

	*c = (struct vsock_config){ 0 };
	for (tok = strtok_r(text, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "cid=", 4)) {
			char *end;
			unsigned long long v;

			errno = 0;
			v = strtoull(tok + 4, &end, 10);
			if (!tok[4] || *end || errno || tok[4] == '-' ||
			    tok[4] == '+') {
				return hv_err_set(err, -EINVAL,
						  "cid '%s' is not a number",
						  tok + 4);
			}
			if (v <= VSOCK_HOST_CID || v >= UINT32_MAX) {
				return hv_err_set(
					err, -EINVAL,
					"cid %llu is reserved (0, 1, 2 and "
					"4294967295 are; give 3 to "
					"4294967294)",
					v);
			}
			c->cid = v;
			have_cid = true;
		} else if (!strncmp(tok, "socket=", 7) && tok[7]) {
			c->path = tok + 7;
		} else {
			return hv_err_set(err, -EINVAL,
					  "unknown or empty setting '%s'", tok);
		}
	}
	if (!have_cid || !c->path) {
		return hv_err_set(err, -EINVAL,
				  "both cid= and socket= are needed");
	}
	/* PATH_4294967295 must fit a unix socket address too. */
	if (strlen(c->path) + 11 >=
	    sizeof(((struct sockaddr_un *)0)->sun_path)) {
		return hv_err_set(
			err, -EINVAL,
			"socket path too long (%zu bytes; at most %zu, so "
			"that PATH_<port> fits a unix socket address)",
			strlen(c->path),
			sizeof(((struct sockaddr_un *)0)->sun_path) - 12);
	}
	return 0;
}
