/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The QEMU guest agent (qemu-ga, run in the guest as
 * `qemu-ga -m isa-serial -p /dev/ttyS1`) at the far end of a UART.
 *
 * The agent is guest code: it may be absent, slow, restarted at any time,
 * or replaced by something that writes garbage.  So every call is one
 * request at a time, starts with a guest-sync-delimited handshake (which
 * throws away whatever an earlier conversation left in either direction),
 * has a deadline, and accepts only one well-formed JSON object per reply,
 * of bounded size.  A failed call leaves nothing behind: the next one
 * synchronises again (docs/design.md §6.6).
 */
#ifndef HOTVM_QGA_H
#define HOTVM_QGA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hv_err.h"
#include "serial.h"

struct json_object;

/*
 * The longest line accepted from the agent (and the size of the ring that
 * holds what it sent); a longer reply fails with -EMSGSIZE.
 */
#define QGA_REPLY_MAX (1u << 20)
/* What json-c may allocate for one reply, estimated (qmp_lex.h). */
#define QGA_PARSED_MAX (16u << 20)

struct qga_stats {
	unsigned long calls;
	unsigned long failed;	   /* any error, including the agent's own */
	unsigned long timeouts;	   /* no answer in time */
	unsigned long bad_replies; /* not JSON, wrong shape, too long */
	unsigned long stray_bytes; /* bytes outside any expected reply */
	unsigned long skipped;	   /* late replies the handshake passed over */
	unsigned long closed; /* calls the guest's close of the port ended */
	/*
	 * Wall time of hotvm's own calls (qga_call(), qga_send()), from
	 * the port's claim to the reply, handshake included, in us; and of
	 * those, the guest-set-vcpus calls', in which Linux itself brings
	 * the CPU up or down (its write to cpuN/online returns after it).
	 */
	unsigned long long own_us;
	unsigned long long set_vcpus_us;
};

/*
 * The agent's channel, host to guest: a UART (qga_attach()) or a
 * virtio-console port (vmm/devices/virtio_console.h).  Guest to host, the
 * channel calls the callbacks qga_init() filled (struct serial_host).
 */
struct qga_port {
	/* Queues up to @len bytes for the guest; returns how many fit. */
	size_t (*send)(void *ctx, const void *buf, size_t len);
	/* Drops what the guest has not read yet. */
	void (*flush)(void *ctx);
	void *ctx;
	/* How the guest starts its agent on it, for error messages. */
	const char *hint;
	/*
	 * No VM exit per byte (virtio-console, not the UART): a caller may
	 * ask for large replies in one call.
	 */
	bool bulk;
};

struct qga {
	struct qga_port port;
	pthread_mutex_t lock; /* the fields below; taken by the vCPU thread */
	pthread_cond_t cond;
	/* One request at a time (qga_claim()): the port's turn. */
	pthread_cond_t turn;
	bool busy;
	bool cancelled; /* qga_cancel(): every wait ends, no call starts */
	unsigned int own_waiting; /* hotvm's own callers, who go first */
	/*
	 * What the guest sent during the current call: a ring of
	 * QGA_REPLY_MAX bytes from in_head; the first in_scan of them are
	 * known to hold no newline.
	 */
	char *in;
	size_t in_head, in_len, in_scan;
	char *line;	/* the caller's copy of one line (qga_next_line()) */
	bool listening; /* a call is in progress: keep the guest's bytes */
	bool closed;	/* the guest closed the port during this call */
	/*
	 * The last of hotvm's calls ended with its one reply line: the
	 * stream is in step, and the next call of hotvm's needs no
	 * handshake (the port's claimer only).
	 */
	bool in_step;
	bool drained; /* the guest has read all the host sent */
	uint64_t sync_id;
	struct qga_stats stats;
	/*
	 * The host's wall clock (us) when the last call's request was
	 * handed to the guest, after its handshake: the guest acted on it
	 * after this and before the call returned.  Under lock.
	 */
	int64_t sent_us;
};

