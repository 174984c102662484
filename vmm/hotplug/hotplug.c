// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hotplug controller: one cpuhp machine with the host table
 * (host_table.c) for every vCPU slot, the GED and the register block on
 * the MMIO bus, the mirror of the guest's table (hotplug_guest.c), and the
 * operations of hotplug.h.  Operations come one at a time from the control
 * thread and are synchronous; each one is recorded in a struct hp_report.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hotvm/guest_states.h"
#include "hooks.h"
#include "hotplug_internal.h"
#include "hotplug_vmm.h"
#include "hotvm/abi.h"
#include "log.h"
#include "qga.h"
#include "bus.h"
#include "vm.h"

/*
 * How long an operation waits for the guest to finish a walk it is still
 * doing on that CPU (the tail of a hot-add: ap:online-work to online)
 * before it is refused with -EBUSY.
 */
#define HP_BUSY_GRACE_MS 2000

/* --- the platform for the cpuhp library ---------------------------------- */

static void plat_lock(void *ctx)
{
	pthread_mutex_lock(&((struct hotplug *)ctx)->table_lock);
}

static void plat_unlock(void *ctx)
{
	pthread_mutex_unlock(&((struct hotplug *)ctx)->table_lock);
}

static void plat_log(void *ctx, enum cpuhp_log_level level, const char *fmt,
		     va_list ap)
{
	(void)ctx;
	if (level >= CPUHP_LOG_DEBUG)
		return;
	/* The library's messages end in a newline already. */
	fputs("hotvm: ", stderr);
	vfprintf(stderr, fmt, ap);
}

/*
 * Takes a fresh copy of @cpu's host table entry for queries.  table_lock
 * is recursive: a walk that notifies already holds it.
 */
static void snap_host_at(struct hotplug *hp, unsigned int cpu,
			 const struct cpuhp_notice *n)
{
	struct hp_slot *s = &hp->slots[cpu];
	struct cpuhp_cpu c;
	bool parked;

	pthread_mutex_lock(&hp->table_lock);
	cpuhp_cpu_info(&hp->m, cpu, &c);
	/* A step is notified before the library moves the CPU past it. */
	if (n && n->kind == CPUHP_NOTICE_STEP && !n->ret)
		c.state = n->bringup ? n->state : n->state - 1;
	parked = vcpu_is_parked(&s->vcpu);
	pthread_mutex_unlock(&hp->table_lock);
	pthread_mutex_lock(&hp->lock);
	s->host_view = c;
	s->parked_view = parked;
	pthread_mutex_unlock(&hp->lock);
}

static void snap_host(struct hotplug *hp, unsigned int cpu)
{
	snap_host_at(hp, cpu, NULL);
}

static void plat_notify(void *ctx, const struct cpuhp_notice *n)
{
	struct hotplug *hp = ctx;
	struct hp_events ev;
	uint64_t now = hp_now_ns();

	if (n->cpu < hp->max_cpus)
		snap_host_at(hp, n->cpu, n);
	pthread_mutex_lock(&hp->lock);
	hp_record_locked(hp, n->cpu, HP_SIDE_HOST, n, now);
	ev = hp->ev;
	pthread_mutex_unlock(&hp->lock);
	if (ev.state)
		ev.state(ev.ctx, HP_SIDE_HOST, n, now);
}

/* --- devices ------------------------------------------------------------- */

/* The register block's callbacks are the controller's from now on. */
static int attach_devices(struct hotplug *hp)
{
	if (!hp->mmio || !hp->ged || !hp->regs ||
	    hp->regs->max_cpus != hp->max_cpus)
		return -EINVAL;
	hpregs_attach(hp->regs, &hp_regs_ops, hp,
		      hp->guest_eject == HOTPLUG_GUEST_EJECT_DENY);
	hpring_attach(&hp->regs->ring, &hp_ring_ops, hp);
	return 0;
}

/* --- life cycle ---------------------------------------------------------- */

static int init_locks(struct hotplug *hp)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	int ret;

	pthread_mutexattr_init(&ma);
	/* The library's lock must be recursive (cpuhp.h). */
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	ret = pthread_mutex_init(&hp->table_lock, &ma);
	pthread_mutexattr_destroy(&ma);
	if (ret)
		return -ret;
	pthread_mutex_init(&hp->lock, NULL);
	pthread_mutex_init(&hp->agent_lock, NULL);
	pthread_condattr_init(&ca);
	/* Timeouts must not jump with the wall clock. */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&hp->cond, &ca);
	pthread_condattr_destroy(&ca);
	return 0;
}

/* A new operation: no reason left from the one before. */
static void op_err_clear(struct hp_report *rep)
{
	if (rep)
		hv_err_clear(&rep->err);
}

