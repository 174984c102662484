/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A scripted, in-memory stand-in for the hotplug controller (the functions
 * of vmm/hotplug/hotplug.h), so the QMP commands can be tested without KVM.
 * Every operation walks the real tables (host states from hotplug.h, guest
 * states from guest_states.h) step by step, reports each step and notifies
 * as vmm/hotplug/hotplug.c does, and fails where the test script says.
 */
#ifndef HOTVM_TESTS_FAKE_HOTPLUG_H
#define HOTVM_TESTS_FAKE_HOTPLUG_H

#include <stdbool.h>

struct hotplug;

/* CPUs 0..boot-1 start online with thread ids 1000 + cpu. */
struct hotplug *fake_hp_create(unsigned int max, unsigned int boot);
void fake_hp_destroy(struct hotplug *hp);

/*
 * The next add or remove of cpu fails with rc at host state
 * guest:ap-starting, as a guest that does not answer would (-ETIMEDOUT),
 * and rolls back.
 */
void fake_hp_fail_next(struct hotplug *hp, unsigned int cpu, int rc);
/* Operations on cpu return -EBUSY, as while the guest is still walking. */
void fake_hp_set_busy(struct hotplug *hp, unsigned int cpu, bool busy);
/* Operations that reached the tables (add, remove, set-target). */
unsigned int fake_hp_ops(struct hotplug *hp);

#endif
