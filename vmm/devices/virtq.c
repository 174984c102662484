// SPDX-License-Identifier: GPL-2.0-only
/*
 * The split virtqueue (virtq.h): the rings' layout is the virtio 1.x
 * spec's (linux/virtio_ring.h's flags), every guest field loaded once with
 * an atomic load and checked in its local copy.
 */
#include <errno.h>
#include <string.h>

#include <linux/virtio_ring.h>

#include "virtq.h"

/* The split ring's layout (virtio 1.x, 2.7). */
#define DESC_SIZE      16
#define DESC_ALIGN     16
#define AVAIL_ALIGN    2
#define USED_ALIGN     4
#define AVAIL_RING(i)  (4 + 2 * (uint64_t)(i))
#define USED_RING(i)   (4 + 8 * (uint64_t)(i))
#define AVAIL_BYTES(n) (AVAIL_RING(n) + 2) /* + used_event */
#define USED_BYTES(n)  (USED_RING(n) + 2)  /* + avail_event */
#define RING_FLAGS     0
#define RING_IDX       2

void *gmem_ptr(const struct gmem *m, uint64_t gpa, uint64_t len)
{
	for (unsigned int i = 0; i < m->nr; i++) {
		const struct vm_region *r = &m->r[i];

		if (gpa < r->gpa || gpa - r->gpa > r->size ||
		    len > r->size - (gpa - r->gpa))
			continue;
		return r->hva + (gpa - r->gpa);
	}
	return NULL;
}

static uint16_t ld16(const uint8_t *p)
{
	return __atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED);
}

static uint32_t ld32(const uint8_t *p)
{
	return __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
}

static uint64_t ld64(const uint8_t *p)
{
	return __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
}

void virtq_reset(struct virtq *q, uint16_t num)
{
	*q = (struct virtq){ .num = num };
}

int virtq_enable(struct virtq *q, const struct gmem *m, uint16_t max)
{
	uint16_t n = q->num;

	if (!n || n > max || n > VIRTQ_MAX_SIZE || (n & (n - 1)))
		return -EINVAL;
	if (q->desc % DESC_ALIGN || q->avail % AVAIL_ALIGN ||
	    q->used % USED_ALIGN)
		return -EINVAL;
	q->desc_p = gmem_ptr(m, q->desc, (uint64_t)n * DESC_SIZE);
	q->avail_p = gmem_ptr(m, q->avail, AVAIL_BYTES(n));
	q->used_p = gmem_ptr(m, q->used, USED_BYTES(n));
	if (!q->desc_p || !q->avail_p || !q->used_p) {
		q->desc_p = q->avail_p = q->used_p = NULL;
		return -EINVAL;
	}
	q->last_avail = 0;
	q->used_idx = 0;
	q->broken = false;
	q->ready = true;
	return 0;
}

/* Reads descriptor @i of the table at @t into a local copy, each field once. */
static void read_desc(const uint8_t *t, uint16_t i, uint64_t *addr,
		      uint32_t *len, uint16_t *flags, uint16_t *next)
{
	const uint8_t *d = t + (uint64_t)i * DESC_SIZE;

	*addr = ld64(d);
	*len = ld32(d + 8);
	*flags = ld16(d + 12);
	*next = ld16(d + 14);
}

/*
 * Walks the chain at @head into @c: 0, or -EINVAL for a bad one.  The
 * walk starts in the queue's table; a descriptor with INDIRECT (only when
 * negotiated, never with NEXT, never inside an indirect table) moves it to
 * the table that descriptor names, whose entries' next indices are below
 * its own entry count.  The chain as a whole, direct and indirect buffers
 * together, has at most the queue's size of buffers (so a loop ends).
 */
static int walk_chain(const struct virtq *q, const struct gmem *m,
		      uint16_t head, struct virtq_chain *c)
{
	const uint8_t *t = q->desc_p;
	uint32_t tn = q->num; /* entries in table t */
	bool in_table = false;
	uint16_t i = head;

	*c = (struct virtq_chain){ .head = head };
	for (;;) {
		uint64_t addr;
		uint32_t len;
		uint16_t flags, next;
		struct virtq_buf *b;

		/* A chain longer than the queue loops. */
		if (c->n >= q->num)
			return -EINVAL;
		read_desc(t, i, &addr, &len, &flags, &next);
		if (flags & VRING_DESC_F_INDIRECT) {
			if (!q->indirect || in_table ||
			    (flags & VRING_DESC_F_NEXT) || !len ||
			    len % DESC_SIZE || len / DESC_SIZE > q->num)
				return -EINVAL;
			t = gmem_ptr(m, addr, len);
			if (!t)
				return -EINVAL;
			tn = len / DESC_SIZE;
			in_table = true;
			i = 0;
			continue;
		}
		b = &c->b[c->n];
		b->w = flags & VRING_DESC_F_WRITE;
		b->len = len;
		b->p = gmem_ptr(m, addr, len);
		if (!b->p)
			return -EINVAL;
		if (b->w) {
			c->in_len += len;
		} else {
			/* Readable after writable: the spec forbids it. */
			if (c->in_len || c->nr_out != c->n)
				return -EINVAL;
			c->out_len += len;
			c->nr_out++;
		}
		c->n++;
		if (!(flags & VRING_DESC_F_NEXT))
			return 0;
		if (next >= tn)
			return -EINVAL;
		i = next;
	}
}

