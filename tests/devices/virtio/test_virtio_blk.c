// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-blk (vmm/devices/virtio_blk.c) through the MMIO transport, on a
 * temporary image: reads and writes land where the sector says, every bad
 * request gets its error status and the device goes on, GET_ID, FLUSH,
 * discard and write-zeroes, the configuration space; and the image's
 * checks and OFD lock at open.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_ring.h>

#include "check.h"
#include "vdrv.h"
#include "virtio_blk.h"

#define SECTORS 64

struct brig {
	struct vblk b;
	struct virtio_mmio v;
	struct vdrv d;
	char path[64];
};

static void make_image(char *path, size_t n, uint64_t bytes)
{
	int fd;

	snprintf(path, n, "/tmp/hotvm-vblk-XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, (off_t)bytes), 0);
	close(fd);
}

static void brig_init(struct brig *r, bool readonly)
{
	struct vblk_config c = { .readonly = readonly, .id = "serial-1" };
	struct hv_err err = { 0 };

	memset(r, 0, sizeof(*r));
	make_image(r->path, sizeof(r->path), SECTORS * 512);
	c.path = r->path;
	CHECK_EQ(vblk_open(&r->b, &c, 0, &err), 0);
	vdrv_ram(&r->d);
	CHECK_EQ(virtio_mmio_init(&r->v, &r->b.ops, &r->b, &r->d.mem), 0);
	r->d.v = &r->v;
	CHECK_EQ(vdrv_init(&r->d, 16), 0);
}

static void brig_fini(struct brig *r)
{
	virtio_mmio_destroy(&r->v);
	vblk_close(&r->b);
	unlink(r->path);
	free(r->d.ram);
}

#define HDR    0x20000u
#define BUF    0x30000u
#define STATUS 0x2f000u

/*
 * One request: header, then @len bytes at BUF (written by the device for
 * IN-like types), then the status byte.  Returns the status; *used the
 * used length.
 */
static int request(struct brig *r, uint32_t type, uint64_t sector, uint32_t len,
		   bool dev_writes, uint32_t *used)
{
	uint8_t *h = r->d.ram + HDR;
	uint32_t id = 0;
	uint16_t head = 0;

	memset(h, 0, 16);
	memcpy(h, &type, 4);
	memcpy(h + 8, &sector, 8);
	r->d.ram[STATUS] = 0xee;
	if (len) {
		vdrv_desc(&r->d, 0, HDR, 16, VRING_DESC_F_NEXT, 1);
		vdrv_desc(&r->d, 1, BUF, len,
			  VRING_DESC_F_NEXT |
				  (dev_writes ? VRING_DESC_F_WRITE : 0),
			  2);
	} else {
		vdrv_desc(&r->d, 0, HDR, 16, VRING_DESC_F_NEXT, 2);
	}
	vdrv_desc(&r->d, 2, STATUS, 1, VRING_DESC_F_WRITE, 0);
	vdrv_avail(&r->d, head);
	CHECK_EQ(virtio_mmio_process(&r->v, 0), 1);
	CHECK_EQ(vdrv_used(&r->d, &id, used), 1);
	CHECK_EQ(id, head);
	return r->d.ram[STATUS];
}

static void test_read_write(void)
{
	struct brig r;
	uint32_t used = 0;
	uint8_t disk[1024];
	int fd;

	brig_init(&r, false);
	memset(r.d.ram + BUF, 0x5a, 1024);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_OUT, 3, 1024, false, &used),
		 VIRTIO_BLK_S_OK);
	CHECK_EQ(used, 1);
	fd = open(r.path, O_RDONLY);
	CHECK_EQ(pread(fd, disk, sizeof(disk), 3 * 512), (ssize_t)sizeof(disk));
	CHECK_EQ(disk[0], 0x5a);
	CHECK_EQ(disk[1023], 0x5a);
	CHECK_EQ(pread(fd, disk, 1, 3 * 512 - 1), 1);
	CHECK_EQ(disk[0], 0);
	close(fd);
	memset(r.d.ram + BUF, 0, 2048);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_IN, 2, 2048, true, &used),
		 VIRTIO_BLK_S_OK);
	CHECK_EQ(used, 2049);
	CHECK_EQ(r.d.ram[BUF + 511], 0);
	CHECK_EQ(r.d.ram[BUF + 512], 0x5a);
	CHECK_EQ(r.d.ram[BUF + 1535], 0x5a);
	CHECK_EQ(r.d.ram[BUF + 1536], 0);
	CHECK_EQ(r.b.st.requests, 2);
	/* The last sector is in range, one more is not. */
	CHECK_EQ(request(&r, VIRTIO_BLK_T_IN, SECTORS - 1, 512, true, &used),
		 VIRTIO_BLK_S_OK);
	brig_fini(&r);
}

