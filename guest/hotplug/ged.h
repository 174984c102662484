/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ACPI Generic Event Device, guest side: the interrupt handler reads
 * the event register (reading clears it), EOIs and leaves the events for
 * the boot CPU's idle loop; nothing else happens in interrupt context.
 */
#ifndef GUEST_GED_H
#define GUEST_GED_H

#include "kernel.h"

/*
 * Map the register at @base and route GSI @gsi (edge, active high) to
 * the boot CPU through the I/O APIC at @ioapic.  With @ignore the IRQ
 * stays masked (the ignore-hotplug switch).  0 or -errno.
 */
int ged_init(u64 base, unsigned int gsi, u64 ioapic, bool ignore);

/* Events left by the handler (or ged_note()), taken atomically. */
u32 ged_take(void);
bool ged_pending(void);

/* Events someone else read from the register (the fuzzer's reads). */
void ged_note(u32 events);

/* Read (and so clear) the register now; all ones is a floating bus. */
u32 ged_read(void);

#endif
