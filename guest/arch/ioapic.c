// SPDX-License-Identifier: GPL-2.0-only
/*
 * I/O APIC redirection, for the GED interrupt or the SCI.  Indirect access: write the
 * register index to IOREGSEL, then read or write IOWIN; only the boot CPU
 * programs it, once, so the index/data pair needs no lock.
 */
#include <errno.h>

#include "ioapic.h"

#define IOAPIC_REGSEL 0x00
#define IOAPIC_WIN    0x10

#define IOAPIC_REG_ID  0x00
#define IOAPIC_REG_VER 0x01
#define IOAPIC_REG_RTE 0x10 /* entry n: low dword 0x10 + 2n, high + 1 */

#define RTE_MASKED	  (1u << 16)
#define RTE_LEVEL	  (1u << 15)
#define RTE_ACTIVE_LOW	  (1u << 13)
#define RTE_DEST_LOGICAL  (1u << 11)
#define RTE_DM_FIXED	  (0u << 8)
#define RTE_DEST_SHIFT_HI 24

#define PIC_MASTER_IMR 0x21
#define PIC_SLAVE_IMR  0xa1

static volatile u32 *ioapic;
static unsigned int ioapic_nr_rte;

static u32 ioapic_read(u32 reg)
{
	ioapic[IOAPIC_REGSEL / 4] = reg;
	return ioapic[IOAPIC_WIN / 4];
}

static void ioapic_write(u32 reg, u32 v)
{
	ioapic[IOAPIC_REGSEL / 4] = reg;
	ioapic[IOAPIC_WIN / 4] = v;
}

unsigned int ioapic_init(u64 base)
{
	u32 ver;

	/*
	 * KVM routes GSIs 0-15 to the 8259 as well, and resets the boot
	 * CPU's LINT0 to ExtINT: an unmasked, never-initialised PIC would
	 * turn our GSI 5 edge into vector 5.  OCW1 masks every line; it is
	 * what Linux does before it uses the I/O APIC.
	 */
	outb(PIC_MASTER_IMR, 0xff);
	outb(PIC_SLAVE_IMR, 0xff);

	ioapic = (volatile u32 *)(uintptr_t)base;
	ver = ioapic_read(IOAPIC_REG_VER);
	/* A floating bus reads all ones (or, under hotvm, zeros). */
	if (ver == 0xffffffffu || (ver & 0xff) == 0) {
		ioapic_nr_rte = 0;
		return 0;
	}
	ioapic_nr_rte = ((ver >> 16) & 0xff) + 1;
	return ioapic_nr_rte;
}

int ioapic_route(unsigned int gsi, u8 vector, u32 apic_id, bool level,
		 bool active_low)
{
	u32 lo = RTE_DM_FIXED | vector;

	if (gsi >= ioapic_nr_rte || apic_id > 0xff)
		return -EINVAL;
	if (level)
		lo |= RTE_LEVEL;
	if (active_low)
		lo |= RTE_ACTIVE_LOW;
	/* Destination first, unmask last: no half-programmed entry fires. */
	ioapic_write(IOAPIC_REG_RTE + 2 * gsi + 1,
		     apic_id << RTE_DEST_SHIFT_HI);
	ioapic_write(IOAPIC_REG_RTE + 2 * gsi, lo);
	return 0;
}

int ioapic_route_edge(unsigned int gsi, u8 vector, u32 apic_id)
{
	return ioapic_route(gsi, vector, apic_id, false, false);
}

void ioapic_mask(unsigned int gsi)
{
	if (gsi < ioapic_nr_rte)
		ioapic_write(IOAPIC_REG_RTE + 2 * gsi, RTE_MASKED);
}
