// SPDX-License-Identifier: GPL-2.0-only
/*
 * One or more tests per rule of the cpuhp contract (docs/design.md §3).
 * A fixture table with recording callbacks; each test drives the library
 * and compares the recorded calls and the resulting per-CPU state.
 */
#include <errno.h>
#include <stdarg.h>

#include "check.h"
#include "cpuhp.h"

enum {
	S_OFFLINE,
	S_PREP_A, /* startup + teardown */
	S_PREP_B, /* startup only */
	S_DYN_P0, /* prepare dynamic range */
	S_DYN_P1,
	S_KICK,	    /* kick state, cant-stop */
	S_STARTING, /* AP, no-fail, cant-stop */
	S_FREE,	    /* free static slot */
	S_AP_ON,    /* AP, teardown only */
	S_DYN_O0,   /* online dynamic range */
	S_ONLINE,
	NR_STATES,
};

#define NR_CPUS	  4
#define MAX_CALLS 256

struct call {
	unsigned int cpu;
	int state;
	char dir; /* 'u' startup, 'd' teardown */
	int inst; /* instance id, -1 for single */
};

static struct fixture {
	struct cpuhp_machine m;
	struct cpuhp_step steps[NR_STATES];
	struct cpuhp_cpu cpus[NR_CPUS];
	struct call calls[MAX_CALLS];
	unsigned int nr_calls;
	/* fail_at[cpu][state][dir]: error to return (once), 0 none */
	int fail_at[NR_CPUS][NR_STATES][2];
	unsigned int run_on_cpu_calls;
	unsigned int errors_logged;
	unsigned int done_notices;
	unsigned int injected_notices;
	int fail_inst; /* when > 0, fail_at only hits this instance */
	int reenter_ret;
	bool reenter;
	/* The async platform: calls started and not yet waited for. */
	int (*pending_fn[NR_CPUS])(void *);
	void *pending_arg[NR_CPUS];
	unsigned int in_flight, max_in_flight, waits;
	int start_fail[NR_CPUS];
} fx;

static int record(unsigned int cpu, int state, bool up, int inst)
{
	int *f = &fx.fail_at[cpu][state][up ? 0 : 1];
	int ret = fx.fail_inst > 0 && inst != fx.fail_inst ? 0 : *f;

	if (fx.nr_calls < MAX_CALLS)
		fx.calls[fx.nr_calls++] =
			(struct call){ cpu, state, up ? 'u' : 'd', inst };
	if (ret)
		*f = 0;
	if (fx.reenter)
		fx.reenter_ret = cpuhp_cpu_up(&fx.m, cpu, S_ONLINE);
	return ret;
}

#define STATE_OF(data) ((int)(long)(data))

static int cb_up(unsigned int cpu, void *data)
{
	return record(cpu, STATE_OF(data), true, -1);
}

static int cb_down(unsigned int cpu, void *data)
{
	return record(cpu, STATE_OF(data), false, -1);
}

struct inst {
	struct cpuhp_node node;
	int id;
};

static int cbm_up(unsigned int cpu, struct cpuhp_node *node, void *data)
{
	return record(cpu, STATE_OF(data), true, ((struct inst *)node)->id);
}

static int cbm_down(unsigned int cpu, struct cpuhp_node *node, void *data)
{
	return record(cpu, STATE_OF(data), false, ((struct inst *)node)->id);
}

static int plat_run_on_cpu(void *ctx, unsigned int cpu, int (*fn)(void *),
			   void *arg)
{
	(void)ctx;
	(void)cpu;
	fx.run_on_cpu_calls++;
	return fn(arg);
}

static void plat_log(void *ctx, enum cpuhp_log_level level, const char *fmt,
		     va_list ap)
{
	(void)ctx;
	if (level == CPUHP_LOG_ERR)
		fx.errors_logged++;
	if (getenv("CPUHP_TEST_VERBOSE"))
		vprintf(fmt, ap);
}

static void plat_notify(void *ctx, const struct cpuhp_notice *n)
{
	(void)ctx;
	if (n->kind == CPUHP_NOTICE_DONE)
		fx.done_notices++;
	if (n->injected)
		fx.injected_notices++;
}

static const struct cpuhp_platform plat = {
	.run_on_cpu = plat_run_on_cpu,
	.log = plat_log,
	.notify = plat_notify,
};

/* call_start/call_wait: the callback runs at the wait, as late as can be. */
static int plat_call_start(void *ctx, unsigned int cpu, int (*fn)(void *),
			   void *arg)
{
	(void)ctx;
	if (fx.start_fail[cpu])
		return fx.start_fail[cpu];
	CHECK(fx.pending_fn[cpu] == NULL);
	fx.pending_fn[cpu] = fn;
	fx.pending_arg[cpu] = arg;
	if (++fx.in_flight > fx.max_in_flight)
		fx.max_in_flight = fx.in_flight;
	return 0;
}