static void test_bad_requests(void)
{
	struct brig r;
	uint32_t used = 0, id = 0;

	brig_init(&r, false);
	/* Past the end, straddling it, a sector near 2^64, odd length. */
	CHECK_EQ(request(&r, VIRTIO_BLK_T_IN, SECTORS, 512, true, &used),
		 VIRTIO_BLK_S_IOERR);
	CHECK_EQ(used, 1);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_OUT, SECTORS - 1, 1024, false, &used),
		 VIRTIO_BLK_S_IOERR);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_IN, ~0ULL >> 9, 512, true, &used),
		 VIRTIO_BLK_S_IOERR);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_IN, 0, 100, true, &used),
		 VIRTIO_BLK_S_IOERR);
	/* An unknown type; SCSI passthrough. */
	CHECK_EQ(request(&r, 77, 0, 0, false, &used), VIRTIO_BLK_S_UNSUPP);
	CHECK_EQ(request(&r, 2, 0, 0, false, &used), VIRTIO_BLK_S_UNSUPP);
	/* A header cut short: 8 bytes, then the status. */
	vdrv_desc(&r.d, 0, HDR, 8, VRING_DESC_F_NEXT, 2);
	vdrv_desc(&r.d, 2, STATUS, 1, VRING_DESC_F_WRITE, 0);
	vdrv_avail(&r.d, 0);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	CHECK_EQ(vdrv_used(&r.d, &id, &used), 1);
	CHECK_EQ(r.d.ram[STATUS], VIRTIO_BLK_S_IOERR);
	/* No writable byte at all: nothing done, nothing written. */
	vdrv_desc(&r.d, 0, HDR, 16, 0, 0);
	vdrv_avail(&r.d, 0);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	CHECK_EQ(vdrv_used(&r.d, &id, &used), 1);
	CHECK_EQ(used, 0);
	CHECK_EQ(r.b.st.no_status, 1);
	/* And it goes on. */
	CHECK_EQ(request(&r, VIRTIO_BLK_T_IN, 0, 512, true, &used),
		 VIRTIO_BLK_S_OK);
	CHECK_EQ(r.b.st.ioerr, 5);
	CHECK_EQ(r.b.st.unsupp, 2);
	brig_fini(&r);
}

static void test_readonly(void)
{
	struct brig r;
	uint32_t used = 0, lo;

	brig_init(&r, true);
	vdrv_wr(&r.d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	lo = vdrv_rd(&r.d, VIRTIO_MMIO_DEVICE_FEATURES);
	CHECK(lo & (1u << VIRTIO_BLK_F_RO));
	CHECK(!(lo & (1u << VIRTIO_BLK_F_DISCARD)));
	memset(r.d.ram + BUF, 0x77, 512);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_OUT, 0, 512, false, &used),
		 VIRTIO_BLK_S_IOERR);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_IN, 0, 512, true, &used),
		 VIRTIO_BLK_S_OK);
	CHECK_EQ(r.d.ram[BUF], 0);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_WRITE_ZEROES, 0, 16, false, &used),
		 VIRTIO_BLK_S_UNSUPP);
	brig_fini(&r);
}

static void test_get_id_flush_config(void)
{
	struct brig r;
	uint32_t used = 0;
	uint64_t cap = 0;

	brig_init(&r, false);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_GET_ID, 0, 20, true, &used),
		 VIRTIO_BLK_S_OK);
	CHECK_EQ(used, 21); /* 20 bytes, zero-padded, and the status */
	CHECK_EQ(r.d.ram[BUF + 8], 0);
	CHECK(!memcmp(r.d.ram + BUF, "serial-1", 8));
	CHECK_EQ(request(&r, VIRTIO_BLK_T_FLUSH, 0, 0, false, &used),
		 VIRTIO_BLK_S_OK);
	CHECK_EQ(used, 1);
	/* capacity: sectors, at offset 0 of the configuration space. */
	CHECK_EQ(virtio_mmio_access(&r.v, VIRTIO_MMIO_CONFIG, &cap, 8, false),
		 0);
	CHECK_EQ(cap, SECTORS);
	cap = 0;
	virtio_mmio_access(&r.v,
			   VIRTIO_MMIO_CONFIG +
				   offsetof(struct virtio_blk_config, blk_size),
			   &cap, 4, false);
	CHECK_EQ(cap, 512);
	CHECK_EQ(vdrv_rd(&r.d, VIRTIO_MMIO_DEVICE_ID), 2);
	brig_fini(&r);
}

