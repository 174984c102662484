/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the control API tests: a temporary socket directory
 * and a raw unix-socket client that sees the bytes QMP puts on the wire.
 */
#ifndef HOTVM_TESTS_QMP_UTIL_H
#define HOTVM_TESTS_QMP_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

struct tdir {
	char dir[48];
	char path[96];
};

static inline void tdir_make(struct tdir *t)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/hotvm-qmp-XXXXXX");
	if (!mkdtemp(t->dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(t->path, sizeof(t->path), "%s/api.sock", t->dir);
}

static inline void tdir_remove(struct tdir *t)
{
	unlink(t->path);
	rmdir(t->dir);
}

static inline long long t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static inline int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

struct raw {
	int fd;
	bool eof;
	struct json_tokener *tok;
	char buf[65536];
	size_t pos, len;
};

static inline int raw_open(struct raw *r, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(r, 0, sizeof(*r));
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	r->tok = json_tokener_new();
	/*
	 * Every reply must be strict JSON, one after another (json-c's
	 * strict mode still takes NaN and Infinity: test_qemu_grammar).
	 */
	if (r->tok)
		json_tokener_set_flags(
			r->tok, JSON_TOKENER_STRICT |
					JSON_TOKENER_ALLOW_TRAILING_CHARS);
	if (r->fd < 0 || connect(r->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (r->fd >= 0)
			close(r->fd);
		json_tokener_free(r->tok);
		r->fd = -1;
		return -errno;
	}
	return 0;
}

static inline void raw_close(struct raw *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	json_tokener_free(r->tok);
	r->tok = NULL;
}

static inline int raw_send(struct raw *r, const char *s)
{
	size_t len = strlen(s);

	while (len) {
		ssize_t n = send(r->fd, s, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		s += n;
		len -= n;
	}
	return 0;
}

/* The next message, or NULL on timeout or EOF (r->eof tells which). */
static inline struct json_object *raw_recv(struct raw *r, int timeout_ms)
{
	long long deadline = t_now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p = { .fd = r->fd, .events = POLLIN };
		long long left;
		ssize_t n;

		while (r->pos < r->len && strchr(" \r\n", r->buf[r->pos]))
			r->pos++;
		if (r->pos < r->len) {
			struct json_object *o =
				json_tokener_parse_ex(r->tok, r->buf + r->pos,
						      (int)(r->len - r->pos));
			enum json_tokener_error e =
				json_tokener_get_error(r->tok);

			if (e == json_tokener_success) {
				r->pos += json_tokener_get_parse_end(r->tok);
				json_tokener_reset(r->tok);
				return o;
			}
			if (e != json_tokener_continue) {
				printf("# raw_recv: bad JSON from server\n");
				r->eof = true;
				return NULL;
			}
		}
		r->pos = r->len = 0;
		left = deadline - t_now_ms();
		if (left < 0 || poll(&p, 1, (int)left) <= 0)
			return NULL;
		n = recv(r->fd, r->buf, sizeof(r->buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r->eof = true;
			return NULL;
		}
		r->len = n;
	}
}

/* Skips events; returns the next reply. */
static inline struct json_object *raw_reply(struct raw *r, int timeout_ms)
{
	for (;;) {
		struct json_object *o = raw_recv(r, timeout_ms), *ev;

		if (!o || !json_object_object_get_ex(o, "event", &ev))
			return o;
		json_object_put(o);
	}
}

static inline struct json_object *jget(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	if (json_object_is_type(o, json_type_object))
		json_object_object_get_ex(o, k, &v);
	return v;
}

static inline const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v = jget(o, k);

	return json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static inline const char *err_class(struct json_object *o)
{
	return jstr(jget(o, "error"), "class");
}

static inline const char *err_desc(struct json_object *o)
{
	return jstr(jget(o, "error"), "desc");
}

#endif