static int plat_call_wait(void *ctx, unsigned int cpu)
{
	int (*fn)(void *) = fx.pending_fn[cpu];

	(void)ctx;
	CHECK(fn != NULL);
	if (!fn)
		return -EINVAL;
	fx.pending_fn[cpu] = NULL;
	fx.in_flight--;
	fx.waits++;
	return fn(fx.pending_arg[cpu]);
}

static const struct cpuhp_platform plat_async = {
	.run_on_cpu = plat_run_on_cpu,
	.call_start = plat_call_start,
	.call_wait = plat_call_wait,
	.log = plat_log,
	.notify = plat_notify,
};

#define D(s) ((void *)(long)(s))

static const struct cpuhp_step template[NR_STATES] = {
	[S_OFFLINE] = { .name = "offline" },
	[S_PREP_A] = { .name = "test:prep-a",
		       .startup = cb_up,
		       .teardown = cb_down,
		       .data = D(S_PREP_A) },
	[S_PREP_B] = { .name = "test:prep-b",
		       .startup = cb_up,
		       .data = D(S_PREP_B) },
	[S_DYN_P0] = { .flags = CPUHP_F_DYN_PREPARE },
	[S_DYN_P1] = { .flags = CPUHP_F_DYN_PREPARE },
	[S_KICK] = { .name = "test:kick",
		     .startup = cb_up,
		     .teardown = cb_down,
		     .data = D(S_KICK),
		     .flags = CPUHP_F_KICK | CPUHP_F_CANT_STOP },
	[S_STARTING] = { .name = "test:starting",
			 .startup = cb_up,
			 .teardown = cb_down,
			 .data = D(S_STARTING),
			 .flags = CPUHP_F_AP | CPUHP_F_NOFAIL |
				  CPUHP_F_CANT_STOP },
	[S_FREE] = { .flags = 0 },
	[S_AP_ON] = { .name = "test:ap-online",
		      .teardown = cb_down,
		      .data = D(S_AP_ON),
		      .flags = CPUHP_F_AP },
	[S_DYN_O0] = { .flags = CPUHP_F_DYN_ONLINE },
	[S_ONLINE] = { .name = "online" },
};

static void setup(void)
{
	memset(&fx, 0, sizeof(fx));
	memcpy(fx.steps, template, sizeof(template));
	CHECK_EQ(
		cpuhp_init(&fx.m, &plat, fx.steps, NR_STATES, fx.cpus, NR_CPUS),
		0);
}

/*
 * Compare @cpu's recorded calls with "u1 u2 d5.1" (startup of 1, ...,
 * teardown of 5 for instance 1) and drop them from the record.
 */
static void expect_calls(unsigned int cpu, const char *spec)
{
	char want[512] = "", got[512] = "";
	unsigned int kept = 0;
	size_t n = 0;

	for (unsigned int i = 0; i < fx.nr_calls; i++) {
		const struct call *c = &fx.calls[i];

		if (c->cpu != cpu) {
			fx.calls[kept++] = *c;
			continue;
		}
		if (c->inst >= 0)
			n += snprintf(got + n, sizeof(got) - n, "%s%c%d.%d",
				      n ? " " : "", c->dir, c->state, c->inst);
		else
			n += snprintf(got + n, sizeof(got) - n, "%s%c%d",
				      n ? " " : "", c->dir, c->state);
	}
	snprintf(want, sizeof(want), "%s", spec);
	CHECK_STREQ(got, want);
	fx.nr_calls = kept;
}

static int state_of(unsigned int cpu)
{
	return fx.cpus[cpu].state;
}

static void test_up_runs_startups_in_order(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), 0);
	/* S_AP_ON has no startup, the dynamic slots are empty: skipped. */
	expect_calls(0, "u1 u2 u5 u6");
	CHECK_EQ(state_of(0), S_ONLINE);
	CHECK_EQ(fx.cpus[0].target, S_ONLINE);
	CHECK_EQ(state_of(1), S_OFFLINE);
}

static void test_down_runs_teardowns_in_reverse(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 1, S_ONLINE), 0);
	fx.nr_calls = 0;
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 1, S_OFFLINE), 0);
	/* S_PREP_B has no teardown. */
	expect_calls(1, "d8 d6 d5 d1");
	CHECK_EQ(state_of(1), S_OFFLINE);
}

static void test_up_failure_rolls_back_below_failing_state(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_PREP_A), 0);
	fx.nr_calls = 0;
	fx.fail_at[0][S_KICK][0] = -ENOMEM;
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), -ENOMEM);
	/* From prep-a: prep-b up, kick fails; kick's teardown is not run,
	 * prep-b has none, prep-a was the starting point. */
	expect_calls(0, "u2 u5");
	CHECK_EQ(state_of(0), S_PREP_A);
	CHECK_EQ(fx.cpus[0].target, S_PREP_A);
	CHECK(fx.cpus[0].rollback);
	CHECK(!fx.cpus[0].broken);
}

