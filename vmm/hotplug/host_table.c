// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host state table (docs/design.md §4): host:prepare, vcpu:create,
 * guest:ap-starting, a dynamic range, online.  Each callback does its own
 * work and runs the --hook executables, after that work going up (a hook
 * failure undoes it and vetoes the step) and before it going down (a hook
 * failure leaves the work in place and fails the step).  The cpuhp library
 * rolls a failed walk back, so every callback undoes only itself.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/kvm.h>

#include "hotvm/guest_states.h"
#include "hooks.h"
#include "hotplug_internal.h"
#include "hotvm/abi.h"
#include "log.h"
#include "vm.h"

/*
 * How long a timed-out hot-add waits at least for the guest to give the
 * CPU back (withdraw_plug()): a bring-up it has started takes a few ms.
 */
#define HP_WITHDRAW_MIN_MS 2000

/*
 * A walk no hook can veto (a reset's, the guest's own eject) goes on
 * past a failed one: said in the log and as an event.
 */
static void hook_ignored(struct hotplug *hp, unsigned int cpu, int state,
			 bool up, const char *err)
{
	char id[sizeof(hp->slots[0].id)];
	struct hp_events ev;

	pr_err("CPU %u: %s; ignored: hooks cannot veto %s", cpu, err,
	       up ? "the boot after a reset"
		  : "what the guest did already (a reset, or its own eject)");
	pthread_mutex_lock(&hp->lock);
	memcpy(id, hp->slots[cpu].id, sizeof(id));
	ev = hp->ev;
	pthread_mutex_unlock(&hp->lock);
	if (ev.hook_ignored)
		ev.hook_ignored(ev.ctx, cpu, id, HOST_STATE_NAME(state), up,
				err);
}

static int run_hooks(struct hotplug *hp, unsigned int cpu, int state, bool up)
{
	struct hooks_vcpu facts;
	struct hv_err err = { 0 };
	int ret;

	if (!hp->hooks || !hp->hooks->nr)
		return 0;
	pthread_mutex_lock(&hp->lock);
	ret = hp->stopping;
	/* What a hook places the vCPU by (hooks.h). */
	hooks_vcpu_facts(&facts, &hp->slots[cpu].vcpu, hp->slots[cpu].id,
			 hp->slots[cpu].boot);
	pthread_mutex_unlock(&hp->lock);
	if (ret) /* the VM is going away: nothing to orchestrate */
		return 0;
	ret = hooks_run_vcpu(hp->hooks, cpu, HOST_STATE_NAME(state), up, &facts,
			     &err);
	if (ret && hp->forced) {
		/* Stopped by the VM's own stop: the log said so already. */
		if (ret != -ECANCELED)
			hook_ignored(hp, cpu, state, up, hv_err_msg(&err));
		return 0;
	}
	if (ret)
		hp_fail(hp, cpu, "%s; the %s is refused", hv_err_msg(&err),
			up ? "bring-up" : "removal");
	return ret;
}

/* --- host:prepare -------------------------------------------------------- */

static int prepare_up(unsigned int cpu, void *data)
{
	struct hotplug *hp = data;
	struct hp_slot *s = &hp->slots[cpu];
	int ret;

	/* APIC ID = slot: the MADT, the FDT and CPUID (vcpu.c) all say so. */
	s->vcpu.apic_id = cpu;
	s->prepared = true;
	ret = run_hooks(hp, cpu, HOST_PREPARE, true);
	if (ret)
		s->prepared = false;
	return ret;
}

static int prepare_down(unsigned int cpu, void *data)
{
	struct hotplug *hp = data;
	int ret = run_hooks(hp, cpu, HOST_PREPARE, false);

	if (!ret)
		hp->slots[cpu].prepared = false;
	return ret;
}

/* --- vcpu:create --------------------------------------------------------- */

