// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-net's frames (virtio_net.h): the transmit parser, the receive
 * queue's service, the MAC.  Header layout, flags and feature bits from
 * the virtio 1.x spec (5.1.6) and linux/virtio_net.h; the tap's offload
 * flags from linux/if_tun.h.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/if_tun.h>
#include <linux/virtio_ids.h>

#include "virtio_net.h"

#define F(b) (1ULL << (b))

/* What the driver may have accepted that changes a frame's checks. */
static bool has(uint64_t f, unsigned int bit)
{
	return f & F(bit);
}

static void count(struct vnet *n, uint64_t *field, uint64_t by)
{
	pthread_mutex_lock(&n->st_lock);
	*field += by;
	pthread_mutex_unlock(&n->st_lock);
}

/*
 * A header, as either side sends it, against features @f: checksum
 * offload only with @csum, GSO only of the kinds @tso4/@tso6, and the
 * checksum's place inside the frame of @len bytes (header excluded).
 */
static int check_hdr(const struct virtio_net_hdr_v1 *h, uint32_t len, bool csum,
		     bool tso4, bool tso6, uint8_t flags_ok)
{
	uint16_t start = le16toh(h->csum_start), off = le16toh(h->csum_offset);

	if (h->flags & ~flags_ok)
		return -EINVAL;
	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		if (!csum || (uint32_t)start + off + 2 > len)
			return -EINVAL;
	}
	switch (h->gso_type) {
	case VIRTIO_NET_HDR_GSO_NONE:
		return 0;
	case VIRTIO_NET_HDR_GSO_TCPV4:
		if (!tso4)
			return -EINVAL;
		break;
	case VIRTIO_NET_HDR_GSO_TCPV6:
		if (!tso6)
			return -EINVAL;
		break;
	default: /* UDP, ECN: not offered */
		return -EINVAL;
	}
	return h->gso_size ? 0 : -EINVAL;
}

static uint32_t max_frame(bool gso)
{
	return gso ? VNET_MAX_GSO_FRAME : VNET_MAX_FRAME;
}

int vnet_tx(struct vnet *n, const struct virtq_chain *c, uint64_t f)
{
	struct iovec iov[VIRTQ_MAX_SIZE + 1];
	struct virtio_net_hdr_v1 h;
	bool tso4 = has(f, VIRTIO_NET_F_HOST_TSO4),
	     tso6 = has(f, VIRTIO_NET_F_HOST_TSO6);
	uint64_t len;
	unsigned int k = 1;
	uint64_t off = VNET_HDR_LEN;

	if (c->out_len < VNET_HDR_LEN + VNET_ETH_HLEN || c->in_len) {
		count(n, &n->st.tx_bad, 1);
		return -EINVAL;
	}
	len = c->out_len - VNET_HDR_LEN;
	if (len > max_frame(tso4 || tso6)) {
		count(n, &n->st.tx_oversize, 1);
		return -EMSGSIZE;
	}
	/* Copied once: the backend gets this copy, not the guest's. */
	virtq_chain_read(c, 0, n->tx_hdr, VNET_HDR_LEN);
	memcpy(&h, n->tx_hdr, sizeof(h));
	h.num_buffers = 0;
	if (check_hdr(&h, (uint32_t)len, has(f, VIRTIO_NET_F_CSUM), tso4, tso6,
		      VIRTIO_NET_HDR_F_NEEDS_CSUM)) {
		count(n, &n->st.tx_bad, 1);
		return -EINVAL;
	}
	memcpy(n->tx_hdr, &h, sizeof(h));
	iov[0] = (struct iovec){ .iov_base = n->tx_hdr,
				 .iov_len = VNET_HDR_LEN };
	for (unsigned int i = 0; i < c->nr_out; i++) {
		const struct virtq_buf *b = &c->b[i];

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		iov[k++] = (struct iovec){ .iov_base = b->p + off,
					   .iov_len = b->len - off };
		off = 0;
	}
	if (writev(n->fd, iov, (int)k) < 0) {
		count(n, &n->st.tx_err, 1);
		return -EIO;
	}
	pthread_mutex_lock(&n->st_lock);
	n->st.tx_frames++;
	n->st.tx_bytes += len;
	pthread_mutex_unlock(&n->st_lock);
	return 0;
}

