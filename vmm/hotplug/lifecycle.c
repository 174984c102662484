// SPDX-License-Identifier: GPL-2.0-only
/*
 * The controller's life cycle (hotplug_vmm.h): it is created with its
 * tables and attached to the machine's devices, boots the CPUs present at
 * boot, walks them all down for a reset (unboot) and up again, refuses
 * new operations once the VM stops, and is destroyed (docs/design.md §9,
 * §12).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hooks.h"
#include "hotplug_internal.h"
#include "hotplug_vmm.h"
#include "log.h"
#include "qga.h"

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

/* The controller as @cfg describes it: no table, no lock yet. */
static void from_config(struct hotplug *hp, const struct hotplug_config *cfg)
{
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
		.lxa = { .qga = cfg->agent, .cap_ms = hp_agent_cap, .ctx = hp },
	};
	hp_platform_init(hp);
}

/* Every slot as at power-on: the boot CPUs present, no vCPU yet. */
static int alloc_slots(struct hotplug *hp)
{
	unsigned int n = hp->max_cpus;

	hp->slots = calloc(n, sizeof(*hp->slots));
	hp->hcpus = calloc(n, sizeof(*hp->hcpus));
	hp->linux_slot = calloc(n, sizeof(*hp->linux_slot));
	hp->linux_miss = calloc(n, sizeof(*hp->linux_miss));
	hp->linux_listed = calloc(n, sizeof(*hp->linux_listed));
	if (!hp->slots || !hp->hcpus || !hp->linux_slot || !hp->linux_miss ||
	    !hp->linux_listed)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++)
		hp->slots[i] = (struct hp_slot){
			.vcpu = { .fd = -1, .id = i, .apic_id = i },
			.boot = i < hp->boot_cpus,
			.coldplug = i < hp->boot_cpus,
			.coldplug_state = HOST_ONLINE,
			.guest_target = CPUHP_INVALID,
			.fault_given = CPUHP_INVALID,
			.linux_cpu = -1,
			.linux_online = -1,
			.linux_fail = CPUHP_INVALID,
		};
	return 0;
}

/*
 * The host table and the mirror of the guest's, each CPU's copy for
 * queries, Linux's trace (@linux_trace), and the devices attached last.
 */
static int init_tables(struct hotplug *hp, bool linux_trace)
{
	int ret;

	hp_host_table_init(hp);
	ret = cpuhp_init(&hp->m, &hp->plat, hp->steps, HOST_NR_STATES,
			 hp->hcpus, hp->max_cpus);
	if (!ret)
		ret = hp_guest_mirror_init(hp);
	for (unsigned int i = 0; !ret && i < hp->max_cpus; i++)
		hp_snap_host(hp, i);
	if (!ret && linux_trace)
		ret = hp_lx_trace_init(hp);
	if (!ret)
		ret = hp_devices_attach(hp);
	return ret;
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
	from_config(hp, cfg);
	ret = init_locks(hp);
	if (ret) {
		free(hp);
		return ret;
	}
	ret = alloc_slots(hp);
	if (!ret)
		ret = init_tables(hp, cfg->linux_trace);
	if (ret) {
		pr_err("cannot set up CPU hotplug: %s", strerror(-ret));
		hotplug_destroy(hp);
		return ret;
	}
	*out = hp;
	return 0;
}

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

/* Every vCPU told to stop, none waited for. */
static void kick_all(struct hotplug *hp)
{
	for (unsigned int i = 0; i < hp->max_cpus; i++) {
		atomic_store(&hp->slots[i].vcpu.stop, true);
		vcpu_kick(&hp->slots[i].vcpu);
	}
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

void hotplug_unboot(struct hotplug *hp)
{
	if (!hp || !hp->slots)
		return;
	hp_op_enter(hp, true);
	pthread_mutex_lock(&hp->lock);
	hp->running = false;
	pthread_mutex_unlock(&hp->lock);
	/* Kick them all first, so they stop in parallel; the walk joins. */
	kick_all(hp);
	hp->forced = true;
	for (unsigned int i = 0; i < hp->max_cpus; i++) {
		struct hp_slot *s = &hp->slots[i];
		int state = hp_host_state(hp, i);

		/* What the guest had, it finds again after a reset. */
		s->coldplug = state >= HOST_AP_STARTING;
		s->coldplug_state = state;
		hp_force_down(hp, i);
		vcpu_stop(&s->vcpu);
		hp_snap_host(hp, i);
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
	kick_all(hp);
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
	hp_devices_detach(hp);
	pthread_cond_destroy(&hp->cond);
	pthread_mutex_destroy(&hp->lock);
	pthread_mutex_destroy(&hp->agent_lock);
	pthread_mutex_destroy(&hp->table_lock);
	hp_lx_trace_destroy(hp);
	free(hp->linux_slot);
	free(hp->linux_miss);
	free(hp->linux_listed);
	free(hp->slots);
	free(hp->hcpus);
	free(hp->guest_cpus);
	free(hp);
}

void hotplug_set_events(struct hotplug *hp, const struct hp_events *ev)
{
	pthread_mutex_lock(&hp->lock);
	hp->ev = ev ? *ev : (struct hp_events){ 0 };
	pthread_mutex_unlock(&hp->lock);
}
