/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's end of hotvm's report ring (hotvm/ring.h, docs/design.md
 * §6.8): state reports and hot-path console lines go into guest memory,
 * the mailbox says which selectors have events, and the doorbell is rung
 * only when the host has something left to read and must act on it.
 * Without the FDT's ring properties (QEMU) nothing here is active and the
 * callers use the register block as before.
 */
#ifndef GUEST_GRING_H
#define GUEST_GRING_H

#include "hotvm/ring.h"
#include "kernel.h"

enum gring_box {
	GRING_INSERT,
	GRING_REMOVE,
	GRING_FAULT,
	GRING_TARGET,
};

/*
 * Clears the area at @base (@size bytes, at least ABI_RING_SIZE), writes
 * the header and rings ABI_RING_DB_ENABLE at @port.  Returns whether the
 * ring is in use (false for a missing or too small area).
 */
bool gring_init(u64 base, u64 size, u32 port);
bool gring_active(void);

/* One transition; rings when the ring is nearly full. */
void gring_report(u32 sel, u32 value, int ret);
/*
 * Console bytes for COM1 through the ring; false when they do not fit
 * even after a doorbell (the caller prints them itself).
 */
bool gring_console(const char *s, size_t n);
/* Rings the doorbell if the host has not read everything yet. */
void gring_flush(void);

/*
 * Takes the mailbox's word @w of @box (cleared atomically, as the host
 * sets bits in it); test_clear takes one selector's bit.
 */
u64 gring_take(enum gring_box box, unsigned int w);
bool gring_test_clear(enum gring_box box, u32 sel);

#endif
