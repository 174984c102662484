// SPDX-License-Identifier: GPL-2.0-only
/*
 * The virtio-MMIO transport and the split virtqueue (vmm/devices/
 * virtio_mmio.c, virtq.c) against the virtio 1.x spec's facts, with a
 * fake device that echoes what it reads, and a guest that breaks the rules:
 * bad sizes and addresses, bad chains, a broken ring, a reset while a
 * request is in flight.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "check.h"
#include "vdrv.h"

#define ECHO_ID 0x42

struct echo {
	unsigned int served;
	uint64_t last_out;
	/* test_reset_in_flight: the handler waits here. */
	pthread_mutex_t m;
	pthread_cond_t c;
	bool block, inside, release;
	const _Atomic uint64_t *resets; /* the transport's count */
	uint64_t resets_seen;		/* at the end of every request */
};

static void echo_config(void *ctx, uint32_t off, void *buf, uint32_t len)
{
	static const uint8_t cfg[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	(void)ctx;
	memcpy(buf, cfg + off, len);
}

/* Writes 0xab over every writable byte; returns how many. */
static uint32_t echo_handle(void *ctx, unsigned int q, struct virtq_chain *c)
{
	struct echo *e = ctx;

	(void)q;
	pthread_mutex_lock(&e->m);
	e->inside = true;
	pthread_cond_broadcast(&e->c);
	while (e->block && !e->release)
		pthread_cond_wait(&e->c, &e->m);
	e->inside = false;
	pthread_mutex_unlock(&e->m);
	if (e->resets)
		e->resets_seen |= 1ULL << atomic_load(e->resets);
	e->served++;
	e->last_out = c->out_len;
	for (unsigned int i = c->nr_out; i < c->n; i++)
		memset(c->b[i].p, 0xab, c->b[i].len);
	return (uint32_t)c->in_len;
}

static const struct virtio_dev_ops echo_ops = {
	.name = "echo",
	.device_id = ECHO_ID,
	.features = 1ULL << 3,
	.nr_queues = 1,
	.queue_max = 16,
	.config_size = 8,
	.config_read = echo_config,
	.handle = echo_handle,
};

/* The same device offering indirect descriptors. */
static const struct virtio_dev_ops echo_ind_ops = {
	.name = "echo",
	.device_id = ECHO_ID,
	.features = (1ULL << 3) | (1ULL << VIRTIO_RING_F_INDIRECT_DESC),
	.nr_queues = 1,
	.queue_max = 16,
	.config_size = 8,
	.config_read = echo_config,
	.handle = echo_handle,
};

static unsigned int raised;

static void count_raise(void *ctx)
{
	(void)ctx;
	raised++;
}

struct rig {
	struct virtio_mmio v;
	struct echo e;
	struct vdrv d;
};

static void rig_init_ops(struct rig *r, const struct virtio_dev_ops *ops)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->e.m, NULL);
	pthread_cond_init(&r->e.c, NULL);
	vdrv_ram(&r->d);
	CHECK_EQ(virtio_mmio_init(&r->v, ops, &r->e, &r->d.mem), 0);
	r->v.raise = count_raise;
	r->d.v = &r->v;
	raised = 0;
}

static void rig_init(struct rig *r)
{
	rig_init_ops(r, &echo_ops);
}

static void rig_fini(struct rig *r)
{
	virtio_mmio_destroy(&r->v);
	free(r->d.ram);
}

static void test_identity(void)
{
	struct rig r;
	uint64_t val = 0;

	rig_init(&r);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_MAGIC_VALUE), 0x74726976);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_VERSION), 2);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_DEVICE_ID), ECHO_ID);
	vdrv_wr(&r.d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_DEVICE_FEATURES), 1u << 3);
	/* VIRTIO_F_VERSION_1 is bit 32: modern only. */
	vdrv_wr(&r.d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_DEVICE_FEATURES), 1);
	vdrv_wr(&r.d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 2);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_DEVICE_FEATURES), 0);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_QUEUE_NUM_MAX), 16);
	vdrv_wr(&r.d, VIRTIO_MMIO_QUEUE_SEL, 1); /* no such queue */
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_QUEUE_NUM_MAX), 0);
	/* The control registers are 32-bit only; config any width. */
	CHECK_EQ(virtio_mmio_access(&r.v, VIRTIO_MMIO_MAGIC_VALUE, &val, 2,
				    false),
		 1);
	CHECK_EQ(virtio_mmio_access(&r.v, 0x0f0, &val, 4, false), 1);
	CHECK_EQ(virtio_mmio_access(&r.v, VIRTIO_MMIO_CONFIG + 2, &val, 2,
				    false),
		 0);
	CHECK_EQ(val, 0x0403);
	CHECK_EQ(virtio_mmio_access(&r.v, VIRTIO_MMIO_CONFIG + 6, &val, 4,
				    false),
		 1); /* past the 8 bytes */
	CHECK(atomic_load(&r.v.st.ign_offset) >= 3);
	rig_fini(&r);
}

