/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control API transport: a QMP server on a unix socket, framed exactly
 * as QEMU's docs/interop/qmp-spec says, so tools written for QEMU's CPU
 * hotplug drive hotvm unchanged.
 *
 * Threads.  One I/O thread polls the listening socket, every client and a
 * wakeup eventfd: it accepts, parses, writes replies and events, and never
 * waits for a command.  Commands run where their flags say:
 *  - QMP_CMD_FAST in the I/O thread itself (they must not block: `quit`,
 *    `query-status`);
 *  - QMP_CMD_QUERY (read-only) on the query thread, one at a time,
 *    concurrently with an operation;
 *  - every other command is an operation that may change the machine: on
 *    the operation thread, one at a time, in the order they arrived from
 *    all clients.  A second operation waits for the first rather than
 *    failing with "busy" (its client's reply simply comes later).
 * A client's requests are answered in the order it sent them (QMP without
 * out-of-band execution).  While an operation of a client runs, the server
 * reads ahead only operations (they queue behind it on the same thread,
 * so their replies keep the order; a burst becomes a batch); any other
 * request waits, parsed, until every earlier reply is out.  Another client
 * is never held up by it.  What is read ahead is bounded in bytes (the
 * parsed requests' estimated size): max_queued for one client's, and
 * max_queued_total for all clients'.  A request read ahead past either is
 * refused (GenericError, with its id, in its place among the replies) and
 * the server reads no more from that client until its earlier requests are
 * answered.  A client with nothing queued is always served.  And no one
 * request may take more than max_queued once parsed: it is refused while
 * it is parsed, as a parse error.
 *
 * Events may be emitted from any thread; the I/O thread writes them out as
 * they come, also while a command runs (see qmp_emit_event()).
 *
 * Who may connect: the socket is created mode 0600, and each connection's
 * peer credentials (SO_PEERCRED) are checked: the uid hotvm runs as, root,
 * and members of api_gid if one is given (the socket is then 0660 and
 * owned by that group).
 *
 * A command is declared as vmm/api/qmp_schema.h says; the server's files,
 * one job each, are listed in vmm/api/qmp_internal.h.
 */
#ifndef HOTVM_QMP_H
#define HOTVM_QMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct json_object;
struct qmp_command;
struct qmp_server;

/* The most requests one batch takes; the rest make the next batch. */
#define QMP_BATCH_MAX 1024

struct qmp_server_opts {
	const char *path; /* unix socket, created mode 0600 */
	/* Zero picks the defaults below. */
	unsigned int max_clients;
	size_t max_request; /* bytes of one JSON request */
	size_t max_output; /* bytes queued for one client that is not reading */
	/* Bytes of requests read ahead: of one client, and of all (above). */
	size_t max_queued;
	size_t max_queued_total;
	const char *package; /* greeting's "package"; default "hotvm-VERSION" */
	/* A client that has not sent qmp_capabilities by then is closed. */
	unsigned int negotiate_timeout_ms;
	/* Also let members of api_gid connect (socket mode 0660, that group). */
	bool api_group;
	gid_t api_gid;
};

#define QMP_DEFAULT_MAX_CLIENTS		 32
#define QMP_DEFAULT_MAX_REQUEST		 (1u << 20)
#define QMP_DEFAULT_MAX_OUTPUT		 (4u << 20)
#define QMP_DEFAULT_NEGOTIATE_TIMEOUT_MS 10000
/*
 * A burst of QMP_BATCH_MAX device_add (about 3 KiB each, parsed) fits
 * twice in one client's; eight clients at their limit fill the total.
 */
#define QMP_DEFAULT_MAX_QUEUED	     (8u << 20)
#define QMP_DEFAULT_MAX_QUEUED_TOTAL (64u << 20)
/*
 * Lossy events waiting for the I/O thread (it drains them as they come, so
 * only a stalled process reaches this); beyond it they are dropped and
 * counted in an EVENTS_LOST event.  Other events are never dropped here.
 */
#define QMP_MAX_PENDING_EVENTS 4096
/* hotvm's notice that a client missed lossy events: {"count": n}. */
#define QMP_EVENT_LOST "EVENTS_LOST"

/*
 * Creates the socket and binds it, but starts no thread, so a bad path is
 * reported before the VM is built.  A stale socket at path is replaced; a
 * live one (something accepts on it) gives -EADDRINUSE; anything else that
 * is not a socket gives -EEXIST and is left alone.
 */
int qmp_server_create(const struct qmp_server_opts *opts,
		      struct qmp_server **out);

/*
 * Adds commands declared as qmp_schema.h says (the array must outlive the
 * server); their handlers get ctx.  Only before qmp_server_start(): the
 * table is read without a lock by the server thread.  Returns -EINVAL for
 * a declaration the server cannot use, -EEXIST for a duplicate name,
 * -EBUSY once started.
 */
int qmp_server_register(struct qmp_server *s, const struct qmp_command *cmds,
			size_t n, void *ctx);

int qmp_server_start(struct qmp_server *s);

/*
 * @fn(@ctx) runs on the operation thread after each of its commands'
 * answers has been handed to the I/O thread (not while stopping): work
 * that follows an operation without delaying its reply.  Only before
 * qmp_server_start().
 */
void qmp_server_after_ops(struct qmp_server *s, void (*fn)(void *), void *ctx);

/*
 * Lets the command in progress on each worker finish (the caller wakes it
 * first: hotplug_shutdown()), answers the commands still queued with "the VM
 * is shutting down", joins every thread after a last non-blocking flush of
 * replies and events (so a `quit` reply gets out), closes every fd, unlinks
 * the socket if it is still ours, frees s.  Must not be called from a
 * handler (it would join itself): a `quit` handler signals the main thread
 * instead.
 */
void qmp_server_stop(struct qmp_server *s);

/*
 * Queues {"event": name, "data": data, "timestamp": now} for every client
 * that has completed negotiation; the I/O thread writes it out at once.
 * Takes over the reference to data (NULL for none).  Any thread, including
 * a handler.  Returns 0 or -ENOMEM.
 *
 * The policy for a client that does not keep up: an event from
 * qmp_emit_event() is never dropped; if a client's unread replies and
 * events pass max_output it is disconnected (and that is logged).  An event
 * from qmp_emit_event_lossy() (progress reports such as CPUHP_STATE) is
 * skipped for a client with more than max_output / 2 unread, and once it
 * has caught up the client gets one EVENTS_LOST {"count": n} saying how
 * many it missed.  Nothing is lost silently.
 */
int qmp_emit_event(struct qmp_server *s, const char *name,
		   struct json_object *data);
int qmp_emit_event_lossy(struct qmp_server *s, const char *name,
			 struct json_object *data);
/*
 * A lossy event with @data already as text: a JSON object the caller
 * wrote (for an event of every hotplug step, where building json-c objects
 * cost more than the event's formatting; docs/design.md §14), with the
 * timestamp of @at_ns (CLOCK_MONOTONIC, in the past: when the event
 * happened rather than now) on the wall clock.
 */
int qmp_emit_event_text_lossy_at(struct qmp_server *s, const char *name,
				 const char *data, uint64_t at_ns);

/* Number of connected clients, for tests and `query-status`-like output. */
unsigned int qmp_server_clients(struct qmp_server *s);

/* Operations waiting for the operation thread (not the one it runs). */
unsigned int qmp_server_queued(struct qmp_server *s);

/*
 * The estimated bytes of the requests of all clients that are queued,
 * running or held (what max_queued_total bounds), and how many requests
 * were refused because reading them ahead would pass a limit.
 */
size_t qmp_server_queued_bytes(struct qmp_server *s);
unsigned long long qmp_server_refused(struct qmp_server *s);

#endif
