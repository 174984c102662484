// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-net (vmm/devices/virtio_net.c) through the MMIO transport, on a
 * datagram socket pair for a tap, driven by a driver written from the
 * spec (5.1): the features and configuration (MAC, link up); frames both
 * ways byte for byte, the header split from the data, one frame over
 * several mergeable buffers with num_buffers said; frames over the
 * negotiated size, headers not negotiated and chains the wrong way
 * round dropped and counted; a frame waiting for the driver's buffers
 * while the transmit queue goes on; the reset dropping the frame in
 * waiting; the queues on threads of their own; the MAC's parser and the
 * generated MAC; tap_open()'s words for a tap that is not there.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/if_tun.h>

#include "check.h"
#include "tap.h"
#include "vdrv.h"
#include "virtio_net.h"

#define RXB  0x40000u /* receive buffers, 0x800 apart */
#define TXB  0x80000u /* transmit buffers, 0x800 apart */
#define F(b) (1ULL << (b))

struct nrig {
	struct vnet n;
	struct virtio_mmio v;
	struct vdrv d;
	struct vdrv_q q[VNET_NR_QUEUES];
	int sv[2]; /* sv[0] the device's "tap", sv[1] the network */
};

static void rig_init(struct nrig *r, bool offload, bool mrg)
{
	static const uint8_t mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

	memset(r, 0, sizeof(*r));
	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, r->sv), 0);
	CHECK_EQ(vnet_init(&r->n, r->sv[0], false, mac, offload, mrg, "t"), 0);
	vdrv_ram(&r->d);
	CHECK_EQ(virtio_mmio_init(&r->v, &r->n.ops, &r->n, &r->d.mem), 0);
	vnet_attach(&r->n, &r->v);
	r->d.v = &r->v;
}

static void rig_fini(struct nrig *r)
{
	virtio_mmio_destroy(&r->v);
	vnet_destroy(&r->n);
	close(r->sv[0]);
	close(r->sv[1]);
	free(r->d.ram);
}

