// SPDX-License-Identifier: GPL-2.0-only
/* A recorded client (recorded.h): one orchestrator's framing, on a socket. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "recorded.h"

#define REC_WAIT_MS 60000 /* a reply: this machine's KVM is slow */

long long rec_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* The next message as this client's reader splits them; NULL: timeout. */
static struct json_object *rec_read(struct rec *r, long long deadline)
{
	for (;;) {
		const char *eol = r->framing == REC_CRLF_ONLY ? "\r\n" : "\n";
		char *end = r->len ? memmem(r->buf, r->len, eol, strlen(eol))
				   : NULL;
		struct pollfd p = { .fd = r->fd, .events = POLLIN };
		long long left;
		ssize_t n;

		if (end) {
			size_t line = (size_t)(end - r->buf);
			struct json_object *o;

			*end = 0;
			o = json_tokener_parse(r->buf);
			if (!o)
				printf("# %s: cannot parse a line: %s\n",
				       r->who, r->buf);
			line += strlen(eol);
			memmove(r->buf, r->buf + line, r->len - line);
			r->len -= line;
			if (o)
				return o;
			continue;
		}
		if (r->len + 65536 > r->cap) {
			r->cap = r->cap ? r->cap * 2 : 1 << 20;
			r->buf = realloc(r->buf, r->cap);
		}
		left = deadline - rec_now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return NULL;
		n = recv(r->fd, r->buf + r->len, r->cap - r->len - 1, 0);
		if (n <= 0)
			return NULL;
		r->len += (size_t)n;
	}
}

int rec_open(struct rec *r, const char *sock, const char *who,
	     const char *id_fmt, const char *eol, enum rec_framing framing)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	bool ints = id_fmt && !strcmp(id_fmt, "%u#");

	*r = (struct rec){ .who = who,
			   .id_fmt = ints ? NULL : id_fmt,
			   .int_ids = ints,
			   .eol = eol,
			   .framing = framing,
			   .next_id = 1 };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->fd < 0 || connect(r->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	r->greeting = rec_read(r, rec_now_ms() + REC_WAIT_MS);
	return r->greeting ? 0 : -EPROTO;
}

void rec_close(struct rec *r)
{
	for (unsigned int i = 0; i < r->nev; i++)
		json_object_put(r->events[i].ev);
	json_object_put(r->greeting);
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	r->fd = -1;
}

static void rec_keep(struct rec *r, struct json_object *ev)
{
	if (r->nev == REC_MAX_EVENTS) {
		json_object_put(r->events[0].ev);
		memmove(r->events, r->events + 1,
			sizeof(r->events[0]) * (REC_MAX_EVENTS - 1));
		r->nev--;
	}
	r->events[r->nev++] =
		(struct rec_event){ .ev = ev, .at_ms = rec_now_ms() };
}

struct json_object *rec_exec(struct rec *r, const char *cmd,
			     struct json_object *args)
{
	struct json_object *req = json_object_new_object(), *o, *id;
	char idbuf[32] = "";
	const char *s;
	char *line;
	int ok;

	json_object_object_add(req, "execute", json_object_new_string(cmd));
	if (args)
		json_object_object_add(req, "arguments", json_object_get(args));
	if (r->id_fmt) {
		snprintf(idbuf, sizeof(idbuf), r->id_fmt, r->next_id++);
		json_object_object_add(req, "id",
				       json_object_new_string(idbuf));
	}
	s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	line = malloc(strlen(s) + 3);
	sprintf(line, "%s%s", s, r->eol);
	ok = send(r->fd, line, strlen(line), MSG_NOSIGNAL) ==
	     (ssize_t)strlen(line);
	free(line);
	json_object_put(req);
	if (!ok) {
		printf("# %s: cannot send %s\n", r->who, cmd);
		return NULL;
	}
	for (;;) {
		o = rec_read(r, rec_now_ms() + REC_WAIT_MS);
		if (!o) {
			printf("# %s: no reply to %s (as this client frames "
			       "them)\n",
			       r->who, cmd);
			return NULL;
		}
		if (json_object_object_get_ex(o, "event", NULL)) {
			rec_keep(r, o);
			continue;
		}
		/* One request at a time: the reply is ours; its id must be. */
		if (r->id_fmt && (!json_object_object_get_ex(o, "id", &id) ||
				  strcmp(json_object_get_string(id), idbuf))) {
			printf("# %s: the reply to %s does not carry id %s\n",
			       r->who, cmd, idbuf);
			json_object_put(o);
			return NULL;
		}
		return o;
	}
}

struct json_object *rec_return(struct json_object *reply)
{
	struct json_object *ret = NULL;

	if (reply && !json_object_object_get_ex(reply, "return", &ret)) {
		printf("# error reply: %s\n",
		       json_object_to_json_string(reply));
		return NULL;
	}
	return ret;
}

static bool rec_matches(struct json_object *ev, const char *name,
			const char *key, const char *val)
{
	struct json_object *n, *d, *v;

	if (!json_object_object_get_ex(ev, "event", &n) ||
	    strcmp(json_object_get_string(n), name))
		return false;
	if (!key)
		return true;
	return json_object_object_get_ex(ev, "data", &d) &&
	       json_object_object_get_ex(d, key, &v) &&
	       json_object_is_type(v, json_type_string) &&
	       !strcmp(json_object_get_string(v), val);
}

struct json_object *rec_event(struct rec *r, const char *name, const char *key,
			      const char *val, long long deadline_ms,
			      long long *at_ms)
{
	for (;;) {
		struct json_object *o;

		for (unsigned int i = 0; i < r->nev; i++) {
			if (!rec_matches(r->events[i].ev, name, key, val))
				continue;
			o = r->events[i].ev;
			if (at_ms)
				*at_ms = r->events[i].at_ms;
			memmove(r->events + i, r->events + i + 1,
				sizeof(r->events[0]) * (r->nev - i - 1));
			r->nev--;
			return o;
		}
		o = rec_read(r, deadline_ms);
		if (!o)
			return NULL;
		if (json_object_object_get_ex(o, "event", NULL))
			rec_keep(r, o);
		else
			json_object_put(o); /* a reply nobody waits for */
	}
}
