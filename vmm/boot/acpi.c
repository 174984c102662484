// SPDX-License-Identifier: GPL-2.0-only
/*
 * ACPI tables for a hardware-reduced x86 machine.  Fields are written byte
 * by byte at their offsets from the ACPI 6.3 specification, so the builder
 * depends on neither host endianness nor struct packing.
 */
#include <errno.h>
#include <string.h>

#include "acpi.h"
#include "dsdt.h"
#include "hotvm/abi.h"

#define ACPI_OEM_ID	  "HOTVM "
#define ACPI_OEM_TABLE_ID "HOTVMTBL"
#define ACPI_CREATOR_ID	  "HTVM"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

uint8_t acpi_checksum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum += b[i];
	return (uint8_t)(0 - sum);
}

/* The common 36-byte header; the checksum is filled in by header_end(). */
static void header(uint8_t *t, const char *sig, uint32_t len, uint8_t rev)
{
	memcpy(t, sig, 4);
	put32(t + 4, len);
	t[8] = rev;
	t[9] = 0;
	memcpy(t + 10, ACPI_OEM_ID, 6);
	memcpy(t + 16, ACPI_OEM_TABLE_ID, 8);
	put32(t + 24, 1);
	memcpy(t + 28, ACPI_CREATOR_ID, 4);
	put32(t + 32, 1);
}

static void header_end(uint8_t *t, uint32_t len)
{
	t[9] = acpi_checksum(t, len);
}

static void build_rsdp(uint8_t *t, uint64_t xsdt)
{
	memcpy(t, "RSD PTR ", 8);
	memcpy(t + 9, ACPI_OEM_ID, 6);
	t[15] = 2;	  /* ACPI 2.0+: the XSDT is authoritative */
	put32(t + 16, 0); /* no RSDT */
	put32(t + 20, ACPI_RSDP_SIZE);
	put64(t + 24, xsdt);
	t[8] = acpi_checksum(t, 20);
	t[32] = acpi_checksum(t, ACPI_RSDP_SIZE);
}

static uint32_t madt_size(const struct acpi_config *cfg)
{
	uint32_t n = ACPI_HEADER_SIZE + 8 + 12; /* header, LAPIC addr, IOAPIC */

	for (unsigned int i = 0; i < cfg->max_cpus; i++)
		n += i < 255 ? 8 : 16;
	return n;
}

static void build_madt(uint8_t *t, const struct acpi_config *cfg)
{
	uint32_t len = madt_size(cfg);
	uint8_t *e = t + ACPI_HEADER_SIZE + 8;

	header(t, "APIC", len, ACPI_MADT_REVISION);
	put32(t + 36, ACPI_LAPIC_ADDR);
	put32(t + 40, 0); /* no PC-AT dual 8259: the guest uses the IOAPIC */

	for (unsigned int i = 0; i < cfg->max_cpus; i++) {
		bool on = cfg->present ? cfg->present[i] : i < cfg->boot_cpus;
		uint32_t flags =
			on ? ACPI_MADT_ENABLED : ACPI_MADT_ONLINE_CAPABLE;

		/* xAPIC entries cannot hold APIC ID 255 (broadcast) or more. */
		if (i < 255) {
			e[0] = ACPI_MADT_LAPIC;
			e[1] = 8;
			e[2] = (uint8_t)i; /* ACPI processor UID */
			e[3] = (uint8_t)i; /* APIC ID */
			put32(e + 4, flags);
			e += 8;
		} else {
			e[0] = ACPI_MADT_X2APIC;
			e[1] = 16;
			put16(e + 2, 0);
			put32(e + 4, i); /* x2APIC ID */
			put32(e + 8, flags);
			put32(e + 12, i); /* ACPI processor UID */
			e += 16;
		}
	}
	e[0] = ACPI_MADT_IOAPIC;
	e[1] = 12;
	e[2] = 0; /* IOAPIC ID: KVM's in-kernel IOAPIC has ID 0 */
	e[3] = 0;
	put32(e + 4, ACPI_IOAPIC_ADDR);
	put32(e + 8, 0); /* GSI base */
	header_end(t, len);
}

/* A Generic Address Structure for one byte at an I/O port. */
static void put_gas_io8(uint8_t *p, uint16_t port)
{
	p[0] = ACPI_GAS_SYSTEM_IO;
	p[1] = 8; /* register bit width */
	p[2] = 0; /* bit offset */
	p[3] = 1; /* access size: byte */
	put64(p + 4, port);
}