static void test_features(void)
{
	struct rig r;
	const uint32_t drv =
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;

	rig_init(&r);
	/* A legacy driver (no VERSION_1) is refused FEATURES_OK. */
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS, drv);
	vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES, 1u << 3);
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS, drv | VIRTIO_CONFIG_S_FEATURES_OK);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_STATUS) &
			 VIRTIO_CONFIG_S_FEATURES_OK,
		 0);
	/* A bit the device never offered is refused too. */
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS, 0);
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS, drv);
	vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES, (1u << 3) | (1u << 4));
	vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES, 1);
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS, drv | VIRTIO_CONFIG_S_FEATURES_OK);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_STATUS) &
			 VIRTIO_CONFIG_S_FEATURES_OK,
		 0);
	/* What was offered, with VERSION_1: accepted, then frozen. */
	vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES, 1u << 3);
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS, drv | VIRTIO_CONFIG_S_FEATURES_OK);
	CHECK(vdrv_rd(&r.d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK);
	CHECK_EQ(vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES, 0), 1);
	CHECK_EQ(r.v.gfeatures, (1ULL << 32) | (1u << 3));
	rig_fini(&r);
}

static void test_queue_setup(void)
{
	struct rig r;

	rig_init(&r);
	/* Not a power of two; more than the maximum; outside RAM. */
	CHECK(vdrv_queue(&r.d, 12) != 0);
	CHECK(vdrv_queue(&r.d, 32) != 0);
	vdrv_wr(&r.d, VIRTIO_MMIO_QUEUE_NUM, 8);
	vdrv_wr(&r.d, VIRTIO_MMIO_QUEUE_USED_LOW, VDRV_RAM - 8);
	vdrv_wr(&r.d, VIRTIO_MMIO_QUEUE_READY, 1);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_QUEUE_READY), 0);
	vdrv_wr(&r.d, VIRTIO_MMIO_QUEUE_USED_LOW, VDRV_USED + 2); /* align */
	vdrv_wr(&r.d, VIRTIO_MMIO_QUEUE_READY, 1);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_QUEUE_READY), 0);
	vdrv_wr(&r.d, VIRTIO_MMIO_QUEUE_USED_HIGH, 1); /* 4 GiB up */
	vdrv_wr(&r.d, VIRTIO_MMIO_QUEUE_USED_LOW, VDRV_USED);
	vdrv_wr(&r.d, VIRTIO_MMIO_QUEUE_READY, 1);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_QUEUE_READY), 0);
	CHECK(atomic_load(&r.v.st.bad_queue) >= 4);
	CHECK_EQ(vdrv_queue(&r.d, 8), 0);
	/* Ready: its addresses and size are the device's now. */
	CHECK_EQ(vdrv_wr(&r.d, VIRTIO_MMIO_QUEUE_DESC_LOW, 0x8000), 1);
	CHECK_EQ(vdrv_wr(&r.d, VIRTIO_MMIO_QUEUE_NUM, 4), 1);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_QUEUE_DESC_LOW), VDRV_DESC);
	rig_fini(&r);
}

