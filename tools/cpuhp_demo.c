// SPDX-License-Identifier: GPL-2.0-only
/*
 * cpuhp-demo: walks a few CPUs through a small table shaped like hotvm's
 * host table, injects a failure, and prints every step and the rollback.
 * It shows the library's semantics without a VM.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuhp.h"

enum {
	DEMO_OFFLINE,
	DEMO_PREPARE,
	DEMO_CREATE,
	DEMO_KICK,
	DEMO_STARTING,
	DEMO_HOOKS,
	DEMO_ONLINE,
	DEMO_NR_STATES,
};

#define DEMO_NR_CPUS 3

static int demo_startup(unsigned int cpu, void *data)
{
	printf("    cpu%u  startup   %s\n", cpu, (const char *)data);
	return 0;
}

static int demo_teardown(unsigned int cpu, void *data)
{
	printf("    cpu%u  teardown  %s\n", cpu, (const char *)data);
	return 0;
}

#define DEMO_STEP(n, f)                                                        \
	{                                                                      \
		.name = n, .startup = demo_startup, .teardown = demo_teardown, \
		.data = n, .flags = f,                                         \
	}

static struct cpuhp_step demo_steps[DEMO_NR_STATES] = {
	[DEMO_OFFLINE] = { .name = "offline" },
	[DEMO_PREPARE] = DEMO_STEP("host:prepare", 0),
	[DEMO_CREATE] = DEMO_STEP("vcpu:create", 0),
	[DEMO_KICK] =
		DEMO_STEP("bringup:kick", CPUHP_F_KICK | CPUHP_F_CANT_STOP),
	[DEMO_STARTING] =
		DEMO_STEP("guest:ap-starting",
			  CPUHP_F_AP | CPUHP_F_NOFAIL | CPUHP_F_CANT_STOP),
	[DEMO_HOOKS] = { .flags = CPUHP_F_DYN_ONLINE },
	[DEMO_ONLINE] = { .name = "online" },
};

static void demo_notify(void *ctx, const struct cpuhp_notice *n)
{
	(void)ctx;
	if (n->kind == CPUHP_NOTICE_STEP && n->injected)
		printf("    cpu%u  injected  failure at %s (%s): -EAGAIN\n",
		       n->cpu, demo_steps[n->state].name,
		       n->bringup ? "startup" : "teardown");
	else if (n->kind == CPUHP_NOTICE_DONE)
		printf("  cpu%u now at %d (%s)%s%s\n", n->cpu, n->state,
		       demo_steps[n->state].name, n->ret ? ", error " : "",
		       n->ret ? strerror(-n->ret) : "");
}

static void demo_log(void *ctx, enum cpuhp_log_level level, const char *fmt,
		     va_list ap)
{
	(void)ctx;
	if (level <= CPUHP_LOG_INFO) {
		printf("  log: ");
		vprintf(fmt, ap);
	}
}

static const struct cpuhp_platform demo_platform = {
	.log = demo_log,
	.notify = demo_notify,
};

static int demo_hook(unsigned int cpu, void *data)
{
	printf("    cpu%u  startup   %s (vetoes)\n", cpu, (const char *)data);
	return -EPERM;
}

int main(void)
{
	static const unsigned int cpus[DEMO_NR_CPUS] = { 0, 1, 2 };
	struct cpuhp_cpu cpu_state[DEMO_NR_CPUS];
	struct cpuhp_machine m;
	int results[DEMO_NR_CPUS];
	int hook, ret;

	if (cpuhp_init(&m, &demo_platform, demo_steps, DEMO_NR_STATES,
		       cpu_state, DEMO_NR_CPUS)) {
		fprintf(stderr, "cpuhp-demo: bad table\n");
		return 1;
	}

	printf("1. parallel bring-up of cpu0-2 (all kicked first):\n");
	cpuhp_bringup_cpus(&m, cpus, DEMO_NR_CPUS, DEMO_ONLINE, results);

	printf("\n2. cpu1 down, with a failure injected at vcpu:create:\n");
	cpuhp_set_fail(&m, 1, DEMO_CREATE);
	cpuhp_cpu_down(&m, 1, DEMO_OFFLINE);

	printf("\n3. an orchestration hook installed in the dynamic range "
	       "vetoes cpu2's next bring-up:\n");
	hook = cpuhp_setup_state_nocalls(&m, CPUHP_ONLINE_DYN, "hook:veto",
					 demo_hook, demo_teardown, "hook:veto");
	cpuhp_cpu_down(&m, 2, DEMO_OFFLINE);
	ret = cpuhp_cpu_up(&m, 2, DEMO_ONLINE);
	printf("  cpu_up returned %d (%s)\n", ret, strerror(-ret));
	cpuhp_remove_state_nocalls(&m, hook);

	printf("\nfinal states:");
	for (unsigned int c = 0; c < DEMO_NR_CPUS; c++)
		printf(" cpu%u=%s", c, demo_steps[cpu_state[c].state].name);
	printf("\n");
	return cpu_state[0].state == DEMO_ONLINE &&
			       cpu_state[1].state == DEMO_ONLINE &&
			       cpu_state[2].state == DEMO_OFFLINE
		       ? 0
		       : 1;
}
