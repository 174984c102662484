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
 *    timeout, whatever is still in that group is killed (SIGKILL).  A
 *    process meant to outlive the hook must leave the group (setsid).
 */
#ifndef HOTVM_HOOKS_H
#define HOTVM_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOOKS_MAX	      16
#define HOOKS_DEFAULT_TIMEOUT 10000 /* ms */
#define HOOKS_OUTPUT_MAX      4096  /* bytes of one call's output logged */
#define HOOKS_OUTPUT_LINES    64    /* and lines */
#define HOOKS_PATH_MAX	      512   /* of a hook found in a directory */
#define HOOKS_QOM_MAX	      128

struct vcpu;

struct hooks {
	const char *paths[HOOKS_MAX];
	unsigned int nr;
	int timeout_ms;
	const char *vm_name;
	char found[HOOKS_MAX][HOOKS_PATH_MAX]; /* paths[] from a directory */
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
int hooks_add(struct hooks *h, const char *path, char *err, size_t errlen);

/*
 * Runs every hook in order and stops at the first that fails.  Returns 0,
 * -EPERM for a nonzero exit or a signal, -ETIMEDOUT (the hook is killed),
 * or -errno if it could not be started; @err says which hook and why.
 */
int hooks_run(const struct hooks *h, unsigned int cpu, const char *state,
	      bool up, char *err, size_t errlen);
/* The same, with the vCPU's facts in the environment (@f may be NULL). */
int hooks_run_vcpu(const struct hooks *h, unsigned int cpu, const char *state,
		   bool up, const struct hooks_vcpu *f, char *err,
		   size_t errlen);

#endif