static void test_round_trip(void)
{
	struct rig r;
	uint32_t id = ~0u, len = ~0u;

	rig_init(&r);
	CHECK_EQ(vdrv_init(&r.d, 8), 0);
	/* Not DRIVER_OK yet is covered by vdrv_init; now one chain. */
	vdrv_desc(&r.d, 3, VDRV_DATA, 100, VRING_DESC_F_NEXT, 5);
	vdrv_desc(&r.d, 5, VDRV_DATA + 0x1000, 64, VRING_DESC_F_WRITE, 0);
	vdrv_avail(&r.d, 3);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	CHECK_EQ(vdrv_used(&r.d, &id, &len), 1);
	CHECK_EQ(id, 3);
	CHECK_EQ(len, 64);
	CHECK_EQ(r.e.last_out, 100);
	CHECK_EQ(r.d.ram[VDRV_DATA + 0x1000 + 63], 0xab);
	CHECK_EQ(r.d.ram[VDRV_DATA + 0x1000 + 64], 0);
	CHECK_EQ(raised, 1);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_INTERRUPT_STATUS),
		 VIRTIO_MMIO_INT_VRING);
	vdrv_wr(&r.d, VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_INTERRUPT_STATUS), 0);
	/* Nothing new: nothing served, no interrupt. */
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 0);
	CHECK_EQ(raised, 1);
	/* The driver asks for no interrupt: none. */
	vdrv_avail_flags(&r.d, VRING_AVAIL_F_NO_INTERRUPT);
	vdrv_avail(&r.d, 5);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	CHECK_EQ(raised, 1);
	rig_fini(&r);
}

/*
 * The driver's InterruptACK of the used-buffer bit posted through its
 * ioeventfd (here written by hand): it takes effect at the next bit set,
 * before it, so the bit for requests served after the ack stays set.
 */
static void test_posted_ack(void)
{
	struct rig r;
	uint32_t id = ~0u, len = ~0u;
	uint64_t one = 1;

	rig_init(&r);
	r.v.ack_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	CHECK(r.v.ack_fd >= 0);
	CHECK_EQ(vdrv_init(&r.d, 8), 0);
	vdrv_desc(&r.d, 1, VDRV_DATA, 8, VRING_DESC_F_WRITE, 0);
	vdrv_avail(&r.d, 1);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	CHECK_EQ(vdrv_used(&r.d, &id, &len), 1);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_INTERRUPT_STATUS),
		 VIRTIO_MMIO_INT_VRING);
	/* Posted: the bit reads set until the device next sets one. */
	CHECK_EQ(write(r.v.ack_fd, &one, sizeof(one)), (ssize_t)sizeof(one));
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_INTERRUPT_STATUS),
		 VIRTIO_MMIO_INT_VRING);
	/* A request served after the ack: its bit survives the ack. */
	vdrv_avail(&r.d, 1);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	CHECK_EQ(raised, 2);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_INTERRUPT_STATUS),
		 VIRTIO_MMIO_INT_VRING);
	/* The ack was taken: the eventfd is empty. */
	CHECK_EQ(read(r.v.ack_fd, &one, sizeof(one)), -1);
	/* A write that reaches the bus (another value's) clears at once. */
	vdrv_wr(&r.d, VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_INTERRUPT_STATUS), 0);
	rig_fini(&r);
}

static void test_index_wrap(void)
{
	struct rig r;
	uint32_t id = ~0u, len = ~0u;
	unsigned int got = 0;

	rig_init(&r);
	CHECK_EQ(vdrv_init(&r.d, 4), 0);
	vdrv_desc(&r.d, 1, VDRV_DATA, 8, VRING_DESC_F_WRITE, 0);
	for (unsigned int i = 0; i < 70000; i++) {
		vdrv_avail(&r.d, 1);
		CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
		got += vdrv_used(&r.d, &id, &len);
	}
	CHECK_EQ(got, 70000);
	CHECK_EQ(r.e.served, 70000);
	rig_fini(&r);
}

/* A bad chain is returned unread, and the next one is served. */
static void bad_chain_ops(void (*make)(struct vdrv *d),
			  const struct virtio_dev_ops *ops)
{
	struct rig r;
	uint32_t id = ~0u, len = ~0u;

	rig_init_ops(&r, ops);
	CHECK_EQ(vdrv_init(&r.d, 8), 0);
	make(&r.d);
	vdrv_avail(&r.d, 0);
	vdrv_desc(&r.d, 7, VDRV_DATA, 8, VRING_DESC_F_WRITE, 0);
	vdrv_avail(&r.d, 7);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 2);
	CHECK_EQ(r.e.served, 1);
	CHECK_EQ(vdrv_used(&r.d, &id, &len), 1);
	CHECK_EQ(id, 0);
	CHECK_EQ(len, 0);
	CHECK_EQ(vdrv_used(&r.d, &id, &len), 1);
	CHECK_EQ(id, 7);
	CHECK_EQ(len, 8);
	CHECK_EQ(r.v.q[0].st.bad_chain, 1);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_STATUS) &
			 VIRTIO_CONFIG_S_NEEDS_RESET,
		 0);
	rig_fini(&r);
}

