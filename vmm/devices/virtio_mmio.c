// SPDX-License-Identifier: GPL-2.0-only
/*
 * The virtio-MMIO transport (virtio_mmio.h): the version 2 registers
 * (offsets and bits from linux/virtio_mmio.h and linux/virtio_config.h,
 * the virtio 1.x spec's 4.2.2), the queues' life, and the device thread.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "log.h"
#include "seccomp_policy.h"
#include "virtio_mmio.h"
#include "vm.h"

#define VIRTIO_MMIO_MAGIC 0x74726976 /* "virt" */

int virtio_mmio_init(struct virtio_mmio *v, const struct virtio_dev_ops *ops,
		     void *ctx, const struct gmem *mem)
{
	if (ops->nr_queues > VIRTIO_MMIO_MAX_QUEUES ||
	    ops->queue_max > VIRTQ_MAX_SIZE ||
	    ops->config_size > VIRTIO_MMIO_SIZE - VIRTIO_MMIO_CONFIG)
		return -EINVAL;
	*v = (struct virtio_mmio){
		.ops = ops,
		.ctx = ctx,
		.mem = *mem,
		.irq_fd = -1,
		.ack_fd = -1,
		.stop_fd = -1,
	};
	for (unsigned int i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++) {
		v->kick_fd[i] = -1;
		virtq_reset(&v->q[i], ops->queue_max);
	}
	pthread_mutex_init(&v->io_lock, NULL);
	pthread_mutex_init(&v->lock, NULL);
	pthread_mutex_init(&v->isr_lock, NULL);
	return 0;
}

void virtio_mmio_destroy(struct virtio_mmio *v)
{
	virtio_mmio_stop(v);
	pthread_mutex_destroy(&v->io_lock);
	pthread_mutex_destroy(&v->lock);
	pthread_mutex_destroy(&v->isr_lock);
}

static uint64_t dev_features(const struct virtio_mmio *v)
{
	return v->ops->features | (1ULL << VIRTIO_F_VERSION_1);
}

/*
 * The driver's posted acknowledgements of the used-buffer bit (its write
 * of 1 to InterruptACK, an ioeventfd: no exit) take effect now.  Called
 * before every setting of a bit, and after the used entries the bit is
 * for were pushed: an acknowledgement posted after those pushes is seen
 * here (the eventfd's lock orders it), so it never clears the new bit;
 * one posted before them was followed by the driver's look at the used
 * ring, which sees them.
 */
static void take_acks(struct virtio_mmio *v)
{
	uint64_t n;

	if (v->ack_fd >= 0 && read(v->ack_fd, &n, sizeof(n)) == sizeof(n))
		atomic_fetch_and(&v->isr, ~(uint32_t)VIRTIO_MMIO_INT_VRING);
}

static void interrupt(struct virtio_mmio *v, uint32_t why)
{
	uint64_t one = 1;

	/* Taking and setting are one step: no other thread's late take
	 * clears this bit. */
	pthread_mutex_lock(&v->isr_lock);
	take_acks(v);
	atomic_fetch_or(&v->isr, why);
	pthread_mutex_unlock(&v->isr_lock);
	if (v->irq_fd >= 0) {
		/* A full counter (2^64 - 2 pending) still interrupts. */
		ssize_t w = write(v->irq_fd, &one, sizeof(one));

		(void)w;
	} else if (v->raise) {
		v->raise(v->raise_ctx);
	}
}

static void wake(struct virtio_mmio *v, unsigned int q)
{
	uint64_t one = 1;

	if (v->kick_fd[q] >= 0) {
		ssize_t w = write(v->kick_fd[q], &one, sizeof(one));

		(void)w;
	} else if (v->kick) {
		v->kick(v->kick_ctx, q);
	}
}

static void kick(struct virtio_mmio *v, unsigned int q)
{
	atomic_fetch_add(&v->st.kicks, 1);
	wake(v, q);
}

void virtio_mmio_notify(struct virtio_mmio *v, unsigned int q)
{
	if (q < v->ops->nr_queues)
		wake(v, q);
}