int vnet_rx_check(const struct vnet *n, uint64_t f)
{
	struct virtio_net_hdr_v1 h;
	bool tso4 = has(f, VIRTIO_NET_F_GUEST_TSO4),
	     tso6 = has(f, VIRTIO_NET_F_GUEST_TSO6);
	uint32_t len;

	if (n->rx_len < VNET_HDR_LEN + VNET_ETH_HLEN)
		return -EINVAL;
	len = n->rx_len - VNET_HDR_LEN;
	if (len > max_frame(tso4 || tso6))
		return -EMSGSIZE;
	memcpy(&h, n->rx_buf, sizeof(h));
	/* DATA_VALID: the host checked it (only with GUEST_CSUM, 5.1.6.4). */
	return check_hdr(&h, len, has(f, VIRTIO_NET_F_GUEST_CSUM), tso4, tso6,
			 has(f, VIRTIO_NET_F_GUEST_CSUM)
				 ? VIRTIO_NET_HDR_F_NEEDS_CSUM |
					   VIRTIO_NET_HDR_F_DATA_VALID
				 : 0);
}

void vnet_rx_fill(struct vnet *n, const struct virtq_chain *c, unsigned int k,
		  uint32_t *len)
{
	uint16_t nb = htole16((uint16_t)k);
	uint32_t done = 0;

	memcpy(n->rx_buf + offsetof(struct virtio_net_hdr_v1, num_buffers), &nb,
	       sizeof(nb));
	for (unsigned int i = 0; i < k; i++) {
		len[i] = (uint32_t)virtq_chain_write(&c[i], 0, n->rx_buf + done,
						     n->rx_len - done);
		done += len[i];
	}
	pthread_mutex_lock(&n->st_lock);
	n->st.rx_frames++;
	n->st.rx_bytes += n->rx_len - VNET_HDR_LEN;
	pthread_mutex_unlock(&n->st_lock);
	n->rx_len = 0;
}

/* The tap's offloads follow what the driver takes (else it segments). */
static void set_offloads(struct vnet *n, uint64_t f, unsigned int gen)
{
	unsigned long o = 0;

	if (!n->tap || (n->offl_set && n->offl_gen == gen))
		return;
	if (has(f, VIRTIO_NET_F_GUEST_CSUM)) {
		o |= TUN_F_CSUM;
		if (has(f, VIRTIO_NET_F_GUEST_TSO4))
			o |= TUN_F_TSO4;
		if (has(f, VIRTIO_NET_F_GUEST_TSO6))
			o |= TUN_F_TSO6;
	}
	/* Checked at open; frames it still sends are checked anyway. */
	if (ioctl(n->fd, TUNSETOFFLOAD, o) == 0) {
		n->offl_gen = gen;
		n->offl_set = true;
	}
}

/* A frame from the backend into rx_buf, if none waits: its length or 0. */
static uint32_t rx_read(struct vnet *n)
{
	ssize_t r;

	if (n->rx_len)
		return n->rx_len;
	r = read(n->fd, n->rx_buf, VNET_HDR_LEN + VNET_MAX_GSO_FRAME);
	n->rx_len = r > 0 ? (uint32_t)r : 0;
	return n->rx_len;
}

/* Returns the popped chains [0, k) to the driver unwritten. */
static void give_back(struct virtio_mmio *v, const struct virtq_chain *c,
		      unsigned int k)
{
	for (unsigned int i = 0; i < k; i++)
		virtio_mmio_push(v, VNET_Q_RX, c[i].head, 0);
}

/*
 * One frame into the receive queue, under io_lock: 1 a frame delivered or
 * dropped (go on), 0 nothing to do now (no frame, or no room: the frame
 * waits for the driver's notify).
 */
