/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-console (device id 3) with VIRTIO_CONSOLE_F_MULTIPORT over the
 * MMIO transport (docs/design.md §6.6, §6.9): one port, named for what
 * listens at the host end (`org.qemu.guest_agent.0`: the guest agent), so
 * that the guest's udev finds it by name.  Four queues: the port's
 * receive and transmit, the control receive and transmit.
 *
 * The control conversation is the driver's: DEVICE_READY, then the
 * device's PORT_ADD; the driver's PORT_READY, then the device's
 * PORT_NAME and PORT_OPEN (the host end is always there); the driver's
 * PORT_OPEN 1 and 0 as a guest program opens and closes the port.  Every
 * message the guest sends is guest data, checked (vcon_control()).
 *
 * The port's bytes: guest to host through the callbacks of a struct
 * serial_host (the agent's, qga_init()), on the device thread; host to
 * guest through vcon_send() into a ring that the device thread empties
 * into the driver's receive buffers while a guest program has the port
 * open.  A close, the device's reset and the VM's reset drop what the
 * guest has not been given.
 */
#ifndef HOTVM_VIRTIO_CONSOLE_H
#define HOTVM_VIRTIO_CONSOLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_console.h>

#include "serial.h"
#include "virtio_mmio.h"

#define VCON_QUEUE_SIZE 64
#define VCON_RX_SIZE	4096 /* host bytes in flight to the guest */
#define VCON_NAME_MAX	64   /* the port's name */
#define VCON_CTRL_MAX	8    /* control messages waiting for a buffer */

enum { VCON_Q_RX, VCON_Q_TX, VCON_Q_CRX, VCON_Q_CTX, VCON_NR_QUEUES };

struct vcon_stats {
	uint64_t bad_ctrl;     /* control messages refused */
	uint64_t dup_ctrl;     /* repeated READY messages, ignored */
	uint64_t ctrl_dropped; /* ours, for want of room or a big buffer */
	uint64_t opens, closes;
	uint64_t to_guest, from_guest; /* port bytes */
	uint64_t dropped;	       /* host bytes a close or reset dropped */
};

struct vcon_msg {
	uint32_t len;
	uint8_t b[8 + VCON_NAME_MAX];
};

struct vcon {
	struct virtio_dev_ops ops;
	struct virtio_console_config cfg;
	char name[VCON_NAME_MAX + 1];
	struct serial_host host;
	struct virtio_mmio *mmio; /* to wake the device thread; may be NULL */

	pthread_mutex_t lock; /* below; taken under the transport's io_lock */
	bool dev_ready, port_ready, guest_open;
	struct vcon_msg ctl[VCON_CTRL_MAX];
	unsigned int ctl_head, ctl_n;
	uint8_t rx[VCON_RX_SIZE];
	unsigned int rx_head, rx_len;
	struct vcon_stats st;
};

/* A console whose one port is @name (at most VCON_NAME_MAX bytes). */
int vcon_init(struct vcon *s, const char *name, const struct serial_host *h);
void vcon_destroy(struct vcon *s);
/* The transport whose device thread serves it (vcon_send() wakes it). */
void vcon_attach(struct vcon *s, struct virtio_mmio *v);

/*
 * One control message from the driver (@len bytes, guest data): 0, or
 * -EINVAL for one refused (counted).  The device thread's; the fuzzer's.
 */
int vcon_control(struct vcon *s, const void *msg, size_t len);

/* Host to guest (struct qga_port's send): returns the bytes taken. */
size_t vcon_send(void *ctx, const void *buf, size_t len);
/* Drops what the guest has not been given (struct qga_port's flush). */
void vcon_flush(void *ctx);

void vcon_get_stats(struct vcon *s, struct vcon_stats *out);

#endif
