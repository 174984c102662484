/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the Linux-lab tests share: the guest's files that lab.sh
 * --linux-guest puts in a folder (/lab/linux), the check that they are
 * there, Debian's kernel booted on hotvm, the guest's console; the Debian
 * image's files and boot (tests/lab/debian.sh), and the guest's agent
 * reached through hotvm's agent socket.
 */
#ifndef HOTVM_TESTS_LAB_LINUX_H
#define HOTVM_TESTS_LAB_LINUX_H

#include <stdbool.h>
#include <stddef.h>

#include "vmproc.h"

struct json_object;

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

/* The Debian image's folder (initrd.img, kernel-version) and its disk. */
extern const char *lab_debian_dir, *lab_debian_disk;

/*
 * Takes ARGV[1] ("/lab/linux") as the folder of the lab's vmlinux,
 * ARGV[2] ("/lab/debian") as the image's and the environment's DISK
 * ("/dev/vda") as its block device, and checks that they are there: 0,
 * or 1 after a TAP "Bail out!" (tests/lab/debian.sh puts them there: not
 * a skip), main()'s status.
 */
int lab_debian_init(int argc, char **argv);

/*
 * Starts hotvm on the Debian image to multi-user.target (its unit
 * hotvm-ready says so, within 240 s): the lab's vmlinux, the image's
 * initrd.img, 512M, boot=1,max=3, the disk as --disk id=debian, CMDLINE
 * ("root=/dev/vda console=ttyS0" when NULL), the agent on the socket SOCK
 * over CHANNEL, then MORE (NULL-terminated, or NULL).  On failure it says
 * so with the console's tail and stops hotvm.  0 or -errno.
 */
int lab_debian_boot(struct vmproc *v, const char *cmdline, const char *sock,
		    const char *channel, const char *const *more);

/* An agent call's wait for its reply, and lab_guest_sh()'s for its end. */
#define LAB_AGENT_MS 60000

/*
 * One agent command CMD with ARGS (taken; or NULL) on a fresh connection
 * to hotvm's agent socket SOCK: its "return" (the caller puts it), or
 * NULL; an error reply is said.
 */
struct json_object *lab_agent(const char *sock, const char *cmd,
			      struct json_object *args);

/* Waits up to MS until the agent on SOCK answers guest-ping. */
bool lab_agent_wait(const char *sock, int ms);

/*
 * Starts SHELL -c CMD in the guest (guest-exec), its output captured when
 * CAPTURE: its pid, or -1 (said).  Without CAPTURE nothing more is asked
 * of the agent about it, so CMD may stop the agent.
 */
long lab_guest_exec(const char *sock, const char *shell, const char *cmd,
		    bool capture);

/*
 * Waits up to MS for guest process PID, asking guest-exec-status every
 * 200 ms (the agent has no event for it): its exit code, or -1; its
 * standard output in OUT (when not NULL), its standard error said.
 */
int lab_guest_wait(const char *sock, long pid, char *out, size_t size, int ms);

/*
 * /bin/sh -c CMD in the guest to its end (LAB_AGENT_MS): its exit code,
 * or -1, a non-zero one said; its standard output in OUT (or NULL).
 */
int lab_guest_sh(const char *sock, const char *cmd, char *out, size_t size);

/* The guest's FILE's first line (guest-file-open, -read, -close). */
bool lab_guest_line(const char *sock, const char *file, char *out, size_t size);

/* query-hotplug-stats' agent member KEY (a boolean as 0 or 1), or -1. */
long lab_agent_stat(struct vmproc *v, const char *key);

#endif