static void build_fadt(uint8_t *t, uint64_t dsdt)
{
	header(t, "FACP", ACPI_FADT_SIZE, ACPI_FADT_REVISION);
	/* 32-bit DSDT pointer only when it fits; X_DSDT always. */
	put32(t + 40, dsdt < (1ULL << 32) ? (uint32_t)dsdt : 0);
	/*
	 * IAPC_BOOT_ARCH: no VGA, no CMOS RTC (without that bit Linux probes
	 * the missing RTC for about 3 s).
	 */
	put16(t + 109, ACPI_FADT_NO_VGA | ACPI_FADT_NO_CMOS_RTC);
	put32(t + 112, ACPI_FADT_HW_REDUCED | ACPI_FADT_RESET_REG_SUP);
	/* Linux's first way to reboot; QEMU's q35 has it too. */
	put_gas_io8(t + 116, ABI_PM_PORT + ABI_PM_RESET);
	t[128] = ABI_PM_RESET_VALUE;
	t[131] = ACPI_FADT_MINOR;
	put64(t + 140, dsdt);
	/* Hardware-reduced S5: Linux powers off only with both. */
	put_gas_io8(t + 244, ABI_PM_PORT + ABI_PM_SLEEP_CTL);
	put_gas_io8(t + 256, ABI_PM_PORT + ABI_PM_SLEEP_STS);
	memcpy(t + 268, "HOTVM\0\0\0", 8); /* hypervisor vendor identity */
	header_end(t, ACPI_FADT_SIZE);
}

/*
 * The DSDT: each device's AML (dsdt.c) after the header.
 * Revision 2: 64-bit AML integers.  Returns the table's length.
 */
static long build_dsdt(uint8_t *t, size_t room, const struct acpi_config *cfg)
{
	long body;

	if (room < ACPI_HEADER_SIZE)
		return -E2BIG;
	body = dsdt_build(t + ACPI_HEADER_SIZE, room - ACPI_HEADER_SIZE,
			  &(struct dsdt_config){
				  .ncpus = cfg->max_cpus,
				  .devs = cfg->devs,
				  .nr_devs = cfg->nr_devs,
			  });
	if (body < 0)
		return body;
	header(t, "DSDT", (uint32_t)(ACPI_HEADER_SIZE + body), 2);
	header_end(t, (uint32_t)(ACPI_HEADER_SIZE + body));
	return ACPI_HEADER_SIZE + body;
}

static void build_xsdt(uint8_t *t, const uint64_t *tables, unsigned int n)
{
	uint32_t len = ACPI_HEADER_SIZE + 8 * n;

	header(t, "XSDT", len, 1);
	for (unsigned int i = 0; i < n; i++)
		put64(t + ACPI_HEADER_SIZE + 8 * i, tables[i]);
	header_end(t, len);
}

static size_t align16(size_t v)
{
	return (v + 15) & ~(size_t)15;
}

long acpi_build(void *buf, size_t size, const struct acpi_config *cfg)
{
	size_t rsdp = 0, xsdt, fadt, madt, dsdt, end;
	uint8_t *b = buf;
	uint64_t tables[2];

	/* The DSDT's limit also keeps madt_size() from wrapping around. */
	if (!cfg->boot_cpus || cfg->boot_cpus > cfg->max_cpus ||
	    cfg->max_cpus > DSDT_MAX_CPUS)
		return -EINVAL;
	xsdt = align16(rsdp + ACPI_RSDP_SIZE);
	fadt = align16(xsdt + ACPI_HEADER_SIZE + 8 * 2);
	madt = align16(fadt + ACPI_FADT_SIZE);
	long dsdt_len;

	dsdt = align16(madt + madt_size(cfg));
	if (dsdt + ACPI_HEADER_SIZE > size)
		return -E2BIG;

	memset(b, 0, size);
	tables[0] = cfg->base + fadt;
	tables[1] = cfg->base + madt;
	build_rsdp(b + rsdp, cfg->base + xsdt);
	build_xsdt(b + xsdt, tables, 2);
	build_fadt(b + fadt, cfg->base + dsdt);
	build_madt(b + madt, cfg);
	dsdt_len = build_dsdt(b + dsdt, size - dsdt, cfg);
	if (dsdt_len < 0)
		return dsdt_len;
	end = dsdt + (size_t)dsdt_len;
	return (long)end;
}
