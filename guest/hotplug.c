// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host-driven CPU hotplug: see hotplug.h.  Everything here runs on the
 * boot CPU, outside interrupt context, one event batch at a time.
 *
 * Selectors of the register block are the VMM's CPU indices; the guest's
 * logical CPU ids are its own (0 = boot CPU, then the platform's order).
 * They are matched through the arch id (command 3, the APIC ID), as
 * QEMU's AML matches _MAT, so neither side assumes they are equal.
 */
#include <errno.h>

#include "cpuhp_table.h"
#include "ged.h"
#include "guest_states.h"
#include "hotplug.h"
#include "hotvm_abi.h"
#include "platform.h"
#include "printf.h"
#include "smp.h"
#include "tsc.h"

#define HP_BAD_SEL 0xffffffffu

static struct hpio hp_io;
static u32 hp_sel[GUEST_MAX_CPUS];  /* logical CPU -> selector */
static u32 hp_done[GUEST_MAX_CPUS]; /* DONE notices seen, per CPU */
static struct cpumask hp_present;   /* possible and plugged */
static bool hp_ready;
static bool hp_parallel; /* inside a parallel bring-up */

static u32 hp_mmio_read(struct hpio *io, unsigned int off, unsigned int width)
{
	uintptr_t a = (uintptr_t)io->ctx + off;

	if (width == 1)
		return *(volatile u8 *)a;
	return *(volatile u32 *)a;
}

static void hp_mmio_write(struct hpio *io, unsigned int off, unsigned int width,
			  u32 v)
{
	uintptr_t a = (uintptr_t)io->ctx + off;

	if (width == 1)
		*(volatile u8 *)a = (u8)v;
	else
		*(volatile u32 *)a = v;
}

struct hpio *hotplug_io(void)
{
	return &hp_io;
}

u32 hotplug_sel_of(unsigned int cpu)
{
	return cpu < smp_nr_possible ? hp_sel[cpu] : HP_BAD_SEL;
}

static int hp_cpu_of_sel(u32 sel)
{
	for (unsigned int c = 0; c < smp_nr_possible; c++)
		if (hp_sel[c] == sel)
			return (int)c;
	return -1;
}

void hotplug_set_parallel(bool on)
{
	hp_parallel = on;
}

void hotplug_report(const struct cpuhp_notice *n)
{
	/*
	 * A parallel bring-up makes several walks per CPU (to the kick state,
	 * the rest of the way, and down to offline after a failure): none of
	 * their DONEs is the end of the operation, and a host waiting for
	 * DONE must not take one for it.  hp_insert reports each CPU's result
	 * once the bring-up is over.
	 */
	if (n->kind == CPUHP_NOTICE_DONE && hp_parallel)
		return;
	if (n->kind == CPUHP_NOTICE_DONE && n->cpu < GUEST_MAX_CPUS)
		hp_done[n->cpu]++;
	if (!hp_ready || n->cpu >= smp_nr_possible)
		return;
	hpio_report(&hp_io, hp_sel[n->cpu], hpio_report_value(n));
}

/*
 * A DONE for an operation the library did not walk (no-op or refused), or
 * the one result of a parallel bring-up.
 */
void hotplug_report_done(unsigned int cpu, bool up, int ret)
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
	hotplug_report(&n);
}

/*
 * Selector map: the arch id of every selector.  An absent block reads
 * all zeros (hotvm) or floats; ids that are not distinct mean "no
 * answer", and then selector = APIC ID, as the VMM numbers its CPUs.
 */
static void hp_map_selectors(unsigned int nr)
{
	static u32 arch[GUEST_MAX_CPUS];
	unsigned int mapped = 0;

	for (unsigned int c = 0; c < nr; c++)
		hp_sel[c] = percpu[c].apic_id;
	for (unsigned int s = 0; s < nr; s++) {
		arch[s] = hpio_arch_id(&hp_io, s);
		for (unsigned int t = 0; t < s; t++) {
			if (arch[t] == arch[s]) {
				printk("hotplug: register block gives no "
				       "distinct arch ids: selector = APIC "
				       "ID\n");
				return;
			}
		}
	}
	for (unsigned int s = 0; s < nr; s++) {
		for (unsigned int c = 0; c < nr; c++) {
			if (percpu[c].apic_id == arch[s]) {
				hp_sel[c] = s;
				mapped++;
				break;
			}
		}
	}
	printk("hotplug: %u of %u selectors matched by APIC ID\n", mapped, nr);
}

void hotplug_init(bool ignore)
{
	unsigned int nr = smp_nr_possible;
	int ret;

	printk("hotplug: GED at 0x%lx GSI %u (%s), register block at 0x%lx "
	       "(%s), I/O APIC at 0x%lx (%s)\n",
	       platform.ged_base, platform.ged_irq,
	       platform.ged_found ? "fdt" : "default", platform.cpuhp_base,
	       platform.cpuhp_found ? "fdt" : "default", platform.ioapic_base,
	       platform.ioapic_found ? "madt" : "default");
	hp_io = (struct hpio){
		.read = hp_mmio_read,
		.write = hp_mmio_write,
		.ctx = (void *)(uintptr_t)platform.cpuhp_base,
		.nr_sel = nr,
	};
	hpio_invalidate(&hp_io);
	hp_map_selectors(nr);
	for (unsigned int c = 0; c < nr; c++)
		if (percpu[c].boot_present)
			cpumask_set(&hp_present, c);
	hp_ready = true;

	ret = ged_init(platform.ged_base, platform.ged_irq,
		       platform.ioapic_base, ignore);
	if (ret)
		printk("hotplug: no GED interrupt (%d): host hotplug will "
		       "time out\n",
		       ret);
}

bool hotplug_pending(void)
{
	return ged_pending();
}