int hotplug_create(const struct hotplug_config *cfg, struct hotplug **out)
{
	struct hotplug *hp;
	int ret;

	if (!cfg->max_cpus || cfg->boot_cpus < 1 ||
	    cfg->boot_cpus > cfg->max_cpus || cfg->max_cpus > HPREGS_MAX_CPUS)
		return -EINVAL;
	hp = calloc(1, sizeof(*hp));
	if (!hp)
		return -ENOMEM;
	*hp = (struct hotplug){
		.vm = cfg->vm,
		.io = cfg->io,
		.mmio = cfg->mmio,
		.ged = cfg->ged,
		.regs = cfg->regs,
		.boot_cpus = cfg->boot_cpus,
		.max_cpus = cfg->max_cpus,
		.hooks = cfg->hooks,
		.prestage = cfg->prestage,
		.timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms
						  : HOTPLUG_DEFAULT_TIMEOUT_MS,
		.wait = cfg->wait == HOTPLUG_WAIT_STARTED
				? HOTPLUG_WAIT_STARTED
				: HOTPLUG_WAIT_ACKNOWLEDGED,
		.guest_eject = cfg->guest_eject,
		.agent = cfg->agent,
		.plat = {
			.lock = plat_lock,
			.unlock = plat_unlock,
			.log = plat_log,
			.notify = plat_notify,
			.ctx = hp,
		},
	};
	ret = init_locks(hp);
	if (ret) {
		free(hp);
		return ret;
	}
	hp->slots = calloc(cfg->max_cpus, sizeof(*hp->slots));
	hp->hcpus = calloc(cfg->max_cpus, sizeof(*hp->hcpus));
	hp->linux_slot = calloc(cfg->max_cpus, sizeof(*hp->linux_slot));
	hp->linux_miss = calloc(cfg->max_cpus, sizeof(*hp->linux_miss));
	if (!hp->slots || !hp->hcpus || !hp->linux_slot || !hp->linux_miss) {
		ret = -ENOMEM;
		goto fail;
	}
	for (unsigned int i = 0; i < cfg->max_cpus; i++)
		hp->slots[i] = (struct hp_slot){
			.vcpu = { .fd = -1, .id = i, .apic_id = i },
			.boot = i < cfg->boot_cpus,
			.coldplug = i < cfg->boot_cpus,
			.coldplug_state = HOST_ONLINE,
			.guest_target = CPUHP_INVALID,
			.fault_given = CPUHP_INVALID,
			.linux_cpu = -1,
			.linux_online = -1,
			.linux_fail = CPUHP_INVALID,
		};
	hp_host_table_init(hp);
	ret = cpuhp_init(&hp->m, &hp->plat, hp->steps, HOST_NR_STATES,
			 hp->hcpus, cfg->max_cpus);
	if (!ret)
		ret = hp_guest_mirror_init(hp);
	for (unsigned int i = 0; !ret && i < cfg->max_cpus; i++)
		snap_host(hp, i);
	if (!ret && cfg->linux_trace)
		ret = hp_lx_trace_init(hp);
	if (!ret)
		ret = attach_devices(hp);
	if (ret)
		goto fail;
	*out = hp;
	return 0;
fail:
	pr_err("cannot set up CPU hotplug: %s", strerror(-ret));
	hotplug_destroy(hp);
	return ret;
}

static int host_state(struct hotplug *hp, unsigned int cpu);

void hotplug_set_entry(struct hotplug *hp, enum hotplug_boot_mode mode,
		       uint64_t entry, uint64_t start_info)
{
	hp->boot_mode = mode;
	hp->entry = entry;
	hp->start_info = start_info;
}

bool hotplug_present_at_boot(struct hotplug *hp, unsigned int cpu)
{
	return cpu < hp->max_cpus && hp->slots[cpu].coldplug;
}

int hotplug_boot(struct hotplug *hp)
{
	int ret = hp_op_enter(hp, true);

	hp->booting = true;
	/* After a reset: hooks run but cannot veto (docs/design.md §9). */
	hp->forced = hp->started;
	/* CPU 0 last: when it starts the guest, its APs' vCPUs exist. */
	for (unsigned int i = hp->max_cpus; i-- > 0 && !ret;) {
		if (!hp->slots[i].coldplug)
			continue;
		ret = cpuhp_cpu_up(&hp->m, i, hp->slots[i].coldplug_state);
		if (ret)
			pr_err("boot vCPU %u did not come up: %s", i,
			       strerror(-ret));
	}
	hp->booting = false;
	hp->forced = false;
	pthread_mutex_lock(&hp->lock);
	hp->running = !ret;
	hp->started |= !ret;
	hp->resetting = false;
	pthread_mutex_unlock(&hp->lock);
	hp_op_exit(hp);
	if (!ret)
		hp_prestage_fill(hp);
	return ret;
}

void hotplug_reset_begin(struct hotplug *hp)
{
	pthread_mutex_lock(&hp->lock);
	hp->running = false;
	hp->resetting = true;
	pthread_cond_broadcast(&hp->cond);
	pthread_mutex_unlock(&hp->lock);
}

/* What the guest said of every CPU is void once it is gone. */
static void forget_guest(struct hotplug *hp)
{
	hpregs_reset(hp->regs);
	ged_reset(hp->ged);
	pthread_mutex_lock(&hp->lock);
	hp_guest_mirror_reset(hp);
	for (unsigned int i = 0; i < hp->max_cpus; i++) {
		struct hp_slot *s = &hp->slots[i];

		s->guest_walking = s->guest_joining = s->guest_broken = false;
		s->guest_target = s->fault_given = CPUHP_INVALID;
		s->guest_recover = s->eject_pending = false;
		s->reinsert_pending = false;
		/* A new boot: both sides start from the same tables. */
		s->disagree = false;
		s->disagree_why[0] = 0;
		s->w = (struct hp_wait_flags){ 0 };
	}
	hp->eject_work = false;
	pthread_mutex_unlock(&hp->lock);
}

/*
 * One CPU down to offline, whatever a hook says (a reset, the guest's own
 * eject); false if it would not.
 */