/*
 * The rate of the guest's TSC, which the report ring's timestamps count
 * in (KVM gives every vCPU of the VM the same).  Asked of the first vCPU
 * created, before its thread runs: KVM_RUN holds the vCPU's mutex, so on
 * a vCPU that idles in the kernel the ioctl would wait for its next exit.
 * Once: that is the first boot, before any seccomp filter (which has no
 * KVM_GET_TSC_KHZ).
 */
static void ring_tsc_rate(struct hotplug *hp, struct vcpu *vcpu)
{
	int khz;

	if (hp->tsc_rate_asked || !hp->regs)
		return;
	hp->tsc_rate_asked = true;
	khz = ioctl(vcpu->fd, KVM_GET_TSC_KHZ, 0);
	if (khz > 0)
		hpring_set_tsc_khz(&hp->regs->ring, (uint64_t)khz);
}

static int create_fd(struct hotplug *hp, unsigned int cpu)
{
	struct hp_slot *s = &hp->slots[cpu];
	int ret;

	/* The boot CPU runs from its entry, the others wait for INIT/SIPI. */
	if (s->kvm_ready)
		return vcpu_unpark(&s->vcpu,
				   cpu == GUEST_BOOT_CPU && hp->booting);
	if (s->vcpu.fd >= 0) {
		/* KVM cannot destroy it, nor create the same id again. */
		pr_err("vCPU %u was half created by an earlier failure and "
		       "KVM cannot create it again; use another slot",
		       cpu);
		return -EIO;
	}
	ret = vcpu_create(&s->vcpu, hp->vm, hp->io, cpu, hp->max_cpus);
	if (!ret)
		ring_tsc_rate(hp, &s->vcpu);
	s->vcpu.mmio = hp->mmio;
	s->vcpu.on_start = hp_vcpu_started;
	s->vcpu.start_ctx = hp;
	if (!ret)
		s->kvm_ready = true;
	return ret;
}

static int create_up(unsigned int cpu, void *data)
{
	struct hotplug *hp = data;
	struct hp_slot *s = &hp->slots[cpu];
	int ret;

	ret = create_fd(hp, cpu);
	if (!ret && cpu == GUEST_BOOT_CPU && hp->booting) {
		if (hp->boot_mode == HOTPLUG_BOOT_LINUX64)
			ret = vcpu_setup_long64(
				&s->vcpu, hp->entry, hp->start_info,
				ABI_BOOT64_PML4_PADDR, ABI_BOOT64_GDT_PADDR);
		else
			ret = vcpu_setup_pvh(&s->vcpu, hp->entry,
					     hp->start_info);
		if (ret)
			pr_err("cannot set the boot vCPU's registers: %s",
			       strerror(-ret));
	}
	if (ret)
		return ret;
	/* A guest with the report ring reports the AP's start itself. */
	atomic_store(&s->vcpu.unwatched,
		     hp->regs && hpring_enabled(&hp->regs->ring));
	/*
	 * Held before its first KVM_RUN while the hooks run, so that they
	 * can place the thread before the guest runs on it; then it sits in
	 * KVM_RUN until the guest's INIT/SIPI (the boot CPU: its entry).
	 * Without hooks it need not wait for the thread at all.  A slot
	 * added before gets its parked thread back (vcpu_start*()).
	 */
	if (!hp->hooks || !hp->hooks->nr)
		return vcpu_start(&s->vcpu);
	ret = vcpu_start_held(&s->vcpu);
	if (ret)
		return ret;
	ret = run_hooks(hp, cpu, HOST_VCPU_CREATE, true);
	if (ret)
		vcpu_park(&s->vcpu); /* held still: parked as it was */
	else
		vcpu_release(&s->vcpu);
	return ret;
}

static void withdraw_plug(struct hotplug *hp, unsigned int cpu);

