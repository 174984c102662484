/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest agent for other clients (`hotvm run --agent-socket PATH`):
 * hotvm owns the guest's agent port (COM2), so a client that wants the
 * agent too (libvirt's guestvcpus, setvcpus --guest, shutdown --mode
 * agent, domfsinfo; qemu-ga-client; a script) connects to a unix socket
 * and speaks the agent's own line protocol there, as it would on a
 * chardev socket: guest-sync or guest-sync-delimited, then one command a
 * line, one reply a line (docs/control-api.md, "The guest agent's
 * socket").
 *
 * hotvm terminates that protocol: every line a client sends is checked
 * for its form (QEMU's JSON grammar, as the agent's own parser, with no
 * duplicate key and no \u0000: qga_json_parse(); one object with
 * "execute", at most QGA_REPLY_MAX bytes) and becomes one qga call of its
 * own, made with its handshake, deadline and reply checks (qga.h), so a
 * client can never desynchronise the guest's port for hotvm or another
 * client.  What it asks is not judged: by default every command the
 * agent accepts goes through, as a chardev wired to the agent would pass
 * it (guest-exec, guest-file-open, guest-set-user-password included).
 * An allow-list (`--agent-allow`) narrows that to the commands named;
 * any other gets the agent's own refusal for a disabled command, and the
 * handshake's guest-sync and guest-sync-delimited are always allowed.  Calls are one at a time
 * with hotvm's own; hotvm's go first (qga_forward()); one request per
 * client is outstanding, and a client's further bytes wait in its socket
 * until it is answered, so a flood costs the flooder, not memory.
 */
#ifndef HOTVM_QGA_MUX_H
#define HOTVM_QGA_MUX_H

#include "qga.h"

/* Clients served at once; more are refused with an error line. */
#define QGA_MUX_MAX_CLIENTS 4
/* Each forwarded call's deadline, queueing behind hotvm's included. */
#define QGA_MUX_TIMEOUT_MS 5000

struct qga_mux;

struct qga_mux_stats {
	unsigned long clients;	/* accepted since the start */
	unsigned long refused;	/* over the limit, or not allowed */
	unsigned long requests; /* lines that were requests */
	unsigned long bad;	/* not a request: answered with an error */
	unsigned long failed;	/* forwarded, and the agent failed them */
	unsigned long dropped;	/* replies to clients gone meanwhile */
};

/*
 * Whether @list is an allow-list: command names (letters, digits, '-' and
 * '_') separated by commas.
 */
bool qga_mux_allow_valid(const char *list);

/*
 * Binds @path (mode 0600: hotvm's own user and root) for the agent @g;
 * @allow: the commands clients may send (qga_mux_allow_valid()), NULL for
 * every one.  Nothing runs until qga_mux_start().  Returns 0 or -errno,
 * said on stderr.
 */
int qga_mux_create(struct qga *g, const char *path, const char *allow,
		   struct qga_mux **out);
/* Starts the socket's threads; 0 or -errno. */
int qga_mux_start(struct qga_mux *m);
/*
 * Stops the threads (a forwarded call in flight ends by its deadline),
 * closes every client, removes the socket file and frees @m.  NULL is a
 * no-op.
 */
void qga_mux_stop(struct qga_mux *m);

void qga_mux_get_stats(struct qga_mux *m, struct qga_mux_stats *out);

#endif