static void bad_chain(void (*make)(struct vdrv *d))
{
	bad_chain_ops(make, &echo_ops);
}

static void loop_chain(struct vdrv *d)
{
	vdrv_desc(d, 0, VDRV_DATA, 8, VRING_DESC_F_NEXT, 1);
	vdrv_desc(d, 1, VDRV_DATA, 8, VRING_DESC_F_NEXT, 0);
}

static void outside_ram(struct vdrv *d)
{
	vdrv_desc(d, 0, VDRV_RAM - 4, 8, VRING_DESC_F_WRITE, 0);
}

static void wrapping_addr(struct vdrv *d)
{
	vdrv_desc(d, 0, ~0ULL - 2, 8, VRING_DESC_F_WRITE, 0);
}

static void next_out_of_range(struct vdrv *d)
{
	vdrv_desc(d, 0, VDRV_DATA, 8, VRING_DESC_F_NEXT, 8);
}

static void read_after_write(struct vdrv *d)
{
	vdrv_desc(d, 0, VDRV_DATA, 8, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE,
		  1);
	vdrv_desc(d, 1, VDRV_DATA, 8, 0, 0);
}

static void indirect(struct vdrv *d)
{
	vdrv_desc(d, 0, VDRV_DATA, 16, VRING_DESC_F_INDIRECT, 0);
}

/* Indirect tables live in RAM at TABLE (entries 16 bytes each). */
#define TABLE 0x20000u

static void table_desc(struct vdrv *d, uint64_t table, uint16_t i,
		       uint64_t addr, uint32_t len, uint16_t flags,
		       uint16_t next)
{
	uint8_t *p = d->ram + table + 16u * i;

	memcpy(p, &addr, 8);
	memcpy(p + 8, &len, 4);
	memcpy(p + 12, &flags, 2);
	memcpy(p + 14, &next, 2);
}

