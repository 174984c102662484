/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A 16550A UART: COM1, the guest console (output only), and COM2, the
 * guest agent's channel (both ways).  The transmitter is always empty
 * (bytes go straight to the sink); what the host sends waits in a
 * receive ring until the guest reads it.
 */
#ifndef HOTVM_SERIAL_H
#define HOTVM_SERIAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "device.h"

struct bus;
struct vm;

#define SERIAL_PORTS 8 /* the 16550's registers, from its base port */
/* Bytes the host can have in flight to the guest (a power of two). */
#define SERIAL_RX_SIZE 4096

enum serial_sink {
	SERIAL_SINK_STDIO,
	SERIAL_SINK_FILE,
	SERIAL_SINK_NONE,
	SERIAL_SINK_CALLBACK, /* serial_open_callback() */
};

/*
 * The host end of a two-way port.  Both run on a vCPU thread with the
 * UART's lock held: they must not block or call back into the UART.
 * @out: a byte the guest sent.  @drained: the receive ring went empty
 * (the guest read the last byte the host sent).  @closed (may be NULL;
 * not the UART's, which has no such word): the guest's program closed
 * its end (a virtio-console port's PORT_OPEN 0, the driver's or the VM's
 * reset), so what it was asked is lost.
 */
struct serial_host {
	void (*out)(void *ctx, uint8_t c);
	void (*drained)(void *ctx);
	void (*closed)(void *ctx);
	void *ctx;
};

struct serial {
	int fd; /* -1: output discarded */
	bool close_fd;
	bool dead; /* the sink failed: output dropped from now on */
	/*
	 * Bytes given up: the sink blocked (a full pipe) while the vCPU
	 * writing them had to stop, pause or park; logged at close.
	 */
	unsigned long dropped;
	struct vm *vm; /* for the interrupt line; may be NULL */
	unsigned int irq;
	pthread_mutex_t lock; /* vCPU threads race on the registers */
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	bool thre_pending;	 /* THR-empty interrupt not yet seen in IIR */
	struct serial_host host; /* SERIAL_SINK_CALLBACK */
	uint8_t rx[SERIAL_RX_SIZE];
	unsigned int rx_head, rx_len;
};

/* Opens the sink (creates/truncates a file).  Returns 0 or -errno. */
int serial_open(struct serial *s, enum serial_sink sink, const char *path,
		struct vm *vm, unsigned int irq);
/* A two-way port whose host end is @host (copied). */
void serial_open_callback(struct serial *s, const struct serial_host *host,
			  struct vm *vm, unsigned int irq);
int serial_register(struct serial *s, struct bus *bus, uint16_t base);
/*
 * The VM's reset: the registers a 16550's master reset clears go back to
 * power-on (no interrupt enabled, FIFOs off), and received bytes are
 * dropped.  Without it the guest after a reset inherits the last one's
 * IER, LCR and half-read input.
 */
void serial_reset(struct serial *s);
void serial_close(struct serial *s);

/*
 * Bytes to the sink as if the guest had written them to THR, one by one
 * (the report ring's console, cpuhp_ring.h).  @ctx: the struct serial.
 */
void serial_emit(void *ctx, const void *buf, size_t n);

/* Where a UART's output goes: an instance's settings (dev_instance.config). */
struct serial_config {
	enum serial_sink sink;
	const char *path;		/* for SERIAL_SINK_FILE */
	const struct serial_host *host; /* for SERIAL_SINK_CALLBACK */
	const char *option; /* names the setting in messages ("--serial") */
};

/*
 * Host to guest: queues up to @len bytes for the guest to read and
 * returns how many fit (0 when the ring is full: the guest is not
 * reading).  Raises the receive interrupt if the guest enabled it.
 */
size_t serial_receive(struct serial *s, const void *buf, size_t len);
/* Drops what the guest has not read yet (a new conversation starts). */
void serial_rx_flush(struct serial *s);

/*
 * The 16550 as a device (device.h): SERIAL_PORTS ports at the instance's
 * base, its interrupt at the instance's irq, its output where the
 * instance's struct serial_config says; in the DSDT, Device (name) {
 * PNP0501, _UID uid, IO and IRQ }.
 */
extern const struct dev_desc serial_desc;

#endif
