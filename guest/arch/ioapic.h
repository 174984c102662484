/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The I/O APIC: just enough to route a GSI to a vector on one CPU.  The
 * window is MMIO in the top GiB, which entry.S maps uncached.
 */
#ifndef GUEST_IOAPIC_H
#define GUEST_IOAPIC_H

#include "kernel.h"

/*
 * Mask the legacy 8259 PICs and probe the I/O APIC at @base.  Returns the
 * number of redirection entries, or 0 if nothing answers there.
 */
unsigned int ioapic_init(u64 base);

/*
 * Route @gsi, edge-triggered, active high, fixed delivery, to @vector on
 * the CPU with APIC ID @apic_id (physical destination mode).  0, or
 * -EINVAL for a GSI the I/O APIC does not have or an APIC ID above 255.
 */
int ioapic_route_edge(unsigned int gsi, u8 vector, u32 apic_id);

/*
 * The same with the trigger mode and polarity given: a level-triggered
 * line's handler must deassert it (clear the source) before its EOI, or
 * the I/O APIC delivers it again at once.
 */
int ioapic_route(unsigned int gsi, u8 vector, u32 apic_id, bool level,
		 bool active_low);

/* Mask @gsi again. */
void ioapic_mask(unsigned int gsi);

#endif