/* A header, data and a status byte in an indirect table of 3. */
static void good_table(struct vdrv *d)
{
	table_desc(d, TABLE, 0, VDRV_DATA, 16, VRING_DESC_F_NEXT, 2);
	table_desc(d, TABLE, 2, VDRV_DATA + 64, 512,
		   VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	table_desc(d, TABLE, 1, VDRV_DATA + 1024, 1, VRING_DESC_F_WRITE, 0);
}

/*
 * Negotiated, an indirect table is walked: alone at the head, or after
 * direct descriptors (the spec's device requirement); its WRITE flag is
 * ignored.  Not negotiated, it is a bad chain (test_bad_chains).
 */
static void test_indirect(void)
{
	struct rig r;
	uint32_t id = ~0u, len = ~0u;

	rig_init_ops(&r, &echo_ind_ops);
	CHECK_EQ(vdrv_init(&r.d, 8), 0);
	CHECK(r.v.q[0].indirect);
	good_table(&r.d);
	vdrv_desc(&r.d, 3, TABLE, 3 * 16,
		  VRING_DESC_F_INDIRECT | VRING_DESC_F_WRITE, 0);
	vdrv_avail(&r.d, 3);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	CHECK_EQ(r.e.served, 1);
	CHECK_EQ(r.e.last_out, 16);
	CHECK_EQ(vdrv_used(&r.d, &id, &len), 1);
	CHECK_EQ(id, 3);
	CHECK_EQ(len, 513);
	CHECK_EQ(r.d.ram[VDRV_DATA + 64 + 511], 0xab);
	CHECK_EQ(r.d.ram[VDRV_DATA + 1024], 0xab);
	/* A direct header, then a table of the data and the status. */
	table_desc(&r.d, TABLE + 0x100, 0, VDRV_DATA + 64, 8,
		   VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	table_desc(&r.d, TABLE + 0x100, 1, VDRV_DATA + 1024, 1,
		   VRING_DESC_F_WRITE, 0);
	vdrv_desc(&r.d, 5, VDRV_DATA, 24, VRING_DESC_F_NEXT, 6);
	vdrv_desc(&r.d, 6, TABLE + 0x100, 2 * 16, VRING_DESC_F_INDIRECT, 0);
	vdrv_avail(&r.d, 5);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	CHECK_EQ(r.e.last_out, 24);
	CHECK_EQ(vdrv_used(&r.d, &id, &len), 1);
	CHECK_EQ(id, 5);
	CHECK_EQ(len, 9);
	CHECK_EQ(r.v.q[0].st.bad_chain, 0);
	rig_fini(&r);
}

static void ind_with_next(struct vdrv *d)
{
	good_table(d);
	vdrv_desc(d, 0, TABLE, 3 * 16,
		  VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 1);
	vdrv_desc(d, 1, VDRV_DATA, 8, VRING_DESC_F_WRITE, 0);
}

static void ind_nested(struct vdrv *d)
{
	table_desc(d, TABLE, 0, VDRV_DATA, 16, VRING_DESC_F_NEXT, 1);
	table_desc(d, TABLE, 1, TABLE + 0x100, 16, VRING_DESC_F_INDIRECT, 0);
	table_desc(d, TABLE + 0x100, 0, VDRV_DATA + 64, 8, VRING_DESC_F_WRITE,
		   0);
	vdrv_desc(d, 0, TABLE, 2 * 16, VRING_DESC_F_INDIRECT, 0);
}

static void ind_empty(struct vdrv *d)
{
	vdrv_desc(d, 0, TABLE, 0, VRING_DESC_F_INDIRECT, 0);
}

static void ind_partial_entry(struct vdrv *d)
{
	good_table(d);
	vdrv_desc(d, 0, TABLE, 3 * 16 - 1, VRING_DESC_F_INDIRECT, 0);
}

/* More entries than the queue (8) could chain. */
static void ind_too_long(struct vdrv *d)
{
	good_table(d);
	vdrv_desc(d, 0, TABLE, 9 * 16, VRING_DESC_F_INDIRECT, 0);
}

static void ind_outside_ram(struct vdrv *d)
{
	vdrv_desc(d, 0, VDRV_RAM - 32, 3 * 16, VRING_DESC_F_INDIRECT, 0);
}

/* next 2 in a table of 2 (the queue's 8 would allow it). */
static void ind_next_out_of_table(struct vdrv *d)
{
	good_table(d);
	vdrv_desc(d, 0, TABLE, 2 * 16, VRING_DESC_F_INDIRECT, 0);
}

/* A loop inside the table ends at the queue's size. */
static void ind_loop(struct vdrv *d)
{
	table_desc(d, TABLE, 0, VDRV_DATA + 64, 8,
		   VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	table_desc(d, TABLE, 1, VDRV_DATA + 64, 8,
		   VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 0);
	vdrv_desc(d, 0, TABLE, 2 * 16, VRING_DESC_F_INDIRECT, 0);
}

/* A table whose chain is longer than the queue: 8 direct, then 1. */
static void ind_chain_too_long(struct vdrv *d)
{
	for (uint16_t i = 0; i < 6; i++)
		table_desc(d, TABLE, i, VDRV_DATA + 64, 8,
			   VRING_DESC_F_NEXT | VRING_DESC_F_WRITE,
			   (uint16_t)(i + 1));
	table_desc(d, TABLE, 6, VDRV_DATA + 64, 8, VRING_DESC_F_WRITE, 0);
	vdrv_desc(d, 0, VDRV_DATA, 8, VRING_DESC_F_NEXT, 1);
	vdrv_desc(d, 1, VDRV_DATA, 8, VRING_DESC_F_NEXT, 2);
	vdrv_desc(d, 2, TABLE, 7 * 16, VRING_DESC_F_INDIRECT, 0);
}

static void test_bad_indirect(void)
{
	bad_chain_ops(ind_with_next, &echo_ind_ops);
	bad_chain_ops(ind_nested, &echo_ind_ops);
	bad_chain_ops(ind_empty, &echo_ind_ops);
	bad_chain_ops(ind_partial_entry, &echo_ind_ops);
	bad_chain_ops(ind_too_long, &echo_ind_ops);
	bad_chain_ops(ind_outside_ram, &echo_ind_ops);
	bad_chain_ops(ind_next_out_of_table, &echo_ind_ops);
	bad_chain_ops(ind_loop, &echo_ind_ops);
	bad_chain_ops(ind_chain_too_long, &echo_ind_ops);
}

/* Offered but not taken by the driver: an indirect table is a bad chain. */
static void test_indirect_not_negotiated(void)
{
	struct rig r;
	uint32_t id = ~0u, len = ~0u;

	rig_init_ops(&r, &echo_ind_ops);
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS, 0);
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES, 1u << 3);
	vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	vdrv_wr(&r.d, VIRTIO_MMIO_DRIVER_FEATURES, 1); /* VERSION_1 */
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			VIRTIO_CONFIG_S_FEATURES_OK);
	CHECK(vdrv_rd(&r.d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK);
	CHECK_EQ(vdrv_queue(&r.d, 8), 0);
	vdrv_driver_ok(&r.d);
	CHECK(!r.v.q[0].indirect);
	good_table(&r.d);
	vdrv_desc(&r.d, 0, TABLE, 3 * 16, VRING_DESC_F_INDIRECT, 0);
	vdrv_avail(&r.d, 0);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	CHECK_EQ(r.e.served, 0);
	CHECK_EQ(vdrv_used(&r.d, &id, &len), 1);
	CHECK_EQ(len, 0);
	CHECK_EQ(r.v.q[0].st.bad_chain, 1);
	rig_fini(&r);
}

static void test_bad_chains(void)
{
	bad_chain(loop_chain);
	bad_chain(outside_ram);
	bad_chain(wrapping_addr);
	bad_chain(next_out_of_range);
	bad_chain(read_after_write);
	bad_chain(indirect);
}

/* A head or an avail index out of range: the ring is broken. */
static void test_broken_ring(void)
{
	struct rig r;
	uint32_t id = ~0u, len = ~0u;
	uint16_t idx;

	rig_init(&r);
	CHECK_EQ(vdrv_init(&r.d, 8), 0);
	vdrv_avail(&r.d, 9); /* head >= num */
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 0);
	CHECK_EQ(vdrv_used(&r.d, &id, &len), 0);
	CHECK(vdrv_rd(&r.d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
	CHECK(vdrv_rd(&r.d, VIRTIO_MMIO_INTERRUPT_STATUS) &
	      VIRTIO_MMIO_INT_CONFIG);
	CHECK_EQ(raised, 1);
	/* Until the driver resets the device, nothing more is read. */
	vdrv_desc(&r.d, 1, VDRV_DATA, 8, VRING_DESC_F_WRITE, 0);
	vdrv_avail(&r.d, 1);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 0);
	CHECK_EQ(r.e.served, 0);
	CHECK_EQ(vdrv_init(&r.d, 8), 0);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_STATUS) &
			 VIRTIO_CONFIG_S_NEEDS_RESET,
		 0);
	/* An avail index 9 ahead of a queue of 8. */
	idx = 9;
	memcpy(r.d.ram + VDRV_AVAIL + 2, &idx, 2);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 0);
	CHECK_EQ(r.e.served, 0);
	CHECK(vdrv_rd(&r.d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
	CHECK_EQ(r.v.q[0].st.bad_ring, 1); /* since the reset */
	rig_fini(&r);
}

/* Status 0 forgets the queues, features and interrupt; nothing served. */
static void test_reset(void)
{
	struct rig r;
	uint32_t id = ~0u, len = ~0u;

	rig_init(&r);
	CHECK_EQ(vdrv_init(&r.d, 8), 0);
	vdrv_desc(&r.d, 1, VDRV_DATA, 8, VRING_DESC_F_WRITE, 0);
	vdrv_avail(&r.d, 1);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	vdrv_avail(&r.d, 1);
	vdrv_wr(&r.d, VIRTIO_MMIO_STATUS, 0);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_STATUS), 0);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_QUEUE_READY), 0);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_INTERRUPT_STATUS), 0);
	CHECK_EQ(r.v.gfeatures, 0);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 0);
	CHECK_EQ(r.e.served, 1);
	/* The VM's reset is the same. */
	CHECK_EQ(vdrv_init(&r.d, 8), 0);
	virtio_mmio_reset(&r.v);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_QUEUE_READY), 0);
	CHECK_EQ(atomic_load(&r.v.st.resets), 4); /* 2 by vdrv_init */
	(void)id;
	(void)len;
	rig_fini(&r);
}

