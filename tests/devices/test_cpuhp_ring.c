// SPDX-License-Identifier: GPL-2.0-only
/*
 * The report ring's reader and mailbox (vmm/devices/cpuhp_ring.c, through
 * the register block that owns it): entries as the tiny guest writes
 * them (guest/hotplug/gring.c's order: fields, seq, head), their times,
 * the console, and a guest that writes garbage, never rings, rings
 * constantly or writes while the host reads.  The area is malloc'd at
 * exactly its size, so ASan sees any read outside it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "cpuhp_regs.h"
#include "hotvm/abi.h"
#include "hotvm/guest_states.h"
#include "hotvm/ring.h"

#define NR_CPUS 8
#define MAX_LOG 512

static struct {
	unsigned int cpu[MAX_LOG];
	uint32_t value[MAX_LOG];
	int ret[MAX_LOG];
	uint64_t at[MAX_LOG];
	unsigned int n;
	char con[4096];
	size_t con_n;
	_Atomic unsigned int bad; /* a callback saw something invalid */
} rec;

static void on_entry(void *ctx, unsigned int cpu, uint32_t value, int ret,
		     uint64_t at_ns)
{
	(void)ctx;
	if (cpu >= NR_CPUS ||
	    (value & ABI_GUEST_STATE_MASK) >= GUEST_NR_STATES || ret > 0 ||
	    ret < -4095)
		rec.bad++;
	if (rec.n && at_ns < rec.at[(rec.n - 1) % MAX_LOG])
		rec.bad++;
	rec.cpu[rec.n % MAX_LOG] = cpu;
	rec.value[rec.n % MAX_LOG] = value;
	rec.ret[rec.n % MAX_LOG] = ret;
	rec.at[rec.n % MAX_LOG] = at_ns;
	rec.n++;
}

static void on_console(void *ctx, const void *buf, size_t n)
{
	(void)ctx;
	if (n > ABI_RING_CON_SIZE)
		rec.bad++;
	if (rec.con_n + n < sizeof(rec.con)) {
		memcpy(rec.con + rec.con_n, buf, n);
		rec.con_n += n;
	}
}

static const struct hpring_ops ops = { .entry = on_entry };

static struct hpregs r;
static uint8_t *mem;

static struct abi_ring_hdr *hdr(void)
{
	return (struct abi_ring_hdr *)(mem + ABI_RING_HDR_OFF);
}

static void setup(void)
{
	mem = calloc(1, ABI_RING_SIZE);
	CHECK(mem != NULL);
	memset(&rec, 0, sizeof(rec));
	CHECK_EQ(hpregs_init(&r, &(struct hpregs_config){ .max_cpus = NR_CPUS,
							  .ring_mem = mem }),
		 0);
	hpring_attach(&r.ring, &ops, NULL);
	hpring_set_console(&r.ring, on_console, NULL);
}

static void teardown(void)
{
	hpregs_destroy(&r);
	free(mem);
}

static void guest_header(void)
{
	hdr()->magic = ABI_RING_MAGIC;
	hdr()->version = ABI_RING_VERSION;
}

/* What the tiny guest does per transition (gring_report()). */
static void guest_put(uint32_t sel, uint32_t value, int ret, uint64_t tsc)
{
	uint32_t head = __atomic_load_n(&hdr()->head, __ATOMIC_RELAXED);
	struct abi_ring_entry *e =
		(struct abi_ring_entry *)(mem + ABI_RING_ENTRY_OFF +
					  (head % ABI_RING_ENTRIES) *
						  ABI_RING_ENTRY_SIZE);

	/* Atomic stores: the racing test's host reads them meanwhile. */
	__atomic_store_n(&e->sel, sel, __ATOMIC_RELAXED);
	__atomic_store_n(&e->value, value, __ATOMIC_RELAXED);
	__atomic_store_n(&e->ret, ret, __ATOMIC_RELAXED);
	__atomic_store_n(&e->tsc, tsc, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, head + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&hdr()->head, head + 1, __ATOMIC_RELEASE);
}

