// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-console with multiport (vmm/devices/virtio_console.c) through
 * the MMIO transport, driven by a driver written from the spec (5.3):
 * the control conversation (DEVICE_READY, PORT_ADD, PORT_READY,
 * PORT_NAME, PORT_OPEN), the port's bytes both ways with receive buffers
 * held until there is something to put in them, a guest that closes and
 * reopens its port, every bad control message refused and counted, a
 * control buffer too small, and the device's reset dropping what was in
 * flight.
 */
#include <linux/virtio_console.h>

#include "check.h"
#include "vdrv.h"
#include "virtio_console.h"

#define NAME "org.qemu.guest_agent.0"
#define CBUF 0x40000u /* control buffers, 0x100 apart */
#define RBUF 0x50000u /* receive buffers, 0x100 apart */
#define TBUF 0x60000u

struct crig {
	struct vcon c;
	struct virtio_mmio v;
	struct vdrv d;
	struct vdrv_q q[VCON_NR_QUEUES];
	char out[256];
	unsigned int nout, drained, closed, wakes[VCON_NR_QUEUES];
};

static void host_out(void *ctx, uint8_t c)
{
	struct crig *r = ctx;

	if (r->nout < sizeof(r->out))
		r->out[r->nout++] = (char)c;
}

static void host_drained(void *ctx)
{
	((struct crig *)ctx)->drained++;
}

static void host_closed(void *ctx)
{
	((struct crig *)ctx)->closed++;
}

static void wake(void *ctx, unsigned int q)
{
	((struct crig *)ctx)->wakes[q]++;
}

static void rig_init(struct crig *r)
{
	memset(r, 0, sizeof(*r));
	CHECK_EQ(vcon_init(&r->c, NAME,
			   &(struct serial_host){ .out = host_out,
						  .drained = host_drained,
						  .closed = host_closed,
						  .ctx = r }),
		 0);
	vdrv_ram(&r->d);
	CHECK_EQ(virtio_mmio_init(&r->v, &r->c.ops, &r->c, &r->d.mem), 0);
	r->v.kick = wake;
	r->v.kick_ctx = r;
	vcon_attach(&r->c, &r->v);
	r->d.v = &r->v;
}

static void rig_fini(struct crig *r)
{
	virtio_mmio_destroy(&r->v);
	vcon_destroy(&r->c);
	free(r->d.ram);
}

