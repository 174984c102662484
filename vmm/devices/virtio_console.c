// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-console with one multiport port (virtio_console.h): the control
 * messages' checks and replies, the port's two byte streams.  Message
 * numbers and layout from the virtio 1.x spec (5.3.6.2) and Linux's
 * linux/virtio_console.h: an 8-byte header (id, event, value, little
 * endian), PORT_NAME's name after it.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include <linux/virtio_ids.h>

#include "virtio_console.h"

#define VCON_HDR 8 /* struct virtio_console_control */

/* Lock held: queues a message for the driver's control receive queue. */
static void queue_msg(struct vcon *s, uint16_t event, uint16_t value,
		      const char *tail)
{
	struct vcon_msg *m;
	uint32_t id = htole32(0);
	size_t tl = tail ? strlen(tail) : 0;

	if (s->ctl_n == VCON_CTRL_MAX) {
		s->st.ctrl_dropped++;
		return;
	}
	m = &s->ctl[(s->ctl_head + s->ctl_n++) % VCON_CTRL_MAX];
	event = htole16(event);
	value = htole16(value);
	memcpy(m->b, &id, 4);
	memcpy(m->b + 4, &event, 2);
	memcpy(m->b + 6, &value, 2);
	if (tl)
		memcpy(m->b + VCON_HDR, tail, tl);
	m->len = VCON_HDR + (uint32_t)tl;
}

/* Lock held: drops the host bytes the guest has not been given. */
static void drop_rx(struct vcon *s)
{
	s->st.dropped += s->rx_len;
	s->rx_head = s->rx_len = 0;
}

static int bad(struct vcon *s)
{
	s->st.bad_ctrl++;
	return -EINVAL;
}

/* Lock held. */
static int control_locked(struct vcon *s, uint32_t id, uint16_t event,
			  uint16_t value, bool *wake_ctl, bool *wake_rx,
			  bool *closed)
{
	if (value > 1)
		return bad(s);
	if (event == VIRTIO_CONSOLE_DEVICE_READY) {
		/* value 0: the driver failed; nothing to answer. */
		if (!value)
			return 0;
		if (s->dev_ready) {
			s->st.dup_ctrl++;
			return 0;
		}
		s->dev_ready = true;
		queue_msg(s, VIRTIO_CONSOLE_PORT_ADD, 0, NULL);
		*wake_ctl = true;
		return 0;
	}
	/* The rest name a port: ours is 0, and only once it is added. */
	if (id != 0 || !s->dev_ready)
		return bad(s);
	switch (event) {
	case VIRTIO_CONSOLE_PORT_READY:
		if (!value)
			return 0; /* the driver could not set it up */
		if (s->port_ready) {
			s->st.dup_ctrl++;
			return 0;
		}
		s->port_ready = true;
		queue_msg(s, VIRTIO_CONSOLE_PORT_NAME, 1, s->name);
		/* The host end is always connected. */
		queue_msg(s, VIRTIO_CONSOLE_PORT_OPEN, 1, NULL);
		*wake_ctl = true;
		return 0;
	case VIRTIO_CONSOLE_PORT_OPEN:
		if (!s->port_ready)
			return bad(s);
		if (value && !s->guest_open) {
			s->st.opens++;
			*wake_rx = s->rx_len > 0;
		} else if (!value && s->guest_open) {
			/* Its reader is gone: a new one starts afresh. */
			s->st.closes++;
			drop_rx(s);
			*closed = true;
		}
		s->guest_open = value;
		return 0;
	}
	/* The device's own messages, and any unknown event. */
	return bad(s);
}

int vcon_control(struct vcon *s, const void *msg, size_t len)
{
	bool wake_ctl = false, wake_rx = false, closed = false;
	uint32_t id;
	uint16_t event, value;
	int ret;

	pthread_mutex_lock(&s->lock);
	if (len < VCON_HDR) {
		ret = bad(s);
	} else {
		memcpy(&id, msg, 4);
		memcpy(&event, (const uint8_t *)msg + 4, 2);
		memcpy(&value, (const uint8_t *)msg + 6, 2);
		ret = control_locked(s, le32toh(id), le16toh(event),
				     le16toh(value), &wake_ctl, &wake_rx,
				     &closed);
	}
	pthread_mutex_unlock(&s->lock);
	/* The agent's call in flight is lost with its reader: it ends. */
	if (closed && s->host.closed)
		s->host.closed(s->host.ctx);
	if (s->mmio && wake_ctl)
		virtio_mmio_notify(s->mmio, VCON_Q_CRX);
	if (s->mmio && wake_rx)
		virtio_mmio_notify(s->mmio, VCON_Q_RX);
	return ret;
}

/* Lock held: the ring's bytes into the chain's writable buffers. */
static uint32_t fill_rx(struct vcon *s, const struct virtq_chain *c)
{
	uint32_t done = 0;

	while (s->rx_len && done < c->in_len) {
		unsigned int run = VCON_RX_SIZE - s->rx_head;
		size_t k;

		if (run > s->rx_len)
			run = s->rx_len;
		k = virtq_chain_write(c, done, s->rx + s->rx_head, run);
		if (!k)
			break;
		done += (uint32_t)k;
		s->rx_head = (s->rx_head + (unsigned int)k) % VCON_RX_SIZE;
		s->rx_len -= (unsigned int)k;
	}
	s->st.to_guest += done;
	return done;
}