static void test_up_failure_from_offline(void)
{
	setup();
	fx.fail_at[2][S_KICK][0] = -EIO;
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 2, S_ONLINE), -EIO);
	expect_calls(2, "u1 u2 u5 d1");
	CHECK_EQ(state_of(2), S_OFFLINE);
}

static void test_down_failure_rolls_back_above_failing_state(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), 0);
	fx.nr_calls = 0;
	fx.fail_at[0][S_KICK][1] = -EBUSY;
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 0, S_OFFLINE), -EBUSY);
	/* ap-online and starting torn down, kick fails, kick's startup is not
	 * run again: starting then back up to online. */
	expect_calls(0, "d8 d6 d5 u6");
	CHECK_EQ(state_of(0), S_ONLINE);
	CHECK(fx.cpus[0].rollback);
}

static void test_rollback_failure_marks_broken(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 3, S_PREP_B), 0);
	fx.nr_calls = 0;
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 3, S_OFFLINE), 0);
	fx.nr_calls = 0;
	fx.fail_at[3][S_KICK][0] = -EINVAL;
	fx.fail_at[3][S_PREP_A][1] = -EPERM;
	fx.errors_logged = 0;
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 3, S_ONLINE), -EINVAL);
	expect_calls(3, "u1 u2 u5 d1");
	/* The rollback stopped at prep-a, whose teardown failed. */
	CHECK_EQ(state_of(3), S_PREP_A);
	CHECK(fx.cpus[3].broken);
	CHECK(fx.errors_logged > 0);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 3, S_ONLINE), -EIO);
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 3, S_OFFLINE), -EIO);
	CHECK_EQ(fx.nr_calls, 0);
	CHECK_EQ(cpuhp_clear_broken(&fx.m, 3), 0);
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 3, S_OFFLINE), 0);
	expect_calls(3, "d1");
}

static void test_down_rollback_failure_marks_broken(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 1, S_ONLINE), 0);
	fx.nr_calls = 0;
	fx.fail_at[1][S_PREP_A][1] = -EBUSY;
	fx.fail_at[1][S_PREP_B][0] = -ENOMEM;
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 1, S_OFFLINE), -EBUSY);
	expect_calls(1, "d8 d6 d5 d1 u2");
	CHECK_EQ(state_of(1), S_PREP_A);
	CHECK(fx.cpus[1].broken);
}

static void test_targets_are_validated(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_KICK), -EINVAL);     /* cant-stop */
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_STARTING), -EINVAL); /* cant-stop */
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_FREE), -EINVAL);     /* unnamed */
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_DYN_P0), -EINVAL);   /* unnamed */
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, NR_STATES), -EINVAL);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, -1), -EINVAL);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, NR_CPUS, S_ONLINE), -EINVAL);
	CHECK_EQ(fx.nr_calls, 0);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_AP_ON), 0);
	fx.nr_calls = 0;
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_PREP_A), -EINVAL);   /* below */
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 0, S_ONLINE), -EINVAL); /* above */
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_AP_ON), 0);	       /* no-op */
	CHECK_EQ(fx.nr_calls, 0);
}

static void test_set_target_partial(void)
{
	setup();
	CHECK_EQ(cpuhp_set_target(&fx.m, 2, S_PREP_B), 0);
	expect_calls(2, "u1 u2");
	CHECK_EQ(state_of(2), S_PREP_B);
	CHECK_EQ(cpuhp_set_target(&fx.m, 2, S_ONLINE), 0);
	expect_calls(2, "u5 u6");
	CHECK_EQ(cpuhp_set_target(&fx.m, 2, S_PREP_A), 0);
	expect_calls(2, "d8 d6 d5");
	CHECK_EQ(state_of(2), S_PREP_A);
	CHECK_EQ(fx.cpus[2].target, S_PREP_A);
}

static void test_fail_injection_up_is_one_shot(void)
{
	setup();
	CHECK_EQ(cpuhp_set_fail(&fx.m, 0, S_PREP_B), 0);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), -EAGAIN);
	/* prep-b's startup was not called. */
	expect_calls(0, "u1 d1");
	CHECK_EQ(state_of(0), S_OFFLINE);
	CHECK_EQ(fx.cpus[0].fail, CPUHP_INVALID);
	CHECK_EQ(fx.injected_notices, 1);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), 0);
	expect_calls(0, "u1 u2 u5 u6");
}

static void test_fail_injection_down(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 1, S_ONLINE), 0);
	fx.nr_calls = 0;
	CHECK_EQ(cpuhp_set_fail(&fx.m, 1, S_AP_ON), 0);
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 1, S_OFFLINE), -EAGAIN);
	/* The injected teardown was not called; nothing above it to redo. */
	expect_calls(1, "");
	CHECK_EQ(state_of(1), S_ONLINE);
	/* A state with only a startup can be failed on the way up only. */
	CHECK_EQ(cpuhp_set_fail(&fx.m, 1, S_PREP_B), 0);
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 1, S_OFFLINE), 0);
	expect_calls(1, "d8 d6 d5 d1");
	CHECK_EQ(fx.cpus[1].fail, S_PREP_B);
}

