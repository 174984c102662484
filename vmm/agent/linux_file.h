/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Files in the guest through the guest agent (guest-file-open, -read,
 * -write, -close): what linux_view.c and linux_trace.c read of sysfs and
 * tracefs and write to them.  The data travels as base64; what comes back
 * is decoded strictly into the caller's bounded buffer.  Every call has
 * the agent's deadline, capped by the caller's own (struct lx_agent).
 * Nothing here knows the controller: it speaks the agent's protocol only.
 */
#ifndef HOTVM_LINUX_FILE_H
#define HOTVM_LINUX_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "hv_err.h"

struct qga;

/* Each agent call's deadline: the agent answers in milliseconds. */
#define LINUX_AGENT_TIMEOUT_MS 1000

/*
 * Which agent a call goes through, and how long it may take: @cap_ms
 * (may be NULL) caps a call's own deadline, @want_ms, by the caller's
 * (the check the call is part of), with @ctx.
 */
struct lx_agent {
	struct qga *qga;
	int (*cap_ms)(void *ctx, int want_ms);
	void *ctx;
};

/* Opens @path in the guest with fopen()'s @mode; the handle or -errno. */
long lx_file_open(const struct lx_agent *ag, const char *path, const char *mode,
		  struct hv_err *err);
/*
 * Reads up to @len bytes at the handle's position into @buf: their
 * number, with *eof (may be NULL) set when the file has no more.
 */
long lx_file_read(const struct lx_agent *ag, long handle, char *buf, size_t len,
		  bool *eof, struct hv_err *err);
/* Writes @len bytes (at most 48 KiB); 0 or -errno. */
int lx_file_write(const struct lx_agent *ag, long handle, const char *data,
		  size_t len, struct hv_err *err);
/*
 * Flushes what was written: qemu-ga writes through stdio, so a sysfs or
 * tracefs file's store runs, and says no (-EREMOTEIO, the agent's words
 * in @err), only now.  0 or -errno.
 */
int lx_file_flush(const struct lx_agent *ag, long handle, struct hv_err *err);
/* Closes it, whatever came before (or the agent keeps it open). */
void lx_file_close(const struct lx_agent *ag, long handle);

/* Reads one small file whole, at most @len bytes: its length or -errno. */
long lx_file_read_all(const struct lx_agent *ag, const char *path, char *buf,
		      size_t len, struct hv_err *err);
/*
 * Writes @data to @path (opened "w": truncated first) and flushes it: 0,
 * or -errno (the file's own refusal as -EREMOTEIO).
 */
int lx_file_write_all(const struct lx_agent *ag, const char *path,
		      const char *data, size_t len, struct hv_err *err);

#endif
