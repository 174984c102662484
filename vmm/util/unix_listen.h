/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The unix stream sockets hotvm listens on (the control API's, the guest
 * agent's): created with no window in which others could connect, a stale
 * socket file of a dead VMM replaced but a live one's never, removed at
 * the end only if it is still ours; and who may connect (docs/security.md).
 */
#ifndef HOTVM_UNIX_LISTEN_H
#define HOTVM_UNIX_LISTEN_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

/* The socket file made, to tell it from a successor's. */
struct unix_listen_id {
	dev_t dev;
	ino_t ino;
};

/*
 * Binds and listens on @path: mode 0600, or 0660 and group *@gid when
 * @gid is not NULL.  Returns the listening fd (non-blocking, close on
 * exec) or -errno, having said why on stderr, each line starting with
 * @who ("api", "agent").
 */
int unix_listen(const char *path, const gid_t *gid, const char *who,
		struct unix_listen_id *id);

/* Removes @path if it is still the socket unix_listen() made. */
void unix_listen_unlink(const char *path, const struct unix_listen_id *id);

/*
 * Whether the peer of @fd may connect: the uid @owner, root, or (with
 * @gid not NULL) a member of group *@gid.  *@cr gets the peer's
 * credentials (uid -1 and pid 0 when the kernel gives none).
 */
bool unix_peer_allowed(int fd, uid_t owner, const gid_t *gid, struct ucred *cr);

#endif