/* Lock held: the next control message into the chain, if it fits. */
static uint32_t fill_ctl(struct vcon *s, const struct virtq_chain *c)
{
	struct vcon_msg *m = &s->ctl[s->ctl_head];
	uint32_t done = 0;

	if (!s->ctl_n)
		return 0;
	/* A buffer too small for it: the message is lost, not the queue. */
	if (c->in_len >= m->len)
		done = (uint32_t)virtq_chain_write(c, 0, m->b, m->len);
	else
		s->st.ctrl_dropped++;
	s->ctl_head = (s->ctl_head + 1) % VCON_CTRL_MAX;
	s->ctl_n--;
	return done;
}

static uint32_t vcon_handle(void *ctx, unsigned int q, struct virtq_chain *c)
{
	struct vcon *s = ctx;
	uint8_t msg[VCON_HDR];
	uint32_t done = 0;
	bool drained = false;

	switch (q) {
	case VCON_Q_TX:
		for (unsigned int i = 0; i < c->nr_out; i++)
			for (uint32_t j = 0; j < c->b[i].len; j++)
				if (s->host.out)
					s->host.out(s->host.ctx, c->b[i].p[j]);
		pthread_mutex_lock(&s->lock);
		s->st.from_guest += c->out_len;
		pthread_mutex_unlock(&s->lock);
		return 0;
	case VCON_Q_CTX:
		vcon_control(s, msg, virtq_chain_read(c, 0, msg, sizeof(msg)));
		return 0;
	case VCON_Q_RX:
		pthread_mutex_lock(&s->lock);
		done = fill_rx(s, c);
		drained = done && !s->rx_len;
		pthread_mutex_unlock(&s->lock);
		/* The guest has all the host sent: the agent's next step. */
		if (drained && s->host.drained)
			s->host.drained(s->host.ctx);
		return done;
	case VCON_Q_CRX:
		pthread_mutex_lock(&s->lock);
		done = fill_ctl(s, c);
		pthread_mutex_unlock(&s->lock);
		return done;
	}
	return 0;
}

/* Receive queues keep the driver's buffers until there is something. */
static bool vcon_can_take(void *ctx, unsigned int q)
{
	struct vcon *s = ctx;
	bool ok = true;

	pthread_mutex_lock(&s->lock);
	if (q == VCON_Q_RX)
		ok = s->guest_open && s->rx_len;
	else if (q == VCON_Q_CRX)
		ok = s->ctl_n;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static void vcon_config_read(void *ctx, uint32_t off, void *buf, uint32_t len)
{
	struct vcon *s = ctx;

	memcpy(buf, (const uint8_t *)&s->cfg + off, len);
}

/* Status 0 or the VM's reset: the driver and its port are gone. */
static void vcon_reset(void *ctx)
{
	struct vcon *s = ctx;
	bool was_open;

	pthread_mutex_lock(&s->lock);
	was_open = s->guest_open;
	s->dev_ready = s->port_ready = s->guest_open = false;
	s->ctl_head = s->ctl_n = 0;
	drop_rx(s);
	pthread_mutex_unlock(&s->lock);
	if (was_open && s->host.closed)
		s->host.closed(s->host.ctx);
}

int vcon_init(struct vcon *s, const char *name, const struct serial_host *h)
{
	if (strlen(name) > VCON_NAME_MAX)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	strcpy(s->name, name);
	if (h)
		s->host = *h;
	s->cfg.max_nr_ports = htole32(1);
	s->ops = (struct virtio_dev_ops){
		.name = "console",
		.device_id = VIRTIO_ID_CONSOLE,
		.features = 1ULL << VIRTIO_CONSOLE_F_MULTIPORT,
		.nr_queues = VCON_NR_QUEUES,
		.queue_max = VCON_QUEUE_SIZE,
		.config_size = sizeof(s->cfg),
		.config_read = vcon_config_read,
		.handle = vcon_handle,
		.can_take = vcon_can_take,
		.reset = vcon_reset,
	};
	pthread_mutex_init(&s->lock, NULL);
	return 0;
}

void vcon_destroy(struct vcon *s)
{
	pthread_mutex_destroy(&s->lock);
}

void vcon_attach(struct vcon *s, struct virtio_mmio *v)
{
	s->mmio = v;
}

size_t vcon_send(void *ctx, const void *buf, size_t len)
{
	struct vcon *s = ctx;
	size_t done = 0;
	bool wake;

	pthread_mutex_lock(&s->lock);
	while (done < len && s->rx_len < VCON_RX_SIZE) {
		s->rx[(s->rx_head + s->rx_len++) % VCON_RX_SIZE] =
			((const uint8_t *)buf)[done++];
	}
	wake = done && s->guest_open;
	pthread_mutex_unlock(&s->lock);
	if (wake && s->mmio)
		virtio_mmio_notify(s->mmio, VCON_Q_RX);
	return done;
}

void vcon_flush(void *ctx)
{
	struct vcon *s = ctx;

	pthread_mutex_lock(&s->lock);
	drop_rx(s);
	pthread_mutex_unlock(&s->lock);
}

void vcon_get_stats(struct vcon *s, struct vcon_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->st;
	pthread_mutex_unlock(&s->lock);
}