static bool force_down(struct hotplug *hp, unsigned int cpu)
{
	struct cpuhp_cpu c;
	int ret = 0;

	pthread_mutex_lock(&hp->table_lock);
	cpuhp_cpu_info(&hp->m, cpu, &c);
	if (c.broken)
		cpuhp_clear_broken(&hp->m, cpu);
	/*
	 * A fault injected for the next operation is a veto as a hook's exit
	 * is, and this walk takes none: left armed, it would fail the walk
	 * and roll the CPU back up after the guest let it go.
	 */
	if (c.fail != CPUHP_INVALID) {
		pr_err("CPU %u: the fault injected at host state %d is "
		       "dropped: "
		       "this walk cannot fail",
		       cpu, c.fail);
		cpuhp_set_fail(&hp->m, cpu, CPUHP_INVALID);
	}
	if (c.state != HOST_OFFLINE)
		ret = cpuhp_cpu_down(&hp->m, cpu, HOST_OFFLINE);
	pthread_mutex_unlock(&hp->table_lock);
	hp_set_batched(hp, cpu, false);
	hp_set_prestaged(hp, cpu, false);
	if (ret)
		pr_err("CPU %u: its host table did not walk down (%s); its "
		       "vCPU is stopped all the same",
		       cpu, strerror(-ret));
	return !ret;
}

void hotplug_unboot(struct hotplug *hp)
{
	if (!hp || !hp->slots)
		return;
	hp_op_enter(hp, true);
	pthread_mutex_lock(&hp->lock);
	hp->running = false;
	pthread_mutex_unlock(&hp->lock);
	/* Kick them all first, so they stop in parallel; the walk joins. */
	for (unsigned int i = 0; i < hp->max_cpus; i++) {
		atomic_store(&hp->slots[i].vcpu.stop, true);
		vcpu_kick(&hp->slots[i].vcpu);
	}
	hp->forced = true;
	for (unsigned int i = 0; i < hp->max_cpus; i++) {
		struct hp_slot *s = &hp->slots[i];
		int state = host_state(hp, i);

		/* What the guest had, it finds again after a reset. */
		s->coldplug = state >= HOST_AP_STARTING;
		s->coldplug_state = state;
		force_down(hp, i);
		vcpu_stop(&s->vcpu);
		snap_host(hp, i);
	}
	hp->forced = false;
	forget_guest(hp);
	hp_linux_forget(hp);
	hp_lx_trace_forget(hp);
	hp_op_exit(hp);
}

void hotplug_shutdown(struct hotplug *hp)
{
	if (!hp)
		return;
	pthread_mutex_lock(&hp->lock);
	hp->stopping = true;
	pthread_cond_broadcast(&hp->cond);
	pthread_mutex_unlock(&hp->lock);
	hooks_cancel(hp->hooks); /* a hook running now stops at once */
	if (hp->agent)
		qga_cancel(hp->agent); /* so does a call to the guest agent */
}

static void stop_vcpus(struct hotplug *hp)
{
	if (!hp || !hp->slots)
		return;
	/* Kick them all first, so they stop in parallel, then join. */
	for (unsigned int i = 0; i < hp->max_cpus; i++) {
		atomic_store(&hp->slots[i].vcpu.stop, true);
		vcpu_kick(&hp->slots[i].vcpu);
	}
	for (unsigned int i = 0; i < hp->max_cpus; i++)
		vcpu_join(&hp->slots[i].vcpu);
}

void hotplug_destroy(struct hotplug *hp)
{
	if (!hp)
		return;
	hotplug_agent_watch_stop(hp);
	if (hp->slots) {
		stop_vcpus(hp);
		for (unsigned int i = 0; i < hp->max_cpus; i++)
			if (hp->slots[i].vcpu.vm)
				vcpu_destroy(&hp->slots[i].vcpu);
	}
	if (hp->regs) {
		hpregs_attach(hp->regs, NULL, NULL, false);
		hpring_attach(&hp->regs->ring, NULL, NULL);
	}
	pthread_cond_destroy(&hp->cond);
	pthread_mutex_destroy(&hp->lock);
	pthread_mutex_destroy(&hp->agent_lock);
	pthread_mutex_destroy(&hp->table_lock);
	hp_lx_trace_destroy(hp);
	free(hp->linux_slot);
	free(hp->linux_miss);
	free(hp->slots);
	free(hp->hcpus);
	free(hp->guest_cpus);
	free(hp);
}

/* --- operations ---------------------------------------------------------- */

void hotplug_set_events(struct hotplug *hp, const struct hp_events *ev)
{
	pthread_mutex_lock(&hp->lock);
	hp->ev = ev ? *ev : (struct hp_events){ 0 };
	pthread_mutex_unlock(&hp->lock);
}

unsigned int hotplug_max_cpus(const struct hotplug *hp)
{
	return hp->max_cpus;
}

int hotplug_cpu_view(struct hotplug *hp, unsigned int cpu,
		     struct hp_cpu_view *v)
{
	struct hp_slot *s;

	if (cpu >= hp->max_cpus)
		return -EINVAL;
	/* The guest's latest states, which its ring may still hold. */
	hpregs_ring_drain(hp->regs);
	s = &hp->slots[cpu];
	*v = (struct hp_cpu_view){
		.cpu = cpu,
		.apic_id = cpu,
		.boot = s->boot,
		.present = hpregs_is_enabled(hp->regs, cpu),
	};
	/*
	 * A walk holds table_lock for as long as the guest takes: a query
	 * then reads the copy its last step left instead of waiting.
	 */
	if (!pthread_mutex_trylock(&hp->table_lock)) {
		snap_host(hp, cpu);
		pthread_mutex_unlock(&hp->table_lock);
	}
	v->host_tid = vcpu_tid(&s->vcpu);
	pthread_mutex_lock(&hp->lock);
	v->host = s->host_view;
	v->parked = s->parked_view;
	memcpy(v->id, s->id, sizeof(v->id));
	v->guest_state = hp_guest_state_locked(hp, cpu);
	v->guest_fault = hp_guest_fault_locked(hp, cpu);
	v->guest_target = s->guest_target;
	v->guest_broken = s->guest_broken;
	v->guest_reports = hp->guest_ext;
	v->stage = s->stage;
	v->linux_cpu = s->linux_cpu;
	v->linux_online = s->linux_online;
	v->prestaged = s->prestaged && v->host.state == HOST_VCPU_CREATE &&
		       !v->present;
	v->disagree = s->disagree || s->lied;
	v->guest_lied = s->lied && !s->disagree;
	memcpy(v->disagree_why, s->disagree ? s->disagree_why : s->lie_why,
	       sizeof(v->disagree_why));
	pthread_mutex_unlock(&hp->lock);
	v->linux_state = hp_lx_trace_state(hp, cpu);
	return 0;
}

