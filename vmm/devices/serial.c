// SPDX-License-Identifier: GPL-2.0-only
/*
 * 16550A UART.  The transmitter is always empty (LSR THRE and TEMT set), so
 * a polling guest never waits; a guest that enables the THR-empty
 * interrupt gets one per write, which is what Linux's 8250 driver expects.
 * Receive: the host queues bytes in a ring (serial_receive()); the guest
 * sees LSR DR while it is not empty and, with IER's receive bit set, a
 * "data available" interrupt, which outranks THR-empty in IIR as on the
 * chip.  No modem lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "bus.h"
#include "log.h"
#include "serial.h"
#include "vcpu.h"
#include "vm.h"

enum {
	UART_RX_TX = 0,
	UART_IER = 1,
	UART_IIR_FCR = 2,
	UART_LCR = 3,
	UART_MCR = 4,
	UART_LSR = 5,
	UART_MSR = 6,
	UART_SCR = 7,
};

#define UART_LCR_DLAB	  0x80
#define UART_IER_RDI	  0x01
#define UART_IER_THRI	  0x02
#define UART_IIR_NONE	  0x01
#define UART_IIR_THRI	  0x02
#define UART_IIR_RDI	  0x04
#define UART_IIR_FIFO	  0xc0
#define UART_FCR_CLEAR_RX 0x02
#define UART_FCR_CLEAR_TX 0x04
#define UART_LSR_DR	  0x01
#define UART_LSR_THRE	  0x20
#define UART_LSR_TEMT	  0x40
#define UART_MCR_LOOP	  0x10
#define UART_MSR_IDLE	  0xb0 /* DCD, DSR, CTS: a cable is attached */

int serial_open(struct serial *s, enum serial_sink sink, const char *path,
		struct vm *vm, unsigned int irq)
{
	*s = (struct serial){ .fd = -1, .vm = vm, .irq = irq };
	pthread_mutex_init(&s->lock, NULL);
	switch (sink) {
	case SERIAL_SINK_STDIO:
		s->fd = STDOUT_FILENO;
		break;
	case SERIAL_SINK_FILE:
		s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			     0644);
		if (s->fd < 0)
			return -errno;
		s->close_fd = true;
		break;
	case SERIAL_SINK_NONE:
	case SERIAL_SINK_CALLBACK:
		break;
	}
	return 0;
}

void serial_open_callback(struct serial *s, const struct serial_host *host,
			  struct vm *vm, unsigned int irq)
{
	serial_open(s, SERIAL_SINK_CALLBACK, NULL, vm, irq);
	s->host = *host;
}

static void serial_out(struct serial *s, uint8_t c)
{
	ssize_t n;

	if (s->host.out) {
		s->host.out(s->host.ctx, c);
		return;
	}
	if (s->fd < 0 || s->dead)
		return;
	/*
	 * A full pipe blocks here.  The kick that stops, pauses (a reset) or
	 * parks the vCPU writing interrupts the write, and then the byte is
	 * dropped and counted, so that the vCPU leaves and nothing waits on
	 * the sink's reader.  Any other signal: the write goes on.
	 */
	do {
		n = write(s->fd, &c, 1);
	} while (n < 0 && errno == EINTR && !(s->vm && vm_stopping(s->vm)) &&
		 !vcpu_self_leaving());
	if (n < 0 && errno == EINTR) {
		s->dropped++;
		return;
	}
	/* A closed stdout must not stop the guest: drop the console. */
	if (n < 0)
		s->dead = true;
}

void serial_emit(void *ctx, const void *buf, size_t n)
{
	struct serial *s = ctx;
	const uint8_t *b = buf;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < n; i++)
		serial_out(s, b[i]);
	pthread_mutex_unlock(&s->lock);
}

/* Pulses the ISA line: the IOAPIC/PIC see an edge. */
static void serial_irq(struct serial *s)
{
	if (!s->vm)
		return;
	vm_irq_line(s->vm, s->irq, 1);
	vm_irq_line(s->vm, s->irq, 0);
}

/* The next received byte; tells the host when the ring has emptied. */
static uint8_t serial_rx_pop(struct serial *s)
{
	uint8_t c;

	if (!s->rx_len)
		return 0;
	c = s->rx[s->rx_head];
	s->rx_head = (s->rx_head + 1) & (SERIAL_RX_SIZE - 1);
	if (!--s->rx_len && s->host.drained)
		s->host.drained(s->host.ctx);
	return c;
}

static uint8_t serial_read(struct serial *s, unsigned int reg)
{
	bool dlab = s->lcr & UART_LCR_DLAB;

	switch (reg) {
	case UART_RX_TX:
		return dlab ? s->dll : serial_rx_pop(s);
	case UART_IER:
		return dlab ? s->dlm : s->ier;
	case UART_IIR_FCR: {
		uint8_t fifo = (s->fcr & 1) ? UART_IIR_FIFO : 0;

		if (s->rx_len && (s->ier & UART_IER_RDI))
			return fifo | UART_IIR_RDI;
		if (s->thre_pending && (s->ier & UART_IER_THRI)) {
			s->thre_pending = false; /* reading IIR clears it */
			return fifo | UART_IIR_THRI;
		}
		return fifo | UART_IIR_NONE;
	}
	case UART_LCR:
		return s->lcr;
	case UART_MCR:
		return s->mcr;
	case UART_LSR:
		return UART_LSR_THRE | UART_LSR_TEMT |
		       (s->rx_len ? UART_LSR_DR : 0);
	case UART_MSR:
		/* In loopback, the modem inputs mirror MCR (probe tests). */
		if (s->mcr & UART_MCR_LOOP)
			return (uint8_t)(((s->mcr & 0x0c) << 4) |
					 ((s->mcr & 0x01) << 5) |
					 ((s->mcr & 0x02) << 3));
		return UART_MSR_IDLE;
	default:
		return s->scr;
	}
}