static void *resetter(void *arg)
{
	struct rig *r = arg;

	vdrv_wr(&r->d, VIRTIO_MMIO_STATUS, 0);
	return NULL;
}

static void *processor(void *arg)
{
	struct rig *r = arg;

	virtio_mmio_process(&r->v, 0);
	return NULL;
}

/*
 * A reset while a request is in flight waits for it to complete: no
 * request ends after a reset it overlapped, every request taken before
 * the reset is in the used ring, none is taken after it, and the reset
 * sends no interrupt for it.
 */
static void test_reset_in_flight(void)
{
	struct rig r;
	pthread_t p, t;
	uint32_t id, len;
	unsigned int used = 0;

	rig_init(&r);
	CHECK_EQ(vdrv_init(&r.d, 8), 0);
	r.e.resets = &r.v.st.resets;
	vdrv_desc(&r.d, 1, VDRV_DATA, 8, VRING_DESC_F_WRITE, 0);
	vdrv_desc(&r.d, 2, VDRV_DATA + 8, 8, VRING_DESC_F_WRITE, 0);
	vdrv_avail(&r.d, 1);
	vdrv_avail(&r.d, 2);
	r.e.block = true;
	pthread_create(&p, NULL, processor, &r);
	pthread_mutex_lock(&r.e.m);
	while (!r.e.inside)
		pthread_cond_wait(&r.e.c, &r.e.m);
	pthread_mutex_unlock(&r.e.m);
	pthread_create(&t, NULL, resetter, &r);
	/*
	 * Give the resetter a thousand chances to finish while the request
	 * is in the handler (a transport that did not wait would), then let
	 * the request complete.
	 */
	for (int i = 0; i < 1000; i++)
		sched_yield();
	pthread_mutex_lock(&r.e.m);
	CHECK(r.e.inside);
	r.e.release = true;
	pthread_cond_broadcast(&r.e.c);
	pthread_mutex_unlock(&r.e.m);
	pthread_join(t, NULL);
	pthread_join(p, NULL);
	/* vdrv_init's reset was the first; every request ended before #2. */
	CHECK_EQ(atomic_load(&r.v.st.resets), 2);
	CHECK_EQ(r.e.resets_seen, 1ULL << 1);
	CHECK(r.e.served >= 1);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_STATUS), 0);
	while (vdrv_used(&r.d, &id, &len))
		used++;
	CHECK_EQ(used, r.e.served);
	/* A second request taken before the reset may have interrupted. */
	CHECK(raised <= r.e.served - 1);
	rig_fini(&r);
}

