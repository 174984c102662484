/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The virtio-over-MMIO transport, modern only (version 2 register layout,
 * virtio 1.x; docs/design.md §6.9), for any device given as a struct
 * virtio_dev_ops.  The registers run on the vCPU thread that exits; the
 * queues on the device's own thread, woken by an ioeventfd on the notify
 * register (no exit to user space), which interrupts the guest through an
 * irqfd on its GSI (an edge, so no resample fd).
 *
 * Two locks: io_lock is held by whoever touches the queues (the device
 * thread for one request at a time, a write that changes a queue or the
 * status), lock by the registers.  So a device reset (status 0), and the
 * VM's reset (virtio_mmio_reset()), wait for the request in flight to
 * complete and then find nothing more taken: nothing is left half-done.
 * Register reads (the interrupt status in the guest's handler) never wait
 * for the disk.
 */
#ifndef HOTVM_VIRTIO_MMIO_H
#define HOTVM_VIRTIO_MMIO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus.h"
#include "virtq.h"

struct vm;
struct virtio_mmio;

/* Each device's register window, and how many queues it may have. */
#define VIRTIO_MMIO_SIZE       0x200
#define VIRTIO_MMIO_MAX_QUEUES 4
#define VIRTIO_MMIO_VENDOR     0x4d565448 /* "HTVM" */

/* What a device gives the transport. */
struct virtio_dev_ops {
	const char *name;
	uint32_t device_id; /* linux/virtio_ids.h */
	uint64_t features;  /* the device's own; VERSION_1 is added */
	unsigned int nr_queues;
	uint16_t queue_max;
	uint32_t config_size; /* bytes of its configuration space */
	/* Reads [off, off + len) of the configuration space (in range). */
	void (*config_read)(void *ctx, uint32_t off, void *buf, uint32_t len);
	/*
	 * Serves one good chain of queue @q on the device thread; returns
	 * the bytes it wrote into the chain.  The transport pushes it.
	 */
	uint32_t (*handle)(void *ctx, unsigned int q, struct virtq_chain *c);
	/*
	 * Whether queue @q's next chain may be taken now (under io_lock);
	 * NULL: always.  A receive queue holds the driver's buffers until
	 * the device has something to put in them (virtio_mmio_notify()).
	 */
	bool (*can_take)(void *ctx, unsigned int q);
	/* After a reset, with no request in flight; NULL: nothing. */
	void (*reset)(void *ctx);
	/*
	 * One thread per queue (named virtio-NAME-qN) instead of one for
	 * the device: a guest that floods one queue, or holds it, cannot
	 * hold the others (virtio-net's receive and transmit).
	 */
	bool thread_per_queue;
	/* The threads' seccomp filter (enum seccomp_thread); 0: virtio's. */
	int filter;
	/*
	 * A descriptor queue @q's thread waits on (POLLIN) besides its
	 * notify, asked before each wait on that thread: -1 for none now
	 * (a receive queue waits on its backend only while it has room
	 * for what comes).  NULL: none.
	 */
	int (*wait_fd)(void *ctx, unsigned int q);
	/*
	 * Serves queue @q itself, instead of chain by chain through
	 * handle, with virtio_mmio_begin(), _pop(), _unpop(), _push() and
	 * _end() (a received frame may fill several chains).  Returns the
	 * chains returned to the driver.  Only for the queues in
	 * serve_queues (bit q); the others go through handle.
	 */
	unsigned int (*serve)(void *ctx, struct virtio_mmio *v, unsigned int q);
	uint32_t serve_queues;
	/*
	 * The queues (bit q) whose driver is told not to notify while the
	 * device's thread serves them (VRING_USED_F_NO_NOTIFY), as the spec
	 * allows: a transmit queue under load then costs no exit a frame.
	 */
	uint32_t quiet_queues;
};

struct virtio_mmio_stats {
	_Atomic uint64_t ign_offset; /* no register there, or wrong width */
	_Atomic uint64_t ign_write;  /* a write refused in this state */
	_Atomic uint64_t bad_queue;  /* QUEUE_READY refused (virtq_enable) */
	_Atomic uint64_t resets;     /* status 0, or the VM's reset */
	_Atomic uint64_t kicks;	     /* notifies that reached user space */
};

struct virtio_mmio {
	const struct virtio_dev_ops *ops;
	void *ctx;
	struct gmem mem;

	pthread_mutex_t io_lock; /* the queues; taken before lock */
	pthread_mutex_t lock;	 /* the registers below */
	uint32_t status;
	uint32_t dfsel, gfsel, qsel, shmsel;
	uint64_t gfeatures;
	uint32_t cfg_gen;
	unsigned int gen; /* bumped by every reset: late interrupts drop */
	_Atomic uint32_t isr;
	pthread_mutex_t isr_lock; /* a bit set with the acks taken before */
	struct virtq q[VIRTIO_MMIO_MAX_QUEUES];
	struct virtio_mmio_stats st;

	/*
	 * The guest's side: an irqfd, one ioeventfd per queue, and one for
	 * InterruptACK's write of the used-buffer bit (posted), or -1.
	 */
	int irq_fd;
	int ack_fd;
	int kick_fd[VIRTIO_MMIO_MAX_QUEUES];
	/* Without an irqfd (tests): called to interrupt; may be NULL. */
	void (*raise)(void *ctx);
	void *raise_ctx;
	/* Without a kick fd (tests): called at a notify; may be NULL. */
	void (*kick)(void *ctx, unsigned int q);
	void *kick_ctx;

	/* The device thread, or one per queue (virtio_mmio_start()). */
	int stop_fd;
	pthread_t thread[VIRTIO_MMIO_MAX_QUEUES];
	unsigned int nr_threads;
	/* Each thread's request (the device thread's is chain[0]). */
	struct virtq_chain chain[VIRTIO_MMIO_MAX_QUEUES];
};

/* The registers and queues, nothing started (tests use it alone). */
int virtio_mmio_init(struct virtio_mmio *v, const struct virtio_dev_ops *ops,
		     void *ctx, const struct gmem *mem);
void virtio_mmio_destroy(struct virtio_mmio *v);

/* The bus handler (bus_fn): ctx is the struct virtio_mmio. */
int virtio_mmio_access(void *ctx, uint64_t off, uint64_t *data,
		       unsigned int len, bool is_write);

/*
 * Serves queue @q until the driver has nothing more in it, one request
 * per io_lock; interrupts the guest if it served any and wants to know.
 * The device thread's work; tests call it directly.  Returns the chains
 * returned to the driver.
 */
unsigned int virtio_mmio_process(struct virtio_mmio *v, unsigned int q);

/*
 * The device has something for queue @q (a receive queue): its thread
 * serves it, as at the driver's notify.  Any thread, no lock held.
 */
void virtio_mmio_notify(struct virtio_mmio *v, unsigned int q);

/*
 * For a device's serve(): one unit of work (a frame) on queue @q at a
 * time.  virtio_mmio_begin() takes io_lock if the driver of generation
 * @gen (virtio_mmio_gen(), read once before) still runs the device: 0,
 * or -ESTALE with nothing held.  Under it, virtio_mmio_pop() takes the
 * next chain: 1, 0 none, -EINVAL a bad one (its head in c->head, to be
 * pushed with length 0), -EIO the ring is broken (the device then needs
 * a reset, said to the driver); virtio_mmio_unpop() gives back the last
 * @n good chains popped, unread (they are taken again later);
 * virtio_mmio_push() returns one.  virtio_mmio_end() drops io_lock;
 * virtio_mmio_served() interrupts the driver once if it returned any
 * and wants to know.
 */
unsigned int virtio_mmio_gen(struct virtio_mmio *v);
int virtio_mmio_begin(struct virtio_mmio *v, unsigned int gen);
int virtio_mmio_pop(struct virtio_mmio *v, unsigned int q,
		    struct virtq_chain *c);
void virtio_mmio_unpop(struct virtio_mmio *v, unsigned int q, uint16_t n);
void virtio_mmio_push(struct virtio_mmio *v, unsigned int q, uint16_t head,
		      uint32_t written);
void virtio_mmio_end(struct virtio_mmio *v);
void virtio_mmio_served(struct virtio_mmio *v, unsigned int q,
			unsigned int gen);

/* The features the driver accepted (0 until FEATURES_OK). */
uint64_t virtio_mmio_features(struct virtio_mmio *v);

/* The VM's reset: as the driver's status 0. */
void virtio_mmio_reset(struct virtio_mmio *v);

/*
 * Puts the window at @base on @mmio, the queues' notifies on ioeventfds,
 * the interrupt on @gsi's irqfd, and starts the device thread (named
 * @name, its own seccomp filter).  0 or -errno, said on stderr.
 */
int virtio_mmio_start(struct virtio_mmio *v, struct vm *vm, struct bus *mmio,
		      uint64_t base, unsigned int gsi, const char *name);
/* Stops and joins the thread (its request in flight completes first). */
void virtio_mmio_stop(struct virtio_mmio *v);

#endif
