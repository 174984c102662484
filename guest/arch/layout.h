/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Constants shared by the guest's assembly and C.  hotvm/abi.h uses UL
 * suffixes the assembler cannot parse, so the values the assembly needs
 * are repeated here and checked against the ABI in smp.c.
 */
#ifndef GUEST_LAYOUT_H
#define GUEST_LAYOUT_H

#define GUEST_TRAMPOLINE 0x8000 /* ABI_TRAMPOLINE_PADDR */

/* Selectors of the one GDT used by the boot CPU, the APs and the trampoline. */
#define GDT_CODE32 0x08
#define GDT_DATA   0x10
#define GDT_CODE64 0x18

/* Logical CPUs the guest can manage, and each one's stack. */
#define GUEST_MAX_CPUS	 1024 /* KVM's KVM_CAP_MAX_VCPUS, and hotvm's */
#define GUEST_STACK_SIZE 16384

#define MSR_EFER 0xc0000080
#define EFER_LME (1 << 8)
#define CR0_PE	 (1 << 0)
#define CR0_ET	 (1 << 4)
#define CR0_PG	 (1 << 31)
#define CR4_PAE	 (1 << 5)

#endif