bool hotplug_cpu_plugged(const struct hp_cpu_view *v)
{
	return v->host.state != HOST_OFFLINE && !v->prestaged;
}

bool hotplug_cpu_counted(const struct hp_cpu_view *v)
{
	return v->host.state == HOST_ONLINE && !v->host.broken &&
	       !v->guest_broken && (!v->disagree || v->guest_lied) &&
	       (!v->guest_reports || v->guest_state == GUEST_ONLINE) &&
	       v->linux_online != 0; /* the guest agent's word, if any */
}

/* The host table, or the mirror of the guest's: the same questions. */
static const struct cpuhp_machine *table(const struct hotplug *hp,
					 enum hp_side side)
{
	return side == HP_SIDE_HOST ? &hp->m : &hp->guest_m;
}

int hotplug_nr_states(const struct hotplug *hp, enum hp_side side)
{
	return (int)table(hp, side)->nr_states;
}

int hotplug_state_info(struct hotplug *hp, enum hp_side side, int state,
		       struct cpuhp_state_info *info)
{
	return cpuhp_state_info(table(hp, side), state, info);
}

int hotplug_state_lookup(struct hotplug *hp, enum hp_side side,
			 const char *name)
{
	int n = hotplug_nr_states(hp, side);
	char *end;
	long v;

	if (!name || !*name)
		return -ENOENT;
	if (*name >= '0' && *name <= '9') {
		v = strtol(name, &end, 10);
		return !*end && v < n ? (int)v : -ENOENT;
	}
	return cpuhp_state_by_name(table(hp, side), name);
}

/*
 * A late guest may still be walking this CPU (the end of a hot-add, or a
 * walk that outlived its timeout): give it a moment, then refuse.
 */
