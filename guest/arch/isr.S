/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interrupt and exception entry: one 16-byte stub per vector pushes a zero
 * error code where the CPU pushes none, then the vector, and joins the
 * common path, which saves the general registers as a struct idt_regs and
 * calls idt_dispatch().  Ring 0 only, so no swapgs and no stack switch.
 */
	.text
	.balign 16
	.globl isr_stubs
isr_stubs:
	.set vec, 0
	.rept 256
	.balign 16
	.if (vec == 8) || ((vec >= 10) && (vec <= 14)) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
	.else
	pushq	$0
	.endif
	pushq	$vec
	jmp	isr_common
	.set vec, vec + 1
	.endr

isr_common:
	pushq	%rax
	pushq	%rbx
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%rbp
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	cld
	movq	%rsp, %rdi
	call	idt_dispatch
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rbp
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rbx
	popq	%rax
	addq	$16, %rsp
	iretq

	/*
	 * void smp_nmi_wait(volatile u32 *word, u32 seen): halt, interrupts
	 * off, unless *word has moved on.  An NMI anywhere in [start, end)
	 * resumes at end (smp.c), so a doorbell cannot slip in between the
	 * compare and the hlt.
	 */
	.globl smp_nmi_wait, smp_nmi_wait_start, smp_nmi_wait_end
smp_nmi_wait:
smp_nmi_wait_start:
	cmpl	%esi, (%rdi)
	jne	smp_nmi_wait_end
	hlt
smp_nmi_wait_end:
	ret

	.section .note.GNU-stack, "", @progbits
