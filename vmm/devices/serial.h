/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A 16550A UART at COM1, output only: the guest console.  The transmitter
 * is always empty (bytes go straight to the sink), nothing is ever received.
 */
#ifndef HOTVM_VMM_SERIAL_H
#define HOTVM_VMM_SERIAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct aml_buf;
struct bus;
struct vm;

#define SERIAL_PORTS 8 /* the 16550's registers, from its base port */

enum serial_sink {
	SERIAL_SINK_STDIO,
	SERIAL_SINK_FILE,
	SERIAL_SINK_NONE,
};

struct serial {
	int fd; /* -1: output discarded */
	bool close_fd;
	bool dead;     /* the sink failed: output dropped from now on */
	struct vm *vm; /* for the interrupt line; may be NULL */
	unsigned int irq;
	pthread_mutex_t lock; /* vCPU threads race on the registers */
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	bool thre_pending; /* THR-empty interrupt not yet seen in IIR */
};

/* Opens the sink (creates/truncates a file).  Returns 0 or -errno. */
int serial_open(struct serial *s, enum serial_sink sink, const char *path,
		struct vm *vm, unsigned int irq);
int serial_register(struct serial *s, struct bus *bus, uint16_t base);
void serial_close(struct serial *s);

/*
 * Device (name) { PNP0501 with IO (port, SERIAL_PORTS) and IRQ irq }, for
 * the DSDT.  Errors are the buffer's (aml_finish()).
 */
void serial_build_aml(struct aml_buf *b, const char *name, uint16_t port,
		      unsigned int irq);

#endif
