/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GUEST_LAPIC_H
#define GUEST_LAPIC_H

#include "kernel.h"

#define LAPIC_MMIO_BASE 0xfee00000UL

/* Detect x2APIC (CPUID.1:ECX[21]) and set the mode for every CPU. */
void lapic_detect(void);
bool lapic_x2apic(void);
/* KVM's paravirtual EOI (CPUID 0x40000001 bit 6): lapic_eoi() uses it. */
bool lapic_pv_eoi(void);

/*
 * The boot CPU: enable the APIC in the chosen mode, software-enable it
 * with the spurious vector, mask the LVTs.
 */
void lapic_setup(void);
/*
 * An AP, as it starts: its APIC enabled in the chosen mode, still
 * software-disabled; returns its APIC base MSR.
 */
u64 lapic_ap_mode(void);
/*
 * An AP after INIT and lapic_ap_mode() (or after lapic_shutdown() and the
 * timer's stop): the software enable.  lapic_shutdown() is the reverse,
 * for a dying AP: software-disabled (INIT and SIPI still accepted).
 */
void lapic_setup_ap(void);
void lapic_shutdown(void);

u32 lapic_id(void);
void lapic_eoi(void);

/*
 * Periodic timer on @vector, @count at divide-by-2 (an AP's after INIT:
 * 2 ns a count at the 1 GHz bus); lapic_timer_stop() stops it.
 */
#define LAPIC_AP_TIMER_NS 2
void lapic_timer_start(u8 vector, u32 count);
void lapic_timer_stop(void);
/*
 * The boot CPU's one-shot timer on @vector, 128 ns a count (divide by 128
 * at the 1 GHz bus): lapic_timer_oneshot() once, lapic_timer_arm() to
 * start each countdown (one register write, so one exit).
 */
void lapic_timer_oneshot(u8 vector);
void lapic_timer_arm(u32 count);
#define LAPIC_TIMER_NS 128

/* One-shot, masked, divide-by-1 countdown, for tsc_init(). */
void lapic_calib_start(u32 count);
u32 lapic_calib_count(void);
void lapic_calib_stop(void);

/* IPIs by destination APIC ID. */
void lapic_send_ipi(u32 apic_id, u8 vector);
void lapic_send_nmi(u32 apic_id);
void lapic_send_init(u32 apic_id);
void lapic_send_sipi(u32 apic_id, u8 page);
/*
 * A fixed IPI from an AP whose LAPIC lapic_setup_ap() may not have set up
 * (before its starting states or after their teardown), in the mode of
 * @base, its APIC base MSR (lapic_ap_mode()'s); false when its APIC
 * cannot send.
 */
bool lapic_send_ipi_early(u64 base, u32 apic_id, u8 vector);

/* The ID of the calling CPU from CPUID, valid before its APIC is set up. */
u32 cpu_apic_id(void);
bool cpu_apicid_leaf_b(void);

#endif
