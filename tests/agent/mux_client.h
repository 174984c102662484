/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A client of the guest agent's socket (vmm/agent/qga_mux.h) for the
 * tests: connect, send a line, read one reply line with a deadline.
 */
#ifndef HOTVM_TESTS_MUX_CLIENT_H
#define HOTVM_TESTS_MUX_CLIENT_H

#include <stddef.h>

struct json_object;

/* A connected fd, or -1. */
int mux_connect(const char *path);
/* Writes all of @s; 0 or -1. */
int mux_say(int fd, const char *s);
/*
 * The next line (its newline removed) into @buf, within @timeout_ms.
 * Returns its length, 0 at EOF, -1 on a timeout or error.
 */
long mux_line(int fd, char *buf, size_t size, int timeout_ms);
/*
 * Sends @req and parses the reply line (after a leading 0xff, if any);
 * NULL on a timeout, EOF or bad JSON.  *@delim says whether the 0xff was
 * there (may be NULL).
 */
struct json_object *mux_ask(int fd, const char *req, int timeout_ms,
			    int *delim);

#endif
