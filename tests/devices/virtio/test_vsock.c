// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-vsock (vmm/devices/vsock.c, vsock_io.c) with its I/O thread and
 * real unix sockets in a temporary directory, the driver's packets given
 * as the device thread gets them: --vsock's checks; the guest's
 * connection to the host's port P reaching PATH_P and bytes both ways;
 * a port nobody listens on refused; a host client's `CONNECT <port>`
 * reaching the guest's listener and its `OK <hostport>`; a guest that
 * sends past its credit losing its own connection and no other; packets
 * for no connection answered with RST; a wrong CID dropped; the device's
 * reset closing every socket; hotvm's own endpoint (the agent's).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "vsock.h"

#define CID 3

struct rig {
	char dir[64], path[128];
	struct vsock s;
	struct virtio_mmio v;
	struct vm_region region;
	struct gmem mem;
	int kick; /* an eventfd: the device wants its receive queue served */
	char out[256];
	unsigned int nout, drained;
};

static void kicked(void *ctx, unsigned int q)
{
	struct rig *r = ctx;
	uint64_t one = 1;

	if (q == VSOCK_Q_RX && write(r->kick, &one, 8) != 8)
		CHECK(0);
}

static void host_out(void *ctx, uint8_t c)
{
	struct rig *r = ctx;

	if (r->nout < sizeof(r->out))
		r->out[r->nout++] = (char)c;
}

static void host_drained(void *ctx)
{
	((struct rig *)ctx)->drained++;
}

static void rig_init(struct rig *r)
{
	static uint8_t ram[4096];

	memset(r, 0, sizeof(*r));
	strcpy(r->dir, "/tmp/hotvm-vsock-XXXXXX");
	CHECK(mkdtemp(r->dir));
	snprintf(r->path, sizeof(r->path), "%s/v.sock", r->dir);
	CHECK_EQ(vsock_init(&r->s, &(struct vsock_config){ .cid = CID,
							   .path = r->path }),
		 0);
	r->region = (struct vm_region){ .size = sizeof(ram), .hva = ram };
	r->mem = (struct gmem){ .r = &r->region, .nr = 1 };
	CHECK_EQ(virtio_mmio_init(&r->v, &r->s.ops, &r->s, &r->mem), 0);
	r->kick = eventfd(0, EFD_NONBLOCK);
	r->v.kick = kicked;
	r->v.kick_ctx = r;
	vsock_attach(&r->s, &r->v);
	CHECK_EQ(vsock_io_start(&r->s), 0);
}

static void rig_fini(struct rig *r)
{
	char cmd[128];

	vsock_io_stop(&r->s);
	virtio_mmio_destroy(&r->v);
	vsock_destroy(&r->s);
	close(r->kick);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", r->dir);
	CHECK_EQ(system(cmd), 0);
}

/* A packet from the driver. */
static void tx(struct rig *r, uint32_t src, uint32_t dst, uint16_t op,
	       uint32_t flags, const void *p, uint32_t len, uint32_t buf_alloc)
{
	struct virtio_vsock_hdr h = {
		.src_cid = htole64(CID),
		.dst_cid = htole64(VSOCK_HOST_CID),
		.src_port = htole32(src),
		.dst_port = htole32(dst),
		.len = htole32(len),
		.type = htole16(VIRTIO_VSOCK_TYPE_STREAM),
		.op = htole16(op),
		.flags = htole32(flags),
		.buf_alloc = htole32(buf_alloc),
	};

	vsock_tx(&r->s, &h, p, len);
}

/*
 * The next packet for the guest, waiting up to 3 s for the device to say
 * it has one (its notify): 1 and *h and @buf filled, 0 if none came.
 */
