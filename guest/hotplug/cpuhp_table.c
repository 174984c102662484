// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's hotplug table (see cpuhp_table.h) and the platform the cpuhp
 * library runs on here: a recursive spinlock, run_on_cpu through the AP's
 * mailbox, logging to the console.
 */
#include <errno.h>

#include "cpuhp_table.h"
#include "gring.h"
#include "hotvm/guest_states.h"
#include "idt.h"
#include "lapic.h"
#include "printf.h"
#include "smp.h"
#include "tsc.h"

#define ALIVE_TIMEOUT_US 10000000 /* an AP boot is ~1 ms; be generous */
#define PARK_TIMEOUT_US	 10000000
#define TIMER_HZ	 10
#define TIMER_COUNT	 (1000000000u / LAPIC_AP_TIMER_NS / TIMER_HZ)

struct cpuhp_machine hp_machine;
struct cpumask cpu_online_mask;

/* One entry per state: the real callbacks and their bookkeeping. */
struct hp_state {
	int (*up)(unsigned int cpu);
	int (*down)(unsigned int cpu);
	volatile u8 ran[GUEST_MAX_CPUS]; /* startup ran, no teardown since */
};

static struct cpuhp_cpu hp_cpus[GUEST_MAX_CPUS];
static bool hp_trace;
static bool hp_parallel; /* inside a parallel bring-up */
/* Where every notice goes (hp_init()): the host's report, hotplug.c. */
static void (*hp_report)(const struct cpuhp_notice *n);
/*
 * Each AP's own TSC when it entered its first starting state and left its
 * last: whether the APs of a batch really ran them at the same time.
 */
static volatile u64 hp_starting_from[GUEST_MAX_CPUS];
static volatile u64 hp_starting_to[GUEST_MAX_CPUS];

/* percpu:prepare: a clean per-CPU area; the AP is not running. */
static int percpu_prepare(unsigned int cpu)
{
	struct percpu *pc = &percpu[cpu];

	pc->ticks = 0;
	pc->work = 0;
	pc->timer_on = false;
	pc->work_on = false;
	pc->lapic_on = false;
	return 0;
}

/* smpboot:prepare: the stack the trampoline hands the AP (Linux: idle). */
static int smpboot_prepare(unsigned int cpu)
{
	smp_set_stack(cpu, true);
	return 0;
}

/* Without a stack a stray SIPI'd AP parks itself in ap_long_entry. */
static int smpboot_dead(unsigned int cpu)
{
	smp_set_stack(cpu, false);
	return 0;
}

static int kick_ap(unsigned int cpu)
{
	smp_kick(cpu);
	return 0;
}

/*
 * Teardown of the kick, also reached on a rollback while the AP may be
 * anywhere between the trampoline and its mailbox loop: INIT stops it
 * wherever it is, and it waits for the next SIPI.
 */
static int kick_ap_undo(unsigned int cpu)
{
	smp_reset(cpu);
	return 0;
}

static int bringup_cpu(unsigned int cpu)
{
	int ret;

	/*
	 * A walk down that stopped at the kick state (set-target) left the
	 * AP parked by our teardown: kick it again, or "alive" is stale.
	 */
	if (READ_ONCE(percpu[cpu].parked))
		smp_kick(cpu);
	ret = smp_wait_alive(cpu, ALIVE_TIMEOUT_US);

	if (ret)
		printk("smpboot: cpu %u (APIC ID %u) did not come up\n", cpu,
		       percpu[cpu].apic_id);
	return ret;
}

/* Linux's finish_cpu/cpu_wait_death: the AP is parked when this returns. */
static int bringup_cpu_dead(unsigned int cpu)
{
	int ret = smp_park(cpu, PARK_TIMEOUT_US);

	if (ret)
		printk("smpboot: cpu %u did not park\n", cpu);
	return ret;
}

/* On the AP, interrupts off. */
static int ap_lapic_up(unsigned int cpu)
{
	struct percpu *pc = &percpu[cpu];
	u32 id;

	hp_starting_from[cpu] = rdtsc();
	lapic_setup_ap();
	id = lapic_id();
	if (id != pc->apic_id)
		printk("smpboot: cpu %u: LAPIC ID %u, expected %u\n", cpu, id,
		       pc->apic_id);
	pc->lapic_on = true;
	return 0;
}