/* Status 0: under both locks, so no request is in flight. */
static void reset_locked(struct virtio_mmio *v)
{
	v->status = 0;
	v->dfsel = v->gfsel = v->qsel = v->shmsel = 0;
	v->gfeatures = 0;
	v->gen++;
	atomic_store(&v->isr, 0);
	for (unsigned int i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++)
		virtq_reset(&v->q[i], v->ops->queue_max);
	atomic_fetch_add(&v->st.resets, 1);
	if (v->ops->reset)
		v->ops->reset(v->ctx);
}

void virtio_mmio_reset(struct virtio_mmio *v)
{
	pthread_mutex_lock(&v->io_lock);
	pthread_mutex_lock(&v->lock);
	reset_locked(v);
	pthread_mutex_unlock(&v->lock);
	pthread_mutex_unlock(&v->io_lock);
}

static struct virtq *selected(struct virtio_mmio *v)
{
	return v->qsel < v->ops->nr_queues ? &v->q[v->qsel] : NULL;
}

static uint32_t read_reg(struct virtio_mmio *v, uint64_t off, bool *ok)
{
	struct virtq *q = selected(v);

	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE:
		return VIRTIO_MMIO_MAGIC;
	case VIRTIO_MMIO_VERSION:
		return 2;
	case VIRTIO_MMIO_DEVICE_ID:
		return v->ops->device_id;
	case VIRTIO_MMIO_VENDOR_ID:
		return VIRTIO_MMIO_VENDOR;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		return v->dfsel < 2
			       ? (uint32_t)(dev_features(v) >> (32 * v->dfsel))
			       : 0;
	case VIRTIO_MMIO_QUEUE_NUM_MAX:
		return q ? v->ops->queue_max : 0;
	case VIRTIO_MMIO_QUEUE_READY:
		return q ? q->ready : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS:
		return atomic_load(&v->isr);
	case VIRTIO_MMIO_STATUS:
		return v->status;
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
		return q ? (uint32_t)q->desc : 0;
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		return q ? (uint32_t)(q->desc >> 32) : 0;
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
		return q ? (uint32_t)q->avail : 0;
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
		return q ? (uint32_t)(q->avail >> 32) : 0;
	case VIRTIO_MMIO_QUEUE_USED_LOW:
		return q ? (uint32_t)q->used : 0;
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		return q ? (uint32_t)(q->used >> 32) : 0;
	/* No shared memory regions: each reads as absent (length -1). */
	case VIRTIO_MMIO_SHM_LEN_LOW:
	case VIRTIO_MMIO_SHM_LEN_HIGH:
	case VIRTIO_MMIO_SHM_BASE_LOW:
	case VIRTIO_MMIO_SHM_BASE_HIGH:
		return 0xffffffffu;
	case VIRTIO_MMIO_CONFIG_GENERATION:
		return v->cfg_gen;
	}
	*ok = false;
	return 0;
}

/* A queue's address half: only while the queue is not ready. */
static bool set_half(struct virtq *q, uint64_t *field, bool high, uint32_t val)
{
	if (!q || q->ready)
		return false;
	if (high)
		*field = (*field & 0xffffffffULL) | ((uint64_t)val << 32);
	else
		*field = (*field & ~0xffffffffULL) | val;
	return true;
}

