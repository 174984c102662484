// SPDX-License-Identifier: GPL-2.0-only
/*
 * GED event register: clear-on-read, ignored accesses and their counters,
 * interrupt per raise, and no event lost or duplicated when raisers race a
 * reading vCPU.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "check.h"
#include "ged.h"
#include "hotvm/abi.h"

static _Atomic unsigned int irqs;
static int irq_ret;

static int count_irq(void *ctx)
{
	CHECK(ctx == &irqs);
	atomic_fetch_add(&irqs, 1);
	return irq_ret;
}

static struct ged g;

static void setup(void)
{
	atomic_store(&irqs, 0);
	irq_ret = 0;
	CHECK_EQ(ged_init(&g, count_irq, &irqs), 0);
}

static uint64_t rd(uint64_t off, unsigned int width)
{
	uint64_t v = 0xdeadbeef;

	ged_access(&g, off, width, false, &v);
	return v;
}

static void test_clear_on_read(void)
{
	struct ged_stats st;

	setup();
	CHECK_EQ(rd(0, 4), 0);
	CHECK_EQ(ged_raise(&g, ABI_GED_EVT_CPU), 0);
	CHECK_EQ(atomic_load(&irqs), 1);
	CHECK_EQ(ged_pending(&g), ABI_GED_EVT_CPU);
	CHECK_EQ(rd(0, 4), ABI_GED_EVT_CPU);
	CHECK_EQ(rd(0, 4), 0);
	/* Bits accumulate until read; each raise still fires. */
	CHECK_EQ(ged_raise(&g, 0x8), 0);
	CHECK_EQ(ged_raise(&g, 0x1), 0);
	CHECK_EQ(ged_raise(&g, 0x8), 0);
	CHECK_EQ(atomic_load(&irqs), 4);
	CHECK_EQ(rd(0, 4), 0x9);
	CHECK_EQ(rd(0, 4), 0);
	ged_stats(&g, &st);
	CHECK_EQ(st.reads, 5);
	CHECK_EQ(st.raises, 4);
	ged_destroy(&g);
}

static void test_raise_errors(void)
{
	struct ged_stats st;

	setup();
	CHECK_EQ(ged_raise(&g, 0), -EINVAL);
	CHECK_EQ(atomic_load(&irqs), 0);
	irq_ret = -EIO;
	CHECK_EQ(ged_raise(&g, 0x8), -EIO);
	/* The event stays pending for the next read. */
	CHECK_EQ(rd(0, 4), 0x8);
	ged_stats(&g, &st);
	CHECK_EQ(st.irq_errors, 1);
	CHECK_EQ(st.raises, 1);
	ged_destroy(&g);

	/* No interrupt callback: events are still latched. */
	CHECK_EQ(ged_init(&g, NULL, NULL), 0);
	CHECK_EQ(ged_raise(&g, 0x8), 0);
	CHECK_EQ(rd(0, 4), 0x8);
	ged_destroy(&g);
}

static void test_ignored_accesses(void)
{
	static const unsigned int widths[] = { 0, 1, 2, 3, 5, 8, 16 };
	struct ged_stats st;
	uint64_t v;
	size_t i;

	setup();
	CHECK_EQ(ged_raise(&g, 0x8), 0);
	for (i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		v = 0x1234;
		CHECK(!ged_access(&g, 0, widths[i], false, &v));
		CHECK_EQ(v, 0);
	}
	for (i = 1; i < 8; i++)
		CHECK_EQ(rd(i, 4), 0);
	CHECK_EQ(rd(~0ULL, 4), 0);
	v = 0xffffffff;
	CHECK(!ged_access(&g, 0, 4, true, &v));
	CHECK(!ged_access(&g, 2, 1, true, &v));
	CHECK(!ged_access(&g, 0, 1, true, &v));
	/* None of that consumed or changed the pending event. */
	CHECK_EQ(ged_pending(&g), 0x8);
	ged_stats(&g, &st);
	CHECK_EQ(st.ign_width, 7 + 1);
	CHECK_EQ(st.ign_offset, 7 + 1 + 1);
	CHECK_EQ(st.ign_write, 1);
	CHECK_EQ(st.reads, 0);
	CHECK_EQ(rd(0, 4), 0x8);
	ged_destroy(&g);
}

/*
 * Each raiser owns one bit and raises it ROUNDS times, waiting after each
 * raise until the reader has seen it: so every raise must show up in
 * exactly one read.  A lost clear-vs-raise race hangs (caught by the
 * timeout) or miscounts; a duplicate makes seen[] overshoot.
 */
#define RAISERS 4
#define ROUNDS	3000

static _Atomic unsigned int seen[RAISERS];
static _Atomic unsigned int raisers_done;

static void *raiser(void *arg)
{
	unsigned int bit = (unsigned int)(uintptr_t)arg, n;

	for (n = 1; n <= ROUNDS; n++) {
		CHECK_EQ(ged_raise(&g, 1u << bit), 0);
		while (atomic_load(&seen[bit]) < n)
			sched_yield();
	}
	atomic_fetch_add(&raisers_done, 1);
	return NULL;
}

static void *reader(void *arg)
{
	unsigned int i;
	uint64_t v;

	(void)arg;
	while (atomic_load(&raisers_done) < RAISERS) {
		v = rd(0, 4);
		CHECK_EQ(v & ~((1u << RAISERS) - 1), 0);
		for (i = 0; i < RAISERS; i++)
			if (v & (1u << i))
				atomic_fetch_add(&seen[i], 1);
	}
	return NULL;
}

static void test_concurrent_raise(void)
{
	pthread_t r[RAISERS], rdr;
	struct ged_stats st;
	uintptr_t i;

	setup();
	for (i = 0; i < RAISERS; i++)
		atomic_store(&seen[i], 0);
	atomic_store(&raisers_done, 0);
	pthread_create(&rdr, NULL, reader, NULL);
	for (i = 0; i < RAISERS; i++)
		pthread_create(&r[i], NULL, raiser, (void *)i);
	for (i = 0; i < RAISERS; i++)
		pthread_join(r[i], NULL);
	pthread_join(rdr, NULL);
	for (i = 0; i < RAISERS; i++)
		CHECK_EQ(atomic_load(&seen[i]), ROUNDS);
	CHECK_EQ(ged_pending(&g), 0);
	CHECK_EQ(atomic_load(&irqs), RAISERS * ROUNDS);
	ged_stats(&g, &st);
	CHECK_EQ(st.raises, RAISERS * ROUNDS);
	ged_destroy(&g);
}

CHECK_MAIN(TEST(test_clear_on_read), TEST(test_raise_errors),
	   TEST(test_ignored_accesses), TEST(test_concurrent_raise))