static int ap_lapic_down(unsigned int cpu)
{
	lapic_shutdown();
	percpu[cpu].lapic_on = false;
	return 0;
}

static int ap_timer_up(unsigned int cpu)
{
	lapic_timer_start(VEC_LAPIC_TIMER, TIMER_COUNT);
	percpu[cpu].timer_on = true;
	hp_starting_to[cpu] = rdtsc();
	return 0;
}

static int ap_timer_down(unsigned int cpu)
{
	lapic_timer_stop();
	percpu[cpu].timer_on = false;
	return 0;
}

static int ap_work_up(unsigned int cpu)
{
	percpu[cpu].work_on = true;
	return 0;
}

static int ap_work_down(unsigned int cpu)
{
	percpu[cpu].work_on = false;
	return 0;
}

static int online_up(unsigned int cpu)
{
	cpumask_set(&cpu_online_mask, cpu);
	/* A parallel bring-up says its list once, when it is over. */
	if (!hp_parallel)
		hp_print_online();
	return 0;
}

static int online_down(unsigned int cpu)
{
	cpumask_clear(&cpu_online_mask, cpu);
	hp_print_online();
	return 0;
}

/* Each state's work; the names and flags are guest_states.h's. */
static struct hp_state hp_states[GUEST_NR_STATES] = {
	[GUEST_PERCPU_PREPARE] = { .up = percpu_prepare },
	[GUEST_SMPBOOT_PREPARE] = { .up = smpboot_prepare,
				    .down = smpboot_dead },
	[GUEST_KICK_AP] = { .up = kick_ap, .down = kick_ap_undo },
	[GUEST_BRINGUP_CPU] = { .up = bringup_cpu, .down = bringup_cpu_dead },
	[GUEST_AP_LAPIC] = { .up = ap_lapic_up, .down = ap_lapic_down },
	[GUEST_AP_TIMER] = { .up = ap_timer_up, .down = ap_timer_down },
	[GUEST_AP_WORK] = { .up = ap_work_up, .down = ap_work_down },
	[GUEST_ONLINE] = { .up = online_up, .down = online_down },
};

/* The library calls these; they record, then do the state's work. */
static int hp_startup(unsigned int cpu, void *data)
{
	struct hp_state *s = data;
	int ret = s->up ? s->up(cpu) : 0;

	if (!ret)
		s->ran[cpu] = 1;
	return ret;
}

static int hp_teardown(unsigned int cpu, void *data)
{
	struct hp_state *s = data;
	int ret = s->down ? s->down(cpu) : 0;

	if (!ret)
		s->ran[cpu] = 0;
	return ret;
}

/*
 * Every named state but offline runs through the bookkeeping wrappers; the
 * free dynamic slots and offline have no callbacks.
 */
#define HP_HAS_CB(id, n) ((id) != GUEST_OFFLINE && (n))
#define HP_STEP(id, n, f)                                                      \
	[id] = {                                                               \
		.name = n,                                                     \
		.startup = HP_HAS_CB(id, n) ? hp_startup : NULL,               \
		.teardown = HP_HAS_CB(id, n) ? hp_teardown : NULL,             \
		.data = HP_HAS_CB(id, n) ? &hp_states[id] : NULL,              \
		.flags = f,                                                    \
	},

static struct cpuhp_step hp_steps[GUEST_NR_STATES] = {
	/* Every state of guest_states.h, in its order. */
	GUEST_STATES(HP_STEP)
};

/* The per-CPU work: counted on each timer tick while ap:online-work is on. */
static void timer_irq(struct idt_regs *regs)
{
	struct percpu *pc = this_cpu();

	(void)regs;
	pc->ticks++;
	if (pc->work_on)
		pc->work++;
	lapic_eoi();
}

/* The library's platform. */
static spinlock_t hp_lock;
static volatile int hp_owner = -1;
static unsigned int hp_depth;

static void hp_plat_lock(void *ctx)
{
	int me = (int)smp_processor_id();

	(void)ctx;
	if (hp_owner == me) {
		hp_depth++;
		return;
	}
	spin_lock(&hp_lock);
	hp_owner = me;
	hp_depth = 1;
}

static void hp_plat_unlock(void *ctx)
{
	(void)ctx;
	if (--hp_depth)
		return;
	hp_owner = -1;
	spin_unlock(&hp_lock);
}

