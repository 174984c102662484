/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Counting the vCPUs' exits to user space, by kind and, for port I/O and
 * MMIO, by the device on the bus that took the access.  Every exit is a
 * round trip out of KVM_RUN and back: their number is what a hot-add
 * costs on every host, however fast its exits are (docs/design.md §14).
 * One set of counters per VM, bumped by each vCPU thread with relaxed
 * atomics, read as a copy; the difference of two copies is what one
 * operation cost.  With the counts, while an operation runs (timing),
 * the CPU time the vCPU threads spent in user space handling them (from
 * KVM_RUN's return to the next KVM_RUN): hotvm's own share of the exits
 * (docs/design.md §14).  CPU time, not wall time: on a host with fewer
 * CPUs than threads, an exit that wakes the operation thread may wait for
 * it to run before it gets back to KVM_RUN, and that is not its work.
 */
#ifndef HOTVM_VMEXIT_H
#define HOTVM_VMEXIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus.h"

enum vmexit_kind {
	VMEXIT_PIO,
	VMEXIT_MMIO,
	VMEXIT_HLT,
	VMEXIT_SHUTDOWN,
	VMEXIT_OTHER, /* a signal's kick, a system event, an error */
	VMEXIT_NR,
};

/* The two buses whose devices are counted. */
enum vmexit_space {
	VMEXIT_SPACE_PIO,
	VMEXIT_SPACE_MMIO,
	VMEXIT_SPACES,
};

/* A device's index on its bus, then one slot for "no device there". */
#define VMEXIT_DEVS	     (BUS_MAX_DEVS + 1)
#define VMEXIT_DEV_UNCLAIMED BUS_MAX_DEVS

struct vmexit_counters {
	_Atomic uint64_t kind[VMEXIT_NR];
	_Atomic uint64_t dev[VMEXIT_SPACES][VMEXIT_DEVS];
	_Atomic uint64_t handled_ns; /* every exit's handling, summed */
	/* Operations running that want handled_ns (vmexit_timing()). */
	_Atomic int timing;
	_Atomic int inflight; /* exits being timed now */
	/* Where the devices' names come from; either may be NULL. */
	const struct bus *bus[VMEXIT_SPACES];
};

/* A copy of the counters at one moment, or a difference of two. */
struct vmexit_counts {
	uint64_t kind[VMEXIT_NR];
	uint64_t dev[VMEXIT_SPACES][VMEXIT_DEVS];
	uint64_t handled_ns;
};

/* "pio", "mmio", "hlt", "shutdown", "other". */
const char *vmexit_kind_name(enum vmexit_kind k);

/*
 * One exit of kind @k; for PIO and MMIO, @dev is bus_find()'s index on
 * that bus (negative: nobody's).
 */
void vmexit_count(struct vmexit_counters *c, enum vmexit_kind k, int dev);

/*
 * The calling thread's CPU clock in ns, if an operation wants exits timed
 * (else 0: reading the clock is a system call, which the exits outside
 * an operation need not pay for).
 */
uint64_t vmexit_clock(struct vmexit_counters *c);
/* Since @t0 (vmexit_clock()'s, 0: not timed) was handling an exit. */
void vmexit_time(struct vmexit_counters *c, uint64_t t0);
/* An operation starts (@on) or ends wanting its exits timed. */
void vmexit_timing(struct vmexit_counters *c, bool on);
/*
 * Whether no timed exit is being handled: an operation that ends reads
 * handled_ns once the exit that woke it (a doorbell, an eject) has
 * finished and added its time.
 */
bool vmexit_settled(const struct vmexit_counters *c);

void vmexit_read(const struct vmexit_counters *c, struct vmexit_counts *out);

/* *a -= *b, counter by counter (b read before a). */
void vmexit_sub(struct vmexit_counts *a, const struct vmexit_counts *b);

uint64_t vmexit_total(const struct vmexit_counts *c);

/*
 * The name of device @i of @space for a report, unique on the machine:
 * "uart@0x3f8" (its name, or the space's when it has none, and its base),
 * or "pio-unclaimed" / "mmio-unclaimed" for VMEXIT_DEV_UNCLAIMED.  Written
 * into buf (len bytes), which is returned.  @c may be NULL (no names).
 */
const char *vmexit_dev_name(const struct vmexit_counters *c,
			    enum vmexit_space space, unsigned int i, char *buf,
			    size_t len);

#endif
