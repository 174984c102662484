/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The AP start-up trampoline.  smp.c copies it to GUEST_TRAMPOLINE (SIPI
 * vector 0x08) once and leaves it there: every INIT-SIPI, first
 * bring-up or re-onlining of a parked AP, starts here in real mode with
 * CS = 0x0800, IP = 0.  It is position dependent on that address, hence
 * the TA() arithmetic.  Everything it touches is read-only, so any number
 * of APs may run it at the same time.
 */
#include "layout.h"

#define TA(x) ((x) - trampoline_start + GUEST_TRAMPOLINE)

	.section .rodata, "a"
	.balign 16
	.globl trampoline_start, trampoline_end
	.code16
trampoline_start:
	cli
	cld
	movw	%cs, %ax
	movw	%ax, %ds
	lgdtl	(tramp_gdtr - trampoline_start)
	/*
	 * Constants, not read-modify-write: every CR read and write on the
	 * way up is a VM exit while INIT's CR0.CD/NW are set (KVM intercepts
	 * CR0 then), and caching on (CD and NW clear, as Linux's trampoline
	 * writes it) ends the interception of the later CR0 write.
	 */
	movl	$(CR0_PE | CR0_ET), %eax
	movl	%eax, %cr0
	ljmpl	$GDT_CODE32, $TA(tramp32)

	.code32
tramp32:
	movl	$GDT_DATA, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	/* INIT left CR4 and EFER at 0 (Intel SDM vol. 3, table 9-1). */
	movl	$CR4_PAE, %eax
	movl	%eax, %cr4
	movl	$boot_pml4, %eax
	movl	%eax, %cr3
	movl	$MSR_EFER, %ecx
	movl	$EFER_LME, %eax
	xorl	%edx, %edx
	wrmsr
	movl	$(CR0_PG | CR0_PE | CR0_ET), %eax
	movl	%eax, %cr0
	ljmp	$GDT_CODE64, $ap_long_entry

	.balign 8
tramp_gdtr:
	.word 4 * 8 - 1
	.long boot_gdt
trampoline_end:

	.section .note.GNU-stack, "", @progbits
