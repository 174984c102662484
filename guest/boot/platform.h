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

/* Defaults when the FDT/MADT does not say (hotvm/abi.h, the PC's IOAPIC). */
#define PLATFORM_IOAPIC_DEFAULT 0xfec00000UL

struct platform {
	const char *source; /* "fdt" or "acpi" */
	unsigned int nr_cpus;
	struct platform_cpu cpus[GUEST_MAX_CPUS];

	/* Hotplug devices: from the FDT, else the ABI constants. */
	u64 ioapic_base;
	bool ioapic_found; /* MADT IOAPIC entry with GSI base 0 */
	u64 ged_base;
	u32 ged_irq; /* GSI */
	bool ged_found;
	u64 cpuhp_base;
	bool cpuhp_found;
	/*
	 * hotvm's report ring (hotvm/ring.h), from the cpuhp node's
	 * properties only: 0 without them (QEMU), and then the registers.
	 */
	u64 ring_base, ring_size;
	u32 ring_doorbell;

	/*
	 * ACPI fixed hardware from the FADT (acpi.c): what QEMU's q35 path
	 * needs.  hotvm's FADT is hardware-reduced (no GPE block).
	 */
	bool fadt_found;
	bool hw_reduced;
	u32 sci_gsi; /* SCI_INT, through a MADT interrupt source override */
	bool sci_level;
	bool sci_active_low;
	u32 smi_cmd; /* port; 0: ACPI mode is always on */
	u8 acpi_enable;
	u32 pm1a_cnt; /* port */
	u32 gpe0_blk; /* port: status half, then enable half */
	u8 gpe0_len;
};

extern struct platform platform;

/* Add a CPU, ignoring duplicates and overflow; for the parsers. */
void platform_add_cpu(u32 apic_id, bool enabled);

/* The ABI's device addresses; platform_init() starts from them. */
void platform_set_defaults(void);

/* Fill platform: FDT first, then the MADT.  0 or -1 if neither is usable. */
int platform_init(void);

/* The parsers; each returns 0 when it found at least one CPU. */
int platform_from_fdt(const void *blob);
int platform_from_acpi(u64 rsdp_paddr);

#endif