static bool write_status(struct virtio_mmio *v, uint32_t val)
{
	if (!val) {
		reset_locked(v);
		return true;
	}
	if (val & ~0xffu)
		return false;
	if ((val & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    !(v->status & VIRTIO_CONFIG_S_FEATURES_OK)) {
		/* Only what was offered, and only modern drivers. */
		if ((v->gfeatures & ~dev_features(v)) ||
		    !(v->gfeatures & (1ULL << VIRTIO_F_VERSION_1)))
			val &= ~(uint32_t)VIRTIO_CONFIG_S_FEATURES_OK;
	}
	v->status = val;
	return true;
}

/* Under io_lock and lock.  Returns false for a write it refused. */
/*
 * QueueReady: 0 takes the selected queue down but keeps its size and the
 * addresses the driver wrote, so that it may set it ready again; 1 checks
 * the queue and enables it (a bad one is counted and refused).
 */
static bool write_queue_ready(struct virtio_mmio *v, struct virtq *q,
			      uint32_t val)
{
	if (!q || val > 1)
		return false;
	if (!val) {
		uint16_t num = q->num;
		uint64_t d = q->desc, a = q->avail, u = q->used;

		virtq_reset(q, num);
		q->desc = d;
		q->avail = a;
		q->used = u;
		return true;
	}
	if (q->ready)
		return true;
	/* Features are fixed once FEATURES_OK is set. */
	q->indirect = (v->status & VIRTIO_CONFIG_S_FEATURES_OK) &&
		      (v->gfeatures & (1ULL << VIRTIO_RING_F_INDIRECT_DESC));
	if (virtq_enable(q, &v->mem, v->ops->queue_max)) {
		atomic_fetch_add(&v->st.bad_queue, 1);
		return false;
	}
	return true;
}

static bool write_reg(struct virtio_mmio *v, uint64_t off, uint32_t val,
		      bool *ok, bool *kick_all)
{
	struct virtq *q = selected(v);

	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
		v->dfsel = val;
		return true;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
		v->gfsel = val;
		return true;
	case VIRTIO_MMIO_DRIVER_FEATURES:
		if (v->gfsel >= 2 || (v->status & VIRTIO_CONFIG_S_FEATURES_OK))
			return false;
		v->gfeatures &= ~(0xffffffffULL << (32 * v->gfsel));
		v->gfeatures |= (uint64_t)val << (32 * v->gfsel);
		return true;
	case VIRTIO_MMIO_QUEUE_SEL:
		v->qsel = val;
		return true;
	case VIRTIO_MMIO_QUEUE_NUM:
		if (!q || q->ready || val > v->ops->queue_max)
			return false;
		q->num = (uint16_t)val;
		return true;
	case VIRTIO_MMIO_QUEUE_READY:
		return write_queue_ready(v, q, val);
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		return set_half(q, q ? &q->desc : NULL,
				off == VIRTIO_MMIO_QUEUE_DESC_HIGH, val);
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
		return set_half(q, q ? &q->avail : NULL,
				off == VIRTIO_MMIO_QUEUE_AVAIL_HIGH, val);
	case VIRTIO_MMIO_QUEUE_USED_LOW:
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		return set_half(q, q ? &q->used : NULL,
				off == VIRTIO_MMIO_QUEUE_USED_HIGH, val);
	case VIRTIO_MMIO_INTERRUPT_ACK:
		atomic_fetch_and(&v->isr, ~val);
		return true;
	case VIRTIO_MMIO_SHM_SEL:
		v->shmsel = val;
		return true;
	case VIRTIO_MMIO_STATUS: {
		bool was_ok = v->status & VIRTIO_CONFIG_S_DRIVER_OK;
		bool r = write_status(v, val);

		/* Requests made available before DRIVER_OK are served now. */
		*kick_all =
			r && !was_ok && (v->status & VIRTIO_CONFIG_S_DRIVER_OK);
		return r;
	}
	}
	*ok = false;
	return false;
}

/* The configuration space: 1, 2, 4 or 8 bytes inside it. */
static int config_access(struct virtio_mmio *v, uint64_t off, uint64_t *data,
			 unsigned int len, bool is_write)
{
	uint64_t val = 0;

	if ((len != 1 && len != 2 && len != 4 && len != 8) ||
	    off > v->ops->config_size || len > v->ops->config_size - off) {
		atomic_fetch_add(&v->st.ign_offset, 1);
		return 1;
	}
	if (is_write) { /* nothing writable is offered */
		atomic_fetch_add(&v->st.ign_write, 1);
		return 1;
	}
	v->ops->config_read(v->ctx, (uint32_t)off, &val, len);
	*data = val;
	return 0;
}

