// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes the virtio-MMIO transport and the split virtqueue
 * (vmm/devices/virtio_mmio.c, virtq.c) as a hostile guest drives them:
 * any register write, any bytes anywhere in the rings and buffers, the
 * queue served in between, resets.  With FUZZ_VBLK (fuzz_vblk.c) the
 * device is virtio-blk on a 32 KiB image in a memfd, so the request parser
 * gets whatever chains the guest makes; otherwise an echo device that
 * checks every chain it is handed.  Both offer indirect descriptors, which
 * the harness's driver takes (its initialisation accepts every feature).
 *
 * Guest RAM is one malloc of exactly its size at guest address 0x1000, so
 * ASan catches any access outside it.  The oracle, from the spec: every
 * chain handed to the device lies in RAM, has at most the queue's size of
 * buffers, readable before writable, and lengths that add up; every used
 * entry the device writes names a head below the queue's size and says
 * no more bytes than the chain could take; a blk status is 0, 1 or 2;
 * the image never changes size.
 *
 * Input: byte 0 the queue size's log2 (0..8, taken mod 9), then
 * operations, one opcode byte each (mod 6):
 *   0 OFF VAL32   register write at OFF * 4 (0 .. 0x3fc)
 *   1 OFF         register read at OFF * 4
 *   2 AT16 N DATA guest writes N bytes at AT16 into RAM
 *   3             serve queue 0
 *   4             the driver's initialisation again (a reset first)
 *   5 HEAD        make HEAD available
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "vdrv.h"
#ifdef FUZZ_VBLK
#include "virtio_blk.h"
#endif

#define RAM_GPA	 0x1000u
#define RAM_SIZE 0x14000u /* rings at 0x1000-0x5000, data to 0x15000 */
#define IMG_SIZE (64 * 512)

static unsigned int qnum;
static uint64_t served;
/*
 * The used ring's bytes while the queue is served, and whether a buffer
 * the device writes lies on them: the guest may point one there, and the
 * device's writes to it may then overwrite entries it pushed before (the
 * guest's own doing, as on real hardware), so their ids are not checked.
 */
static const uint8_t *used_lo, *used_hi;
static bool used_hit;

static void check_chain(const struct virtq_chain *c)
{
	uint64_t out = 0, in = 0;

	FUZZ_ASSERT(c->n <= qnum && c->nr_out <= c->n);
	for (unsigned int i = 0; i < c->n; i++) {
		const struct virtq_buf *b = &c->b[i];

		FUZZ_ASSERT(b->w == (i >= c->nr_out));
		if (b->len) {
			/* Touch both ends: ASan says if it is not RAM. */
			volatile uint8_t x = b->p[0];

			x = b->p[b->len - 1];
			(void)x;
		}
		if (b->w) {
			in += b->len;
			used_hit |= b->p < used_hi && b->p + b->len > used_lo;
		} else {
			out += b->len;
		}
	}
	FUZZ_ASSERT(out == c->out_len && in == c->in_len);
}

#ifndef FUZZ_VBLK
static void echo_config(void *ctx, uint32_t off, void *buf, uint32_t len)
{
	(void)ctx;
	(void)off;
	memset(buf, 0x5c, len);
}

static uint32_t echo_handle(void *ctx, unsigned int q, struct virtq_chain *c)
{
	(void)ctx;
	FUZZ_ASSERT(q == 0);
	check_chain(c);
	served++;
	for (unsigned int i = c->nr_out; i < c->n; i++)
		memset(c->b[i].p, 0xab, c->b[i].len);
	return (uint32_t)c->in_len;
}

static const struct virtio_dev_ops echo_ops = {
	.name = "echo",
	.device_id = 0x42,
	.features = 1 | (1ULL << VIRTIO_RING_F_INDIRECT_DESC),
	.nr_queues = 1,
	.queue_max = VIRTQ_MAX_SIZE,
	.config_size = 16,
	.config_read = echo_config,
	.handle = echo_handle,
};
#else
static struct vblk blk;

