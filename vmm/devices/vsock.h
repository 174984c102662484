/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-vsock (device id 19) over the MMIO transport, its host end unix
 * sockets in Firecracker's "hybrid vsock" convention (docs/design.md
 * §6.10): a host program connects to the device's socket PATH and sends
 * `CONNECT <port>\n` to reach the guest's listener on <port> (answered
 * `OK <hostport>\n` once the guest accepts); the guest's connection to the
 * host's port P reaches the unix socket PATH_P.  Three queues: receive
 * (host to guest), transmit, and events (never used: no migration).
 *
 * Two threads: the transport's device thread serves the queues (the
 * packets' checks, a connection's bytes read from and written to its
 * socket, never blocking), and the device's own I/O thread (vsock_io.c)
 * accepts, connects, polls the sockets, flushes what a slow host reader
 * left and closes.  A connection's bytes wait in the host's socket, not
 * in hotvm, until the guest has credit for them; the guest's bytes that
 * the host cannot take at once wait in a buffer of the size hotvm gives
 * as its credit, so a guest that sends past it breaks its own
 * connection (RST) and nobody else's.  Every guest field is checked.
 *
 * One more endpoint may live in hotvm itself (vsock_host_attach()): the
 * guest agent's, a connection hotvm opens to a guest port, its bytes
 * through the callbacks of a struct serial_host.
 */
#ifndef HOTVM_VSOCK_H
#define HOTVM_VSOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#include <linux/virtio_vsock.h>

#include "hv_err.h"
#include "serial.h"
#include "virtio_mmio.h"

#define VSOCK_HOST_CID	  2
#define VSOCK_QUEUE_SIZE  128
#define VSOCK_MAX_CONNS	  64	     /* connections, host clients waiting too */
#define VSOCK_BUF_ALLOC	  (64 << 10) /* the credit hotvm gives a connection */
#define VSOCK_MAX_PAYLOAD (64 << 10) /* one packet's bytes, either way */
#define VSOCK_RST_MAX	  16	     /* RSTs to unknown connections waiting */
#define VSOCK_AGENT_RING  4096	     /* the host endpoint's bytes in flight */
#define VSOCK_LINE_MAX	  32	     /* "CONNECT 4294967295\n" and some */
#define VSOCK_HDR	  ((uint32_t)sizeof(struct virtio_vsock_hdr))
/* Ports hotvm picks for host-initiated connections start here. */
#define VSOCK_LOCAL_PORT0 (1u << 30)
/* How long a host client may take to say CONNECT, the guest to answer. */
#define VSOCK_CONNECT_MS 2000

enum { VSOCK_Q_RX, VSOCK_Q_TX, VSOCK_Q_EVENT, VSOCK_NR_QUEUES };

/* --vsock cid=N,socket=PATH. */
struct vsock_config {
	uint64_t cid;
	const char *path;
};

/*
 * Checks --vsock's value (@text is modified): the CID neither reserved
 * (0, 1, 2) nor U32_MAX or beyond, the path short enough that PATH_P
 * fits a unix socket address for every port.  0, or -EINVAL with the reason in @err.
 */
int vsock_parse(char *text, struct vsock_config *c, struct hv_err *err);

enum vsock_state {
	VSOCK_FREE,
	VSOCK_HANDSHAKE,   /* a host client, its CONNECT line not yet read */
	VSOCK_REQUESTED,   /* hotvm asked the guest, waits for RESPONSE */
	VSOCK_CONNECTING,  /* the guest asked, the I/O thread connects */
	VSOCK_ESTABLISHED, /* both ways */
	VSOCK_CLOSING,	   /* off the guest's view: the I/O thread closes */
};

/* Control packets a connection owes the guest (vsock_conn.pend). */
enum {
	VSOCK_P_REQUEST = 1 << 0,
	VSOCK_P_RESPONSE = 1 << 1,
	VSOCK_P_RST = 1 << 2,
	VSOCK_P_SHUTDOWN = 1 << 3,
	VSOCK_P_CREDIT = 1 << 4,
};

struct vsock_conn {
	enum vsock_state state;
	unsigned int seq; /* bumped at each reuse of the slot */
	int fd;		  /* -1: hotvm's own endpoint */
	bool host;	  /* hotvm's own endpoint (the agent's) */
	bool host_side;	  /* opened by the host (CONNECT, the agent) */
	uint32_t local_port, peer_port;
	uint32_t pend;
	/* The guest's credit: what it can still take of ours. */
	uint32_t peer_buf_alloc, peer_fwd_cnt, rx_cnt;
	/* Ours: bytes the guest sent, forwarded, and last said forwarded. */
	uint32_t tx_cnt, fwd_cnt, fwd_said;
	/* The guest's bytes the host socket has not taken yet. */
	uint8_t *buf;
	uint32_t buf_head, buf_len;
	bool readable;	     /* the socket has bytes or EOF (the I/O thread) */
	bool host_eof;	     /* the host end will send no more */
	bool guest_no_rcv;   /* the guest's SHUTDOWN said RCV */
	bool guest_no_snd;   /* ... and SEND */
	bool shut_wr_done;   /* the host socket's write side shut */
	bool rst_after;	     /* an RST once the buffer is flushed */
	int64_t deadline_ms; /* 0: none */
	char line[VSOCK_LINE_MAX];
	unsigned int line_len;
};

