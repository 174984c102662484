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

static void fill(struct hotplug *hp)
{
	unsigned int have = 0;

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
		ret = hp_set_target(hp, cpu, HP_SIDE_HOST, HOST_VCPU_CREATE, 0,
				    NULL);
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

/*
 * One operation for the whole fill: the slots it finds free must still be
 * free when it walks them.  At boot it runs on the machine thread, after
 * the boot's own operation, while QMP's first requests may already wait
 * at the gate; a resize let in between its look and its walk would have
 * its fresh CPUs walked back down to vcpu:create.  From a hot-add or a
 * removal it is already inside their operation (the gate is re-entrant).
 * Its walks are single-CPU operations (cpu_ops.c), not their entry
 * points (entry.c), which call this file: nothing here calls back.
 */
void hp_prestage_fill(struct hotplug *hp)
{
	if (!hp->prestage || hp_op_enter(hp, false))
		return;
	fill(hp);
	hp_op_exit(hp);
}

void hp_prestage_took(struct hotplug *hp, unsigned int cpu)
{
	if (!hp->slots[cpu].prestaged)
		return;
	hp_set_prestaged(hp, cpu, false); /* taken from the pool */
	hp_prestage_fill(hp);
}