static int create_down(unsigned int cpu, void *data)
{
	struct hotplug *hp = data;
	struct hp_slot *s = &hp->slots[cpu];
	int ret;

	/*
	 * A batch presented it, and its own walk failed before taking the
	 * request over (an injected fault at guest:ap-starting): the guest
	 * may be starting it, so it gives it back before its vCPU stops.
	 */
	if (s->batched && !hp->forced && hpregs_is_enabled(hp->regs, cpu)) {
		s->batched = false;
		withdraw_plug(hp, cpu);
	}
	ret = run_hooks(hp, cpu, HOST_VCPU_CREATE, false);

	/*
	 * Parked: the fd, run area and thread (held outside KVM_RUN) stay
	 * for the next add of this slot.
	 */
	if (!ret) {
		vcpu_park(&hp->slots[cpu].vcpu);
		hp_set_stage(hp, cpu, HP_STAGE_ABSENT);
	}
	return ret;
}

/* --- guest:ap-starting --------------------------------------------------- */

static int add_done(const struct hp_slot *s)
{
	if (s->w.failed)
		return -EIO;
	return s->w.reached || s->w.ost_ok ? 1 : 0;
}

static int remove_done(const struct hp_slot *s)
{
	if (s->w.ejected)
		return 1;
	return s->w.failed || s->w.ost_fail ? -EIO : 0;
}

/* The vCPU's start is a fact about the vCPU, not about one request. */
static void arm_wait(struct hotplug *hp, struct hp_slot *s, uint8_t ask)
{
	pthread_mutex_lock(&hp->lock);
	s->w = (struct hp_wait_flags){ .started =
					       atomic_load(&s->vcpu.started) };
	s->asked |= ask; /* its reports are believed from now on */
	pthread_mutex_unlock(&hp->lock);
}

static int raise_cpu_event(struct hotplug *hp, unsigned int cpu)
{
	int ret = ged_raise(hp->ged, ABI_GED_EVT_CPU);

	if (ret)
		pr_err("CPU %u: cannot raise the GED interrupt: %s", cpu,
		       strerror(-ret));
	return ret;
}

/*
 * Puts @request (present, or ask to remove) to the guest for @cpu through
 * the register block, raises the GED and waits until @done says the guest
 * answered.  *asked tells the caller whether there is a request to undo.
 */
static int ask_guest(struct hotplug *hp, unsigned int cpu,
		     int (*request)(struct hpregs *, unsigned int),
		     int (*done)(const struct hp_slot *), int timeout_ms,
		     bool *asked)
{
	struct hp_slot *s = &hp->slots[cpu];
	int ret;

	if (s->batched) { /* batch.c armed, asked and raised: wait only */
		s->batched = false;
		*asked = true;
		goto wait;
	}
	arm_wait(hp, s, request == hpregs_plug ? HP_ASK_UP : HP_ASK_DOWN);
	if (request == hpregs_plug)
		hp_set_stage(hp, cpu, HP_STAGE_PRESENTED);
	ret = request(hp->regs, cpu);
	*asked = !ret;
	if (ret) {
		pr_err("CPU %u: the register block refused the request: %s",
		       cpu, strerror(-ret));
		return ret;
	}
	ret = raise_cpu_event(hp, cpu);
	if (ret)
		return ret;
wait:
	pthread_mutex_lock(&hp->lock);
	ret = hp_wait_locked(hp, s, done, timeout_ms);
	pthread_mutex_unlock(&hp->lock);
	return ret < 0 ? ret : 0;
}

static int withdraw_done(const struct hp_slot *s)
{
	if (s->w.ejected)
		return 1;
	return s->w.ost_fail ? -EIO : 0;
}

/*
 * A hot-add timed out.  A guest that has seen the insert may be starting
 * the CPU this very moment: stopping its vCPU now would leave the guest
 * waiting for an AP that never answers (tens of seconds in its hotplug
 * worker, and a broken CPU after that).  So the request is withdrawn in a
 * way it sees: the insert becomes a removal, and the vCPU keeps running
 * until the guest has finished with it and ejected it.  Only a guest that
 * does not give it back within the grace period loses it without being
 * told.
 */