static void guest_con(const char *s)
{
	uint32_t head = hdr()->con_head;

	for (size_t i = 0; s[i]; i++)
		mem[ABI_RING_CON_OFF + (head + i) % ABI_RING_CON_SIZE] =
			(uint8_t)s[i];
	hdr()->con_head = head + (uint32_t)strlen(s);
}

static int ring(uint32_t v, uint64_t now)
{
	return hpregs_ring_doorbell(&r, v, now);
}

static struct hpring_stats stats(void)
{
	struct hpregs_stats st;

	hpregs_stats(&r, &st);
	return st.ring;
}

/* Off until the guest says so: no reads, no writes, doorbells ignored. */
static void test_off_until_enabled(void)
{
	uint8_t zero[ABI_RING_SIZE] = { 0 };

	setup();
	guest_put(1, ABI_GUEST_STATE_UP | 3, 0, 100);
	hdr()->head = 0; /* as if it were anything else's memory */
	memset(mem, 0, ABI_RING_SIZE);
	CHECK(!hpring_enabled(&r.ring));
	CHECK_EQ(hpregs_plug(&r, 2), 0);
	CHECK_EQ(hpregs_request_unplug(&r, 3), -ENODEV);
	hpregs_ring_hint(&r, HPRING_FAULT, 1);
	hpregs_ring_drain(&r);
	CHECK_EQ(ring(ABI_RING_DB_DRAIN, 1000), -EINVAL);
	CHECK(!memcmp(mem, zero, ABI_RING_SIZE)); /* not one byte written */
	CHECK_EQ(stats().ignored[HPRING_IGN_DOORBELL], 1);
	/* A bad header is refused and counted. */
	hdr()->magic = 0x12345678;
	CHECK_EQ(ring(ABI_RING_DB_ENABLE, 1000), -EINVAL);
	CHECK_EQ(stats().ignored[HPRING_IGN_HEADER], 1);
	CHECK(!hpring_enabled(&r.ring));
	/* Enabled: the insert pending since before is in the mailbox. */
	guest_header();
	CHECK_EQ(ring(ABI_RING_DB_ENABLE, 1000), 1);
	CHECK(hpring_enabled(&r.ring));
	CHECK(hpring_test(&r.ring, HPRING_INSERT, 2));
	CHECK(!hpring_test(&r.ring, HPRING_INSERT, 1));
	/* A machine reset turns it off again. */
	hpregs_reset(&r);
	CHECK(!hpring_enabled(&r.ring));
	teardown();
}

/* Entries in order, with the guest's result and its time on the host's. */
static void test_entries_and_time(void)
{
	uint64_t now = 5000000000ull;

	setup();
	guest_header();
	CHECK_EQ(ring(ABI_RING_DB_ENABLE, 1000), 1);
	hpring_set_tsc_khz(&r.ring, 1000000); /* 1 GHz: a tick a nanosecond */
	guest_put(1, ABI_GUEST_STATE_UP | 1, 0, 900000);
	guest_put(1, ABI_GUEST_STATE_UP | ABI_GUEST_STATE_FAILED | 1, -11,
		  950000);
	guest_put(1, ABI_GUEST_STATE_DONE | ABI_GUEST_STATE_FAILED, -11,
		  990000);
	hdr()->db_tsc = 1000000;
	CHECK_EQ(ring(ABI_RING_DB_DRAIN, now), 0);
	CHECK_EQ(rec.n, 3);
	CHECK_EQ(rec.cpu[0], 1);
	CHECK_EQ(rec.value[1], ABI_GUEST_STATE_UP | ABI_GUEST_STATE_FAILED | 1);
	CHECK_EQ(rec.ret[1], -11);
	/* 100000, 50000 and 10000 ticks before the doorbell. */
	CHECK_EQ(rec.at[0], now - 100000);
	CHECK_EQ(rec.at[1], now - 50000);
	CHECK_EQ(rec.at[2], now - 10000);
	CHECK_EQ(hdr()->tail, 3);
	/* Read without a doorbell (a query): the same pair still holds. */
	guest_put(2, ABI_GUEST_STATE_UP | 2, 0, 1000500);
	CHECK_EQ(hpring_test(&r.ring, HPRING_INSERT, 2), false);
	hpregs_ring_drain(&r); /* its now is the real clock: clamped */
	CHECK_EQ(rec.n, 4);
	CHECK(rec.at[3] >= rec.at[2]);
	CHECK_EQ(stats().entries, 4);
	CHECK_EQ(rec.bad, 0);
	teardown();
}