int virtio_mmio_access(void *ctx, uint64_t off, uint64_t *data,
		       unsigned int len, bool is_write)
{
	struct virtio_mmio *v = ctx;
	bool ok = true, kick_all = false, done;
	uint32_t val = (uint32_t)*data;

	if (off >= VIRTIO_MMIO_CONFIG)
		return config_access(v, off - VIRTIO_MMIO_CONFIG, data, len,
				     is_write);
	/* The control registers: 32-bit, aligned (4.2.2.2). */
	if (len != 4 || off % 4) {
		atomic_fetch_add(&v->st.ign_offset, 1);
		return 1;
	}
	if (!is_write) {
		pthread_mutex_lock(&v->lock);
		*data = read_reg(v, off, &ok);
		pthread_mutex_unlock(&v->lock);
		if (!ok)
			atomic_fetch_add(&v->st.ign_offset, 1);
		return ok ? 0 : 1;
	}
	/* Hot and lock-free: the notify (when it was no ioeventfd's). */
	if (off == VIRTIO_MMIO_QUEUE_NOTIFY) {
		if (val >= v->ops->nr_queues) {
			atomic_fetch_add(&v->st.ign_write, 1);
			return 1;
		}
		kick(v, val);
		return 0;
	}
	if (off == VIRTIO_MMIO_INTERRUPT_ACK) {
		atomic_fetch_and(&v->isr, ~val);
		return 0;
	}
	pthread_mutex_lock(&v->io_lock);
	pthread_mutex_lock(&v->lock);
	done = write_reg(v, off, val, &ok, &kick_all);
	pthread_mutex_unlock(&v->lock);
	pthread_mutex_unlock(&v->io_lock);
	if (!ok || !done) {
		atomic_fetch_add(ok ? &v->st.ign_write : &v->st.ign_offset, 1);
		return 1;
	}
	for (unsigned int i = 0; kick_all && i < v->ops->nr_queues; i++)
		kick(v, i);
	return 0;
}

unsigned int virtio_mmio_gen(struct virtio_mmio *v)
{
	unsigned int gen;

	pthread_mutex_lock(&v->lock);
	gen = v->gen;
	pthread_mutex_unlock(&v->lock);
	return gen;
}

uint64_t virtio_mmio_features(struct virtio_mmio *v)
{
	uint64_t f;

	pthread_mutex_lock(&v->lock);
	f = v->status & VIRTIO_CONFIG_S_FEATURES_OK ? v->gfeatures : 0;
	pthread_mutex_unlock(&v->lock);
	return f;
}

int virtio_mmio_begin(struct virtio_mmio *v, unsigned int gen)
{
	bool running;

	pthread_mutex_lock(&v->io_lock);
	pthread_mutex_lock(&v->lock);
	running = v->gen == gen && (v->status & VIRTIO_CONFIG_S_DRIVER_OK) &&
		  !(v->status & VIRTIO_CONFIG_S_NEEDS_RESET);
	pthread_mutex_unlock(&v->lock);
	if (!running) {
		pthread_mutex_unlock(&v->io_lock);
		return -ESTALE;
	}
	return 0;
}

void virtio_mmio_end(struct virtio_mmio *v)
{
	pthread_mutex_unlock(&v->io_lock);
}

int virtio_mmio_pop(struct virtio_mmio *v, unsigned int qi,
		    struct virtq_chain *c)
{
	int ret = virtq_pop(&v->q[qi], &v->mem, c);

	if (ret == -EIO) {
		/* The ring is gone: the driver must reset the device. */
		pthread_mutex_lock(&v->lock);
		v->status |= VIRTIO_CONFIG_S_NEEDS_RESET;
		pthread_mutex_unlock(&v->lock);
		interrupt(v, VIRTIO_MMIO_INT_CONFIG);
	}
	return ret;
}

void virtio_mmio_unpop(struct virtio_mmio *v, unsigned int qi, uint16_t n)
{
	virtq_unpop(&v->q[qi], n);
}

void virtio_mmio_push(struct virtio_mmio *v, unsigned int qi, uint16_t head,
		      uint32_t written)
{
	virtq_push(&v->q[qi], head, written);
}

void virtio_mmio_served(struct virtio_mmio *v, unsigned int qi,
			unsigned int gen)
{
	bool want;

	pthread_mutex_lock(&v->io_lock);
	/* Not after a reset: that queue's driver is gone. */
	want = v->gen == gen && virtq_want_interrupt(&v->q[qi]);
	pthread_mutex_unlock(&v->io_lock);
	if (want)
		interrupt(v, VIRTIO_MMIO_INT_VRING);
}

