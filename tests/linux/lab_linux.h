/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the Linux-lab tests share: the guest's files that lab.sh
 * --linux-guest puts in a folder (/lab/linux), the check that they are
 * there, Debian's kernel booted on hotvm, and the guest's console.
 */
#ifndef HOTVM_TESTS_LAB_LINUX_H
#define HOTVM_TESTS_LAB_LINUX_H

#include <stdbool.h>
#include <stddef.h>

#include "vmproc.h"

/* The folder of the guest's files (lab_linux_init()). */
extern const char *lab_linux_dir;

/*
 * DIR/NAME in one of four buffers used in turn, so that a call's few
 * paths stay valid together.
 */
const char *lab_path_in(const char *dir, const char *name);
/* lab_path_in(lab_linux_dir, NAME). */
const char *lab_linux_path(const char *name);

/*
 * Takes DIR ("/lab/linux" when NULL) as the guest's folder, gives a Linux
 * boot VMPROC_READY_MS 180000 unless the environment says otherwise, and
 * checks that vmlinux and initrd.gz are there: 0, or 1 after a TAP
 * "Bail out!" (the lab puts them there: not a skip), main()'s status.
 */
int lab_linux_init(const char *dir);

/* CLOCK_MONOTONIC in milliseconds. */
long lab_now_ms(void);

/*
 * Decodes base64 IN (guest-exec-status's out-data and err-data) into OUT,
 * NUL-terminated, at most SIZE - 1 bytes: stops at '=' or the end, and
 * passes over any character outside the alphabet.  The bytes written.
 */
size_t lab_unbase64(const char *in, char *out, size_t size);

/* The console's last 40 lines, as TAP diagnostics. */
void lab_console_tail(struct vmproc *v);

/*
 * Waits for a console line starting with PREFIX: prints it, or says it
 * did not come and shows the console's tail; a failed check then.
 */
bool lab_line(struct vmproc *v, const char *prefix, int timeout_ms);

/*
 * Starts hotvm with the guest's vmlinux and initrd.gz, 512M and a 20 s
 * hotplug timeout, then MORE (NULL-terminated, or NULL); on failure a
 * failed check, the console's tail, and hotvm stopped.  0 or -errno.
 */
int lab_linux_boot(struct vmproc *v, const char *cpus, const char *cmdline,
		   const char *const *more);

#endif
