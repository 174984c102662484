/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the guest knows about its machine: the possible CPUs, by APIC ID,
 * and which of them are present at boot.  From the FDT the VMM passes
 * (fdt.c), else from the ACPI MADT (acpi.c).
 */
#ifndef GUEST_PLATFORM_H
#define GUEST_PLATFORM_H

#include "kernel.h"
#include "layout.h"

struct platform_cpu {
	u32 apic_id;
	bool enabled; /* present at boot: bring it up */
};

struct platform {
	const char *source; /* "fdt" or "acpi" */
	unsigned int nr_cpus;
	struct platform_cpu cpus[GUEST_MAX_CPUS];
};

extern struct platform platform;

/* Add a CPU, ignoring duplicates and overflow; for the parsers. */
void platform_add_cpu(u32 apic_id, bool enabled);

/* Fill platform: FDT first, then the MADT.  0 or -1 if neither is usable. */
int platform_init(void);

/* The parsers; each returns 0 when it found at least one CPU. */
int platform_from_fdt(const void *blob);
int platform_from_acpi(u64 rsdp_paddr);

#endif