/* Features, the four queues, DRIVER_OK; four control buffers of 0x100. */
static void rig_driver(struct crig *r)
{
	uint32_t lo;

	CHECK_EQ(vdrv_features(&r->d), 0);
	vdrv_wr(&r->d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	lo = vdrv_rd(&r->d, VIRTIO_MMIO_DEVICE_FEATURES);
	(void)lo;
	for (uint16_t i = 0; i < VCON_NR_QUEUES; i++)
		CHECK_EQ(vdrv_mq(&r->d, &r->q[i], i, 0x1000u + 0x3000u * i, 8),
			 0);
	vdrv_driver_ok(&r->d);
	for (uint16_t i = 0; i < 4; i++)
		vdrv_mq_buf(&r->d, &r->q[VCON_Q_CRX], i, CBUF + 0x100u * i,
			    0x100, true);
}

static void ctl_send(struct crig *r, uint32_t id, uint16_t event,
		     uint16_t value)
{
	static uint16_t slot;
	uint8_t *p = r->d.ram + TBUF + 0x10u * (slot % 8);
	uint32_t uid, len;

	memcpy(p, &id, 4);
	memcpy(p + 4, &event, 2);
	memcpy(p + 6, &value, 2);
	vdrv_mq_buf(&r->d, &r->q[VCON_Q_CTX], slot % 8,
		    TBUF + 0x10u * (slot % 8), 8, false);
	slot++;
	CHECK_EQ(virtio_mmio_process(&r->v, VCON_Q_CTX), 1);
	CHECK_EQ(vdrv_mq_used(&r->d, &r->q[VCON_Q_CTX], &uid, &len), 1);
}

/* The device's next control message: 1 with its fields, 0 if none. */
static int ctl_recv(struct crig *r, uint32_t *id, uint16_t *event,
		    uint16_t *value, char *tail, uint32_t *tail_len)
{
	uint32_t head = 0, len = 0;
	const uint8_t *p;

	virtio_mmio_process(&r->v, VCON_Q_CRX);
	if (!vdrv_mq_used(&r->d, &r->q[VCON_Q_CRX], &head, &len))
		return 0;
	p = r->d.ram + CBUF + 0x100u * head;
	CHECK(len >= 8);
	memcpy(id, p, 4);
	memcpy(event, p + 4, 2);
	memcpy(value, p + 6, 2);
	if (tail) {
		memcpy(tail, p + 8, len - 8);
		tail[len - 8] = 0;
	}
	if (tail_len)
		*tail_len = len - 8;
	/* The driver gives the buffer back, as Linux does. */
	vdrv_mq_buf(&r->d, &r->q[VCON_Q_CRX], (uint16_t)head,
		    CBUF + 0x100u * head, 0x100, true);
	return 1;
}

static void expect(struct crig *r, uint16_t ev, uint16_t val, const char *tail)
{
	uint32_t id = 99, tl = 0;
	uint16_t e = 99, v = 99;
	char t[256];

	CHECK_EQ(ctl_recv(r, &id, &e, &v, t, &tl), 1);
	CHECK_EQ(id, 0);
	CHECK_EQ(e, ev);
	CHECK_EQ(v, val);
	if (tail) {
		CHECK_EQ(tl, strlen(tail));
		CHECK_STREQ(t, tail);
	} else {
		CHECK_EQ(tl, 0);
	}
}

/* The driver's side of the handshake, up to the port open by a program. */
static void handshake(struct crig *r, bool open)
{
	ctl_send(r, VIRTIO_CONSOLE_BAD_ID, VIRTIO_CONSOLE_DEVICE_READY, 1);
	expect(r, VIRTIO_CONSOLE_PORT_ADD, 0, NULL);
	ctl_send(r, 0, VIRTIO_CONSOLE_PORT_READY, 1);
	expect(r, VIRTIO_CONSOLE_PORT_NAME, 1, NAME);
	expect(r, VIRTIO_CONSOLE_PORT_OPEN, 1, NULL);
	CHECK_EQ(ctl_recv(r, &(uint32_t){ 0 }, &(uint16_t){ 0 },
			  &(uint16_t){ 0 }, NULL, NULL),
		 0);
	if (open)
		ctl_send(r, 0, VIRTIO_CONSOLE_PORT_OPEN, 1);
}

static void test_config_and_handshake(void)
{
	struct crig r;
	uint64_t val = 0;

	rig_init(&r);
	vdrv_wr(&r.d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_DEVICE_ID), 3);
	CHECK(vdrv_rd(&r.d, VIRTIO_MMIO_DEVICE_FEATURES) &
	      (1u << VIRTIO_CONSOLE_F_MULTIPORT));
	CHECK_EQ(virtio_mmio_access(&r.v, VIRTIO_MMIO_CONFIG + 4, &val, 4,
				    false),
		 0);
	CHECK_EQ(val, 1); /* max_nr_ports */
	rig_driver(&r);
	/* Nothing to say before the driver is ready: buffers stay. */
	CHECK_EQ(virtio_mmio_process(&r.v, VCON_Q_CRX), 0);
	handshake(&r, true);
	CHECK_EQ(r.c.st.bad_ctrl, 0);
	CHECK_EQ(r.c.st.opens, 1);
	rig_fini(&r);
}

/* Receive buffers of 0x100 bytes, descriptors 0..n-1. */
static void give_rx(struct crig *r, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		vdrv_mq_buf(&r->d, &r->q[VCON_Q_RX], i, RBUF + 0x100u * i,
			    0x100, true);
}

