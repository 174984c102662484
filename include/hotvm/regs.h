/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The register layout of the CPU hotplug devices (docs/design.md §6):
 * the Generic Event Device and QEMU's "modern CPU hotplug interface"
 * register block (QEMU docs/specs/acpi_cpu_hotplug.rst) with hotvm's
 * extension commands.  The one definition used by the device models
 * (vmm/devices/), the tiny guest's driver (guest/hotplug/hpio.c) and the
 * AML that describes the devices to an ACPI OS.  Freestanding (no libc):
 * both sides include it.
 */
#ifndef HOTVM_REGS_H
#define HOTVM_REGS_H

/*
 * Where the devices sit on the MMIO bus.  The FDT and the DSDT describe
 * them; under QEMU q35 the tiny guest finds the same register block at
 * I/O port ABI_QEMU_CPUHP_PORT with GPE0 bit 2 instead of the GED.
 */
#define ABI_GED_MMIO	    0xfeb00000UL
#define ABI_GED_SIZE	    0x4
#define ABI_GED_IRQ	    5 /* GSI, edge-triggered, active high */
#define ABI_CPUHP_MMIO	    0xfeb00100UL
#define ABI_CPUHP_SIZE	    0xc
#define ABI_QEMU_CPUHP_PORT 0x0cd8

/*
 * GED: one 32-bit event register at offset 0; reading returns the pending
 * event bits and clears them, writes are ignored.
 */
#define ABI_GED_EVENT	    0
#define ABI_GED_EVENT_WIDTH 4
#define ABI_GED_EVT_PWRBTN  0x2 /* power button (as QEMU's power-down) */
#define ABI_GED_EVT_CPU	    0x8 /* CPU hotplug (as QEMU's) */
/* Some CPU has a guest-side target request (QEMU uses 0x1-0x8). */
#define ABI_GED_EVT_GUEST 0x10

/*
 * Register block: offsets and the one access width each register takes
 * (QEMU also accepts wider accesses to the byte registers; hotvm, only
 * these, the ones QEMU's AML, OVMF and the tiny guest use).
 *
 *   off width dir  meaning
 *   0   4     W    CPU selector
 *   0   4     R    command data 2 (arch id >> 32 for command 3, else 0)
 *   4   1     R/W  flags (ABI_CPUHP_F_*)
 *   5   1     W    command (ABI_CPUHP_CMD_*)
 *   8   4     R/W  command data
 */
#define ABI_CPUHP_SELECTOR	 0
#define ABI_CPUHP_SELECTOR_WIDTH 4
#define ABI_CPUHP_FLAGS		 4
#define ABI_CPUHP_FLAGS_WIDTH	 1
#define ABI_CPUHP_COMMAND	 5
#define ABI_CPUHP_COMMAND_WIDTH	 1
#define ABI_CPUHP_DATA		 8
#define ABI_CPUHP_DATA_WIDTH	 4

/*
 * Flags: read, the selected CPU's status; write, the lowest set bit of
 * 1..4 acts (QEMU's priority).
 */
#define ABI_CPUHP_F_ENABLED   0x01 /* read: present, may be used */
#define ABI_CPUHP_F_INSERT    0x02 /* read: insert pending; write: clear */
#define ABI_CPUHP_F_REMOVE    0x04 /* read: remove pending; write: clear */
#define ABI_CPUHP_F_EJECT     0x08 /* write only: eject */
#define ABI_CPUHP_F_FW_REMOVE 0x10 /* firmware remove */

/*
 * Commands (offset 5).  0-3 are QEMU's; hotvm's own start at 0x10 so that
 * QEMU ignores them.
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

#endif