/*
 * Sets the agent up and fills @host, to be given to the port
 * (serial_open_callback()); then qga_attach() that port.
 */
int qga_init(struct qga *g, struct serial_host *host);
void qga_attach(struct qga *g, struct serial *port);
/* Or any other channel (copied). */
void qga_attach_port(struct qga *g, const struct qga_port *port);
/* After the port's vCPU threads have stopped: they call into @g. */
void qga_destroy(struct qga *g);

/*
 * Runs the agent command @cmd with @args (may be NULL; not taken) and
 * waits up to @timeout_ms for the whole exchange.  Returns 0 with the
 * reply's "return" value in *ret (a new reference, may be NULL if @ret
 * is), or a negative errno with the reason in @err: -ETIMEDOUT (no agent,
 * or too slow), -EREMOTEIO (the agent's own error: its class and desc),
 * -EPROTO (a reply that is not one JSON object of the right shape),
 * -EMSGSIZE (a reply over QGA_REPLY_MAX), -EPIPE (the guest closed the
 * port with the call in flight: virtio-console's PORT_OPEN 0, at once).
 */
int qga_call(struct qga *g, const char *cmd, struct json_object *args,
	     struct json_object **ret, int timeout_ms, struct hv_err *err);

/*
 * Sends @cmd and waits only until the agent has read it: for commands
 * that never answer on success (guest-shutdown).  Returns 0 or, as
 * qga_call(), -ETIMEDOUT and friends for the handshake before it.
 */
int qga_send(struct qga *g, const char *cmd, struct json_object *args,
	     int timeout_ms, struct hv_err *err);

/*
 * For another client of the agent (qga_mux.h): runs @cmd with @args as
 * qga_call() does, with its handshake and checks, but hotvm's own calls
 * waiting for the port go first, @timeout_ms also bounds that wait, and
 * the agent's reply comes back whole: *@reply is its {"return": ...} or
 * {"error": ...} object (a new reference).  Without @answer (the commands
 * that never answer on success), returns 0 once the agent has read it,
 * with *@reply NULL.  Errors as qga_call()'s but -EREMOTEIO.
 */
int qga_forward(struct qga *g, const char *cmd, struct json_object *args,
		bool answer, struct json_object **reply, int timeout_ms,
		struct hv_err *err);

/*
 * The part of the line s[0..*len) that counts, for the agent's replies and
 * the mux's requests alike: after its last 0xff (the agent's delimiter, or
 * where an earlier conversation was cut off), without surrounding blanks
 * (space, tab, CR).  Returns its start, its length in *len; *cut: the bytes
 * before that 0xff, dropped (0 without one).
 */
const char *qga_line_trim(const char *s, size_t *len, size_t *cut);

/*
 * The strict check of one JSON object's text from an untrusted end, as
 * the QMP server's (qmp_json.h: QEMU's grammar, which qemu-ga's parser
 * shares; no duplicate key, no \u0000), at most QGA_PARSED_MAX once
 * parsed, one object and nothing after it.  0 with the object in *@out,
 * -EPROTO with the reason in @err, or -ENOMEM.
 */
int qga_json_parse(const char *s, size_t len, struct json_object **out,
		   struct hv_err *err);

/*
 * hotvm stops: the call in flight ends at once (as at its deadline) and
 * every later one fails with -ECANCELED, so that no thread waits on the
 * guest's agent while the machine is torn down.  For good.
 */
void qga_cancel(struct qga *g);

void qga_get_stats(struct qga *g, struct qga_stats *out);

/*
 * When the last call's request went to the guest (wall clock, us): a
 * caller that just returned from qga_call() learns when the guest can
 * have acted on it at the earliest (another call needs a whole handshake
 * before it can change this).
 */
int64_t qga_last_sent_us(struct qga *g);

#endif
