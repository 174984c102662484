/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A recorded client: speaks QMP the way one orchestrator's code does
 * (its framing, its request ids or none, its line end) and reads the
 * server the way that code does, so that a difference it would notice
 * fails the test.  libvirt splits what it reads at "\r\n" only and
 * matches replies to its "libvirt-N" ids; govmm (Kata) sends no id and
 * ends each request with "\n"; Incus/LXD number their requests with
 * integer ids, end only the handshake with "\n", and drop a reply
 * without its id.
 */
#ifndef HOTVM_TESTS_COMPAT_RECORDED_H
#define HOTVM_TESTS_COMPAT_RECORDED_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;

enum rec_framing {
	REC_CRLF_ONLY, /* a message ends at "\r\n" (libvirt's reader) */
	REC_ANY_EOL,   /* at "\n" (Go's json.Decoder and bufio readers) */
};

#define REC_MAX_EVENTS 256

struct rec_event {
	struct json_object *ev;
	long long at_ms; /* when it was read */
};

struct rec {
	int fd;
	const char *who;    /* for messages: "libvirt", "kata", "lxd" */
	const char *id_fmt; /* "libvirt-%u", or NULL: no ids (or int_ids) */
	bool int_ids;	    /* "id": 1, 2, ... as integers */
	const char *eol;    /* what ends a request: "\r\n" or "\n" */
	enum rec_framing framing;
	unsigned int next_id;
	char *buf;
	size_t len, cap;
	struct rec_event events[REC_MAX_EVENTS];
	unsigned int nev;
	struct json_object *greeting;
};

long long rec_now_ms(void);

/* Connects and reads the greeting; 0 or -errno.  @id_fmt "%u#": integers. */
int rec_open(struct rec *r, const char *sock, const char *who,
	     const char *id_fmt, const char *eol, enum rec_framing framing);
void rec_close(struct rec *r);

/*
 * Sends {"execute": cmd[, "arguments": args][, "id": ...]} and waits for
 * its reply, keeping the events that come first.  Returns the reply
 * object (caller puts it) or NULL (the reason is printed).  @args is
 * borrowed and may be NULL (no "arguments" member, as govmm sends it).
 */
struct json_object *rec_exec(struct rec *r, const char *cmd,
			     struct json_object *args);

/* The "return" of a successful reply, or NULL. */
struct json_object *rec_return(struct json_object *reply);

/*
 * The first kept event named @name whose data member @key is the string
 * @val (NULL: any), read until @deadline_ms; removed from the kept ones.
 * *at_ms says when it arrived.
 */
struct json_object *rec_event(struct rec *r, const char *name, const char *key,
			      const char *val, long long deadline_ms,
			      long long *at_ms);

#endif
