/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest side of the CPU-hotplug register block (docs/design.md §6,
 * include/hotvm/abi.h): the access sequences, over an accessor so that
 * the host unit test can run them against the VMM's model.  No policy
 * here: hotplug.c decides what to do with the events.
 *
 * The selector and the command are global state of the block, so every
 * sequence (select -> command -> data) runs under one lock; hpio caches
 * the last selector and command it wrote to skip repeating them (a
 * report is then one VM exit).  Anything else that writes the block (the
 * fuzzer) must call hpio_invalidate() afterwards.
 */
#ifndef GUEST_HPIO_H
#define GUEST_HPIO_H

#include "cpuhp.h"
#include "hotvm/regs.h"
#include "kernel.h"

struct hpio {
	u32 (*read)(struct hpio *io, unsigned int off, unsigned int width);
	void (*write)(struct hpio *io, unsigned int off, unsigned int width,
		      u32 v);
	void *ctx;	     /* for the accessor */
	unsigned int nr_sel; /* selectors 0 .. nr_sel - 1 (max CPUs) */
	int cur_sel;	     /* last selector written, -1 unknown */
	int cur_cmd;	     /* last command written, -1 unknown */
	spinlock_t lock;
};

void hpio_invalidate(struct hpio *io);

/*
 * The two buses the block sits on: MMIO at @base (hotvm), or I/O ports
 * from @port (QEMU q35, 0xcd8).  Both set up @io for selectors
 * 0 .. @nr_sel - 1 with nothing cached.
 */
void hpio_init_mmio(struct hpio *io, u64 base, unsigned int nr_sel);
void hpio_init_port(struct hpio *io, u16 port, unsigned int nr_sel);

/* Single steps; the caller holds io->lock (hpio_lock/hpio_unlock). */
void hpio_lock(struct hpio *io);
void hpio_unlock(struct hpio *io);
void hpio_select(struct hpio *io, u32 sel);
void hpio_command(struct hpio *io, u8 cmd);
u8 hpio_flags(struct hpio *io);
void hpio_write_flags(struct hpio *io, u8 bits);
u32 hpio_data(struct hpio *io);
void hpio_write_data(struct hpio *io, u32 v);

/*
 * Whole sequences; each takes the lock.
 *
 * hpio_arch_id: select, command 3, read data (low 32 bits: the APIC ID).
 * hpio_ext_read: select, command 1, command @cmd, read data.  Command 1
 *   first because a block that does not know @cmd keeps its previous
 *   command, and data then reads as 0 only under command 1 (QEMU and
 *   hotvm agree): an old VMM never hands us a selector as a fault.
 * hpio_report: select, command 0x10 (after command 3, for the same
 *   reason: data writes under command 3 are ignored everywhere), write
 *   data.  Selector and command are skipped when cached.
 * hpio_eject: select, write flags bit 3.
 * hpio_ost: select, command 1, write @event, command 2, write @status,
 *   as QEMU's _OST method (COST) does; QEMU emits ACPI_DEVICE_OST on the
 *   status write.  hotvm's block ignores both.
 */
u32 hpio_arch_id(struct hpio *io, u32 sel);
u32 hpio_ext_read(struct hpio *io, u32 sel, u8 cmd);
void hpio_report(struct hpio *io, u32 sel, u32 value);
void hpio_eject(struct hpio *io, u32 sel);
void hpio_ost(struct hpio *io, u32 sel, u32 event, u32 status);
u8 hpio_read_flags(struct hpio *io, u32 sel);

/*
 * QEMU's CSCN: select 0; loop { command 0 (next CPU with events, from the
 * selector); read data = the selected CPU; read flags; insert: clear it,
 * record; remove: clear it, record; go on from selected + 1 }.  Stops
 * when the block wraps (selected < start), when nothing is found, or
 * after nr_sel rounds, so a block that misbehaves cannot hang the guest.
 * A CPU selected with neither insert nor remove pending (firmware remove
 * only) is stepped over, not taken as the end.  Returns the number of
 * rounds; *nr_ins / *nr_rm hold the selectors (at most @max each).
 */
unsigned int hpio_scan(struct hpio *io, u32 *ins, unsigned int *nr_ins, u32 *rm,
		       unsigned int *nr_rm, unsigned int max);

/*
 * The ABI_GUEST_STATE_* word for a cpuhp notice: for a step, the CPU's
 * state after it (an up step that succeeded: its state; a down step:
 * its state - 1; unchanged on failure); for DONE, the final state.
 */
u32 hpio_report_value(const struct cpuhp_notice *n);

#endif
