// SPDX-License-Identifier: GPL-2.0-only
/* The fake guest agent of the agent's host tests (fake_agent.h). */
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fake_agent.h"

struct fake fk;

static void say(const char *s)
{
	uart_guest_write(&fk.u, s, strlen(s));
}

static uint64_t rnd(void)
{
	fk.rnd ^= fk.rnd << 13;
	fk.rnd ^= fk.rnd >> 7;
	fk.rnd ^= fk.rnd << 17;
	return fk.rnd;
}

/* Bytes a broken agent might write: biased towards JSON and framing. */
static void say_random(void)
{
	static const char pick[] = "{}[]\":,\n\xff\x00 0123456789ertun\\";
	unsigned int n = rnd() % 300;

	for (unsigned int i = 0; i < n; i++)
		uart_guest_putc(
			&fk.u,
			rnd() % 4 ? (unsigned char)
					    pick[rnd() % (sizeof(pick) - 1)]
				  : (unsigned char)rnd());
}

static void say_sync(uint64_t id)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "\xff{\"return\": %llu}\n",
		 (unsigned long long)id);
	say(buf);
}

#define BAD(s)                                                                 \
	{                                                                      \
		s, sizeof(s) - 1                                               \
	}
static const struct {
	const char *s;
	size_t len;
} bad_replies[] = {
	BAD("{\"return\": [1, 2,}\n"),		  /* not JSON */
	BAD("{\"return\": {}, \"error\": {}}\n"), /* two members */
	BAD("[\"return\"]\n"),			  /* not an object */
	BAD("{\"return\": \"\xc3\x28\"}\n"),	  /* invalid UTF-8 */
	BAD("{\"return\": {}} trailing\n"),	  /* something after it */
	BAD("{\"result\": {}}\n"),		  /* neither member */
	BAD("{\"return\": \"a\0b\"}\n"),	  /* a NUL inside */
	BAD("{\"return\": 1}\0\n"),		  /* a NUL after it */
	BAD("{\"return\": \"a\nb\"}\n"),	  /* a line cut in a string */
	BAD("{\"return\": \"\x01\"}\n"),	  /* a raw control character */
	BAD("{\"return\": \"\\ud800\"}\n"),	  /* a lone surrogate */
};
const size_t fake_nr_bad = sizeof(bad_replies) / sizeof(bad_replies[0]);
#define NR_BAD fake_nr_bad

static void say_huge(void)
{
	say("{\"return\": \"");
	for (size_t i = 0; i < QGA_REPLY_MAX + QGA_REPLY_MAX / 2; i++)
		uart_guest_putc(&fk.u, 'A');
	say("\"}\n");
}

/* What a working agent answers to @cmd. */
static char *answer(const char *cmd, struct json_object *args)
{
	struct json_object *d;
	char *s = NULL;

	if (!strcmp(cmd, "guest-ping"))
		return strdup("{\"return\": {}}\n");
	if (!strcmp(cmd, "guest-info"))
		return strdup("{\"return\": {\"version\": \"fake-1\"}}\n");
	if (!strcmp(cmd, "guest-sync") &&
	    json_object_object_get_ex(args, "id", &d)) {
		if (asprintf(&s, "{\"return\": %lld}\n",
			     (long long)json_object_get_int64(d)) < 0)
			return NULL;
		return s;
	}
	if (!strcmp(cmd, "guest-echo-len") &&
	    json_object_object_get_ex(args, "data", &d)) {
		if (asprintf(&s, "{\"return\": {\"len\": %d}}\n",
			     json_object_get_string_len(d)) < 0)
			return NULL;
		return s;
	}
	if (asprintf(&s,
		     "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": "
		     "\"The command %s has not been found\"}}\n",
		     cmd) < 0)
		return NULL;
	return s;
}

static void on_sync(uint64_t id)
{
	switch (atomic_load(&fk.mode)) {
	case FAKE_MUTE:
		return;
	case FAKE_GARBAGE:
		say("garbage {\"return\": 1}\n\x01\x02{{{\n\xc3\x28 no "
		    "newline ");
		break;
	case FAKE_STRAY_DELIM:
		say("junk\xffmore junk\xff{\"return\": 7}\n");
		break;
	case FAKE_OLD_ID:
		say_sync(id - 1);
		break;
	case FAKE_OLD_ONLY:
		say_sync(id - 1);
		return;
	case FAKE_RANDOM:
		say_random();
		return;
	case FAKE_MUTE_FIRST:
		if (!fk.syncs++)
			return;
		break;
	default:
		break;
	}
	if (fk.late) {
		say(fk.late);
		free(fk.late);
		fk.late = NULL;
	}
	say_sync(id);
}

