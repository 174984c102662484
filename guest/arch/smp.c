// SPDX-License-Identifier: GPL-2.0-only
/*
 * SMP bring-up mechanics; the policy (what runs when) is cpuhp_table.c.
 */
#include <errno.h>

#include "hotvm/abi.h"
#include "idt.h"
#include "lapic.h"
#include "platform.h"
#include "printf.h"
#include "smp.h"
#include "tsc.h"

_Static_assert(GUEST_TRAMPOLINE == ABI_TRAMPOLINE_PADDR,
	       "layout.h and hotvm/abi.h disagree on the trampoline");
_Static_assert((GUEST_TRAMPOLINE & 0xfff) == 0 && GUEST_TRAMPOLINE < 0x100000,
	       "the SIPI vector is the trampoline's page number");

#define SIPI_VECTOR	(GUEST_TRAMPOLINE >> 12)
#define CALL_TIMEOUT_US 10000000 /* the software /dev/kvm is slow */
#define WAKE_SLICE_US	10000	 /* the longest halt of a wait: a safety net */
#define SIPI_RETRY_US	100000	 /* not alive this long: SIPI again */
#define RESET_ALIVE_US	1000000	 /* a kicked AP this late is not coming */

unsigned int smp_nr_possible;

/* Read by ap_long_entry (entry.S) before the AP has a stack. */
u32 smp_apicid[GUEST_MAX_CPUS];
u64 smp_stack_top[GUEST_MAX_CPUS];
u32 smp_apicid_leaf_b;

extern const char trampoline_start[], trampoline_end[];

/* isr.S: halt until *word != seen, with interrupts off; NMI wakes. */
void smp_nmi_wait(volatile u32 *word, u32 seen);
extern const char smp_nmi_wait_start[], smp_nmi_wait_end[];

static void smp_nmi(struct idt_regs *regs);
static void smp_wake_irq(struct idt_regs *regs);
static void smp_wake_timer_irq(struct idt_regs *regs);

unsigned int smp_init(void)
{
	u32 self = cpu_apic_id();
	unsigned int n = 1;

	smp_apicid_leaf_b = cpu_apicid_leaf_b();
	percpu[0].apic_id = self;
	percpu[0].boot_present = true;
	for (unsigned int i = 0; i < platform.nr_cpus; i++) {
		const struct platform_cpu *pc = &platform.cpus[i];

		if (pc->apic_id == self)
			continue;
		percpu[n].apic_id = pc->apic_id;
		percpu[n].boot_present = pc->enabled;
		n++;
	}
	for (unsigned int c = 0; c < n; c++) {
		percpu[c].cpu = c;
		smp_apicid[c] = percpu[c].apic_id;
	}
	smp_stack_top[0] = (u64)(uintptr_t)(smp_stacks + GUEST_STACK_SIZE);
	smp_nr_possible = n;

	idt_set_handler(2, smp_nmi);
	idt_set_handler(VEC_DOORBELL, smp_wake_irq);
	idt_set_handler(VEC_WAKE, smp_wake_irq);
	idt_set_handler(VEC_WAKE_TIMER, smp_wake_timer_irq);
	lapic_timer_oneshot(VEC_WAKE_TIMER); /* the boot CPU's: smp_wait() */
	memcpy((void *)GUEST_TRAMPOLINE, trampoline_start,
	       (size_t)(trampoline_end - trampoline_start));
	return n;
}

void smp_set_stack(unsigned int cpu, bool on)
{
	char *top = smp_stacks + (cpu + 1) * (size_t)GUEST_STACK_SIZE;

	smp_stack_top[cpu] = on ? (u64)(uintptr_t)top : 0;
}

void smp_kick(unsigned int cpu)
{
	struct percpu *pc = &percpu[cpu];

	/* The AP is not running: its fields are ours until it says alive. */
	pc->alive = 0;
	pc->parked = 0;
	pc->park_req = 0;
	pc->mbox_req = 0;
	pc->mbox_done = 0;
	pc->doorbell = 0;
	pc->lapic_on = false;
	pc->kicks++;
	mb();

	/*
	 * Intel's INIT-SIPI, no waits.  Like Linux on modern CPUs (init_udelay
	 * = 0), no 10 ms wait after INIT.  The second SIPI of INIT-SIPI-SIPI
	 * is there for a first one that was not taken, and a CPU that took it
	 * ignores it; KVM and QEMU latch the SIPI behind the INIT and never
	 * lose it, so the second is sent only if the AP is late
	 * (smp_wait_alive()), not as one more exit on every kick.
	 */
	lapic_send_init(pc->apic_id);
	lapic_send_sipi(pc->apic_id, SIPI_VECTOR);
}

