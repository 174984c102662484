/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ACPI Generic Event Device (hardware-reduced ACPI, docs/design.md §6.3):
 * one 32-bit event register at offset 0 of an ABI_GED_SIZE MMIO window.
 * Reading it returns the pending event bits and clears them in one atomic
 * step, so an event raised while the guest's _EVT method runs is either in
 * this read or in the next one, never lost.  Writes are ignored.
 *
 * ged_raise() sets bits and then fires the interrupt through the callback
 * given to ged_init(); the VMM pulses ABI_GED_IRQ (KVM_IRQ_LINE 1 then 0),
 * an edge.  Every raise fires, even when the bits were already pending: the
 * guest may have consumed them between our OR and our edge, and a spurious
 * interrupt that reads 0 is harmless where a missing one is not.
 *
 * Thread-safe: vCPU threads read the register while the control thread
 * raises events.
 */
#ifndef HOTVM_GED_H
#define HOTVM_GED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus.h"
#include "device.h"

struct vm;

/* Fires the (edge) interrupt; returns 0 or -errno. */
typedef int (*ged_irq_fn)(void *ctx);

struct ged_stats {
	uint64_t reads;	     /* accepted reads of the event register */
	uint64_t raises;     /* ged_raise() calls with bits != 0 */
	uint64_t irq_errors; /* the interrupt callback failed */
	uint64_t ign_write;  /* writes: the register is read-only */
	uint64_t ign_width;  /* the event register, but not its width */
	uint64_t ign_offset; /* not the event register's offset */
};

struct ged {
	_Atomic uint32_t pending;
	ged_irq_fn irq;
	void *ctx;
	/* Serialises pulses, so two raisers never interleave 1,1,0,0. */
	pthread_mutex_t irq_lock;
	_Atomic uint64_t reads, raises, irq_errors, ign_write;
	struct bus_ignored bus_ign; /* width and offset, counted by the bus */
	struct vm *vm;		    /* ged_desc's interrupt: this VM's ... */
	unsigned int gsi;	    /* ... GSI, pulsed (an edge) */
};

/* irq may be NULL (no interrupt: tests, or a VM without irqchip). */
int ged_init(struct ged *g, ged_irq_fn irq, void *ctx);
void ged_destroy(struct ged *g);

/*
 * Sets bits and fires the interrupt.  Returns 0, -EINVAL for bits == 0, or
 * the callback's error (the bits stay pending: the next raise or the
 * guest's next read of the register still sees them).
 */
int ged_raise(struct ged *g, uint32_t bits);

/*
 * Registers the event register on the MMIO bus at base (ABI_GED_MMIO):
 * only ABI_GED_EVENT_WIDTH-byte accesses at ABI_GED_EVENT reach the
 * device, the bus counts the rest (ign_offset, ign_width).
 */
int ged_register(struct ged *g, struct bus *mmio, uint64_t base);

/*
 * One guest access at offset (relative to ABI_GED_MMIO), width bytes, as
 * the bus delivers it (the same checks; for tests).  A read stores the
 * value in *data (0 for an ignored access); a write's *data is ignored.
 * Returns true if the access was a valid event-register read; false for
 * anything ignored (counted).  Never an error: the guest is untrusted, and
 * nothing it does here is fatal.
 */
bool ged_access(struct ged *g, uint64_t offset, unsigned int width,
		bool is_write, uint64_t *data);

/*
 * The GED as a device (device.h): the event register at the instance's
 * base, its edge interrupt on the instance's GSI.  In the DSDT, Device
 * (name) with _HID ACPI0013, only its interrupt in _CRS (edge, active
 * high), and _EVT, which reads the register and calls HPREGS_AML_SCAN on
 * ABI_GED_EVT_CPU and notifies PM_AML_PWRB on ABI_GED_EVT_PWRBTN.  For the
 * tiny guest, the FDT node "/ged@<base>" (hotvm,ged) with reg and
 * interrupts.
 */
extern const struct dev_desc ged_desc;

/* Pending bits, without clearing them (introspection, tests). */
uint32_t ged_pending(struct ged *g);
/* A machine reset: no event pending. */
void ged_reset(struct ged *g);
void ged_stats(struct ged *g, struct ged_stats *st);

#endif
