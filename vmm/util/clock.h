/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The monotonic clock, the one helper every layer reads it through:
 * now in nanoseconds or milliseconds, and a deadline @ms from now for
 * pthread_cond_timedwait() on a condition set to CLOCK_MONOTONIC.
 */
#ifndef HOTVM_CLOCK_H
#define HOTVM_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t hv_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static inline long long hv_now_ms(void)
{
	return (long long)(hv_now_ns() / 1000000u);
}

static inline struct timespec hv_deadline(int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

#endif