/* Times a guest lies about stay between the previous entry's and now. */
static void test_time_clamped(void)
{
	setup();
	guest_header();
	CHECK_EQ(ring(ABI_RING_DB_ENABLE, 1000), 1);
	hpring_set_tsc_khz(&r.ring, 1000000);
	hdr()->db_tsc = 1000;
	guest_put(0, ABI_GUEST_STATE_UP | 1, 0, 1ull << 62); /* the future */
	guest_put(0, ABI_GUEST_STATE_UP | 2, 0, 0);	     /* and back */
	CHECK_EQ(ring(ABI_RING_DB_DRAIN, 2000000), 0);
	CHECK_EQ(rec.n, 2);
	CHECK_EQ(rec.at[0], 2000000);
	CHECK_EQ(rec.at[1], 2000000);
	CHECK_EQ(stats().clamped, 2);
	teardown();
}

/* Garbage: each kind counted and skipped, the good entries still read. */
static void test_garbage(void)
{
	struct abi_ring_entry *e;

	setup();
	guest_header();
	CHECK_EQ(ring(ABI_RING_DB_ENABLE, 1000), 1);
	guest_put(NR_CPUS, ABI_GUEST_STATE_UP | 1, 0, 1); /* selector */
	guest_put(1, 0x10000, 0, 1);			  /* bits */
	guest_put(1, GUEST_NR_STATES, 0, 1);		  /* state */
	guest_put(1, ABI_GUEST_STATE_UP | 1, 5, 1);	  /* ret > 0 */
	guest_put(1, ABI_GUEST_STATE_UP | 1, -100000, 1); /* ret */
	guest_put(1, ABI_GUEST_STATE_UP | 1, 0, 1);	  /* torn: */
	e = (struct abi_ring_entry *)(mem + ABI_RING_ENTRY_OFF +
				      5 * ABI_RING_ENTRY_SIZE);
	e->seq = 77;
	guest_put(3, ABI_GUEST_STATE_UP | 1, 0, 1); /* good */
	CHECK_EQ(ring(ABI_RING_DB_DRAIN, 2000), 0);
	CHECK_EQ(rec.n, 1);
	CHECK_EQ(rec.cpu[0], 3);
	CHECK_EQ(stats().ignored[HPRING_IGN_ENTRY], 5);
	CHECK_EQ(stats().ignored[HPRING_IGN_TORN], 1);
	/* A head far past the tail: nothing read, the reader resyncs. */
	hdr()->head += 100000;
	CHECK_EQ(ring(ABI_RING_DB_DRAIN, 3000), 0);
	CHECK_EQ(rec.n, 1);
	CHECK_EQ(stats().ignored[HPRING_IGN_INDEX], 1);
	CHECK_EQ(hdr()->tail, hdr()->head);
	guest_put(4, ABI_GUEST_STATE_DONE | ABI_GUEST_STATE_UP | 10, 0, 1);
	CHECK_EQ(ring(ABI_RING_DB_DRAIN, 4000), 0);
	CHECK_EQ(rec.n, 2);
	CHECK_EQ(rec.cpu[1], 4);
	/* A tail the guest rewrote is not the host's: it keeps its own. */
	hdr()->tail = 12345;
	guest_put(5, ABI_GUEST_STATE_UP | 1, 0, 1);
	hpregs_ring_drain(&r);
	CHECK_EQ(rec.n, 3);
	/* Unknown doorbells. */
	CHECK_EQ(ring(42, 5000), -EINVAL);
	CHECK_EQ(stats().ignored[HPRING_IGN_DOORBELL], 1);
	CHECK_EQ(rec.bad, 0);
	teardown();
}

