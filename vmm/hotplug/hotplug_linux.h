/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Linux's word through the guest agent, as the controller keeps it
 * (docs/design.md §6.6, §6.7): whether the VM has an agent and its
 * counters, a power-off through it, Linux's own state list and the steps
 * its table walked in an operation, and Linux's own fault injection.
 */
#ifndef HOTVM_HOTPLUG_LINUX_H
#define HOTVM_HOTPLUG_LINUX_H

#include <stdbool.h>
#include <stdint.h>

#include "hotplug_types.h"
#include "hv_err.h"

/*
 * One step of Linux's own table (its cpuhp_enter or cpuhp_multi_enter
 * and the matching cpuhp_exit), read from Linux's trace buffer after an
 * operation, on the host's clock (wall-clock microseconds, as the events'
 * timestamps).
 */
struct hp_linux_step {
	int linux_cpu;
	int state;	  /* the step: a number of Linux's state list */
	const char *name; /* its name in that list, or NULL */
	const char *fn;	  /* the callback's symbol */
	bool up, multi;
	int ret;
	int64_t start_us, end_us;
};

/* What the read of Linux's trace after an operation found. */
struct hp_linux_trace {
	unsigned int steps; /* paired steps reported */
	unsigned int enters, exits;
	unsigned int unmatched; /* an enter without its exit, or the reverse */
	unsigned int malformed; /* lines refused by the parser */
	unsigned int unmapped;	/* steps of a Linux CPU of no known slot */
	bool truncated;		/* the buffer was longer than hotvm reads */
	int64_t align_us;	/* the clocks' alignment: +- this */
	const char *error;	/* why there is no Linux lane, or NULL */
};

/* Whether the VM has the guest agent (--agent). */
bool hotplug_has_agent(const struct hotplug *hp);
/*
 * The agent protocol's counters and whether the agent answered last time;
 * -ENODEV without an agent.
 */
struct qga_stats;
int hotplug_agent_stats(struct hotplug *hp, struct qga_stats *st, bool *up);
/*
 * Asks the guest to power off through the agent (guest-shutdown, mode
 * powerdown); 0 once the agent has read the request (it never answers
 * one that works), -ENODEV without an agent, or the agent's error.
 */
int hotplug_agent_shutdown(struct hotplug *hp, struct hv_err *err);
/*
 * Linux's own state list, as read through the guest agent once per boot
 * (linux_trace.c): fills @out (may be NULL) and returns how many states,
 * 0 while not read (no agent, not yet, or unusable).
 */
struct lx_states;
unsigned int hotplug_linux_states(struct hotplug *hp, struct lx_states *out);
/*
 * The operation thread's work once an operation's reply is out: Linux's
 * trace of the operation's window is read and reported then
 * (CPUHP_LINUX_TRACE last), off the reply's path.  Nothing when no window
 * waits.
 */
void hotplug_after_reply(void *hp);
/*
 * Waits (up to a few agent timeouts) until no window waits for its read:
 * what a query says of Linux's states is then the last operation's.
 */
void hotplug_linux_trace_wait(struct hotplug *hp);

/*
 * Whether guest-side faults are Linux's own (the guest agent, and a guest
 * that does not report a table of its own): hotplug_linux_inject().
 */
bool hotplug_linux_faults(struct hotplug *hp);
/*
 * Linux's cpuN/hotplug/fail for @cpu, through the agent: @state is Linux's
 * number, or @name (if not NULL) its name, both checked against Linux's
 * list; CPUHP_INVALID without a name clears it.  The next removal of
 * @cpu has Linux offline it first and fails if Linux refuses.  A refusal's
 * reason goes to @rep (may be NULL): no such state, no fail file for the
 * CPU (hot-added), Linux's own no.
 */
int hotplug_linux_inject(struct hotplug *hp, unsigned int cpu, int state,
			 const char *name, struct hp_report *rep);

#endif
