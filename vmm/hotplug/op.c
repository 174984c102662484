// SPDX-License-Identifier: GPL-2.0-only
/*
 * The operation frame (docs/design.md §8, §11): the gate that lets one
 * operation in at a time (hp_op_enter(), hp_op_exit(), whose outermost
 * exit runs the agreement check), and, inside it, each single-CPU
 * operation's beginning (the checks that refuse it before any walk, its
 * report and clocks), its end and the accounting of its time and exits.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "hotplug_internal.h"
#include "vm.h"

/*
 * How long an operation waits for the guest to finish a walk it is still
 * doing on that CPU (the tail of a hot-add: ap:online-work to online)
 * before it is refused with -EBUSY.
 */
#define HP_BUSY_GRACE_MS 2000

/* How long an operation's end waits for the exit that woke it. */
#define HP_EXIT_SETTLE_NS 10000000ull

/* --- the gate ------------------------------------------------------------ */

int hp_op_enter(struct hotplug *hp, bool machine)
{
	pthread_t self = pthread_self();
	int ret = 0;

	pthread_mutex_lock(&hp->lock);
	if (hp->op_depth && pthread_equal(hp->op_owner, self)) {
		hp->op_depth++;
		goto out;
	}
	hp->op_waiters++;
	while (!(hp->stopping && !machine) &&
	       (hp->op_depth || (!machine && !hp->running)))
		pthread_cond_wait(&hp->cond, &hp->lock);
	hp->op_waiters--;
	if (hp->stopping && !machine) {
		ret = -ESHUTDOWN;
		goto out;
	}
	hp->op_owner = self;
	hp->op_depth = 1;
out:
	pthread_mutex_unlock(&hp->lock);
	return ret;
}

void hp_op_exit(struct hotplug *hp)
{
	bool last, work, fresh;

	pthread_mutex_lock(&hp->lock);
	last = hp->op_depth == 1 && hp->running && !hp->stopping;
	fresh = hp->linux_fresh;
	hp->linux_fresh = false;
	pthread_mutex_unlock(&hp->lock);
	/*
	 * Every operation's end: what does Linux say now (with the agent:
	 * unless the operation's last act was Linux's answer to
	 * guest-set-vcpus), and are the two sides still in agreement?
	 */
	if (last) {
		if (!fresh)
			hp_linux_refresh(hp, true, NULL);
		hp_agree_check(hp);
	}
	pthread_mutex_lock(&hp->lock);
	work = !--hp->op_depth && hp->eject_work;
	pthread_cond_broadcast(&hp->cond);
	pthread_mutex_unlock(&hp->lock);
	/* An eject came while this operation ran: the machine thread's. */
	if (work)
		vm_notify(hp->vm);
}

bool hp_op_try_enter(struct hotplug *hp, bool *work)
{
	bool ok;

	pthread_mutex_lock(&hp->lock);
	ok = !hp->op_depth && hp->running &&
	     (!work || (*work && !hp->stopping));
	if (ok) {
		if (work)
			*work = false;
		hp->op_owner = pthread_self();
		hp->op_depth = 1;
	}
	pthread_mutex_unlock(&hp->lock);
	return ok;
}

unsigned int hotplug_op_waiters(struct hotplug *hp)
{
	unsigned int n;

	pthread_mutex_lock(&hp->lock);
	n = hp->op_waiters;
	pthread_mutex_unlock(&hp->lock);
	return n;
}

int hotplug_check(struct hotplug *hp)
{
	int n = 0;

	if (!hp_op_try_enter(hp, NULL))
		return -EBUSY;
	hp_op_exit(hp); /* checks, as every operation's end does */
	pthread_mutex_lock(&hp->lock);
	for (unsigned int cpu = 0; cpu < hp->max_cpus; cpu++)
		n += hp->slots[cpu].disagree;
	pthread_mutex_unlock(&hp->lock);
	return n;
}

/* --- one single-CPU operation inside it ---------------------------------- */

/* A new operation: no reason left from the one before. */
void hp_op_err_clear(struct hp_report *rep)
{
	if (rep)
		hv_err_clear(&rep->err);
}

/*
 * A late guest may still be walking this CPU (the end of a hot-add, or a
 * walk that outlived its timeout): give it a moment, then refuse.
 */
static int wait_guest_idle(struct hotplug *hp, unsigned int cpu, int timeout,
			   struct hp_report *rep)
{
	struct hp_slot *s = &hp->slots[cpu];
	uint64_t end = hv_now_ns() + (uint64_t)(timeout < HP_BUSY_GRACE_MS
							? timeout
							: HP_BUSY_GRACE_MS) *
					     1000000ull;
	struct timespec dl = { .tv_sec = (time_t)(end / 1000000000ull),
			       .tv_nsec = (long)(end % 1000000000ull) };
	int ret = 0;

	if (s->batched)
		return 0; /* walking it because batch.c asked it to */
	pthread_mutex_lock(&hp->lock);
	while (s->guest_walking && !hp->stopping)
		if (pthread_cond_timedwait(&hp->cond, &hp->lock, &dl) ==
		    ETIMEDOUT)
			break;
	if (hp->stopping)
		ret = -ESHUTDOWN;
	else if (s->guest_walking)
		ret = -EBUSY;
	pthread_mutex_unlock(&hp->lock);
	if (ret == -EBUSY)
		return hp_refuse(
			rep, cpu, ret,
			"the guest is still walking its table for it (a "
			"late guest after a timeout?); try again once it "
			"reports done");
	if (ret)
		hv_err_set(rep ? &rep->err : NULL, ret,
			   "the VM is shutting down");
	return ret;
}