static void test_zeroes(void)
{
	struct brig r;
	uint32_t used = 0;
	uint8_t *seg;
	uint64_t sector = 4;
	uint32_t n = 2, flags = 0;
	uint8_t byte;
	int fd;

	brig_init(&r, false);
	memset(r.d.ram + BUF, 0x11, 8 * 512);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_OUT, 0, 8 * 512, false, &used),
		 VIRTIO_BLK_S_OK);
	seg = r.d.ram + BUF;
	memcpy(seg, &sector, 8);
	memcpy(seg + 8, &n, 4);
	memcpy(seg + 12, &flags, 4);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_WRITE_ZEROES, 0, 16, false, &used),
		 VIRTIO_BLK_S_OK);
	fd = open(r.path, O_RDONLY);
	CHECK_EQ(pread(fd, &byte, 1, 4 * 512), 1);
	CHECK_EQ(byte, 0);
	CHECK_EQ(pread(fd, &byte, 1, 6 * 512 - 1), 1);
	CHECK_EQ(byte, 0);
	CHECK_EQ(pread(fd, &byte, 1, 6 * 512), 1);
	CHECK_EQ(byte, 0x11);
	/* Discard: with unmap set, refused; past the end, an error. */
	sector = 1;
	flags = VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP;
	memcpy(seg, &sector, 8);
	memcpy(seg + 12, &flags, 4);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_DISCARD, 0, 16, false, &used),
		 VIRTIO_BLK_S_UNSUPP);
	flags = 0;
	sector = SECTORS - 1;
	memcpy(seg, &sector, 8);
	memcpy(seg + 12, &flags, 4);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_DISCARD, 0, 16, false, &used),
		 VIRTIO_BLK_S_IOERR);
	sector = 1;
	memcpy(seg, &sector, 8);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_DISCARD, 0, 16, false, &used),
		 VIRTIO_BLK_S_OK);
	CHECK_EQ(pread(fd, &byte, 1, 512), 1);
	CHECK_EQ(byte, 0); /* a file's discard punches: reads zero */
	/* Two segments: more than max_discard_seg. */
	CHECK_EQ(request(&r, VIRTIO_BLK_T_DISCARD, 0, 32, false, &used),
		 VIRTIO_BLK_S_IOERR);
	close(fd);
	brig_fini(&r);
}

static int open_err(const char *path, bool ro, char *why, size_t n)
{
	struct vblk b = { .fd = -1 };
	struct vblk_config c = { .path = path, .readonly = ro };
	struct hv_err err = { 0 };
	int ret = vblk_open(&b, &c, 0, &err);

	snprintf(why, n, "%s", hv_err_msg(&err));
	if (!ret)
		vblk_close(&b);
	return ret;
}

#define TABLE 0x40000u
#define SEGS  (VBLK_QUEUE_SIZE - 2) /* seg_max */

static void table_desc(struct brig *r, uint16_t i, uint64_t addr, uint32_t len,
		       uint16_t flags, uint16_t next)
{
	uint8_t *p = r->d.ram + TABLE + 16u * i;

	memcpy(p, &addr, 8);
	memcpy(p + 8, &len, 4);
	memcpy(p + 12, &flags, 2);
	memcpy(p + 14, &next, 2);
}

/*
 * A write of seg_max segments in one indirect table (what Linux sends for
 * a large request once INDIRECT_DESC is taken), then one more segment
 * than the queue can chain: a bad chain, returned unread.
 */
