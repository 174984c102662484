/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the fuzz harnesses: libFuzzer's entry point, an invariant check
 * that aborts (libFuzzer and the replay driver both report an abort as a
 * finding, with the input that caused it), and a reader that turns the
 * fuzzer's bytes into operations.  The reader returns zeros once the input
 * is used up, so every input, however short, is a valid program.
 */
#ifndef HOTVM_TESTS_FUZZ_H
#define HOTVM_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: invariant broken: %s\n",       \
				__FILE__, __LINE__, #cond);                    \
			abort();                                               \
		}                                                              \
	} while (0)

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline size_t fuzz_left(const struct fuzz_in *in)
{
	return in->n;
}

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* Little-endian, as the guest would write it. */
static inline uint64_t fuzz_uint(struct fuzz_in *in, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes; i++)
		v |= (uint64_t)fuzz_u8(in) << (8 * i);
	return v;
}

/* Up to want bytes, pointing into the input; *got says how many. */
static inline const uint8_t *fuzz_bytes(struct fuzz_in *in, size_t want,
					size_t *got)
{
	const uint8_t *p = in->p;

	*got = want < in->n ? want : in->n;
	in->p += *got;
	in->n -= *got;
	return p;
}

/*
 * Guest memory scribbled between steps: up to 255 bytes of the input
 * written at an offset the input picks in [BASE, BASE + SIZE) of MEM
 * (addressed from guest address 0), cut at BASE + SIZE.
 */
static inline void fuzz_scribble(struct fuzz_in *in, uint8_t *mem,
				 uint64_t base, uint64_t size)
{
	uint64_t at = base + fuzz_uint(in, 2) % size;
	size_t want = fuzz_u8(in), got;
	const uint8_t *p = fuzz_bytes(in, want, &got);

	if (got > base + size - at)
		got = base + size - at;
	memcpy(mem + at, p, got);
}

/* Is p[0..n) all zero?  For "nothing was written" checks. */
static inline int fuzz_all_zero(const uint8_t *p, size_t n)
{
	static const uint8_t zero[4096];

	while (n) {
		size_t k = n < sizeof(zero) ? n : sizeof(zero);

		if (memcmp(p, zero, k))
			return 0;
		p += k;
		n -= k;
	}
	return 1;
}

/* why[] after a failure: a message, NUL-terminated inside its buffer. */
static inline int fuzz_why_ok(const char *why, size_t len)
{
	return why[0] && memchr(why, 0, len) != NULL;
}

#endif