/* Returns true when the THR-empty interrupt should fire. */
static bool serial_write(struct serial *s, unsigned int reg, uint8_t v)
{
	bool dlab = s->lcr & UART_LCR_DLAB;

	switch (reg) {
	case UART_RX_TX:
		if (dlab) {
			s->dll = v;
			return false;
		}
		if (!(s->mcr & UART_MCR_LOOP))
			serial_out(s, v);
		s->thre_pending = true;
		return s->ier & UART_IER_THRI;
	case UART_IER:
		if (dlab) {
			s->dlm = v;
			return false;
		}
		/*
		 * Enabling THRI with the transmitter empty fires at once, and
		 * so does enabling RDI with bytes waiting.
		 */
		if ((v & UART_IER_THRI) && !(s->ier & UART_IER_THRI)) {
			s->ier = v & 0x0f;
			s->thre_pending = true;
			return true;
		}
		if ((v & UART_IER_RDI) && !(s->ier & UART_IER_RDI) &&
		    s->rx_len) {
			s->ier = v & 0x0f;
			return true;
		}
		s->ier = v & 0x0f;
		return false;
	case UART_IIR_FCR:
		/* Linux clears the receive FIFO when it opens the port. */
		if ((v & UART_FCR_CLEAR_RX) && s->rx_len) {
			s->rx_len = 0;
			if (s->host.drained)
				s->host.drained(s->host.ctx);
		}
		s->fcr = v & ~(UART_FCR_CLEAR_RX | UART_FCR_CLEAR_TX);
		return false;
	case UART_LCR:
		s->lcr = v;
		return false;
	case UART_MCR:
		s->mcr = v & 0x1f;
		return false;
	case UART_SCR:
		s->scr = v;
		return false;
	default: /* LSR, MSR: read-only */
		return false;
	}
}

static int serial_io(void *opaque, uint64_t offset, uint64_t *data,
		     unsigned int len, bool is_write)
{
	struct serial *s = opaque;
	unsigned int reg = offset & 7;
	bool irq = false;

	(void)len;
	pthread_mutex_lock(&s->lock);
	/* Wider accesses touch the low byte only, the rest floats. */
	if (is_write)
		irq = serial_write(s, reg, (uint8_t)*data);
	else
		*data = ~0xffULL | serial_read(s, reg);
	pthread_mutex_unlock(&s->lock);
	if (irq)
		serial_irq(s);
	return 0;
}

int serial_register(struct serial *s, struct bus *bus, uint16_t base)
{
	return bus_register(bus, &(struct bus_dev){
					 .name = "uart",
					 .base = base,
					 .len = SERIAL_PORTS,
					 .fn = serial_io,
					 .ctx = s,
				 });
}

size_t serial_receive(struct serial *s, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	bool irq;
	size_t n;

	pthread_mutex_lock(&s->lock);
	/*
	 * One edge when the ring goes from empty to not: the guest's handler
	 * reads until LSR DR clears, so bytes that arrive meanwhile need none.
	 */
	irq = !s->rx_len && (s->ier & UART_IER_RDI);
	for (n = 0; n < len && s->rx_len < SERIAL_RX_SIZE; n++) {
		s->rx[(s->rx_head + s->rx_len) & (SERIAL_RX_SIZE - 1)] = p[n];
		s->rx_len++;
	}
	pthread_mutex_unlock(&s->lock);
	if (irq && n)
		serial_irq(s);
	return n;
}

void serial_rx_flush(struct serial *s)
{
	pthread_mutex_lock(&s->lock);
	s->rx_head = 0;
	s->rx_len = 0;
	pthread_mutex_unlock(&s->lock);
}

void serial_reset(struct serial *s)
{
	pthread_mutex_lock(&s->lock);
	/* The master reset's values; the divisor latch and SCR keep theirs. */
	s->ier = 0;
	s->lcr = 0;
	s->mcr = 0;
	s->fcr = 0;
	s->thre_pending = false;
	/* Bytes the guest before the reset did not read are not the next's. */
	if (s->rx_len) {
		s->rx_head = 0;
		s->rx_len = 0;
		if (s->host.drained)
			s->host.drained(s->host.ctx);
	}
	pthread_mutex_unlock(&s->lock);
}

void serial_close(struct serial *s)
{
	if (s->dropped)
		pr_err("console: %lu byte%s dropped: the sink was full when "
		       "the vCPU writing had to stop, pause or park",
		       s->dropped, s->dropped == 1 ? "" : "s");
	if (s->close_fd && s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->close_fd = false;
	pthread_mutex_destroy(&s->lock);
}
