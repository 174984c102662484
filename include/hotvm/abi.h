/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The contract between the VMM (vmm/) and the tiny guest (guest/): where
 * things sit in guest-physical memory, which ports mean what, and what the
 * guest's exit codes say.  Both sides include this header, so it must stay
 * freestanding (no libc).
 */
#ifndef HOTVM_ABI_H
#define HOTVM_ABI_H

/*
 * Guest-physical layout below 1 MiB.  The guest image itself is linked at
 * 1 MiB.  The VMM places nothing in the trampoline page, and the guest writes
 * nothing below 1 MiB except the trampoline page.
 */
#define ABI_TRAMPOLINE_PADDR 0x8000UL /* SIPI vector 0x08 */
#define ABI_BOOTDATA_PADDR                                                     \
	0x10000UL /* hvm_start_info, memmap, modlist, cmdline */
#define ABI_BOOTDATA_SIZE 0x10000UL
#define ABI_FDT_PADDR	  0x20000UL /* FDT, the PVH module after the initrd */
#define ABI_FDT_MAX	  0x40000UL /* room for 1024 possible CPUs */
#define ABI_ACPI_PADDR	  0xe0000UL /* RSDP first, so a legacy scan finds it */
#define ABI_ACPI_MAX	  0x20000UL
#define ABI_LOWMEM_END	  0xa0000UL /* RAM below this; 0xa0000-1M reserved */
#define ABI_KERNEL_PADDR  0x100000UL

/*
 * The Linux 64-bit boot protocol (bzImage) enters with paging on: the GDT
 * and the identity page tables it starts on (4 GiB in 2 MiB pages: PML4,
 * PDPT, 4 PDs) sit in this area, after the FDT, which the memory map
 * reserves for such boots.  A PVH boot leaves it alone.
 */
#define ABI_BOOT64_PADDR      0x60000UL
#define ABI_BOOT64_SIZE	      0x8000UL
#define ABI_BOOT64_GDT_PADDR  ABI_BOOT64_PADDR
#define ABI_BOOT64_PML4_PADDR (ABI_BOOT64_PADDR + 0x1000UL)

/* Devices on the I/O port bus. */
#define ABI_COM1_PORT 0x3f8
#define ABI_COM1_IRQ  4
#define ABI_DEBUG_EXIT_PORT                                                    \
	0x501 /* as QEMU's isa-debug-exit: status (v << 1) | 1 */

/*
 * Values the tiny guest writes to the debug-exit port, and the resulting
 * process exit status of hotvm (or QEMU with isa-debug-exit).
 */
#define ABI_EXIT_SUCCESS 0 /* status 1: everything asked for worked */
#define ABI_EXIT_FAILURE 1 /* status 3: a check or self-test failed */
#define ABI_EXIT_PANIC	 2 /* status 5: exception, or an impossible state */

/*
 * CPU hotplug devices (DESIGN.md section 3), on the MMIO bus.  The FDT and
 * the DSDT describe them; the tiny guest under QEMU q35 finds the same
 * register block at I/O port ABI_QEMU_CPUHP_PORT with GPE0 bit 2 instead.
 */
#define ABI_GED_MMIO	    0xfeb00000UL /* 32-bit event register */
#define ABI_GED_SIZE	    0x4
#define ABI_GED_IRQ	    5	/* GSI, edge-triggered, active high */
#define ABI_GED_EVT_CPU	    0x8 /* event bit: CPU hotplug */
#define ABI_CPUHP_MMIO	    0xfeb00100UL
#define ABI_CPUHP_SIZE	    0xc
#define ABI_QEMU_CPUHP_PORT 0x0cd8

/*
 * Register block commands (offset 5).  0-3 are QEMU's; hotvm's own start at
 * 0x10 so that QEMU ignores them.
 */
#define ABI_CPUHP_CMD_NEXT_EVENT 0
#define ABI_CPUHP_CMD_OST_EVENT	 1
#define ABI_CPUHP_CMD_OST_STATUS 2
#define ABI_CPUHP_CMD_ARCH_ID	 3
/* Write data: guest cpuhp transition of the selected CPU (see below). */
#define ABI_CPUHP_CMD_GUEST_STATE 0x10
/* Read data: injected guest fault for the selected CPU, state + 1, or 0;
 * reading consumes it (it becomes the guest's one-shot cpuhp fail). */
#define ABI_CPUHP_CMD_GUEST_FAULT 0x11

/* Read data: requested guest-side target for the selected CPU, state + 1,
 * or 0; reading consumes it (cpuhp-set-target on the guest side). */
#define ABI_CPUHP_CMD_GUEST_TARGET 0x12
/*
 * Set in that data with the target: first clear the CPU's broken mark (a
 * failed rollback), as the host's cpuhp-recover asks.
 */
#define ABI_GUEST_TARGET_RECOVER (1u << 16)
/* GED event bit: some CPU has a guest-side target request (QEMU uses 0x1-0x8). */
#define ABI_GED_EVT_GUEST 0x10

/*
 * Data of ABI_CPUHP_CMD_GUEST_STATE, written by the tiny guest after every
 * callback of its table (a library STEP notice) and at the end of every
 * operation (DONE), for the selected CPU:
 *  - bits 0-7: the CPU's guest cpuhp state after that step (unchanged when
 *    the step failed), or its final state for DONE;
 *  - UP: the walk goes up; ROLLBACK: the step is part of a rollback;
 *  - FAILED: the step (or, with DONE, the whole operation) failed;
 *  - DONE: the operation on that CPU is over.
 * The host waits for DONE (or, while hot-adding, for a state at or past
 * GUEST_AP_WORK from guest_states.h) and fails the operation at once when
 * DONE comes with FAILED.
 */
#define ABI_GUEST_STATE_MASK	 0xffu
#define ABI_GUEST_STATE_UP	 (1u << 8)
#define ABI_GUEST_STATE_ROLLBACK (1u << 9)
#define ABI_GUEST_STATE_FAILED	 (1u << 10)
#define ABI_GUEST_STATE_DONE	 (1u << 11)

/* hotvm's own exit statuses are even, so they never collide with the guest's. */
#define ABI_STATUS_SIGNAL 0 /* stopped by SIGINT or SIGTERM */
#define ABI_STATUS_USAGE  2 /* bad command line, kernel image or configuration */
#define ABI_STATUS_VMFAIL 4 /* KVM error, emulation failure, triple fault */

/* The FDT the VMM hands the tiny guest as the last PVH module. */
#define ABI_FDT_COMPATIBLE     "hotvm,tiny-v1"
#define ABI_FDT_MODULE_CMDLINE "hotvm-fdt"

#endif
