/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A stand-in PVH kernel for the boot tests, used while the tiny guest is not
 * built: 32-bit code that checks what hotvm handed it (start_info magic, the
 * FDT module, the RSDP), prints like the tiny guest does on one CPU, and
 * then acts on the first word of its command line:
 *   exit  debug-exit with 0 (hotvm status 1)    fail  debug-exit with 1
 *   trip  triple fault (hotvm status 4)          echo  print cmdline, exit 0
 *   anything else: halt forever (for the signal tests)
 * A failed check debug-exits with 2 (panic, status 5).
 */
#define COM1      0x3f8
#define DEBUG_EXIT 0x501

	.section .note.Xen, "a"
	.balign 4
	.long 4			/* namesz */
	.long 4			/* descsz */
	.long 18		/* XEN_ELFNOTE_PHYS32_ENTRY */
	.asciz "Xen"
	.long _start

	.text
	.code32
	.globl _start
_start:
	cli
	mov	$stack_top, %esp
	mov	%ebx, %ebp		/* hvm_start_info */

	mov	$msg_hello, %esi
	call	puts

	cmpl	$0x336ec578, (%ebp)	/* magic */
	jne	panic
	mov	12(%ebp), %ecx		/* nr_modules */
	cmp	$1, %ecx
	jb	panic
	mov	16(%ebp), %eax		/* modlist_paddr */
	dec	%ecx			/* the FDT is the last module */
	shl	$5, %ecx		/* 32-byte modlist entries */
	mov	(%eax,%ecx), %edx	/* its paddr */
	cmpl	$0xedfe0dd0, (%edx)	/* FDT magic, big-endian */
	jne	panic
	mov	32(%ebp), %eax		/* rsdp_paddr */
	cmpl	$0x20445352, (%eax)	/* "RSD " */
	jne	panic
	cmpl	$0x20525450, 4(%eax)	/* "PTR " */
	jne	panic

	mov	$msg_online, %esi
	call	puts
	mov	$msg_ready, %esi
	call	puts

	mov	24(%ebp), %esi		/* cmdline_paddr */
	mov	(%esi), %eax
	cmp	$0x74697865, %eax	/* "exit" */
	je	exit_ok
	cmp	$0x6c696166, %eax	/* "fail" */
	je	exit_fail
	cmp	$0x70697274, %eax	/* "trip" */
	je	triple
	cmp	$0x6f686365, %eax	/* "echo" */
	jne	park
	call	puts
	mov	$msg_nl, %esi
	call	puts
exit_ok:
	xor	%eax, %eax
	jmp	debug_exit
exit_fail:
	mov	$1, %eax
	jmp	debug_exit
panic:
	mov	$2, %eax
debug_exit:
	mov	$DEBUG_EXIT, %dx
	outb	%al, %dx
park:
	hlt
	jmp	park

triple:
	lidt	null_idt
	int3

#include "stub_puts.inc"

	.section .rodata
msg_hello:	.asciz "boot-stub: hello\n"
msg_online:	.asciz "online: 0\n"
msg_ready:	.asciz "ready\n"
msg_nl:		.asciz "\n"
	.balign 8
null_idt:	.word 0
		.long 0

	.bss
	.balign 16
	.skip 4096
stack_top:

	.section .note.GNU-stack, "", @progbits