/* The driver takes the offered features in @take, both queues of 8. */
static void rig_driver(struct nrig *r, uint64_t take)
{
	uint64_t f = take | F(VIRTIO_F_VERSION_1);

	vdrv_wr(&r->d, VIRTIO_MMIO_STATUS, 0);
	vdrv_wr(&r->d, VIRTIO_MMIO_STATUS,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	vdrv_wr(&r->d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vdrv_wr(&r->d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)f);
	vdrv_wr(&r->d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	vdrv_wr(&r->d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(f >> 32));
	vdrv_wr(&r->d, VIRTIO_MMIO_STATUS,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			VIRTIO_CONFIG_S_FEATURES_OK);
	CHECK(vdrv_rd(&r->d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK);
	for (uint16_t i = 0; i < VNET_NR_QUEUES; i++)
		CHECK_EQ(vdrv_mq(&r->d, &r->q[i], i, 0x1000u + 0x3000u * i, 8),
			 0);
	vdrv_driver_ok(&r->d);
}

/* A transmit chain: descriptor i the header, i + 1 the frame. */
static void tx_frame(struct nrig *r, uint16_t i, const void *hdr,
		     const uint8_t *f, uint32_t len)
{
	struct vdrv_q *q = &r->q[VNET_Q_TX];
	uint8_t *d = r->d.ram + q->base;
	uint64_t a0 = TXB + 0x800u * i, a1 = TXB + 0x800u * (i + 1);
	uint32_t l0 = VNET_HDR_LEN;
	uint16_t fl = VRING_DESC_F_NEXT, n1 = i + 1, z = 0;
	uint8_t *av = r->d.ram + q->base + 0x1000;

	CHECK(len <= 0x800 || len <= 0x10000);
	memcpy(r->d.ram + a0, hdr, VNET_HDR_LEN);
	memcpy(r->d.ram + a1, f, len);
	memcpy(d + 16u * i, &a0, 8);
	memcpy(d + 16u * i + 8, &l0, 4);
	memcpy(d + 16u * i + 12, &fl, 2);
	memcpy(d + 16u * i + 14, &n1, 2);
	memcpy(d + 16u * n1, &a1, 8);
	memcpy(d + 16u * n1 + 8, &len, 4);
	memcpy(d + 16u * n1 + 12, &z, 2);
	memcpy(av + 4 + 2u * (q->avail_idx % q->num), &i, 2);
	q->avail_idx++;
	__atomic_store_n((uint16_t *)(av + 2), q->avail_idx, __ATOMIC_RELEASE);
}

static void fill(uint8_t *p, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static void test_config(void)
{
	struct nrig r;
	uint64_t mac = 0, st = 0, f;

	rig_init(&r, true, true);
	vdrv_wr(&r.d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	f = vdrv_rd(&r.d, VIRTIO_MMIO_DEVICE_FEATURES);
	vdrv_wr(&r.d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	f |= (uint64_t)vdrv_rd(&r.d, VIRTIO_MMIO_DEVICE_FEATURES) << 32;
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_DEVICE_ID), 1);
	CHECK(f & F(VIRTIO_NET_F_MAC));
	CHECK(f & F(VIRTIO_NET_F_STATUS));
	CHECK(f & F(VIRTIO_NET_F_MRG_RXBUF));
	CHECK(f & F(VIRTIO_NET_F_CSUM));
	CHECK(f & F(VIRTIO_NET_F_GUEST_TSO4));
	CHECK(f & F(VIRTIO_F_VERSION_1));
	CHECK(!(f & F(VIRTIO_NET_F_CTRL_VQ)) && !(f & F(VIRTIO_NET_F_MQ)));
	virtio_mmio_access(&r.v, VIRTIO_MMIO_CONFIG, &mac, 4, false);
	CHECK_EQ(mac, 0x33221102u);
	virtio_mmio_access(&r.v, VIRTIO_MMIO_CONFIG + 6, &st, 2, false);
	CHECK_EQ(st, VIRTIO_NET_S_LINK_UP);
	CHECK(r.n.ops.thread_per_queue);
	rig_fini(&r);
	/* offload=off, mrg_rxbuf=off: none of them offered. */
	rig_init(&r, false, false);
	CHECK(!(r.n.ops.features &
		(F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM) |
		 F(VIRTIO_NET_F_HOST_TSO4) | F(VIRTIO_NET_F_GUEST_TSO4) |
		 F(VIRTIO_NET_F_MRG_RXBUF))));
	rig_fini(&r);
}

/* Guest to network: the frame as written, after the header. */
static void test_tx(void)
{
	static uint8_t f[1514], got[2048];
	struct virtio_net_hdr_v1 h = { 0 };
	struct nrig r;
	uint32_t id = 0, len = 0;
	ssize_t n;

	rig_init(&r, true, true);
	rig_driver(&r, r.n.ops.features);
	fill(f, sizeof(f), 3);
	tx_frame(&r, 0, &h, f, sizeof(f));
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_TX), 1);
	CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VNET_Q_TX], &id, &len), 1);
	CHECK_EQ(id, 0);
	CHECK_EQ(len, 0);
	n = recv(r.sv[1], got, sizeof(got), 0);
	CHECK_EQ(n, VNET_HDR_LEN + (ssize_t)sizeof(f));
	CHECK(!memcmp(got + VNET_HDR_LEN, f, sizeof(f)));
	CHECK_EQ(r.n.st.tx_frames, 1);
	/* Notifies were off while it served, and are on again. */
	{
		uint16_t fl;

		memcpy(&fl, r.d.ram + r.q[VNET_Q_TX].base + 0x2000, 2);
		CHECK_EQ(fl, 0);
		CHECK(r.n.ops.quiet_queues & (1u << VNET_Q_TX));
	}
	/* A checksum left to the device, negotiated: passed on as is. */
	h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h.csum_start = 34;
	h.csum_offset = 16;
	tx_frame(&r, 2, &h, f, 100);
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_TX), 1);
	n = recv(r.sv[1], got, sizeof(got), 0);
	CHECK_EQ(n, VNET_HDR_LEN + 100);
	CHECK(!memcmp(got, &h, VNET_HDR_LEN));
	rig_fini(&r);
}

