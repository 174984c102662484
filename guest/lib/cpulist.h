/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPU masks and their Linux cpulist rendering ("0-2,5").  No dependency on
 * the rest of the guest, so the host unit test can build it as is.
 */
#ifndef GUEST_CPULIST_H
#define GUEST_CPULIST_H

#include <stdbool.h>
#include <stddef.h>

#define CPUMASK_BITS  1024 /* GUEST_MAX_CPUS */
#define CPUMASK_WORDS (CPUMASK_BITS / 64)

struct cpumask {
	unsigned long long bits[CPUMASK_WORDS];
};

static inline void cpumask_set(struct cpumask *m, unsigned int cpu)
{
	if (cpu < CPUMASK_BITS)
		m->bits[cpu / 64] |= 1ull << (cpu % 64);
}

static inline void cpumask_clear(struct cpumask *m, unsigned int cpu)
{
	if (cpu < CPUMASK_BITS)
		m->bits[cpu / 64] &= ~(1ull << (cpu % 64));
}

static inline bool cpumask_test(const struct cpumask *m, unsigned int cpu)
{
	return cpu < CPUMASK_BITS && (m->bits[cpu / 64] >> (cpu % 64)) & 1;
}

unsigned int cpumask_weight(const struct cpumask *m);

/*
 * Write @m as a cpulist into @buf (always NUL-terminated when @size > 0):
 * ascending, runs of two or more as "a-b", comma separated, "" if empty.
 * Returns the length the full list needs, as snprintf does.
 */
size_t cpulist_format(char *buf, size_t size, const struct cpumask *m);

#endif