/* Console bytes in order across the wrap; a bad index is skipped. */
static void test_console(void)
{
	char want[ABI_RING_CON_SIZE * 3];
	size_t k = 0;

	setup();
	guest_header();
	hdr()->con_head = hdr()->con_tail = ABI_RING_CON_SIZE - 5;
	CHECK_EQ(ring(ABI_RING_DB_ENABLE, 1000), 1);
	for (int i = 0; i < 200; i++) {
		char line[32];

		snprintf(line, sizeof(line), "online: 0-%d\n", i);
		guest_con(line);
		memcpy(want + k, line, strlen(line));
		k += strlen(line);
		if (i % 7 == 6) {
			CHECK_EQ(ring(ABI_RING_DB_DRAIN, 2000 + (uint64_t)i),
				 0);
			CHECK_EQ(rec.con_n, k);
			CHECK(!memcmp(rec.con, want, k));
			k = rec.con_n = 0;
		}
	}
	/* A query's read leaves the console to the guest's next exit. */
	hpregs_ring_drain(&r);
	CHECK_EQ(rec.con_n, 0);
	CHECK(hdr()->con_tail != hdr()->con_head);
	CHECK_EQ(ring(ABI_RING_DB_DRAIN, 3000), 0);
	CHECK_EQ(rec.con_n, k);
	CHECK(!memcmp(rec.con, want, k));
	hdr()->con_head += ABI_RING_CON_SIZE + 1;
	CHECK_EQ(ring(ABI_RING_DB_DRAIN, 3001), 0);
	CHECK_EQ(stats().ignored[HPRING_IGN_CONSOLE], 1);
	CHECK_EQ(hdr()->con_tail, hdr()->con_head);
	teardown();
}

/*
 * A console sink that blocks (COM1 into a full pipe) holds only the vCPU
 * writing to it: a query still reads the ring's entries and its stats,
 * and the guest still sees the bytes unread until they are written, so
 * it rings before printing to the UART itself.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool blocked, release, queried;
} sink = { .lock = PTHREAD_MUTEX_INITIALIZER,
	   .cond = PTHREAD_COND_INITIALIZER };

static void on_console_blocking(void *ctx, const void *buf, size_t n)
{
	pthread_mutex_lock(&sink.lock);
	sink.blocked = true;
	pthread_cond_broadcast(&sink.cond);
	while (!sink.release)
		pthread_cond_wait(&sink.cond, &sink.lock);
	pthread_mutex_unlock(&sink.lock);
	on_console(ctx, buf, n);
}

static void *vcpu_rings(void *arg)
{
	(void)arg;
	ring(ABI_RING_DB_DRAIN, 2000);
	return NULL;
}

static void *query(void *arg)
{
	(void)arg;
	hpregs_ring_drain(&r);
	(void)stats();
	pthread_mutex_lock(&sink.lock);
	sink.queried = true;
	pthread_cond_broadcast(&sink.cond);
	pthread_mutex_unlock(&sink.lock);
	return NULL;
}

/* Waits up to 5 s for @flag; false if it never came. */
static bool sink_wait(bool *flag)
{
	struct timespec ts;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	pthread_mutex_lock(&sink.lock);
	while (!*flag && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&sink.cond, &sink.lock, &ts);
	pthread_mutex_unlock(&sink.lock);
	return *flag;
}

