/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control API transport: a QMP server on a unix socket, framed exactly
 * as QEMU's docs/interop/qmp-spec says, so tools written for QEMU's CPU
 * hotplug drive hotvm unchanged.
 *
 * One server thread polls the listening socket, every client and a wakeup
 * eventfd.  Commands from all clients run one at a time in that thread, so
 * handlers never run concurrently with each other and may block (a
 * synchronous hotplug waits for the guest).  Events may be emitted from any
 * thread; they are queued and written by the server thread.
 */
#ifndef HOTVM_QMP_H
#define HOTVM_QMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;
struct qmp_server;

/* QEMU's error classes (qapi/error.json, QapiErrorClass). */
#define QMP_ERROR_GENERIC	    "GenericError"
#define QMP_ERROR_COMMAND_NOT_FOUND "CommandNotFound"
#define QMP_ERROR_DEVICE_NOT_ACTIVE "DeviceNotActive"
#define QMP_ERROR_DEVICE_NOT_FOUND  "DeviceNotFound"
#define QMP_ERROR_KVM_MISSING_CAP   "KVMMissingCap"

#define QMP_DESC_MAX 512

/* What a handler fills in when it fails. */
struct qmp_error {
	const char *class; /* one of QMP_ERROR_*: a static string */
	char desc[QMP_DESC_MAX];
};

/*
 * A command.  args is the request's "arguments" (an empty object when the
 * request had none), borrowed for the call.  On success the handler returns
 * 0 and may set *ret to a new reference the server takes over (NULL means
 * {}).  On failure it returns a negative errno and fills err; if it left err
 * empty the server reports GenericError with strerror(-rc).
 */
struct qmp_command {
	const char *name;
	int (*handler)(void *ctx, struct json_object *args,
		       struct json_object **ret, struct qmp_error *err);
};

struct qmp_server_opts {
	const char *path; /* unix socket, created mode 0600 */
	void *ctx;	  /* passed to every handler */
	/* Zero picks the defaults below. */
	unsigned int max_clients;
	size_t max_request; /* bytes of one JSON request */
	size_t max_output; /* bytes queued for one client that is not reading */
	const char *package; /* greeting's "package"; default "hotvm-VERSION" */
};

#define QMP_DEFAULT_MAX_CLIENTS 32
#define QMP_DEFAULT_MAX_REQUEST (1u << 20)
#define QMP_DEFAULT_MAX_OUTPUT	(4u << 20)
/* Events queued while the server thread is busy in a handler. */
#define QMP_MAX_PENDING_EVENTS 4096

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
 * Joins the thread (after a last non-blocking flush of replies and events,
 * so a `quit` reply gets out), closes every fd, unlinks the socket if it is
 * still ours, frees s.  Must not be called from a handler (the server thread
 * would join itself): a `quit` handler signals the main thread instead.
 */
void qmp_server_stop(struct qmp_server *s);

/*
 * Queues {"event": name, "data": data, "timestamp": now} for every client
 * that has completed negotiation.  Takes over the reference to data (NULL
 * for none).  Any thread, including a handler.  Returns -ENOSPC when
 * QMP_MAX_PENDING_EVENTS are already queued (the event is dropped).
 */
int qmp_emit_event(struct qmp_server *s, const char *name,
		   struct json_object *data);

/* Number of connected clients, for tests and `query-status`-like output. */
unsigned int qmp_server_clients(struct qmp_server *s);

/* Fills err; returns -EINVAL so a handler can `return qmp_error_set(...)`. */
int qmp_error_set(struct qmp_error *err, const char *class, const char *fmt,
		  ...) __attribute__((format(printf, 3, 4)));

/*
 * Argument helpers, with QEMU's words in their errors.  Each returns 1 and
 * sets *val when the argument is present, 0 when it is absent and not
 * required, or -EINVAL with a GenericError in err ("Parameter 'x' is
 * missing", "Invalid parameter type for 'x', expected: integer").
 * Strings point into args and live as long as it does.
 */
int qmp_arg_int(struct json_object *args, const char *name, bool required,
		int64_t *val, struct qmp_error *err);
/* Also checks min <= value <= max: "Parameter 'x' expects ..." */
int qmp_arg_int_range(struct json_object *args, const char *name, bool required,
		      int64_t min, int64_t max, int64_t *val,
		      struct qmp_error *err);
int qmp_arg_string(struct json_object *args, const char *name, bool required,
		   const char **val, struct qmp_error *err);
int qmp_arg_bool(struct json_object *args, const char *name, bool required,
		 bool *val, struct qmp_error *err);

/*
 * Rejects any member of args not in allowed (NULL-terminated): "Parameter
 * 'x' is unexpected".  Returns 0 or -EINVAL.
 */
int qmp_check_args(struct json_object *args, const char *const allowed[],
		   struct qmp_error *err);

#endif
