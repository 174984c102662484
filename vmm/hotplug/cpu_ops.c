// SPDX-License-Identifier: GPL-2.0-only
/*
 * The single-CPU operations, run inside the operation gate (op.c) by
 * their entry points (entry.c), a batch's or a resize's, and the pool's
 * fill (prestage.c): a hot-add, a removal, a walk to a named state on
 * either side, cpuhp-recover, and the walk down a reset or the guest's
 * own eject forces; and a fault armed for a CPU's next walk
 * (docs/design.md §8).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hotplug_internal.h"
#include "hotvm/abi.h"
#include "log.h"

static void set_id(struct hotplug *hp, unsigned int cpu, const char *id)
{
	struct hp_slot *s = &hp->slots[cpu];

	pthread_mutex_lock(&hp->lock);
	snprintf(s->id, sizeof(s->id), "%s", id ? id : "");
	pthread_mutex_unlock(&hp->lock);
}

int hp_cpu_add(struct hotplug *hp, unsigned int cpu, const char *id,
	       int timeout_ms, enum hotplug_wait wait, struct hp_report *rep)
{
	char prev[sizeof(hp->slots[0].id)];
	int ret;

	hp_op_err_clear(rep);
	if (hp_stopping(hp))
		return hv_err_set(rep ? &rep->err : NULL, -ESHUTDOWN,
				  "the VM is shutting down");
	if (cpu < hp->max_cpus && hp_host_state(hp, cpu) == HOST_ONLINE)
		return -EEXIST;
	ret = hp_op_check_broken(hp, cpu, rep);
	if (!ret)
		ret = hp_op_begin(hp, cpu, timeout_ms, rep, HP_OP_ADD);
	if (ret)
		return ret;
	pthread_mutex_lock(&hp->lock);
	hp->op_wait = wait == HOTPLUG_WAIT_DEFAULT ? hp->wait : wait;
	memcpy(prev, hp->slots[cpu].id, sizeof(prev));
	pthread_mutex_unlock(&hp->lock);
	/* A partly-up CPU keeps the id it was added with, unless given one. */
	if (id || hp_host_state(hp, cpu) == HOST_OFFLINE)
		set_id(hp, cpu, id);
	ret = cpuhp_cpu_up(&hp->m, cpu, HOST_ONLINE);
	hp_op_end(hp, ret);
	/* Rolled back to where it was: so is its id (none if offline). */
	if (ret)
		set_id(hp, cpu,
		       hp_host_state(hp, cpu) == HOST_OFFLINE ? NULL : prev);
	return ret;
}

/* The end of a removal: the id goes, with QEMU's DEVICE_DELETED. */
void hp_deleted(struct hotplug *hp, unsigned int cpu)
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