/*
 * Wake the AP for new work.  Once its LAPIC is on, a fixed IPI ends its
 * "sti; hlt".  Before that (kicked, waiting for its starting states) it is
 * software-disabled and takes no fixed interrupts, but NMIs it does: the
 * AP halts with interrupts off in smp_nmi_wait() and an NMI wakes it.
 * That keeps waiting APs from spinning, which on an overcommitted host
 * (2 host CPUs, 8 vCPUs) starves the boot CPU doing the bring-up.
 * lapic_on only changes inside a mailbox call, so it is stable here.
 */
static void smp_ring(struct percpu *pc)
{
	smp_store_release(&pc->doorbell, pc->doorbell + 1);
	if (pc->lapic_on)
		lapic_send_ipi(pc->apic_id, VEC_DOORBELL);
	else
		lapic_send_nmi(pc->apic_id);
}

/*
 * An NMI that lands between smp_nmi_wait's compare and its hlt would be
 * lost, and the hlt would sleep through the doorbell: resume after the
 * hlt instead.  Any other NMI is ignored.
 */
static void smp_nmi(struct idt_regs *regs)
{
	if (regs->rip >= (u64)(uintptr_t)smp_nmi_wait_start &&
	    regs->rip < (u64)(uintptr_t)smp_nmi_wait_end)
		regs->rip = (u64)(uintptr_t)smp_nmi_wait_end;
}

static struct smp_wait_stats smp_wait_st; /* the boot CPU's */

void smp_get_wait_stats(struct smp_wait_stats *st)
{
	*st = smp_wait_st;
}

/* The doorbell and the wake-up: ending a hlt was the point. */
static void smp_wake_irq(struct idt_regs *regs)
{
	if (regs->vector == VEC_WAKE)
		smp_wait_st.wakes++;
	lapic_eoi();
}

/* Whether the boot CPU's one-shot timer still counts down. */
static volatile bool smp_wake_armed;

static void smp_wake_timer_irq(struct idt_regs *regs)
{
	(void)regs;
	smp_wake_armed = false;
	smp_wait_st.slices++;
	lapic_eoi();
}

/* A bound on the next halt: the slice already running, or a new one. */
static void smp_wake_arm(void)
{
	if (smp_wake_armed)
		return;
	smp_wake_armed = true;
	lapic_timer_arm(WAKE_SLICE_US * 1000 / LAPIC_TIMER_NS);
}

/*
 * Wait until the AP @pc has set *word to @want: 0 or -ETIMEDOUT.
 *
 * The boot CPU halts rather than spins (docs/design.md §5): on a host
 * with fewer CPUs than running vCPUs a spinning vCPU holds the CPU that
 * the AP's vCPU needs until the host's scheduler preempts it, and without
 * pause-loop exiting nothing tells the host that it spins.  So it says
 * that it waits (waiter), looks at the word with interrupts off and
 * halts with "sti; hlt", whose STI shadow closes the window in which the
 * AP's wake-up could land before the hlt.  The AP stores the word, then
 * reads waiter; with a full barrier on both sides, either it sees the
 * waiter and sends VEC_WAKE or we see the word.  The one-shot timer
 * bounds every halt, so a lost wake-up costs one slice and the timeout
 * still ends the wait.  Any other CPU, or a caller with interrupts off,
 * spins as before: the timer and the wake-up are the boot CPU's.
 */
static int smp_wait(struct percpu *pc, volatile u32 *word, u32 want,
		    u64 timeout_us)
{
	u64 end = tsc_deadline_us(timeout_us);
	bool sleep = !irqs_disabled() && smp_processor_id() == 0;
	int ret = 0;

	if (sleep) {
		smp_wait_st.waits++;
		WRITE_ONCE(pc->waiter, percpu[0].apic_id + 1);
		mb();
	}
	for (;;) {
		if (sleep)
			local_irq_disable();
		if (smp_load_acquire(word) == want)
			break;
		if (tsc_passed(end)) {
			ret = -ETIMEDOUT;
			break;
		}
		if (sleep) {
			smp_wake_arm();
			smp_wait_st.halts++;
			safe_halt();
		} else {
			cpu_relax();
		}
	}
	if (sleep) {
		WRITE_ONCE(pc->waiter, 0);
		local_irq_enable();
	}
	return ret;
}

/* The AP's half of smp_wait(), after it stored the word. */
static void smp_wake_waiter(struct percpu *pc)
{
	u32 w;

	mb(); /* the word before waiter, as smp_wait() orders them */
	w = READ_ONCE(pc->waiter);
	if (!w)
		return;
	if (pc->lapic_on)
		lapic_send_ipi(w - 1, VEC_WAKE);
	else /* else the slice */
		lapic_send_ipi_early(pc->apic_base, w - 1, VEC_WAKE);
}

