// SPDX-License-Identifier: GPL-2.0-only
/* The tests' client of the guest agent's socket (mux_client.h). */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mux_client.h"

int mux_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		goto fail;
	strcpy(sa.sun_path, path);
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

int mux_say(int fd, const char *s)
{
	size_t len = strlen(s);

	while (len) {
		ssize_t n = send(fd, s, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

static long mux_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* One byte at a time: the next reply stays in the socket for later. */
long mux_line(int fd, char *buf, size_t size, int timeout_ms)
{
	long end = mux_now_ms() + timeout_ms;
	size_t len = 0;

	while (len + 1 < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = end - mux_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -1;
		n = recv(fd, buf + len, 1, 0);
		if (n == 0)
			return len ? -1 : 0;
		if (n < 0)
			return -1;
		if (buf[len] == '\n') {
			buf[len] = '\0';
			return (long)len;
		}
		len++;
	}
	return -1;
}

struct json_object *mux_ask(int fd, const char *req, int timeout_ms, int *delim)
{
	static char buf[1 << 16];
	const char *s = buf;
	long n;

	if (req && mux_say(fd, req))
		return NULL;
	n = mux_line(fd, buf, sizeof(buf), timeout_ms);
	if (n <= 0)
		return NULL;
	if (delim)
		*delim = buf[0] == '\xff';
	if (buf[0] == '\xff')
		s++;
	return json_tokener_parse(s);
}