static int rx_one(struct vnet *n, struct virtio_mmio *v, uint64_t f)
{
	struct virtq_chain *c = n->rx_chains;
	uint32_t room = 0, len[VNET_QUEUE_SIZE];
	bool mrg = has(f, VIRTIO_NET_F_MRG_RXBUF);
	unsigned int k = 0;
	int ret;

	if (!rx_read(n))
		return 0;
	ret = vnet_rx_check(n, f);
	if (ret) {
		count(n, ret == -EMSGSIZE ? &n->st.rx_oversize : &n->st.rx_bad,
		      1);
		n->rx_len = 0;
		return 1;
	}
	while (room < n->rx_len) {
		if (k == VNET_QUEUE_SIZE || (k && !mrg)) {
			/* More than the whole ring, or than one chain. */
			virtio_mmio_unpop(v, VNET_Q_RX, (uint16_t)k);
			count(n, &n->st.rx_no_room, 1);
			n->rx_len = 0;
			return 1;
		}
		ret = virtio_mmio_pop(v, VNET_Q_RX, &c[k]);
		if (ret == -EINVAL) {
			/* A bad chain: it and those taken go back empty. */
			virtio_mmio_push(v, VNET_Q_RX, c[k].head, 0);
			give_back(v, c, k);
			count(n, &n->st.bad_chain, 1);
			count(n, &n->st.rx_no_room, 1);
			n->rx_len = 0;
			return 1;
		}
		if (ret == 0) {
			/* Not enough yet: taken again at the next notify. */
			virtio_mmio_unpop(v, VNET_Q_RX, (uint16_t)k);
			return 0;
		}
		if (ret < 0) {
			give_back(v, c, k);
			return 0;
		}
		/* Mergeable buffers: the first holds the whole header. */
		if (k == 0 && c[0].in_len < VNET_HDR_LEN) {
			virtio_mmio_push(v, VNET_Q_RX, c[0].head, 0);
			count(n, &n->st.bad_chain, 1);
			continue;
		}
		room += c[k].in_len > UINT32_MAX - room ? UINT32_MAX - room
							: (uint32_t)c[k].in_len;
		k++;
	}
	vnet_rx_fill(n, c, k, len);
	for (unsigned int i = 0; i < k; i++)
		virtio_mmio_push(v, VNET_Q_RX, c[i].head, len[i]);
	return 1;
}

/* The receive queue's serve (virtio_dev_ops.serve), on its thread. */
static unsigned int vnet_serve(void *ctx, struct virtio_mmio *v, unsigned int q)
{
	struct vnet *n = ctx;
	unsigned int gen = virtio_mmio_gen(v), served = 0;
	uint64_t f = virtio_mmio_features(v);

	if (q != VNET_Q_RX)
		return 0;
	set_offloads(n, f, gen);
	for (;;) {
		int ret;

		if (virtio_mmio_begin(v, gen))
			break;
		ret = rx_one(n, v, f);
		virtio_mmio_end(v);
		if (ret <= 0)
			break;
		served++;
	}
	if (served)
		virtio_mmio_served(v, q, gen);
	return served;
}

/*
 * The receive thread waits on the backend only while the driver runs the
 * device and no frame waits for room; else on the notify alone (the
 * driver's DRIVER_OK notifies every queue).  Frames meanwhile wait in the
 * tap's own queue.
 */
static int vnet_wait_fd(void *ctx, unsigned int q)
{
	struct vnet *n = ctx;
	int fd = -1;

	if (q != VNET_Q_RX || !n->mmio ||
	    virtio_mmio_begin(n->mmio, virtio_mmio_gen(n->mmio)))
		return -1;
	if (!n->rx_len)
		fd = n->fd;
	virtio_mmio_end(n->mmio);
	return fd;
}

static uint32_t vnet_handle(void *ctx, unsigned int q, struct virtq_chain *c)
{
	struct vnet *n = ctx;

	if (q == VNET_Q_TX)
		vnet_tx(n, c, n->mmio ? virtio_mmio_features(n->mmio) : 0);
	return 0;
}

static void vnet_config_read(void *ctx, uint32_t off, void *buf, uint32_t len)
{
	const struct vnet *n = ctx;

	memcpy(buf, (const uint8_t *)&n->cfg + off, len);
}

