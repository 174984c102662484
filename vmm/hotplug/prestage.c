// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pre-staged vCPUs (--prestage K): K free slots are kept at the host's
 * vcpu:create (fd, run area, CPUID, thread waiting for INIT/SIPI) ahead of
 * demand, so that a hot-add of one pays only guest:ap-starting and online.
 * The guest does not see them (not present); QMP lists them as free.  The
 * pool is refilled after each hot-add or removal that changed it, on the
 * operation thread, after the guest's part: a hot-add's online line is not
 * delayed by it, its QMP reply by one vCPU start (about 0.1 ms with a
 * parked fd to reuse).
 */
#include <string.h>

#include "hotplug_internal.h"
#include "log.h"

/* The host table's entry for @cpu, as a walk left it. */
static struct cpuhp_cpu entry(struct hotplug *hp, unsigned int cpu)
{
	struct cpuhp_cpu c;

	pthread_mutex_lock(&hp->table_lock);
	cpuhp_cpu_info(&hp->m, cpu, &c);
	pthread_mutex_unlock(&hp->table_lock);
	return c;
}

void hp_prestage_fill(struct hotplug *hp)
{
	unsigned int have = 0;

	if (!hp->prestage)
		return;
	for (unsigned int cpu = hp->boot_cpus; cpu < hp->max_cpus; cpu++) {
		struct hp_slot *s = &hp->slots[cpu];

		have += s->prestaged &&
			entry(hp, cpu).state == HOST_VCPU_CREATE;
	}
	for (unsigned int cpu = hp->boot_cpus;
	     have < hp->prestage && cpu < hp->max_cpus; cpu++) {
		struct cpuhp_cpu c = entry(hp, cpu);
		int ret;

		if (c.state != HOST_OFFLINE || c.broken)
			continue;
		/* Counted apart from the operation that took from it. */
		hp->prestaging = true;
		ret = hotplug_set_target(hp, cpu, HP_SIDE_HOST,
					 HOST_VCPU_CREATE, 0, NULL);
		hp->prestaging = false;
		if (ret) {
			/* Not fatal: a later hot-add creates it itself. */
			pr_err("prestage: CPU %u: cannot create its vCPU "
			       "ahead: %s",
			       cpu, strerror(-ret));
			return;
		}
		hp_set_prestaged(hp, cpu, true);
		have++;
	}
}