static void test_fail_injection_refused(void)
{
	setup();
	CHECK_EQ(cpuhp_set_fail(&fx.m, 0, S_STARTING), -EINVAL); /* no-fail */
	CHECK_EQ(cpuhp_set_fail(&fx.m, 0, S_FREE), -EINVAL);	 /* no cbs */
	CHECK_EQ(cpuhp_set_fail(&fx.m, 0, S_OFFLINE), -EINVAL);
	CHECK_EQ(cpuhp_set_fail(&fx.m, 0, S_ONLINE), -EINVAL);
	CHECK_EQ(cpuhp_set_fail(&fx.m, 0, NR_STATES), -EINVAL);
	CHECK_EQ(cpuhp_set_fail(&fx.m, NR_CPUS, S_PREP_A), -EINVAL);
	CHECK_EQ(fx.cpus[0].fail, CPUHP_INVALID);
	CHECK_EQ(cpuhp_set_fail(&fx.m, 0, S_PREP_A), 0);
	CHECK_EQ(cpuhp_set_fail(&fx.m, 0, CPUHP_INVALID), 0);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), 0);
}

static void test_nofail_error_is_ignored_and_logged(void)
{
	setup();
	fx.fail_at[0][S_STARTING][0] = -EIO;
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), 0);
	expect_calls(0, "u1 u2 u5 u6");
	CHECK_EQ(state_of(0), S_ONLINE);
	CHECK(fx.errors_logged > 0);
}

static void test_ap_states_run_on_target_cpu(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), 0);
	CHECK_EQ(fx.run_on_cpu_calls, 1); /* starting */
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 0, S_OFFLINE), 0);
	CHECK_EQ(fx.run_on_cpu_calls, 3); /* ap-online, starting */
}

static void test_setup_state_invoke(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), 0);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 2, S_PREP_B), 0);
	fx.nr_calls = 0;
	CHECK_EQ(cpuhp_setup_state(&fx.m, S_FREE, "test:free", cb_up, cb_down,
				   D(S_FREE)),
		 0);
	/* Only CPU 0 is at or above the state. */
	expect_calls(0, "u7");
	expect_calls(2, "");
	CHECK_EQ(cpuhp_setup_state(&fx.m, S_FREE, "again", cb_up, NULL, NULL),
		 -EBUSY);
	CHECK_EQ(cpuhp_setup_state(&fx.m, S_PREP_A, "x", cb_up, NULL, NULL),
		 -EBUSY);
	CHECK_EQ(cpuhp_setup_state(&fx.m, S_OFFLINE, "x", cb_up, NULL, NULL),
		 -EINVAL);
	CHECK_EQ(cpuhp_setup_state(&fx.m, S_ONLINE, "x", cb_up, NULL, NULL),
		 -EINVAL);
	CHECK_EQ(cpuhp_setup_state(&fx.m, S_DYN_P0, NULL, cb_up, NULL, NULL),
		 -EINVAL);
	/* The new state is walked like any other. */
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 2, S_ONLINE), 0);
	expect_calls(2, "u5 u6 u7");
}

static void test_setup_state_nocalls(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), 0);
	fx.nr_calls = 0;
	CHECK_EQ(cpuhp_setup_state_nocalls(&fx.m, S_FREE, "test:free", cb_up,
					   cb_down, D(S_FREE)),
		 0);
	CHECK_EQ(fx.nr_calls, 0);
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 0, S_PREP_B), 0);
	expect_calls(0, "d8 d7 d6 d5");
}

static void test_setup_state_invoke_failure_rolls_back(void)
{
	setup();
	for (unsigned int c = 0; c < NR_CPUS; c++)
		CHECK_EQ(cpuhp_cpu_up(&fx.m, c, S_ONLINE), 0);
	fx.nr_calls = 0;
	fx.fail_at[2][S_FREE][0] = -ENODEV;
	CHECK_EQ(cpuhp_setup_state(&fx.m, S_FREE, "test:free", cb_up, cb_down,
				   D(S_FREE)),
		 -ENODEV);
	expect_calls(0, "u7 d7");
	expect_calls(1, "u7 d7");
	expect_calls(2, "u7");
	expect_calls(3, "");
	CHECK(fx.steps[S_FREE].name == NULL);
	/* Fault injection applies to install-time invocations too. */
	CHECK_EQ(cpuhp_setup_state_nocalls(&fx.m, S_FREE, "test:free", cb_up,
					   cb_down, D(S_FREE)),
		 0);
	CHECK_EQ(cpuhp_set_fail(&fx.m, 1, S_FREE), 0);
	CHECK_EQ(cpuhp_remove_state(&fx.m, S_FREE), 0);
	expect_calls(0, "d7");
	expect_calls(1, "");
	expect_calls(2, "d7");
	CHECK_EQ(fx.cpus[1].fail, CPUHP_INVALID);
	CHECK_EQ(cpuhp_set_fail(&fx.m, 1, S_FREE), -EINVAL); /* uninstalled */
}

