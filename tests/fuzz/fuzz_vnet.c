// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes virtio-net's frame parsers (vmm/devices/virtio_net.c) behind the
 * MMIO transport and the split virtqueue, as a hostile driver and a
 * hostile network use them: any descriptors, ring entries and RAM bytes,
 * any subset of the offered features, frames from the "tap" (a datagram
 * socket) with any header, the queues served in between, resets.
 *
 * Guest RAM is one malloc of its exact size at guest address 0x1000, so
 * ASan catches any access outside it.  The oracle: every frame the device
 * sends to the tap is a whole header and Ethernet header at least, no
 * larger than the negotiation allows, its header only what was
 * negotiated (checksum offload with CSUM, TCP GSO with HOST_TSO4/6);
 * every used entry names a head below the queue's size; the receive
 * queue's used lengths add up to exactly the frames (and headers) the
 * device counted delivered; the device's frame in waiting is bounded.
 *
 * Input: byte 0 the queues' size's log2 (0..6, mod 7), then operations,
 * one opcode byte each (mod 8):
 *   0 FEAT      the driver's initialisation with the offered features
 *               masked by FEAT's bits (csum, guest csum, host TSO, guest
 *               TSO, mergeable buffers), both queues
 *   1 Q I A16 L16 FL N  descriptor I of queue Q: data area + A16, L16
 *               bytes, flags FL (next, write, indirect), next N
 *   2 Q HEAD    make HEAD available on queue Q
 *   3 AT16 N DATA  guest writes N bytes at AT16 into RAM
 *   4 L16 HDR12 the tap sends a frame: that header, L16 % 1600 bytes
 *   5           serve the transmit queue, then read what reached the tap
 *   6           serve the receive queue
 *   7           the driver resets the device
 */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "vdrv.h"
#include "virtio_net.h"

#define RAM_GPA	 0x1000u
#define RAM_SIZE 0x20000u
#define QBASE(q)                                                               \
	(RAM_GPA + 0x3000u * (q)) /* desc, +0x1000 avail, +0x2000 used */
#define DATA	  (RAM_GPA + 0x6000u)
#define DATA_SIZE (RAM_GPA + RAM_SIZE - DATA)

static uint8_t frame[VNET_HDR_LEN + VNET_MAX_GSO_FRAME + 64];

/* A frame the device sent, against the features the driver took. */
static void check_tx(const uint8_t *p, size_t len, uint64_t f)
{
	struct virtio_net_hdr_v1 h;
	bool tso = f & ((1ULL << VIRTIO_NET_F_HOST_TSO4) |
			(1ULL << VIRTIO_NET_F_HOST_TSO6));

	FUZZ_ASSERT(len >= VNET_HDR_LEN + VNET_ETH_HLEN);
	FUZZ_ASSERT(len - VNET_HDR_LEN <=
		    (tso ? VNET_MAX_GSO_FRAME : VNET_MAX_FRAME));
	memcpy(&h, p, sizeof(h));
	FUZZ_ASSERT(!(h.flags & ~VIRTIO_NET_HDR_F_NEEDS_CSUM));
	if (h.flags)
		FUZZ_ASSERT(f & (1ULL << VIRTIO_NET_F_CSUM));
	if (h.gso_type == VIRTIO_NET_HDR_GSO_TCPV4)
		FUZZ_ASSERT(f & (1ULL << VIRTIO_NET_F_HOST_TSO4));
	else if (h.gso_type == VIRTIO_NET_HDR_GSO_TCPV6)
		FUZZ_ASSERT(f & (1ULL << VIRTIO_NET_F_HOST_TSO6));
	else
		FUZZ_ASSERT(h.gso_type == VIRTIO_NET_HDR_GSO_NONE);
}

static void set_queue(struct vdrv *d, uint16_t q, uint16_t num)
{
	uint32_t b = QBASE(q);

	memset(d->ram + b, 0, 0x3000);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_SEL, q);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_NUM, num);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_DESC_LOW, b);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_AVAIL_LOW, b + 0x1000);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_USED_LOW, b + 0x2000);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_READY, 1);
}