static void test_bytes(void)
{
	struct crig r;
	uint32_t head = 0, len = 0;
	const char *req = "{\"execute\":\"guest-ping\"}\n";

	rig_init(&r);
	rig_driver(&r);
	give_rx(&r, 4);
	handshake(&r, false);
	/* Sent before a program opened the port: kept, not given. */
	CHECK_EQ(vcon_send(&r.c, req, strlen(req)), strlen(req));
	CHECK_EQ(virtio_mmio_process(&r.v, VCON_Q_RX), 0);
	CHECK_EQ(r.drained, 0);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_OPEN, 1);
	CHECK(r.wakes[VCON_Q_RX] >= 1);
	CHECK_EQ(virtio_mmio_process(&r.v, VCON_Q_RX), 1);
	CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VCON_Q_RX], &head, &len), 1);
	CHECK_EQ(len, strlen(req));
	CHECK(!memcmp(r.d.ram + RBUF + 0x100u * head, req, len));
	CHECK_EQ(r.drained, 1);
	/* More than one buffer's worth spans buffers, in order. */
	{
		char big[600];

		for (unsigned int i = 0; i < sizeof(big); i++)
			big[i] = (char)('a' + i % 26);
		CHECK_EQ(vcon_send(&r.c, big, sizeof(big)), sizeof(big));
		CHECK_EQ(virtio_mmio_process(&r.v, VCON_Q_RX), 3);
		for (unsigned int got = 0; got < sizeof(big); got += len) {
			CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VCON_Q_RX], &head,
					      &len),
				 1);
			CHECK(!memcmp(r.d.ram + RBUF + 0x100u * head, big + got,
				      len));
		}
		CHECK_EQ(r.drained, 2);
	}
	/* The ring is bounded: what does not fit is not taken. */
	{
		static char huge[VCON_RX_SIZE + 10];

		CHECK_EQ(vcon_send(&r.c, huge, sizeof(huge)), VCON_RX_SIZE);
		vcon_flush(&r.c);
		CHECK_EQ(r.c.st.dropped, VCON_RX_SIZE);
	}
	/* Guest to host: the agent's callback, byte by byte. */
	memcpy(r.d.ram + TBUF + 0x800, "{\"return\": {}}\n", 15);
	vdrv_mq_buf(&r.d, &r.q[VCON_Q_TX], 0, TBUF + 0x800, 15, false);
	CHECK_EQ(virtio_mmio_process(&r.v, VCON_Q_TX), 1);
	CHECK_EQ(r.nout, 15);
	CHECK(!memcmp(r.out, "{\"return\": {}}\n", 15));
	rig_fini(&r);
}

/* qemu-ga restarting: a close drops what its reader did not get. */
static void test_close_reopen(void)
{
	struct crig r;
	uint32_t head = 0, len = 0;

	rig_init(&r);
	rig_driver(&r);
	give_rx(&r, 4);
	handshake(&r, true);
	CHECK_EQ(r.closed, 0);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_OPEN, 0);
	/* The agent hears of it at once: its call in flight is lost. */
	CHECK_EQ(r.closed, 1);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_OPEN, 0); /* closed already */
	CHECK_EQ(r.closed, 1);
	CHECK_EQ(vcon_send(&r.c, "old", 3), 3);
	CHECK_EQ(virtio_mmio_process(&r.v, VCON_Q_RX), 0);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_OPEN, 1);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_OPEN, 0); /* before it was given */
	CHECK_EQ(r.c.st.dropped, 3);
	CHECK_EQ(r.c.st.closes, 2);
	CHECK_EQ(r.closed, 2);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_OPEN, 1);
	CHECK_EQ(virtio_mmio_process(&r.v, VCON_Q_RX), 0);
	CHECK_EQ(vcon_send(&r.c, "new", 3), 3);
	CHECK_EQ(virtio_mmio_process(&r.v, VCON_Q_RX), 1);
	CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VCON_Q_RX], &head, &len), 1);
	CHECK_EQ(len, 3);
	CHECK(!memcmp(r.d.ram + RBUF + 0x100u * head, "new", 3));
	CHECK_EQ(r.c.st.bad_ctrl, 0);
	rig_fini(&r);
}