static int rx(struct rig *r, struct virtio_vsock_hdr *h, uint8_t *buf,
	      uint32_t size)
{
	static uint8_t b[VSOCK_HDR + 65536];
	struct virtq_chain c = { .n = 1, .in_len = VSOCK_HDR + size };
	struct pollfd p = { .fd = r->kick, .events = POLLIN };

	c.b[0] = (struct virtq_buf){ .p = b,
				     .len = VSOCK_HDR + size,
				     .w = true };
	for (int tries = 0; tries < 30; tries++) {
		uint64_t n;
		uint32_t w;

		if (r->s.ops.can_take(&r->s, VSOCK_Q_RX)) {
			w = r->s.ops.handle(&r->s, VSOCK_Q_RX, &c);
			if (!w)
				continue;
			CHECK(w >= VSOCK_HDR);
			memcpy(h, b, VSOCK_HDR);
			CHECK_EQ(le32toh(h->len), w - VSOCK_HDR);
			memcpy(buf, b + VSOCK_HDR, w - VSOCK_HDR);
			CHECK_EQ(le64toh(h->src_cid), VSOCK_HOST_CID);
			CHECK_EQ(le64toh(h->dst_cid), CID);
			return 1;
		}
		if (poll(&p, 1, 100) > 0 && read(r->kick, &n, 8) < 0)
			CHECK(0);
	}
	return 0;
}

static int rx_op(struct rig *r, uint8_t *buf, struct virtio_vsock_hdr *h)
{
	return rx(r, h, buf, 4096) ? le16toh(h->op) : -1;
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	CHECK_EQ(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(listen(fd, 4), 0);
	return fd;
}

static int connect_to(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	CHECK_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* A read with a 3 s bound: bytes, 0 at EOF, -1 for nothing in time. */
static ssize_t read_wait(int fd, void *buf, size_t n)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 3000) <= 0)
		return -1;
	return read(fd, buf, n);
}

/* vsock_parse() with its reason copied into @why. */
static int parse(char *t, struct vsock_config *c, char *why, size_t n)
{
	struct hv_err err = { 0 };
	int ret = vsock_parse(t, c, &err);

	snprintf(why, n, "%s", hv_err_msg(&err));
	return ret;
}

static void test_parse(void)
{
	struct vsock_config c;
	char why[160], t[600];
	const char *bad[] = {
		"cid=0,socket=/x",
		"cid=1,socket=/x",
		"cid=2,socket=/x",
		"cid=4294967295,socket=/x",
		"cid=99999999999,socket=/x",
		"cid=-3,socket=/x",
		"cid=3",
		"socket=/x",
		"cid=3,socket=",
		"cid=3,socket=/x,port=4",
		"cid=x3,socket=/x",
	};

	strcpy(t, "socket=/run/v.sock,cid=4294967294");
	CHECK_EQ(parse(t, &c, why, sizeof(why)), 0);
	CHECK_EQ(c.cid, 4294967294u);
	CHECK_STREQ(c.path, "/run/v.sock");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(t, bad[i]);
		CHECK_EQ(parse(t, &c, why, sizeof(why)), -EINVAL);
		CHECK(why[0]);
	}
	strcpy(t, "cid=3,socket=/");
	memset(t + strlen(t), 'a', 100);
	t[14 + 100] = 0;
	CHECK_EQ(parse(t, &c, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "too long"));
}

