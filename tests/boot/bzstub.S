/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A stand-in bzImage for the boot tests: a Linux setup header (boot
 * protocol 2.15, relocatable, 64-bit entry) and, at +0x200 of the
 * protected-mode part, 64-bit position-independent code that checks what
 * hotvm's 64-bit boot protocol handed it:
 *  - RSI points to a zero page with "HdrS", type_of_loader 0xff,
 *    CAN_USE_HEAP and code32_start = where the kernel was loaded;
 *  - acpi_rsdp_addr points to "RSD PTR ";
 *  - the e820 table marks the page tables (CR3) reserved and the kernel RAM;
 *  - an initrd, when there is one, starts with "init";
 * then prints like the PVH stub and acts on the first word of its command
 * line:
 *   exit  debug-exit with 0 (hotvm status 1)    fail  debug-exit with 1
 *   echo  print cmdline, exit 0                  anything else: halt
 * A failed check prints which one and debug-exits with 2 (status 5).
 * Linked as a flat binary (bzstub.ld): file offset = offset here.
 */
#define COM1		0x3f8
#define DEBUG_EXIT	0x501
#define SETUP_SECTS	1

/* Zero page offsets (Documentation/arch/x86/zero-page.rst, boot.rst). */
#define ZP_ACPI_RSDP	0x070
#define ZP_E820_ENTRIES	0x1e8
#define ZP_HEADER	0x202
#define ZP_LOADER	0x210
#define ZP_LOADFLAGS	0x211
#define ZP_CODE32_START	0x214
#define ZP_RAMDISK	0x218
#define ZP_RAMDISK_SIZE	0x21c
#define ZP_CMD_LINE_PTR	0x228
#define ZP_E820_TABLE	0x2d0

	.text
	.globl _start
_start:
	/* The boot sector: nothing runs here. */
	.org 0x1f1
	.byte SETUP_SECTS
	.word 0			/* root_flags */
	.long (pm_end - pm_start) / 16	/* syssize */
	.word 0			/* ram_size */
	.word 0			/* vid_mode */
	.word 0			/* root_dev */
	.word 0xaa55		/* boot_flag */
	.byte 0xeb, hdr_end - hdrs	/* jump: its offset gives the length */
hdrs:	.ascii "HdrS"
	.word 0x020f		/* version 2.15 */
	.long 0			/* realmode_swtch */
	.word 0			/* start_sys_seg */
	.word 0			/* kernel_version */
	.byte 0			/* type_of_loader */
	.byte 0x01		/* loadflags: LOADED_HIGH */
	.word 0			/* setup_move_size */
	.long 0x100000		/* code32_start */
	.long 0, 0		/* ramdisk_image, ramdisk_size */
	.long 0			/* bootsect_kludge */
	.word 0			/* heap_end_ptr */
	.byte 0, 0		/* ext_loader_ver, ext_loader_type */
	.long 0			/* cmd_line_ptr */
	.long 0x7fffffff	/* initrd_addr_max */
	.long 0x200000		/* kernel_alignment */
	.byte 1			/* relocatable_kernel */
	.byte 21		/* min_alignment */
	.word 0x0001		/* xloadflags: XLF_KERNEL_64 */
	.long 255		/* cmdline_size */
	.long 0			/* hardware_subarch */
	.quad 0			/* hardware_subarch_data */
	.long 0, 0		/* payload_offset, payload_length */
	.quad 0			/* setup_data */
	.quad 0x1000000		/* pref_address */
	.long 0x100000		/* init_size */
	.long 0			/* handover_offset */
	.long 0			/* kernel_info_offset */
hdr_end:

	.org (SETUP_SECTS + 1) * 512
pm_start:
	/* The 32-bit entry, which hotvm never uses. */
	.code32
	cli
1:	hlt
	jmp	1b

	.org pm_start + 0x200
	.code64