/* What the negotiation does not allow never reaches the network. */
static void test_tx_refused(void)
{
	static uint8_t f[1600], got[2048];
	struct virtio_net_hdr_v1 h = { 0 }, gso = {
		.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
		.gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
		.hdr_len = 54,
		.gso_size = 1448,
		.csum_start = 34,
		.csum_offset = 16,
	};
	struct nrig r;
	uint32_t id = 0, len = 0;

	rig_init(&r, true, true);
	/* No offloads taken. */
	rig_driver(&r, F(VIRTIO_NET_F_MAC));
	fill(f, sizeof(f), 1);
	tx_frame(&r, 0, &h, f, VNET_MAX_FRAME + 1); /* over 1518 */
	tx_frame(&r, 2, &gso, f, 1000);		    /* TSO not taken */
	tx_frame(&r, 4, &h, f, 10);		    /* no Ethernet header */
	h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;	    /* CSUM not taken */
	h.csum_start = 14;
	h.csum_offset = 6;
	tx_frame(&r, 6, &h, f, 60);
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_TX), 4);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VNET_Q_TX], &id, &len), 1);
	CHECK_EQ(recv(r.sv[1], got, sizeof(got), 0), -1);
	CHECK_EQ(errno, EAGAIN);
	CHECK_EQ(r.n.st.tx_oversize, 1);
	CHECK_EQ(r.n.st.tx_bad, 3);
	CHECK_EQ(r.n.st.tx_frames, 0);
	rig_fini(&r);
}

/* One writable buffer of @len at RXB + 0x800 * i (i < 8: 16 KiB apart). */
static void rx_buf(struct nrig *r, uint16_t i, uint32_t len)
{
	vdrv_mq_buf(&r->d, &r->q[VNET_Q_RX], i, RXB + 0x4000u * i, len, true);
}

static void net_send(struct nrig *r, const struct virtio_net_hdr_v1 *h,
		     const uint8_t *f, uint32_t len)
{
	static uint8_t b[VNET_HDR_LEN + 0x10000];

	memcpy(b, h, VNET_HDR_LEN);
	memcpy(b + VNET_HDR_LEN, f, len);
	CHECK_EQ(send(r->sv[1], b, VNET_HDR_LEN + len, 0),
		 (ssize_t)(VNET_HDR_LEN + len));
}