/* The guest connects to the host's port 5000: PATH_5000. */
static void test_guest_connect(void)
{
	struct rig r;
	struct virtio_vsock_hdr h;
	uint8_t buf[4096];
	char p5000[160], got[16];
	int l, a;

	rig_init(&r);
	snprintf(p5000, sizeof(p5000), "%s_5000", r.path);
	l = listen_on(p5000);
	tx(&r, 1000, 5000, VIRTIO_VSOCK_OP_REQUEST, 0, NULL, 0, 65536);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_RESPONSE);
	CHECK_EQ(le32toh(h.src_port), 5000);
	CHECK_EQ(le32toh(h.dst_port), 1000);
	CHECK_EQ(le32toh(h.buf_alloc), VSOCK_BUF_ALLOC);
	a = accept(l, NULL, NULL);
	CHECK(a >= 0);
	tx(&r, 1000, 5000, VIRTIO_VSOCK_OP_RW, 0, "hello", 5, 65536);
	CHECK_EQ(read_wait(a, got, sizeof(got)), 5);
	CHECK(!memcmp(got, "hello", 5));
	CHECK_EQ(write(a, "world!", 6), 6);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_RW);
	CHECK_EQ(le32toh(h.len), 6);
	CHECK(!memcmp(buf, "world!", 6));
	CHECK_EQ(le32toh(h.fwd_cnt), 5); /* the 5 bytes forwarded */
	/* The host closes: the guest is told it will send no more. */
	shutdown(a, SHUT_WR);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_SHUTDOWN);
	CHECK_EQ(le32toh(h.flags), VIRTIO_VSOCK_SHUTDOWN_SEND);
	/* The guest's close: both ways, then the host's RST. */
	tx(&r, 1000, 5000, VIRTIO_VSOCK_OP_SHUTDOWN, 3, NULL, 0, 65536);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_RST);
	CHECK_EQ(read_wait(a, got, sizeof(got)), 0); /* closed */
	/* Nobody listens on 5001: refused. */
	tx(&r, 1001, 5001, VIRTIO_VSOCK_OP_REQUEST, 0, NULL, 0, 65536);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_RST);
	CHECK_EQ(le32toh(h.src_port), 5001);
	CHECK_EQ(le32toh(h.dst_port), 1001);
	CHECK(r.s.st.refused >= 1);
	close(a);
	close(l);
	rig_fini(&r);
}

/* A host client's CONNECT reaches the guest's listener on port 52. */
static void test_host_connect(void)
{
	struct rig r;
	struct virtio_vsock_hdr h;
	uint8_t buf[4096];
	char got[32];
	uint32_t hp;
	int c, bad;

	rig_init(&r);
	c = connect_to(r.path);
	CHECK_EQ(write(c, "CONNECT 52\n", 11), 11);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_REQUEST);
	CHECK_EQ(le32toh(h.dst_port), 52);
	hp = le32toh(h.src_port);
	CHECK(hp >= VSOCK_LOCAL_PORT0);
	tx(&r, 52, hp, VIRTIO_VSOCK_OP_RESPONSE, 0, NULL, 0, 65536);
	snprintf((char *)buf, sizeof(buf), "OK %u\n", hp);
	CHECK_EQ(read_wait(c, got, sizeof(got)), (ssize_t)strlen((char *)buf));
	CHECK(!memcmp(got, buf, strlen((char *)buf)));
	CHECK_EQ(write(c, "ping", 4), 4);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_RW);
	CHECK(!memcmp(buf, "ping", 4));
	tx(&r, 52, hp, VIRTIO_VSOCK_OP_RW, 0, "pong", 4, 65536);
	CHECK_EQ(read_wait(c, got, sizeof(got)), 4);
	CHECK(!memcmp(got, "pong", 4));
	/* A bad line: closed at once. */
	bad = connect_to(r.path);
	CHECK_EQ(write(bad, "CONNECT x\n", 10), 10);
	CHECK_EQ(read_wait(bad, got, sizeof(got)), 0);
	close(bad);
	/* The guest's RST closes the client. */
	tx(&r, 52, hp, VIRTIO_VSOCK_OP_RST, 0, NULL, 0, 65536);
	CHECK_EQ(read_wait(c, got, sizeof(got)), 0);
	close(c);
	rig_fini(&r);
}

/*
 * A guest past its credit while the host does not read: its connection
 * is reset, the buffer it filled bounded, another connection unharmed.
 */