static void withdraw_plug(struct hotplug *hp, unsigned int cpu)
{
	struct hp_slot *s = &hp->slots[cpu];
	int grace = hp->op_timeout_ms > HP_WITHDRAW_MIN_MS ? hp->op_timeout_ms
							   : HP_WITHDRAW_MIN_MS;
	int ret = hpregs_withdraw_plug(hp->regs, cpu);

	if (ret <= 0)
		return; /* the guest never saw it: taken back silently */
	pthread_mutex_lock(&hp->lock);
	s->w.ejected = s->w.ost_fail = false;
	s->asked |= HP_ASK_DOWN; /* it walks the CPU down again: believed */
	pthread_mutex_unlock(&hp->lock);
	ret = raise_cpu_event(hp, cpu);
	if (!ret) {
		pthread_mutex_lock(&hp->lock);
		ret = hp_wait_locked(hp, s, withdraw_done, grace);
		pthread_mutex_unlock(&hp->lock);
	}
	if (ret > 0) {
		pr_err("CPU %u: the guest gave back the timed-out hot-add",
		       cpu);
		return;
	}
	pr_err("CPU %u: the guest did not give back the timed-out hot-add "
	       "within %d ms (%s); taken back without it",
	       cpu, grace, strerror(-ret));
	hpregs_unplug_force(hp->regs, cpu);
}

/* Presents @cpu, tells the guest, waits until the guest has it running. */
static int plug_and_wait(struct hotplug *hp, unsigned int cpu)
{
	bool asked;
	int ret = ask_guest(hp, cpu, hpregs_plug, add_done, hp->op_timeout_ms,
			    &asked);

	if (!ret || !asked)
		return ret;
	if (ret == -ETIMEDOUT)
		hp_fail(hp, cpu,
			"the guest did not bring it up within %d ms (is the "
			"guest's hotplug driver running? give a longer "
			"timeout for a slow guest)",
			hp->op_timeout_ms);
	else if (ret == -EIO)
		hp_fail(hp, cpu,
			"the guest failed to bring it up; see the guest's "
			"console");
	if (ret == -EIO)
		/* The guest rolled back and reported it: it is done with it. */
		hpregs_unplug_force(hp->regs, cpu);
	else
		withdraw_plug(hp, cpu);
	hp_set_stage(hp, cpu,
		     atomic_load(&hp->slots[cpu].vcpu.started)
			     ? HP_STAGE_STARTED
			     : HP_STAGE_ABSENT);
	return ret;
}

/*
 * With the guest agent: how long Linux gets to offline and eject a CPU by
 * itself: Debian's 6.1 took about 1 s for that
 * in the nested lab (0.26 s without it), and the agent should help only a
 * guest that is stuck.
 */
#define HP_AGENT_EJECT_GRACE_MS 2000

/*
 * With the guest agent, Linux (not a guest that reports its own table)
 * gets a grace time to offline and eject the CPU by itself; after it, if
 * Linux still has it online, the agent offlines it (guest-set-vcpus) and
 * the wait for the eject goes on for the rest of the timeout.  @ret is the
 * grace wait's result.  The report says who offlined it.
 */
static int linux_eject_wait(struct hotplug *hp, unsigned int cpu, int ret,
			    uint64_t t0)
{
	struct hv_err why = { 0 };
	int left;

	if (!ret)
		hp_linux_offlined_by(hp, cpu, "guest");
	if (ret != -ETIMEDOUT)
		return ret;
	ret = hp_linux_offline_late(hp, cpu, &why);
	if (ret) {
		hp_fail(hp, cpu,
			"Linux did not let it go within %d ms and refused "
			"to offline it through the guest agent: %s",
			HP_AGENT_EJECT_GRACE_MS, hv_err_msg(&why));
		return -EIO;
	}
	left = hp->op_timeout_ms - (int)((hv_now_ns() - t0) / 1000000u);
	pthread_mutex_lock(&hp->lock);
	ret = hp_wait_locked(hp, &hp->slots[cpu], remove_done,
			     left > 0 ? left : 1);
	pthread_mutex_unlock(&hp->lock);
	return ret < 0 ? ret : 0;
}