static void on_request(const char *cmd, struct json_object *args)
{
	int mode = atomic_load(&fk.mode);
	char *a;

	if (!strcmp(cmd, "guest-shutdown")) {
		atomic_fetch_add(&fk.shutdowns, 1); /* never answers */
		return;
	}
	switch (mode) {
	case FAKE_MUTE:
		return;
	case FAKE_RANDOM:
		say_random();
		return;
	case FAKE_BAD_JSON:
		uart_guest_write(&fk.u, bad_replies[fk.bad % NR_BAD].s,
				 bad_replies[fk.bad % NR_BAD].len);
		fk.bad++;
		return;
	case FAKE_HUGE:
		say_huge();
		return;
	case FAKE_HEAVY:
		say("{\"return\": [");
		for (int i = 0; i < 30000; i++)
			say("{},");
		say("{}]}\n");
		return;
	default:
		break;
	}
	a = answer(cmd, args);
	if (!a)
		return;
	if (mode == FAKE_SLOW) {
		free(fk.late);
		fk.late = a;
		return;
	}
	say(a);
	free(a);
}

/* One line, as the agent's parser would see it. */
static void on_line(void)
{
	struct json_object *o, *c, *args = NULL, *id;

	fk.line[fk.len] = '\0';
	o = json_tokener_parse(fk.line);
	if (!o || !json_object_object_get_ex(o, "execute", &c)) {
		if (fk.len && atomic_load(&fk.mode) != FAKE_MUTE)
			say("{\"error\": {\"class\": \"GenericError\", "
			    "\"desc\": \"JSON parse error\"}}\n");
		json_object_put(o);
		return;
	}
	json_object_object_get_ex(o, "arguments", &args);
	if (!strcmp(json_object_get_string(c), "guest-sync-delimited") &&
	    json_object_object_get_ex(args, "id", &id)) {
		fk.synced = true;
		on_sync((uint64_t)json_object_get_int64(id));
	} else {
		on_request(json_object_get_string(c), args);
	}
	json_object_put(o);
}

static void on_byte(int c)
{
	if (c == 0xff) { /* the host's resync: the parser starts afresh */
		fk.len = 0;
		fk.synced = false;
		return;
	}
	/* Restarted half-way through the request: the rest is new input. */
	if (atomic_load(&fk.mode) == FAKE_RESTART && fk.synced &&
	    fk.len == 10) {
		atomic_store(&fk.mode, FAKE_OK);
		fk.len = 0;
		fk.synced = false;
	}
	if (c == '\n') {
		on_line();
		fk.len = 0;
	} else if (fk.len < LINE_MAX_FAKE - 1) {
		fk.line[fk.len++] = (char)c;
	}
}

/* The guest: sleeps until the UART interrupts, then reads all it has. */
static void *fake_main(void *arg)
{
	struct pollfd p = { .fd = uart_guest_irq_fd(), .events = POLLIN };
	int c;

	(void)arg;
	if (atomic_load(&fk.mode) != FAKE_DEAF)
		uart_guest_rx_irq(&fk.u, true);
	while (!atomic_load(&fk.stop)) {
		if (poll(&p, 1, -1) < 0)
			continue;
		uart_guest_irq_ack();
		if (atomic_load(&fk.mode) == FAKE_DEAF)
			continue;
		while ((c = uart_guest_getc(&fk.u)) >= 0)
			on_byte(c);
	}
	return NULL;
}

void fake_start(enum fake_mode mode)
{
	memset(&fk, 0, sizeof(fk));
	fk.rnd = 0x9e3779b97f4a7c15ull;
	atomic_store(&fk.mode, mode);
	CHECK_EQ(uart_guest_init(&fk.u), 0);
	CHECK_EQ(pthread_create(&fk.thread, NULL, fake_main, NULL), 0);
}

void fake_stop(void)
{
	atomic_store(&fk.stop, true);
	uart_guest_kick();
	pthread_join(fk.thread, NULL);
	free(fk.late);
	uart_guest_destroy(&fk.u);
}