/* Network to guest, one chain a frame (no mergeable buffers). */
static void test_rx(void)
{
	static uint8_t f[1500];
	struct virtio_net_hdr_v1 h = { 0 }, got;
	struct nrig r;
	uint32_t id = 0, len = 0;

	rig_init(&r, true, false);
	rig_driver(&r, r.n.ops.features);
	fill(f, sizeof(f), 9);
	net_send(&r, &h, f, sizeof(f));
	/* No buffer yet: the frame waits, and the backend is not waited on. */
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 0);
	CHECK_EQ(r.n.rx_len, VNET_HDR_LEN + sizeof(f));
	CHECK_EQ(r.n.ops.wait_fd(&r.n, VNET_Q_RX), -1);
	/* Meanwhile the transmit queue goes on. */
	tx_frame(&r, 0, &h, f, 60);
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_TX), 1);
	rx_buf(&r, 0, 0x4000);
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 1);
	CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VNET_Q_RX], &id, &len), 1);
	CHECK_EQ(id, 0);
	CHECK_EQ(len, VNET_HDR_LEN + sizeof(f));
	memcpy(&got, r.d.ram + RXB, sizeof(got));
	CHECK_EQ(got.num_buffers, 1);
	CHECK(!memcmp(r.d.ram + RXB + VNET_HDR_LEN, f, sizeof(f)));
	CHECK_EQ(r.n.ops.wait_fd(&r.n, VNET_Q_RX), r.sv[0]);
	/* A buffer too small for the frame: dropped, the buffer kept. */
	net_send(&r, &h, f, 1000);
	rx_buf(&r, 1, 600);
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 1);
	CHECK_EQ(r.n.st.rx_no_room, 1);
	CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VNET_Q_RX], &id, &len), 0);
	net_send(&r, &h, f, 500);
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 1);
	CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VNET_Q_RX], &id, &len), 1);
	CHECK_EQ(id, 1);
	CHECK_EQ(len, VNET_HDR_LEN + 500);
	/* Over the negotiated size (no GUEST_TSO taken): dropped, counted. */
	rig_driver(&r, F(VIRTIO_NET_F_MAC));
	{
		static uint8_t big[VNET_MAX_FRAME + 1];

		net_send(&r, &h, big, sizeof(big));
	}
	rx_buf(&r, 0, 0x4000);
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 1);
	CHECK_EQ(r.n.st.rx_oversize, 1);
	/* A GSO frame the driver cannot take: dropped as bad. */
	h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	h.gso_size = 1448;
	net_send(&r, &h, f, 200);
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 1);
	CHECK_EQ(r.n.st.rx_bad, 1);
	rig_fini(&r);
}

/* One frame over three mergeable buffers, num_buffers 3. */
static void test_rx_mergeable(void)
{
	static uint8_t f[3000];
	struct virtio_net_hdr_v1 h = { 0 }, got;
	struct nrig r;
	uint32_t id = 0, len = 0, total = 0;

	rig_init(&r, true, true);
	rig_driver(&r, r.n.ops.features);
	fill(f, sizeof(f), 5);
	for (uint16_t i = 0; i < 3; i++)
		rx_buf(&r, i, 1100);
	net_send(&r, &h, f, sizeof(f));
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 1);
	for (uint16_t i = 0; i < 3; i++) {
		CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VNET_Q_RX], &id, &len), 1);
		CHECK_EQ(id, i);
		total += len;
	}
	CHECK_EQ(total, VNET_HDR_LEN + sizeof(f));
	memcpy(&got, r.d.ram + RXB, sizeof(got));
	CHECK_EQ(got.num_buffers, 3);
	CHECK(!memcmp(r.d.ram + RXB + VNET_HDR_LEN, f, 1100 - VNET_HDR_LEN));
	CHECK(!memcmp(r.d.ram + RXB + 0x4000, f + 1100 - VNET_HDR_LEN, 1100));
	CHECK(!memcmp(r.d.ram + RXB + 0x8000, f + 2200 - VNET_HDR_LEN,
		      sizeof(f) - 2200 + VNET_HDR_LEN));
	/* Not enough buffers yet: none taken, the frame waits for more. */
	net_send(&r, &h, f, sizeof(f));
	rx_buf(&r, 3, 1100);
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 0);
	CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VNET_Q_RX], &id, &len), 0);
	rx_buf(&r, 4, 1100);
	rx_buf(&r, 5, 1100);
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 1);
	for (uint16_t i = 3; i < 6; i++) {
		CHECK_EQ(vdrv_mq_used(&r.d, &r.q[VNET_Q_RX], &id, &len), 1);
		CHECK_EQ(id, i);
	}
	rig_fini(&r);
}

