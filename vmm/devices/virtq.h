/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A virtio 1.x split virtqueue read from guest memory that the guest may
 * rewrite at any moment (docs/design.md §6.9).  Every field the guest
 * wrote is loaded once, then checked: the avail index against the queue
 * size, each head and next index against the queue size, each buffer
 * against guest RAM, the direction order (readable before writable), the
 * chain's length against the queue size (so a loop ends), and indirect
 * tables only where the driver negotiated them (one level, inside RAM,
 * whole descriptors, no longer than the queue).  A chain that fails a check is returned to
 * the guest with nothing written; a ring that cannot be trusted any more
 * (an avail index more than the queue size ahead) breaks the queue until
 * the device is reset.  The queue's rings are found once, when the driver
 * makes it ready, and must then lie in RAM.
 */
#ifndef HOTVM_VIRTQ_H
#define HOTVM_VIRTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vm.h"

/* The largest queue a device offers, and so the longest chain. */
#define VIRTQ_MAX_SIZE 256

/* Guest RAM as the host maps it: the VM's regions. */
struct gmem {
	const struct vm_region *r;
	unsigned int nr;
};

/* The host address of [gpa, gpa + len) if it lies in one region; else NULL. */
void *gmem_ptr(const struct gmem *m, uint64_t gpa, uint64_t len);

struct virtq_buf {
	uint8_t *p;   /* host address of the guest's buffer */
	uint32_t len; /* bytes */
	bool w;	      /* the device writes it */
};

/* One request: its head (for the used ring) and its buffers, in order. */
struct virtq_chain {
	uint16_t head;
	uint16_t n;	 /* buffers */
	uint16_t nr_out; /* the readable ones, all before the writable */
	uint64_t out_len, in_len;
	struct virtq_buf b[VIRTQ_MAX_SIZE];
};

/* What virtq_pop() found wrong, counted per queue. */
struct virtq_stats {
	uint64_t chains;     /* good chains popped */
	uint64_t bad_chain;  /* returned unread: a bad descriptor or chain */
	uint64_t bad_ring;   /* the avail index or a head out of range */
	uint64_t interrupts; /* used-buffer notifications wanted */
};

struct virtq {
	/* Set by the driver through the transport while not ready. */
	uint16_t num;
	uint64_t desc, avail, used;
	bool ready;
	bool indirect; /* VIRTIO_RING_F_INDIRECT_DESC negotiated */
	/* Found by virtq_enable(): the rings' host addresses. */
	uint8_t *desc_p, *avail_p, *used_p;
	uint16_t last_avail; /* next avail entry to take */
	uint16_t used_idx;   /* the host's own copy, never read back */
	bool broken;	     /* the guest broke the ring: until reset */
	struct virtq_stats st;
};

/* Back to the state after a device reset (size @num, the maximum). */
void virtq_reset(struct virtq *q, uint16_t num);

/*
 * Checks the driver's size and ring addresses (size a power of two up to
 * @max, rings aligned as the split queue's layout needs and inside RAM)
 * and makes the queue ready.  0 or -EINVAL (the queue stays not ready).
 */
int virtq_enable(struct virtq *q, const struct gmem *m, uint16_t max);

/*
 * Takes the next chain: 1 and *c filled; 0 when the driver has made none
 * available; -EINVAL for a bad chain, its head in c->head, which the
 * caller returns with virtq_push(q, c->head, 0); -EIO when the ring itself
 * is broken (and stays so until virtq_reset()).
 */
int virtq_pop(struct virtq *q, const struct gmem *m, struct virtq_chain *c);

/*
 * Gives back the last @n chains virtq_pop() took (good ones, none pushed
 * since): the next pops take them again, read afresh.
 */
void virtq_unpop(struct virtq *q, uint16_t n);

/* Returns chain @head to the driver, @written bytes written into it. */
void virtq_push(struct virtq *q, uint16_t head, uint32_t written);

/*
 * Tells the driver it need not notify (VRING_USED_F_NO_NOTIFY, @quiet) or
 * that it must again; with notifies back on, returns whether the driver
 * made chains available meanwhile (the index read after the flag's
 * store, so a notify skipped just before is never lost).
 */
bool virtq_quiet(struct virtq *q, bool quiet);

/* After pushes: whether the driver wants an interrupt (no NO_INTERRUPT). */
bool virtq_want_interrupt(struct virtq *q);

/*
 * Copies up to @len bytes from the chain's readable buffers, starting
 * @off bytes into them, to @dst; returns the bytes copied.
 */
size_t virtq_chain_read(const struct virtq_chain *c, uint64_t off, void *dst,
			size_t len);

/*
 * Copies @len bytes from @src into the chain's writable buffers, starting
 * @off bytes into them; returns the bytes copied (fewer if they end).
 */
size_t virtq_chain_write(const struct virtq_chain *c, uint64_t off,
			 const void *src, size_t len);

#endif
