// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ACPI fallback: RSDP (from start_info, else the legacy BIOS-area scan
 * QEMU needs), XSDT or RSDT, MADT.  Local APIC (type 0) and local x2APIC
 * (type 9) entries: flags bit 0 Enabled (present at boot), bit 1 Online
 * Capable (possible, hot-pluggable later); neither bit: not usable, except
 * in a MADT older than ACPI 6.3 (revision < 5), where, as Linux reads it, a
 * disabled entry is a possible CPU (QEMU 7.2 describes its hot-pluggable
 * CPUs that way).
 *
 * The FADT gives the fixed hardware of a full (not hardware-reduced) ACPI
 * platform such as QEMU's q35: SCI_INT, SMI_CMD/ACPI_ENABLE, PM1a_CNT and
 * the GPE0 block; a MADT interrupt source override (type 2) for the SCI's
 * IRQ says its GSI, trigger and polarity (default: level, active low).
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
#define MADT_ISO	  2
#define MADT_X2APIC	  9
#define MADT_ENABLED	  (1u << 0)
#define MADT_ONLINE_CAPAB (1u << 1)
#define MADT_REV_ACPI_6_3 5

/* MPS INTI flags of an interrupt source override. */
#define ISO_POL_MASK  0x3
#define ISO_POL_HIGH  0x1
#define ISO_POL_LOW   0x3
#define ISO_TRIG_MASK 0xc
#define ISO_TRIG_EDGE 0x4
#define ISO_TRIG_LVL  0xc

/* FADT field offsets (ACPI 1.0 layout, which every revision keeps). */
#define FADT_SCI_INT	 46 /* 2 bytes */
#define FADT_SMI_CMD	 48
#define FADT_ACPI_ENABLE 52 /* 1 byte */
#define FADT_PM1A_CNT	 64
#define FADT_GPE0_BLK	 80
#define FADT_GPE0_LEN	 92 /* 1 byte */
#define FADT_FLAGS	 112
#define FADT_MIN_LEN	 116
#define FADT_HW_REDUCED	 (1u << 20)

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

static u32 get32(const void *t, unsigned int off)
{
	u32 v;

	memcpy(&v, (const u8 *)t + off, 4);
	return v;
}

static u32 acpi_sci_irq; /* the FADT's SCI_INT, an ISA IRQ */

static void acpi_parse_fadt(const struct acpi_header *f)
{
	u16 sci;

	if (!f || f->length < FADT_MIN_LEN)
		return;
	memcpy(&sci, (const u8 *)f + FADT_SCI_INT, 2);
	platform.fadt_found = true;
	acpi_sci_irq = sci;
	platform.sci_gsi = sci;
	platform.sci_level = true;
	platform.sci_active_low = true;
	platform.smi_cmd = get32(f, FADT_SMI_CMD);
	platform.acpi_enable = ((const u8 *)f)[FADT_ACPI_ENABLE];
	platform.pm1a_cnt = get32(f, FADT_PM1A_CNT);
	platform.gpe0_blk = get32(f, FADT_GPE0_BLK);
	platform.gpe0_len = ((const u8 *)f)[FADT_GPE0_LEN];
	platform.hw_reduced = get32(f, FADT_FLAGS) & FADT_HW_REDUCED;
}

/* An override of the SCI's ISA IRQ: its GSI, trigger and polarity. */
static void acpi_sci_override(const u8 *p)
{
	u32 gsi;
	u16 flags;

	if (!platform.fadt_found || p[3] != acpi_sci_irq)
		return;
	memcpy(&gsi, p + 4, 4);
	memcpy(&flags, p + 8, 2);
	platform.sci_gsi = gsi;
	if ((flags & ISO_POL_MASK) == ISO_POL_HIGH)
		platform.sci_active_low = false;
	else if ((flags & ISO_POL_MASK) == ISO_POL_LOW)
		platform.sci_active_low = true;
	if ((flags & ISO_TRIG_MASK) == ISO_TRIG_EDGE)
		platform.sci_level = false;
	else if ((flags & ISO_TRIG_MASK) == ISO_TRIG_LVL)
		platform.sci_level = true;
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
	acpi_parse_fadt(find_table(r, "FACP"));
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
		if (p[0] == MADT_ISO && p[1] >= 10) {
			acpi_sci_override(p);
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