static int hp_plat_run_on_cpu(void *ctx, unsigned int cpu, int (*fn)(void *arg),
			      void *arg)
{
	(void)ctx;
	return smp_call_on_cpu(cpu, fn, arg);
}

/* run_on_cpu in halves: cpuhp_bringup_cpus runs an AP state on all at once. */
static int hp_plat_call_start(void *ctx, unsigned int cpu, int (*fn)(void *arg),
			      void *arg)
{
	(void)ctx;
	return smp_call_start(cpu, fn, arg);
}

static int hp_plat_call_wait(void *ctx, unsigned int cpu)
{
	(void)ctx;
	return smp_call_wait(cpu);
}

static void hp_plat_log(void *ctx, enum cpuhp_log_level level, const char *fmt,
			va_list ap)
{
	(void)ctx;
	if (level == CPUHP_LOG_DEBUG && !hp_trace)
		return;
	vprintk(fmt, ap);
}

const char *hp_state_name(int state)
{
	if (state < 0 || state >= GUEST_NR_STATES)
		return "?";
	return hp_steps[state].name ? hp_steps[state].name : "(free)";
}

static void hp_plat_notify(void *ctx, const struct cpuhp_notice *n)
{
	(void)ctx;
	/* The host mirrors the table from these: every step, every DONE. */
	hp_report(n);
	if (n->kind != CPUHP_NOTICE_STEP)
		return;
	/* Injected faults, rollbacks and failures always; the rest on trace. */
	if (!hp_trace && !n->injected && !n->rollback && !n->ret)
		return;
	printk("cpuhp: cpu %u: %s %s%s%s: %d\n", n->cpu,
	       hp_state_name(n->state), n->bringup ? "startup" : "teardown",
	       n->rollback ? " (rollback)" : "",
	       n->injected ? " (injected)" : "", n->ret);
}

static const struct cpuhp_platform hp_platform = {
	.lock = hp_plat_lock,
	.unlock = hp_plat_unlock,
	.run_on_cpu = hp_plat_run_on_cpu,
	.call_start = hp_plat_call_start,
	.call_wait = hp_plat_call_wait,
	.log = hp_plat_log,
	.notify = hp_plat_notify,
};

void hp_print_online(void)
{
	/* Static: up to 5 bytes a CPU is too much for an AP-sized stack. */
	static char buf[CPUMASK_BITS * 5 + 1];

	static char line[sizeof(buf) + 9];
	int n;

	cpulist_format(buf, sizeof(buf), &cpu_online_mask);
	/* On the hot path: through the report ring's console, if any. */
	n = snprintk(line, sizeof(line), "online: %s\n", buf);
	if (n > 0 && (size_t)n < sizeof(line) && gring_console(line, (size_t)n))
		return;
	printk("%s", line);
}

int hp_init(unsigned int nr_cpus, bool trace,
	    void (*report)(const struct cpuhp_notice *n))
{
	int ret;

	hp_trace = trace;
	hp_report = report;
	idt_set_handler(VEC_LAPIC_TIMER, timer_irq);

	ret = cpuhp_init(&hp_machine, &hp_platform, hp_steps, GUEST_NR_STATES,
			 hp_cpus, nr_cpus);
	if (ret)
		return ret;

	/* The boot CPU was online before the table existed. */
	ret = cpuhp_set_boot_state(&hp_machine, 0, GUEST_ONLINE);
	if (ret)
		return ret;
	for (int s = 1; s < GUEST_NR_STATES; s++)
		hp_states[s].ran[0] = 1;
	percpu[0].lapic_on = true;
	cpumask_set(&cpu_online_mask, 0);
	return 0;
}

unsigned int hp_starting_overlaps(unsigned int cpu, const unsigned int *cpus,
				  unsigned int n)
{
	unsigned int k = 0;

	if (cpu >= GUEST_MAX_CPUS || !hp_starting_to[cpu])
		return 0;
	for (unsigned int i = 0; i < n; i++) {
		unsigned int o = cpus[i];

		if (o == cpu || o >= GUEST_MAX_CPUS || !hp_starting_to[o])
			continue;
		if (hp_starting_from[o] < hp_starting_to[cpu] &&
		    hp_starting_from[cpu] < hp_starting_to[o])
			k++;
	}
	return k;
}

bool hp_in_parallel(void)
{
	return hp_parallel;
}

