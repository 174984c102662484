/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Orchestration hooks: executables run at host hotplug states, in both
 * directions.  A hook is called as
 *
 *   HOOK <vm-name> <cpu> <state> <up|down>
 *
 * with the same facts in HOTVM_VM, HOTVM_CPU, HOTVM_STATE and
 * HOTVM_DIRECTION, and what it needs to place the vCPU: HOTVM_PID (the
 * VMM's pid), HOTVM_APIC_ID, HOTVM_THREAD_ID (the vCPU thread's tid, from
 * vcpu:create up to its teardown; absent before the thread exists) and
 * HOTVM_QOM_PATH (the vCPU's QOM path as query-cpus-fast will show it,
 * when it has one yet: boot CPUs and device_add with an id).  At
 * vcpu:create going up the thread exists but has not entered KVM_RUN: it
 * waits until the hooks are done, so a hook that pins it or moves it into
 * a cgroup does so before the guest runs a single instruction on it.
 * Exit 0 lets the step go on; any other exit, a signal or the timeout
 * fails the step, which the state table then rolls back.
 *
 * --hook DIR adds every executable regular file in DIR (not starting with
 * '.'), in strcmp order of their names, as libvirt runs hooks/qemu.d/.
 *
 * What a hook gets, whatever state the VMM is in:
 *  - an environment of PATH (the VMM's, or a standard one) and the
 *    HOTVM_* variables above, nothing else;
 *  - stdin from /dev/null, stdout and stderr into a pipe the VMM logs
 *    (the first HOOKS_OUTPUT_MAX bytes and HOOKS_OUTPUT_LINES lines, line
 *    by line, prefixed with the hook, CPU and state, then how many more
 *    bytes were dropped); no other descriptor;
 *  - an empty signal mask and every signal at its default action;
 *  - a process group of its own: when the hook exits or is killed at the
 *    timeout, whatever is still in that group is killed (SIGKILL), at
 *    once.  A process meant to outlive the hook must have left the group
 *    *before the hook exits*: `setsid CMD &` and `setsid -f CMD` race with
 *    that kill (the child calls setsid() some time after the hook went
 *    on); run setsid in the hook's foreground and let what it runs start
 *    the daemon, `setsid sh -c 'DAEMON </dev/null >/dev/null 2>&1 &'`,
 *    whose setsid() is done when the hook's next line runs.
 *
 * On shutdown hooks_cancel() stops every running hook: SIGTERM to its
 * group, SIGKILL to the group HOOKS_CANCEL_GRACE_MS later (or as soon as
 * the hook is gone), and no hook starts after it.  A VMM killed outright
 * (SIGKILL) cannot do that: a hook running then, and its group, run on to
 * their own end, reparented; nothing reaps them at the next start.
 */
#ifndef HOTVM_HOOKS_H
#define HOTVM_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hv_err.h"

#define HOOKS_MAX	      16
#define HOOKS_DEFAULT_TIMEOUT 10000 /* ms */
#define HOOKS_OUTPUT_MAX      4096  /* bytes of one call's output logged */
#define HOOKS_OUTPUT_LINES    64    /* and lines */
#define HOOKS_PATH_MAX	      512   /* of a hook found in a directory */
#define HOOKS_QOM_MAX	      128
#define HOOKS_CANCEL_GRACE_MS 100 /* SIGTERM to SIGKILL at hooks_cancel() */

struct vcpu;

struct hooks {
	const char *paths[HOOKS_MAX];
	unsigned int nr;
	int timeout_ms;
	const char *vm_name;
	char found[HOOKS_MAX][HOOKS_PATH_MAX]; /* paths[] from a directory */
	/*
	 * An eventfd, made with the first hook (valid while nr > 0): readable
	 * for good once hooks_cancel() wrote it.  Every wait polls it.
	 */
	int cancel_fd;
};

/* What a hook is told about the vCPU it is called for. */
struct hooks_vcpu {
	int tid; /* 0: no thread yet (or any more) */
	uint32_t apic_id;
	char qom_path[HOOKS_QOM_MAX]; /* "" when it has none yet */
};

/*
 * The facts of @vcpu in slot vcpu->id with QMP device id @id ("" for
 * none); @boot: a boot CPU (QEMU's /machine/unattached/device[N]).
 */
void hooks_vcpu_facts(struct hooks_vcpu *f, const struct vcpu *vcpu,
		      const char *id, bool boot);

void hooks_init(struct hooks *h, const char *vm_name, int timeout_ms);

/*
 * Adds @path, an executable file, or every executable file in the
 * directory @path in name order; -errno and a message if it is neither
 * (or a directory holds no hook, or too many).
 */
int hooks_add(struct hooks *h, const char *path, struct hv_err *err);

/*
 * Runs every hook in order and stops at the first that fails.  Returns 0,
 * -EPERM for a nonzero exit or a signal, -ETIMEDOUT (the hook is killed),
 * -ECANCELED after hooks_cancel() (the hook was stopped, or not started),
 * or -errno if it could not be started; @err says which hook and why.
 */
int hooks_run(const struct hooks *h, unsigned int cpu, const char *state,
	      bool up, struct hv_err *err);
/* The same, with the vCPU's facts in the environment (@f may be NULL). */
int hooks_run_vcpu(const struct hooks *h, unsigned int cpu, const char *state,
		   bool up, const struct hooks_vcpu *f, struct hv_err *err);

/*
 * Shutdown: stops the hooks running now, in any thread (SIGTERM to each
 * one's process group, SIGKILL HOOKS_CANCEL_GRACE_MS later; their
 * hooks_run*() return -ECANCELED at once), and makes every later
 * hooks_run*() return -ECANCELED without starting anything: a hook that
 * did not run cannot have agreed to the step.  Irreversible, and callable
 * from any thread (one write(2) to the eventfd), with @h NULL or without
 * hooks too (it does nothing then).
 */
void hooks_cancel(const struct hooks *h);

#endif