static void test_bad_control(void)
{
	struct crig r;
	uint32_t head = 0, len = 0;

	rig_init(&r);
	rig_driver(&r);
	/* Before DEVICE_READY, nothing names a port. */
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_READY, 1);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_OPEN, 1);
	CHECK_EQ(r.c.st.bad_ctrl, 2);
	/* DEVICE_READY 0: the driver failed; nothing answers. */
	ctl_send(&r, 0, VIRTIO_CONSOLE_DEVICE_READY, 0);
	CHECK_EQ(ctl_recv(&r, &head, &(uint16_t){ 0 }, &(uint16_t){ 0 }, NULL,
			  NULL),
		 0);
	ctl_send(&r, 0, VIRTIO_CONSOLE_DEVICE_READY, 1);
	expect(&r, VIRTIO_CONSOLE_PORT_ADD, 0, NULL);
	/* Again: ignored, no second PORT_ADD. */
	ctl_send(&r, 0, VIRTIO_CONSOLE_DEVICE_READY, 1);
	CHECK_EQ(r.c.st.dup_ctrl, 1);
	/* A port we do not have, a value not 0 or 1, the device's own
	 * messages, an unknown event, PORT_OPEN before PORT_READY. */
	ctl_send(&r, 1, VIRTIO_CONSOLE_PORT_READY, 1);
	ctl_send(&r, 0xffffffffu, VIRTIO_CONSOLE_PORT_OPEN, 1);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_READY, 2);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_ADD, 0);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_NAME, 1);
	ctl_send(&r, 0, VIRTIO_CONSOLE_RESIZE, 0);
	ctl_send(&r, 0, 0x4242, 1);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_OPEN, 1);
	CHECK_EQ(r.c.st.bad_ctrl, 10);
	/* A message cut short (4 bytes). */
	vdrv_mq_buf(&r.d, &r.q[VCON_Q_CTX], 7, TBUF, 4, false);
	CHECK_EQ(virtio_mmio_process(&r.v, VCON_Q_CTX), 1);
	CHECK_EQ(r.c.st.bad_ctrl, 11);
	CHECK_EQ(ctl_recv(&r, &head, &(uint16_t){ 0 }, &(uint16_t){ 0 }, NULL,
			  NULL),
		 0);
	/* Still good for a proper driver. */
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_READY, 1);
	expect(&r, VIRTIO_CONSOLE_PORT_NAME, 1, NAME);
	expect(&r, VIRTIO_CONSOLE_PORT_OPEN, 1, NULL);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_READY, 1);
	CHECK_EQ(r.c.st.dup_ctrl, 2);
	/* A control buffer too small for the name: lost, not wedged. */
	CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VCON_Q_RX], &head, &len), 0);
	rig_fini(&r);
}

static void test_small_control_buffer(void)
{
	struct crig r;
	uint32_t head = 0, len = 0;

	rig_init(&r);
	CHECK_EQ(vdrv_features(&r.d), 0);
	for (uint16_t i = 0; i < VCON_NR_QUEUES; i++)
		CHECK_EQ(vdrv_mq(&r.d, &r.q[i], i, 0x1000u + 0x3000u * i, 8),
			 0);
	vdrv_driver_ok(&r.d);
	vdrv_mq_buf(&r.d, &r.q[VCON_Q_CRX], 0, CBUF, 4, true);
	ctl_send(&r, 0, VIRTIO_CONSOLE_DEVICE_READY, 1);
	CHECK_EQ(virtio_mmio_process(&r.v, VCON_Q_CRX), 1);
	CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VCON_Q_CRX], &head, &len), 1);
	CHECK_EQ(len, 0);
	CHECK_EQ(r.c.st.ctrl_dropped, 1);
	rig_fini(&r);
}

/* Status 0 and the VM's reset: the port, its bytes, its messages go. */
static void test_reset(void)
{
	struct crig r;

	rig_init(&r);
	rig_driver(&r);
	give_rx(&r, 4);
	handshake(&r, true);
	CHECK_EQ(vcon_send(&r.c, "xyz", 3), 3);
	ctl_send(&r, 0, VIRTIO_CONSOLE_PORT_OPEN, 1); /* no change */
	CHECK_EQ(r.closed, 0);
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS, 0);
	CHECK_EQ(r.closed, 1); /* the driver's reset closes the port */
	CHECK(!r.c.guest_open && !r.c.dev_ready && !r.c.port_ready);
	CHECK_EQ(r.c.rx_len, 0);
	CHECK_EQ(r.c.st.dropped, 3);
	/* A new driver starts from the beginning. */
	rig_driver(&r);
	give_rx(&r, 4);
	handshake(&r, true);
	CHECK_EQ(vcon_send(&r.c, "q", 1), 1);
	ctl_send(&r, VIRTIO_CONSOLE_BAD_ID, VIRTIO_CONSOLE_DEVICE_READY, 1);
	virtio_mmio_reset(&r.v);
	CHECK_EQ(r.c.ctl_n, 0);
	CHECK_EQ(r.c.st.dropped, 4);
	CHECK(!r.c.guest_open);
	CHECK_EQ(virtio_mmio_process(&r.v, VCON_Q_RX), 0);
	rig_fini(&r);
}

CHECK_MAIN(TEST(test_config_and_handshake), TEST(test_bytes),
	   TEST(test_close_reopen), TEST(test_bad_control),
	   TEST(test_small_control_buffer), TEST(test_reset))