static void driver_init(struct vdrv *d, uint8_t mask, uint16_t num,
			uint16_t avail[2])
{
	static const unsigned int bits[5][2] = {
		{ VIRTIO_NET_F_CSUM, VIRTIO_NET_F_CSUM },
		{ VIRTIO_NET_F_GUEST_CSUM, VIRTIO_NET_F_GUEST_CSUM },
		{ VIRTIO_NET_F_HOST_TSO4, VIRTIO_NET_F_HOST_TSO6 },
		{ VIRTIO_NET_F_GUEST_TSO4, VIRTIO_NET_F_GUEST_TSO6 },
		{ VIRTIO_NET_F_MRG_RXBUF, VIRTIO_NET_F_MRG_RXBUF },
	};
	uint64_t f = (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_NET_F_MAC) |
		     (1ULL << VIRTIO_NET_F_STATUS);

	for (int i = 0; i < 5; i++)
		if (mask & (1u << i))
			f |= (1ULL << bits[i][0]) | (1ULL << bits[i][1]);
	vdrv_wr(d, VIRTIO_MMIO_STATUS, 0);
	vdrv_wr(d, VIRTIO_MMIO_STATUS,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	vdrv_wr(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vdrv_wr(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)f);
	vdrv_wr(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	vdrv_wr(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(f >> 32));
	vdrv_wr(d, VIRTIO_MMIO_STATUS,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			VIRTIO_CONFIG_S_FEATURES_OK);
	set_queue(d, VNET_Q_RX, num);
	set_queue(d, VNET_Q_TX, num);
	avail[0] = avail[1] = 0;
	vdrv_driver_ok(d);
}

/* The used entries queue @q's serve wrote: their lengths added up. */
static uint64_t used_since(struct virtio_mmio *v, unsigned int q,
			   uint16_t before)
{
	struct virtq *vq = &v->q[q];
	uint64_t sum = 0;

	for (uint16_t i = before; vq->ready && i != vq->used_idx; i++) {
		const uint8_t *e = vq->used_p + 4 + 8u * (i % vq->num);
		uint32_t id, len;

		memcpy(&id, e, 4);
		memcpy(&len, e + 4, 4);
		FUZZ_ASSERT(id < vq->num);
		FUZZ_ASSERT(len <= VNET_HDR_LEN + VNET_MAX_GSO_FRAME);
		sum += len;
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	struct fuzz_in in = { .p = data, .n = size };
	static struct virtio_mmio v;
	static struct vnet n;
	struct vdrv d = { 0 };
	uint16_t num, avail[2] = { 0, 0 };
	unsigned int ops = 0;
	int sv[2];
	uint8_t *buf;

	FUZZ_ASSERT(!socketpair(
		AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv));
	FUZZ_ASSERT(!vnet_init(&n, sv[0], false, mac, true, true, "fuzz"));
	num = (uint16_t)(1u << (fuzz_u8(&in) % 7));
	buf = calloc(1, RAM_SIZE);
	d.ram = buf;
	d.region = (struct vm_region){ .gpa = RAM_GPA,
				       .size = RAM_SIZE,
				       .hva = d.ram };
	d.mem = (struct gmem){ .r = &d.region, .nr = 1 };
	FUZZ_ASSERT(!virtio_mmio_init(&v, &n.ops, &n, &d.mem));
	vnet_attach(&n, &v);
	d.v = &v;
	d.ram -= RAM_GPA; /* guest addresses index it */
	while (fuzz_left(&in) && ops++ < 2048) {
		switch (fuzz_u8(&in) % 8) {
		case 0:
			driver_init(&d, fuzz_u8(&in), num, avail);
			break;
		case 1: {
			uint16_t q = fuzz_u8(&in) & 1, i = fuzz_u8(&in) % num;
			uint64_t addr = DATA + fuzz_uint(&in, 2);
			uint32_t len = (uint32_t)fuzz_uint(&in, 2);
			uint16_t fl = fuzz_u8(&in) & 7, next = fuzz_u8(&in);
			uint8_t *p = d.ram + QBASE(q) + 16u * i;

			memcpy(p, &addr, 8);
			memcpy(p + 8, &len, 4);
			memcpy(p + 12, &fl, 2);
			memcpy(p + 14, &next, 2);
			break;
		}
		case 2: {
			uint16_t q = fuzz_u8(&in) & 1, head = fuzz_u8(&in);
			uint8_t *a = d.ram + QBASE(q) + 0x1000;

			memcpy(a + 4 + 2u * (avail[q] % num), &head, 2);
			avail[q]++;
			__atomic_store_n((uint16_t *)(a + 2), avail[q],
					 __ATOMIC_RELEASE);
			break;
		}
		case 3:
			fuzz_scribble(&in, d.ram, RAM_GPA, RAM_SIZE);
			break;
		case 4: {
			size_t len = fuzz_uint(&in, 2) % 1600, got;
			const uint8_t *h = fuzz_bytes(&in, VNET_HDR_LEN, &got);

			memset(frame, 0, VNET_HDR_LEN);
			memcpy(frame, h, got);
			for (size_t i = 0; i < len; i++)
				frame[VNET_HDR_LEN + i] = (uint8_t)i;
			if (send(sv[1], frame, VNET_HDR_LEN + len, 0) < 0)
				FUZZ_ASSERT(errno == EAGAIN);
			break;
		}
		case 5: {
			uint64_t f = virtio_mmio_features(&v);
			uint16_t before = v.q[VNET_Q_TX].used_idx;
			ssize_t r;

			virtio_mmio_process(&v, VNET_Q_TX);
			while ((r = recv(sv[1], frame, sizeof(frame), 0)) >= 0)
				check_tx(frame, (size_t)r, f);
			/* The entries it wrote now (older ones are the guest's
			 * RAM, which op 3 may have rewritten since). */
			(void)used_since(&v, VNET_Q_TX, before);
			break;
		}
		case 6: {
			uint16_t before = v.q[VNET_Q_RX].used_idx;
			struct vnet_stats a, b;

			vnet_get_stats(&n, &a);
			virtio_mmio_process(&v, VNET_Q_RX);
			vnet_get_stats(&n, &b);
			FUZZ_ASSERT(used_since(&v, VNET_Q_RX, before) ==
				    b.rx_bytes - a.rx_bytes +
					    VNET_HDR_LEN * (b.rx_frames -
							    a.rx_frames));
			FUZZ_ASSERT(n.rx_len <=
				    VNET_HDR_LEN + VNET_MAX_GSO_FRAME);
			break;
		}
		case 7:
			vdrv_wr(&d, VIRTIO_MMIO_STATUS, 0);
			FUZZ_ASSERT(n.rx_len == 0);
			break;
		}
	}
	virtio_mmio_destroy(&v);
	vnet_destroy(&n);
	close(sv[0]);
	close(sv[1]);
	free(buf);
	return 0;
}