static void test_remove_state(void)
{
	setup();
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 1, S_ONLINE), 0);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 3, S_PREP_A), 0);
	fx.nr_calls = 0;
	CHECK_EQ(cpuhp_remove_state(&fx.m, S_PREP_A), 0);
	expect_calls(1, "d1");
	expect_calls(3, "d1");
	CHECK(fx.steps[S_PREP_A].name == NULL);
	CHECK_EQ(cpuhp_remove_state(&fx.m, S_PREP_A), -ENOENT);
	CHECK_EQ(cpuhp_remove_state(&fx.m, S_ONLINE), -EINVAL);
	CHECK_EQ(cpuhp_remove_state_nocalls(&fx.m, S_KICK), 0);
	CHECK_EQ(fx.nr_calls, 0);
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 1, S_OFFLINE), 0);
	expect_calls(1, "d8 d6");
}

static void test_dynamic_ranges(void)
{
	setup();
	CHECK_EQ(cpuhp_setup_state(&fx.m, CPUHP_PREPARE_DYN, "dyn:a", cb_up,
				   NULL, D(S_DYN_P0)),
		 S_DYN_P0);
	CHECK_EQ(cpuhp_setup_state(&fx.m, CPUHP_PREPARE_DYN, "dyn:b", cb_up,
				   NULL, D(S_DYN_P1)),
		 S_DYN_P1);
	CHECK_EQ(cpuhp_setup_state(&fx.m, CPUHP_PREPARE_DYN, "dyn:c", cb_up,
				   NULL, NULL),
		 -ENOSPC);
	CHECK_EQ(cpuhp_setup_state(&fx.m, CPUHP_ONLINE_DYN, "dyn:o", cb_up,
				   cb_down, D(S_DYN_O0)),
		 S_DYN_O0);
	CHECK_EQ(cpuhp_setup_state(&fx.m, CPUHP_ONLINE_DYN, "dyn:p", cb_up,
				   NULL, NULL),
		 -ENOSPC);
	CHECK_EQ(cpuhp_remove_state(&fx.m, S_DYN_P0), 0);
	CHECK_EQ(cpuhp_setup_state(&fx.m, CPUHP_PREPARE_DYN, "dyn:d", cb_up,
				   NULL, D(S_DYN_P0)),
		 S_DYN_P0);
	CHECK_EQ(cpuhp_state_by_name(&fx.m, "dyn:d"), S_DYN_P0);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), 0);
	expect_calls(0, "u1 u2 u3 u4 u5 u6 u9");
}

static struct inst inst_a = { .id = 1 }, inst_b = { .id = 2 };

static void test_multi_instance(void)
{
	setup();
	inst_a.node = (struct cpuhp_node){ 0 };
	inst_b.node = (struct cpuhp_node){ 0 };
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_ONLINE), 0);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 1, S_PREP_A), 0);
	fx.nr_calls = 0;
	CHECK_EQ(cpuhp_setup_state_multi(&fx.m, S_FREE, "test:multi", cbm_up,
					 cbm_down, D(S_FREE)),
		 0);
	CHECK_EQ(fx.nr_calls, 0);
	CHECK_EQ(cpuhp_state_add_instance(&fx.m, S_FREE, &inst_a.node), 0);
	expect_calls(0, "u7.1");
	expect_calls(1, "");
	CHECK_EQ(cpuhp_state_add_instance(&fx.m, S_FREE, &inst_a.node),
		 -EEXIST);
	CHECK_EQ(cpuhp_state_add_instance_nocalls(&fx.m, S_FREE, &inst_b.node),
		 0);
	CHECK_EQ(fx.nr_calls, 0);
	/* A walk runs every instance, in insertion order. */
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 1, S_ONLINE), 0);
	expect_calls(1, "u2 u5 u6 u7.1 u7.2");
	CHECK_EQ(cpuhp_remove_state(&fx.m, S_FREE), -EBUSY);
	CHECK_EQ(cpuhp_state_add_instance(&fx.m, S_PREP_A, &inst_b.node),
		 -EINVAL); /* not multi */
	CHECK_EQ(cpuhp_state_remove_instance(&fx.m, S_FREE, &inst_a.node), 0);
	expect_calls(0, "d7.1");
	expect_calls(1, "d7.1");
	CHECK_EQ(cpuhp_state_remove_instance(&fx.m, S_FREE, &inst_a.node),
		 -ENOENT);
	CHECK_EQ(cpuhp_state_remove_instance_cb(&fx.m, S_FREE, &inst_b.node,
						false),
		 0);
	CHECK_EQ(fx.nr_calls, 0);
	CHECK_EQ(cpuhp_remove_state(&fx.m, S_FREE), 0);
}

