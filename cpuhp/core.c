// SPDX-License-Identifier: GPL-2.0-only
/*
 * The walks: bringing a CPU up or down through the state table, and the
 * symmetric rollback when a step fails.  A CPU at state S has had the
 * startup of every state <= S run, and no teardown since.
 */
#include "internal.h"

static int cpuhp_check_table(const struct cpuhp_step *steps,
			     unsigned int nr_states, int *kick)
{
	const unsigned int dyn = CPUHP_F_DYN_PREPARE | CPUHP_F_DYN_ONLINE;

	*kick = CPUHP_INVALID;
	if (nr_states < 2 || !steps[0].name || !steps[nr_states - 1].name)
		return -EINVAL;
	for (unsigned int s = 0; s < nr_states; s++) {
		unsigned int f = steps[s].flags;

		if ((f & dyn) == dyn || ((f & dyn) && steps[s].name))
			return -EINVAL;
		if ((f & dyn) && (s == 0 || s == nr_states - 1))
			return -EINVAL;
		if (steps[s].instances)
			return -EINVAL;
		if (f & CPUHP_F_KICK) {
			if (*kick != CPUHP_INVALID || s == 0 ||
			    s == nr_states - 1)
				return -EINVAL;
			*kick = (int)s;
		}
	}
	return 0;
}

int cpuhp_init(struct cpuhp_machine *m, const struct cpuhp_platform *plat,
	       struct cpuhp_step *steps, unsigned int nr_states,
	       struct cpuhp_cpu *cpus, unsigned int nr_cpus)
{
	int kick;
	int ret = cpuhp_check_table(steps, nr_states, &kick);

	if (ret)
		return ret;
	*m = (struct cpuhp_machine){
		.plat = plat,
		.steps = steps,
		.nr_states = nr_states,
		.cpus = cpus,
		.nr_cpus = nr_cpus,
		.kick_state = kick,
	};
	for (unsigned int c = 0; c < nr_cpus; c++)
		cpus[c] = (struct cpuhp_cpu){
			.state = CPUHP_OFFLINE,
			.target = CPUHP_OFFLINE,
			.fail = CPUHP_INVALID,
		};
	return 0;
}

static bool cpuhp_state_valid(const struct cpuhp_machine *m, int state)
{
	return state >= 0 && state < (int)m->nr_states;
}

/* Linux's rule: OFFLINE, ONLINE or a named state that may be stopped at. */
bool cpuhp_target_valid(const struct cpuhp_machine *m, int target)
{
	const struct cpuhp_step *step;

	if (!cpuhp_state_valid(m, target))
		return false;
	if (target == CPUHP_OFFLINE || target == cpuhp_online_state(m))
		return true;
	step = &m->steps[target];
	return step->name && !(step->flags & CPUHP_F_CANT_STOP);
}

int cpuhp_set_boot_state(struct cpuhp_machine *m, unsigned int cpu, int state)
{
	int ret;

	if (cpu >= m->nr_cpus || !cpuhp_state_valid(m, state))
		return -EINVAL;
	ret = cpuhp_enter(m);
	if (ret)
		return ret;
	m->cpus[cpu].state = state;
	m->cpus[cpu].target = state;
	cpuhp_leave(m);
	return 0;
}

/*
 * Startup of each state above the current one up to @target.  On failure
 * the CPU is left at the state below the failing one and the error returned.
 */
static int cpuhp_run_up(struct cpuhp_machine *m, unsigned int cpu, int target,
			bool rollback)
{
	struct cpuhp_cpu *st = &m->cpus[cpu];

	while (st->state < target) {
		int s = st->state + 1;

		if (cpuhp_step_has_cb(&m->steps[s], true)) {
			int ret = cpuhp_invoke(m, cpu, s, true, NULL, rollback);

			if (ret)
				return ret;
		}
		st->state = s;
	}
	return 0;
}

