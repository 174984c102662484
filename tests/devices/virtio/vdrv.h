/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A virtio-MMIO driver for the host tests, written from the virtio 1.x
 * spec (4.2.3 initialisation, 2.7 split rings): it lays a queue out in a
 * fake guest RAM and drives the transport through its bus handler, as a
 * vCPU's MMIO exits would.
 */
#ifndef HOTVM_TESTS_VDRV_H
#define HOTVM_TESTS_VDRV_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "virtio_mmio.h"

#define VDRV_RAM   (1u << 20)
#define VDRV_DESC  0x1000u
#define VDRV_AVAIL 0x3000u
#define VDRV_USED  0x4000u
#define VDRV_DATA  0x10000u

struct vdrv {
	struct virtio_mmio *v;
	uint8_t *ram;
	struct vm_region region;
	struct gmem mem;
	uint16_t num;
	uint16_t avail_idx, used_seen;
	/* Leave the rings as they are at set-up (another thread writes). */
	bool keep_rings;
};

static inline void vdrv_ram(struct vdrv *d)
{
	d->ram = calloc(1, VDRV_RAM);
	d->region =
		(struct vm_region){ .gpa = 0, .size = VDRV_RAM, .hva = d->ram };
	d->mem = (struct gmem){ .r = &d->region, .nr = 1 };
}

static inline uint32_t vdrv_rd(struct vdrv *d, uint64_t off)
{
	uint64_t val = 0;

	virtio_mmio_access(d->v, off, &val, 4, false);
	return (uint32_t)val;
}

/* 0: the transport took the write; 1: it refused it. */
static inline int vdrv_wr(struct vdrv *d, uint64_t off, uint32_t val)
{
	uint64_t v = val;

	return virtio_mmio_access(d->v, off, &v, 4, true);
}

/* Queue 0 at the fixed addresses, size @num; 0 if the device took it. */
static inline int vdrv_queue(struct vdrv *d, uint16_t num)
{
	d->num = num;
	d->avail_idx = d->used_seen = 0;
	/* A driver's fresh rings are zeroed. */
	if (!d->keep_rings)
		memset(d->ram + VDRV_DESC, 0, VDRV_DATA - VDRV_DESC);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_SEL, 0);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_NUM, num);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_DESC_LOW, VDRV_DESC);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_AVAIL_LOW, VDRV_AVAIL);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 0);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_USED_LOW, VDRV_USED);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_USED_HIGH, 0);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_READY, 1);
	return vdrv_rd(d, VIRTIO_MMIO_QUEUE_READY) == 1 ? 0 : -1;
}

