// SPDX-License-Identifier: GPL-2.0-only
/*
 * The report ring's reader and the mailbox's writer: see cpuhp_ring.h.
 * Guest memory is read with atomic loads (the guest writes it at any
 * time), each value once, and checked before use.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cpuhp_ring.h"
#include "hotvm/abi.h"
#include "hotvm/guest_states.h"

#define STATE_VALID                                                            \
	(ABI_GUEST_STATE_MASK | ABI_GUEST_STATE_UP |                           \
	 ABI_GUEST_STATE_ROLLBACK | ABI_GUEST_STATE_FAILED |                   \
	 ABI_GUEST_STATE_DONE)
#define MAX_ERRNO 4095

static const char *const ign_names[HPRING_IGN_NR] = {
	[HPRING_IGN_INDEX] = "ring-index",
	[HPRING_IGN_TORN] = "ring-torn",
	[HPRING_IGN_ENTRY] = "ring-entry",
	[HPRING_IGN_CONSOLE] = "ring-console",
	[HPRING_IGN_DOORBELL] = "ring-doorbell",
	[HPRING_IGN_HEADER] = "ring-header",
};

static const uint32_t box_off[HPRING_NR_BOXES] = {
	[HPRING_INSERT] = ABI_RING_INSERT_OFF,
	[HPRING_REMOVE] = ABI_RING_REMOVE_OFF,
	[HPRING_FAULT] = ABI_RING_FAULT_OFF,
	[HPRING_TARGET] = ABI_RING_TARGET_OFF,
};

const char *hpring_ign_name(int reason)
{
	if (reason < 0 || reason >= HPRING_IGN_NR)
		return "?";
	return ign_names[reason];
}

int hpring_init(struct hpring *g, uint8_t *mem, unsigned int max_cpus)
{
	int ret;

	*g = (struct hpring){ .mem = mem, .max_cpus = max_cpus };
	if (max_cpus > ABI_RING_MAX_SEL)
		g->mem = NULL; /* the mailbox could not say every selector */
	ret = pthread_mutex_init(&g->lock, NULL);
	if (!ret)
		ret = pthread_mutex_init(&g->out_lock, NULL);
	return -ret;
}

void hpring_destroy(struct hpring *g)
{
	pthread_mutex_destroy(&g->out_lock);
	pthread_mutex_destroy(&g->lock);
}

void hpring_attach(struct hpring *g, const struct hpring_ops *ops, void *ctx)
{
	pthread_mutex_lock(&g->lock);
	g->ops = ops ? *ops : (struct hpring_ops){ 0 };
	g->ctx = ctx;
	pthread_mutex_unlock(&g->lock);
}

void hpring_set_console(struct hpring *g, hpring_console_fn fn, void *ctx)
{
	pthread_mutex_lock(&g->lock);
	g->console = fn;
	g->console_ctx = ctx;
	pthread_mutex_unlock(&g->lock);
}

void hpring_set_tsc_khz(struct hpring *g, uint64_t khz)
{
	pthread_mutex_lock(&g->lock);
	g->tsc_khz = khz;
	pthread_mutex_unlock(&g->lock);
}

static struct abi_ring_hdr *hdr(struct hpring *g)
{
	return (struct abi_ring_hdr *)(g->mem + ABI_RING_HDR_OFF);
}

