/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's CPU-hotplug state table, on the cpuhp library, modelled on
 * Linux's kernel/cpu.c:
 *
 *   offline
 *   percpu:prepare        boot CPU: reset the per-CPU area
 *   smpboot:prepare       boot CPU: hand out the AP's stack
 *   bringup:kick-ap       boot CPU, KICK: INIT-SIPI-SIPI, no waiting
 *                         (teardown: INIT, the AP waits for a SIPI again)
 *   bringup:cpu           boot CPU: wait until the AP is in its mailbox loop
 *                         (teardown: park the AP and wait until it has)
 *   ap:starting-lapic     AP, interrupts off, no-fail: LAPIC/x2APIC on
 *   ap:starting-timer     AP, interrupts off, no-fail: LAPIC timer on
 *   ap:online-work        AP: the per-CPU work loop on
 *   online                boot CPU: into the online mask, "online: ..." line
 *
 * Every callback records in a per-state, per-CPU bookkeeping bit whether
 * its startup has run (and its teardown not since), so that a check can
 * compare it with the library's view after every operation.
 */
#ifndef GUEST_CPUHP_TABLE_H
#define GUEST_CPUHP_TABLE_H

#include "cpuhp.h"
#include "cpulist.h"
#include "kernel.h"

extern struct cpuhp_machine hp_machine;
extern struct cpumask cpu_online_mask;

/* Build the machine for @nr_cpus logical CPUs; CPU 0 (boot) is online. */
int hp_init(unsigned int nr_cpus, bool trace);

/* Bring @n CPUs up, in parallel (kick all, then finish each) or not. */
int hp_bringup(const unsigned int *cpus, unsigned int n, bool parallel);

/* Print "online: <cpulist>". */
void hp_print_online(void);

/*
 * 0 when @cpu's bookkeeping, hardware view and online mask agree with its
 * cpuhp state; else prints every mismatch and returns their number.
 */
int hp_check_cpu(unsigned int cpu);

const char *hp_state_name(int state);

#endif
