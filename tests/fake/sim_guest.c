// SPDX-License-Identifier: GPL-2.0-only
/*
 * The scripted guest (sim_guest.h).  Its driver follows the tiny guest's
 * (guest/hotplug/hotplug.c) step by step, on the same register-block code
 * (hpio.c) and the same table (guest_states.h); what it leaves out is the
 * machine: its callbacks do nothing but start an AP at the kick.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "cpuhp.h"
#include "hotvm/abi.h"
#include "hotvm/guest_states.h"
#include "hpio.h"
#include "sim_guest.h"

#define SIM_MAX_CPUS 1024 /* HPREGS_MAX_CPUS */

/* ACPI _OST: the notify codes and status codes an OSPM answers with. */
#define OST_EV_DEVICE_CHECK  1
#define OST_EV_EJECT_REQUEST 3
#define OST_EV_OSPM_EJECT    0x103
#define OST_IN_PROGRESS	     0x84
#define OST_SUCCESS	     0
#define OST_FAILURE	     1
#define OST_DEVICE_BUSY	     0x82

static struct {
	pthread_mutex_t lock;
	struct cpuhp_machine m;
	struct cpuhp_step steps[GUEST_NR_STATES];
	struct cpuhp_cpu cpus[SIM_MAX_CPUS];
	unsigned int nr;
	struct hpio io;
	struct sim_guest_bus bus;
	unsigned int done[SIM_MAX_CPUS]; /* DONE notices reported */
	bool keep[SIM_MAX_CPUS];
	bool ready;
	bool linux_mode, linux_onlines; /* sim_guest_linux() */
	bool linux_waits_offline;	/* sim_guest_linux_waits_offline() */
	bool rm_pending[SIM_MAX_CPUS];	/* ... an eject asked, not done */
	bool irq_pending; /* an edge while the guest was busy: taken after */
	unsigned int irqs_done; /* GED interrupts handled to the end */
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

bool sim_guest_late;

/*
 * The machine's interrupt comes synchronously here, from inside a
 * register access of the guest's when the access itself raises it (an
 * eject the host refuses): the guest takes it once that access is done,
 * as a CPU with interrupts off would.
 */
static __thread bool sim_inside;

static int sim_step(unsigned int cpu, void *data)
{
	(void)cpu;
	(void)data;
	return 0;
}

/* bringup:kick-ap: INIT-SIPI-SIPI, which is what starts the AP's vCPU. */
static int sim_kick(unsigned int cpu, void *data)
{
	(void)data;
	g.bus.sipi(g.bus.ctx, cpu);
	return 0;
}

#define SIM_HAS_CB(id, n) ((id) != GUEST_OFFLINE && (n))
#define SIM_STEP(id, n, f)                                                     \
	[id] = {                                                               \
		.name = n,                                                     \
		.startup = SIM_HAS_CB(id, n) ? sim_step : NULL,                \
		.teardown = SIM_HAS_CB(id, n) ? sim_step : NULL,               \
		.flags = f,                                                    \
	},

static const struct cpuhp_step sim_steps[GUEST_NR_STATES] = {
	/* Every state of guest_states.h, in its order. */
	GUEST_STATES(SIM_STEP)
};

/* The register block, through the test's bus. */
static u32 sim_read(struct hpio *io, unsigned int off, unsigned int width)
{
	(void)io;
	return g.bus.read(g.bus.ctx, ABI_CPUHP_MMIO + off, width);
}

static void sim_write(struct hpio *io, unsigned int off, unsigned int width,
		      u32 v)
{
	(void)io;
	g.bus.write(g.bus.ctx, ABI_CPUHP_MMIO + off, width, v);
}

/* As hotplug_report(): every notice goes to the host (selector = CPU). */
static void sim_notify(void *ctx, const struct cpuhp_notice *n)
{
	(void)ctx;
	if (n->kind == CPUHP_NOTICE_DONE)
		g.done[n->cpu]++;
	if (g.ready && !g.linux_mode)
		hpio_report(&g.io, n->cpu, hpio_report_value(n));
}

static const struct cpuhp_platform sim_platform = { .notify = sim_notify };

/* As hp_report_done(): the DONE of a walk the library did not make. */
static void sim_report_done(unsigned int cpu, bool up, int ret)
{
	struct cpuhp_notice n = {
		.kind = CPUHP_NOTICE_DONE,
		.cpu = cpu,
		.state = g.cpus[cpu].state,
		.bringup = up,
		.ret = ret,
	};

	sim_notify(NULL, &n);
}

/* Runs @walk on @cpu and reports its DONE if the library gave none. */
static int sim_walk(unsigned int cpu, bool up, int target,
		    int (*walk)(struct cpuhp_machine *, unsigned int, int))
{
	unsigned int seen = g.done[cpu];
	int ret = walk(&g.m, cpu, target);

	if (g.done[cpu] == seen)
		sim_report_done(cpu, up, ret);
	return ret;
}

/* The host's one-shot fault for @cpu (command 0x11), into the library. */
static void sim_take_fault(unsigned int cpu)
{
	u32 f = hpio_ext_read(&g.io, cpu, ABI_CPUHP_CMD_GUEST_FAULT);

	if (f && f <= GUEST_NR_STATES)
		cpuhp_set_fail(&g.m, cpu, (int)f - 1);
}

static void sim_insert(unsigned int cpu)
{
	int ret;

	if (cpu >= g.nr || !guest_cpu_removable(cpu) || g.keep[cpu])
		return;
	/* Linux's ACPI driver takes it; user space may online it later. */
	if (g.linux_mode && !g.linux_onlines) {
		hpio_ost(&g.io, cpu, OST_EV_DEVICE_CHECK, OST_SUCCESS);
		return;
	}
	sim_take_fault(cpu);
	ret = sim_walk(cpu, true, GUEST_ONLINE, cpuhp_cpu_up);
	hpio_ost(&g.io, cpu, OST_EV_DEVICE_CHECK,
		 ret ? OST_FAILURE : OST_SUCCESS);
}

void sim_guest_linux(bool on, bool onlines)
{
	pthread_mutex_lock(&g.lock);
	g.linux_mode = on;
	g.linux_onlines = onlines;
	pthread_mutex_unlock(&g.lock);
}

int sim_guest_online(unsigned int cpu)
{
	int ret = -EINVAL;

	pthread_mutex_lock(&g.lock);
	if (cpu < g.nr)
		ret = cpuhp_cpu_up(&g.m, cpu, GUEST_ONLINE);
	pthread_mutex_unlock(&g.lock);
	return ret;
}

static void sim_remove(unsigned int cpu)
{
	int ret;

	if (cpu >= g.nr || g.keep[cpu])
		return;
	/* Its eject waits until something else has offlined the CPU. */
	if (g.linux_mode && g.linux_waits_offline &&
	    g.cpus[cpu].state != GUEST_OFFLINE) {
		g.rm_pending[cpu] = true;
		return;
	}
	g.rm_pending[cpu] = false;
	if (!guest_cpu_removable(cpu)) {
		sim_report_done(cpu, false, -EPERM);
		return;
	}
	sim_take_fault(cpu);
	ret = sim_walk(cpu, false, GUEST_OFFLINE, cpuhp_cpu_down);
	if (ret) {
		hpio_ost(&g.io, cpu, OST_EV_EJECT_REQUEST, OST_DEVICE_BUSY);
		return;
	}
	hpio_eject(&g.io, cpu);
	hpio_ost(&g.io, cpu, OST_EV_EJECT_REQUEST, OST_SUCCESS);
}

/*
 * Drops the guest's lock after a register access of its own, then takes
 * the interrupt that access raised (sim_inside).
 */
static void sim_unlock(void)
{
	bool irq = g.irq_pending;

	g.irq_pending = false;
	pthread_mutex_unlock(&g.lock);
	if (irq)
		sim_guest_interrupt();
}

void sim_guest_linux_waits_offline(bool on)
{
	pthread_mutex_lock(&g.lock);
	g.linux_waits_offline = on;
	pthread_mutex_unlock(&g.lock);
}

int sim_guest_offline(unsigned int cpu)
{
	int ret = -EINVAL;

	pthread_mutex_lock(&g.lock);
	if (cpu < g.nr && guest_cpu_removable(cpu))
		ret = cpuhp_cpu_down(&g.m, cpu, GUEST_OFFLINE);
	/* The eject it was waiting for goes on now. */
	if (!ret && g.rm_pending[cpu]) {
		sim_inside = true;
		sim_remove(cpu);
		sim_inside = false;
	}
	sim_unlock();
	return ret;
}

static void sim_cpu_event(void)
{
	static u32 ins[SIM_MAX_CPUS], rm[SIM_MAX_CPUS];
	unsigned int ni, nr;

	hpio_scan(&g.io, ins, &ni, rm, &nr, SIM_MAX_CPUS);
	for (unsigned int i = 0; i < ni; i++)
		sim_insert(ins[i]);
	for (unsigned int i = 0; i < nr; i++)
		sim_remove(rm[i]);
}

/* ABI_GED_EVT_GUEST: the host set guest-side targets (command 0x12). */
static void sim_targets(void)
{
	for (unsigned int c = 0; c < g.nr; c++) {
		u32 t;
		bool recover;
		int target;

		sim_take_fault(c);
		t = hpio_ext_read(&g.io, c, ABI_CPUHP_CMD_GUEST_TARGET);
		if (!t)
			continue;
		recover = t & ABI_GUEST_TARGET_RECOVER;
		t &= ~ABI_GUEST_TARGET_RECOVER;
		target = (int)t - 1;
		if (!guest_cpu_removable(c) && target == GUEST_ONLINE &&
		    !recover) {
			/* Where the boot CPU always is: a no-op. */
			sim_report_done(c, true, 0);
			continue;
		}
		if (!guest_cpu_removable(c) || !t || t > GUEST_NR_STATES) {
			sim_report_done(c, false, -EINVAL);
			continue;
		}
		if (target > CPUHP_OFFLINE &&
		    !(hpio_read_flags(&g.io, c) & ABI_CPUHP_F_ENABLED)) {
			sim_report_done(c, true, -ENODEV);
			continue;
		}
		if (recover)
			cpuhp_clear_broken(&g.m, c);
		sim_walk(c, true, target, cpuhp_set_target);
	}
}

void sim_guest_interrupt(void)
{
	u32 ev;

	if (sim_inside) {
		g.irq_pending = true;
		return;
	}
	pthread_mutex_lock(&g.lock);
	if (!g.ready) {
		pthread_mutex_unlock(&g.lock);
		return;
	}
	ev = g.bus.read(g.bus.ctx, ABI_GED_MMIO, 4);
	if (ev & ABI_GED_EVT_CPU)
		sim_cpu_event();
	if (ev & ABI_GED_EVT_GUEST)
		sim_targets();
	g.irqs_done++;
	pthread_mutex_unlock(&g.lock);
}

unsigned int sim_guest_interrupts(void)
{
	unsigned int n;

	pthread_mutex_lock(&g.lock);
	n = g.irqs_done;
	pthread_mutex_unlock(&g.lock);
	return n;
}

int sim_guest_boot(unsigned int max, unsigned int boot,
		   const struct sim_guest_bus *bus)
{
	int ret;

	if (!max || max > SIM_MAX_CPUS || boot < 1 || boot > max)
		return -EINVAL;
	pthread_mutex_lock(&g.lock);
	memcpy(g.steps, sim_steps, sizeof(g.steps));
	g.steps[GUEST_KICK_AP].startup = sim_kick;
	g.nr = max;
	g.bus = *bus;
	g.io = (struct hpio){ .read = sim_read,
			      .write = sim_write,
			      .nr_sel = max };
	hpio_invalidate(&g.io);
	memset(g.done, 0, sizeof(g.done));
	memset(g.keep, 0, sizeof(g.keep));
	memset(g.rm_pending, 0, sizeof(g.rm_pending));
	ret = cpuhp_init(&g.m, &sim_platform, g.steps, GUEST_NR_STATES, g.cpus,
			 max);
	if (!ret)
		ret = cpuhp_set_boot_state(&g.m, GUEST_BOOT_CPU, GUEST_ONLINE);
	if (!ret) {
		/* As hotplug_init(): "this guest reports", then the APs. */
		g.ready = true;
		if (!sim_guest_late)
			sim_report_done(GUEST_BOOT_CPU, true, 0);
		for (unsigned int c = 0; c < boot && !ret; c++)
			if (guest_cpu_removable(c))
				ret = cpuhp_cpu_up(&g.m, c, GUEST_ONLINE);
	}
	pthread_mutex_unlock(&g.lock);
	return ret;
}

void sim_guest_stop(void)
{
	pthread_mutex_lock(&g.lock);
	g.ready = false;
	pthread_mutex_unlock(&g.lock);
}

void sim_guest_keep(unsigned int cpu, bool keep)
{
	pthread_mutex_lock(&g.lock);
	if (cpu < g.nr)
		g.keep[cpu] = keep;
	pthread_mutex_unlock(&g.lock);
}

void sim_guest_hold(unsigned int cpu, bool hold)
{
	struct cpuhp_notice n = {
		.kind = hold ? CPUHP_NOTICE_STEP : CPUHP_NOTICE_DONE,
		.cpu = cpu,
		.bringup = true,
	};

	pthread_mutex_lock(&g.lock);
	if (cpu < g.nr && g.ready) {
		/* A step that leaves the CPU where it is, or the walk's end. */
		n.state = g.cpus[cpu].state;
		hpio_report(&g.io, cpu, hpio_report_value(&n));
	}
	pthread_mutex_unlock(&g.lock);
}

int sim_guest_eject(unsigned int cpu)
{
	int ret = -EINVAL;

	pthread_mutex_lock(&g.lock);
	sim_inside = true;
	if (cpu < g.nr && g.ready) {
		hpio_ost(&g.io, cpu, OST_EV_OSPM_EJECT, OST_IN_PROGRESS);
		ret = sim_walk(cpu, false, GUEST_OFFLINE, cpuhp_cpu_down);
		if (!ret)
			hpio_eject(&g.io, cpu);
		hpio_ost(&g.io, cpu, OST_EV_OSPM_EJECT,
			 ret ? OST_FAILURE : OST_SUCCESS);
	}
	sim_inside = false;
	sim_unlock();
	return ret;
}

void sim_guest_report(unsigned int cpu, int state)
{
	struct cpuhp_notice n = {
		.kind = CPUHP_NOTICE_DONE,
		.cpu = cpu,
		.state = state,
		.bringup = true,
	};

	pthread_mutex_lock(&g.lock);
	if (cpu < g.nr && g.ready)
		hpio_report(&g.io, cpu, hpio_report_value(&n));
	pthread_mutex_unlock(&g.lock);
}

int sim_guest_state(unsigned int cpu)
{
	int st;

	pthread_mutex_lock(&g.lock);
	st = cpu < g.nr ? g.cpus[cpu].state : -1;
	pthread_mutex_unlock(&g.lock);
	return st;
}