/* Teardown from the current state down to @target + 1; mirror of run_up. */
static int cpuhp_run_down(struct cpuhp_machine *m, unsigned int cpu, int target,
			  bool rollback)
{
	struct cpuhp_cpu *st = &m->cpus[cpu];

	while (st->state > target) {
		int s = st->state;

		if (cpuhp_step_has_cb(&m->steps[s], false)) {
			int ret =
				cpuhp_invoke(m, cpu, s, false, NULL, rollback);

			if (ret)
				return ret;
		}
		st->state = s - 1;
	}
	return 0;
}

static void cpuhp_notify_done(struct cpuhp_machine *m, unsigned int cpu,
			      int ret)
{
	struct cpuhp_notice n = {
		.kind = CPUHP_NOTICE_DONE,
		.cpu = cpu,
		.state = m->cpus[cpu].state,
		.bringup = m->cpus[cpu].bringup,
		.rollback = m->cpus[cpu].rollback,
		.ret = ret,
	};

	if (m->plat && m->plat->notify)
		m->plat->notify(m->plat->ctx, &n);
}

static void cpuhp_walk_begin(struct cpuhp_machine *m, unsigned int cpu,
			     int target, bool up)
{
	struct cpuhp_cpu *st = &m->cpus[cpu];

	st->target = target;
	st->bringup = up;
	st->rollback = false;
}

/* The end of a walk that started at @prev: rolled back on failure. */
static int cpuhp_walk_end(struct cpuhp_machine *m, unsigned int cpu, int prev,
			  bool up, int ret)
{
	struct cpuhp_cpu *st = &m->cpus[cpu];
	int target = st->target;
	int err;

	if (ret && !st->broken) {
		cpuhp_log(m, CPUHP_LOG_INFO,
			  "cpuhp: CPU %u: %s to %d failed at %d with %d: "
			  "rolling back to %d\n",
			  cpu, up ? "up" : "down", target,
			  up ? st->state + 1 : st->state, ret, prev);
		st->rollback = true;
		st->bringup = !up;
		st->target = prev;
		err = up ? cpuhp_run_down(m, cpu, prev, true)
			 : cpuhp_run_up(m, cpu, prev, true);
		if (err)
			cpuhp_mark_broken(m, cpu,
					  up ? st->state : st->state + 1, err);
	}
	cpuhp_notify_done(m, cpu, ret);
	return ret;
}

/*
 * Walk @cpu to @target in direction @up; on failure walk back to where it
 * started.  The failing state's own opposite callback is not run, because
 * run_up/run_down leave the CPU just short of it.
 */
static int cpuhp_walk(struct cpuhp_machine *m, unsigned int cpu, int target,
		      bool up)
{
	int prev = m->cpus[cpu].state;
	int ret;

	cpuhp_walk_begin(m, cpu, target, up);
	ret = up ? cpuhp_run_up(m, cpu, target, false)
		 : cpuhp_run_down(m, cpu, target, false);
	return cpuhp_walk_end(m, cpu, prev, up, ret);
}

static int cpuhp_check_cpu(const struct cpuhp_machine *m, unsigned int cpu)
{
	if (cpu >= m->nr_cpus)
		return -EINVAL;
	return m->cpus[cpu].broken ? -EIO : 0;
}

static int cpuhp_do_target(struct cpuhp_machine *m, unsigned int cpu,
			   int target, int dir)
{
	int ret = cpuhp_enter(m);
	int cur;

	/* Checks under the lock: a re-entrant call gets -EDEADLK. */
	if (ret)
		return ret;
	ret = cpuhp_check_cpu(m, cpu);
	if (!ret && !cpuhp_target_valid(m, target))
		ret = -EINVAL;
	if (!ret) {
		cur = m->cpus[cpu].state;
		if ((dir > 0 && target < cur) || (dir < 0 && target > cur))
			ret = -EINVAL;
		else if (target != cur)
			ret = cpuhp_walk(m, cpu, target, target > cur);
	}
	cpuhp_leave(m);
	return ret;
}