static void test_console_blocked(void)
{
	pthread_t vcpu, q;

	setup();
	sink.blocked = sink.release = sink.queried = false;
	hpring_set_console(&r.ring, on_console_blocking, NULL);
	guest_header();
	CHECK_EQ(ring(ABI_RING_DB_ENABLE, 1000), 1);
	guest_con("online: 0-1\n");
	CHECK_EQ(pthread_create(&vcpu, NULL, vcpu_rings, NULL), 0);
	CHECK(sink_wait(&sink.blocked));
	guest_put(1, ABI_GUEST_STATE_UP | 3, 0, 0);
	CHECK_EQ(pthread_create(&q, NULL, query, NULL), 0);
	CHECK(sink_wait(&sink.queried));
	CHECK_EQ(rec.n, 1);
	CHECK(hdr()->con_tail != hdr()->con_head);
	pthread_mutex_lock(&sink.lock);
	sink.release = true;
	pthread_cond_broadcast(&sink.cond);
	pthread_mutex_unlock(&sink.lock);
	pthread_join(vcpu, NULL);
	pthread_join(q, NULL);
	CHECK_EQ(rec.con_n, strlen("online: 0-1\n"));
	CHECK_EQ(hdr()->con_tail, hdr()->con_head);
	teardown();
}

/*
 * The mailbox mirrors the block's events; a bit the guest took is the
 * event cleared (and an insert seen), and a withdrawn hot-add is undone
 * only if the host takes the bit back first.
 */
static void test_mailbox(void)
{
	struct hpregs_cpu c;

	setup();
	guest_header();
	CHECK_EQ(ring(ABI_RING_DB_ENABLE, 1000), 1);
	CHECK_EQ(hpregs_plug(&r, 1), 0);
	CHECK_EQ(hpregs_plug(&r, 2), 0);
	CHECK(hpring_test(&r.ring, HPRING_INSERT, 1));
	/* The guest takes cpu 1's bit, as its scan does. */
	__atomic_fetch_and((uint64_t *)(mem + ABI_RING_INSERT_OFF), ~2ull,
			   __ATOMIC_SEQ_CST);
	CHECK_EQ(hpregs_get_cpu(&r, 1, &c), 0);
	CHECK(!c.inserting);
	CHECK(c.insert_seen);
	/* Withdrawn after it was taken: a removal, the remove bit set. */
	CHECK_EQ(hpregs_withdraw_plug(&r, 1), 1);
	CHECK(hpring_test(&r.ring, HPRING_REMOVE, 1));
	/* Withdrawn before: undone, the bit gone, the guest never knew. */
	CHECK_EQ(hpregs_withdraw_plug(&r, 2), 0);
	CHECK(!hpring_test(&r.ring, HPRING_INSERT, 2));
	CHECK(!hpregs_is_enabled(&r, 2));
	/* A cancelled removal takes its bit back. */
	CHECK_EQ(hpregs_cancel_unplug(&r, 1), 0);
	CHECK(!hpring_test(&r.ring, HPRING_REMOVE, 1));
	CHECK_EQ(hpregs_request_unplug(&r, 1), 0);
	CHECK(hpring_test(&r.ring, HPRING_REMOVE, 1));
	CHECK_EQ(hpregs_unplug_force(&r, 1), 0);
	CHECK(!hpring_test(&r.ring, HPRING_REMOVE, 1));
	/* Faults and targets are hints: read the register when set. */
	hpregs_ring_hint(&r, HPRING_TARGET, 5);
	CHECK(hpring_test(&r.ring, HPRING_TARGET, 5));
	hpregs_ring_hint(&r, HPRING_TARGET, NR_CPUS); /* out of range */
	CHECK(!hpring_test(&r.ring, HPRING_TARGET, NR_CPUS));
	teardown();
}

/* One random write of a guest that scribbles on the area. */
static void scribble(unsigned int *seed, unsigned int *k)
{
	size_t off = (size_t)rand_r(seed) % (ABI_RING_SIZE - 4);

	/* The header half the time: indices are what matters. */
	if ((*k)++ % 2)
		off %= sizeof(struct abi_ring_hdr);
	__atomic_store_n((uint32_t *)(mem + (off & ~3ul)),
			 (uint32_t)rand_r(seed) * (rand_r(seed) % 2 ? 1u : 0u),
			 __ATOMIC_RELAXED);
	if (*k % 8 == 0)
		guest_put((uint32_t)rand_r(seed) % NR_CPUS,
			  ABI_GUEST_STATE_UP | 1, 0, 7);
}