/* Checks the chain, then the real parser. */
static uint32_t blk_handle(void *ctx, unsigned int q, struct virtq_chain *c)
{
	uint32_t n;

	(void)q;
	check_chain(c);
	served++;
	n = vblk_request(ctx, c);
	FUZZ_ASSERT(n <= c->in_len);
	if (c->in_len) {
		/* The status: the last writable byte. */
		uint64_t left = c->in_len - 1;

		for (unsigned int i = c->nr_out; i < c->n; i++) {
			if (left < c->b[i].len) {
				FUZZ_ASSERT(c->b[i].p[left] <= 2);
				break;
			}
			left -= c->b[i].len;
		}
	}
	return n;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { .p = data, .n = size };
	static struct virtio_mmio v;
	struct vdrv d = { 0 };
	unsigned int ops = 0;
#ifdef FUZZ_VBLK
	struct virtio_dev_ops ops_blk;
	struct stat st;
	int fd = memfd_create("fuzz-vblk", MFD_CLOEXEC);

	FUZZ_ASSERT(fd >= 0 && !ftruncate(fd, IMG_SIZE));
	vblk_init_fd(&blk, fd, IMG_SIZE, false, "fuzz");
	ops_blk = blk.ops;
	ops_blk.handle = blk_handle;
#endif

	qnum = 1u << (fuzz_u8(&in) % 9);
	served = 0;
	uint8_t *buf = calloc(1, RAM_SIZE);

	d.ram = buf;
	/* vdrv.h's addresses are guest addresses from 0: shift by RAM_GPA. */
	d.region = (struct vm_region){ .gpa = RAM_GPA,
				       .size = RAM_SIZE,
				       .hva = d.ram };
	d.mem = (struct gmem){ .r = &d.region, .nr = 1 };
#ifdef FUZZ_VBLK
	FUZZ_ASSERT(!virtio_mmio_init(&v, &ops_blk, &blk, &d.mem));
#else
	FUZZ_ASSERT(!virtio_mmio_init(&v, &echo_ops, NULL, &d.mem));
#endif
	d.v = &v;
	/*
	 * vdrv.h lays the rings at 0x1000 (desc), 0x3000, 0x4000 and uses
	 * d.ram as guest address 0: point it RAM_GPA below the buffer, and
	 * keep every access of ours inside it.
	 */
	d.ram -= RAM_GPA;
	vdrv_init(&d, (uint16_t)qnum);
	while (fuzz_left(&in) && ops++ < 4096) {
		switch (fuzz_u8(&in) % 6) {
		case 0: {
			uint64_t off = (uint64_t)fuzz_u8(&in) * 4;
			uint64_t val = fuzz_uint(&in, 4);

			virtio_mmio_access(&v, off, &val, 4, true);
			break;
		}
		case 1: {
			uint64_t val = 0;

			virtio_mmio_access(&v, (uint64_t)fuzz_u8(&in) * 4, &val,
					   4, false);
			break;
		}
		case 2:
			fuzz_scribble(&in, d.ram, RAM_GPA, RAM_SIZE);
			break;
		case 3: {
			uint16_t before = v.q[0].used_idx;
			unsigned int n;

			used_lo = v.q[0].used_p;
			used_hi =
				used_lo ? used_lo + 6 + 8u * v.q[0].num : NULL;
			used_hit = false;
			n = virtio_mmio_process(&v, 0);
			FUZZ_ASSERT((uint16_t)(v.q[0].used_idx - before) == n ||
				    !v.q[0].ready);
			for (unsigned int i = 0;
			     v.q[0].ready && !used_hit && i < n; i++) {
				uint16_t k =
					(uint16_t)(before + i) % v.q[0].num;
				uint32_t id;

				memcpy(&id, v.q[0].used_p + 4 + 8u * k, 4);
				FUZZ_ASSERT(id < v.q[0].num);
			}
			break;
		}
		case 4:
			if (d.num)
				vdrv_init(&d, (uint16_t)qnum);
			break;
		case 5:
			if (d.num)
				vdrv_avail(&d, fuzz_u8(&in));
			break;
		}
	}
	virtio_mmio_destroy(&v);
	free(buf);
#ifdef FUZZ_VBLK
	FUZZ_ASSERT(!fstat(fd, &st) && st.st_size == IMG_SIZE);
	close(fd);
#endif
	return 0;
}
