/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hotplug controller's life cycle, for `hotvm run` (its words are in
 * hotplug_types.h, the operations in hotplug.h).  The controller owns
 * every vCPU slot, the GED and the CPU-hotplug register block, and
 * registers both on the MMIO bus.
 */
#ifndef HOTVM_HOTPLUG_VMM_H
#define HOTVM_HOTPLUG_VMM_H

#include <stdint.h>

#include "hotplug_types.h" /* enum hotplug_boot_mode */

struct hooks;
struct hotplug;
struct qga;
struct bus;
struct ged;
struct hpregs;
struct vm;

struct hotplug_config {
	struct vm *vm;
	const struct bus *io;
	struct bus *mmio; /* what the vCPUs' MMIO exits reach */
	/* The machine's GED and register block (set up, on the MMIO bus). */
	struct ged *ged;
	struct hpregs *regs;
	unsigned int boot_cpus;
	unsigned int max_cpus;
	const struct hooks *hooks; /* may be NULL */
	int timeout_ms;		   /* <= 0: HOTPLUG_DEFAULT_TIMEOUT_MS */
	enum hotplug_wait wait;	   /* DEFAULT: ACKNOWLEDGED */
	unsigned int prestage;	   /* free slots kept at vcpu:create */
	enum hotplug_guest_eject guest_eject;
	/*
	 * The guest agent on the second UART (--agent), or NULL: then
	 * nothing is asked of the guest beyond the wire, as before.
	 */
	struct qga *agent;
	/*
	 * With the agent: mirror Linux's cpuhp table (its state list, its
	 * trace around each operation; --agent-trace on).  Off by default:
	 * it costs agent calls before and after every operation
	 * (docs/benchmarks.md).
	 */
	bool linux_trace;
};

/*
 * Allocates the controller and its tables and attaches it to the GED and
 * the register block; no vCPU yet.
 */
int hotplug_create(const struct hotplug_config *cfg, struct hotplug **out);

/*
 * The boot vCPU's entry, for the next hotplug_boot(): PVH (start_info =
 * hvm_start_info) or the Linux 64-bit boot protocol (start_info = the
 * zero page, on the tables at ABI_BOOT64_PADDR).
 */
void hotplug_set_entry(struct hotplug *hp, enum hotplug_boot_mode mode,
		       uint64_t entry, uint64_t start_info);

/*
 * Whether @cpu is present when the guest boots: the boot CPUs, and after
 * a reset every CPU the guest had.  The firmware tables say so.
 */
bool hotplug_present_at_boot(struct hotplug *hp, unsigned int cpu);

/*
 * Brings every vCPU present at boot up through the host table (without
 * waiting for the guest), the boot CPU last so that it finds the others
 * when it runs; then operations may run.  On failure the vCPUs already up
 * stay up: hotplug_unboot() takes them.
 */
int hotplug_boot(struct hotplug *hp);

/*
 * The reverse, for a reset and at the end: waits for the operation in
 * progress, walks every vCPU down to offline (hooks run, but cannot veto:
 * the guest is gone already; nothing is asked of the guest), remembers the
 * ones the guest had as present at the next boot, and forgets what the
 * guest said (register block, GED, the mirror of its table).
 */
void hotplug_unboot(struct hotplug *hp);

/*
 * A reset is coming: the operation in progress stops waiting for the
 * guest (-ECANCELED) and new ones wait until hotplug_boot().  Any thread.
 */
void hotplug_reset_begin(struct hotplug *hp);

/*
 * How many threads wait at the operation gate (hp_op_enter()) now: lets a
 * test know an operation has reached it, without sleeping.  Any thread.
 */
unsigned int hotplug_op_waiters(struct hotplug *hp);

/*
 * The machine thread's share of the guest's own requests: honours the
 * ejects the guest wrote unasked (the CPU walks down, DEVICE_DELETED).
 * Called when the VM's stop_efd wakes it; never blocks on an operation in
 * progress (its end wakes the machine thread again).
 */
void hotplug_guest_work(struct hotplug *hp);

/*
 * The VM is stopping: wakes every wait (an operation in progress fails
 * with -ESHUTDOWN) and refuses new operations.  Any thread.
 */
void hotplug_shutdown(struct hotplug *hp);

/*
 * The periodic check of Linux's CPUs through the agent: stages and the
 * online set follow what Linux says.  @quick as hp_linux_refresh().  0,
 * -ENODEV without an agent, -EBUSY while an operation runs (it asks
 * Linux itself), or the agent's error.
 */
int hotplug_agent_refresh(struct hotplug *hp, bool quick);
/*
 * Runs that check every @period_ms on a thread of its own (seccomp type
 * agent-check), never on the machine thread: a slow or lying agent then
 * delays only the next check.  0 without an agent, or
 * -errno.  Stop joins it, cancelling the agent's call in flight
 * (qga_cancel(): for good, so only at the end); idempotent.
 */
int hotplug_agent_watch_start(struct hotplug *hp, int period_ms);
/*
 * The wait before a path that could not be read is asked again, the
 * first time (it doubles with each miss, up to 10 min); 0: 10 s.  Tests.
 */
void hotplug_agent_set_miss_wait(struct hotplug *hp, unsigned int first_ms);
void hotplug_agent_watch_stop(struct hotplug *hp);

/* Closes every vCPU fd, frees everything.  NULL is fine. */
void hotplug_destroy(struct hotplug *hp);

#endif