/* Status 0 and the VM's reset drop the frame in waiting. */
static void test_reset(void)
{
	static uint8_t f[200];
	struct virtio_net_hdr_v1 h = { 0 };
	struct nrig r;

	rig_init(&r, true, true);
	rig_driver(&r, r.n.ops.features);
	net_send(&r, &h, f, sizeof(f));
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 0);
	CHECK(r.n.rx_len);
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS, 0);
	CHECK_EQ(r.n.rx_len, 0);
	CHECK_EQ(r.n.st.rx_dropped, 1);
	/* Not running: nothing is read, and the backend is not waited on. */
	net_send(&r, &h, f, sizeof(f));
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 0);
	CHECK_EQ(r.n.ops.wait_fd(&r.n, VNET_Q_RX), -1);
	rig_driver(&r, r.n.ops.features);
	CHECK_EQ(r.n.ops.wait_fd(&r.n, VNET_Q_RX), r.sv[0]);
	CHECK_EQ(virtio_mmio_process(&r.v, VNET_Q_RX), 0);
	CHECK(r.n.rx_len);
	virtio_mmio_reset(&r.v);
	CHECK_EQ(r.n.rx_len, 0);
	CHECK_EQ(r.n.st.rx_dropped, 2);
	rig_fini(&r);
}

static void test_mac(void)
{
	uint8_t a[6], b[6], c[6];

	CHECK_EQ(vnet_parse_mac("02:00:5e:10:00:01", a), 0);
	CHECK_EQ(a[0], 0x02);
	CHECK_EQ(a[5], 0x01);
	CHECK_EQ(vnet_parse_mac("52:54:00:AB:cd:EF", a), 0);
	CHECK_EQ(a[3], 0xab);
	CHECK_EQ(vnet_parse_mac("01:00:5e:00:00:01", a), -EINVAL); /* multi */
	CHECK_EQ(vnet_parse_mac("00:00:00:00:00:00", a), -EINVAL);
	CHECK_EQ(vnet_parse_mac("02:00:00:00:00", a), -EINVAL);
	CHECK_EQ(vnet_parse_mac("02-00-00-00-00-01", a), -EINVAL);
	CHECK_EQ(vnet_parse_mac("02:00:00:00:00:0g", a), -EINVAL);
	CHECK_EQ(vnet_parse_mac("02:00:00:00:00:011", a), -EINVAL);
	CHECK_EQ(vnet_parse_mac(" 2:00:00:00:00:01", a), -EINVAL);
	vnet_default_mac("vm1", NULL, 0, a);
	vnet_default_mac("vm1", NULL, 0, b);
	CHECK(!memcmp(a, b, 6));
	CHECK_EQ(a[0] & 3, 2); /* locally administered, unicast */
	vnet_default_mac("vm2", NULL, 0, c);
	CHECK(memcmp(a, c, 6));
	vnet_default_mac("vm1", NULL, 1, c);
	CHECK(memcmp(a, c, 6));
	vnet_default_mac("vm1", "lan", 0, c);
	CHECK(memcmp(a, c, 6));
}

/* tap_open() with its reason copied into @why. */
static int tap_try(const char *name, bool *off, char *why, size_t n)
{
	struct hv_err err = { 0 };
	int ret = tap_open(name, off, &err);

	snprintf(why, n, "%s", hv_err_msg(&err));
	return ret;
}

/* tap_open()'s checks before TUNSETIFF, which would make a new tap. */
static void test_tap_missing(void)
{
	char why[512];
	bool off;

	CHECK_EQ(tap_try("hotvm-no-such0", &off, why, sizeof(why)), -ENODEV);
	CHECK(strstr(why, "no such interface"));
	CHECK(strstr(why, "ip tuntap add hotvm-no-such0 mode tap"));
	CHECK_EQ(tap_try("lo", &off, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "not a tap"));
	CHECK_EQ(tap_try("a-name-far-too-long", &off, why, sizeof(why)),
		 -EINVAL);
	CHECK_EQ(tap_try("", &off, why, sizeof(why)), -EINVAL);
}

