/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A scripted guest for the API tests: the tiny guest's hotplug driver
 * without the tiny guest.  It runs the guest's table (guest_states.h) on
 * the cpuhp library and speaks the register block with the guest's own
 * driver (guest/hotplug/hpio.c), as guest/hotplug/hotplug.c does: on the
 * GED's interrupt it scans the block, walks inserted CPUs up and removed
 * ones down, ejects them, reports every step and takes the host's faults
 * and targets; it evaluates _OST as an ACPI guest does.  Its "vCPUs" are
 * the test's: kicking an AP starts it (fake_vcpu.c).
 *
 * Single instance, for one controller at a time.  Every entry point takes
 * the guest's lock: the interrupt comes from the controller's thread, the
 * script from the test's.
 */
#ifndef HOTVM_TESTS_SIM_GUEST_H
#define HOTVM_TESTS_SIM_GUEST_H

#include <stdbool.h>
#include <stdint.h>

/* How the guest reaches the machine: MMIO, and the SIPI of an AP. */
struct sim_guest_bus {
	uint32_t (*read)(void *ctx, uint64_t addr, unsigned int width);
	void (*write)(void *ctx, uint64_t addr, unsigned int width, uint32_t v);
	void (*sipi)(void *ctx, unsigned int cpu);
	void *ctx;
};

/*
 * Boots the guest on @max possible CPUs of which 0 .. @boot - 1 are
 * present: it says it reports its states, then brings every boot AP up.
 */
int sim_guest_boot(unsigned int max, unsigned int boot,
		   const struct sim_guest_bus *bus);
/*
 * Set before sim_guest_boot(): the guest does not yet say that it reports
 * (a tiny guest before its hotplug driver starts); sim_guest_report(0,
 * GUEST_ONLINE) says it later.
 */
extern bool sim_guest_late;
void sim_guest_stop(void);

/* The GED's interrupt (its rising edge). */
void sim_guest_interrupt(void);
/*
 * How many the guest has handled to the end: after that it touches the
 * registers (which drain the report ring) no more for that interrupt.
 */
unsigned int sim_guest_interrupts(void);

/*
 * Script.  keep: the guest answers no insert or eject request for @cpu
 * (its driver is stuck), so the host's hot-add or removal times out.  hold: the guest is in the
 * middle of a walk of @cpu (a late guest): it has reported a step and not
 * yet its DONE, which it reports on release.
 */
void sim_guest_keep(unsigned int cpu, bool keep);
void sim_guest_hold(unsigned int cpu, bool hold);

/*
 * The guest ejects @cpu on its own, as Linux's sysfs eject does: it walks
 * the CPU down, says _OST(OSPM eject, in progress), writes eject, then
 * _OST(OSPM eject, success).  0, or the walk's error.
 */
int sim_guest_eject(unsigned int cpu);

/*
 * A confused guest: it reports @cpu at @state (a DONE going up) whatever
 * its table says.
 */
void sim_guest_report(unsigned int cpu, int state);

/*
 * Before sim_guest_boot(): a guest like Linux, which reports nothing of
 * its table and answers an insert with _OST alone; with @onlines, its
 * user space onlines the CPU at once (a udev rule), else only
 * sim_guest_online() does (the guest agent's guest-set-vcpus).
 */
void sim_guest_linux(bool on, bool onlines);
int sim_guest_online(unsigned int cpu);
/*
 * Linux-like, with @on: an eject request for a CPU it has online waits
 * (no answer) until sim_guest_offline() offlines it (the guest agent's
 * guest-set-vcpus), then goes on: a guest whose removal path does not
 * offline by itself.
 */
void sim_guest_linux_waits_offline(bool on);
int sim_guest_offline(unsigned int cpu);

/* The guest's own state for @cpu, or -1. */
int sim_guest_state(unsigned int cpu);

#endif
