/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's CPU-hotplug state table, on the cpuhp library, modelled on
 * Linux's kernel/cpu.c: prepare states on the boot CPU, a kick state for
 * parallel bring-up, starting states on the AP with interrupts off, online
 * states.  The states, their order and flags are include/hotvm/guest_states.h
 * (shared with the host's mirror); cpuhp_table.c gives each its work.
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

/*
 * Build the machine for @nr_cpus logical CPUs; CPU 0 (boot) is online.
 * Every notice of the table goes to @report (the host's mirror, hotplug.c).
 */
int hp_init(unsigned int nr_cpus, bool trace,
	    void (*report)(const struct cpuhp_notice *n));

/* Bring @n CPUs up, in parallel (kick all, then finish each) or not. */
int hp_bringup(const unsigned int *cpus, unsigned int n, bool parallel);

/*
 * The parallel bring-up of @n CPUs, each CPU's result in @results[i]:
 * every AP kicked, then every AP state run on all of them at once
 * (cpuhp_bringup_cpus in lockstep), one "online:" line at the end.  The
 * caller reports each CPU's DONE.
 */
int hp_bringup_batch(const unsigned int *cpus, unsigned int n, int *results);

/*
 * How many other CPUs of @cpus ran their AP-starting states (from the
 * first's entry to the last's exit, on the AP's own TSC) while @cpu ran
 * its own, in the last parallel bring-up: 0 for a bring-up one CPU after
 * another.
 */
unsigned int hp_starting_overlaps(unsigned int cpu, const unsigned int *cpus,
				  unsigned int n);

/* Print "online: <cpulist>". */
void hp_print_online(void);

/*
 * 0 when @cpu's bookkeeping, hardware view and online mask agree with its
 * cpuhp state; else prints every mismatch and returns their number.
 */
int hp_check_cpu(unsigned int cpu);

const char *hp_state_name(int state);

/* Inside a parallel bring-up: its kick-phase DONEs are not reported. */
bool hp_in_parallel(void);
/*
 * Reports @cpu's operation as over, with its result: a DONE for an
 * operation the library did not walk (no-op or refused), or the one
 * result of a parallel bring-up.
 */
void hp_report_done(unsigned int cpu, bool up, int ret);

#endif
