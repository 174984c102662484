// SPDX-License-Identifier: GPL-2.0-only
/* The cpulist formatter; see cpulist.h.  Freestanding and host-testable. */
#include "cpulist.h"

unsigned int cpumask_weight(const struct cpumask *m)
{
	unsigned int n = 0;

	/* Not __builtin_popcount: without -mpopcnt that is a libgcc call. */
	for (unsigned int w = 0; w < CPUMASK_WORDS; w++)
		for (unsigned long long b = m->bits[w]; b; b &= b - 1)
			n++;
	return n;
}

static void put(char *buf, size_t size, size_t *len, char c)
{
	if (*len + 1 < size)
		buf[*len] = c;
	(*len)++;
}

static void put_num(char *buf, size_t size, size_t *len, unsigned int v)
{
	char tmp[12];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		put(buf, size, len, tmp[--n]);
}

/*
 * The first CPU at or after @cpu whose bit is @set, else CPUMASK_BITS.
 * A word at a time: a bit-by-bit walk of 1024 bits costs milliseconds on
 * the software /dev/kvm, and the online line is printed on every hotplug.
 * (__builtin_ctzll is one bsf, no libgcc call.)
 */
static unsigned int next_bit(const struct cpumask *m, unsigned int cpu,
			     bool set)
{
	while (cpu < CPUMASK_BITS) {
		unsigned long long w = m->bits[cpu / 64];

		if (!set)
			w = ~w;
		w &= ~0ull << (cpu % 64);
		if (w)
			return (cpu & ~63u) + (unsigned int)__builtin_ctzll(w);
		cpu = (cpu | 63u) + 1;
	}
	return CPUMASK_BITS;
}

size_t cpulist_format(char *buf, size_t size, const struct cpumask *m)
{
	size_t len = 0;
	unsigned int cpu = next_bit(m, 0, true);
	bool first = true;

	while (cpu < CPUMASK_BITS) {
		unsigned int end = next_bit(m, cpu, false) - 1;

		if (!first)
			put(buf, size, &len, ',');
		first = false;
		put_num(buf, size, &len, cpu);
		if (end > cpu) {
			put(buf, size, &len, '-');
			put_num(buf, size, &len, end);
		}
		cpu = next_bit(m, end + 1, true);
	}
	if (size)
		buf[len < size ? len : size - 1] = '\0';
	return len;
}
