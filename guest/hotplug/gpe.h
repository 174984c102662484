/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ACPI GPE0 and the SCI, guest side: the notification of QEMU q35's CPU
 * hotplug (GPE0 bit 2) where hotvm has its GED.  The handler clears the
 * status bit (write 1), EOIs and leaves ABI_GED_EVT_CPU in ged.c's event
 * word, so the boot CPU's idle loop runs the same hotplug worker.
 */
#ifndef GUEST_GPE_H
#define GUEST_GPE_H

#include "kernel.h"

/*
 * Full-ACPI fixed hardware from the FADT (platform.h): switch to ACPI
 * mode if SCI_EN is clear, route the SCI (its GSI, trigger and polarity)
 * to the boot CPU through the I/O APIC at @ioapic, clear and enable GPE0
 * @bit.  With @ignore the SCI stays masked.  0 or -errno.
 */
int gpe_init(unsigned int bit, u64 ioapic, bool ignore);

#endif
