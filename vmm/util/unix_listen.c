// SPDX-License-Identifier: GPL-2.0-only
/*
 * Listening unix sockets (unix_listen.h), shared by the control API and
 * the guest agent's socket.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "unix_listen.h"

#define UNIX_MAX_GROUPS 256 /* of a peer, for the group check */

/* A socket at path: stale (nobody accepts) or in use by a live process? */
static int probe_stale(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int rc;

	if (fd < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	rc = rc ? -errno : -EADDRINUSE;
	close(fd);
	return rc == -ECONNREFUSED ? 0 : rc;
}

/* An existing file at @sa: replaced only if it is a dead VMM's socket. */
static int replace_stale(const struct sockaddr_un *sa, const char *who)
{
	struct stat st;
	int rc;

	if (lstat(sa->sun_path, &st))
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		pr_err("%s: %s exists and is not a socket; refusing to "
		       "replace it",
		       who, sa->sun_path);
		return -EEXIST;
	}
	rc = probe_stale(sa);
	if (rc) {
		pr_err("%s: %s: %s; is another hotvm using it?", who,
		       sa->sun_path,
		       rc == -EADDRINUSE ? "a server is listening"
					 : strerror(-rc));
		return rc;
	}
	unlink(sa->sun_path);
	return 0;
}

int unix_listen(const char *path, const gid_t *gid, const char *who,
		struct unix_listen_id *id)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t mode = gid ? 0660 : 0600;
	struct stat st;
	int fd, rc;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		pr_err("%s: socket path %s is too long (limit %zu bytes)", who,
		       path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	rc = replace_stale(&sa, who);
	if (rc)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Linux gives the socket file the inode's mode: no 0777 window. */
	if (fchmod(fd, 0600) || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		pr_err("%s: cannot listen on %s: %s", who, path, strerror(-rc));
		close(fd);
		return rc;
	}
	/* The group first, then its access: never open to the old group. */
	if ((gid && lchown(path, (uid_t)-1, *gid)) || chmod(path, mode) ||
	    stat(path, &st) || listen(fd, 64)) {
		rc = -errno;
		pr_err("%s: cannot listen on %s: %s%s", who, path,
		       strerror(-rc),
		       gid && rc == -EPERM
			       ? " (giving the socket to a group needs "
				 "membership of that group)"
			       : "");
		unlink(path);
		close(fd);
		return rc;
	}
	*id = (struct unix_listen_id){ .dev = st.st_dev, .ino = st.st_ino };
	return fd;
}

void unix_listen_unlink(const char *path, const struct unix_listen_id *id)
{
	struct stat st;

	/* Only our own socket: a successor may have replaced it. */
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode) && st.st_dev == id->dev &&
	    st.st_ino == id->ino)
		unlink(path);
}

static bool peer_in_group(int fd, gid_t gid, gid_t primary)
{
	gid_t groups[UNIX_MAX_GROUPS];
	socklen_t len = sizeof(groups);

	if (primary == gid)
		return true;
	/* The peer's supplementary groups, as they were at connect(). */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (size_t i = 0; i < len / sizeof(groups[0]); i++)
		if (groups[i] == gid)
			return true;
	return false;
}

bool unix_peer_allowed(int fd, uid_t owner, const gid_t *gid, struct ucred *cr)
{
	socklen_t len = sizeof(*cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &len)) {
		*cr = (struct ucred){ .uid = (uid_t)-1, .gid = (gid_t)-1 };
		return false;
	}
	return cr->uid == owner || cr->uid == 0 ||
	       (gid && peer_in_group(fd, *gid, cr->gid));
}
