/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GUEST_PRINTF_H
#define GUEST_PRINTF_H

#include "kernel.h"

/*
 * A small printf: %d %i %u %x %X %o %s %c %p %%, the l/ll/z/h length
 * modifiers, '-' and '0' flags, a field width, and a precision for %s
 * (".N" or ".*").  No floating point.
 */
int vsnprintk(char *buf, size_t size, const char *fmt, va_list ap);
int snprintk(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);

/* To the serial console, one line at a time under a lock. */
int vprintk(const char *fmt, va_list ap);
int printk(const char *fmt, ...) __printf(1, 2);

/* For the exception path: do not wait forever for a lock a dead CPU holds. */
void printk_force_unlock(void);
/*
 * Called under the console lock before each line goes to the UART (the
 * report ring flushes its console lines first, so the order holds).
 */
void printk_set_hook(void (*fn)(void));

#endif
