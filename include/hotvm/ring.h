/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The report ring: hotvm's tiny-guest extension of the CPU-hotplug wire
 * (docs/design.md §6.8).  One area of guest memory that the guest and the
 * VMM share, so that a hot-add or a removal costs a handful of exits to
 * user space instead of one per register access:
 *
 *  - guest -> host, the ring: one entry per state transition of the
 *    guest's cpuhp table (selector, ABI_GUEST_STATE_* word, result, the
 *    guest's TSC), the same facts the register report (command 0x10)
 *    carries, plus the time;
 *  - guest -> host, the console: hot-path lines (the `online:` line) as
 *    bytes the VMM copies to COM1's sink, instead of one exit per byte;
 *  - host -> guest, the mailbox: per-selector bitmaps of pending insert
 *    and remove events and of a fault or target waiting in the register
 *    block, so the guest's scan reads memory, not registers.
 *
 * The guest writes the doorbell port only when the host must act: at the
 * end of its work (a DONE, a failure) when the host has not already read
 * everything, or when the ring is nearly full.  The VMM reads the ring at
 * the doorbell, at every register-block access and whenever a query needs
 * the guest's latest states.
 *
 * Only the tiny guest uses it, and only when the FDT's cpuhp node has the
 * "hotvm,ring" property (ABI_RING_FDT_PROP: address and size, then the
 * doorbell port in ABI_RING_FDT_DOORBELL).  Linux (no FDT) and the tiny
 * guest under QEMU (no ring) keep the register protocol, which stays
 * whole.  The VMM writes into this memory only after the guest has
 * enabled the ring (ABI_RING_DB_ENABLE): until then it is ordinary RAM.
 *
 * Everything here is untrusted on the host side: indices, entries and
 * bitmaps are validated, copied once, and never used to address anything
 * outside the area.  Freestanding: both sides include it.
 */
#ifndef HOTVM_RING_H
#define HOTVM_RING_H

#include <stdint.h>

/* Where the area is: below 1 MiB, after the Linux boot64 area. */
#define ABI_RING_PADDR 0x70000UL
#define ABI_RING_SIZE  0x3000UL

/* The doorbell: a 4-byte write to this I/O port (one exit). */
#define ABI_RING_DOORBELL_PORT	0x504
#define ABI_RING_DOORBELL_WIDTH 4
#define ABI_RING_DB_DRAIN	1u	    /* read the ring and the console */
#define ABI_RING_DB_ENABLE	0x676e6972u /* "ring": the header is ready */

/* FDT properties of the cpuhp node: <u64 paddr, u64 size>, <u32 port>. */
#define ABI_RING_FDT_PROP     "hotvm,ring"
#define ABI_RING_FDT_DOORBELL "hotvm,ring-doorbell"

#define ABI_RING_MAGIC	 0x676e6972u
#define ABI_RING_VERSION 1u

/* Selectors the mailbox covers (the register block's HPREGS_MAX_CPUS). */
#define ABI_RING_MAX_SEL    4096u
#define ABI_RING_MBOX_WORDS (ABI_RING_MAX_SEL / 64)

/* Offsets inside the area. */
#define ABI_RING_HDR_OFF    0x0
#define ABI_RING_INSERT_OFF 0x100 /* u64 bitmap: insert pending */
#define ABI_RING_REMOVE_OFF 0x300 /* u64 bitmap: remove pending */
#define ABI_RING_FAULT_OFF  0x500 /* u64 bitmap: read command 0x11 */
#define ABI_RING_TARGET_OFF 0x700 /* u64 bitmap: read command 0x12 */
#define ABI_RING_CON_OFF    0x900
#define ABI_RING_CON_SIZE   0x400 /* console bytes, a power of two */
#define ABI_RING_ENTRY_OFF  0x1000
#define ABI_RING_ENTRIES    256 /* a power of two */
#define ABI_RING_ENTRY_SIZE 32
/* The guest rings when this many entries wait (3/4 full). */
#define ABI_RING_NEARLY_FULL (ABI_RING_ENTRIES * 3 / 4)

/*
 * The header.  head and con_head are the guest's (entries and console
 * bytes written, free-running); tail and con_tail the host's (consumed).
 * db_tsc is the guest's TSC just before it rang: with the host's clock
 * at the doorbell it turns the entries' TSCs into host time.
 */
struct abi_ring_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t head;
	uint32_t tail;
	uint32_t con_head;
	uint32_t con_tail;
	uint64_t db_tsc;
};

/*
 * One transition.  seq is index + 1, written last (after the fields), so
 * a reader that sees seq match knows the entry is whole; sel is the
 * register block's selector; value the ABI_GUEST_STATE_* word of regs.h
 * (state after the step, UP, ROLLBACK, FAILED, DONE); ret the callback's
 * or the operation's result (0 or a negative errno); tsc the guest's TSC
 * when the step ended.
 */
struct abi_ring_entry {
	uint32_t seq;
	uint32_t sel;
	uint32_t value;
	int32_t ret;
	uint64_t tsc;
	uint64_t reserved;
};

_Static_assert(sizeof(struct abi_ring_entry) == ABI_RING_ENTRY_SIZE,
	       "ring entry size");
_Static_assert(sizeof(struct abi_ring_hdr) <= ABI_RING_INSERT_OFF,
	       "ring header fits");
_Static_assert(ABI_RING_TARGET_OFF + ABI_RING_MBOX_WORDS * 8 <=
		       ABI_RING_CON_OFF,
	       "mailbox fits");
_Static_assert(ABI_RING_CON_OFF + ABI_RING_CON_SIZE <= ABI_RING_ENTRY_OFF,
	       "console fits");
_Static_assert(ABI_RING_ENTRY_OFF + ABI_RING_ENTRIES * ABI_RING_ENTRY_SIZE <=
		       ABI_RING_SIZE,
	       "entries fit");

#endif