/* The host's one-shot fault for @cpu (command 0x11), into the library. */
static void hp_take_fault(unsigned int cpu)
{
	u32 f = hpio_ext_read(&hp_io, hp_sel[cpu], ABI_CPUHP_CMD_GUEST_FAULT);
	int ret;

	if (!f)
		return;
	ret = f <= GUEST_NR_STATES
		      ? cpuhp_set_fail(&hp_machine, cpu, (int)f - 1)
		      : -EINVAL;
	printk("hotplug: cpu %u: host injects a fault at %d (%s): %d\n", cpu,
	       (int)f - 1, hp_state_name((int)f - 1), ret);
}

static void hp_insert(const u32 *sels, unsigned int n)
{
	static unsigned int cpus[GUEST_MAX_CPUS];
	static int results[GUEST_MAX_CPUS];
	unsigned int nr = 0;
	u64 t0, us;

	for (unsigned int i = 0; i < n; i++) {
		int cpu = hp_cpu_of_sel(sels[i]);

		if (cpu <= 0) {
			printk("hotplug: insert of selector %u: %s, ignored\n",
			       sels[i],
			       cpu ? "not a possible CPU" : "the boot CPU");
			continue;
		}
		cpumask_set(&hp_present, (unsigned int)cpu);
		hp_take_fault((unsigned int)cpu);
		cpus[nr++] = (unsigned int)cpu;
	}
	if (!nr)
		return;
	/* Several at once: the parallel bring-up overlaps their AP boots. */
	t0 = rdtsc();
	hotplug_set_parallel(true);
	cpuhp_bringup_cpus(&hp_machine, cpus, nr, GUEST_ONLINE, results);
	hotplug_set_parallel(false);
	us = tsc_to_us(rdtsc() - t0);
	for (unsigned int i = 0; i < nr; i++) {
		hotplug_report_done(cpus[i], true, results[i]);
		printk("hotplug: cpu %u (APIC ID %u) up: %d (%lu us for %u)\n",
		       cpus[i], percpu[cpus[i]].apic_id, results[i], us, nr);
	}
}

static void hp_remove(u32 sel)
{
	int cpu = hp_cpu_of_sel(sel);
	u32 seen;
	u64 t0;
	int ret;

	if (cpu < 0) {
		printk("hotplug: remove of selector %u: not a possible CPU, "
		       "ignored\n",
		       sel);
		return;
	}
	if (cpu == 0) {
		/* Never: report the refusal so the host does not wait. */
		printk("hotplug: remove of the boot CPU refused\n");
		hotplug_report_done(0, false, -EPERM);
		return;
	}
	hp_take_fault((unsigned int)cpu);
	seen = hp_done[cpu];
	t0 = rdtsc();
	ret = cpuhp_cpu_down(&hp_machine, (unsigned int)cpu, CPUHP_OFFLINE);
	if (hp_done[cpu] == seen)
		hotplug_report_done((unsigned int)cpu, false, ret);
	if (ret) {
		/* The host sees DONE+FAILED and fails the removal itself. */
		printk("hotplug: cpu %d down failed: %d, not ejected\n", cpu,
		       ret);
		return;
	}
	cpumask_clear(&hp_present, (unsigned int)cpu);
	hpio_eject(&hp_io, sel);
	printk("hotplug: cpu %d (APIC ID %u) down and ejected (%lu us)\n", cpu,
	       percpu[cpu].apic_id, tsc_to_us(rdtsc() - t0));
}

static void hp_cpu_event(void)
{
	static u32 ins[GUEST_MAX_CPUS], rm[GUEST_MAX_CPUS];
	unsigned int nr_ins, nr_rm;

	hpio_scan(&hp_io, ins, &nr_ins, rm, &nr_rm, GUEST_MAX_CPUS);
	hp_insert(ins, nr_ins);
	for (unsigned int i = 0; i < nr_rm; i++)
		hp_remove(rm[i]);
}

/* ABI_GED_EVT_GUEST: the host set guest-side targets (command 0x12). */
static void hp_targets(void)
{
	for (unsigned int c = 0; c < smp_nr_possible; c++) {
		u32 sel = hp_sel[c], t, seen;
		int target, ret;

		hp_take_fault(c);
		t = hpio_ext_read(&hp_io, sel, ABI_CPUHP_CMD_GUEST_TARGET);
		if (!t)
			continue;
		target = (int)t - 1;
		if (c == 0 || t > GUEST_NR_STATES) {
			printk("hotplug: cpu %u: target %d refused\n", c,
			       target);
			hotplug_report_done(c, false, -EINVAL);
			continue;
		}
		if (target > CPUHP_OFFLINE &&
		    !(hpio_read_flags(&hp_io, sel) & HPIO_F_ENABLED)) {
			printk("hotplug: cpu %u: target %d (%s) refused: not "
			       "plugged\n",
			       c, target, hp_state_name(target));
			hotplug_report_done(c, true, -ENODEV);
			continue;
		}
		seen = hp_done[c];
		ret = cpuhp_set_target(&hp_machine, c, target);
		if (hp_done[c] == seen)
			hotplug_report_done(c, true, ret);
		printk("hotplug: cpu %u: target %d (%s): %d\n", c, target,
		       hp_state_name(target), ret);
	}
}

void hotplug_work(void)
{
	u32 ev = ged_take();

	if (ev & ABI_GED_EVT_CPU)
		hp_cpu_event();
	if (ev & ABI_GED_EVT_GUEST)
		hp_targets();
	if (ev & ~(u32)(ABI_GED_EVT_CPU | ABI_GED_EVT_GUEST))
		printk("hotplug: GED events 0x%x not handled\n",
		       ev & ~(u32)(ABI_GED_EVT_CPU | ABI_GED_EVT_GUEST));
}