int cpuhp_cpu_up(struct cpuhp_machine *m, unsigned int cpu, int target)
{
	return cpuhp_do_target(m, cpu, target, 1);
}

int cpuhp_cpu_down(struct cpuhp_machine *m, unsigned int cpu, int target)
{
	return cpuhp_do_target(m, cpu, target, -1);
}

int cpuhp_set_target(struct cpuhp_machine *m, unsigned int cpu, int target)
{
	return cpuhp_do_target(m, cpu, target, 0);
}

/* Move one CPU of a parallel bring-up; targets are not checked here. */
static int cpuhp_bringup_one(struct cpuhp_machine *m, unsigned int cpu,
			     int target)
{
	int ret = cpuhp_check_cpu(m, cpu);

	if (ret || m->cpus[cpu].state >= target)
		return ret;
	return cpuhp_walk(m, cpu, target, true);
}

/* A failed CPU of a parallel bring-up is taken all the way down. */
static int cpuhp_bringup_failed(struct cpuhp_machine *m, unsigned int cpu,
				int ret)
{
	if (cpu < m->nr_cpus && !m->cpus[cpu].broken &&
	    m->cpus[cpu].state > CPUHP_OFFLINE)
		cpuhp_walk(m, cpu, CPUHP_OFFLINE, false);
	return ret;
}

/* @cpus[i] walks in the lockstep (once, though it may be listed twice). */
static bool cpuhp_walking(const struct cpuhp_machine *m,
			  const unsigned int *cpus, unsigned int i)
{
	const struct cpuhp_cpu *st;

	if (cpus[i] >= m->nr_cpus)
		return false;
	st = &m->cpus[cpus[i]];
	return st->call.lockstep && st->call.index == i && !st->call.ret;
}

/*
 * Start state @s on every CPU of the lockstep that is still walking, then
 * wait for each: the APs run an AP state at the same time.  A CPU that
 * fails stops walking, with its error.
 */
static void cpuhp_lockstep_state(struct cpuhp_machine *m,
				 const unsigned int *cpus, unsigned int n,
				 int s)
{
	for (unsigned int i = 0; i < n; i++) {
		if (cpuhp_walking(m, cpus, i))
			m->cpus[cpus[i]].call.ret =
				cpuhp_invoke_start(m, cpus[i], s);
	}
	for (unsigned int i = 0; i < n; i++) {
		struct cpuhp_cpu *st;

		if (!cpuhp_walking(m, cpus, i))
			continue;
		st = &m->cpus[cpus[i]];
		st->call.ret = cpuhp_invoke_wait(m, cpus[i]);
		if (!st->call.ret)
			st->state = s;
	}
	m->in_callback = false;
}

/*
 * Phase 2 in lockstep (cpuhp_bringup_cpus): the CPUs of @cpus at the kick
 * state walk, each state on all of them before the next; then each walk
 * ends (rollback on failure, the DONE notice) in @cpus order.
 */
static void cpuhp_lockstep(struct cpuhp_machine *m, const unsigned int *cpus,
			   unsigned int n, int target, int *results, int *first)
{
	int kick = m->kick_state;

	for (unsigned int i = 0; i < n; i++) {
		struct cpuhp_cpu *st;

		if (cpus[i] >= m->nr_cpus)
			continue;
		st = &m->cpus[cpus[i]];
		/* Anywhere else (or twice in @cpus): phase 2's usual walk. */
		if (st->state != kick || st->broken || st->call.lockstep)
			continue;
		st->call.lockstep = true;
		st->call.index = i;
		st->call.ret = 0;
		cpuhp_walk_begin(m, cpus[i], target, true);
	}
	for (int s = kick + 1; s <= target; s++) {
		if (cpuhp_step_has_cb(&m->steps[s], true)) {
			cpuhp_lockstep_state(m, cpus, n, s);
			continue;
		}
		for (unsigned int i = 0; i < n; i++)
			if (cpuhp_walking(m, cpus, i))
				m->cpus[cpus[i]].state = s;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct cpuhp_cpu *st;
		int ret;

		if (cpus[i] >= m->nr_cpus)
			continue;
		st = &m->cpus[cpus[i]];
		if (!st->call.lockstep || st->call.index != i)
			continue;
		st->call.lockstep = false;
		ret = cpuhp_walk_end(m, cpus[i], kick, true, st->call.ret);
		if (!ret)
			continue;
		ret = cpuhp_bringup_failed(m, cpus[i], ret);
		if (results)
			results[i] = ret;
		if (!*first)
			*first = ret;
	}
}