startup_64:
	cli
	lea	stack_top(%rip), %rsp
	mov	%rsi, %rbp		/* the zero page */

	lea	msg_hello(%rip), %rsi
	call	puts

	lea	msg_hdrs(%rip), %rbx
	cmpl	$0x53726448, ZP_HEADER(%rbp)	/* "HdrS" */
	jne	panic
	lea	msg_loader(%rip), %rbx
	cmpb	$0xff, ZP_LOADER(%rbp)
	jne	panic
	testb	$0x80, ZP_LOADFLAGS(%rbp)	/* CAN_USE_HEAP */
	jz	panic
	lea	msg_code32(%rip), %rbx
	lea	pm_start(%rip), %rax
	mov	ZP_CODE32_START(%rbp), %ecx
	cmp	%rax, %rcx
	jne	panic

	lea	msg_rsdp(%rip), %rbx
	mov	ZP_ACPI_RSDP(%rbp), %rax
	movabs	$0x2052545020445352, %rcx	/* "RSD PTR " */
	cmp	(%rax), %rcx
	jne	panic

	lea	msg_e820(%rip), %rbx
	mov	%cr3, %rdi
	mov	$2, %edx		/* the page tables: reserved */
	call	e820_type
	jne	panic
	lea	pm_start(%rip), %rdi
	mov	$1, %edx		/* the kernel: RAM */
	call	e820_type
	jne	panic

	lea	msg_initrd(%rip), %rbx
	cmpl	$0, ZP_RAMDISK_SIZE(%rbp)
	je	1f
	mov	ZP_RAMDISK(%rbp), %eax
	cmpl	$0x74696e69, (%rax)	/* "init" */
	jne	panic
1:
	lea	msg_online(%rip), %rsi
	call	puts
	lea	msg_ready(%rip), %rsi
	call	puts

	mov	ZP_CMD_LINE_PTR(%rbp), %esi
	mov	(%rsi), %eax
	cmp	$0x74697865, %eax	/* "exit" */
	je	exit_ok
	cmp	$0x6c696166, %eax	/* "fail" */
	je	exit_fail
	cmp	$0x6f686365, %eax	/* "echo" */
	jne	park
	call	puts
	lea	msg_nl(%rip), %rsi
	call	puts
exit_ok:
	xor	%eax, %eax
	jmp	debug_exit
exit_fail:
	mov	$1, %eax
	jmp	debug_exit
panic:
	lea	msg_panic(%rip), %rsi
	call	puts
	mov	%rbx, %rsi
	call	puts
	mov	$2, %eax
debug_exit:
	mov	$DEBUG_EXIT, %dx
	outb	%al, %dx
park:
	hlt
	jmp	park

/*
 * ZF set when an e820 entry of type %edx contains address %rdi.
 * Clobbers %rax, %rcx, %r8, %r9.
 */
e820_type:
	movzbl	ZP_E820_ENTRIES(%rbp), %ecx
	lea	ZP_E820_TABLE(%rbp), %r8
1:	test	%ecx, %ecx
	jz	3f
	mov	(%r8), %rax		/* addr */
	cmp	%rax, %rdi
	jb	2f
	add	8(%r8), %rax		/* + size */
	cmp	%rax, %rdi
	jae	2f
	cmp	16(%r8), %edx		/* type */
	ret
2:	add	$20, %r8
	dec	%ecx
	jmp	1b
3:	or	$1, %ecx		/* ZF clear: no entry has it */
	ret

#include "stub_puts.inc"

msg_hello:	.asciz "bz-stub: hello\n"
msg_online:	.asciz "online: 0\n"
msg_ready:	.asciz "ready\n"
msg_nl:		.asciz "\n"
msg_panic:	.asciz "bz-stub: bad "
msg_hdrs:	.asciz "zero page (no HdrS)\n"
msg_loader:	.asciz "type_of_loader or loadflags\n"
msg_code32:	.asciz "code32_start\n"
msg_rsdp:	.asciz "acpi_rsdp_addr\n"
msg_e820:	.asciz "e820 table\n"
msg_initrd:	.asciz "initrd\n"

	.balign 16
	.fill 1024, 1, 0
stack_top:
pm_end:

	.section .note.GNU-stack, "", @progbits
