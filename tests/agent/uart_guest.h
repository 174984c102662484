/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest end of the agent's UART in the unit tests: a driver that
 * talks to the real 16550 model through the I/O bus, as a vCPU's port
 * exits would, and waits for its receive interrupt.  The interrupt line
 * is vm_irq_line(), wrapped at link time (-Wl,--wrap=vm_irq_line) by
 * uart_guest_wrap.c or by a test machine that hands the port's line to
 * uart_guest_line(), so the test needs no KVM.  The host end is a real
 * struct qga.
 */
#ifndef HOTVM_TESTS_UART_GUEST_H
#define HOTVM_TESTS_UART_GUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "bus.h"
#include "qga.h"
#include "serial.h"
#include "vm.h"

#define UART_GUEST_PORT 0x2f8
#define UART_GUEST_IRQ	3

struct uart_guest {
	struct vm vm; /* only its address: the wrapped IRQ line's argument */
	struct bus io;
	struct serial port;
	struct qga agent;
};

/* One at a time: the wrapped IRQ line has one listener. */
int uart_guest_init(struct uart_guest *u);
void uart_guest_destroy(struct uart_guest *u);

/* IER: the guest takes (or stops taking) the receive interrupt. */
void uart_guest_rx_irq(struct uart_guest *u, bool on);
/* The next byte the host sent, or -1 when LSR says there is none. */
int uart_guest_getc(struct uart_guest *u);
void uart_guest_putc(struct uart_guest *u, unsigned char c);
void uart_guest_write(struct uart_guest *u, const void *buf, size_t len);

/* The port's interrupt line (vm_irq_line()'s arguments). */
int uart_guest_line(struct vm *vm, unsigned int irq, int level);

/*
 * An eventfd that becomes readable at each edge of the port's interrupt;
 * uart_guest_irq_ack() reads it.  uart_guest_kick() makes it readable
 * too, to wake a waiting guest thread.
 */
int uart_guest_irq_fd(void);
void uart_guest_irq_ack(void);
void uart_guest_kick(void);

#endif
