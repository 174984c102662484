/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * QEMU isa-debug-exit compatible port: a guest write of v stops the VM with
 * process exit status (v << 1) | 1.
 */
#ifndef HOTVM_DEBUG_EXIT_H
#define HOTVM_DEBUG_EXIT_H

#include <stdint.h>

#include "device.h"

struct bus;
struct vm;

int debug_exit_register(struct bus *bus, struct vm *vm, uint16_t port);

/* As a device (device.h): one port at the instance's base, no state. */
extern const struct dev_desc debug_exit_desc;

/* The exit status for guest value v, as QEMU computes it (8 bits). */
static inline int debug_exit_status(uint32_t v)
{
	return (int)(((v << 1) | 1) & 0xff);
}

#endif