/* One request of queue @qi under io_lock: 1 served, 0 none, <0 stop. */
static int serve_one(struct virtio_mmio *v, unsigned int qi,
		     struct virtq_chain *c)
{
	int ret;

	if (v->ops->can_take && !v->ops->can_take(v->ctx, qi))
		return 0;
	ret = virtio_mmio_pop(v, qi, c);
	if (ret == -EINVAL) {
		virtq_push(&v->q[qi], c->head, 0);
		return 1;
	}
	if (ret <= 0)
		return ret;
	virtq_push(&v->q[qi], c->head, v->ops->handle(v->ctx, qi, c));
	return 1;
}

/*
 * Queue @qi's driver need not notify (@quiet), or must again: then
 * whether it made more available meanwhile.  Under io_lock.
 */
static bool quiet(struct virtio_mmio *v, unsigned int qi, unsigned int gen,
		  bool on)
{
	bool more = false;

	if (!(v->ops->quiet_queues & (1u << qi)) || virtio_mmio_begin(v, gen))
		return false;
	more = virtq_quiet(&v->q[qi], on);
	virtio_mmio_end(v);
	return more;
}

/* virtio_mmio_process() with the chain to fill: its thread's own. */
static unsigned int process(struct virtio_mmio *v, unsigned int qi,
			    struct virtq_chain *c)
{
	unsigned int served = 0, gen;

	if (qi >= v->ops->nr_queues)
		return 0;
	if (v->ops->serve && (v->ops->serve_queues & (1u << qi)))
		return v->ops->serve(v->ctx, v, qi);
	gen = virtio_mmio_gen(v);
	do {
		quiet(v, qi, gen, true);
		for (;;) {
			int ret;

			/* One request at a time: a reset waits for one. */
			if (virtio_mmio_begin(v, gen))
				break;
			ret = serve_one(v, qi, c);
			virtio_mmio_end(v);
			if (ret <= 0)
				break;
			served++;
		}
		/* Notifies back on; what came meanwhile is served now. */
	} while (quiet(v, qi, gen, false));
	if (served)
		virtio_mmio_served(v, qi, gen);
	return served;
}

unsigned int virtio_mmio_process(struct virtio_mmio *v, unsigned int qi)
{
	return process(v, qi, &v->chain[0]);
}

/* --- the device thread -------------------------------------------------- */

/* What a thread serves: queues [first, first + n). */
struct thread_arg {
	struct virtio_mmio *v;
	unsigned int first, n;
};

static void *device_thread(void *arg)
{
	struct thread_arg a = *(struct thread_arg *)arg;
	struct virtio_mmio *v = a.v;
	const struct virtio_dev_ops *ops = v->ops;
	struct pollfd p[VIRTIO_MMIO_MAX_QUEUES * 2 + 1];
	unsigned int n = a.n;
	char name[16];

	free(arg);
	if (ops->thread_per_queue)
		snprintf(name, sizeof(name), "virtio-%s-q%u", ops->name,
			 a.first);
	else
		snprintf(name, sizeof(name), "virtio-%s", ops->name);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	seccomp_enter(ops->filter ? (enum seccomp_thread)ops->filter
				  : SECCOMP_THREAD_VIRTIO);
	for (unsigned int i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = v->kick_fd[a.first + i],
					.events = POLLIN };
	p[n] = (struct pollfd){ .fd = v->stop_fd, .events = POLLIN };
	for (;;) {
		unsigned int np = n + 1;

		/* The backends each queue waits on now (poll skips -1). */
		for (unsigned int i = 0; ops->wait_fd && i < n; i++, np++)
			p[np] = (struct pollfd){
				.fd = ops->wait_fd(v->ctx, a.first + i),
				.events = POLLIN,
			};
		if (poll(p, np, -1) < 0) {
			if (errno == EINTR)
				continue;
			pr_err("%s: poll: %s; the device stops", name,
			       strerror(errno));
			break;
		}
		if (p[n].revents)
			break;
		for (unsigned int i = 0; i < n; i++) {
			unsigned int qi = a.first + i;
			bool backend = np > n + 1 && p[n + 1 + i].revents;
			uint64_t c;

			if (!p[i].revents && !backend)
				continue;
			if (p[i].revents &&
			    read(v->kick_fd[qi], &c, sizeof(c)) < 0 &&
			    errno != EAGAIN && !backend)
				continue;
			process(v, qi, &v->chain[qi]);
		}
	}
	return NULL;
}