struct vsock_stats {
	uint64_t bad_pkt;     /* refused: short, wrong CID, type, length */
	uint64_t bad_op;      /* an op not valid for the connection */
	uint64_t no_conn;     /* a packet for no connection: RST */
	uint64_t rst_dropped; /* such an RST with no room to wait */
	uint64_t credit_over; /* the guest sent past its credit: RST */
	uint64_t refused;     /* no free connection, or connect failed */
	uint64_t opened, closed;
	uint64_t to_guest, from_guest; /* payload bytes */
	uint64_t host_dropped; /* hotvm's endpoint: bytes a close dropped */
};

struct vsock {
	struct virtio_dev_ops ops;
	struct virtio_vsock_config cfg;
	uint64_t cid;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct virtio_mmio *mmio; /* to wake the device thread; may be NULL */

	pthread_mutex_t lock; /* below; taken under the transport's io_lock */
	struct vsock_conn c[VSOCK_MAX_CONNS];
	unsigned int rr; /* where the next receive buffer's search starts */
	uint32_t next_port;
	struct {
		uint32_t src, dst; /* the guest's packet's ports */
	} rst[VSOCK_RST_MAX];
	unsigned int rst_n;
	struct vsock_stats st;
	uint8_t bounce[VSOCK_MAX_PAYLOAD]; /* the device thread's */

	/* hotvm's own endpoint (vsock_host_attach()). */
	bool host_on;
	uint32_t host_port; /* the guest's port */
	struct serial_host host;
	int host_slot; /* -1: not connected */
	uint8_t hring[VSOCK_AGENT_RING];
	unsigned int hring_head, hring_len;

	/* The I/O thread (vsock_io.c). */
	int listen_fd, wake_fd, stop_fd;
	pthread_t thread;
	bool started;
	struct vsock_listen_id {
		uint64_t dev, ino;
	} lid;
};

/* A device for @c, nothing opened (tests and the fuzzer use it alone). */
int vsock_init(struct vsock *s, const struct vsock_config *c);
void vsock_destroy(struct vsock *s);
/* The transport whose device thread serves it. */
void vsock_attach(struct vsock *s, struct virtio_mmio *v);

/*
 * One packet from the driver's transmit queue: @hdr and @len bytes of
 * payload (guest data, checked).  0, or -EINVAL for one refused
 * (counted).  The device thread's; the fuzzer's.
 */
int vsock_tx(struct vsock *s, const struct virtio_vsock_hdr *hdr,
	     const uint8_t *payload, uint32_t len);

/*
 * hotvm's own endpoint: a connection to the guest's port @port, opened
 * at the first send, its bytes from the guest to @h's out, drained when
 * the guest has taken all that was sent.
 */
void vsock_host_attach(struct vsock *s, uint32_t port,
		       const struct serial_host *h);
/* Host to guest (struct qga_port's send): returns the bytes taken. */
size_t vsock_host_send(void *ctx, const void *buf, size_t len);
/* Drops what the guest has not been given (struct qga_port's flush). */
void vsock_host_flush(void *ctx);

void vsock_get_stats(struct vsock *s, struct vsock_stats *out);

/* --- vsock.c's, for vsock_io.c ------------------------------------------ */

/* Lock held: a free slot taken, or -1. */
int vsock_conn_new(struct vsock *s);
/* Lock held: the connection is dropped from the guest's view. */
void vsock_conn_close(struct vsock *s, struct vsock_conn *k);
/* Lock held: whether the guest has anything to take from @k now. */
bool vsock_conn_has_rx(const struct vsock *s, const struct vsock_conn *k);
/* Lock held: a port for a host-initiated connection, not in use. */
uint32_t vsock_local_port(struct vsock *s);
/* The I/O thread has something to do (any thread). */
void vsock_io_wake(struct vsock *s);
/* Lock held: a credit update owed if the guest may be waiting for one. */
void vsock_credit_check(struct vsock_conn *k);

/* --- vsock_io.c: the I/O thread ------------------------------------------ */

/*
 * Binds PATH (a stale socket file replaced, a live one refused) and
 * starts the I/O thread.  0 or -errno, said on stderr.
 */
int vsock_io_start(struct vsock *s);
/* Stops and joins it, closes every socket and removes PATH. */
void vsock_io_stop(struct vsock *s);

#endif
