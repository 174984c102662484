/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tiny guest's cpuhp table, once: its states' numbers, names and flags.
 * The guest builds its steps from it (guest/hotplug/cpuhp_table.c) and the
 * host its mirror (vmm/hotplug/hotplug_guest.c), a cpuhp machine of the same
 * shape whose rules judge the targets and faults a client asks of the guest,
 * and which names the states the guest reports through
 * ABI_CPUHP_CMD_GUEST_STATE.  Freestanding.
 */
#ifndef HOTVM_GUEST_STATES_H
#define HOTVM_GUEST_STATES_H

#include <stdbool.h>

/*
 * X(id, name, flags), in table order; the flags are cpuhp.h's CPUHP_F_*,
 * spelt only where the list is expanded with them.  A NULL name is a free
 * slot of the dynamic range.
 */
#define GUEST_STATES(X)                                                        \
	/* Where every CPU but the boot CPU starts. */                         \
	X(GUEST_OFFLINE, "offline", 0)                                         \
	/* Boot CPU: a clean per-CPU area before the AP can touch it. */       \
	X(GUEST_PERCPU_PREPARE, "percpu:prepare", 0)                           \
	/* Boot CPU: the stack the trampoline hands over, before the SIPI. */  \
	X(GUEST_SMPBOOT_PREPARE, "smpboot:prepare", 0)                         \
	/* Boot CPU: INIT-SIPI-SIPI without waiting, so APs start together. */ \
	X(GUEST_KICK_AP, "bringup:kick-ap", CPUHP_F_KICK)                      \
	/* Boot CPU: wait for the AP's mailbox loop; the AP states need it */  \
	X(GUEST_BRINGUP_CPU, "bringup:cpu", CPUHP_F_CANT_STOP)                 \
	/* AP, interrupts off: its LAPIC before anything that interrupts. */   \
	X(GUEST_AP_LAPIC, "ap:starting-lapic",                                 \
	  CPUHP_F_AP | CPUHP_F_NOFAIL | CPUHP_F_CANT_STOP)                     \
	/* AP, interrupts off: the timer needs the LAPIC on. */                \
	X(GUEST_AP_TIMER, "ap:starting-timer",                                 \
	  CPUHP_F_AP | CPUHP_F_NOFAIL | CPUHP_F_CANT_STOP)                     \
	/* AP: work counted on the timer's ticks; first state past starting */ \
	X(GUEST_AP_WORK, "ap:online-work", CPUHP_F_AP)                         \
	/* AP: free slots for states installed at run time (DYN range). */     \
	X(GUEST_AP_DYN_0, NULL, CPUHP_F_AP | CPUHP_F_DYN_ONLINE)               \
	X(GUEST_AP_DYN_1, NULL, CPUHP_F_AP | CPUHP_F_DYN_ONLINE)               \
	/* Boot CPU: into the online mask last, when the AP is all there. */   \
	X(GUEST_ONLINE, "online", 0)

#define GUEST_STATE_ENUM(id, name, flags) id,
enum guest_state {
	GUEST_STATES(GUEST_STATE_ENUM) GUEST_NR_STATES,
};
#undef GUEST_STATE_ENUM

/*
 * The guest's boot CPU is online before its table exists and is never
 * walked, so neither side may take it away: every host path that removes
 * or takes down a CPU asks guest_cpu_removable(), the one answer to "may
 * this CPU be removed?" (the register block ignores the boot CPU's eject,
 * the DSDT offers no _EJ0 for it).
 */
#define GUEST_BOOT_CPU 0

static inline bool guest_cpu_removable(unsigned int cpu)
{
	return cpu != GUEST_BOOT_CPU;
}

#endif
