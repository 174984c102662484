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

struct bus;
struct vm;

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

#endif
