/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Files in the guest through the guest agent (guest-file-open, -read,
 * -write, -close): what linux_view.c and linux_trace.c read of sysfs and
 * tracefs and write to them.  The data travels as base64; what comes back
 * is decoded strictly into the caller's bounded buffer.  Every call has
 * the agent's deadline, capped by the check's it is part of
 * (hp_agent_ms()); the caller holds hp->agent_lock.
 */
#ifndef HOTVM_LINUX_FILE_H
#define HOTVM_LINUX_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "hv_err.h"

struct hotplug;

/* Each agent call's deadline: the agent answers in milliseconds. */
#define LINUX_AGENT_TIMEOUT_MS 1000

/* Opens @path in the guest with fopen()'s @mode; the handle or -errno. */
long hp_agent_open(struct hotplug *hp, const char *path, const char *mode,
		   struct hv_err *err);
/*
 * Reads up to @len bytes at the handle's position into @buf: their
 * number, with *eof (may be NULL) set when the file has no more.
 */
long hp_agent_read(struct hotplug *hp, long handle, char *buf, size_t len,
		   bool *eof, struct hv_err *err);
/* Writes @len bytes (at most 48 KiB); 0 or -errno. */
int hp_agent_write(struct hotplug *hp, long handle, const char *data,
		   size_t len, struct hv_err *err);
/*
 * Flushes what was written: qemu-ga writes through stdio, so a sysfs or
 * tracefs file's store runs, and says no (-EREMOTEIO, the agent's words
 * in @err), only now.  0 or -errno.
 */
int hp_agent_flush(struct hotplug *hp, long handle, struct hv_err *err);
/* Closes it, whatever came before (or the agent keeps it open). */
void hp_agent_close(struct hotplug *hp, long handle);

/* Reads one small file whole, at most @len bytes: its length or -errno. */
long hp_agent_read_file(struct hotplug *hp, const char *path, char *buf,
			size_t len, struct hv_err *err);
/*
 * Writes @data to @path (opened "w": truncated first) and flushes it: 0,
 * or -errno (the file's own refusal as -EREMOTEIO).
 */
int hp_agent_write_file(struct hotplug *hp, const char *path, const char *data,
			size_t len, struct hv_err *err);

#endif
