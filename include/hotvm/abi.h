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
#define ABI_ACPI_MAX	  (ABI_RESET_VECTOR_PADDR - ABI_ACPI_PADDR)
/*
 * The x86 reset vector (F000:FFF0).  hotvm has no firmware, but Linux on a
 * hardware-reduced machine without EFI falls back to jumping there to
 * reboot (after its EFI reboot finds no EFI): a few bytes there write the
 * reset register instead (docs/design.md §9).
 */
#define ABI_RESET_VECTOR_PADDR 0xffff0UL
#define ABI_LOWMEM_END	       0xa0000UL /* RAM below this; 0xa0000-1M reserved */
#define ABI_KERNEL_PADDR       0x100000UL

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
/* The guest agent's channel (hotvm run --agent): COM2, the PC's. */
#define ABI_COM2_PORT 0x2f8
#define ABI_COM2_IRQ  3
#define ABI_DEBUG_EXIT_PORT                                                    \
	0x501 /* as QEMU's isa-debug-exit: status (v << 1) | 1 */

/*
 * The ACPI power-management device: the hardware-reduced FADT's sleep
 * control and status registers and its reset register, one byte each.
 * Writing SLP_EN with SLP_TYP ABI_PM_SLP_TYP_S5 to the sleep control
 * register powers the machine off (the DSDT's \_S5 package holds that
 * type); writing ABI_PM_RESET_VALUE to the reset register resets it.
 */
#define ABI_PM_PORT	     0x600
#define ABI_PM_SLEEP_CTL     0 /* offsets from ABI_PM_PORT */
#define ABI_PM_SLEEP_STS     1
#define ABI_PM_RESET	     2
#define ABI_PM_SIZE	     3
#define ABI_PM_SLP_EN	     0x20
#define ABI_PM_SLP_TYP_SHIFT 2
#define ABI_PM_SLP_TYP_MASK  0x1c
#define ABI_PM_SLP_TYP_S5    5
#define ABI_PM_RESET_VALUE   0x01

/*
 * Values the tiny guest writes to the debug-exit port, and the resulting
 * process exit status of hotvm (or QEMU with isa-debug-exit).
 */
#define ABI_EXIT_SUCCESS 0 /* status 1: everything asked for worked */
#define ABI_EXIT_FAILURE 1 /* status 3: a check or self-test failed */
#define ABI_EXIT_PANIC	 2 /* status 5: exception, or an impossible state */

/*
 * The CPU hotplug devices (GED and register block): their addresses,
 * registers, bits and commands are in regs.h, one table for the device
 * models, the guest driver and the AML.
 */
#include "regs.h"

/*
 * virtio-MMIO devices (hotvm run --disk): window N at ABI_VIRTIO_MMIO +
 * N * ABI_VIRTIO_MMIO_SIZE, interrupt GSI ABI_VIRTIO_IRQ + N (IOAPIC pins
 * 16-23, which no ISA device uses), edge-triggered, active high.  The
 * DSDT describes each as LNRO0005 (docs/design.md §6.1, §6.9).
 */
#define ABI_VIRTIO_MMIO	     0xfeb01000UL
#define ABI_VIRTIO_MMIO_SIZE 0x200UL
#define ABI_VIRTIO_IRQ	     16
#define ABI_VIRTIO_MAX	     8

/*
 * --agent's virtio-console (--agent-channel virtio): the window after the
 * disks', and ISA IRQ 10 (the pins 16-23 are the disks'), edge-triggered,
 * active high.  DSDT device VCON, LNRO0005.
 */
#define ABI_VCON_MMIO (ABI_VIRTIO_MMIO + ABI_VIRTIO_MAX * ABI_VIRTIO_MMIO_SIZE)
#define ABI_VCON_IRQ  10

/*
 * --net N's virtio-net (N = 0..3, in the order given): window N at
 * ABI_NET_MMIO + N * ABI_VIRTIO_MMIO_SIZE, a page after the console's, and
 * ISA IRQs that no device of hotvm's has (floppy, parallel port, PS/2
 * mouse, primary IDE), edge-triggered, active high.  DSDT devices NET0..3,
 * LNRO0005, _UID 16 + N.
 */
#define ABI_NET_MMIO (ABI_VCON_MMIO + 0x1000UL)
#define ABI_NET_MAX  4
#define ABI_NET_IRQS                                                           \
	{                                                                      \
		6, 7, 12, 14                                                   \
	}
#define ABI_NET_UID 16

/*
 * --vsock's virtio-vsock: the last window of the page after the disks',
 * ISA IRQ 11, edge-triggered, active high.  DSDT device VSCK, LNRO0005.
 */
#define ABI_VSOCK_MMIO 0xfeb02e00UL
#define ABI_VSOCK_IRQ  11

/* hotvm's own exit statuses are even, so they never collide with the guest's. */
#define ABI_STATUS_SIGNAL 0 /* stopped by SIGINT or SIGTERM */
#define ABI_STATUS_USAGE  2 /* bad command line, kernel image or configuration */
#define ABI_STATUS_VMFAIL 4 /* KVM error, emulation failure, triple fault */

/* The FDT the VMM hands the tiny guest as the last PVH module. */
#define ABI_FDT_COMPATIBLE     "hotvm,tiny-v1"
#define ABI_FDT_MODULE_CMDLINE "hotvm-fdt"

#endif
