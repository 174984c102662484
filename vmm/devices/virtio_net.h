/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-net (device id 1) over the MMIO transport (docs/design.md §6.9):
 * `hotvm run --net tap=NAME[,mac=MAC][,id=NAME]`.  One receive and one
 * transmit queue, each on a thread of its own, on a backend that passes
 * whole frames, each after a 12-byte virtio_net_hdr_v1: a tap opened with
 * IFF_VNET_HDR (tap.c), or a datagram socket in the tests.
 *
 * Transmit: a chain's header is copied out once and checked against what
 * was negotiated (checksum and TSO only where offered), its length against
 * the largest frame the negotiation allows; the frame goes to the backend
 * with that copy of the header and the guest's buffers (one writev).
 * Receive: a frame is read from the backend into the device's buffer,
 * checked the same way, and copied into one chain, or with mergeable
 * receive buffers into as many as it needs (num_buffers in the header).
 * A frame the guest has no room for yet waits, and the queue's thread
 * waits for the driver's notify, not the backend.  Every frame refused is
 * dropped and counted; nothing the guest writes stops the other queue.
 */
#ifndef HOTVM_VIRTIO_NET_H
#define HOTVM_VIRTIO_NET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_net.h>

#include "device.h"
#include "virtio_mmio.h"

#define VNET_QUEUE_SIZE 256
#define VNET_HDR_LEN	12 /* struct virtio_net_hdr_v1 */
#define VNET_ETH_HLEN	14
/* A frame without TSO: 1500 bytes of payload, an Ethernet and VLAN tag. */
#define VNET_MAX_FRAME 1518
/* With TSO: an IP packet of 64 KiB, and the same. */
#define VNET_MAX_GSO_FRAME (65535 + VNET_ETH_HLEN + 4)
#define VNET_ID_MAX	   16

enum { VNET_Q_RX, VNET_Q_TX, VNET_NR_QUEUES };

/* One --net, as given. */
struct vnet_config {
	const char *tap;
	const char *id; /* NULL: "netN" */
	uint8_t mac[6];
	bool mac_set;	   /* else generated from the VM's name */
	bool no_offload;   /* offload=off: no checksum or TSO offered */
	bool no_mrg_rxbuf; /* mrg_rxbuf=off */
};

struct vnet_stats {
	uint64_t tx_frames, tx_bytes;
	uint64_t tx_bad;      /* a header not negotiated, or cut short */
	uint64_t tx_oversize; /* over the negotiated size */
	uint64_t tx_err;      /* the backend refused it */
	uint64_t rx_frames, rx_bytes;
	uint64_t rx_bad;      /* a frame the guest did not negotiate */
	uint64_t rx_oversize; /* over the negotiated size */
	uint64_t rx_no_room;  /* the driver's buffers could never hold it */
	uint64_t rx_dropped;  /* dropped by a reset */
	uint64_t bad_chain;   /* chains returned unread */
};

struct vnet {
	int fd;	  /* the backend: one frame a read or write */
	bool tap; /* a tap: its offloads follow the driver's (TUNSETOFFLOAD) */
	char id[VNET_ID_MAX + 1];
	struct virtio_net_config cfg;
	struct virtio_dev_ops ops;
	struct virtio_mmio *mmio;

	/* The receive queue's thread's own: the frame waiting, if any. */
	uint8_t *rx_buf; /* VNET_HDR_LEN + VNET_MAX_GSO_FRAME bytes */
	uint32_t rx_len;
	struct virtq_chain *rx_chains; /* VNET_QUEUE_SIZE: one frame's */
	unsigned int offl_gen; /* the generation the tap's offloads are for */
	bool offl_set;
	/* The transmit thread's: the chain's buffers and the header. */
	uint8_t tx_hdr[VNET_HDR_LEN];

	pthread_mutex_t st_lock;
	struct vnet_stats st;
};

/*
 * A device on backend @fd (a tap: @tap true) with MAC @mac; @offload:
 * checksum and TSO offered both ways; @mrg: mergeable receive buffers.
 * 0 or -ENOMEM.
 */
int vnet_init(struct vnet *n, int fd, bool tap, const uint8_t mac[6],
	      bool offload, bool mrg, const char *id);
void vnet_destroy(struct vnet *n);
/* The transport that serves it (its receive queue's serve needs it). */
void vnet_attach(struct vnet *n, struct virtio_mmio *v);

/*
 * The transmit parser: checks chain @c as the driver's frame with
 * features @f accepted and sends it to the backend.  Returns 0 sent, or
 * -EINVAL/-EMSGSIZE/-EIO refused (counted).
 */
int vnet_tx(struct vnet *n, const struct virtq_chain *c, uint64_t f);

/*
 * The receive parser: checks the frame in rx_buf (rx_len bytes, header
 * first) against features @f.  0, or -EINVAL/-EMSGSIZE (to be dropped).
 */
int vnet_rx_check(const struct vnet *n, uint64_t f);

/*
 * Copies the frame waiting into chains @c[0..k) (writable buffers,
 * enough of them), its header's num_buffers = @k, and sets each
 * chain's length written in @len.  The frame is gone after.
 */
void vnet_rx_fill(struct vnet *n, const struct virtq_chain *c, unsigned int k,
		  uint32_t *len);

/*
 * The MAC of --net @idx (its id, or NULL) on the VM named @vm: locally
 * administered, unicast, the same for the same names.
 */
void vnet_default_mac(const char *vm, const char *id, unsigned int idx,
		      uint8_t mac[6]);
/* "52:54:00:12:34:56": 0, or -EINVAL (also for a multicast or zero MAC). */
int vnet_parse_mac(const char *s, uint8_t mac[6]);

void vnet_get_stats(struct vnet *n, struct vnet_stats *out);

extern const struct dev_desc vnet_desc;

#endif