/* Whether a removal of @cpu gives Linux a grace time (above). */
static bool linux_grace(struct hotplug *hp)
{
	bool r;

	pthread_mutex_lock(&hp->lock);
	r = hp->agent && !hp->guest_ext &&
	    __atomic_load_n(&hp->agent_up, __ATOMIC_RELAXED) &&
	    hp->op_timeout_ms > HP_AGENT_EJECT_GRACE_MS;
	pthread_mutex_unlock(&hp->lock);
	return r;
}

/*
 * Asks the guest to offline and eject @cpu and waits for it.  On failure
 * the request is withdrawn, so a late eject is ignored and the CPU stays.
 */
static int hp_stop_and_eject(struct hotplug *hp, unsigned int cpu)
{
	bool asked, grace = linux_grace(hp);
	uint64_t t0 = hv_now_ns();
	int ret = ask_guest(hp, cpu, hpregs_request_unplug, remove_done,
			    grace ? HP_AGENT_EJECT_GRACE_MS : hp->op_timeout_ms,
			    &asked);

	if (grace && asked)
		ret = linux_eject_wait(hp, cpu, ret, t0);
	if (!ret || !asked)
		return ret;
	if (ret == -ETIMEDOUT)
		hp_fail(hp, cpu,
			"the guest did not eject it within %d ms (give a "
			"longer timeout for a slow guest)",
			hp->op_timeout_ms);
	else if (ret == -EIO && hp->slots[cpu].w.ost_fail)
		hp_fail(hp, cpu,
			"the guest refused the eject: _OST status 0x%x (%s)",
			hp->slots[cpu].w.ost_status,
			hp_ost_status_name(hp->slots[cpu].w.ost_status));
	else if (ret == -EIO)
		hp_fail(hp, cpu, "the guest refused to offline it");
	hpregs_cancel_unplug(hp->regs, cpu);
	return ret;
}

static int ap_starting_up(unsigned int cpu, void *data)
{
	struct hotplug *hp = data;
	int ret;

	if (hp->booting) {
		/* Boot CPUs are there from the start: no event, no wait. */
		ret = hpregs_coldplug(hp->regs, cpu);
		if (!ret)
			ret = run_hooks(hp, cpu, HOST_AP_STARTING, true);
		return ret;
	}
	/*
	 * Present already: cpuhp-recover of a CPU the guest holds.  It has
	 * it: nothing to ask, nothing to wait for.
	 */
	if (hpregs_is_enabled(hp->regs, cpu) && !hp->slots[cpu].batched) {
		hp->slots[cpu].guest_joining = false;
		return run_hooks(hp, cpu, HOST_AP_STARTING, true);
	}
	ret = plug_and_wait(hp, cpu);
	if (ret)
		return ret;
	ret = run_hooks(hp, cpu, HOST_AP_STARTING, true);
	if (ret && hp_stop_and_eject(hp, cpu))
		hpregs_unplug_force(hp->regs, cpu); /* the guest is stuck */
	hp->slots[cpu].guest_joining = !ret;
	return ret;
}

