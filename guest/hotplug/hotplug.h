/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPU hotplug driven by the host: the GED interrupt (ged.c) leaves events,
 * the boot CPU's idle loop calls hotplug_work(), which scans the register
 * block (hpio.c) and walks the inserted and removed CPUs through the
 * guest's cpuhp table.  Every step of that table, at boot and later, is
 * reported to the host (hotplug_report), which mirrors it.
 */
#ifndef GUEST_HOTPLUG_H
#define GUEST_HOTPLUG_H

#include "cpuhp.h"
#include "hpio.h"
#include "kernel.h"

/*
 * After smp_init() and hp_init(), before the boot CPUs' bring-up (so that
 * it is reported too): find the devices, map selectors to CPUs, route the
 * GED interrupt unless @ignore.
 */
void hotplug_init(bool ignore);

/* The table's notify hook: one report per STEP and DONE notice. */
void hotplug_report(const struct cpuhp_notice *n);

/* Events waiting for hotplug_work(); boot CPU, interrupts on. */
bool hotplug_pending(void);
void hotplug_work(void);

/* For the fuzzer: the block's accessor state and the selector of @cpu. */
struct hpio *hotplug_io(void);
u32 hotplug_sel_of(unsigned int cpu);

/*
 * pwrbtn=eject: the highest online AP goes down and is ejected without
 * the host asking, as Linux's sysfs eject (the host follows: its
 * "guest's own eject").
 */
void hotplug_eject_own(void);

#endif