/*
 * A DONE for an operation the library did not walk (no-op or refused), or
 * the one result of a parallel bring-up.
 */
void hp_report_done(unsigned int cpu, bool up, int ret)
{
	struct cpuhp_cpu st = { .state = 0 };
	struct cpuhp_notice n;

	cpuhp_cpu_info(&hp_machine, cpu, &st);
	n = (struct cpuhp_notice){
		.kind = CPUHP_NOTICE_DONE,
		.cpu = cpu,
		.state = st.state,
		.bringup = up,
		.ret = ret,
	};
	hp_report(&n);
}

int hp_bringup_batch(const unsigned int *cpus, unsigned int n, int *results)
{
	int first;

	for (unsigned int i = 0; i < n; i++)
		if (cpus[i] < GUEST_MAX_CPUS)
			hp_starting_to[cpus[i]] = 0;
	hp_parallel = true;
	first = cpuhp_bringup_cpus(&hp_machine, cpus, n, GUEST_ONLINE, results);
	hp_parallel = false;
	hp_print_online();
	return first;
}

int hp_bringup(const unsigned int *cpus, unsigned int n, bool parallel)
{
	static int results[GUEST_MAX_CPUS];
	int first = 0;

	if (parallel) {
		first = hp_bringup_batch(cpus, n, results);
		for (unsigned int i = 0; i < n; i++)
			hp_report_done(cpus[i], true, results[i]);
		return first;
	}
	for (unsigned int i = 0; i < n; i++) {
		int ret = cpuhp_cpu_up(&hp_machine, cpus[i], GUEST_ONLINE);

		if (ret && !first)
			first = ret;
	}
	return first;
}

static int ping(void *arg)
{
	(void)arg;
	return (int)cpu_apic_id();
}

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printk("check: cpu %u at %d (%s): ", cpu, st.state,    \
			       hp_state_name(st.state));                       \
			printk(__VA_ARGS__);                                   \
			bad++;                                                 \
		}                                                              \
	} while (0)

int hp_check_cpu(unsigned int cpu)
{
	struct percpu *pc = &percpu[cpu];
	struct cpuhp_cpu st;
	int bad = 0;
	bool running;

	if (cpuhp_cpu_info(&hp_machine, cpu, &st)) {
		printk("check: cpu %u: no such CPU\n", cpu);
		return 1;
	}
	CHECK(!st.broken, "marked broken\n");
	CHECK(st.state == st.target, "target is %d\n", st.target);
	CHECK(st.fail == CPUHP_INVALID, "injected fault %d left over\n",
	      st.fail);
	for (int s = 1; s < GUEST_NR_STATES; s++) {
		if (hp_steps[s].startup != hp_startup)
			continue;
		CHECK(hp_states[s].ran[cpu] == (st.state >= s),
		      "%s: startup %s\n", hp_state_name(s),
		      hp_states[s].ran[cpu] ? "ran" : "did not run");
	}
	CHECK(cpumask_test(&cpu_online_mask, cpu) == (st.state >= GUEST_ONLINE),
	      "online mask says %d\n", cpumask_test(&cpu_online_mask, cpu));
	if (cpu == 0)
		return bad;

	/* What the AP itself says. */
	running = pc->alive && !pc->parked;
	if (st.state >= GUEST_BRINGUP_CPU)
		CHECK(running, "AP not in its mailbox loop\n");
	else if (st.state < GUEST_KICK_AP)
		CHECK(!running, "AP still running\n");
	CHECK(pc->lapic_on == (st.state >= GUEST_AP_LAPIC), "lapic_on %d\n",
	      pc->lapic_on);
	CHECK(pc->timer_on == (st.state >= GUEST_AP_TIMER), "timer_on %d\n",
	      pc->timer_on);
	CHECK(pc->work_on == (st.state >= GUEST_AP_WORK), "work_on %d\n",
	      pc->work_on);
	CHECK((smp_stack_top_of(cpu) != 0) ==
		      (st.state >= GUEST_SMPBOOT_PREPARE),
	      "stack %s\n", smp_stack_top_of(cpu) ? "assigned" : "missing");
	if (running && st.state >= GUEST_BRINGUP_CPU) {
		int id = smp_call_on_cpu(cpu, ping, NULL);

		CHECK(id == (int)pc->apic_id, "ping answered %d, not %u\n", id,
		      pc->apic_id);
	}
	return bad;
}
