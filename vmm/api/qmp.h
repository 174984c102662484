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
 */
#ifndef HOTVM_QMP_H
#define HOTVM_QMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hv_err.h"

struct json_object;
struct qmp_server;

/* QEMU's error classes (qapi/error.json, QapiErrorClass). */
#define QMP_ERROR_GENERIC	    "GenericError"
#define QMP_ERROR_COMMAND_NOT_FOUND "CommandNotFound"
#define QMP_ERROR_DEVICE_NOT_ACTIVE "DeviceNotActive"
#define QMP_ERROR_DEVICE_NOT_FOUND  "DeviceNotFound"
#define QMP_ERROR_KVM_MISSING_CAP   "KVMMissingCap"

/*
 * What a handler fills in when it fails: the class, and the reason (e.msg
 * is the reply's "desc") as the layer that knew wrote it (vmm/util/hv_err.h).
 */
struct qmp_error {
	const char *class; /* one of QMP_ERROR_*: a static string */
	struct hv_err e;
};

/* The JSON type an argument must have, checked before the handler runs. */
enum qmp_arg_type {
	QMP_ARG_INT = 1, /* a JSON integer that fits in int64 */
	QMP_ARG_STR,
	QMP_ARG_BOOL,
	QMP_ARG_ARRAY,
	/*
	 * An integer, or a decimal string: QEMU's device_add takes its
	 * properties through QemuOpts, so clients (Kata) send "socket-id": "1".
	 */
	QMP_ARG_INT_STR,
	/* A name or a number (a state of a table): a string or an integer. */
	QMP_ARG_NAME_INT,
};

/* A member of "arguments": its name, type and what values it takes. */
struct qmp_arg {
	const char *name;
	enum qmp_arg_type type;
	bool optional;
	bool nullable; /* JSON null is a value too (e.g. "clear") */
	/* QMP_ARG_INT: min..max unless both 0; max_fn, if set, gives max. */
	int64_t min, max;
	int64_t (*max_fn)(void);
	/* QMP_ARG_STR: the only values it takes (NULL-terminated), if set. */
	const char *const *values;
	const char *help; /* one line, for the documentation */
};

/* One request of a batch: its arguments, and what handler would return. */
struct qmp_call {
	struct json_object *args; /* borrowed */
	struct json_object *ret;  /* as handler's *ret */
	struct qmp_error err;
	int rc;
};

/* The most requests one batch takes; the rest make the next batch. */
#define QMP_BATCH_MAX 1024

/*
 * A command, declared once: its name, where it runs (flags), a one-line
 * description and its arguments (an array ended by an entry without a
 * name; NULL for none).  The server checks a request against args before
 * the handler runs, with QEMU's words: "Parameter 'x' is missing",
 * "Invalid parameter type for 'x', expected: integer", "Parameter 'x' is
 * unexpected", so the handler reads them without checking again
 * (qmp_int(), qmp_str(), ...).  args is the request's "arguments" (an
 * empty object when the request had none), borrowed for the call.  On
 * success the handler returns 0 and may set *ret to a new reference the
 * server takes over (NULL means {}).  On failure it returns a negative
 * errno and fills err; if it left err empty the server reports
 * GenericError with strerror(-rc).
 */
struct qmp_command {
	const char *name;
	int (*handler)(void *ctx, struct json_object *args,
		       struct json_object **ret, struct qmp_error *err);
	/*
	 * Optional, for an operation: runs a burst of requests of this
	 * command (queued one after another, from one client or several) in
	 * one go, e.g. every device_add of the burst presented to the guest
	 * under one GED event.  Each call is answered as if the requests had
	 * run one at a time in that order; only calls whose arguments passed
	 * the declaration's checks are given.
	 */
	void (*batch)(void *ctx, struct qmp_call *calls, size_t n);
	unsigned int flags; /* QMP_CMD_*; 0 for an operation */
	const char *help;
	const struct qmp_arg *args;
};

/* Runs in the I/O thread: never blocks, never waits for a lock held long. */
#define QMP_CMD_FAST (1u << 0)
/* Read-only: on the query thread, while an operation may run. */
#define QMP_CMD_QUERY (1u << 1)
/*
 * Members not in args are the handler's to judge (device_add: a device's
 * properties, "Property 'driver.x' not found" as QEMU's qdev says); the
 * declared ones are still checked.
 */
#define QMP_CMD_OPEN_ARGS (1u << 2)

struct qmp_server_opts {
	const char *path; /* unix socket, created mode 0600 */
	void *ctx;	  /* passed to every handler */
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
 * Adds commands (the array must outlive the server).  Only before
 * qmp_server_start(): the table is read without a lock by the server thread.
 * Returns -EEXIST for a duplicate name, -EBUSY once started.
 */
int qmp_server_register(struct qmp_server *s, const struct qmp_command *cmds,
			size_t n);

int qmp_server_start(struct qmp_server *s);

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

/* Fills err; returns -EINVAL so a handler can `return qmp_error_set(...)`. */
int qmp_error_set(struct qmp_error *err, const char *class, const char *fmt,
		  ...) __attribute__((format(printf, 3, 4)));

/*
 * The arguments of a request, once the server has checked them against
 * the command's declaration: the value, or dflt when it is absent (or
 * null).  qmp_int() also reads a QMP_ARG_INT_STR's decimal string.
 * Strings point into args and live as long as it does.
 */
bool qmp_has(struct json_object *args, const char *name);
int64_t qmp_int(struct json_object *args, const char *name, int64_t dflt);
const char *qmp_str(struct json_object *args, const char *name,
		    const char *dflt);
bool qmp_bool(struct json_object *args, const char *name, bool dflt);

/*
 * Checks args against a declaration as the server does before a handler
 * runs (open: members not declared are allowed).  0 or -EINVAL with err.
 */
int qmp_check_args(struct json_object *args, const struct qmp_arg *decl,
		   bool open, struct qmp_error *err);

/* A declared argument by name, or NULL. */
const struct qmp_arg *qmp_arg_find(const struct qmp_arg *decl,
				   const char *name);

#endif
