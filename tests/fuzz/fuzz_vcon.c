// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes virtio-console's control-message parser and its port's byte
 * streams (vmm/devices/virtio_console.c) as a hostile driver would use
 * them.  Input: a list of operations, one byte each (mod 6) and its
 * arguments:
 *   0 len, bytes   a control message from the driver (len mod 17 bytes)
 *   1 n            the host sends n bytes (a counter's next values)
 *   2              the host flushes
 *   3 size         a control receive buffer of size bytes, if taken
 *   4 size         a port receive buffer of size bytes, if taken
 *   5              the device's reset
 * Oracle: the device answers only what the conversation allows (PORT_ADD
 * once after DEVICE_READY, PORT_NAME with the port's name and PORT_OPEN
 * once after PORT_READY, all for port 0, per reset); nothing reaches the
 * port before a program opened it; the bytes it gets are the host's, in
 * order, with only whole drops (a close, a flush, a reset) between; the
 * rings stay bounded.
 */
#include "fuzz.h"
#include "virtio_console.h"

#define NAME "org.qemu.guest_agent.0"

static uint8_t buf[512];

/* One writable buffer as the device thread gets it. */
static uint32_t take(struct vcon *s, unsigned int q, uint32_t size)
{
	static struct virtq_chain c;

	if (!s->ops.can_take(s, q))
		return UINT32_MAX;
	c = (struct virtq_chain){ .n = 1, .in_len = size };
	c.b[0] = (struct virtq_buf){ .p = buf, .len = size, .w = true };
	memset(buf, 0xa5, sizeof(buf));
	return s->ops.handle(s, q, &c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { .p = data, .n = size };
	static struct vcon s;
	uint8_t sent = 0, want = 0; /* the host's counter; the port's next */
	uint64_t dropped = 0;
	unsigned int adds = 0, names = 0, opens = 0;

	FUZZ_ASSERT(!vcon_init(&s, NAME, NULL));
	for (unsigned int ops = 0; fuzz_left(&in) && ops < 256; ops++) {
		uint8_t op = fuzz_u8(&in) % 6, msg[16], chunk[256];
		size_t got = 0, n;
		uint32_t w;

		switch (op) {
		case 0:
			n = fuzz_u8(&in) % 17;
			memcpy(msg, fuzz_bytes(&in, n, &got), got);
			vcon_control(&s, msg, got);
			break;
		case 1:
			n = fuzz_u8(&in);
			for (size_t i = 0; i < n; i++)
				chunk[i] = (uint8_t)(sent + i);
			sent += (uint8_t)vcon_send(&s, chunk, n);
			break;
		case 2:
			vcon_flush(&s);
			break;
		case 3: {
			uint16_t ev, val;
			uint32_t id;

			w = take(&s, VCON_Q_CRX, fuzz_u8(&in) * 2u);
			if (w == UINT32_MAX || !w)
				break;
			FUZZ_ASSERT(w >= 8 && w <= 8 + VCON_NAME_MAX);
			memcpy(&id, buf, 4);
			memcpy(&ev, buf + 4, 2);
			memcpy(&val, buf + 6, 2);
			FUZZ_ASSERT(id == 0);
			if (ev == VIRTIO_CONSOLE_PORT_ADD) {
				FUZZ_ASSERT(w == 8 && ++adds == 1);
			} else if (ev == VIRTIO_CONSOLE_PORT_NAME) {
				FUZZ_ASSERT(++names == 1);
				FUZZ_ASSERT(w == 8 + strlen(NAME) &&
					    !memcmp(buf + 8, NAME, w - 8));
			} else {
				FUZZ_ASSERT(ev == VIRTIO_CONSOLE_PORT_OPEN);
				FUZZ_ASSERT(val == 1 && w == 8 && ++opens == 1);
			}
			break;
		}
		case 4:
			w = take(&s, VCON_Q_RX, fuzz_u8(&in) * 2u);
			if (w == UINT32_MAX)
				break;
			FUZZ_ASSERT(s.guest_open && s.port_ready);
			for (uint32_t i = 0; i < w; i++)
				FUZZ_ASSERT(buf[i] == (uint8_t)(want + i));
			want += (uint8_t)w;
			break;
		case 5:
			s.ops.reset(&s);
			adds = names = opens = 0;
			break;
		}
		/* A drop is whole: the port's next byte is the next sent. */
		if (s.st.dropped != dropped)
			want = sent;
		dropped = s.st.dropped;
		FUZZ_ASSERT(s.rx_len <= VCON_RX_SIZE &&
			    s.ctl_n <= VCON_CTRL_MAX);
		FUZZ_ASSERT(!s.guest_open || s.port_ready);
		FUZZ_ASSERT(!s.port_ready || s.dev_ready);
	}
	vcon_destroy(&s);
	return 0;
}