static void test_indirect_segments(void)
{
	struct brig r;
	uint32_t id = ~0u, used = ~0u, type = VIRTIO_BLK_T_OUT, off = 0;
	uint64_t sector = 0;

	brig_init(&r, false);
	CHECK_EQ(vdrv_init(&r.d, VBLK_QUEUE_SIZE), 0);
	CHECK(r.v.q[0].indirect);
	memset(r.d.ram + HDR, 0, 16);
	memcpy(r.d.ram + HDR, &type, 4);
	memcpy(r.d.ram + HDR + 8, &sector, 8);
	table_desc(&r, 0, HDR, 16, VRING_DESC_F_NEXT, 1);
	/* 252 segments of 64 bytes and 2 of 128: 32 sectors. */
	for (uint16_t i = 0; i < SEGS; i++) {
		uint32_t len = i < SEGS - 2 ? 64 : 128;

		memset(r.d.ram + BUF + off, (uint8_t)i, len);
		table_desc(&r, (uint16_t)(1 + i), BUF + off, len,
			   VRING_DESC_F_NEXT, (uint16_t)(2 + i));
		off += len;
	}
	CHECK_EQ(off, 32 * 512);
	table_desc(&r, SEGS + 1, STATUS, 1, VRING_DESC_F_WRITE, 0);
	r.d.ram[STATUS] = 0xee;
	vdrv_desc(&r.d, 7, TABLE, (SEGS + 2) * 16, VRING_DESC_F_INDIRECT, 0);
	vdrv_avail(&r.d, 7);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	CHECK_EQ(vdrv_used(&r.d, &id, &used), 1);
	CHECK_EQ(id, 7);
	CHECK_EQ(used, 1);
	CHECK_EQ(r.d.ram[STATUS], VIRTIO_BLK_S_OK);
	/* Read back directly: segment i's bytes are i. */
	memset(r.d.ram + BUF, 0, off);
	CHECK_EQ(request(&r, VIRTIO_BLK_T_IN, 0, off, true, &used),
		 VIRTIO_BLK_S_OK);
	CHECK_EQ(used, off + 1);
	CHECK_EQ(r.d.ram[BUF], 0);
	CHECK_EQ(r.d.ram[BUF + 64 * 100], 100);
	CHECK_EQ(r.d.ram[BUF + off - 1], SEGS - 1);
	/* One buffer more than the queue's 256. */
	table_desc(&r, SEGS + 1, BUF, 64, VRING_DESC_F_NEXT, SEGS + 2);
	table_desc(&r, SEGS + 2, STATUS, 1, VRING_DESC_F_WRITE, 0);
	vdrv_desc(&r.d, 7, TABLE, (SEGS + 3) * 16, VRING_DESC_F_INDIRECT, 0);
	vdrv_avail(&r.d, 7);
	CHECK_EQ(virtio_mmio_process(&r.v, 0), 1);
	CHECK_EQ(vdrv_used(&r.d, &id, &used), 1);
	CHECK_EQ(used, 0);
	CHECK_EQ(r.v.q[0].st.bad_chain, 1);
	brig_fini(&r);
}

static void test_open_checks(void)
{
	char dir[] = "/tmp/hotvm-vblk-dir-XXXXXX", p[512], why[512];
	struct vblk a = { .fd = -1 }, b2 = { .fd = -1 };
	struct vblk_config c = { 0 };

	CHECK(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "%s/missing", dir);
	CHECK(open_err(p, false, why, sizeof(why)) < 0);
	CHECK(strstr(why, "no such file") != NULL);
	CHECK(open_err(dir, false, why, sizeof(why)) < 0);
	CHECK(strstr(why, "directory") != NULL);
	snprintf(p, sizeof(p), "%s/fifo", dir);
	CHECK_EQ(mkfifo(p, 0600), 0);
	CHECK(open_err(p, true, why, sizeof(why)) < 0); /* no hang */
	CHECK(strstr(why, "FIFO") != NULL);
	unlink(p);
	snprintf(p, sizeof(p), "%s/img", dir);
	CHECK_EQ(close(open(p, O_CREAT | O_WRONLY, 0600)), 0);
	CHECK(open_err(p, false, why, sizeof(why)) < 0);
	CHECK(strstr(why, "empty") != NULL);
	CHECK_EQ(truncate(p, 1000), 0);
	CHECK(open_err(p, false, why, sizeof(why)) < 0);
	CHECK(strstr(why, "multiple of 512") != NULL);
	CHECK_EQ(truncate(p, 4096), 0);
	/* One writer locks out every other user of the image. */
	c.path = p;
	CHECK_EQ(vblk_open(&a, &c, 0, NULL), 0);
	CHECK(open_err(p, false, why, sizeof(why)) < 0);
	CHECK(strstr(why, "locked") != NULL);
	CHECK(open_err(p, true, why, sizeof(why)) < 0);
	vblk_close(&a);
	/* Readers share; a writer is then refused. */
	c.readonly = true;
	CHECK_EQ(vblk_open(&a, &c, 0, NULL), 0);
	CHECK_EQ(vblk_open(&b2, &c, 1, NULL), 0);
	CHECK(open_err(p, false, why, sizeof(why)) < 0);
	CHECK(!memcmp(b2.serial, "hotvm-disk1", 11));
	vblk_close(&a);
	vblk_close(&b2);
	CHECK_EQ(open_err(p, false, why, sizeof(why)), 0);
	/* Not writable and no readonly=on (as root, mode bits do not stop
	 * it: only checked for another user). */
	if (geteuid()) {
		CHECK_EQ(chmod(p, 0400), 0);
		CHECK(open_err(p, false, why, sizeof(why)) < 0);
		CHECK(strstr(why, "readonly=on") != NULL);
		CHECK_EQ(open_err(p, true, why, sizeof(why)), 0);
	}
	unlink(p);
	rmdir(dir);
}

CHECK_MAIN(TEST(test_read_write), TEST(test_bad_requests), TEST(test_readonly),
	   TEST(test_get_id_flush_config), TEST(test_zeroes),
	   TEST(test_indirect_segments), TEST(test_open_checks))
