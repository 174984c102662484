// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes virtio-vsock's packet parser and connection state
 * (vmm/devices/vsock.c) as a hostile driver would use them, with hotvm's
 * own endpoint (the agent's, guest port 5) attached and no I/O thread.
 * Input: a list of operations, one byte each (mod 5) and its arguments:
 *   0 sel, op, ports, flags, len, buf_alloc, fwd_cnt, bytes
 *                  a driver's packet: the CIDs right unless sel says not,
 *                  ports among a few (so packets meet connections), the
 *                  op mod 9, len mod 80 payload bytes
 *   1 n            the host endpoint sends n bytes (a counter's next)
 *   2              the host endpoint flushes
 *   3 size         a receive buffer of size * 2 bytes, if taken
 *   4              the device's reset
 * Oracle: every packet for the guest is well formed (the host's CID to
 * the guest's, a known op, its length the bytes written, no more than the
 * guest's credit, our credit VSOCK_BUF_ALLOC); hotvm's endpoint's bytes
 * reach the guest in order with only whole drops (a flush, a close, a
 * reset) between, and the guest's bytes reach it only on an established
 * connection; the queues and buffers stay bounded.
 */
#include "fuzz.h"
#include "vsock.h"

#define CID   3
#define HPORT 5

static uint8_t buf[VSOCK_HDR + 600];
static unsigned int outn;

static void out(void *ctx, uint8_t c)
{
	(void)ctx;
	(void)c;
	outn++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { .p = data, .n = size };
	static struct vsock s;
	uint8_t sent = 0, want = 0;
	uint64_t dropped = 0;

	FUZZ_ASSERT(!vsock_init(&s, &(struct vsock_config){ .cid = CID }));
	vsock_host_attach(&s, HPORT, &(struct serial_host){ .out = out });
	for (unsigned int ops = 0; fuzz_left(&in) && ops < 256; ops++) {
		uint8_t op = fuzz_u8(&in) % 5, chunk[256];
		size_t got = 0, n;

		switch (op) {
		case 0: {
			uint8_t sel = fuzz_u8(&in);
			struct virtio_vsock_hdr h = {
				.src_cid = htole64(sel & 1 ? CID + 1 : CID),
				.dst_cid =
					htole64(sel & 2 ? 7 : VSOCK_HOST_CID),
				.type = htole16(sel & 4 ? 2 : 1),
			};
			uint32_t ports = fuzz_u8(&in), len;
			const uint8_t *p;
			bool est = s.host_slot >= 0 &&
				   s.c[s.host_slot].state == VSOCK_ESTABLISHED;
			unsigned int before = outn;

			h.op = htole16(fuzz_u8(&in) % 9);
			/* The host endpoint's ports, or a few others. */
			h.src_port = htole32(ports & 8 ? HPORT : ports & 3);
			h.dst_port = htole32(
				ports & 16
					? s.c[s.host_slot < 0 ? 0 : s.host_slot]
						  .local_port
					: (ports >> 5) & 3);
			h.flags = htole32(fuzz_u8(&in) % 5);
			len = fuzz_u8(&in) % 80;
			h.buf_alloc = htole32((uint32_t)fuzz_uint(&in, 2) << 4);
			h.fwd_cnt = htole32((uint32_t)fuzz_uint(&in, 2));
			p = fuzz_bytes(&in, len, &got);
			h.len = htole32(sel & 8 ? len + 1 : (uint32_t)got);
			vsock_tx(&s, &h, p, (uint32_t)got);
			/* Bytes reach hotvm's endpoint only when connected. */
			FUZZ_ASSERT(outn == before || est);
			break;
		}
		case 1:
			n = fuzz_u8(&in);
			for (size_t i = 0; i < n; i++)
				chunk[i] = (uint8_t)(sent + i);
			sent += (uint8_t)vsock_host_send(&s, chunk, n);
			break;
		case 2:
			vsock_host_flush(&s);
			break;
		case 3: {
			uint32_t room = fuzz_u8(&in) * 2u + 8, w, len;
			struct virtq_chain c = { .n = 1, .in_len = room };
			struct virtio_vsock_hdr h;
			struct vsock_conn *k = NULL;
			uint32_t credit = 0;

			if (!s.ops.can_take(&s, VSOCK_Q_RX))
				break;
			if (s.host_slot >= 0) {
				k = &s.c[s.host_slot];
				credit = k->peer_buf_alloc -
					 (k->rx_cnt - k->peer_fwd_cnt);
			}
			c.b[0] = (struct virtq_buf){ .p = buf,
						     .len = room,
						     .w = true };
			w = s.ops.handle(&s, VSOCK_Q_RX, &c);
			if (!w)
				break;
			FUZZ_ASSERT(w >= VSOCK_HDR && w <= room);
			memcpy(&h, buf, VSOCK_HDR);
			len = le32toh(h.len);
			FUZZ_ASSERT(len == w - VSOCK_HDR);
			FUZZ_ASSERT(le64toh(h.src_cid) == VSOCK_HOST_CID);
			FUZZ_ASSERT(le64toh(h.dst_cid) == CID);
			FUZZ_ASSERT(le16toh(h.type) ==
				    VIRTIO_VSOCK_TYPE_STREAM);
			FUZZ_ASSERT(le16toh(h.op) >= VIRTIO_VSOCK_OP_REQUEST &&
				    le16toh(h.op) <=
					    VIRTIO_VSOCK_OP_CREDIT_UPDATE);
			FUZZ_ASSERT(le32toh(h.buf_alloc) == VSOCK_BUF_ALLOC);
			if (le16toh(h.op) != VIRTIO_VSOCK_OP_RW) {
				FUZZ_ASSERT(!len);
				break;
			}
			/* Data only from hotvm's endpoint here (no sockets). */
			FUZZ_ASSERT(k && le32toh(h.dst_port) == HPORT);
			FUZZ_ASSERT(len <= credit);
			for (uint32_t i = 0; i < len; i++)
				FUZZ_ASSERT(buf[VSOCK_HDR + i] ==
					    (uint8_t)(want + i));
			want += (uint8_t)len;
			break;
		}
		case 4:
			s.ops.reset(&s);
			break;
		}
		/* A drop is whole: the guest's next byte is the next sent. */
		if (s.st.host_dropped != dropped)
			want = sent;
		dropped = s.st.host_dropped;
		FUZZ_ASSERT(s.rst_n <= VSOCK_RST_MAX);
		FUZZ_ASSERT(s.hring_len <= VSOCK_AGENT_RING);
		for (int i = 0; i < VSOCK_MAX_CONNS; i++)
			FUZZ_ASSERT(s.c[i].buf_len <= VSOCK_BUF_ALLOC);
		FUZZ_ASSERT(s.host_slot < 0 || s.c[s.host_slot].host);
	}
	vsock_destroy(&s);
	return 0;
}