static void test_multi_add_failure_rolls_back_per_cpu(void)
{
	setup();
	inst_a.node = (struct cpuhp_node){ 0 };
	for (unsigned int c = 0; c < NR_CPUS; c++)
		CHECK_EQ(cpuhp_cpu_up(&fx.m, c, S_ONLINE), 0);
	CHECK_EQ(cpuhp_setup_state_multi(&fx.m, S_FREE, "test:multi", cbm_up,
					 cbm_down, D(S_FREE)),
		 0);
	fx.nr_calls = 0;
	fx.fail_at[1][S_FREE][0] = -ENOMEM;
	CHECK_EQ(cpuhp_state_add_instance(&fx.m, S_FREE, &inst_a.node),
		 -ENOMEM);
	expect_calls(0, "u7.1 d7.1");
	expect_calls(1, "u7.1");
	expect_calls(2, "");
	CHECK(!inst_a.node.linked);
	CHECK(fx.steps[S_FREE].instances == NULL);
}

static void test_multi_walk_failure_undoes_done_instances(void)
{
	setup();
	inst_a.node = (struct cpuhp_node){ 0 };
	inst_b.node = (struct cpuhp_node){ 0 };
	CHECK_EQ(cpuhp_setup_state_multi(&fx.m, S_FREE, "test:multi", cbm_up,
					 cbm_down, D(S_FREE)),
		 0);
	CHECK_EQ(cpuhp_state_add_instance(&fx.m, S_FREE, &inst_a.node), 0);
	CHECK_EQ(cpuhp_state_add_instance(&fx.m, S_FREE, &inst_b.node), 0);
	fx.nr_calls = 0;
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 2, S_PREP_B), 0);
	fx.nr_calls = 0;
	/* Instance 2 fails: instance 1 of the same state is undone, then the
	 * states below are rolled back as usual. */
	fx.fail_inst = 2;
	fx.fail_at[2][S_FREE][0] = -EBUSY;
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 2, S_ONLINE), -EBUSY);
	expect_calls(2, "u5 u6 u7.1 u7.2 d7.1 d6 d5");
	CHECK_EQ(state_of(2), S_PREP_B);
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 2, S_ONLINE), 0);
	fx.nr_calls = 0;
	fx.fail_at[2][S_FREE][1] = -EBUSY;
	/* Down: instance 1 is redone; ap-online has no startup to redo. */
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 2, S_OFFLINE), -EBUSY);
	expect_calls(2, "d8 d7.1 d7.2 u7.1");
	CHECK_EQ(state_of(2), S_ONLINE);
}

static void test_parallel_bringup_kicks_all_first(void)
{
	static const unsigned int cpus[] = { 1, 2, 3 };
	int results[3];

	setup();
	CHECK_EQ(cpuhp_bringup_cpus(&fx.m, cpus, 3, S_ONLINE, results), 0);
	/* Every CPU reaches the kick state before any goes further. */
	CHECK_EQ(fx.nr_calls, 12);
	for (unsigned int i = 0; i < 9; i++)
		CHECK(fx.calls[i].state <= S_KICK);
	for (unsigned int i = 9; i < 12; i++)
		CHECK_EQ(fx.calls[i].state, S_STARTING);
	for (unsigned int i = 0; i < 3; i++) {
		CHECK_EQ(results[i], 0);
		CHECK_EQ(state_of(cpus[i]), S_ONLINE);
	}
	CHECK_EQ(state_of(0), S_OFFLINE);
}

static void test_parallel_bringup_failure_ends_offline(void)
{
	static const unsigned int cpus[] = { 0, 1, 2 };
	int results[3];

	setup();
	fx.fail_at[0][S_KICK][0] = -ETIMEDOUT;
	CHECK_EQ(cpuhp_set_fail(&fx.m, 1, S_STARTING), -EINVAL);
	/* Fail the second phase of CPU 1 with a state installed above. */
	CHECK_EQ(cpuhp_setup_state_nocalls(&fx.m, S_FREE, "test:free", cb_up,
					   cb_down, D(S_FREE)),
		 0);
	fx.fail_at[1][S_FREE][0] = -ENOMEM;
	CHECK_EQ(cpuhp_bringup_cpus(&fx.m, cpus, 3, S_ONLINE, results),
		 -ETIMEDOUT);
	CHECK_EQ(results[0], -ETIMEDOUT);
	CHECK_EQ(results[1], -ENOMEM);
	CHECK_EQ(results[2], 0);
	CHECK_EQ(state_of(0), S_OFFLINE);
	CHECK_EQ(state_of(1), S_OFFLINE);
	CHECK_EQ(state_of(2), S_ONLINE);
	expect_calls(0, "u1 u2 u5 d1");
	expect_calls(1, "u1 u2 u5 u6 u7 d6 d5 d1");
}

