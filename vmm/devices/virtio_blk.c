// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-blk's backend and request parser (virtio_blk.h): the image's
 * checks and lock, and one request at a time on the device thread.
 * Request layout and status values are the virtio 1.x spec's 5.2.6
 * (linux/virtio_blk.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>

#include "virtio_blk.h"

/* The request header: type, reserved (ioprio), sector; little-endian. */
#define HDR_SIZE 16
/* A discard or write-zeroes segment: sector, sectors, flags. */
#define SEG_SIZE 16

static void vblk_config_read(void *ctx, uint32_t off, void *buf, uint32_t len)
{
	const struct vblk *b = ctx;

	memcpy(buf, (const uint8_t *)&b->cfg + off, len);
}

static uint32_t vblk_handle(void *ctx, unsigned int q, struct virtq_chain *c)
{
	(void)q;
	return vblk_request(ctx, c);
}

void vblk_init_fd(struct vblk *b, int fd, uint64_t size, bool readonly,
		  const char *serial)
{
	uint64_t f = (1ULL << VIRTIO_BLK_F_SEG_MAX) |
		     (1ULL << VIRTIO_BLK_F_BLK_SIZE) |
		     (1ULL << VIRTIO_BLK_F_FLUSH) |
		     (1ULL << VIRTIO_RING_F_INDIRECT_DESC);

	if (readonly)
		f |= 1ULL << VIRTIO_BLK_F_RO;
	else
		f |= (1ULL << VIRTIO_BLK_F_DISCARD) |
		     (1ULL << VIRTIO_BLK_F_WRITE_ZEROES);
	b->fd = fd;
	b->size = size;
	b->readonly = readonly;
	/* 20 bytes, zero-padded, no terminator when full (GET_ID). */
	memset(b->serial, 0, sizeof(b->serial));
	memcpy(b->serial, serial, strnlen(serial, sizeof(b->serial)));
	b->cfg = (struct virtio_blk_config){
		.capacity = size / VBLK_SECTOR,
		/* A chain (the header, the data, the status) has at most
		 * the queue's size of buffers, in an indirect table or not. */
		.seg_max = VBLK_QUEUE_SIZE - 2,
		.blk_size = VBLK_SECTOR,
		.max_discard_sectors = VBLK_MAX_ZERO_SEC,
		.max_discard_seg = 1,
		.discard_sector_alignment = 1,
		.max_write_zeroes_sectors = VBLK_MAX_ZERO_SEC,
		.max_write_zeroes_seg = 1,
		.write_zeroes_may_unmap = 1,
	};
	b->ops = (struct virtio_dev_ops){
		.name = "blk",
		.device_id = VIRTIO_ID_BLOCK,
		.features = f,
		.nr_queues = 1,
		/* No notify while the thread drains the queue. */
		.quiet_queues = 1u,
		.queue_max = VBLK_QUEUE_SIZE,
		.config_size = sizeof(b->cfg),
		.config_read = vblk_config_read,
		.handle = vblk_handle,
	};
}

/* The words for open()'s errno @e on --disk @c; returns -@e. */
static int open_failed(const struct vblk_config *c, int e, struct hv_err *err)
{
	if (e == ENOENT)
		return hv_err_set(err, -e, "--disk path=%s: no such file",
				  c->path);
	if (e == EISDIR)
		return hv_err_set(err, -e,
				  "--disk path=%s: a directory; give a "
				  "raw image file or a block device",
				  c->path);
	if (!c->readonly && (e == EACCES || e == EROFS || e == EPERM) &&
	    !access(c->path, R_OK))
		return hv_err_set(err, -e,
				  "--disk path=%s: cannot be written; "
				  "add readonly=on to use it read-only",
				  c->path);
	return hv_err_set(err, -e, "--disk path=%s: cannot open: %s", c->path,
			  strerror(e));
}

/*
 * @fd's stat in *@st and its size in bytes in *@size: a regular file's
 * length or a block device's.  Anything else is not a disk: -EINVAL.
 */
static int disk_size(int fd, const char *path, struct stat *st, uint64_t *size,
		     struct hv_err *err)
{
	if (fstat(fd, st))
		return hv_err_set(err, -EINVAL, "--disk path=%s: %s", path,
				  strerror(errno));
	if (S_ISREG(st->st_mode)) {
		*size = (uint64_t)st->st_size;
		return 0;
	}
	if (S_ISBLK(st->st_mode)) {
		if (!ioctl(fd, BLKGETSIZE64, size))
			return 0;
		return hv_err_set(err, -EINVAL,
				  "--disk path=%s: cannot read the block "
				  "device's size: %s",
				  path, strerror(errno));
	}
	return hv_err_set(err, -EINVAL,
			  S_ISDIR(st->st_mode)
				  ? "--disk path=%s: a directory; give a raw "
				    "image file or a block device"
				  : "--disk path=%s: not a regular file or a "
				    "block device (a FIFO, socket or character "
				    "device cannot be a disk)",
			  path);
}

/* A disk of @size bytes is at least one sector and whole sectors. */
static int whole_sectors(const char *path, uint64_t size, struct hv_err *err)
{
	if (!size)
		return hv_err_set(err, -EINVAL,
				  "--disk path=%s: empty; a disk needs at "
				  "least one 512-byte sector",
				  path);
	if (size % VBLK_SECTOR)
		return hv_err_set(err, -EINVAL,
				  "--disk path=%s: %llu bytes, not a multiple "
				  "of 512; a raw image is whole sectors "
				  "(truncate -s to round it)",
				  path, (unsigned long long)size);
	return 0;
}

/* Shared for readers, exclusive for a writer: QEMU's rule. */
static int lock_disk(int fd, const struct vblk_config *c, struct hv_err *err)
{
	struct flock lk = { .l_whence = SEEK_SET,
			    .l_type = c->readonly ? F_RDLCK : F_WRLCK };
	int e;

	if (!fcntl(fd, F_OFD_SETLK, &lk))
		return 0;
	e = errno;
	if (e == EAGAIN || e == EACCES)
		return hv_err_set(err, -EINVAL,
				  "--disk path=%s: in use (locked) by another "
				  "VM or another --disk of this one; %s",
				  c->path,
				  c->readonly ? "it is being written"
					      : "a disk being written is "
						"not shared");
	return hv_err_set(err, -EINVAL, "--disk path=%s: cannot lock it: %s",
			  c->path, strerror(e));
}

/*
 * The checks on the image, in order: its type and size, whole sectors,
 * blocking I/O from now on (it was opened O_NONBLOCK), the lock.
 */
static int check_disk(int fd, const struct vblk_config *c, struct stat *st,
		      uint64_t *size, struct hv_err *err)
{
	if (disk_size(fd, c->path, st, size, err) ||
	    whole_sectors(c->path, *size, err))
		return -EINVAL;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
		return hv_err_set(err, -EINVAL, "--disk path=%s: %s", c->path,
				  strerror(errno));
	return lock_disk(fd, c, err);
}

int vblk_open(struct vblk *b, const struct vblk_config *c, unsigned int n,
	      struct hv_err *err)
{
	char serial[VBLK_ID_MAX + 1];
	uint64_t size = 0;
	struct stat st;
	int fd;

	/* O_NONBLOCK: a FIFO's open must not wait for a writer. */
	fd = open(c->path, (c->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC |
				   O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return open_failed(c, errno, err);
	if (check_disk(fd, c, &st, &size, err)) {
		close(fd);
		return -EINVAL;
	}
	if (c->id)
		snprintf(serial, sizeof(serial), "%s", c->id);
	else
		snprintf(serial, sizeof(serial), "hotvm-disk%u", n);
	vblk_init_fd(b, fd, size, c->readonly, serial);
	b->bdev = S_ISBLK(st.st_mode);
	return 0;
}

void vblk_close(struct vblk *b)
{
	if (b->fd >= 0)
		close(b->fd); /* drops the lock */
	b->fd = -1;
}

/*
 * The iovec of @len bytes starting @off bytes into the chain's readable
 * (@w false) or writable buffers.  Returns how many entries.
 */
static unsigned int chain_iov(const struct virtq_chain *c, bool w, uint64_t off,
			      uint64_t len, struct iovec *iov)
{
	unsigned int k = 0;

	for (unsigned int i = w ? c->nr_out : 0;
	     i < (w ? c->n : c->nr_out) && len; i++) {
		const struct virtq_buf *b = &c->b[i];
		uint64_t m;

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		m = b->len - off;
		if (m > len)
			m = len;
		iov[k++] = (struct iovec){ .iov_base = b->p + off,
					   .iov_len = (size_t)m };
		len -= m;
		off = 0;
	}
	return k;
}

/* [sector, sector + bytes) inside the disk, with no overflow. */
static bool in_range(const struct vblk *b, uint64_t sector, uint64_t bytes)
{
	uint64_t sectors = b->size / VBLK_SECTOR;

	return sector <= sectors && bytes <= b->size - sector * VBLK_SECTOR;
}

/* All of iov at @pos, or -EIO (a short transfer: the image shrank). */
static int transfer(struct vblk *b, struct iovec *iov, unsigned int k,
		    uint64_t pos, bool write)
{
	while (k) {
		ssize_t n;

		n = write ? pwritev(b->fd, iov, (int)k, (off_t)pos)
			  : preadv(b->fd, iov, (int)k, (off_t)pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		pos += (uint64_t)n;
		while (k && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			k--;
		}
		if (k) {
			iov->iov_base = (uint8_t *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

static uint8_t rw(struct vblk *b, const struct virtq_chain *c, bool write,
		  uint64_t sector, uint64_t len, uint32_t *written)
{
	struct iovec iov[VIRTQ_MAX_SIZE];
	unsigned int k;

	if (write && b->readonly)
		return VIRTIO_BLK_S_IOERR;
	if (len % VBLK_SECTOR || !in_range(b, sector, len))
		return VIRTIO_BLK_S_IOERR;
	k = chain_iov(c, !write, write ? HDR_SIZE : 0, len, iov);
	if (transfer(b, iov, k, sector * VBLK_SECTOR, write))
		return VIRTIO_BLK_S_IOERR;
	if (!write)
		*written = (uint32_t)len;
	return VIRTIO_BLK_S_OK;
}

/* Writes zeroes over [pos, pos + len) the slow way. */
static int write_zeroes(struct vblk *b, uint64_t pos, uint64_t len)
{
	static const uint8_t zero[65536];

	while (len) {
		size_t m = len < sizeof(zero) ? (size_t)len : sizeof(zero);
		ssize_t n = pwrite(b->fd, zero, m, (off_t)pos);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		pos += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static uint8_t zero_range(struct vblk *b, bool discard, uint64_t sector,
			  uint32_t sectors, uint32_t flags)
{
	uint64_t pos = sector * VBLK_SECTOR, len;
	int ret;

	if (b->readonly)
		return VIRTIO_BLK_S_IOERR;
	if (flags & ~(uint32_t)VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP ||
	    (discard && flags))
		return VIRTIO_BLK_S_UNSUPP;
	if (sectors > VBLK_MAX_ZERO_SEC)
		return VIRTIO_BLK_S_IOERR;
	len = (uint64_t)sectors * VBLK_SECTOR;
	if (!in_range(b, sector, len))
		return VIRTIO_BLK_S_IOERR;
	if (!len)
		return VIRTIO_BLK_S_OK;
	if (b->bdev) {
		uint64_t r[2] = { pos, len };

		ret = ioctl(b->fd, discard ? BLKDISCARD : BLKZEROOUT, r);
	} else if (discard || (flags & VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP)) {
		ret = fallocate(b->fd,
				FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)pos, (off_t)len);
	} else {
		ret = fallocate(b->fd,
				FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
				(off_t)pos, (off_t)len);
	}
	if (!ret)
		return VIRTIO_BLK_S_OK;
	/* A discard is a hint: not done, nothing is wrong. */
	if (discard)
		return VIRTIO_BLK_S_OK;
	return write_zeroes(b, pos, len) ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
}

static uint8_t segments(struct vblk *b, const struct virtq_chain *c,
			bool discard)
{
	uint8_t seg[SEG_SIZE];
	uint64_t sector;
	uint32_t sectors, flags;

	/* One segment (max_discard_seg, max_write_zeroes_seg). */
	if (c->out_len != HDR_SIZE + SEG_SIZE)
		return VIRTIO_BLK_S_IOERR;
	if (virtq_chain_read(c, HDR_SIZE, seg, SEG_SIZE) != SEG_SIZE)
		return VIRTIO_BLK_S_IOERR;
	memcpy(&sector, seg, 8);
	memcpy(&sectors, seg + 8, 4);
	memcpy(&flags, seg + 12, 4);
	return zero_range(b, discard, sector, sectors, flags);
}

uint32_t vblk_request(struct vblk *b, const struct virtq_chain *c)
{
	uint8_t hdr[HDR_SIZE], status;
	uint32_t type, written = 0;
	uint64_t sector, in_data;

	b->st.requests++;
	/* No byte for the status: nothing can be said, nothing is done. */
	if (!c->in_len) {
		b->st.no_status++;
		return 0;
	}
	in_data = c->in_len - 1;
	if (virtq_chain_read(c, 0, hdr, HDR_SIZE) != HDR_SIZE) {
		status = VIRTIO_BLK_S_IOERR;
		goto done;
	}
	memcpy(&type, hdr, 4);
	memcpy(&sector, hdr + 8, 8);
	switch (type) {
	case VIRTIO_BLK_T_IN:
		status = rw(b, c, false, sector, in_data, &written);
		break;
	case VIRTIO_BLK_T_OUT:
		status =
			rw(b, c, true, sector, c->out_len - HDR_SIZE, &written);
		break;
	case VIRTIO_BLK_T_FLUSH:
		status =
			fdatasync(b->fd) ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
		break;
	case VIRTIO_BLK_T_GET_ID:
		written =
			in_data < VBLK_ID_MAX ? (uint32_t)in_data : VBLK_ID_MAX;
		virtq_chain_write(c, 0, b->serial, written);
		status = VIRTIO_BLK_S_OK;
		break;
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		status = b->readonly
				 ? VIRTIO_BLK_S_UNSUPP
				 : segments(b, c, type == VIRTIO_BLK_T_DISCARD);
		break;
	default:
		status = VIRTIO_BLK_S_UNSUPP;
		break;
	}
done:
	if (status == VIRTIO_BLK_S_IOERR)
		b->st.ioerr++;
	else if (status == VIRTIO_BLK_S_UNSUPP)
		b->st.unsupp++;
	if (status != VIRTIO_BLK_S_OK)
		written = 0;
	virtq_chain_write(c, in_data, &status, 1);
	return written + 1;
}