static void host_step(uint64_t i)
{
	ring(i % 3 ? ABI_RING_DB_DRAIN : (uint32_t)i, 1000000 + i);
	hpregs_ring_drain(&r);
	hpregs_plug(&r, (unsigned int)(i % NR_CPUS));
	hpregs_withdraw_plug(&r, (unsigned int)(i % NR_CPUS));
}

static void print_stats(const struct hpring_stats *st)
{
	printf("# %llu entries, ignored: index %llu torn %llu entry %llu "
	       "console %llu doorbell %llu\n",
	       (unsigned long long)st->entries,
	       (unsigned long long)st->ignored[HPRING_IGN_INDEX],
	       (unsigned long long)st->ignored[HPRING_IGN_TORN],
	       (unsigned long long)st->ignored[HPRING_IGN_ENTRY],
	       (unsigned long long)st->ignored[HPRING_IGN_CONSOLE],
	       (unsigned long long)st->ignored[HPRING_IGN_DOORBELL]);
}

/*
 * A guest that scribbles on the whole area between the host's reads and
 * doorbells: every kind of garbage is met, counted and skipped, nothing
 * invalid is handed on, and the good entries among it still arrive.
 */
static void test_scribbling_guest(void)
{
	unsigned int seed = 7, k = 0;
	struct hpring_stats st;

	setup();
	guest_header();
	CHECK_EQ(ring(ABI_RING_DB_ENABLE, 1000), 1);
	hpring_set_tsc_khz(&r.ring, 3000000);
	for (uint64_t i = 0; i < 100000; i++) {
		for (unsigned int j = 0; j < i % 5; j++)
			scribble(&seed, &k);
		host_step(i);
	}
	st = stats();
	print_stats(&st);
	CHECK_EQ(rec.bad, 0);
	CHECK_EQ(st.entries, rec.n);
	CHECK(st.entries > 0);
	CHECK(st.ignored[HPRING_IGN_INDEX] > 0);
	CHECK(st.ignored[HPRING_IGN_TORN] + st.ignored[HPRING_IGN_ENTRY] > 0);
	CHECK(st.ignored[HPRING_IGN_CONSOLE] > 0);
	teardown();
}

/*
 * The same guest on another thread, writing while the host reads and
 * rings without pause (for ASan and TSan: no read outside the area, no
 * crash, nothing invalid handed on, no wait for the guest).
 */
static _Atomic bool stop;
static _Atomic unsigned int scribbles;

static void *vandal(void *arg)
{
	unsigned int seed = 1, k = 0;

	(void)arg;
	while (!atomic_load(&stop)) {
		scribble(&seed, &k);
		atomic_fetch_add(&scribbles, 1);
	}
	return NULL;
}

static void test_racing_guest(void)
{
	pthread_t t;
	struct hpring_stats st;

	setup();
	guest_header();
	CHECK_EQ(ring(ABI_RING_DB_ENABLE, 1000), 1);
	atomic_store(&stop, false);
	atomic_store(&scribbles, 0);
	CHECK_EQ(pthread_create(&t, NULL, vandal, NULL), 0);
	/* Until the guest has written a lot, however the threads are run. */
	for (uint64_t i = 0;
	     i < 20000 || (atomic_load(&scribbles) < 200000 && i < 20000000);
	     i++)
		host_step(i);
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	st = stats();
	print_stats(&st);
	CHECK_EQ(rec.bad, 0);
	CHECK_EQ(st.entries, rec.n);
	CHECK(st.doorbells > 20000);
	teardown();
}

int check_failures;

int main(void)
{
	static const struct check_case cases[] = {
		TEST(test_off_until_enabled), TEST(test_entries_and_time),
		TEST(test_time_clamped),      TEST(test_garbage),
		TEST(test_console),	      TEST(test_console_blocked),
		TEST(test_mailbox),	      TEST(test_scribbling_guest),
		TEST(test_racing_guest),
	};

	return check_run(cases, sizeof(cases) / sizeof(cases[0]));
}
