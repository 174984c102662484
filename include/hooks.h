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
 */
#ifndef HOTVM_HOOKS_H
#define HOTVM_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#define HOOKS_MAX	      16
#define HOOKS_DEFAULT_TIMEOUT 10000 /* ms */

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
