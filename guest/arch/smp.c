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

struct percpu percpu[GUEST_MAX_CPUS];
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
	 * Intel's INIT-SIPI-SIPI.  Like Linux on modern CPUs (init_udelay
	 * = 0), no 10 ms wait after INIT; the second SIPI is ignored by a
	 * CPU that took the first.
	 */
	lapic_send_init(pc->apic_id);
	lapic_send_sipi(pc->apic_id, SIPI_VECTOR);
	udelay(10);
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

static int wait_flag(volatile u32 *flag, u64 timeout_us)
{
	u64 end = tsc_deadline_us(timeout_us);

	while (!smp_load_acquire(flag)) {
		if (tsc_passed(end))
			return -ETIMEDOUT;
		cpu_relax();
	}
	return 0;
}

int smp_wait_alive(unsigned int cpu, u64 timeout_us)
{
	return wait_flag(&percpu[cpu].alive, timeout_us);
}

int smp_park(unsigned int cpu, u64 timeout_us)
{
	struct percpu *pc = &percpu[cpu];

	smp_store_release(&pc->park_req, 1);
	smp_ring(pc);
	return wait_flag(&pc->parked, timeout_us);
}

void smp_reset(unsigned int cpu)
{
	struct percpu *pc = &percpu[cpu];

	bool parked = smp_load_acquire(&pc->parked);

	lapic_send_init(pc->apic_id);
	/*
	 * INIT is delivered asynchronously (the target vCPU is kicked out
	 * of guest mode); an AP that may still be on its way up gets time
	 * before it is declared stopped, so that it cannot set alive after
	 * we cleared it.  A parked AP (every plain offline) halts with
	 * interrupts off and writes nothing: no wait.
	 */
	if (!parked)
		udelay(1000);
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
	u32 req = pc->mbox_req;
	u64 end = tsc_deadline_us(CALL_TIMEOUT_US);

	while (smp_load_acquire(&pc->mbox_done) != req) {
		if (tsc_passed(end)) {
			printk("smp: cpu %u does not answer its mailbox\n",
			       cpu);
			return -ETIMEDOUT;
		}
		cpu_relax();
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
	smp_store_release(&pc->alive, 1);

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
			continue;
		}
		/* Halt, never spin: see smp_ring(). */
		if (pc->lapic_on)
			safe_halt();
		else
			smp_nmi_wait(&pc->doorbell, bell);
	}
}
