/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hotplug controller's life cycle, for `hotvm run` (the operations are
 * in hotplug.h).  The controller owns every vCPU slot, the GED and the
 * CPU-hotplug register block, and registers both on the MMIO bus.
 */
#ifndef HOTVM_HOTPLUG_VMM_H
#define HOTVM_HOTPLUG_VMM_H

#include <stdint.h>

#include "hotplug.h" /* enum hotplug_boot_mode */

struct hooks;
struct hotplug;
struct bus;
struct vm;

struct hotplug_config {
	struct vm *vm;
	const struct bus *io;
	struct bus *mmio; /* the GED and the register block go here */
	unsigned int boot_cpus;
	unsigned int max_cpus;
	const struct hooks *hooks; /* may be NULL */
	int timeout_ms;		   /* <= 0: HOTPLUG_DEFAULT_TIMEOUT_MS */
	enum hotplug_wait wait;	   /* DEFAULT: ACKNOWLEDGED */
	unsigned int prestage;	   /* free slots kept at vcpu:create */
	/*
	 * The boot vCPU's entry: PVH (start_info = hvm_start_info) or the
	 * Linux 64-bit boot protocol (start_info = the zero page, on the
	 * tables at ABI_BOOT64_PADDR).
	 */
	enum hotplug_boot_mode boot_mode;
	uint64_t entry;
	uint64_t start_info;
};

/* Allocates the controller, its devices and tables; no vCPU yet. */
int hotplug_create(const struct hotplug_config *cfg, struct hotplug **out);

/*
 * Brings every boot vCPU up through the host table (without waiting for
 * the guest), the boot CPU last so that it finds the others when it runs.
 * On failure the vCPUs already up stay up: hotplug_destroy() takes them.
 */
int hotplug_boot(struct hotplug *hp);

/*
 * The VM is stopping: wakes every wait (an operation in progress fails
 * with -ESHUTDOWN) and refuses new operations.  Any thread.
 */
void hotplug_shutdown(struct hotplug *hp);

/* After the control thread is gone: stops and joins every vCPU thread. */
void hotplug_stop_vcpus(struct hotplug *hp);

/* Closes every vCPU fd, frees everything.  NULL is fine. */
void hotplug_destroy(struct hotplug *hp);

#endif
