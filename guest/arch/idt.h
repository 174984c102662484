/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GUEST_IDT_H
#define GUEST_IDT_H

#include "kernel.h"

/* Vectors of the guest's own interrupts. */
#define VEC_GED		0x30 /* ACPI GED, from the I/O APIC */
#define VEC_SCI		0x31 /* ACPI SCI (GPE0), from the I/O APIC */
#define VEC_LAPIC_TIMER 0xef
#define VEC_DOORBELL	0xf0 /* "look at your mailbox" IPI */
#define VEC_WAKE	0xf1 /* "what you wait for is done" IPI */
#define VEC_WAKE_TIMER	0xf2 /* the bound of a wait's halt */
#define VEC_SPURIOUS	0xff

/* As isr.S pushes it. */
struct idt_regs {
	u64 r15, r14, r13, r12, r11, r10, r9, r8;
	u64 rbp, rdi, rsi, rdx, rcx, rbx, rax;
	u64 vector, error;
	u64 rip, cs, rflags, rsp, ss;
};

typedef void (*idt_handler_t)(struct idt_regs *regs);

/* Build the table (boot CPU, once) and load it (every CPU). */
void idt_init(void);
void idt_load(void);
void idt_set_handler(unsigned int vector, idt_handler_t fn);

void idt_dispatch(struct idt_regs *regs);

#endif