/* Starts the threads: one, or one per queue.  0 or -errno. */
static int start_threads(struct virtio_mmio *v)
{
	unsigned int n = v->ops->thread_per_queue ? v->ops->nr_queues : 1;

	for (unsigned int t = 0; t < n; t++) {
		struct thread_arg *a = malloc(sizeof(*a));
		int ret;

		if (!a)
			return -ENOMEM;
		*a = (struct thread_arg){
			.v = v,
			.first = v->ops->thread_per_queue ? t : 0,
			.n = v->ops->thread_per_queue ? 1 : v->ops->nr_queues,
		};
		ret = pthread_create(&v->thread[t], NULL, device_thread, a);
		if (ret) {
			free(a);
			return -ret;
		}
		v->nr_threads++;
	}
	return 0;
}

static int new_eventfd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	return fd < 0 ? -errno : fd;
}

static void close_fds(struct virtio_mmio *v)
{
	for (unsigned int i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++) {
		if (v->kick_fd[i] >= 0)
			close(v->kick_fd[i]);
		v->kick_fd[i] = -1;
	}
	if (v->irq_fd >= 0)
		close(v->irq_fd);
	if (v->ack_fd >= 0)
		close(v->ack_fd);
	if (v->stop_fd >= 0)
		close(v->stop_fd);
	v->irq_fd = v->ack_fd = v->stop_fd = -1;
}

int virtio_mmio_start(struct virtio_mmio *v, struct vm *vm, struct bus *mmio,
		      uint64_t base, unsigned int gsi, const char *name)
{
	const char *step = "eventfd";
	int ret;

	ret = v->stop_fd = new_eventfd();
	if (ret >= 0)
		ret = v->irq_fd = new_eventfd();
	if (ret >= 0)
		ret = v->ack_fd = new_eventfd();
	for (unsigned int i = 0; ret >= 0 && i < v->ops->nr_queues; i++)
		ret = v->kick_fd[i] = new_eventfd();
	if (ret >= 0) {
		step = "KVM_IRQFD";
		ret = vm_irqfd(vm, gsi, v->irq_fd);
	}
	for (unsigned int i = 0; ret >= 0 && i < v->ops->nr_queues; i++) {
		step = "KVM_IOEVENTFD";
		ret = vm_ioeventfd(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 4, i,
				   v->kick_fd[i]);
	}
	if (ret >= 0) {
		/* Linux's handler acknowledges what it read, most often the
		 * used-buffer bit alone: that write is posted (take_acks()). */
		step = "KVM_IOEVENTFD";
		ret = vm_ioeventfd(vm, base + VIRTIO_MMIO_INTERRUPT_ACK, 4,
				   VIRTIO_MMIO_INT_VRING, v->ack_fd);
	}
	if (ret >= 0) {
		step = "its MMIO window";
		ret = bus_register(mmio, &(struct bus_dev){
						 .name = name,
						 .base = base,
						 .len = VIRTIO_MMIO_SIZE,
						 .fn = virtio_mmio_access,
						 .ctx = v,
					 });
	}
	if (ret >= 0) {
		step = "its thread";
		ret = start_threads(v);
	}
	if (ret < 0) {
		virtio_mmio_stop(v);
		pr_err("%s (virtio-%s at 0x%llx, GSI %u): %s failed: %s", name,
		       v->ops->name, (unsigned long long)base, gsi, step,
		       strerror(-ret));
		return ret;
	}
	return 0;
}

void virtio_mmio_stop(struct virtio_mmio *v)
{
	uint64_t one = 1;

	if (v->nr_threads) {
		ssize_t w = write(v->stop_fd, &one, sizeof(one));

		(void)w;
		for (unsigned int t = 0; t < v->nr_threads; t++)
			pthread_join(v->thread[t], NULL);
		v->nr_threads = 0;
	}
	close_fds(v);
}