static int wait_guest_idle(struct hotplug *hp, unsigned int cpu, int timeout,
			   struct hp_report *rep)
{
	struct hp_slot *s = &hp->slots[cpu];
	uint64_t end = hp_now_ns() + (uint64_t)(timeout < HP_BUSY_GRACE_MS
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

static int op_begin(struct hotplug *hp, unsigned int cpu, int timeout_ms,
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
	hp->op_clk = clk;
	hp->op_cpu0_ns = hp->op_cpu_last_ns = hp_cpu_ns(clk);
	hp->op_active = true;
	hp->op_cpu = cpu;
	hp->op_timeout_ms = timeout;
	hp->op_wait = hp->wait;
	hp->rep = rep;
	hp->op_start_ns = hp->op_last_ns = hp->op_host_last_ns = hp_now_ns();
	vmexit_timing(&hp->vm->exits, true);
	vmexit_read(&hp->vm->exits, &hp->op_exits0);
	pthread_mutex_unlock(&hp->lock);
	return 0;
}

/* How long an operation's end waits for the exit that woke it. */
#define HP_EXIT_SETTLE_NS 10000000ull

/*
 * The exit that ended the operation (the guest's doorbell or eject) may
 * still be running on its vCPU thread, which woke this one: on a host
 * with fewer CPUs than threads this thread runs first.  Its time belongs
 * to the operation: let it finish (it takes no lock this thread holds;
 * bounded all the same).
 */
static void exits_settle(struct hotplug *hp)
{
	uint64_t end = hp_now_ns() + HP_EXIT_SETTLE_NS;

	while (!vmexit_settled(&hp->vm->exits) && hp_now_ns() < end)
		sched_yield();
}

/*
 * The operation's time, exits and own share, into its report (if any)
 * and its kind's sums; @cpu: this thread's CPU clock at its end.  Locked.
 */
static void op_account_locked(struct hotplug *hp, uint64_t cpu)
{
	struct hp_own_stats *k = &hp->own[hp->op_kind];
	uint64_t total = hp_now_ns() - hp->op_start_ns;
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
static void op_end(struct hotplug *hp, int ret)
{
	uint64_t cpu;

	snap_host(hp, hp->op_cpu);
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

void hotplug_own_stats(struct hotplug *hp, struct hp_own_stats out[HP_OP_KINDS])
{
	pthread_mutex_lock(&hp->lock);
	memcpy(out, hp->own, sizeof(hp->own));
	pthread_mutex_unlock(&hp->lock);
}

static int host_state(struct hotplug *hp, unsigned int cpu)
{
	struct cpuhp_cpu c;

	pthread_mutex_lock(&hp->table_lock);
	cpuhp_cpu_info(&hp->m, cpu, &c);
	pthread_mutex_unlock(&hp->table_lock);
	return c.state;
}

/*
 * A CPU a failed rollback left broken is refused until cpuhp-recover
 * (hotplug_cpu_recover()) has put its two sides back in line: walking it
 * from where it is would start from a state nobody can vouch for.
 */
static int check_broken(struct hotplug *hp, unsigned int cpu,
			struct hp_report *rep)
{
	struct hp_slot *s;
	struct cpuhp_cpu c;
	bool guest;

	if (cpu >= hp->max_cpus)
		return 0; /* op_begin() says why */
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

static void set_id(struct hotplug *hp, unsigned int cpu, const char *id)
{
	struct hp_slot *s = &hp->slots[cpu];

	pthread_mutex_lock(&hp->lock);
	snprintf(s->id, sizeof(s->id), "%s", id ? id : "");
	pthread_mutex_unlock(&hp->lock);
}

static bool stopping(struct hotplug *hp)
{
	bool ret;

	pthread_mutex_lock(&hp->lock);
	ret = hp->stopping;
	pthread_mutex_unlock(&hp->lock);
	return ret;
}

static int cpu_add(struct hotplug *hp, unsigned int cpu, const char *id,
		   int timeout_ms, enum hotplug_wait wait,
		   struct hp_report *rep)
{
	char prev[sizeof(hp->slots[0].id)];
	int ret;

	op_err_clear(rep);
	if (stopping(hp))
		return hv_err_set(rep ? &rep->err : NULL, -ESHUTDOWN,
				  "the VM is shutting down");
	if (cpu < hp->max_cpus && host_state(hp, cpu) == HOST_ONLINE)
		return -EEXIST;
	ret = check_broken(hp, cpu, rep);
	if (!ret)
		ret = op_begin(hp, cpu, timeout_ms, rep, HP_OP_ADD);
	if (ret)
		return ret;
	pthread_mutex_lock(&hp->lock);
	hp->op_wait = wait == HOTPLUG_WAIT_DEFAULT ? hp->wait : wait;
	memcpy(prev, hp->slots[cpu].id, sizeof(prev));
	pthread_mutex_unlock(&hp->lock);
	/* A partly-up CPU keeps the id it was added with, unless given one. */
	if (id || host_state(hp, cpu) == HOST_OFFLINE)
		set_id(hp, cpu, id);
	ret = cpuhp_cpu_up(&hp->m, cpu, HOST_ONLINE);
	op_end(hp, ret);
	/* Rolled back to where it was: so is its id (none if offline). */
	if (ret)
		set_id(hp, cpu,
		       host_state(hp, cpu) == HOST_OFFLINE ? NULL : prev);
	if (!ret && hp->slots[cpu].prestaged) {
		hp_set_prestaged(hp, cpu, false); /* taken from the pool */
		hp_prestage_fill(hp);
	}
	return ret;
}

/* The end of a removal: the id goes, with QEMU's DEVICE_DELETED. */
static void deleted(struct hotplug *hp, unsigned int cpu)
{
	char id[sizeof(hp->slots[0].id)];
	struct hp_events ev;

	pthread_mutex_lock(&hp->lock);
	memcpy(id, hp->slots[cpu].id, sizeof(id));
	hp->slots[cpu].id[0] = 0;
	ev = hp->ev;
	pthread_mutex_unlock(&hp->lock);
	if (ev.deleted)
		ev.deleted(ev.ctx, cpu, id);
}

static int cpu_remove(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		      struct hp_report *rep)
{
	int ret;

	op_err_clear(rep);
	if (!guest_cpu_removable(cpu))
		return hp_refuse(rep, cpu, -EPERM,
				 "it is the boot CPU and cannot be removed");
	if (stopping(hp))
		return hv_err_set(rep ? &rep->err : NULL, -ESHUTDOWN,
				  "the VM is shutting down");
	if (cpu < hp->max_cpus && host_state(hp, cpu) == HOST_OFFLINE)
		return -ENODEV;
	ret = check_broken(hp, cpu, rep);
	if (!ret)
		ret = op_begin(hp, cpu, timeout_ms, rep, HP_OP_REMOVE);
	if (ret)
		return ret;
	ret = cpuhp_cpu_down(&hp->m, cpu, HOST_OFFLINE);
	op_end(hp, ret);
	if (ret)
		return ret;
	hp_set_prestaged(hp, cpu, false);
	deleted(hp, cpu);
	hp_prestage_fill(hp); /* a pool slot may have gone to a batch */
	return 0;
}

static int guest_done(const struct hp_slot *s)
{
	if (!s->w.done)
		return 0;
	return s->w.failed ? -EIO : 1;
}

static int guest_set_target(struct hotplug *hp, unsigned int cpu, int state,
			    bool recover)
{
	struct hp_slot *s = &hp->slots[cpu];
	int ret;

	pthread_mutex_lock(&hp->lock);
	s->w = (struct hp_wait_flags){ 0 };
	s->asked |= HP_ASK_TARGET; /* its reports are believed from now on */
	s->guest_target = state;
	s->guest_recover = recover;
	pthread_mutex_unlock(&hp->lock);
	hpregs_ring_hint(hp->regs, HPRING_TARGET, cpu);
	ret = ged_raise(hp->ged, ABI_GED_EVT_GUEST);
	pthread_mutex_lock(&hp->lock);
	if (!ret)
		ret = hp_wait_locked(hp, s, guest_done, hp->op_timeout_ms);
	if (ret < 0)
		s->guest_target = CPUHP_INVALID; /* not taken: withdrawn */
	pthread_mutex_unlock(&hp->lock);
	if (ret == -ETIMEDOUT)
		hp_fail(hp, cpu,
			"the guest did not walk to state %d within %d ms; is "
			"its hotplug driver running?",
			state, hp->op_timeout_ms);
	else if (ret == -EIO)
		hp_fail(hp, cpu,
			"the guest failed to reach state %d and rolled back; "
			"see the guest's console",
			state);
	return ret < 0 ? ret : 0;
}

/*
 * Guest-side targets and faults travel through hotvm's extension commands:
 * a guest that never used them (Linux) would never pick them up.  The tiny
 * guest says it uses them as its hotplug driver starts, before its "ready"
 * line, so a refusal cannot tell "never" from "not yet": it says both.
 */
static bool guest_reports(struct hotplug *hp, unsigned int cpu,
			  struct hp_report *rep)
{
	bool r;

	pthread_mutex_lock(&hp->lock);
	r = hp->guest_ext;
	pthread_mutex_unlock(&hp->lock);
	if (!r)
		hp_refuse(rep, cpu, -EOPNOTSUPP,
			  "the guest has not said that it reports its hotplug "
			  "states: hotvm's tiny guest says so before its "
			  "'ready' line (not with ignore-hotplug), Linux "
			  "never; guest-side targets and faults need a guest "
			  "that reports");
	return r;
}

static int set_target(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		      int state, int timeout_ms, struct hp_report *rep)
{
	int ret, cur;

	op_err_clear(rep);
	if (stopping(hp))
		return hv_err_set(rep ? &rep->err : NULL, -ESHUTDOWN,
				  "the VM is shutting down");
	if (cpu >= hp->max_cpus)
		return -EINVAL;
	cur = host_state(hp, cpu);
	if (side == HP_SIDE_GUEST) {
		if (!cpuhp_target_valid(&hp->guest_m, state))
			return -EINVAL;
		if (!guest_reports(hp, cpu, rep))
			return -EOPNOTSUPP;
		if (!guest_cpu_removable(cpu) && state != GUEST_ONLINE)
			return hp_refuse(rep, cpu, -EPERM,
					 "it is the guest's boot CPU: it stays "
					 "%s",
					 hp->guest_steps[GUEST_ONLINE].name);
		/* The guest never walks its boot CPU: nothing to ask. */
		if (!guest_cpu_removable(cpu)) {
			if (rep)
				memset(rep, 0, sizeof(*rep));
			return 0;
		}
		if (cur < HOST_AP_STARTING)
			return hp_refuse(rep, cpu, -ENODEV,
					 "the guest does not have it yet (host "
					 "state %d); bring the host side to %s "
					 "first",
					 cur,
					 HOST_STATE_NAME(HOST_AP_STARTING));
	} else if (!guest_cpu_removable(cpu) && state != HOST_ONLINE) {
		return hp_refuse(rep, cpu, -EPERM,
				 "it is the boot CPU and cannot be taken down");
	}
	ret = check_broken(hp, cpu, rep);
	if (!ret)
		ret = op_begin(hp, cpu, timeout_ms, rep, HP_OP_TARGET);
	if (ret)
		return ret;
	if (side == HP_SIDE_GUEST)
		ret = guest_set_target(hp, cpu, state, false);
	else
		ret = cpuhp_set_target(&hp->m, cpu, state);
	op_end(hp, ret);
	return ret;
}

/* Whether the guest holds @cpu as far as it lets the host see. */
static bool guest_holds(struct hotplug *hp, unsigned int cpu)
{
	struct hp_slot *s = &hp->slots[cpu];
	bool r;

	if (!hpregs_is_enabled(hp->regs, cpu))
		return false;
	pthread_mutex_lock(&hp->lock);
	r = hp->guest_ext ? hp_guest_state_locked(hp, cpu) == GUEST_ONLINE
			  : s->stage == HP_STAGE_ACKNOWLEDGED ||
				    s->stage == HP_STAGE_STARTED;
	pthread_mutex_unlock(&hp->lock);
	return r;
}

/* cpuhp-recover put both sides in line: the mark goes, with an event. */
static void agree_again(struct hotplug *hp, unsigned int cpu)
{
	struct hp_slot *s = &hp->slots[cpu];
	char id[sizeof(s->id)];
	struct hp_events ev;
	bool was;

	pthread_mutex_lock(&hp->lock);
	was = s->disagree || s->lied;
	s->disagree = s->lied = false;
	s->disagree_why[0] = s->lie_why[0] = 0;
	memcpy(id, s->id, sizeof(id));
	ev = hp->ev;
	pthread_mutex_unlock(&hp->lock);
	if (was && ev.agreement)
		ev.agreement(ev.ctx, cpu, id, true, "");
}

/* Only the guest's false word marks @cpu (agree.c): nothing to walk. */
static bool only_lied(struct hotplug *hp, unsigned int cpu)
{
	bool r;

	pthread_mutex_lock(&hp->lock);
	r = hp->slots[cpu].lied && !hp->slots[cpu].disagree;
	pthread_mutex_unlock(&hp->lock);
	return r;
}

/*
 * A failed hot-add whose eject timed out parks the vCPU even if the guest
 * had started it (the host cannot wait for ever), so the guest may still
 * hold or be walking a CPU whose vCPU does not run, and it can end or undo
 * that walk only on that vCPU.  Recovery lends it back as it was (no
 * reset, not watched for a start) for the guest's walk, and parks it
 * again.  Only for what the guest was believed about (the mirror, never a
 * refused report), and only a vCPU that ran before.
 */
static bool lend_vcpu(struct hotplug *hp, unsigned int cpu)
{
	struct hp_slot *s = &hp->slots[cpu];
	bool claimed;

	if (host_state(hp, cpu) >= HOST_VCPU_CREATE || !s->kvm_ready ||
	    !vcpu_is_parked(&s->vcpu))
		return false;
	pthread_mutex_lock(&hp->lock);
	claimed = hp->guest_ext &&
		  (s->guest_walking || s->guest_broken ||
		   hp_guest_state_locked(hp, cpu) != GUEST_OFFLINE);
	pthread_mutex_unlock(&hp->lock);
	if (!claimed)
		return false;
	atomic_store(&s->vcpu.unwatched, true);
	if (vcpu_start(&s->vcpu))
		return false;
	pr_err("CPU %u: its vCPU runs again, parked as the guest left it, "
	       "while the guest walks it down to recover it",
	       cpu);
	return true;
}

static void unlend_vcpu(struct hotplug *hp, unsigned int cpu, bool *lent)
{
	if (*lent)
		vcpu_park(&hp->slots[cpu].vcpu);
	*lent = false;
}

static int cpu_recover(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		       struct hp_report *rep, bool *online)
{
	struct hp_slot *s;
	bool gbroken, keep = false, lent;
	int ret, before;

	*online = false;
	op_err_clear(rep);
	if (stopping(hp))
		return hv_err_set(rep ? &rep->err : NULL, -ESHUTDOWN,
				  "the VM is shutting down");
	/*
	 * The guest's false word moved nothing (its report was refused):
	 * both sides are where the host holds them, only the mark goes.
	 */
	if (cpu < hp->max_cpus && only_lied(hp, cpu)) {
		agree_again(hp, cpu);
		*online = host_state(hp, cpu) == HOST_ONLINE;
		return 0;
	}
	if (!guest_cpu_removable(cpu))
		return hp_refuse(rep, cpu, -EPERM,
				 "it is the boot CPU: it is never walked, so "
				 "there is nothing to recover");
	lent = lend_vcpu(hp, cpu);
	ret = op_begin(hp, cpu, timeout_ms, rep, HP_OP_RECOVER);
	if (ret) {
		unlend_vcpu(hp, cpu, &lent);
		return ret;
	}
	s = &hp->slots[cpu];
	before = host_state(hp, cpu);
	pthread_mutex_lock(&hp->lock);
	/* Or it claims a CPU it is not shown: it takes it down too. */
	gbroken = s->guest_broken ||
		  (hp->guest_ext &&
		   hp_guest_state_locked(hp, cpu) != GUEST_OFFLINE &&
		   !hpregs_is_enabled(hp->regs, cpu));
	pthread_mutex_unlock(&hp->lock);
	if (gbroken) {
		/* The guest clears its own mark and takes the CPU down. */
		ret = guest_set_target(hp, cpu, GUEST_OFFLINE, true);
		if (ret) {
			/* guest_set_target() may have said why: context. */
			if (rep && hv_err_is_set(&rep->err))
				hv_err_prepend(&rep->err,
					       "the guest could not take it "
					       "offline to recover it: ");
			hp_fail(hp, cpu,
				"the guest could not take it offline to "
				"recover it (%s); see the guest's console",
				strerror(-ret));
			goto out;
		}
		pthread_mutex_lock(&hp->lock);
		s->guest_broken = false;
		pthread_mutex_unlock(&hp->lock);
	}
	unlend_vcpu(hp, cpu, &lent);
	keep = guest_holds(hp, cpu);
	*online = keep;
	pthread_mutex_lock(&hp->table_lock);
	ret = cpuhp_clear_broken(&hp->m, cpu);
	if (!ret)
		ret = keep ? cpuhp_cpu_up(&hp->m, cpu, HOST_ONLINE)
			   : cpuhp_cpu_down(&hp->m, cpu, HOST_OFFLINE);
	pthread_mutex_unlock(&hp->table_lock);
	/* Shown to the guest below guest:ap-starting: it never took it. */
	if (!ret && !keep && hpregs_is_enabled(hp->regs, cpu))
		hpregs_unplug_force(hp->regs, cpu);
out:
	unlend_vcpu(hp, cpu, &lent);
	op_end(hp, ret);
	if (!ret)
		agree_again(hp, cpu);
	/*
	 * Gone from both sides: a device goes as a removal ends, one that
	 * never was (a failed add, never shown to the guest, no id) quietly.
	 */
	if (ret || keep || before == HOST_OFFLINE ||
	    (before < HOST_AP_STARTING && !s->id[0]))
		return ret;
	/* Gone from both sides now: as a hot-remove ends. */
	deleted(hp, cpu);
	return 0;
}

int hotplug_inject(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		   int state, struct hp_report *rep)
{
	int ret;

	if (cpu >= hp->max_cpus)
		return -EINVAL;
	if (side == HP_SIDE_HOST) {
		ret = cpuhp_set_fail(&hp->m, cpu, state);

		snap_host(hp, cpu);
		return ret;
	}
	/* The mirror's rules say whether the guest's state can fail. */
	pthread_mutex_lock(&hp->lock);
	ret = cpuhp_set_fail(&hp->guest_m, cpu, state);
	pthread_mutex_unlock(&hp->lock);
	if (!ret && state != CPUHP_INVALID)
		hpregs_ring_hint(hp->regs, HPRING_FAULT, cpu);
	if (ret || guest_reports(hp, cpu, rep))
		return ret;
	pthread_mutex_lock(&hp->lock);
	cpuhp_set_fail(&hp->guest_m, cpu, CPUHP_INVALID);
	pthread_mutex_unlock(&hp->lock);
	return -EOPNOTSUPP;
}

void hotplug_device_stats(struct hotplug *hp, struct hpregs_stats *regs,
			  struct ged_stats *ged)
{
	hpregs_ring_drain(hp->regs);
	hpregs_stats(hp->regs, regs);
	ged_stats(hp->ged, ged);
	pthread_mutex_lock(&hp->lock);
	regs->refused_states = hp->refused_reports;
	pthread_mutex_unlock(&hp->lock);
}

/* --- the operations' entry points: one at a time (hp_op_enter()) -------- */

/*
 * A hot-add and a removal (alone, or as a burst's or resize's parts, which
 * open the window around the whole) are traced on Linux's side with the
 * guest agent: hp_lx_trace_begin() and _end() run outside the gate.
 */
int hotplug_cpu_add(struct hotplug *hp, unsigned int cpu, const char *id,
		    int timeout_ms, enum hotplug_wait wait,
		    struct hp_report *rep)
{
	bool traced = hp_lx_trace_begin(hp);
	int ret = hp_op_enter(hp, false);

	if (ret) {
		hp_lx_trace_end(hp, traced);
		return hv_err_set(rep ? &rep->err : NULL, ret,
				  "the VM is shutting down");
	}
	ret = cpu_add(hp, cpu, id, timeout_ms, wait, rep);
	hp_op_exit(hp);
	hp_lx_trace_end(hp, traced);
	return ret;
}

int hotplug_cpu_remove(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		       struct hp_report *rep)
{
	bool traced = hp_lx_trace_begin(hp);
	int ret = hp_op_enter(hp, false);

	if (ret) {
		hp_lx_trace_end(hp, traced);
		return hv_err_set(rep ? &rep->err : NULL, ret,
				  "the VM is shutting down");
	}
	ret = cpu_remove(hp, cpu, timeout_ms, rep);
	hp_op_exit(hp);
	hp_lx_trace_end(hp, traced);
	return ret;
}

int hotplug_set_target(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		       int state, int timeout_ms, struct hp_report *rep)
{
	int ret = hp_op_enter(hp, false);

	if (ret)
		return hv_err_set(rep ? &rep->err : NULL, ret,
				  "the VM is shutting down");
	ret = set_target(hp, cpu, side, state, timeout_ms, rep);
	hp_op_exit(hp);
	return ret;
}

int hotplug_cpu_recover(struct hotplug *hp, unsigned int cpu, int timeout_ms,
			struct hp_report *rep, bool *online)
{
	int ret = hp_op_enter(hp, false);

	*online = false;
	if (ret)
		return hv_err_set(rep ? &rep->err : NULL, ret,
				  "the VM is shutting down");
	ret = cpu_recover(hp, cpu, timeout_ms, rep, online);
	hp_op_exit(hp);
	return ret;
}

/*
 * The guest ejected @cpu by itself and the register block let it go: the
 * host table follows, as after a removal (the hooks run, in reverse; they
 * cannot veto what the guest has done), and the slot is free.
 */
static void guest_eject(struct hotplug *hp, unsigned int cpu)
{
	/* Gone already, or plugged again since: nothing to follow. */
	if (host_state(hp, cpu) == HOST_OFFLINE ||
	    hpregs_is_enabled(hp->regs, cpu))
		return;
	pr_err("CPU %u: the guest ejected it; its vCPU is removed", cpu);
	hp->forced = true;
	/*
	 * A walk that did not get down went back up (and presented the CPU
	 * again): the device is still there, so no DEVICE_DELETED, and the
	 * agreement check judges where it ended.
	 */
	if (force_down(hp, cpu))
		deleted(hp, cpu);
	hp->forced = false;
}

/*
 * --guest-eject deny kept a CPU the guest let go: its vCPU starts afresh
 * (same thread, so whatever placed it stays) and the guest is shown it
 * again, as a hot-add it acknowledges and starts.
 */
static void guest_reinsert(struct hotplug *hp, unsigned int cpu)
{
	struct hp_slot *s = &hp->slots[cpu];
	char id[sizeof(s->id)];
	struct hp_events ev;
	int ret;

	if (host_state(hp, cpu) < HOST_AP_STARTING)
		return;
	vcpu_pause(&s->vcpu);
	ret = vcpu_unpark(&s->vcpu, false);
	vcpu_resume(&s->vcpu);
	pthread_mutex_lock(&hp->lock);
	s->w.started = false;
	s->asked |= HP_ASK_UP; /* the guest takes it back: believed */
	hp_set_stage_locked(hp, cpu, HP_STAGE_PRESENTED, &ev, id, sizeof(id));
	pthread_mutex_unlock(&hp->lock);
	hp_stage_notify(&ev, cpu, id, HP_STAGE_PRESENTED);
	if (!ret)
		ret = hpregs_reinsert(hp->regs, cpu);
	if (!ret)
		ret = ged_raise(hp->ged, ABI_GED_EVT_CPU);
	if (ret)
		pr_err("CPU %u: cannot present it to the guest again: %s", cpu,
		       strerror(-ret));
}

void hotplug_guest_work(struct hotplug *hp)
{
	pthread_t self = pthread_self();

	pthread_mutex_lock(&hp->lock);
	/* Busy: the operation's end wakes the machine thread again. */
	if (!hp->eject_work || hp->op_depth || !hp->running || hp->stopping) {
		pthread_mutex_unlock(&hp->lock);
		return;
	}
	hp->eject_work = false;
	hp->op_owner = self;
	hp->op_depth = 1;
	pthread_mutex_unlock(&hp->lock);
	for (unsigned int cpu = 0; cpu < hp->max_cpus; cpu++) {
		bool pending, reinsert;

		pthread_mutex_lock(&hp->lock);
		pending = hp->slots[cpu].eject_pending;
		reinsert = hp->slots[cpu].reinsert_pending;
		hp->slots[cpu].eject_pending = false;
		hp->slots[cpu].reinsert_pending = false;
		pthread_mutex_unlock(&hp->lock);
		if (pending)
			guest_eject(hp, cpu);
		if (reinsert)
			guest_reinsert(hp, cpu);
	}
	hp_op_exit(hp);
}

int hotplug_power_button(struct hotplug *hp)
{
	return ged_raise(hp->ged, ABI_GED_EVT_PWRBTN);
}

bool hotplug_started(struct hotplug *hp)
{
	bool r;

	pthread_mutex_lock(&hp->lock);
	r = hp->started;
	pthread_mutex_unlock(&hp->lock);
	return r;
}