/* The spec's initialisation up to FEATURES_OK, taking every feature. */
static inline int vdrv_features(struct vdrv *d)
{
	uint32_t lo, hi;

	vdrv_wr(d, VIRTIO_MMIO_STATUS, 0);
	vdrv_wr(d, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	vdrv_wr(d, VIRTIO_MMIO_STATUS,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	vdrv_wr(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	lo = vdrv_rd(d, VIRTIO_MMIO_DEVICE_FEATURES);
	vdrv_wr(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	hi = vdrv_rd(d, VIRTIO_MMIO_DEVICE_FEATURES);
	vdrv_wr(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vdrv_wr(d, VIRTIO_MMIO_DRIVER_FEATURES, lo);
	vdrv_wr(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	vdrv_wr(d, VIRTIO_MMIO_DRIVER_FEATURES, hi);
	vdrv_wr(d, VIRTIO_MMIO_STATUS,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			VIRTIO_CONFIG_S_FEATURES_OK);
	return vdrv_rd(d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK
		       ? 0
		       : -1;
}

static inline void vdrv_driver_ok(struct vdrv *d)
{
	vdrv_wr(d, VIRTIO_MMIO_STATUS,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			VIRTIO_CONFIG_S_FEATURES_OK |
			VIRTIO_CONFIG_S_DRIVER_OK);
}

/* The spec's initialisation, accepting every offered feature. */
static inline int vdrv_init(struct vdrv *d, uint16_t num)
{
	if (vdrv_features(d) || vdrv_queue(d, num))
		return -1;
	vdrv_driver_ok(d);
	return 0;
}

static inline void vdrv_desc(struct vdrv *d, uint16_t i, uint64_t addr,
			     uint32_t len, uint16_t flags, uint16_t next)
{
	uint8_t *p = d->ram + VDRV_DESC + 16u * i;

	memcpy(p, &addr, 8);
	memcpy(p + 8, &len, 4);
	memcpy(p + 12, &flags, 2);
	memcpy(p + 14, &next, 2);
}

/* Makes the chain at @head available (ring entry, then the index). */
static inline void vdrv_avail(struct vdrv *d, uint16_t head)
{
	uint8_t *a = d->ram + VDRV_AVAIL;

	memcpy(a + 4 + 2u * (d->avail_idx % d->num), &head, 2);
	d->avail_idx++;
	__atomic_store_n((uint16_t *)(a + 2), d->avail_idx, __ATOMIC_RELEASE);
}

static inline void vdrv_avail_flags(struct vdrv *d, uint16_t flags)
{
	memcpy(d->ram + VDRV_AVAIL, &flags, 2);
}

/* The next used entry: 1 with its id and length, 0 if none. */
static inline int vdrv_used(struct vdrv *d, uint32_t *id, uint32_t *len)
{
	uint8_t *u = d->ram + VDRV_USED;
	uint16_t idx = __atomic_load_n((uint16_t *)(u + 2), __ATOMIC_ACQUIRE);
	uint8_t *e;

	if (idx == d->used_seen)
		return 0;
	e = u + 4 + 8u * (d->used_seen % d->num);
	memcpy(id, e, 4);
	memcpy(len, e + 4, 4);
	d->used_seen++;
	return 1;
}

/*
 * More than one queue (a console's four): queue @qi's rings at @base
 * (descriptors), @base + 0x1000 (avail), @base + 0x2000 (used), its
 * buffers wherever the caller puts them.
 */
struct vdrv_q {
	uint16_t qi, num, avail_idx, used_seen;
	uint32_t base;
};

static inline int vdrv_mq(struct vdrv *d, struct vdrv_q *q, uint16_t qi,
			  uint32_t base, uint16_t num)
{
	*q = (struct vdrv_q){ .qi = qi, .num = num, .base = base };
	memset(d->ram + base, 0, 0x3000);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_SEL, qi);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_NUM, num);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_DESC_LOW, base);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_AVAIL_LOW, base + 0x1000);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 0);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_USED_LOW, base + 0x2000);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_USED_HIGH, 0);
	vdrv_wr(d, VIRTIO_MMIO_QUEUE_READY, 1);
	return vdrv_rd(d, VIRTIO_MMIO_QUEUE_READY) == 1 ? 0 : -1;
}

/* One buffer, descriptor @i, made available at once. */
static inline void vdrv_mq_buf(struct vdrv *d, struct vdrv_q *q, uint16_t i,
			       uint64_t addr, uint32_t len, bool w)
{
	uint8_t *p = d->ram + q->base + 16u * i;
	uint16_t flags = w ? VRING_DESC_F_WRITE : 0, next = 0;
	uint8_t *a = d->ram + q->base + 0x1000;

	memcpy(p, &addr, 8);
	memcpy(p + 8, &len, 4);
	memcpy(p + 12, &flags, 2);
	memcpy(p + 14, &next, 2);
	memcpy(a + 4 + 2u * (q->avail_idx % q->num), &i, 2);
	q->avail_idx++;
	__atomic_store_n((uint16_t *)(a + 2), q->avail_idx, __ATOMIC_RELEASE);
}

static inline int vdrv_mq_used(struct vdrv *d, struct vdrv_q *q, uint32_t *id,
			       uint32_t *len)
{
	uint8_t *u = d->ram + q->base + 0x2000;
	uint16_t idx = __atomic_load_n((uint16_t *)(u + 2), __ATOMIC_ACQUIRE);
	uint8_t *e;

	if (idx == q->used_seen)
		return 0;
	e = u + 4 + 8u * (q->used_seen % q->num);
	memcpy(id, e, 4);
	memcpy(len, e + 4, 4);
	q->used_seen++;
	return 1;
}

#endif
