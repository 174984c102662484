/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GUEST_TSC_H
#define GUEST_TSC_H

#include "kernel.h"

extern u64 tsc_khz;

/* Calibrate against the LAPIC timer; needs lapic_setup() on this CPU. */
void tsc_init(void);

static inline u64 tsc_deadline_us(u64 us)
{
	return rdtsc() + us * tsc_khz / 1000;
}

static inline bool tsc_passed(u64 deadline)
{
	return (int64_t)(rdtsc() - deadline) >= 0;
}

static inline u64 tsc_to_us(u64 cycles)
{
	return cycles * 1000 / tsc_khz;
}

void udelay(u64 us);

#endif
