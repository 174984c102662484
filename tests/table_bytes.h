/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading the tables hotvm writes for the guest, as the tests and fuzz
 * harnesses check them: little-endian fields and the byte sum (an ACPI
 * table's sums to zero).
 */
#ifndef HOTVM_TESTS_TABLE_BYTES_H
#define HOTVM_TESTS_TABLE_BYTES_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static inline uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

#endif
