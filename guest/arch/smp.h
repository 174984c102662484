/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * SMP: logical CPU ids, the INIT-SIPI trampoline, and the AP's life:
 *
 *   wait-for-SIPI --kick--> trampoline --> mailbox loop (alive)
 *        ^                                     |
 *        +------ INIT <---- parked (cli; hlt) <+ park request
 *
 * An AP runs nothing on its own: everything it does comes through its
 * mailbox (smp_call_on_cpu), always with interrupts off, which is how the
 * cpuhp AP states execute on the AP.  Between requests it halts: with
 * interrupts on once its LAPIC can take the doorbell IPI, else with
 * interrupts off until an NMI.  The boot CPU halts too while it waits for
 * an AP (alive, parked, a mailbox result), until the AP's VEC_WAKE IPI.
 */
#ifndef GUEST_SMP_H
#define GUEST_SMP_H

#include "percpu.h"

extern unsigned int smp_nr_possible; /* logical ids 0 .. nr-1 */

/*
 * Assign logical ids (0 = the boot CPU, then the platform's order) and
 * install the trampoline.  Returns the number of possible CPUs.
 */
unsigned int smp_init(void);

/* The stack an AP takes in the trampoline; 0 blocks its start-up. */
void smp_set_stack(unsigned int cpu, bool on);

static inline u64 smp_stack_top_of(unsigned int cpu)
{
	extern u64 smp_stack_top[GUEST_MAX_CPUS];

	return smp_stack_top[cpu];
}

/* INIT-SIPI, without waiting for the AP (smp_wait_alive() SIPIs again). */
void smp_kick(unsigned int cpu);
/* Wait until the kicked AP is in its mailbox loop: 0 or -ETIMEDOUT. */
int smp_wait_alive(unsigned int cpu, u64 timeout_us);
/* Ask the AP to park and wait until it has: 0 or -ETIMEDOUT. */
int smp_park(unsigned int cpu, u64 timeout_us);
/* INIT alone: whatever the AP was doing, it now waits for a SIPI. */
void smp_reset(unsigned int cpu);

/*
 * Run @fn(@arg) on @cpu with interrupts off and return its result;
 * directly when @cpu is the caller.  -ETIMEDOUT if the AP does not answer.
 */
int smp_call_on_cpu(unsigned int cpu, int (*fn)(void *), void *arg);
/*
 * smp_call_on_cpu in two halves, so that the boot CPU can have a call in
 * flight on several APs at once: post it (0, or -ENODEV: the AP is not in
 * its mailbox loop, fn will not run), then wait for its result.
 */
int smp_call_start(unsigned int cpu, int (*fn)(void *), void *arg);
int smp_call_wait(unsigned int cpu);

/*
 * The boot CPU's waits for its APs: those that may halt (interrupts on),
 * their halts, the APs' wake-ups (VEC_WAKE) and the timer's expiries.
 */
struct smp_wait_stats {
	u64 waits, halts, wakes, slices;
};
void smp_get_wait_stats(struct smp_wait_stats *st);

/* Entered from the trampoline (entry.S) on the AP's own stack. */
void __noreturn smp_ap_main(unsigned int cpu);

#endif
