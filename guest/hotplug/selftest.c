// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hotplug self-test.  For every AP that is online: offline it, then
 * online it again.  Before each operation the next unused fault token for
 * that CPU and direction (fail= for offline, fail-up= for online) is
 * injected; the operation must then fail with -EAGAIN and leave the CPU
 * where it started, and it is retried with the next token, until one runs
 * without injection and must succeed.  After every operation, failed or
 * not, hp_check_cpu() compares the bookkeeping with the table.
 */
#include <errno.h>

#include "cmdline.h"
#include "cpuhp_table.h"
#include "printf.h"
#include "selftest.h"
#include "smp.h"
#include "tsc.h"

#define MAX_ATTEMPTS (CMDLINE_MAX_FAULTS + 1)

static int nr_ops, nr_injected, nr_bad;

static int parse_state(const char *s)
{
	int v = 0;

	if (*s >= '0' && *s <= '9') {
		for (; *s; s++) {
			if (*s < '0' || *s > '9')
				return -ENOENT;
			v = v * 10 + (*s - '0');
		}
		return v;
	}
	return cpuhp_state_by_name(&hp_machine, s);
}

/* The next usable fault for (cpu, up), injected; -1 if there is none. */
static int inject_next(unsigned int cpu, bool up)
{
	for (unsigned int i = 0; i < cmdline.nr_faults; i++) {
		struct cmdline_fault *f = &cmdline.faults[i];
		int state, ret;

		if (f->used || f->cpu != cpu || f->up != up)
			continue;
		f->used = true;
		state = parse_state(f->state);
		if (state < 0 || state >= (int)hp_machine.nr_states) {
			printk("selftest: fail%s=%s@%u: no such state\n",
			       up ? "-up" : "", f->state, cpu);
			nr_bad++;
			continue;
		}
		ret = cpuhp_set_fail(&hp_machine, cpu, state);
		if (ret) {
			/* The library refuses no-fail states: as Linux. */
			printk("selftest: fail%s=%s@%u: refused (%d)\n",
			       up ? "-up" : "", f->state, cpu, ret);
			continue;
		}
		return state;
	}
	return -1;
}

static void run_op(unsigned int cpu, bool up)
{
	int target = up ? cpuhp_online_state(&hp_machine) : CPUHP_OFFLINE;
	const char *what = up ? "online" : "offline";

	for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
		struct cpuhp_cpu before, after;
		int fail = inject_next(cpu, up);
		u64 t0, t1;
		int ret, bad;

		cpuhp_cpu_info(&hp_machine, cpu, &before);
		t0 = rdtsc();
		ret = up ? cpuhp_cpu_up(&hp_machine, cpu, target)
			 : cpuhp_cpu_down(&hp_machine, cpu, target);
		t1 = rdtsc();
		cpuhp_cpu_info(&hp_machine, cpu, &after);
		nr_ops++;

		bad = hp_check_cpu(cpu);
		if (fail >= 0) {
			nr_injected++;
			if (ret != -EAGAIN || after.state != before.state) {
				printk("selftest: cpu %u %s with fault at %s: "
				       "returned %d at state %d, expected "
				       "-EAGAIN at %d\n",
				       cpu, what, hp_state_name(fail), ret,
				       after.state, before.state);
				bad++;
			}
		} else if (ret || after.state != target) {
			printk("selftest: cpu %u %s: returned %d at state %d\n",
			       cpu, what, ret, after.state);
			bad++;
		}
		printk("selftest: cpu %u %s%s%s: %d, now at %s, %s (%lu us)\n",
		       cpu, what, fail >= 0 ? " with fault at " : "",
		       fail >= 0 ? hp_state_name(fail) : "", ret,
		       hp_state_name(after.state),
		       bad ? "INCONSISTENT" : "consistent", tsc_to_us(t1 - t0));
		nr_bad += bad;
		if (fail < 0 || after.broken)
			return;
	}
}

/*
 * The online APs' per-CPU work must be running: each must count work on
 * its timer ticks (10 Hz) within a second or two.
 */
static int check_work(void)
{
	u64 end = tsc_deadline_us(2000000);
	int bad = 0;

	for (unsigned int cpu = 1; cpu < smp_nr_possible; cpu++) {
		if (!cpumask_test(&cpu_online_mask, cpu))
			continue;
		while (!READ_ONCE(percpu[cpu].work) && !tsc_passed(end))
			cpu_relax();
		if (!READ_ONCE(percpu[cpu].work)) {
			printk("selftest: cpu %u: work loop not running "
			       "(%lu ticks)\n",
			       cpu, (unsigned long)percpu[cpu].ticks);
			bad++;
		}
	}
	return bad;
}

/*
 * Every wait of the boot CPU's that halted was ended by its AP's wake-up
 * IPI (smp.c), sent whatever state the AP's LAPIC is in; the timer only
 * bounds the halts.  A wake-up that never comes still passes every other
 * check, one timer slice late each time: this one catches it.
 */
static int check_waits(void)
{
	struct smp_wait_stats st;

	smp_get_wait_stats(&st);
	printk("selftest: boot CPU waits %lu, halts %lu, woken by an AP %lu, "
	       "by the timer %lu\n",
	       (unsigned long)st.waits, (unsigned long)st.halts,
	       (unsigned long)st.wakes, (unsigned long)st.slices);
	if (st.halts && !st.wakes) {
		printk("selftest: the boot CPU halted for its APs, and none "
		       "woke it\n");
		return 1;
	}
	return 0;
}

int selftest_run(void)
{
	unsigned int aps = 0;

	printk("selftest: %u possible CPUs, %u fault tokens\n", smp_nr_possible,
	       cmdline.nr_faults);
	nr_bad += (int)cmdline.nr_bad;
	for (unsigned int cpu = 1; cpu < smp_nr_possible; cpu++) {
		struct cpuhp_cpu st;

		cpuhp_cpu_info(&hp_machine, cpu, &st);
		if (st.state != cpuhp_online_state(&hp_machine))
			continue;
		aps++;
		run_op(cpu, false);
		run_op(cpu, true);
	}
	for (unsigned int i = 0; i < cmdline.nr_faults; i++) {
		const struct cmdline_fault *f = &cmdline.faults[i];

		if (!f->used) {
			printk("selftest: fail%s=%s@%u: not used (CPU not "
			       "online, or not an AP)\n",
			       f->up ? "-up" : "", f->state, f->cpu);
			nr_bad++;
		}
	}
	for (unsigned int cpu = 0; cpu < smp_nr_possible; cpu++)
		nr_bad += hp_check_cpu(cpu);
	nr_bad += check_work();
	nr_bad += check_waits();
	printk("selftest: %u APs, %d operations, %d with injected faults, %s\n",
	       aps, nr_ops, nr_injected, nr_bad ? "FAILED" : "all consistent");
	return nr_bad;
}