static void test_credit(void)
{
	static uint8_t chunk[VSOCK_MAX_PAYLOAD];
	struct rig r;
	struct virtio_vsock_hdr h;
	uint8_t buf[4096];
	char p7[160], p8[160], got[8];
	int l7, l8, a7, a8, n;

	rig_init(&r);
	snprintf(p7, sizeof(p7), "%s_7", r.path);
	snprintf(p8, sizeof(p8), "%s_8", r.path);
	l7 = listen_on(p7);
	l8 = listen_on(p8);
	tx(&r, 100, 7, VIRTIO_VSOCK_OP_REQUEST, 0, NULL, 0, 65536);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_RESPONSE);
	tx(&r, 101, 8, VIRTIO_VSOCK_OP_REQUEST, 0, NULL, 0, 65536);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_RESPONSE);
	a7 = accept(l7, NULL, NULL);
	a8 = accept(l8, NULL, NULL);
	/* The host never reads a7; the guest ignores credit. */
	for (n = 0; n < 200 && !r.s.st.credit_over; n++)
		tx(&r, 100, 7, VIRTIO_VSOCK_OP_RW, 0, chunk, sizeof(chunk),
		   65536);
	CHECK_EQ(r.s.st.credit_over, 1);
	CHECK(n < 200);
	for (;;) {
		CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_RST);
		if (le32toh(h.dst_port) == 100)
			break;
	}
	/* The other connection still carries bytes. */
	tx(&r, 101, 8, VIRTIO_VSOCK_OP_RW, 0, "ok", 2, 65536);
	CHECK_EQ(read_wait(a8, got, sizeof(got)), 2);
	/* A packet for no connection: RST; a wrong CID: dropped. */
	tx(&r, 555, 9, VIRTIO_VSOCK_OP_RW, 0, "x", 1, 65536);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_RST);
	CHECK_EQ(le32toh(h.dst_port), 555);
	{
		struct virtio_vsock_hdr w = {
			.src_cid = htole64(CID + 1),
			.dst_cid = htole64(VSOCK_HOST_CID),
			.type = htole16(VIRTIO_VSOCK_TYPE_STREAM),
			.op = htole16(VIRTIO_VSOCK_OP_REQUEST),
			.dst_port = htole32(8),
		};
		uint64_t before = r.s.st.bad_pkt;

		CHECK_EQ(vsock_tx(&r.s, &w, NULL, 0), -EINVAL);
		CHECK_EQ(r.s.st.bad_pkt, before + 1);
	}
	/* The device's reset closes every connection's socket. */
	r.s.ops.reset(&r.s);
	CHECK_EQ(read_wait(a8, got, sizeof(got)), 0);
	close(a7);
	close(a8);
	close(l7);
	close(l8);
	rig_fini(&r);
}

/* hotvm's own endpoint: the agent's connection to the guest's 1024. */
static void test_host_endpoint(void)
{
	struct rig r;
	struct virtio_vsock_hdr h;
	uint8_t buf[4096];
	uint32_t hp;

	rig_init(&r);
	vsock_host_attach(&r.s, 1024,
			  &(struct serial_host){ .out = host_out,
						 .drained = host_drained,
						 .ctx = &r });
	CHECK_EQ(vsock_host_send(&r.s, "abc", 3), 3);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_REQUEST);
	CHECK_EQ(le32toh(h.dst_port), 1024);
	hp = le32toh(h.src_port);
	tx(&r, 1024, hp, VIRTIO_VSOCK_OP_RESPONSE, 0, NULL, 0, 65536);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_RW);
	CHECK(!memcmp(buf, "abc", 3));
	CHECK_EQ(r.drained, 1);
	tx(&r, 1024, hp, VIRTIO_VSOCK_OP_RW, 0, "xyz\n", 4, 65536);
	CHECK_EQ(r.nout, 4);
	CHECK(!memcmp(r.out, "xyz\n", 4));
	/* The guest's agent goes: the next send connects afresh. */
	tx(&r, 1024, hp, VIRTIO_VSOCK_OP_RST, 0, NULL, 0, 65536);
	CHECK_EQ(vsock_host_send(&r.s, "d", 1), 1);
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_REQUEST);
	CHECK(le32toh(h.src_port) != hp);
	/* Unanswered, the request is given up within its deadline. */
	CHECK_EQ(rx_op(&r, buf, &h), VIRTIO_VSOCK_OP_RST);
	CHECK_EQ(r.s.host_slot, -1);
	rig_fini(&r);
}

CHECK_MAIN(TEST(test_parse), TEST(test_guest_connect), TEST(test_host_connect),
	   TEST(test_credit), TEST(test_host_endpoint))