int cpuhp_bringup_cpus(struct cpuhp_machine *m, const unsigned int *cpus,
		       unsigned int n, int target, int *results)
{
	int kick = m->kick_state;
	bool use_kick = kick != CPUHP_INVALID && target > kick;
	int first = 0;
	int ret;

	ret = cpuhp_enter(m);
	if (ret)
		return ret;
	if (!cpuhp_target_valid(m, target)) {
		cpuhp_leave(m);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < n; i++) {
		unsigned int cpu = cpus[i];

		/*
		 * Kick every AP below the kick state first so that their slow
		 * start-up overlaps; the others only take part in phase 2.
		 */
		ret = 0;
		if (use_kick &&
		    (cpu >= m->nr_cpus || m->cpus[cpu].state < kick))
			ret = cpuhp_bringup_one(m, cpu, kick);
		if (ret)
			ret = cpuhp_bringup_failed(m, cpu, ret);
		if (results)
			results[i] = ret;
		if (ret && !first)
			first = ret;
	}
	if (use_kick && cpuhp_can_start(m))
		cpuhp_lockstep(m, cpus, n, target, results, &first);
	for (unsigned int i = 0; i < n; i++) {
		unsigned int cpu = cpus[i];

		/*
		 * Below the kick state now means its kick failed (broken or
		 * not), or its lockstep walk did: its error stands.  A CPU
		 * the lockstep took up is at @target: nothing to do.
		 */
		if (use_kick &&
		    (cpu >= m->nr_cpus || m->cpus[cpu].state < kick))
			continue;
		ret = cpuhp_bringup_one(m, cpu, target);
		if (!ret)
			continue;
		ret = cpuhp_bringup_failed(m, cpu, ret);
		if (results)
			results[i] = ret;
		if (!first)
			first = ret;
	}
	cpuhp_leave(m);
	return first;
}

int cpuhp_set_fail(struct cpuhp_machine *m, unsigned int cpu, int state)
{
	const struct cpuhp_step *step;
	int ret;

	ret = cpuhp_enter(m);
	if (ret)
		return ret;
	/* Checked under the lock: the table changes under setup/remove. */
	if (cpu >= m->nr_cpus)
		ret = -EINVAL;
	else if (state != CPUHP_INVALID) {
		if (!cpuhp_state_valid(m, state))
			ret = -EINVAL;
		else {
			step = &m->steps[state];
			if ((step->flags & CPUHP_F_NOFAIL) ||
			    (!cpuhp_step_has_cb(step, true) &&
			     !cpuhp_step_has_cb(step, false)))
				ret = -EINVAL;
		}
	}
	if (!ret)
		m->cpus[cpu].fail = state;
	cpuhp_leave(m);
	return ret;
}

int cpuhp_clear_broken(struct cpuhp_machine *m, unsigned int cpu)
{
	int ret;

	if (cpu >= m->nr_cpus)
		return -EINVAL;
	ret = cpuhp_enter(m);
	if (ret)
		return ret;
	m->cpus[cpu].broken = false;
	cpuhp_leave(m);
	return 0;
}