/*
 * The kick's SIPI again each SIPI_RETRY_US the AP is not alive: harmless
 * to an AP already on its way (only one waiting for a SIPI takes one),
 * and the second SIPI of INIT-SIPI-SIPI for one that did not get the first.
 */
int smp_wait_alive(unsigned int cpu, u64 timeout_us)
{
	struct percpu *pc = &percpu[cpu];
	u64 end = tsc_deadline_us(timeout_us);
	int ret;

	while ((ret = smp_wait(pc, &pc->alive, 1, SIPI_RETRY_US)) &&
	       !tsc_passed(end))
		lapic_send_sipi(pc->apic_id, SIPI_VECTOR);
	return ret;
}

int smp_park(unsigned int cpu, u64 timeout_us)
{
	struct percpu *pc = &percpu[cpu];

	smp_store_release(&pc->park_req, 1);
	smp_ring(pc);
	return smp_wait(pc, &pc->parked, 1, timeout_us);
}

void smp_reset(unsigned int cpu)
{
	struct percpu *pc = &percpu[cpu];

	/*
	 * A kicked AP that is not yet alive may still hold our INIT and
	 * SIPI undelivered, and KVM takes every pending INIT before the
	 * SIPI: an INIT sent now would merge with the kick's, the SIPI
	 * would still start the AP, and it would set alive after we
	 * cleared it.  So first wait (halting, so that its vCPU gets the
	 * host CPU) until it has come up, then stop it; an AP that never
	 * comes up is stopped after RESET_ALIVE_US.  A parked AP (every
	 * plain offline) halts with interrupts off and writes nothing.
	 */
	if (!smp_load_acquire(&pc->parked))
		smp_wait(pc, &pc->alive, 1, RESET_ALIVE_US);
	lapic_send_init(pc->apic_id);
	pc->alive = 0;
	pc->lapic_on = false;
}

int smp_call_start(unsigned int cpu, int (*fn)(void *), void *arg)
{
	struct percpu *pc = &percpu[cpu];
	u32 req;

	if (cpu >= smp_nr_possible)
		return -ENODEV;
	req = pc->mbox_req + 1;
	if (cpu == smp_processor_id()) {
		/* Done at once, as the AP would: the wait finds it done. */
		u64 flags = local_save_flags();

		local_irq_disable();
		pc->mbox_ret = fn(arg);
		if (flags & (1u << 9))
			local_irq_enable();
		pc->mbox_req = req;
		pc->mbox_done = req;
		return 0;
	}
	if (!pc->alive || pc->parked)
		return -ENODEV;
	pc->mbox_fn = fn;
	pc->mbox_arg = arg;
	smp_store_release(&pc->mbox_req, req);
	smp_ring(pc);
	return 0;
}

int smp_call_wait(unsigned int cpu)
{
	struct percpu *pc = &percpu[cpu];

	if (smp_wait(pc, &pc->mbox_done, pc->mbox_req, CALL_TIMEOUT_US)) {
		printk("smp: cpu %u does not answer its mailbox\n", cpu);
		return -ETIMEDOUT;
	}
	return pc->mbox_ret;
}

int smp_call_on_cpu(unsigned int cpu, int (*fn)(void *), void *arg)
{
	int ret = smp_call_start(cpu, fn, arg);

	return ret ? ret : smp_call_wait(cpu);
}

static void __noreturn smp_ap_park(struct percpu *pc)
{
	smp_store_release(&pc->parked, 1);
	smp_wake_waiter(pc);
	/*
	 * Interrupts off: only INIT (the next kick, or smp_reset) gets the
	 * CPU out of here.  NMI or SMI would return to the hlt.
	 */
	for (;;) {
		local_irq_disable();
		halt();
	}
}

void __noreturn smp_ap_main(unsigned int cpu)
{
	struct percpu *pc = &percpu[cpu];

	idt_load();
	/* Once: the mode its wake-ups go in until ap:starting-lapic. */
	pc->apic_base = lapic_ap_mode();
	smp_store_release(&pc->alive, 1);
	smp_wake_waiter(pc);

	for (;;) {
		u32 req, bell;

		local_irq_disable();
		bell = smp_load_acquire(&pc->doorbell);
		if (READ_ONCE(pc->park_req))
			smp_ap_park(pc);
		req = smp_load_acquire(&pc->mbox_req);
		if (req != pc->mbox_done) {
			pc->mbox_ret = pc->mbox_fn(pc->mbox_arg);
			smp_store_release(&pc->mbox_done, req);
			smp_wake_waiter(pc);
			continue;
		}
		/* Halt, never spin: see smp_ring(). */
		if (pc->lapic_on)
			safe_halt();
		else
			smp_nmi_wait(&pc->doorbell, bell);
	}
}
