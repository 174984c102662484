/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small blocking QMP client: for `hotvm cpu ...` and the tests.  Works
 * against hotvm and against QEMU alike.  Not thread-safe: one user at a time.
 */
#ifndef HOTVM_QMP_CLIENT_H
#define HOTVM_QMP_CLIENT_H

#include <stddef.h>

struct json_object;
struct qmp_client;

/* An error reply from the server, or why there was no usable reply. */
struct qmp_client_error {
	char class[64]; /* "GenericError", ...; "" for a local failure */
	char desc[512];
};

/* Events kept while waiting for replies; beyond that the oldest go. */
#define QMP_CLIENT_MAX_EVENTS 1024
/* A rogue server cannot make the client buffer more than this. */
#define QMP_CLIENT_MAX_MESSAGE (64u << 20)

/*
 * Connects, reads the greeting and, unless negotiate is 0, sends
 * qmp_capabilities.  timeout_ms bounds each step (-1: forever).  Returns 0,
 * or a negative errno with err describing it (a server that refuses the
 * connection says why in err).
 */
int qmp_client_connect(const char *path, int negotiate, int timeout_ms,
		       struct qmp_client **out, struct qmp_client_error *err);

/* The greeting object, borrowed. */
struct json_object *qmp_client_greeting(struct qmp_client *c);

/*
 * Sends {"execute": name, "arguments": args, "id": N} (args borrowed, NULL
 * for none) and waits for the reply with that id, keeping events that come
 * first.  Returns 0 with *reply the "return" value (a new reference for the
 * caller; may be NULL when reply is NULL), -EREMOTEIO with err holding the
 * server's class and desc, or a negative errno (-ETIMEDOUT, -ECONNRESET,
 * -EPROTO) with err->class "".
 */
int qmp_client_execute(struct qmp_client *c, const char *name,
		       struct json_object *args, struct json_object **reply,
		       struct qmp_client_error *err, int timeout_ms);

/*
 * qmp_client_execute() in two halves, to have several requests in flight
 * (a burst, answered in the order sent): send returns the request's
 * sequence number (> 0) or a negative errno; wait takes that number and
 * returns as execute does.  Wait for the requests in the order sent.
 */
long qmp_client_send(struct qmp_client *c, const char *name,
		     struct json_object *args, struct qmp_client_error *err);
int qmp_client_wait(struct qmp_client *c, const char *name, long seq,
		    struct json_object **reply, struct qmp_client_error *err,
		    int timeout_ms);

/*
 * The next event (kept or newly read): the whole {"event", "data",
 * "timestamp"} object, a new reference.  Returns 0, -ETIMEDOUT, or another
 * negative errno.
 */
int qmp_client_next_event(struct qmp_client *c, struct json_object **event,
			  int timeout_ms);

/* Events kept so far. */
size_t qmp_client_pending_events(struct qmp_client *c);

/*
 * The socket, to poll() on it together with other fds (tools/consistency
 * waits for an event or a console line, whichever comes first).
 */
int qmp_client_fd(struct qmp_client *c);

void qmp_client_close(struct qmp_client *c);

#endif