int hp_cpu_remove(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		  struct hp_report *rep)
{
	int ret;

	hp_op_err_clear(rep);
	if (!guest_cpu_removable(cpu))
		return hp_refuse(rep, cpu, -EPERM,
				 "it is the boot CPU and cannot be removed");
	if (hp_stopping(hp))
		return hv_err_set(rep ? &rep->err : NULL, -ESHUTDOWN,
				  "the VM is shutting down");
	if (cpu < hp->max_cpus && hp_host_state(hp, cpu) == HOST_OFFLINE)
		return -ENODEV;
	ret = hp_op_check_broken(hp, cpu, rep);
	if (!ret)
		ret = hp_op_begin(hp, cpu, timeout_ms, rep, HP_OP_REMOVE);
	if (ret)
		return ret;
	ret = cpuhp_cpu_down(&hp->m, cpu, HOST_OFFLINE);
	hp_op_end(hp, ret);
	if (ret)
		return ret;
	hp_set_prestaged(hp, cpu, false);
	hp_deleted(hp, cpu);
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

int hp_set_target(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		  int state, int timeout_ms, struct hp_report *rep)
{
	int ret, cur;

	hp_op_err_clear(rep);
	if (hp_stopping(hp))
		return hv_err_set(rep ? &rep->err : NULL, -ESHUTDOWN,
				  "the VM is shutting down");
	if (cpu >= hp->max_cpus)
		return -EINVAL;
	cur = hp_host_state(hp, cpu);
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
	ret = hp_op_check_broken(hp, cpu, rep);
	if (!ret)
		ret = hp_op_begin(hp, cpu, timeout_ms, rep, HP_OP_TARGET);
	if (ret)
		return ret;
	if (side == HP_SIDE_GUEST)
		ret = guest_set_target(hp, cpu, state, false);
	else
		ret = cpuhp_set_target(&hp->m, cpu, state);
	hp_op_end(hp, ret);
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

	if (hp_host_state(hp, cpu) >= HOST_VCPU_CREATE || !s->kvm_ready ||
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

/*
 * The guest's part of a recover: a guest that reported a failed rollback
 * for @cpu, or that claims it while it is not shown it, clears its own
 * mark and takes the CPU offline.  0, or why not (said).
 */
static int recover_guest(struct hotplug *hp, unsigned int cpu,
			 struct hp_report *rep)
{
	struct hp_slot *s = &hp->slots[cpu];
	bool gbroken;
	int ret;

	pthread_mutex_lock(&hp->lock);
	/* Or it claims a CPU it is not shown: it takes it down too. */
	gbroken = s->guest_broken ||
		  (hp->guest_ext &&
		   hp_guest_state_locked(hp, cpu) != GUEST_OFFLINE &&
		   !hpregs_is_enabled(hp->regs, cpu));
	pthread_mutex_unlock(&hp->lock);
	if (!gbroken)
		return 0;
	/* The guest clears its own mark and takes the CPU down. */
	ret = guest_set_target(hp, cpu, GUEST_OFFLINE, true);
	if (ret) {
		/* guest_set_target() may have said why: context. */
		if (rep && hv_err_is_set(&rep->err))
			hv_err_prepend(&rep->err, "the guest could not take it "
						  "offline to recover it: ");
		hp_fail(hp, cpu,
			"the guest could not take it offline to "
			"recover it (%s); see the guest's console",
			strerror(-ret));
		return ret;
	}
	pthread_mutex_lock(&hp->lock);
	s->guest_broken = false;
	pthread_mutex_unlock(&hp->lock);
	return 0;
}

/*
 * The host's part: its mark cleared and its table walked to online if
 * the guest holds @cpu (@keep), else to offline, with the guest no longer
 * shown a CPU it never took.
 */
static int recover_host(struct hotplug *hp, unsigned int cpu, bool keep)
{
	int ret;

	pthread_mutex_lock(&hp->table_lock);
	ret = cpuhp_clear_broken(&hp->m, cpu);
	if (!ret)
		ret = keep ? cpuhp_cpu_up(&hp->m, cpu, HOST_ONLINE)
			   : cpuhp_cpu_down(&hp->m, cpu, HOST_OFFLINE);
	pthread_mutex_unlock(&hp->table_lock);
	/* Shown to the guest below guest:ap-starting: it never took it. */
	if (!ret && !keep && hpregs_is_enabled(hp->regs, cpu))
		hpregs_unplug_force(hp->regs, cpu);
	return ret;
}

int hp_cpu_recover(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		   struct hp_report *rep, bool *online)
{
	bool keep = false, lent;
	int ret, before;

	*online = false;
	hp_op_err_clear(rep);
	if (hp_stopping(hp))
		return hv_err_set(rep ? &rep->err : NULL, -ESHUTDOWN,
				  "the VM is shutting down");
	/*
	 * The guest's false word moved nothing (its report was refused):
	 * both sides are where the host holds them, only the mark goes.
	 */
	if (cpu < hp->max_cpus && only_lied(hp, cpu)) {
		agree_again(hp, cpu);
		*online = hp_host_state(hp, cpu) == HOST_ONLINE;
		return 0;
	}
	if (!guest_cpu_removable(cpu))
		return hp_refuse(rep, cpu, -EPERM,
				 "it is the boot CPU: it is never walked, so "
				 "there is nothing to recover");
	lent = lend_vcpu(hp, cpu);
	ret = hp_op_begin(hp, cpu, timeout_ms, rep, HP_OP_RECOVER);
	if (ret) {
		unlend_vcpu(hp, cpu, &lent);
		return ret;
	}
	before = hp_host_state(hp, cpu);
	ret = recover_guest(hp, cpu, rep);
	unlend_vcpu(hp, cpu, &lent);
	if (!ret) {
		keep = guest_holds(hp, cpu);
		*online = keep;
		ret = recover_host(hp, cpu, keep);
	}
	hp_op_end(hp, ret);
	if (!ret)
		agree_again(hp, cpu);
	/*
	 * Gone from both sides: a device goes as a removal ends, one that
	 * never was (a failed add, never shown to the guest, no id) quietly.
	 */
	if (ret || keep || before == HOST_OFFLINE ||
	    (before < HOST_AP_STARTING && !hp->slots[cpu].id[0]))
		return ret;
	/* Gone from both sides now: as a hot-remove ends. */
	hp_deleted(hp, cpu);
	return 0;
}

/*
 * One CPU down to offline, whatever a hook says (a reset, the guest's own
 * eject); false if it would not.
 */
bool hp_force_down(struct hotplug *hp, unsigned int cpu)
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

int hotplug_inject(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		   int state, struct hp_report *rep)
{
	int ret;

	if (cpu >= hp->max_cpus)
		return -EINVAL;
	if (side == HP_SIDE_HOST) {
		ret = cpuhp_set_fail(&hp->m, cpu, state);

		hp_snap_host(hp, cpu);
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
