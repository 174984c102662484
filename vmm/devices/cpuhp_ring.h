/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The host's end of the report ring (hotvm/ring.h, docs/design.md §6.8):
 * reads the tiny guest's state transitions and console bytes out of guest
 * memory and writes the mailbox's pending-event bits.  Part of the
 * register block (cpuhp_regs.c), which owns the events the mailbox
 * mirrors.
 *
 * Nothing is written into guest memory before the guest enables the ring
 * (ABI_RING_DB_ENABLE with a valid header), and never outside the area.
 * Everything read from it is copied once and validated: an index that
 * claims more than the ring holds, an entry whose sequence number is not
 * the one expected (torn by a racing write, or garbage), a selector, state
 * word or result out of range, a console index out of range, a doorbell
 * with an unknown value are each counted (hpring_ign) and skipped; the
 * reader never waits for the guest.
 *
 * Thread-safe: one mutex, held across the callbacks of one drain so that
 * entries reach the controller in order.  Callbacks must not call back
 * into the ring.
 */
#ifndef HOTVM_CPUHP_RING_H
#define HOTVM_CPUHP_RING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hotvm/ring.h"

enum hpring_ign {
	HPRING_IGN_INDEX,    /* head beyond tail + the ring's size */
	HPRING_IGN_TORN,     /* an entry's seq is not its index + 1 */
	HPRING_IGN_ENTRY,    /* selector, state word or result out of range */
	HPRING_IGN_CONSOLE,  /* console head beyond tail + its size */
	HPRING_IGN_DOORBELL, /* unknown value, or the ring is not enabled */
	HPRING_IGN_HEADER,   /* enable with a bad magic or version */
	HPRING_IGN_NR,
};

struct hpring_stats {
	uint64_t doorbells; /* doorbell writes, ignored ones included */
	uint64_t drains;    /* reads that found something */
	uint64_t entries;   /* entries handed to the controller */
	uint64_t console;   /* console bytes copied to the sink */
	uint64_t clamped;   /* timestamps outside [previous, now] */
	uint64_t ignored[HPRING_IGN_NR];
};

struct hpring_ops {
	/*
	 * One transition, validated: @cpu < max_cpus, @value in
	 * ABI_GUEST_STATE_* encoding, @ret 0 or -1..-4095, @at_ns the
	 * guest's time of it on CLOCK_MONOTONIC (never later than now,
	 * never earlier than the previous entry's).
	 */
	void (*entry)(void *ctx, unsigned int cpu, uint32_t value, int ret,
		      uint64_t at_ns);
};

/* Console bytes the guest wrote into the ring: COM1's sink takes them. */
typedef void (*hpring_console_fn)(void *ctx, const void *buf, size_t n);

/* The mailbox's bitmaps (hotvm/ring.h). */
enum hpring_box {
	HPRING_INSERT,
	HPRING_REMOVE,
	HPRING_FAULT,
	HPRING_TARGET,
	HPRING_NR_BOXES,
};

struct hpring {
	/*
	 * lock: everything below; queries take it, so nothing under it
	 * waits on a sink.  out_lock: held by the one thread writing the
	 * console to COM1's sink (a vCPU's), taken before lock, never by
	 * a query, so the console's bytes keep their order.
	 */
	pthread_mutex_t lock, out_lock;
	uint8_t *mem; /* the area in the VMM's mapping; NULL: no ring */
	unsigned int max_cpus;
	_Atomic bool enabled;
	uint32_t tail, con_tail;  /* the host's own: never read back */
	uint64_t tsc_khz;	  /* the guest's TSC rate; 0: unknown */
	uint64_t ref_tsc, ref_ns; /* a doorbell's TSC and host time */
	bool have_ref;
	uint64_t last_ns; /* the latest entry's time */
	struct hpring_ops ops;
	void *ctx;
	hpring_console_fn console;
	void *console_ctx;
	struct hpring_stats stats;
};

/*
 * @mem: ABI_RING_SIZE bytes of guest memory at ABI_RING_PADDR, or NULL
 * (no ring: every call is then a no-op).  Returns 0 or -errno.
 */
int hpring_init(struct hpring *g, uint8_t *mem, unsigned int max_cpus);
void hpring_destroy(struct hpring *g);
void hpring_attach(struct hpring *g, const struct hpring_ops *ops, void *ctx);
void hpring_set_console(struct hpring *g, hpring_console_fn fn, void *ctx);
/* The guest TSC's rate (KVM_GET_TSC_KHZ): entries get host times. */
void hpring_set_tsc_khz(struct hpring *g, uint64_t khz);

/*
 * A doorbell write of @value at host time @now_ns (CLOCK_MONOTONIC):
 * ENABLE checks the header and turns the ring on (returns 1, the caller
 * then posts the events already pending); DRAIN reads it.  Returns 0, 1,
 * or -EINVAL for a doorbell that was ignored (counted).
 */
int hpring_doorbell(struct hpring *g, uint32_t value, uint64_t now_ns);
/*
 * A query's read (any thread): the entries the guest wrote since the last
 * read.  It never writes to a sink and leaves the console to the next
 * exit's read.  No-op when off.
 */
void hpring_drain(struct hpring *g);
/*
 * An exit's read (the vCPU thread, at a register access): the console's
 * new bytes go to COM1's sink first, with no lock a query takes held,
 * then the entries as hpring_drain().  The doorbell reads the same way.
 */
void hpring_drain_exit(struct hpring *g);
bool hpring_enabled(struct hpring *g);
/* The ring goes off (a machine reset): guest memory is the guest's again. */
void hpring_disable(struct hpring *g);

/*
 * Mailbox bits for selector @cpu (atomic on guest memory; no-ops while
 * the ring is off).  test reads, clear_test clears and says whether the
 * bit was set (the guest had not taken it).
 */
void hpring_post(struct hpring *g, enum hpring_box box, unsigned int cpu);
bool hpring_test(struct hpring *g, enum hpring_box box, unsigned int cpu);
bool hpring_clear_test(struct hpring *g, enum hpring_box box, unsigned int cpu);

void hpring_stats(struct hpring *g, struct hpring_stats *st);
const char *hpring_ign_name(int reason);

#endif
