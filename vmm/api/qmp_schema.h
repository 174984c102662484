/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control API's schema (docs/design.md §7): how a command is declared
 * (its name, where it runs, its arguments), how a request is checked
 * against that declaration before the handler runs, and what a handler
 * uses to read its arguments and report an error.
 */
#ifndef HOTVM_QMP_SCHEMA_H
#define HOTVM_QMP_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hv_err.h"

struct json_object;

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
	/*
	 * QMP_ARG_INT: min..max unless both 0; max_fn, if set, gives max
	 * (it gets the ctx the command table was registered with).
	 */
	int64_t min, max;
	int64_t (*max_fn)(void *ctx);
	/* QMP_ARG_STR: the only values it takes (NULL-terminated), if set. */
	const char *const *values;
	const char *help; /* one line, for the documentation */
};

/*
 * The JSON type of a member of a reply, as the reply's declaration gives
 * it (QAPI's "returns"): what the README's table and the reply-shape test
 * (tests/api/test_api_replies.c) are made from.
 */
enum qmp_type {
	QMP_T_INT = 1,
	QMP_T_STR,
	QMP_T_BOOL,
	QMP_T_OBJECT, /* exactly the members declared */
	QMP_T_ARRAY,  /* every element of type elem */
	/* An object whose members are not fixed, every one of type elem. */
	QMP_T_MAP,
};

/*
 * A member of a reply (or, without a name, the whole reply): its type,
 * whether it may be absent or null, and for an object (or an array or map
 * of objects) its members, an array ended by an entry without a name.
 */
struct qmp_field {
	const char *name;
	enum qmp_type type;
	enum qmp_type elem; /* QMP_T_ARRAY, QMP_T_MAP: each element's type */
	bool optional;
	bool nullable;
	const struct qmp_field *members;
};

/* A reply's declaration: {} ... */
#define QMP_RETURNS_NOTHING                                                    \
	{                                                                      \
		.type = QMP_T_OBJECT                                           \
	}
/* ... an object with members m ... */
#define QMP_RETURNS_OBJECT(m)                                                  \
	{                                                                      \
		.type = QMP_T_OBJECT, .members = (m)                           \
	}
/* ... or an array of such objects. */
#define QMP_RETURNS_LIST(m)                                                    \
	{                                                                      \
		.type = QMP_T_ARRAY, .elem = QMP_T_OBJECT, .members = (m)      \
	}

/* One request of a batch: its arguments, and what handler would return. */
struct qmp_call {
	struct json_object *args; /* borrowed */
	struct json_object *ret;  /* as handler's *ret */
	struct qmp_error err;
	int rc;
};

/*
 * A command, declared once: its name, where it runs (flags), a one-line
 * description, its arguments (an array ended by an entry without a name;
 * NULL for none) and what its reply holds when it succeeds (returns; a
 * type of 0 declares nothing, which only the server's tests do).  The server checks a request against args before
 * the handler runs, with QEMU's words: "Parameter 'x' is missing",
 * "Invalid parameter type for 'x', expected: integer", "Parameter 'x' is
 * unexpected", so the handler reads them without checking again
 * (qmp_int(), qmp_str(), ...).  args is the request's "arguments" (an
 * empty object when the request had none), borrowed for the call; ctx is
 * what the table was registered with.  On success the handler returns 0
 * and may set *ret to a new reference the server takes over (NULL means
 * {}).  On failure it returns a negative errno and fills err; if it left
 * err empty the server reports GenericError with strerror(-rc).
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
	struct qmp_field returns;
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
 * runs (open: members not declared are allowed; ctx: for max_fn).  0 or
 * -EINVAL with err.
 */
int qmp_check_args(struct json_object *args, const struct qmp_arg *decl,
		   bool open, void *ctx, struct qmp_error *err);

/* A declared argument by name, or NULL. */
const struct qmp_arg *qmp_arg_find(const struct qmp_arg *decl,
				   const char *name);

/*
 * A command the server can take: a handler, flags that agree, sound
 * arguments and reply declarations (known types, no name twice).
 */
bool qmp_command_ok(const struct qmp_command *cmd);

/*
 * QEMU's checks of a request's shape (qmp_dispatch_check_obj), with its
 * words: tools match on them.  Returns the command name or NULL with err
 * set; *args is the request's "arguments", NULL when it has none.
 */
const char *qmp_check_request(struct json_object *req,
			      struct json_object **args, struct qmp_error *err);

#endif
