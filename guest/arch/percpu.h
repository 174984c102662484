/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-CPU areas, indexed by logical CPU id (0 is the boot CPU).  The boot
 * CPU writes an AP's area only while that AP is not running, or through
 * the mailbox fields; the AP writes its alive/parked flags and the mailbox
 * result.
 */
#ifndef GUEST_PERCPU_H
#define GUEST_PERCPU_H

#include "kernel.h"
#include "layout.h"

struct percpu {
	unsigned int cpu;
	u32 apic_id;
	bool boot_present; /* enabled in the FDT/MADT at boot */

	/* Life cycle of the AP, written by the AP. */
	volatile u32 alive;  /* reached its mailbox loop since the kick */
	volatile u32 parked; /* acknowledged the park request, halted */
	volatile u32 park_req;

	/*
	 * The mailbox: the boot CPU fills fn/arg and bumps req; the AP runs
	 * fn with interrupts off, stores ret and sets done = req.
	 */
	int (*volatile mbox_fn)(void *arg);
	void *volatile mbox_arg;
	volatile int mbox_ret;
	volatile u32 mbox_req;
	volatile u32 mbox_done;
	volatile u32 doorbell; /* bumped by the boot CPU for each request */
	/*
	 * The APIC ID + 1 of the CPU halted until this AP sets alive, parked
	 * or mbox_done, else 0: the AP wakes it with VEC_WAKE.
	 */
	volatile u32 waiter;

	/* Set by the AP's starting/online states. */
	volatile bool lapic_on; /* software-enabled: doorbell IPIs arrive */
	u64 apic_base;		/* its APIC base MSR, set as it starts */
	volatile u32 pv_eoi;	/* KVM's PV EOI word (lapic.c) */
	volatile bool timer_on;
	volatile bool work_on;
	volatile u64 ticks; /* timer interrupts */
	volatile u64 work;  /* work-loop rounds, while work_on */

	u32 kicks; /* INIT-SIPI sequences sent */
} __aligned(64);

extern struct percpu percpu[GUEST_MAX_CPUS];
extern char smp_stacks[GUEST_MAX_CPUS * GUEST_STACK_SIZE];

/* The running CPU's logical id, from its stack pointer: no MSR, no exit. */
static inline unsigned int smp_processor_id(void)
{
	uintptr_t sp, base;

	__asm__("mov %%rsp, %0" : "=r"(sp));
	base = (uintptr_t)smp_stacks;
	if (sp < base || sp >= base + sizeof(smp_stacks))
		return 0;
	return (unsigned int)((sp - base) / GUEST_STACK_SIZE);
}

static inline struct percpu *this_cpu(void)
{
	return &percpu[smp_processor_id()];
}

#endif
