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

size_t cpulist_format(char *buf, size_t size, const struct cpumask *m)
{
	size_t len = 0;
	unsigned int cpu = 0;
	bool first = true;

	while (cpu < CPUMASK_BITS) {
		unsigned int end;

		if (!cpumask_test(m, cpu)) {
			cpu++;
			continue;
		}
		for (end = cpu;
		     end + 1 < CPUMASK_BITS && cpumask_test(m, end + 1); end++)
			;
		if (!first)
			put(buf, size, &len, ',');
		first = false;
		put_num(buf, size, &len, cpu);
		if (end > cpu) {
			put(buf, size, &len, '-');
			put_num(buf, size, &len, end);
		}
		cpu = end + 1;
	}
	if (size)
		buf[len < size ? len : size - 1] = '\0';
	return len;
}
