/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Orchestration hooks: executables run at host hotplug states, in both
 * directions.  A hook is called as
 *
 *   HOOK <vm-name> <cpu> <state> <up|down>
 *
 * with the same facts in HOTVM_VM, HOTVM_CPU, HOTVM_STATE and
 * HOTVM_DIRECTION.  Exit 0 lets the step go on; any other exit, a signal or
 * the timeout fails the step, which the state table then rolls back.
 *
 * What a hook gets, whatever state the VMM is in:
 *  - an environment of PATH (the VMM's, or a standard one) and the four
 *    HOTVM_* variables, nothing else;
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

#define HOOKS_MAX	      16
#define HOOKS_DEFAULT_TIMEOUT 10000 /* ms */
#define HOOKS_OUTPUT_MAX      4096  /* bytes of one call's output logged */
#define HOOKS_OUTPUT_LINES    64    /* and lines */

struct hooks {
	const char *paths[HOOKS_MAX];
	unsigned int nr;
	int timeout_ms;
	const char *vm_name;
};

void hooks_init(struct hooks *h, const char *vm_name, int timeout_ms);

/* Checks that @path is an executable file; -errno and a message if not. */
int hooks_add(struct hooks *h, const char *path, char *err, size_t errlen);

/*
 * Runs every hook in order and stops at the first that fails.  Returns 0,
 * -EPERM for a nonzero exit or a signal, -ETIMEDOUT (the hook is killed),
 * or -errno if it could not be started; @err says which hook and why.
 */
int hooks_run(const struct hooks *h, unsigned int cpu, const char *state,
	      bool up, char *err, size_t errlen);

#endif
