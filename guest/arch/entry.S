/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PVH entry: the loader starts us in 32-bit protected mode, paging off,
 * with %ebx = physical address of struct hvm_start_info and no stack.
 * Go to long mode on statically built page tables (no loop to fill them:
 * every instruction is expensive on the software /dev/kvm) and call
 * guest_main(start_info).
 */
#include "layout.h"

#define XEN_ELFNOTE_PHYS32_ENTRY 18

	/* Every data segment register to GDT_DATA, clobbering %eax. */
	.macro load_data_segs
	movl	$GDT_DATA, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%eax, %fs
	movl	%eax, %gs
	.endm

	/*
	 * The PVH note.  The descriptor is 8 bytes, as Linux emits it for a
	 * 64-bit ELF; QEMU reads it by the ELF class.
	 */
	.pushsection .note.pvh, "a", @note
	.balign 4
	.long 4			/* namesz: "Xen\0" */
	.long 8			/* descsz */
	.long XEN_ELFNOTE_PHYS32_ENTRY
	.asciz "Xen"
	.balign 4
	.quad pvh_start32
	.balign 4
	.popsection

	.section .text.head, "ax"
	.code32
	.globl pvh_start32
pvh_start32:
	cli
	cld
	lgdt	boot_gdtr
	ljmp	$GDT_CODE32, $1f
1:	load_data_segs

	/* %ebx survives: rep stosl uses %edi, %ecx, %eax. */
	movl	$__bss_start, %edi
	movl	$__bss_end, %ecx
	subl	%edi, %ecx
	shrl	$2, %ecx
	xorl	%eax, %eax
	rep stosl

	movl	%cr4, %eax
	orl	$CR4_PAE, %eax
	movl	%eax, %cr4
	movl	$boot_pml4, %eax
	movl	%eax, %cr3
	movl	$MSR_EFER, %ecx
	rdmsr
	orl	$EFER_LME, %eax
	wrmsr
	movl	%cr0, %eax
	orl	$(CR0_PG | CR0_PE), %eax
	movl	%eax, %cr0
	ljmp	$GDT_CODE64, $boot_long

	.code64
boot_long:
	load_data_segs
	/* Logical CPU 0 runs on the first stack of the pool. */
	movq	$(smp_stacks + GUEST_STACK_SIZE), %rsp
	xorl	%ebp, %ebp
	movl	%ebx, %edi
	call	guest_main
2:	cli
	hlt
	jmp	2b

	/*
	 * Where the trampoline lands in long mode.  Many APs may get here at
	 * once (parallel bring-up), so nothing is shared: each finds its own
	 * logical id by looking its APIC ID up in smp_apicid[], as Linux 6.5
	 * does, and takes its stack from smp_stack_top[].
	 */
	.text
	.globl ap_long_entry
ap_long_entry:
	load_data_segs

	cmpl	$0, smp_apicid_leaf_b(%rip)
	je	1f
	movl	$0xb, %eax
	xorl	%ecx, %ecx
	cpuid
	movl	%edx, %esi		/* x2APIC ID */
	jmp	2f
1:	movl	$1, %eax
	cpuid
	shrl	$24, %ebx
	movl	%ebx, %esi		/* initial xAPIC ID */
2:	movl	smp_nr_possible(%rip), %ecx
	leaq	smp_apicid(%rip), %rdi
	xorl	%edx, %edx
3:	cmpl	%ecx, %edx
	jae	9f
	cmpl	(%rdi,%rdx,4), %esi
	je	4f
	incl	%edx
	jmp	3b
4:	leaq	smp_stack_top(%rip), %rdi
	movq	(%rdi,%rdx,8), %rsp
	testq	%rsp, %rsp
	jz	9f
	xorl	%ebp, %ebp
	movl	%edx, %edi
	call	smp_ap_main
	/* An AP we do not know, or one without a stack: park it for good. */
9:	cli
	hlt
	jmp	9b

	.data
	.balign 16
	.globl boot_gdt
boot_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff	/* GDT_CODE32 */
	.quad 0x00cf92000000ffff	/* GDT_DATA */
	.quad 0x00af9a000000ffff	/* GDT_CODE64 */
boot_gdt_end:
	.balign 8
	.globl boot_gdtr
boot_gdtr:
	.word boot_gdt_end - boot_gdt - 1
	.quad boot_gdt

	/*
	 * Identity map of the first 4 GiB with 2 MiB pages: RAM, and the
	 * LAPIC/IOAPIC MMIO page just below 4 GiB (uncached: PCD | PWT).
	 */
	.balign 4096
	.globl boot_pml4
boot_pml4:
	.quad boot_pdpt + 0x003
	.fill 511, 8, 0
boot_pdpt:
	.quad boot_pd + 0x0003
	.quad boot_pd + 0x1003
	.quad boot_pd + 0x2003
	.quad boot_pd + 0x3003
	.fill 508, 8, 0
boot_pd:
	.set i, 0
	.rept 1536
	.quad (i << 21) | 0x083	/* P | RW | PS */
	.set i, i + 1
	.endr
	.rept 512
	.quad (i << 21) | 0x09b	/* P | RW | PWT | PCD | PS */
	.set i, i + 1
	.endr

	/* Stacks are not cleared: nothing in them is read before written. */
	.section .stacks, "aw", @nobits
	.balign 4096
	.globl smp_stacks
smp_stacks:
	.skip GUEST_MAX_CPUS * GUEST_STACK_SIZE

	.section .note.GNU-stack, "", @progbits
