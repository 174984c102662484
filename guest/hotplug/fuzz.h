/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz-regs[=N]: for the VMM's robustness test.  After "ready", random
 * accesses (widths 1, 2, 4, 8, misaligned, a few bytes either side) to the
 * GED and the register block, run from the boot CPU's idle loop in small
 * chunks so that hotplug events are still served in between.
 */
#ifndef GUEST_FUZZ_H
#define GUEST_FUZZ_H

#include "kernel.h"

#define FUZZ_DEFAULT_ITERATIONS 20000

/* Seed from the TSC (printed) and arm @iterations accesses. */
void fuzz_init(unsigned int iterations);
bool fuzz_pending(void);
/* One chunk; prints "fuzz: done" after the last. */
void fuzz_step(void);

/* The PRNG, exposed for the unit test: xorshift64, never 0. */
u64 fuzz_xorshift64(u64 *state);

#endif