/* The same bring-ups on a platform that can start a call and wait later. */
static void setup_async(void)
{
	setup();
	/* An AP state with a startup that may fail, above the starting one. */
	fx.steps[S_AP_ON].startup = cb_up;
	CHECK_EQ(cpuhp_init(&fx.m, &plat_async, fx.steps, NR_STATES, fx.cpus,
			    NR_CPUS),
		 0);
}

static void test_parallel_bringup_lockstep(void)
{
	static const unsigned int cpus[] = { 1, 2, 3 };
	int results[3];

	setup_async();
	CHECK_EQ(cpuhp_bringup_cpus(&fx.m, cpus, 3, S_ONLINE, results), 0);
	/* Each AP state was in flight on all three CPUs at once. */
	CHECK_EQ(fx.max_in_flight, 3);
	CHECK_EQ(fx.waits, 6);
	CHECK_EQ(fx.in_flight, 0);
	CHECK_EQ(fx.run_on_cpu_calls, 0);
	CHECK_EQ(fx.done_notices, 6); /* the kick walks', then the rest's */
	for (unsigned int i = 0; i < 3; i++) {
		CHECK_EQ(results[i], 0);
		CHECK_EQ(state_of(cpus[i]), S_ONLINE);
		CHECK_EQ(fx.cpus[cpus[i]].target, S_ONLINE);
		expect_calls(cpus[i], "u1 u2 u5 u6 u8");
	}
	CHECK_EQ(fx.m.in_callback, false);
}

static void test_parallel_bringup_lockstep_failure(void)
{
	static const unsigned int cpus[] = { 1, 2, 3, 2 };
	int results[4];

	setup_async();
	fx.fail_at[2][S_AP_ON][0] = -EBUSY;
	/*
	 * A start that fails is the callback's error: ignored at the no-fail
	 * starting state, it fails the next AP state.
	 */
	fx.start_fail[3] = -ENODEV;
	CHECK_EQ(cpuhp_bringup_cpus(&fx.m, cpus, 4, S_ONLINE, results), -EBUSY);
	CHECK_EQ(results[0], 0);
	CHECK_EQ(results[1], -EBUSY);
	CHECK_EQ(results[2], -ENODEV);
	CHECK_EQ(state_of(1), S_ONLINE);
	CHECK_EQ(state_of(2), S_OFFLINE);
	CHECK_EQ(state_of(3), S_OFFLINE);
	CHECK(!fx.cpus[2].broken);
	CHECK_EQ(fx.in_flight, 0);
	/* The failed CPU alone is rolled back, then taken to offline. */
	expect_calls(1, "u1 u2 u5 u6 u8");
	expect_calls(2, "u1 u2 u5 u6 u8 d6 d5 d1");
	expect_calls(3, "u1 u2 u5 d6 d5 d1");
	/* A CPU named twice is walked once; it ends where the first left. */
	CHECK_EQ(results[3], 0);
	/* Walked again, CPU 2 and 3 come up like the others. */
	fx.start_fail[3] = 0;
	CHECK_EQ(cpuhp_bringup_cpus(&fx.m, cpus + 1, 2, S_ONLINE, results), 0);
	CHECK_EQ(state_of(2), S_ONLINE);
	CHECK_EQ(state_of(3), S_ONLINE);
}

static void test_reentry_is_refused(void)
{
	setup();
	fx.reenter = true;
	CHECK_EQ(cpuhp_cpu_up(&fx.m, 0, S_PREP_A), 0);
	fx.reenter = false;
	CHECK_EQ(fx.reenter_ret, -EDEADLK);
	CHECK_EQ(state_of(0), S_PREP_A);
}

static void test_introspection(void)
{
	struct cpuhp_state_info info;
	struct cpuhp_cpu cpu;

	setup();
	CHECK_EQ(cpuhp_state_info(&fx.m, S_STARTING, &info), 0);
	CHECK_STREQ(info.name, "test:starting");
	CHECK(info.has_startup && info.has_teardown);
	CHECK_EQ(info.section, CPUHP_SECTION_STARTING);
	CHECK_STREQ(cpuhp_section_name(info.section), "starting");
	CHECK_EQ(cpuhp_state_info(&fx.m, S_AP_ON, &info), 0);
	CHECK(!info.has_startup && info.has_teardown);
	CHECK_EQ(info.section, CPUHP_SECTION_ONLINE);
	CHECK_EQ(cpuhp_state_info(&fx.m, S_PREP_B, &info), 0);
	CHECK_EQ(info.section, CPUHP_SECTION_PREPARE);
	CHECK_EQ(cpuhp_state_info(&fx.m, S_FREE, &info), 0);
	CHECK(info.name == NULL && !info.has_startup);
	CHECK_EQ(cpuhp_state_info(&fx.m, NR_STATES, &info), -EINVAL);
	CHECK_EQ(cpuhp_state_by_name(&fx.m, "test:kick"), S_KICK);
	CHECK_EQ(cpuhp_state_by_name(&fx.m, "nope"), -ENOENT);
	CHECK_EQ(cpuhp_set_target(&fx.m, 1, S_PREP_B), 0);
	CHECK_EQ(cpuhp_set_fail(&fx.m, 1, S_PREP_A), 0);
	CHECK_EQ(cpuhp_cpu_info(&fx.m, 1, &cpu), 0);
	CHECK_EQ(cpu.state, S_PREP_B);
	CHECK_EQ(cpu.target, S_PREP_B);
	CHECK_EQ(cpu.fail, S_PREP_A);
	CHECK_EQ(cpuhp_cpu_info(&fx.m, NR_CPUS, &cpu), -EINVAL);
	CHECK_EQ(fx.done_notices, 1);
}