/* A persistent tap named @name owned by @uid (-1: nobody's), as ip does. */
static int make_tap(const char *name, long uid, bool tun)
{
	struct ifreq ifr = { .ifr_flags =
				     (tun ? IFF_TUN : IFF_TAP) | IFF_NO_PI };
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0 || ioctl(fd, TUNSETPERSIST, 1) < 0 ||
	    (uid >= 0 && ioctl(fd, TUNSETOWNER, uid) < 0)) {
		int e = -errno;

		close(fd);
		return e;
	}
	close(fd);
	return 0;
}

/*
 * Real taps, in a network namespace of the test's own (root only): one
 * opened with its offloads, a second user of it refused as busy, a tun
 * refused as not a tap, a tap of another user refused for permission,
 * and a frame through it counted by the interface.
 */
static void test_tap_real(void)
{
	char why[512], path[96], buf[32] = "";
	bool off;
	int fd, fd2, st;
	pid_t pid;

	/* sysfs as this namespace sees it, in a mount namespace of its own. */
	if (geteuid() != 0 || unshare(CLONE_NEWNET | CLONE_NEWNS) < 0 ||
	    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("sysfs", "/sys", "sysfs", 0, NULL) < 0 ||
	    access("/dev/net/tun", R_OK | W_OK) < 0) {
		check_skip("needs root and /dev/net/tun (a network namespace)");
		return;
	}
	CHECK_EQ(make_tap("hvtap0", -1, false), 0);
	CHECK_EQ(make_tap("hvtun0", -1, true), 0);
	CHECK_EQ(make_tap("hvtap1", 65534, false), 0);
	fd = tap_try("hvtap0", &off, why, sizeof(why));
	CHECK(fd >= 0);
	CHECK(off);
	fd2 = tap_try("hvtap0", &off, why, sizeof(why));
	CHECK_EQ(fd2, -EBUSY);
	CHECK(strstr(why, "busy"));
	CHECK_EQ(tap_try("hvtun0", &off, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "not a tap"));
	/*
	 * Another user's tap, opened by a process without CAP_NET_ADMIN.
	 * The TAP lines so far are flushed first: TSan's _exit() flushes
	 * stdio, and the child would print them a second time.
	 */
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int r;

		if (setgid(65534) || setuid(65533))
			_exit(3);
		r = tap_try("hvtap1", &off, why, sizeof(why));
		_exit(r == -EPERM && strstr(why, "no permission")   ? 0
		      : r == -EACCES && strstr(why, "/dev/net/tun") ? 0
								    : 1);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* A frame out through the tap: the interface counts it. */
	{
		struct ifreq ifr = { .ifr_flags = IFF_UP };
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		uint8_t fr[VNET_HDR_LEN + 60] = { 0 };
		ssize_t r;

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "hvtap0");
		CHECK_EQ(ioctl(s, SIOCSIFFLAGS, &ifr), 0);
		close(s);
		memset(fr + VNET_HDR_LEN, 0xff, 6); /* broadcast */
		fr[VNET_HDR_LEN + 6] = 2;
		fr[VNET_HDR_LEN + 12] = 0x88; /* a local experimental type */
		fr[VNET_HDR_LEN + 13] = 0xb5;
		CHECK_EQ(write(fd, fr, sizeof(fr)), (ssize_t)sizeof(fr));
		snprintf(path, sizeof(path),
			 "/sys/class/net/hvtap0/statistics/rx_packets");
		s = open(path, O_RDONLY);
		CHECK(s >= 0);
		r = read(s, buf, sizeof(buf) - 1);
		close(s);
		CHECK(r > 0);
		CHECK_EQ(atoi(buf), 1);
		/* With the offloads on: the tap takes them (TUNSETOFFLOAD). */
		CHECK_EQ(ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4), 0);
	}
	close(fd);
}

CHECK_MAIN(TEST(test_config), TEST(test_tx), TEST(test_tx_refused),
	   TEST(test_rx), TEST(test_rx_mergeable), TEST(test_reset),
	   TEST(test_mac), TEST(test_tap_missing), TEST(test_tap_real))
