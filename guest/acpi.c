// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ACPI fallback: RSDP (from start_info, else the legacy BIOS-area scan
 * QEMU needs), XSDT or RSDT, MADT.  Local APIC (type 0) and local x2APIC
 * (type 9) entries: flags bit 0 Enabled (present at boot), bit 1 Online
 * Capable (possible, hot-pluggable later); neither bit: not usable, except
 * in a MADT older than ACPI 6.3 (revision < 5), where, as Linux reads it, a
 * disabled entry is a possible CPU (QEMU 7.2 describes its hot-pluggable
 * CPUs that way).
 */
#include "platform.h"

struct acpi_rsdp {
	char signature[8];
	u8 checksum;
	char oem_id[6];
	u8 revision;
	u32 rsdt;
	u32 length;
	u64 xsdt;
	u8 ext_checksum;
	u8 reserved[3];
} __attribute__((packed));

struct acpi_header {
	char signature[4];
	u32 length;
	u8 revision;
	u8 checksum;
	char oem_id[6];
	char oem_table_id[8];
	u32 oem_revision;
	u32 creator_id;
	u32 creator_revision;
} __attribute__((packed));

#define MADT_LAPIC	  0
#define MADT_IOAPIC	  1
#define MADT_X2APIC	  9
#define MADT_ENABLED	  (1u << 0)
#define MADT_ONLINE_CAPAB (1u << 1)
#define MADT_REV_ACPI_6_3 5

static u8 checksum(const void *p, size_t n)
{
	const u8 *b = p;
	u8 s = 0;

	while (n--)
		s += *b++;
	return s;
}

static const struct acpi_rsdp *rsdp_scan(void)
{
	/* The RSDP is 16-byte aligned in the BIOS read-only area. */
	for (uintptr_t a = 0xe0000; a < 0x100000; a += 16) {
		const struct acpi_rsdp *r = (const void *)a;

		if (!memcmp(r->signature, "RSD PTR ", 8) && !checksum(r, 20))
			return r;
	}
	return NULL;
}

static const struct acpi_header *find_table(const struct acpi_rsdp *r,
					    const char *sig)
{
	const struct acpi_header *root;
	unsigned int width, n;
	const u8 *entries;

	if (r->revision >= 2 && r->xsdt) {
		root = (const void *)(uintptr_t)r->xsdt;
		width = 8;
	} else {
		root = (const void *)(uintptr_t)r->rsdt;
		width = 4;
	}
	if (!root || root->length < sizeof(*root))
		return NULL;
	n = (root->length - sizeof(*root)) / width;
	entries = (const u8 *)(root + 1);
	for (unsigned int i = 0; i < n; i++) {
		u64 addr = 0;
		const struct acpi_header *t;

		memcpy(&addr, entries + i * width, width);
		t = (const void *)(uintptr_t)addr;
		if (t && !memcmp(t->signature, sig, 4))
			return t;
	}
	return NULL;
}

int platform_from_acpi(u64 rsdp_paddr)
{
	const struct acpi_rsdp *r =
		rsdp_paddr ? (const void *)(uintptr_t)rsdp_paddr : rsdp_scan();
	const struct acpi_header *madt;
	const u8 *p, *end;
	bool old;

	if (!r || memcmp(r->signature, "RSD PTR ", 8))
		return -1;
	madt = find_table(r, "APIC");
	if (!madt)
		return -1;
	old = madt->revision < MADT_REV_ACPI_6_3;
	/* Header, then local APIC address (4) and flags (4). */
	p = (const u8 *)madt + sizeof(*madt) + 8;
	end = (const u8 *)madt + madt->length;
	while (p + 2 <= end && p[1] >= 2 && p + p[1] <= end) {
		u32 id, flags;

		if (p[0] == MADT_IOAPIC && p[1] >= 12) {
			u32 addr, gsi_base;

			memcpy(&addr, p + 4, 4);
			memcpy(&gsi_base, p + 8, 4);
			if (gsi_base == 0 && !platform.ioapic_found) {
				platform.ioapic_base = addr;
				platform.ioapic_found = true;
			}
			p += p[1];
			continue;
		}
		if (p[0] == MADT_LAPIC && p[1] >= 8) {
			id = p[3];
			memcpy(&flags, p + 4, 4);
		} else if (p[0] == MADT_X2APIC && p[1] >= 16) {
			memcpy(&id, p + 4, 4);
			memcpy(&flags, p + 8, 4);
		} else {
			p += p[1];
			continue;
		}
		if (old || (flags & (MADT_ENABLED | MADT_ONLINE_CAPAB)))
			platform_add_cpu(id, flags & MADT_ENABLED);
		p += p[1];
	}
	return platform.nr_cpus ? 0 : -1;
}