static void test_init_rejects_bad_tables(void)
{
	struct cpuhp_machine m;
	struct cpuhp_step steps[NR_STATES];
	struct cpuhp_cpu cpus[1];

	memcpy(steps, template, sizeof(steps));
	steps[S_PREP_A].flags |= CPUHP_F_KICK; /* a second kick state */
	CHECK_EQ(cpuhp_init(&m, &plat, steps, NR_STATES, cpus, 1), -EINVAL);
	memcpy(steps, template, sizeof(steps));
	steps[S_ONLINE].name = NULL;
	CHECK_EQ(cpuhp_init(&m, &plat, steps, NR_STATES, cpus, 1), -EINVAL);
	memcpy(steps, template, sizeof(steps));
	steps[S_DYN_P0].name = "named dynamic slot";
	CHECK_EQ(cpuhp_init(&m, &plat, steps, NR_STATES, cpus, 1), -EINVAL);
	CHECK_EQ(cpuhp_init(&m, &plat, steps, 1, cpus, 1), -EINVAL);
	memcpy(steps, template, sizeof(steps));
	CHECK_EQ(cpuhp_init(&m, &plat, steps, NR_STATES, cpus, 1), 0);
	CHECK_EQ(m.kick_state, S_KICK);
}

static void test_machines_are_independent(void)
{
	struct cpuhp_machine m2;
	struct cpuhp_step steps2[NR_STATES];
	struct cpuhp_cpu cpus2[2];

	setup();
	memcpy(steps2, template, sizeof(steps2));
	CHECK_EQ(cpuhp_init(&m2, &plat, steps2, NR_STATES, cpus2, 2), 0);
	CHECK_EQ(cpuhp_setup_state_nocalls(&m2, S_FREE, "m2:only", cb_up, NULL,
					   D(S_FREE)),
		 0);
	CHECK_EQ(cpuhp_cpu_up(&m2, 1, S_ONLINE), 0);
	CHECK_EQ(cpus2[1].state, S_ONLINE);
	CHECK_EQ(state_of(1), S_OFFLINE);
	CHECK(fx.steps[S_FREE].name == NULL);
	CHECK_EQ(cpuhp_state_by_name(&fx.m, "m2:only"), -ENOENT);
}

static void test_boot_state(void)
{
	setup();
	CHECK_EQ(cpuhp_set_boot_state(&fx.m, 0, S_ONLINE), 0);
	CHECK_EQ(fx.nr_calls, 0);
	CHECK_EQ(cpuhp_cpu_down(&fx.m, 0, S_PREP_B), 0);
	expect_calls(0, "d8 d6 d5");
	CHECK_EQ(cpuhp_set_boot_state(&fx.m, 0, NR_STATES), -EINVAL);
}

CHECK_MAIN(TEST(test_up_runs_startups_in_order),
	   TEST(test_down_runs_teardowns_in_reverse),
	   TEST(test_up_failure_rolls_back_below_failing_state),
	   TEST(test_up_failure_from_offline),
	   TEST(test_down_failure_rolls_back_above_failing_state),
	   TEST(test_rollback_failure_marks_broken),
	   TEST(test_down_rollback_failure_marks_broken),
	   TEST(test_targets_are_validated), TEST(test_set_target_partial),
	   TEST(test_fail_injection_up_is_one_shot),
	   TEST(test_fail_injection_down), TEST(test_fail_injection_refused),
	   TEST(test_nofail_error_is_ignored_and_logged),
	   TEST(test_ap_states_run_on_target_cpu),
	   TEST(test_setup_state_invoke), TEST(test_setup_state_nocalls),
	   TEST(test_setup_state_invoke_failure_rolls_back),
	   TEST(test_remove_state), TEST(test_dynamic_ranges),
	   TEST(test_multi_instance),
	   TEST(test_multi_add_failure_rolls_back_per_cpu),
	   TEST(test_multi_walk_failure_undoes_done_instances),
	   TEST(test_parallel_bringup_kicks_all_first),
	   TEST(test_parallel_bringup_failure_ends_offline),
	   TEST(test_parallel_bringup_lockstep),
	   TEST(test_parallel_bringup_lockstep_failure),
	   TEST(test_reentry_is_refused), TEST(test_introspection),
	   TEST(test_init_rejects_bad_tables),
	   TEST(test_machines_are_independent), TEST(test_boot_state))