/* Status 0 or the VM's reset, under io_lock: the frame waiting goes. */
static void vnet_reset(void *ctx)
{
	struct vnet *n = ctx;

	if (n->rx_len)
		count(n, &n->st.rx_dropped, 1);
	n->rx_len = 0;
}

int vnet_init(struct vnet *n, int fd, bool tap, const uint8_t mac[6],
	      bool offload, bool mrg, const char *id)
{
	uint64_t f = F(VIRTIO_NET_F_MAC) | F(VIRTIO_NET_F_STATUS);

	memset(n, 0, sizeof(*n));
	n->rx_buf = malloc(VNET_HDR_LEN + VNET_MAX_GSO_FRAME);
	n->rx_chains = calloc(VNET_QUEUE_SIZE, sizeof(*n->rx_chains));
	if (!n->rx_buf || !n->rx_chains) {
		free(n->rx_buf);
		free(n->rx_chains);
		return -ENOMEM;
	}
	n->fd = fd;
	n->tap = tap;
	snprintf(n->id, sizeof(n->id), "%s", id ? id : "net");
	if (offload)
		f |= F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_HOST_TSO4) |
		     F(VIRTIO_NET_F_HOST_TSO6) | F(VIRTIO_NET_F_GUEST_CSUM) |
		     F(VIRTIO_NET_F_GUEST_TSO4) | F(VIRTIO_NET_F_GUEST_TSO6);
	if (mrg)
		f |= F(VIRTIO_NET_F_MRG_RXBUF);
	memcpy(n->cfg.mac, mac, 6);
	/* The tap is there for the VM's life: the link is up. */
	n->cfg.status = htole16(VIRTIO_NET_S_LINK_UP);
	n->cfg.max_virtqueue_pairs = htole16(1);
	n->ops = (struct virtio_dev_ops){
		.name = "net",
		.device_id = VIRTIO_ID_NET,
		.features = f,
		.nr_queues = VNET_NR_QUEUES,
		.queue_max = VNET_QUEUE_SIZE,
		.config_size = offsetof(struct virtio_net_config, mtu),
		.config_read = vnet_config_read,
		.handle = vnet_handle,
		.reset = vnet_reset,
		.thread_per_queue = true,
		.wait_fd = vnet_wait_fd,
		.serve = vnet_serve,
		.serve_queues = 1u << VNET_Q_RX,
		.quiet_queues = 1u << VNET_Q_TX,
	};
	pthread_mutex_init(&n->st_lock, NULL);
	return 0;
}

void vnet_destroy(struct vnet *n)
{
	free(n->rx_buf);
	free(n->rx_chains);
	n->rx_buf = NULL;
	n->rx_chains = NULL;
	pthread_mutex_destroy(&n->st_lock);
}

void vnet_attach(struct vnet *n, struct virtio_mmio *v)
{
	n->mmio = v;
}

void vnet_default_mac(const char *vm, const char *id, unsigned int idx,
		      uint8_t mac[6])
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	char key[160];

	if (id)
		snprintf(key, sizeof(key), "%s/%s", vm, id);
	else
		snprintf(key, sizeof(key), "%s/%u", vm, idx);
	for (const char *p = key; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 0x100000001b3ULL;
	}
	/* Locally administered (bit 1), unicast (bit 0 clear). */
	mac[0] = 0x02;
	for (int i = 1; i < 6; i++)
		mac[i] = (uint8_t)(h >> (8 * (i - 1)));
}

int vnet_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	int used = 0;

	if (strlen(s) != 17 ||
	    sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &used) != 6 ||
	    used != 17)
		return -EINVAL;
	for (int i = 0; i < 17; i++)
		if (i % 3 == 2 ? s[i] != ':'
			       : !strchr("0123456789abcdefABCDEF", s[i]))
			return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	if ((mac[0] & 1) || !(b[0] | b[1] | b[2] | b[3] | b[4] | b[5]))
		return -EINVAL;
	return 0;
}

void vnet_get_stats(struct vnet *n, struct vnet_stats *out)
{
	pthread_mutex_lock(&n->st_lock);
	*out = n->st;
	pthread_mutex_unlock(&n->st_lock);
}