int hp_op_begin(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		struct hp_report *rep, enum hp_op_kind kind)
{
	clockid_t clk;
	int timeout = timeout_ms > 0 ? timeout_ms : hp->timeout_ms;
	int ret;

	if (cpu >= hp->max_cpus)
		return hp_refuse(rep, cpu, -EINVAL,
				 "no such slot; this VM has %u (0-%u)",
				 hp->max_cpus, hp->max_cpus - 1);
	ret = wait_guest_idle(hp, cpu, timeout, rep);
	if (ret)
		return ret;
	if (rep)
		memset(rep, 0, sizeof(*rep));
	/* This thread's CPU clock: what the operation itself works. */
	if (pthread_getcpuclockid(pthread_self(), &clk))
		clk = CLOCK_THREAD_CPUTIME_ID;
	pthread_mutex_lock(&hp->lock);
	hp->op_kind = hp->prestaging ? HP_OP_PRESTAGE : kind;
	hp->linux_fresh = false;
	hp->op_clk = clk;
	hp->op_cpu0_ns = hp->op_cpu_last_ns = hp_cpu_ns(clk);
	hp->op_active = true;
	hp->op_cpu = cpu;
	hp->op_timeout_ms = timeout;
	hp->op_wait = hp->wait;
	hp->rep = rep;
	hp->op_start_ns = hp->op_last_ns = hp->op_host_last_ns = hv_now_ns();
	vmexit_timing(&hp->vm->exits, true);
	vmexit_read(&hp->vm->exits, &hp->op_exits0);
	pthread_mutex_unlock(&hp->lock);
	return 0;
}

/*
 * The exit that ended the operation (the guest's doorbell or eject) may
 * still be running on its vCPU thread, which woke this one: on a host
 * with fewer CPUs than threads this thread runs first.  Its time belongs
 * to the operation: let it finish (it takes no lock this thread holds;
 * bounded all the same).
 */
static void exits_settle(struct hotplug *hp)
{
	uint64_t end = hv_now_ns() + HP_EXIT_SETTLE_NS;

	while (!vmexit_settled(&hp->vm->exits) && hv_now_ns() < end)
		sched_yield();
}

/*
 * The operation's time, exits and own share, into its report (if any)
 * and its kind's sums; @cpu: this thread's CPU clock at its end.  Locked.
 */
static void op_account_locked(struct hotplug *hp, uint64_t cpu)
{
	struct hp_own_stats *k = &hp->own[hp->op_kind];
	uint64_t total = hv_now_ns() - hp->op_start_ns;
	struct vmexit_counts x;
	uint64_t own;

	vmexit_read(&hp->vm->exits, &x);
	vmexit_timing(&hp->vm->exits, false);
	vmexit_sub(&x, &hp->op_exits0);
	/* Summed over threads: exits handled beside it may add up past total. */
	own = hp_own_cap(cpu > hp->op_cpu0_ns ? cpu - hp->op_cpu0_ns : 0,
			 total) +
	      x.handled_ns;
	k->ops++;
	k->wall_ns += total;
	k->own_ns += own;
	k->exit_ns += x.handled_ns;
	k->exits += vmexit_total(&x);
	if (!hp->rep)
		return;
	hp->rep->total_ns = total;
	hp->rep->own_ns = own;
	hp->rep->exits = x;
}

/* ret: what the walk returned, the code of a reason a step wrote. */
void hp_op_end(struct hotplug *hp, int ret)
{
	uint64_t cpu;

	hp_snap_host(hp, hp->op_cpu);
	/* Read first: the wait for the exits is not the operation's work. */
	cpu = hp_cpu_ns(hp->op_clk);
	exits_settle(hp);
	pthread_mutex_lock(&hp->lock);
	if (hp->rep && ret && hv_err_is_set(&hp->rep->err))
		hp->rep->err.code = ret;
	op_account_locked(hp, cpu);
	hp->op_active = false;
	hp->rep = NULL;
	pthread_mutex_unlock(&hp->lock);
}

/*
 * A CPU a failed rollback left broken is refused until cpuhp-recover
 * (hotplug_cpu_recover()) has put its two sides back in line: walking it
 * from where it is would start from a state nobody can vouch for.
 */
int hp_op_check_broken(struct hotplug *hp, unsigned int cpu,
		       struct hp_report *rep)
{
	struct hp_slot *s;
	struct cpuhp_cpu c;
	bool guest;

	if (cpu >= hp->max_cpus)
		return 0; /* hp_op_begin() says why */
	s = &hp->slots[cpu];
	pthread_mutex_lock(&hp->table_lock);
	cpuhp_cpu_info(&hp->m, cpu, &c);
	pthread_mutex_unlock(&hp->table_lock);
	pthread_mutex_lock(&hp->lock);
	guest = s->guest_broken;
	if (s->disagree && !c.broken && !guest) {
		char why[sizeof(s->disagree_why)];

		memcpy(why, s->disagree_why, sizeof(why));
		pthread_mutex_unlock(&hp->lock);
		return hp_refuse(
			rep, cpu, -ENOTRECOVERABLE,
			"the host and the guest disagree about it (%s); "
			"cpuhp-recover it first",
			why);
	}
	pthread_mutex_unlock(&hp->lock);
	if (!c.broken && !guest)
		return 0;
	return hp_refuse(
		rep, cpu, -ENOTRECOVERABLE,
		"an earlier rollback failed on the %s side and left it "
		"broken at host state %d; cpuhp-recover it first",
		c.broken ? "host" : "guest", c.state);
}

bool hp_stopping(struct hotplug *hp)
{
	bool ret;

	pthread_mutex_lock(&hp->lock);
	ret = hp->stopping;
	pthread_mutex_unlock(&hp->lock);
	return ret;
}
