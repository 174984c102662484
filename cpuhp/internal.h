/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared by the cpuhp sources only; not part of the public interface. */
#ifndef HOTVM_CPUHP_INTERNAL_H
#define HOTVM_CPUHP_INTERNAL_H

#include <errno.h>

#include "cpuhp.h"

#if defined(__GNUC__)
#define cpuhp_printf(a, b) __attribute__((format(printf, a, b)))
#else
#define cpuhp_printf(a, b)
#endif

void cpuhp_log(const struct cpuhp_machine *m, enum cpuhp_log_level level,
	       const char *fmt, ...) cpuhp_printf(3, 4);

int cpuhp_enter(struct cpuhp_machine *m);
void cpuhp_leave(struct cpuhp_machine *m);

bool cpuhp_step_has_cb(const struct cpuhp_step *step, bool bringup);
bool cpuhp_state_is_installable(const struct cpuhp_machine *m, int state);

/*
 * Run the @bringup callback of @state for @cpu: for every instance when
 * @node is NULL, else for @node alone.  Consumes an injected failure.
 */
int cpuhp_invoke(struct cpuhp_machine *m, unsigned int cpu, int state,
		 bool bringup, struct cpuhp_node *node, bool rollback);

/*
 * A parallel bring-up's halves of cpuhp_invoke (startup, no rollback):
 * start @state on @cpu, 0 when it is in flight or ran (a BP state, or a
 * platform without call_start, runs at once) or its error; then wait for
 * the one in flight, 0 or its error.  in_callback stays set from the
 * start on: the caller clears it when every call of the state is back.
 */
bool cpuhp_can_start(const struct cpuhp_machine *m);
int cpuhp_invoke_start(struct cpuhp_machine *m, unsigned int cpu, int state);
int cpuhp_invoke_wait(struct cpuhp_machine *m, unsigned int cpu);

void cpuhp_mark_broken(struct cpuhp_machine *m, unsigned int cpu, int state,
		       int err);

int cpuhp_strcmp(const char *a, const char *b);

#endif
