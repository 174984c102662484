/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hotplug controller's operations on one vCPU and its queries: the
 * per-vCPU host state table (docs/design.md §4), its mirror of the
 * guest's table, and what the control API drives.  Every operation is
 * synchronous and returns a negative errno; they run one at a time (the
 * operation gate, docs/design.md §8).  Operations on many vCPUs are in
 * hotplug_many.h, Linux's word through the agent in hotplug_linux.h.
 */
#ifndef HOTVM_HOTPLUG_H
#define HOTVM_HOTPLUG_H

#include <stdbool.h>
#include <stdint.h>

#include "cpuhp.h"
#include "cpuhp_regs.h"
#include "ged.h"
#include "hotplug_types.h"

void hotplug_set_events(struct hotplug *hp, const struct hp_events *ev);

unsigned int hotplug_max_cpus(const struct hotplug *hp);
int hotplug_cpu_view(struct hotplug *hp, unsigned int cpu,
		     struct hp_cpu_view *v);

/* The tables, for introspection: number of states, info, lookup. */
int hotplug_nr_states(const struct hotplug *hp, enum hp_side side);
int hotplug_state_info(struct hotplug *hp, enum hp_side side, int state,
		       struct cpuhp_state_info *info);
/* A state by name or decimal number; -ENOENT if there is none. */
int hotplug_state_lookup(struct hotplug *hp, enum hp_side side,
			 const char *name);

/*
 * Hot-add @cpu: host table to online, which presents it to the guest and
 * waits for the guest.  @id is the QMP device id to remember (may be NULL).
 * @timeout_ms <= 0 means the --hotplug-timeout default; @wait what to wait
 * for with a guest that does not report (HOTPLUG_WAIT_DEFAULT: the VM's).
 * -EEXIST if online already, -EINVAL for a bad slot, -EBUSY if the guest
 * is still walking it, -ETIME if the guest acknowledged the CPU but did not
 * start it in time (rolled back), -ENOTRECOVERABLE if an earlier failed
 * rollback left it broken (see hotplug_cpu_recover()).  A CPU already
 * partly up keeps the id it has when @id is NULL, and any failure leaves
 * the id as it was.  A timed-out add the guest has seen is withdrawn as a
 * removal the guest answers before the vCPU is stopped.
 */
int hotplug_cpu_add(struct hotplug *hp, unsigned int cpu, const char *id,
		    int timeout_ms, enum hotplug_wait wait,
		    struct hp_report *rep);

/*
 * Hot-remove @cpu: host table to offline (eject request, guest offlines and
 * ejects, thread held and fd parked).  -EPERM for cpu 0, -ENODEV if not
 * present, -ETIMEDOUT if the guest did not eject in time (it stays online),
 * -ENOTRECOVERABLE if it is broken.
 */
int hotplug_cpu_remove(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		       struct hp_report *rep);

/*
 * cpuhp-recover: puts @cpu's two sides back in line after a failed
 * rollback left it broken (operations on a broken CPU are refused with
 * -ENOTRECOVERABLE).  A guest-side broken mark is cleared by the guest,
 * which takes the CPU offline; then the host's mark is cleared and the
 * host table walks to online if the guest holds the CPU (its table at
 * online, or for a guest that does not report, its _OST or start seen,
 * and the CPU present), else to offline, ejecting it from the guest if
 * the guest still has it present; a CPU that ends offline loses its id
 * with a DEVICE_DELETED, as after a removal.  *online says where it
 * ended.  Also re-syncs a CPU that is not broken.  -EPERM for cpu 0.
 */
int hotplug_cpu_recover(struct hotplug *hp, unsigned int cpu, int timeout_ms,
			struct hp_report *rep, bool *online);

/*
 * What the front ends call "plugged" and "counted", decided here once.
 * Plugged: the slot is taken (host table above offline), unless it is
 * only a pre-staged free slot.  Counted: a vCPU the guest really runs as
 * far as the host can tell (host table at online, nothing broken, sides
 * in agreement, a reporting guest has it online too, and with the guest
 * agent Linux does not say it has it offline): what a resize counts and
 * query-cpus-fast lists.
 */
bool hotplug_cpu_plugged(const struct hp_cpu_view *v);
bool hotplug_cpu_counted(const struct hp_cpu_view *v);

/*
 * Whether a hot-add of @cpu with @id (may be NULL) may start: -EINVAL for
 * a bad slot, -EADDRINUSE if another slot has @id, -EEXIST if the slot is
 * taken (plugged, and not merely created ahead of the guest).
 */
int hotplug_add_check(struct hotplug *hp, unsigned int cpu, const char *id);

/*
 * QMP's system_powerdown: a press of the ACPI power button (the GED's
 * ABI_GED_EVT_PWRBTN); the guest decides what it does.  0 or -errno.
 */
int hotplug_power_button(struct hotplug *hp);

/* Whether the guest has been started once (query-status's "prelaunch"). */
bool hotplug_started(struct hotplug *hp);

/*
 * The agreement check (docs: the two tables never disagree): for every
 * vCPU, the host table, the register block (what the guest is shown),
 * the guest's last report (a reporting guest) and the online set the
 * events announced must say the same.  It runs when every operation
 * ends and on demand (query-cpuhp); a CPU the guest ejected by itself is
 * followed (hotplug_guest_work()), anything else marks the CPU as needing
 * cpuhp-recover, with an event.  Returns how many CPUs disagree, or
 * -EBUSY while an operation runs (its end checks).
 */
int hotplug_check(struct hotplug *hp);

/* Linux's cpuN/hotplug/target, on either side. */
int hotplug_set_target(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		       int state, int timeout_ms, struct hp_report *rep);

/* Each operation kind's sums of time, own share and exits. */
void hotplug_own_stats(struct hotplug *hp,
		       struct hp_own_stats out[HP_OP_KINDS]);

/*
 * What the guest did to the GED and the register block, with every access
 * they ignored by reason: a hostile or confused guest shows up here.
 */
void hotplug_device_stats(struct hotplug *hp, struct hpregs_stats *regs,
			  struct ged_stats *ged);

/*
 * Linux's cpuN/hotplug/fail, on either side.  A guest-side fault is handed
 * to the guest with its next operation on that CPU.  A refusal's reason
 * goes to @rep (may be NULL).
 */
int hotplug_inject(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		   int state, struct hp_report *rep);

#endif
