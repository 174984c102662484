// SPDX-License-Identifier: GPL-2.0-only
/*
 * COM1, polled output only.  Every port access is a VM exit (about 8 us on
 * the software /dev/kvm), so the FIFO is enabled and filled 16 bytes per
 * THRE poll instead of polling before each byte, and each chunk goes out
 * with one "rep outsb": KVM hands a string I/O instruction to the VMM as
 * one exit with a count, so a line costs two exits per 16 bytes, not one
 * per byte.
 */
#include "hotvm/abi.h"
#include "serial.h"

#define UART_THR 0 /* transmit holding register */
#define UART_IER 1
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define UART_DLL 0
#define UART_DLM 1

#define UART_LSR_THRE 0x20
#define UART_FIFO_LEN 16

/* Bounded, so that a UART that never reports THRE cannot hang the guest. */
#define UART_POLL_MAX 100000

void serial_init(void)
{
	const u16 base = ABI_COM1_PORT;

	outb(base + UART_IER, 0x00);
	outb(base + UART_LCR, 0x80); /* DLAB: set the divisor */
	outb(base + UART_DLL, 0x01); /* 115200 baud */
	outb(base + UART_DLM, 0x00);
	outb(base + UART_LCR, 0x03); /* 8n1 */
	outb(base + UART_FCR, 0x07); /* enable and clear both FIFOs */
	outb(base + UART_MCR, 0x03); /* DTR, RTS */
}

static void serial_wait_thre(void)
{
	for (int i = 0; i < UART_POLL_MAX; i++) {
		if (inb(ABI_COM1_PORT + UART_LSR) & UART_LSR_THRE)
			return;
		cpu_relax();
	}
}

void serial_write(const char *s, size_t n)
{
	while (n) {
		size_t chunk = n < UART_FIFO_LEN ? n : UART_FIFO_LEN;

		/* THRE set means the whole transmit FIFO is empty. */
		serial_wait_thre();
		outsb(ABI_COM1_PORT + UART_THR, s, chunk);
		s += chunk;
		n -= chunk;
	}
}