int virtq_pop(struct virtq *q, const struct gmem *m, struct virtq_chain *c)
{
	uint16_t avail, head;
	int ret;

	if (!q->ready || q->broken)
		return q->broken ? -EIO : 0;
	/* The ring's entries are read only after the index that shows them. */
	avail = __atomic_load_n((const uint16_t *)(q->avail_p + RING_IDX),
				__ATOMIC_ACQUIRE);
	if (avail == q->last_avail)
		return 0;
	if ((uint16_t)(avail - q->last_avail) > q->num) {
		q->broken = true;
		q->st.bad_ring++;
		return -EIO;
	}
	head = ld16(q->avail_p + AVAIL_RING(q->last_avail % q->num));
	if (head >= q->num) {
		q->broken = true;
		q->st.bad_ring++;
		return -EIO;
	}
	q->last_avail++;
	ret = walk_chain(q, m, head, c);
	if (ret) {
		c->head = head;
		c->n = c->nr_out = 0;
		c->out_len = c->in_len = 0;
		q->st.bad_chain++;
		return ret;
	}
	q->st.chains++;
	return 1;
}

void virtq_unpop(struct virtq *q, uint16_t n)
{
	q->last_avail -= n;
	q->st.chains -= n;
}

void virtq_push(struct virtq *q, uint16_t head, uint32_t written)
{
	uint8_t *e;

	if (!q->ready)
		return;
	e = q->used_p + USED_RING(q->used_idx % q->num);
	__atomic_store_n((uint32_t *)e, (uint32_t)head, __ATOMIC_RELAXED);
	__atomic_store_n((uint32_t *)(e + 4), written, __ATOMIC_RELAXED);
	q->used_idx++;
	/*
	 * The entry before the index that shows it (release), and the index
	 * before virtq_want_interrupt()'s look at the driver's flags: both
	 * seq_cst, which orders a store before a later load (a full barrier
	 * on x86) without a fence, which ThreadSanitizer cannot check.
	 */
	__atomic_store_n((uint16_t *)(q->used_p + RING_IDX), q->used_idx,
			 __ATOMIC_SEQ_CST);
}

bool virtq_quiet(struct virtq *q, bool quiet)
{
	if (!q->ready || q->broken)
		return false;
	__atomic_store_n((uint16_t *)(q->used_p + RING_FLAGS),
			 quiet ? VRING_USED_F_NO_NOTIFY : 0, __ATOMIC_SEQ_CST);
	if (quiet)
		return false;
	return __atomic_load_n((const uint16_t *)(q->avail_p + RING_IDX),
			       __ATOMIC_SEQ_CST) != q->last_avail;
}

bool virtq_want_interrupt(struct virtq *q)
{
	uint16_t flags;

	if (!q->ready)
		return false;
	/* After the used index is visible (virtq_push()). */
	flags = __atomic_load_n((const uint16_t *)(q->avail_p + RING_FLAGS),
				__ATOMIC_SEQ_CST);
	if (flags & VRING_AVAIL_F_NO_INTERRUPT)
		return false;
	q->st.interrupts++;
	return true;
}

/*
 * Copies [off, off + len) of buffers b[from, to) of the chain to @p, or
 * from it with @into_chain; returns how many bytes were copied.
 */
static size_t chain_copy(const struct virtq_chain *c, unsigned int from,
			 unsigned int to, uint64_t off, uint8_t *p, size_t len,
			 bool into_chain)
{
	size_t done = 0;

	for (unsigned int i = from; i < to && done < len; i++) {
		const struct virtq_buf *b = &c->b[i];
		size_t k;

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		k = b->len - off;
		if (k > len - done)
			k = len - done;
		if (into_chain)
			memcpy(b->p + off, p + done, k);
		else
			memcpy(p + done, b->p + off, k);
		done += k;
		off = 0;
	}
	return done;
}

size_t virtq_chain_read(const struct virtq_chain *c, uint64_t off, void *dst,
			size_t len)
{
	return chain_copy(c, 0, c->nr_out, off, dst, len, false);
}

size_t virtq_chain_write(const struct virtq_chain *c, uint64_t off,
			 const void *src, size_t len)
{
	/* Only read from: the direction is into the chain. */
	return chain_copy(c, c->nr_out, c->n, off, (uint8_t *)src, len, true);
}
