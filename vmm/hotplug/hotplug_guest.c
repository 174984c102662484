// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's side of the wire, as the controller sees it: the register
 * block's callbacks (on vCPU threads) and the mirror of the guest's table
 * (a cpuhp machine made from guest_states.h).  Everything here comes
 * from an untrusted guest: values are checked, nothing blocks, and
 * nothing the guest says can make the host do more than wake a waiter or
 * update the mirror.  A state report is believed only for a CPU the host
 * asked the guest to walk, until that walk's DONE: a guest cannot move
 * the mirror of a CPU the host holds steady (and so hide a running CPU
 * from the counts); such a report is refused, counted, and weighed by
 * the agreement check (agree.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hotvm/guest_states.h"
#include "hotplug_internal.h"
#include "hotvm/abi.h"
#include "log.h"
#include "vm.h"

/* _OST status "ejection in progress": not a failure (ACPI 6.3, 6.3.5). */
#define OST_EJECT_IN_PROGRESS 0x84
#define OST_EVENT_INSERT      1
#define OST_EVENT_EJECT	      3
/* ACPI 6.3 table 6.197: OSPM's own eject request (Linux's sysfs eject). */
#define OST_EVENT_OSPM_EJECT 0x103

/*
 * The mirror's callbacks never run: the guest walks its own table and
 * reports each step.  They are there so that the mirror's states have
 * callbacks where the guest's have them, which is what the library's rules
 * (a fault needs a callback) look at.
 */
static int guest_step(unsigned int cpu, void *data)
{
	(void)cpu;
	(void)data;
	return 0;
}

/* The guest's own states have callbacks, except offline and free slots. */
#define MIRROR_HAS_CB(id, n) ((id) != GUEST_OFFLINE && (n))
#define MIRROR_STEP(id, n, f)                                                  \
	[id] = {                                                               \
		.name = n,                                                     \
		.startup = MIRROR_HAS_CB(id, n) ? guest_step : NULL,           \
		.teardown = MIRROR_HAS_CB(id, n) ? guest_step : NULL,          \
		.flags = f,                                                    \
	},

static const struct cpuhp_step mirror_steps[GUEST_NR_STATES] = {
	/* Every state of guest_states.h, in its order. */
	GUEST_STATES(MIRROR_STEP)
};

/* The guest brings up the CPUs present at boot, each by its own walk. */
static void expect_boot_locked(struct hotplug *hp)
{
	for (unsigned int cpu = 0; cpu < hp->max_cpus; cpu++) {
		struct hp_slot *s = &hp->slots[cpu];

		s->asked = s->coldplug && cpu != GUEST_BOOT_CPU ? HP_ASK_UP : 0;
		s->claimed = s->lied = false;
		s->lie_why[0] = 0;
	}
}

int hp_guest_mirror_init(struct hotplug *hp)
{
	int ret;

	memcpy(hp->guest_steps, mirror_steps, sizeof(mirror_steps));
	hp->guest_cpus = calloc(hp->max_cpus, sizeof(*hp->guest_cpus));
	if (!hp->guest_cpus)
		return -ENOMEM;
	ret = cpuhp_init(&hp->guest_m, NULL, hp->guest_steps, GUEST_NR_STATES,
			 hp->guest_cpus, hp->max_cpus);
	/* The guest starts on its boot CPU and never reports it. */
	if (!ret)
		ret = cpuhp_set_boot_state(&hp->guest_m, GUEST_BOOT_CPU,
					   GUEST_ONLINE);
	expect_boot_locked(hp);
	return ret;
}

void hp_guest_mirror_reset(struct hotplug *hp)
{
	memset(hp->guest_cpus, 0, hp->max_cpus * sizeof(*hp->guest_cpus));
	cpuhp_init(&hp->guest_m, NULL, hp->guest_steps, GUEST_NR_STATES,
		   hp->guest_cpus, hp->max_cpus);
	cpuhp_set_boot_state(&hp->guest_m, GUEST_BOOT_CPU, GUEST_ONLINE);
	hp->guest_ext = false;
	expect_boot_locked(hp);
}

/*
 * The guest has let @cpu go by itself (its own eject, honoured or
 * refused): its table has it offline, whatever it reported before.
 */
static void let_go_locked(struct hotplug *hp, struct hp_slot *s,
			  unsigned int cpu)
{
	cpuhp_set_boot_state(&hp->guest_m, cpu, GUEST_OFFLINE);
	s->guest_walking = s->claimed = false;
}

int hp_guest_state_locked(struct hotplug *hp, unsigned int cpu)
{
	struct cpuhp_cpu c;

	return cpuhp_cpu_info(&hp->guest_m, cpu, &c) ? GUEST_OFFLINE : c.state;
}

int hp_guest_fault_locked(struct hotplug *hp, unsigned int cpu)
{
	struct cpuhp_cpu c;

	return cpuhp_cpu_info(&hp->guest_m, cpu, &c) ? CPUHP_INVALID : c.fail;
}

const char *hp_ost_status_name(uint32_t status)
{
	/* ACPI 6.4 table 6.200, the codes for an eject request. */
	switch (status) {
	case 0x80:
		return "device ejection not supported by the OS";
	case 0x81:
		return "device in use by an application";
	case 0x82:
		return "device busy";
	case 0x83:
		return "ejection dependency is busy";
	case 0x84:
		return "ejection in progress";
	case 1:
		return "non-specific failure";
	default:
		return "failure";
	}
}

static struct hp_slot *slot_of(struct hotplug *hp, unsigned int cpu)
{
	return cpu < hp->max_cpus ? &hp->slots[cpu] : NULL;
}

/*
 * An eject the host asked for wakes the walk that waits for it.  One the
 * guest did on its own (or too late for the walk that asked, which has
 * given up) is the machine thread's to follow: hotplug_guest_work().
 */
static void on_eject(void *ctx, unsigned int cpu, bool asked)
{
	struct hotplug *hp = ctx;
	struct hp_slot *s = slot_of(hp, cpu);

	if (!s)
		return;
	pthread_mutex_lock(&hp->lock);
	s->w.ejected = true;
	if (!asked) {
		let_go_locked(hp, s, cpu);
		s->eject_pending = true;
		hp->eject_work = true;
	}
	pthread_cond_broadcast(&hp->cond);
	pthread_mutex_unlock(&hp->lock);
	if (!asked)
		vm_notify(hp->vm);
}

/*
 * --guest-eject deny refused an eject: the guest has let the CPU go (Linux
 * offlined and removed it before _EJ0) while the host keeps it.  The
 * machine thread starts it afresh and presents it again
 * (hotplug_guest_work()), so the guest takes it back as a new CPU.
 */
static void on_eject_denied(void *ctx, unsigned int cpu)
{
	struct hotplug *hp = ctx;
	struct hp_slot *s = slot_of(hp, cpu);

	if (!s)
		return;
	pr_err("CPU %u: the guest ejected it on its own; refused "
	       "(--guest-eject deny): it is presented to the guest again",
	       cpu);
	pthread_mutex_lock(&hp->lock);
	let_go_locked(hp, s, cpu);
	s->reinsert_pending = true;
	hp->eject_work = true;
	pthread_mutex_unlock(&hp->lock);
	vm_notify(hp->vm);
}

static void on_ost(void *ctx, unsigned int cpu, uint32_t event, uint32_t status)
{
	struct hotplug *hp = ctx;
	struct hp_slot *s = slot_of(hp, cpu);
	struct hp_events ev, sev = { 0 };
	char id[sizeof(s->id)], sid[sizeof(s->id)];
	int stage = -1;
	/* OSPM's own eject gets the same answers as one the host asked. */
	bool eject = event == OST_EVENT_EJECT || event == OST_EVENT_OSPM_EJECT;

	if (!s)
		return;
	pthread_mutex_lock(&hp->lock);
	/*
	 * A guest that speaks hotvm's extension is waited for by its own
	 * reports; _OST is what a real Linux gives instead.
	 */
	if (event == OST_EVENT_INSERT && status == 0 && !hp->guest_ext)
		s->w.ost_ok = true;
	if (event == OST_EVENT_INSERT && status == 0 &&
	    s->stage == HP_STAGE_PRESENTED)
		stage = HP_STAGE_ACKNOWLEDGED;
	if (eject && status == OST_EJECT_IN_PROGRESS &&
	    s->stage != HP_STAGE_ABSENT)
		stage = HP_STAGE_EJECTING;
	if (eject && status != 0 && status != OST_EJECT_IN_PROGRESS) {
		s->w.ost_fail = true;
		s->w.ost_status = status;
		if (s->stage == HP_STAGE_EJECTING)
			stage = s->w.started ? HP_STAGE_STARTED
					     : HP_STAGE_ACKNOWLEDGED;
	}
	if (stage >= 0)
		hp_set_stage_locked(hp, cpu, (enum hp_stage)stage, &sev, sid,
				    sizeof(sid));
	memcpy(id, s->id, sizeof(id));
	ev = hp->ev;
	pthread_cond_broadcast(&hp->cond);
	pthread_mutex_unlock(&hp->lock);
	if (ev.ost)
		ev.ost(ev.ctx, cpu, id, event, status);
	if (stage >= 0)
		hp_stage_notify(&sev, cpu, sid, (enum hp_stage)stage);
}

/*
 * The state whose callback ran: the report gives the state *after* the
 * step (unchanged when it failed), which is the step's own state going up
 * and the one below it going down.
 */
static int step_state(uint32_t v)
{
	int st = (int)(v & ABI_GUEST_STATE_MASK);
	bool up = v & ABI_GUEST_STATE_UP;

	if (v & ABI_GUEST_STATE_FAILED)
		return up ? st + 1 : st;
	return up ? st : st + 1;
}

/*
 * Whether @cpu's report is believed: the host asked the guest to walk it
 * and the walk has not ended, or the report changes nothing (a DONE at
 * the state the mirror has: how a guest says it reports, on its boot
 * CPU).  Else it is refused and counted, its state kept for the agreement
 * check.  Locked.
 */
static bool believed_locked(struct hotplug *hp, struct hp_slot *s,
			    unsigned int cpu, int st, bool done, bool failed,
			    bool *first)
{
	if (s->asked ||
	    (done && !failed && st == hp_guest_state_locked(hp, cpu)))
		return true;
	hp->refused_reports++;
	/* A state the mirror has already is no lie, only not believed. */
	if (st != hp_guest_state_locked(hp, cpu)) {
		*first = !s->claimed;
		s->claimed = true;
		s->claim = st;
	}
	return false;
}

/*
 * A believed report moves @s's walk: its end, or one step of it (a
 * rollback that broke, the fault handed over, the AP's work reached).
 * Whether the waiters want to know.  Locked.
 */
static bool follow_locked(struct hp_slot *s, struct cpuhp_notice *n, int st,
			  bool failed)
{
	if (n->kind == CPUHP_NOTICE_DONE) {
		/* The walk is over: the one of its direction, or a target's. */
		s->asked &= (uint8_t) ~(HP_ASK_TARGET |
					(n->bringup ? HP_ASK_UP : HP_ASK_DOWN));
		s->guest_walking = false;
		s->w.done = true;
		if (failed)
			s->w.failed = true;
		return true;
	}
	s->guest_walking = true;
	if (failed && n->rollback)
		s->guest_broken = true;
	if (failed && n->state == s->fault_given) {
		n->injected = true;
		n->ret = -EAGAIN;
		s->fault_given = CPUHP_INVALID;
	}
	if (n->bringup && !failed && st >= GUEST_AP_WORK && !s->w.reached) {
		s->w.reached = true;
		return true;
	}
	return false;
}

/*
 * One report, from the register block (now) or the ring (@ret and @at_ns
 * the guest's: its result and its time).
 */
static void guest_report(struct hotplug *hp, unsigned int cpu, uint32_t v,
			 int ret, uint64_t at_ns)
{
	struct hp_slot *s = slot_of(hp, cpu);
	int st = (int)(v & ABI_GUEST_STATE_MASK);
	bool done = v & ABI_GUEST_STATE_DONE;
	bool failed = v & ABI_GUEST_STATE_FAILED;
	struct cpuhp_notice n = {
		.kind = done ? CPUHP_NOTICE_DONE : CPUHP_NOTICE_STEP,
		.cpu = cpu,
		.state = done ? st : step_state(v),
		.bringup = v & ABI_GUEST_STATE_UP,
		.rollback = v & ABI_GUEST_STATE_ROLLBACK,
		.ret = failed ? (ret ? ret : -EIO) : 0,
	};
	struct hp_events ev;
	bool started, wake, first = false;

	/* A state the guest's table does not have: a confused guest. */
	if (!s || st >= GUEST_NR_STATES || n.state >= GUEST_NR_STATES)
		return;
	pthread_mutex_lock(&hp->lock);
	if (!believed_locked(hp, s, cpu, st, done, failed, &first)) {
		pthread_mutex_unlock(&hp->lock);
		if (first) /* once until the agreement check weighs it */
			pr_err("CPU %u: the guest reports it at %s, but the "
			       "host did not ask it to move: refused",
			       cpu, hp->guest_steps[st].name);
		return;
	}
	/*
	 * The AP ran its own states: the guest started it (what the vCPU's
	 * start watch sees otherwise; a ring guest's vCPUs go unwatched).
	 */
	started = !done && n.bringup && !failed && st >= GUEST_AP_LAPIC &&
		  !s->w.started;
	hp->guest_ext = true;
	cpuhp_set_boot_state(&hp->guest_m, cpu, st);
	wake = follow_locked(s, &n, st, failed);
	hp_record_locked(hp, cpu, HP_SIDE_GUEST, &n, at_ns);
	ev = hp->ev;
	/*
	 * Waiters want the walk's end (w.done, guest_walking) or the AP's
	 * work reached (w.reached): only those wake them.  A broadcast per
	 * step woke the operation thread a dozen times a hot-add, each a
	 * system call here and a wake, check and sleep there, in hotvm's own
	 * share (docs/design.md §14).
	 */
	if (wake)
		pthread_cond_broadcast(&hp->cond);
	pthread_mutex_unlock(&hp->lock);
	if (started)
		hp_vcpu_started(hp, cpu);
	if (ev.state)
		ev.state(ev.ctx, HP_SIDE_GUEST, &n, at_ns);
}

static void on_guest_state(void *ctx, unsigned int cpu, uint32_t v)
{
	guest_report(ctx, cpu, v, 0, hv_now_ns());
}

static void on_ring_entry(void *ctx, unsigned int cpu, uint32_t v, int ret,
			  uint64_t at_ns)
{
	guest_report(ctx, cpu, v, ret, at_ns);
}

const struct hpring_ops hp_ring_ops = {
	.entry = on_ring_entry,
};

/* Both one-shot: taken under the lock, so a fault is handed over once. */
static uint32_t on_guest_fault(void *ctx, unsigned int cpu)
{
	struct hotplug *hp = ctx;
	struct hp_slot *s = slot_of(hp, cpu);
	int f;

	if (!s)
		return 0;
	pthread_mutex_lock(&hp->lock);
	f = hp_guest_fault_locked(hp, cpu);
	cpuhp_set_fail(&hp->guest_m, cpu, CPUHP_INVALID);
	if (f != CPUHP_INVALID)
		s->fault_given = f;
	pthread_mutex_unlock(&hp->lock);
	return f == CPUHP_INVALID ? 0 : (uint32_t)f + 1;
}

static uint32_t on_guest_target(void *ctx, unsigned int cpu)
{
	struct hotplug *hp = ctx;
	struct hp_slot *s = slot_of(hp, cpu);
	bool r;
	int t;

	if (!s)
		return 0;
	pthread_mutex_lock(&hp->lock);
	t = s->guest_target;
	r = s->guest_recover;
	s->guest_target = CPUHP_INVALID;
	s->guest_recover = false;
	pthread_mutex_unlock(&hp->lock);
	if (t == CPUHP_INVALID)
		return 0;
	return ((uint32_t)t + 1) | (r ? ABI_GUEST_TARGET_RECOVER : 0);
}

const struct hpregs_ops hp_regs_ops = {
	.eject = on_eject,
	.eject_denied = on_eject_denied,
	.ost = on_ost,
	.guest_state = on_guest_state,
	.guest_fault = on_guest_fault,
	.guest_target = on_guest_target,
};
