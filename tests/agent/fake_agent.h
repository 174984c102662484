/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A fake QEMU guest agent on a guest thread that drives the real UART
 * model through the I/O bus (uart_guest.h), for the agent's host tests.
 * It answers guest-ping, guest-info, guest-echo-len {data}, guest-sync
 * and guest-sync-delimited, never answers guest-shutdown (it counts it), and
 * misbehaves in the ways a guest can when told to (enum fake_mode).  The
 * host end is fk.u.agent.
 */
#ifndef HOTVM_TESTS_FAKE_AGENT_H
#define HOTVM_TESTS_FAKE_AGENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "uart_guest.h"

enum fake_mode {
	FAKE_OK,
	FAKE_DEAF,	  /* never reads the port */
	FAKE_MUTE,	  /* reads, never answers */
	FAKE_GARBAGE,	  /* garbage before each sync reply */
	FAKE_BAD_JSON,	  /* a malformed reply to each request */
	FAKE_HUGE,	  /* a reply over QGA_REPLY_MAX */
	FAKE_SLOW,	  /* answers a request only at the next sync */
	FAKE_OLD_ID,	  /* an old sync reply before the right one */
	FAKE_OLD_ONLY,	  /* only ever an old sync reply */
	FAKE_RESTART,	  /* dies half-way through a request line */
	FAKE_RANDOM,	  /* random bytes for every line */
	FAKE_STRAY_DELIM, /* a 0xff in the garbage before the sync reply */
	FAKE_HEAVY,	  /* a short reply that would parse into a lot */
	FAKE_MUTE_FIRST,  /* the first sync unanswered, then as FAKE_OK */
};

#define LINE_MAX_FAKE (64 * 1024)

struct fake {
	struct uart_guest u;
	pthread_t thread;
	_Atomic bool stop;
	_Atomic int mode;
	_Atomic int shutdowns; /* guest-shutdown requests seen */
	char line[LINE_MAX_FAKE];
	size_t len;
	bool synced; /* a sync line has been handled since the last 0xff */
	char *late;  /* FAKE_SLOW: the reply it still owes */
	int bad;     /* FAKE_BAD_JSON: which bad reply comes next */
	uint64_t rnd;
	unsigned int syncs; /* seen, for FAKE_MUTE_FIRST */
};

extern struct fake fk;

/* How many kinds of bad reply FAKE_BAD_JSON cycles through. */
extern const size_t fake_nr_bad;

/* Starts the fake in @mode on a fresh port; fake_stop() ends it. */
void fake_start(enum fake_mode mode);
void fake_stop(void);

#endif
