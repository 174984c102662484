// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest end of the agent's UART for the unit tests (uart_guest.h).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "uart_guest.h"

enum { REG_RBR = 0, REG_IER = 1, REG_LSR = 5 };
#define LSR_DR 0x01

static int irq_efd = -1;
static struct uart_guest *irq_owner;

int uart_guest_line(struct vm *vm, unsigned int irq, int level)
{
	uint64_t one = 1;

	if (irq_owner && vm == &irq_owner->vm && irq == UART_GUEST_IRQ &&
	    level && write(irq_efd, &one, sizeof(one)) < 0)
		return -errno;
	return irq == UART_GUEST_IRQ ? 0 : -EINVAL;
}

int uart_guest_irq_fd(void)
{
	return irq_efd;
}

void uart_guest_irq_ack(void)
{
	uint64_t n;

	if (read(irq_efd, &n, sizeof(n)) < 0)
		return; /* EAGAIN: nothing pending */
}

void uart_guest_kick(void)
{
	uint64_t one = 1;

	if (write(irq_efd, &one, sizeof(one)) < 0)
		return;
}

int uart_guest_init(struct uart_guest *u)
{
	struct serial_host host;
	int ret;

	*u = (struct uart_guest){ .io = BUS_INIT_PIO };
	irq_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (irq_efd < 0)
		return -errno;
	ret = qga_init(&u->agent, &host);
	if (ret)
		goto err_efd;
	serial_open_callback(&u->port, &host, &u->vm, UART_GUEST_IRQ);
	ret = serial_register(&u->port, &u->io, UART_GUEST_PORT);
	if (ret)
		goto err_qga;
	qga_attach(&u->agent, &u->port);
	irq_owner = u;
	return 0;
err_qga:
	serial_close(&u->port);
	qga_destroy(&u->agent);
err_efd:
	close(irq_efd);
	irq_efd = -1;
	return ret;
}

void uart_guest_destroy(struct uart_guest *u)
{
	irq_owner = NULL;
	serial_close(&u->port);
	qga_destroy(&u->agent);
	close(irq_efd);
	irq_efd = -1;
}

static uint8_t uart_in(struct uart_guest *u, unsigned int reg)
{
	uint8_t d = 0;

	bus_dispatch(&u->io, UART_GUEST_PORT + reg, &d, 1, false);
	return d;
}

static void uart_outb(struct uart_guest *u, unsigned int reg, uint8_t v)
{
	bus_dispatch(&u->io, UART_GUEST_PORT + reg, &v, 1, true);
}

void uart_guest_rx_irq(struct uart_guest *u, bool on)
{
	uart_outb(u, REG_IER, on ? 1 : 0);
}

int uart_guest_getc(struct uart_guest *u)
{
	if (!(uart_in(u, REG_LSR) & LSR_DR))
		return -1;
	return uart_in(u, REG_RBR);
}

void uart_guest_putc(struct uart_guest *u, unsigned char c)
{
	uart_outb(u, REG_RBR, c);
}

void uart_guest_write(struct uart_guest *u, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		uart_guest_putc(u, p[i]);
}