static uint32_t load32(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static uint64_t load64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

bool hpring_enabled(struct hpring *g)
{
	return g->mem && atomic_load(&g->enabled);
}

/*
 * The guest's TSC as host time: from the last doorbell's pair (the TSC
 * the guest wrote just before ringing, the host's clock when the exit
 * arrived) and the TSC rate KVM gives the guest.  A guest that lies
 * moves only its own timestamps, and those stay between the previous
 * entry's time and now.
 */
static uint64_t entry_time(struct hpring *g, uint64_t tsc, uint64_t now)
{
	uint64_t at = now;

	if (g->tsc_khz && g->have_ref) {
		__int128 d = (__int128)(int64_t)(tsc - g->ref_tsc);
		__int128 t = (__int128)g->ref_ns + d * 1000000 / g->tsc_khz;

		if (t < 0)
			t = 0;
		at = t > (__int128)now ? now + 1 : (uint64_t)t;
	}
	if (at > now) {
		g->stats.clamped++;
		at = now;
	}
	/*
	 * Never before the previous entry, even when this read's clock was
	 * taken before a read on another thread got the lock first.
	 */
	if (at < g->last_ns) {
		g->stats.clamped++;
		at = g->last_ns;
	}
	g->last_ns = at;
	return at;
}

static bool entry_valid(const struct hpring *g, const struct abi_ring_entry *e)
{
	return e->sel < g->max_cpus && !(e->value & ~STATE_VALID) &&
	       (e->value & ABI_GUEST_STATE_MASK) < GUEST_NR_STATES &&
	       e->ret <= 0 && e->ret >= -MAX_ERRNO;
}

/*
 * Entry @idx, copied field by field between two reads of its seq: a
 * guest writing it meanwhile shows as a changed or wrong seq.
 */
static bool entry_copy(struct hpring *g, uint32_t idx, struct abi_ring_entry *e)
{
	struct abi_ring_entry *src =
		(struct abi_ring_entry *)(g->mem + ABI_RING_ENTRY_OFF +
					  (idx % ABI_RING_ENTRIES) *
						  ABI_RING_ENTRY_SIZE);
	uint32_t seq = load32(&src->seq);

	e->sel = load32(&src->sel);
	e->value = load32(&src->value);
	e->ret = (int32_t)load32((const uint32_t *)&src->ret);
	e->tsc = load64(&src->tsc);
	e->seq = load32(&src->seq);
	return seq == idx + 1 && e->seq == seq;
}

static void drain_entries(struct hpring *g, uint64_t now)
{
	struct abi_ring_hdr *h = hdr(g);
	uint32_t head = load32(&h->head);
	uint32_t n = head - g->tail;

	if (n > ABI_RING_ENTRIES) {
		/* Nothing in there can be told from garbage: skip it all. */
		g->stats.ignored[HPRING_IGN_INDEX]++;
		n = 0;
	}
	if (n)
		g->stats.drains++;
	for (uint32_t i = 0; i < n; i++) {
		struct abi_ring_entry e;

		if (!entry_copy(g, g->tail + i, &e)) {
			g->stats.ignored[HPRING_IGN_TORN]++;
			continue;
		}
		if (!entry_valid(g, &e)) {
			g->stats.ignored[HPRING_IGN_ENTRY]++;
			continue;
		}
		g->stats.entries++;
		if (g->ops.entry)
			g->ops.entry(g->ctx, e.sel, e.value, e.ret,
				     entry_time(g, e.tsc, now));
	}
	g->tail = head;
	__atomic_store_n(&h->tail, head, __ATOMIC_RELEASE);
}

/* The guest's console bytes, copied out under the lock, written after. */
struct con_take {
	char buf[ABI_RING_CON_SIZE];
	uint32_t n, head;
	hpring_console_fn fn;
	void *ctx;
};

/*
 * Under the lock: copies the guest's new console bytes out.  The guest
 * sees them read (its con_tail) only once they are written
 * (console_put()), so it rings before printing to the UART itself and
 * the order on COM1 holds whichever thread read its entries meanwhile.
 */
static void console_take_locked(struct hpring *g, struct con_take *c)
{
	struct abi_ring_hdr *h = hdr(g);
	uint32_t head = load32(&h->con_head);
	uint32_t n = head - g->con_tail;
	const uint8_t *con = g->mem + ABI_RING_CON_OFF;

	if (n > ABI_RING_CON_SIZE) {
		g->stats.ignored[HPRING_IGN_CONSOLE]++;
		n = 0;
	}
	for (uint32_t i = 0; i < n; i++)
		c->buf[i] = (char)__atomic_load_n(
			&con[(g->con_tail + i) % ABI_RING_CON_SIZE],
			__ATOMIC_RELAXED);
	g->con_tail = head;
	g->stats.console += n;
	c->n = n;
	c->head = head;
	c->fn = g->console;
	c->ctx = g->console_ctx;
}

/*
 * With out_lock held and the ring's lock not: a sink that blocks (a full
 * pipe) holds only this vCPU and the next console writer, never a query
 * nor a reset.  A reset that turned the ring off meanwhile owns the
 * area again: the tail is then not written.
 */
static void console_put(struct hpring *g, const struct con_take *c)
{
	if (c->n && c->fn)
		c->fn(c->ctx, c->buf, c->n);
	pthread_mutex_lock(&g->lock);
	if (atomic_load(&g->enabled))
		__atomic_store_n(&hdr(g)->con_tail, c->head, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g->lock);
}

void hpring_drain(struct hpring *g)
{
	if (!hpring_enabled(g))
		return;
	pthread_mutex_lock(&g->lock);
	if (atomic_load(&g->enabled))
		drain_entries(g, hv_now_ns());
	pthread_mutex_unlock(&g->lock);
}

/*
 * The console, then the entries (the `online:` line before its DONE).
 * Called with out_lock held; @c was taken under the ring's lock.
 */
static void drain_exit(struct hpring *g, const struct con_take *c, uint64_t now)
{
	console_put(g, c);
	pthread_mutex_lock(&g->lock);
	if (atomic_load(&g->enabled))
		drain_entries(g, now);
	pthread_mutex_unlock(&g->lock);
}

void hpring_drain_exit(struct hpring *g)
{
	struct con_take c;
	bool on;

	if (!hpring_enabled(g))
		return;
	pthread_mutex_lock(&g->out_lock);
	pthread_mutex_lock(&g->lock);
	on = atomic_load(&g->enabled);
	if (on)
		console_take_locked(g, &c);
	pthread_mutex_unlock(&g->lock);
	if (on)
		drain_exit(g, &c, hv_now_ns());
	pthread_mutex_unlock(&g->out_lock);
}

/* The guest's header is ready: take its indices as the starting point. */
static int enable_locked(struct hpring *g)
{
	struct abi_ring_hdr *h = hdr(g);

	if (load32(&h->magic) != ABI_RING_MAGIC ||
	    load32(&h->version) != ABI_RING_VERSION) {
		g->stats.ignored[HPRING_IGN_HEADER]++;
		return -EINVAL;
	}
	if (atomic_load(&g->enabled))
		return 0; /* on already: the caller reads it */
	g->tail = load32(&h->head);
	g->con_tail = load32(&h->con_head);
	__atomic_store_n(&h->tail, g->tail, __ATOMIC_RELEASE);
	__atomic_store_n(&h->con_tail, g->con_tail, __ATOMIC_RELEASE);
	g->last_ns = 0;
	atomic_store(&g->enabled, true);
	return 1;
}

int hpring_doorbell(struct hpring *g, uint32_t value, uint64_t now)
{
	struct con_take c;
	int ret = 0;

	if (!g->mem)
		return -EINVAL;
	pthread_mutex_lock(&g->out_lock);
	pthread_mutex_lock(&g->lock);
	g->stats.doorbells++;
	if (value == ABI_RING_DB_ENABLE) {
		ret = enable_locked(g);
	} else if (value != ABI_RING_DB_DRAIN || !atomic_load(&g->enabled)) {
		g->stats.ignored[HPRING_IGN_DOORBELL]++;
		ret = -EINVAL;
	}
	if (ret >= 0) {
		g->ref_tsc = load64(&hdr(g)->db_tsc);
		g->ref_ns = now;
		g->have_ref = g->ref_tsc != 0;
	}
	if (ret == 0)
		console_take_locked(g, &c);
	pthread_mutex_unlock(&g->lock);
	if (ret == 0)
		drain_exit(g, &c, now);
	pthread_mutex_unlock(&g->out_lock);
	return ret;
}

void hpring_disable(struct hpring *g)
{
	pthread_mutex_lock(&g->lock);
	atomic_store(&g->enabled, false);
	g->have_ref = false;
	pthread_mutex_unlock(&g->lock);
}

static uint64_t *box_word(struct hpring *g, enum hpring_box box,
			  unsigned int cpu)
{
	if (box >= HPRING_NR_BOXES || cpu >= ABI_RING_MAX_SEL)
		return NULL;
	return (uint64_t *)(g->mem + box_off[box]) + cpu / 64;
}

void hpring_post(struct hpring *g, enum hpring_box box, unsigned int cpu)
{
	uint64_t *w = hpring_enabled(g) ? box_word(g, box, cpu) : NULL;

	if (w)
		__atomic_fetch_or(w, 1ull << (cpu % 64), __ATOMIC_SEQ_CST);
}

bool hpring_test(struct hpring *g, enum hpring_box box, unsigned int cpu)
{
	uint64_t *w = hpring_enabled(g) ? box_word(g, box, cpu) : NULL;

	return w && (load64(w) >> (cpu % 64) & 1);
}

bool hpring_clear_test(struct hpring *g, enum hpring_box box, unsigned int cpu)
{
	uint64_t *w = hpring_enabled(g) ? box_word(g, box, cpu) : NULL;
	uint64_t bit = 1ull << (cpu % 64);

	return w && (__atomic_fetch_and(w, ~bit, __ATOMIC_SEQ_CST) & bit);
}

void hpring_stats(struct hpring *g, struct hpring_stats *st)
{
	pthread_mutex_lock(&g->lock);
	*st = g->stats;
	pthread_mutex_unlock(&g->lock);
}