/* A guest scribbling over its rings while the device reads them. */
struct scribble {
	uint8_t *ram;
	_Atomic bool stop;
};

static void *scribbler(void *arg)
{
	struct scribble *s = arg;
	unsigned int x = 12345;

	while (!atomic_load(&s->stop)) {
		x = x * 1103515245 + 12345;
		__atomic_store_n((uint16_t *)(s->ram + VDRV_DESC +
					      ((x >> 8) % (8 * 16 / 2)) * 2),
				 (uint16_t)(x >> 16), __ATOMIC_RELAXED);
		__atomic_store_n((uint16_t *)(s->ram + VDRV_AVAIL + 2 +
					      ((x >> 4) % 9) * 2),
				 (uint16_t)(x >> 12), __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_rewritten_rings(void)
{
	struct rig r;
	struct scribble s = { 0 };
	pthread_t t;

	rig_init(&r);
	CHECK_EQ(vdrv_init(&r.d, 8), 0);
	s.ram = r.d.ram;
	r.d.keep_rings = true; /* the scribbler owns them now */
	pthread_create(&t, NULL, scribbler, &s);
	for (int i = 0; i < 20000; i++) {
		virtio_mmio_process(&r.v, 0);
		if (r.v.q[0].broken)
			CHECK_EQ(vdrv_init(&r.d, 8), 0);
	}
	atomic_store(&s.stop, true);
	pthread_join(t, NULL);
	/* Whatever it did, every used entry names a head below 8. */
	for (unsigned int i = 0; i < 8; i++) {
		uint32_t id;

		memcpy(&id, r.d.ram + VDRV_USED + 4 + 8 * i, 4);
		CHECK(id < 8);
	}
	rig_fini(&r);
}

CHECK_MAIN(TEST(test_identity), TEST(test_features), TEST(test_queue_setup),
	   TEST(test_round_trip), TEST(test_posted_ack), TEST(test_index_wrap),
	   TEST(test_bad_chains), TEST(test_broken_ring), TEST(test_reset),
	   TEST(test_reset_in_flight), TEST(test_rewritten_rings),
	   TEST(test_indirect), TEST(test_bad_indirect),
	   TEST(test_indirect_not_negotiated))
