/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ACPI table builder: RSDP (rev 2) -> XSDT -> FADT (6.3, hardware-reduced,
 * with the sleep control, sleep status and reset registers of the
 * power-management device) and MADT (rev 5); FADT -> DSDT.  Every possible CPU gets a MADT entry:
 * boot CPUs Enabled, the others Online Capable.
 */
#ifndef HOTVM_ACPI_H
#define HOTVM_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"

#define ACPI_RSDP_SIZE		36
#define ACPI_HEADER_SIZE	36
#define ACPI_FADT_SIZE		276
#define ACPI_FADT_REVISION	6
#define ACPI_FADT_MINOR		3
#define ACPI_MADT_REVISION	5
#define ACPI_FADT_HW_REDUCED	(1U << 20)
#define ACPI_FADT_RESET_REG_SUP (1U << 10)
#define ACPI_GAS_SYSTEM_IO	1
#define ACPI_FADT_NO_VGA	(1U << 2) /* IAPC_BOOT_ARCH bits */
#define ACPI_FADT_NO_CMOS_RTC	(1U << 5)

/* MADT interrupt controller structure types and Local APIC flags. */
#define ACPI_MADT_LAPIC		 0
#define ACPI_MADT_IOAPIC	 1
#define ACPI_MADT_X2APIC	 9
#define ACPI_MADT_ENABLED	 (1U << 0)
#define ACPI_MADT_ONLINE_CAPABLE (1U << 1)

#define ACPI_LAPIC_ADDR	 0xfee00000U
#define ACPI_IOAPIC_ADDR 0xfec00000U

struct acpi_config {
	uint64_t base; /* guest-physical address of buf[0]; RSDP goes there */
	unsigned int boot_cpus;
	unsigned int max_cpus; /* APIC ID of CPU n is n */
	/*
	 * max_cpus entries: Enabled in the MADT (present at boot); NULL:
	 * the first boot_cpus.  A reset boots with the CPUs the guest had.
	 */
	const bool *present;
	const struct dev_instance *devs; /* the machine's devices (DSDT) */
	size_t nr_devs;
};

/* Builds the tables into buf.  Returns the bytes used or -E2BIG/-EINVAL. */
long acpi_build(void *buf, size_t size, const struct acpi_config *cfg);

/* The byte that makes p[0..len) sum to zero when stored in it. */
uint8_t acpi_checksum(const void *p, size_t len);

#endif
