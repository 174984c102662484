/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CPU-hotplug register block (docs/design.md §6.2): QEMU's "modern CPU
 * hotplug interface" (docs/specs/acpi_cpu_hotplug.rst), 12 bytes,
 * little-endian, plus hotvm's extension commands; the layout (offsets,
 * widths, bits, commands) is hotvm/regs.h.
 *
 * Accepted accesses (anything else is ignored, reads 0, and is counted;
 * offsets, widths and directions are declared to the bus, which drops the
 * rest):
 *
 *   off width dir  meaning
 *   0   4     W    CPU selector; any value is stored, values >= max_cpus
 *                  make every other access ignored until a valid one
 *   0   4     R    command data 2: cmd 0 -> 0, cmd 3 -> arch id >> 32
 *   4   1     R    flags: bit0 enabled, bit1 insert pending,
 *                  bit2 remove pending, bit4 firmware remove
 *   4   1     W    first set bit of 1..4 acts (QEMU's priority):
 *                  bit1 clear insert, bit2 clear remove, bit3 eject,
 *                  bit4 firmware remove
 *   5   1     W    command: 0 next CPU with events (scan from the selector,
 *                  wrapping; the selector is left on the CPU found, or
 *                  unchanged), 1 OST event, 2 OST status, 3 arch id,
 *                  0x10 guest state, 0x11 guest fault, 0x12 guest target
 *   8   4     R    command data: cmd 0 -> selector, cmd 3 -> arch id low
 *                  32 bits, cmd 0x11 -> pending guest fault (consumed),
 *                  cmd 0x12 -> pending guest target (consumed)
 *   8   4     W    command data: cmd 1 OST event, cmd 2 OST status (fires
 *                  ost()), cmd 0x10 guest state (fires guest_state())
 *
 * QEMU accepts any 1..4-byte access whose first byte is a register and
 * ignores the rest of it; hotvm accepts only the widths its documentation
 * names (the ones QEMU's AML, OVMF and the tiny guest use), so a guest that
 * is correct on both behaves identically on both.
 *
 * Eject (flags bit3) is honoured for an enabled CPU other than CPU 0, as
 * QEMU does: asked for (hpregs_request_unplug(), not yet cancelled) or
 * the guest's own idea (Linux's sysfs eject).  With deny_guest_eject an
 * eject nobody asked for is ignored instead (the VMM presents the CPU
 * again with hpregs_reinsert(), so a guest that let it go takes it back).  The
 * request is remembered apart from the remove-pending flag, because the
 * guest's scan clears remove-pending before OSPM calls _EJ0.
 *
 * Thread-safe: one mutex inside.  Callbacks run on the accessing thread
 * after the mutex is dropped, so they may call hpregs_*() themselves.
 */
#ifndef HOTVM_CPUHP_REGS_H
#define HOTVM_CPUHP_REGS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus.h"
#include "cpuhp_ring.h"
#include "device.h"
#include "hotvm/regs.h"

#define HPREGS_MAX_CPUS 4096

/* Why an access was ignored; hpregs_access() returns one of these. */
enum hpregs_ign {
	HPREGS_OK = 0,
	HPREGS_IGN_RESERVED, /* no register at this offset in this direction */
	HPREGS_IGN_WIDTH,    /* a register, but not this access width */
	HPREGS_IGN_SELECTOR, /* the selector is >= max_cpus */
	HPREGS_IGN_COMMAND,  /* unknown command: the command is unchanged */
	HPREGS_IGN_FLAGS,    /* flags write with none of bits 1-4 set */
	HPREGS_IGN_EJECT,    /* eject/firmware remove of CPU 0, an absent CPU
			      * or (deny_guest_eject) one the VMM is not
			      * removing */
	HPREGS_IGN_DATA,     /* data access the current command gives no
			      * meaning, or a malformed guest-state value */
	HPREGS_IGN_NR,
};

struct hpregs_ops {
	/*
	 * The guest ejected cpu: it is no longer enabled.  @asked: the VMM
	 * had requested it; else the guest ejected it on its own.
	 */
	void (*eject)(void *ctx, unsigned int cpu, bool asked);
	/* deny_guest_eject refused an eject: cpu is inserted again. */
	void (*eject_denied)(void *ctx, unsigned int cpu);
	/* _OST: the status write completes an (event, status) pair. */
	void (*ost)(void *ctx, unsigned int cpu, uint32_t event,
		    uint32_t status);
	/* ABI_CPUHP_CMD_GUEST_STATE: value in ABI_GUEST_STATE_* encoding. */
	void (*guest_state)(void *ctx, unsigned int cpu, uint32_t value);
	/* ABI_CPUHP_CMD_GUEST_FAULT: state + 1 to inject (consumed), or 0. */
	uint32_t (*guest_fault)(void *ctx, unsigned int cpu);
	/* ABI_CPUHP_CMD_GUEST_TARGET: state + 1 to walk to (consumed), or 0. */
	uint32_t (*guest_target)(void *ctx, unsigned int cpu);
};

struct hpregs_config {
	unsigned int max_cpus; /* 1 .. HPREGS_MAX_CPUS */
	/* max_cpus arch ids (x86: APIC ids), copied; NULL: id = index. */
	const uint64_t *arch_ids;
	const struct hpregs_ops *ops; /* may be NULL, any member NULL */
	void *ctx;
	bool deny_guest_eject;
	/*
	 * The report ring's area in the VMM's mapping of guest memory
	 * (ABI_RING_SIZE bytes at ABI_RING_PADDR), or NULL: no ring.
	 */
	uint8_t *ring_mem;
};

struct hpregs_cpu {
	uint64_t arch_id;
	uint32_t ost_event, ost_status; /* last values the guest wrote */
	bool enabled;			/* present, may be used by the guest */
	bool inserting;			/* insert event not yet cleared */
	bool removing;			/* remove event not yet cleared */
	bool fw_remove;			/* OSPM handed eject to firmware */
	bool unplug_requested;		/* the VMM wants it gone: eject ok */
	bool insert_seen; /* the guest read or cleared the insert event */
};

struct hpregs_stats {
	uint64_t accesses; /* every guest access, the bus's drops included */
	uint64_t ignored[HPREGS_IGN_NR];
	uint64_t ejects;	/* eject callbacks */
	uint64_t guest_ejects;	/* ... of those, ejects nobody asked for */
	uint64_t ejects_denied; /* refused by deny_guest_eject */
	uint64_t osts;		/* ost callbacks */
	uint64_t guest_states;	/* guest_state callbacks */
	uint64_t guest_faults;	/* guest_fault callbacks (fault data reads) */
	uint64_t guest_targets; /* guest_target callbacks (target data reads) */
	/*
	 * State reports (command 0x10 or ring entries) the controller
	 * refused: about a CPU it had not asked the guest to move.  Filled
	 * in by the controller (hotplug_device_stats()), 0 here.
	 */
	uint64_t refused_states;
	bool ring_enabled; /* the guest has its report ring on */
	struct hpring_stats ring;
};

struct hpregs {
	pthread_mutex_t lock;
	unsigned int max_cpus;
	uint32_t selector;
	uint8_t command;
	struct hpregs_cpu *cpus;
	struct hpregs_ops ops;
	void *ctx;
	bool deny_guest_eject;
	struct hpregs_stats stats;
	struct bus_ignored bus_ign; /* reserved and width, counted by the bus */
	/*
	 * The tiny guest's report ring and mailbox (cpuhp_ring.h): while the
	 * guest has it on, every insert and remove event set here is also a
	 * mailbox bit, and a bit the guest took counts as the event cleared
	 * (and, for an insert, seen) through the registers.
	 */
	struct hpring ring;
	struct bus_ignored ring_bus_ign;
};

/* Returns 0, -EINVAL (bad max_cpus), -ENOMEM. Every CPU starts absent. */
int hpregs_init(struct hpregs *r, const struct hpregs_config *cfg);
void hpregs_destroy(struct hpregs *r);

/*
 * VMM side.  All return 0 or -EINVAL (cpu >= max_cpus).
 * coldplug: enabled, no event (boot CPUs); -EBUSY if already enabled.
 * plug: enabled + insert pending (hot-add); -EBUSY if already enabled.
 * request_unplug: remove pending, eject allowed; -EPERM for CPU 0, -ENODEV
 *   if not enabled.  Repeating it re-arms remove pending (a retry).
 * cancel_unplug: the removal timed out: forget the request so a late eject
 *   is ignored; -ENOENT if none was outstanding.
 * unplug_force: undo a plug the guest never completed (hot-add timed out
 *   or was rolled back): not enabled, no event pending, no eject armed; the
 *   guest is not told.  -EPERM for CPU 0, -ENODEV if not enabled.
 * withdraw_plug: the VMM gives up a hot-add (it timed out).  If the guest
 *   has not looked at the insert event yet, the plug is undone as
 *   unplug_force and 0 is returned: the guest never learns of the CPU.
 *   If it has, it may be starting the CPU right now, so the insert turns
 *   into a removal request (remove pending, eject allowed) and 1 is
 *   returned: the caller raises the GED and waits for the eject before it
 *   stops the vCPU.  -EPERM for CPU 0, -ENODEV if not enabled.
 * The caller raises the GED event itself after plug/request_unplug.
 */
int hpregs_coldplug(struct hpregs *r, unsigned int cpu);
int hpregs_plug(struct hpregs *r, unsigned int cpu);
int hpregs_request_unplug(struct hpregs *r, unsigned int cpu);
int hpregs_cancel_unplug(struct hpregs *r, unsigned int cpu);
int hpregs_unplug_force(struct hpregs *r, unsigned int cpu);
int hpregs_withdraw_plug(struct hpregs *r, unsigned int cpu);
bool hpregs_is_enabled(struct hpregs *r, unsigned int cpu);
/*
 * A machine reset: every CPU absent with no event, the selector and
 * command back to 0; the statistics stay.
 */
void hpregs_reset(struct hpregs *r);
/*
 * An enabled CPU the guest let go is presented again: insert pending, as
 * a new hot-add.  -ENODEV if not enabled, -EINVAL for a bad cpu.
 */
int hpregs_reinsert(struct hpregs *r, unsigned int cpu);
/* Snapshot of one CPU's record; -EINVAL for a bad cpu. */
int hpregs_get_cpu(struct hpregs *r, unsigned int cpu, struct hpregs_cpu *out);

/*
 * The controller that drives the block (vmm/hotplug) attaches after the
 * block is set up (cpuhp_desc.c), before any vCPU runs: its callbacks and
 * its eject policy.
 */
void hpregs_attach(struct hpregs *r, const struct hpregs_ops *ops, void *ctx,
		   bool deny_guest_eject);

/*
 * Registers the block on the MMIO bus at base (ABI_CPUHP_MMIO) with the registers
 * of hotvm/regs.h, each at its one width and direction: the bus drops
 * (and counts, as reserved or width) every other access.
 */
int hpregs_register(struct hpregs *r, struct bus *mmio, uint64_t base);
/* The ring's doorbell on the port bus, at ABI_RING_DOORBELL_PORT. */
int hpregs_register_doorbell(struct hpregs *r, struct bus *io);
/*
 * One doorbell write of @value at @now_ns (CLOCK_MONOTONIC), as the bus
 * delivers it: hpring_doorbell(), and once the ring comes on, the events
 * already pending go into the mailbox.  Returns hpring_doorbell()'s value.
 */
int hpregs_ring_doorbell(struct hpregs *r, uint32_t value, uint64_t now_ns);
/*
 * Reads the ring's entries now (a query needs the guest's latest
 * states); never writes to a sink.  The guest's register accesses and
 * doorbells read it too, and they also write its console to COM1.
 */
void hpregs_ring_drain(struct hpregs *r);
/*
 * A fault or target for @cpu waits in the block (commands 0x11, 0x12):
 * tells a ring guest to read it.  Harmless without the ring.
 */
void hpregs_ring_hint(struct hpregs *r, enum hpring_box box, unsigned int cpu);

/*
 * One guest access as the bus delivers it (the same checks; for tests):
 * offset relative to the block's base, width in bytes (any value), *data
 * the value written (masked to width) or, for a read, the value read (0
 * when ignored).  Returns HPREGS_OK or the reason it was ignored (> 0):
 * never an error for the VMM, the guest is untrusted.
 */
int hpregs_access(struct hpregs *r, uint64_t offset, unsigned int width,
		  bool is_write, uint64_t *data);

void hpregs_stats(struct hpregs *r, struct hpregs_stats *st);

/*
 * The block as a device (device.h): the model for the machine's
 * dev_env.max_cpus at the instance's base.  Its AML, Device (CPUS) in
 * \_SB, is the processor container
 * (ACPI0010) through which an ACPI OS drives the block:
 *   PRST, fields       the register block: CSEL CPEN CINS CRMV CEJT CCMD CDAT
 *   CPLK               mutex around every select-then-access sequence
 *   CSTA(i)            _STA of CPU i: 0xF if enabled, else 0
 *   CEJ0(i)            eject CPU i
 *   COST(i, ev, st, b) _OST of CPU i to the VMM
 *   CTFY(i, code)      Notify(Cxxx, code) for CPU i
 *   CSCN()             drain insert/remove events, notify the OS
 *   CMTL/CMTX(i, id)   _MAT: Local APIC / Local x2APIC entry
 *   Cxxx               one ACPI0007 Device per possible CPU (hex index)
 * for dev_table_env.ncpus CPUs: -EINVAL for a bad ncpus, else 0; other
 * errors are the buffer's (aml_finish()).  Its FDT node for the tiny guest
 * is "/cpuhp@<base>" (hotvm,cpuhp-regs).
 */
#define HPREGS_AML_MAX_CPUS 4096	      /* device names C000..CFFF */
#define HPREGS_AML_SCAN	    "\\_SB.CPUS.CSCN" /* the GED's _EVT calls it */

extern const struct dev_desc hpregs_desc;

const char *hpregs_ign_name(int reason);

#endif