static int ap_starting_down(unsigned int cpu, void *data)
{
	struct hotplug *hp = data;
	int ret;

	if (!guest_cpu_removable(cpu) && !hp->forced)
		return -EPERM; /* never reached: cpu_ops.c refuses first */
	hp->slots[cpu].guest_joining = false;
	ret = run_hooks(hp, cpu, HOST_AP_STARTING, false);
	if (ret && hp->slots[cpu].batched) {
		/*
		 * Vetoed after a batch asked the guest to eject it: the
		 * request is withdrawn, and an eject that comes anyway (or
		 * came) is the guest's own, which the host follows.
		 */
		hp->slots[cpu].batched = false;
		hpregs_cancel_unplug(hp->regs, cpu);
	}
	if (ret || hp->forced)
		return ret; /* forced: the guest is done with it already */
	/*
	 * Not present: a failed hot-add already took it back from the guest
	 * (cpuhp-recover walks such a CPU down): there is nothing to eject.
	 */
	if (!hpregs_is_enabled(hp->regs, cpu)) {
		hp->slots[cpu].batched = false; /* a batch's: ejected already */
		return 0;
	}
	return hp_stop_and_eject(hp, cpu);
}

/* --- online -------------------------------------------------------------- */

static void account(struct hotplug *hp, unsigned int cpu, bool online)
{
	bool changed;

	pthread_mutex_lock(&hp->lock);
	changed = hp->slots[cpu].online != online;
	if (changed) {
		hp->slots[cpu].online = online;
		if (online)
			hp->nr_online++;
		else
			hp->nr_online--;
	}
	pthread_mutex_unlock(&hp->lock);
	if (changed)
		hp_online_changed(hp, cpu, online);
}

static int online_up(unsigned int cpu, void *data)
{
	struct hotplug *hp = data;
	int ret = hp_wait_online(hp, cpu);

	if (ret)
		return ret;
	account(hp, cpu, true);
	ret = run_hooks(hp, cpu, HOST_ONLINE, true);
	if (ret)
		account(hp, cpu, false);
	return ret;
}

static int online_down(unsigned int cpu, void *data)
{
	struct hotplug *hp = data;
	/* A fault in Linux's table: Linux offlines it first, or refuses. */
	int ret = hp_linux_offline_first(hp, cpu);

	if (ret)
		return ret;
	ret = run_hooks(hp, cpu, HOST_ONLINE, false);

	if (!ret)
		account(hp, cpu, false);
	return ret;
}

/*
 * The host table, after Linux's cpuhp_hp_states[]: each state's name,
 * callbacks and flags once, in the order a CPU comes up (and, backwards,
 * goes down).  Every other place that needs a state's name reads it here.
 */
const struct cpuhp_step hotplug_host_states[HOST_NR_STATES] = {
	/* No vCPU, nothing presented: where a slot starts and ends. */
	[HOST_OFFLINE] = { .name = "offline" },
	/* First: the APIC ID and the hooks' veto, before anything exists. */
	[HOST_PREPARE] = { .name = "host:prepare",
			   .startup = prepare_up,
			   .teardown = prepare_down },
	/* The vCPU waits for INIT/SIPI before the guest may send them. */
	[HOST_VCPU_CREATE] = { .name = "vcpu:create",
			       .startup = create_up,
			       .teardown = create_down },
	/* Only now is the guest told: it may start the vCPU at once. */
	[HOST_AP_STARTING] = { .name = "guest:ap-starting",
			       .startup = ap_starting_up,
			       .teardown = ap_starting_down },
	/* Hooks installed at run time: the guest has the CPU, not online. */
	[HOST_DYN_FIRST... HOST_DYN_LAST] = { .flags = CPUHP_F_DYN_ONLINE },
	/* Last: counted and announced once both sides have it. */
	[HOST_ONLINE] = { .name = "online",
			  .startup = online_up,
			  .teardown = online_down },
};

void hp_host_table_init(struct hotplug *hp)
{
	_Static_assert(sizeof(hp->steps) == sizeof(hotplug_host_states),
		       "one host table");
	memcpy(hp->steps, hotplug_host_states, sizeof(hp->steps));
	/* Every callback finds its controller in data. */
	for (int s = 0; s < HOST_NR_STATES; s++)
		if (hp->steps[s].startup || hp->steps[s].teardown)
			hp->steps[s].data = hp;
}
