// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host-driven CPU hotplug: see hotplug.h.  Everything here runs on the
 * boot CPU, outside interrupt context, one event batch at a time; the
 * GED's other event, the power button, is handled here too (pwrbtn=).
 *
 * Selectors of the register block are the VMM's CPU indices; the guest's
 * logical CPU ids are its own (0 = boot CPU, then the platform's order).
 * They are matched through the arch id (command 3, the APIC ID), as
 * QEMU's AML matches _MAT, so neither side assumes they are equal.
 */
#include <errno.h>

#include "cmdline.h"
#include "cpuhp_table.h"
#include "ged.h"
#include "gpe.h"
#include "gring.h"
#include "hotvm/guest_states.h"
#include "hotplug.h"
#include "hotvm/abi.h"
#include "platform.h"
#include "printf.h"
#include "smp.h"
#include "tsc.h"

#define HP_BAD_SEL 0xffffffffu

#define HP_QEMU_GPE_BIT 2 /* QEMU's GPE.2: CPU hotplug */

/* ACPI _OST: source events (notify codes) and status codes. */
#define HP_OST_EV_DEVICE_CHECK	 1
#define HP_OST_EV_EJECT_REQUEST	 3
#define HP_OST_SUCCESS		 0
#define HP_OST_FAILURE		 1
#define HP_OST_EJECT_UNSUPPORTED 0x80
#define HP_OST_DEVICE_BUSY	 0x82

static struct hpio hp_io;
static u32 hp_sel[GUEST_MAX_CPUS];  /* logical CPU -> selector */
static u32 hp_done[GUEST_MAX_CPUS]; /* DONE notices seen, per CPU */
static struct cpumask hp_present;   /* possible and plugged */
static bool hp_ready;
/*
 * QEMU q35: block at I/O port 0xcd8, SCI/GPE0 bit 2, no extension
 * commands (no reports, no faults, no targets), _OST after each
 * insert and remove instead.
 */
static bool hp_qemu;

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

void hotplug_report(const struct cpuhp_notice *n)
{
	/*
	 * A parallel bring-up makes several walks per CPU (to the kick state,
	 * the rest of the way, and down to offline after a failure): none of
	 * their DONEs is the end of the operation, and a host waiting for
	 * DONE must not take one for it.  hp_insert reports each CPU's result
	 * once the bring-up is over.
	 */
	if (n->kind == CPUHP_NOTICE_DONE && hp_in_parallel())
		return;
	if (n->kind == CPUHP_NOTICE_DONE && n->cpu < GUEST_MAX_CPUS)
		hp_done[n->cpu]++;
	if (!hp_ready || hp_qemu || n->cpu >= smp_nr_possible)
		return;
	/* Into the ring: read at the next doorbell or register access. */
	if (gring_active())
		gring_report(hp_sel[n->cpu], hpio_report_value(n), n->ret);
	else
		hpio_report(&hp_io, hp_sel[n->cpu], hpio_report_value(n));
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

/*
 * A full ACPI platform with a GPE block (hotvm's FADT is hardware-reduced)
 * and no FDT: QEMU's q35, whose block is at 0xcd8.
 */
static bool hp_is_qemu(void)
{
	return !platform.ged_found && platform.fadt_found &&
	       !platform.hw_reduced && platform.gpe0_blk &&
	       platform.gpe0_len >= 2;
}

/*
 * QEMU starts in its legacy interface: a present-CPU bitmap at the same
 * ports (bit 0, the boot CPU, is set).  Writing 0 to its first dword
 * switches to the modern block; there, offset 0 reads 0 (command data
 * 2 of command 0), and selector 0 is the state the write leaves.
 */
static void hp_qemu_init(unsigned int nr, bool ignore)
{
	bool legacy = inb(ABI_QEMU_CPUHP_PORT) != 0;
	int ret;

	hpio_init_port(&hp_io, ABI_QEMU_CPUHP_PORT, nr);
	hp_io.write(&hp_io, ABI_CPUHP_SELECTOR, 4, 0);
	printk("hotplug: QEMU CPU hotplug at port 0x%x (%s), GPE0 block "
	       "0x%x/%u, SCI GSI %u, I/O APIC at 0x%lx (%s)\n",
	       ABI_QEMU_CPUHP_PORT,
	       legacy ? "legacy, switched to modern" : "modern",
	       platform.gpe0_blk, platform.gpe0_len, platform.sci_gsi,
	       platform.ioapic_base,
	       platform.ioapic_found ? "madt" : "default");
	hp_qemu = true;
	hp_map_selectors(nr);
	for (unsigned int c = 0; c < nr; c++)
		if (percpu[c].boot_present)
			cpumask_set(&hp_present, c);
	hp_ready = true;

	ret = gpe_init(HP_QEMU_GPE_BIT, platform.ioapic_base, ignore);
	if (ret)
		printk("hotplug: no SCI (%d): host hotplug will time out\n",
		       ret);
}

void hotplug_init(bool ignore)
{
	unsigned int nr = smp_nr_possible;
	int ret;

	if (hp_is_qemu()) {
		hp_qemu_init(nr, ignore);
		return;
	}
	printk("hotplug: GED at 0x%lx GSI %u (%s), register block at 0x%lx "
	       "(%s), I/O APIC at 0x%lx (%s)\n",
	       platform.ged_base, platform.ged_irq,
	       platform.ged_found ? "fdt" : "default", platform.cpuhp_base,
	       platform.cpuhp_found ? "fdt" : "default", platform.ioapic_base,
	       platform.ioapic_found ? "madt" : "default");
	hpio_init_mmio(&hp_io, platform.cpuhp_base, nr);
	hp_map_selectors(nr);
	for (unsigned int c = 0; c < nr; c++)
		if (percpu[c].boot_present)
			cpumask_set(&hp_present, c);
	hp_ready = true;
	/*
	 * hotvm's report ring, where the FDT offers one: reports, the
	 * `online:` line and the pending events through memory, a doorbell
	 * only when the host must act (docs/design.md §6.8).
	 */
	if (!ignore)
		gring_init(platform.ring_base, platform.ring_size,
			   platform.ring_doorbell);
	/*
	 * Say at once that this guest reports its states (the boot CPU's
	 * DONE): the host offers guest-side targets and faults only to a
	 * guest that does.
	 */
	if (!ignore) {
		hp_report_done(0, true, 0);
		gring_flush();
	}

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
	u32 f;
	int ret;

	if (hp_qemu)
		return;
	/* With the ring, the mailbox says whether there is one to read. */
	if (gring_active() && !gring_test_clear(GRING_FAULT, hp_sel[cpu]))
		return;
	f = hpio_ext_read(&hp_io, hp_sel[cpu], ABI_CPUHP_CMD_GUEST_FAULT);
	if (!f)
		return;
	ret = f <= GUEST_NR_STATES
		      ? cpuhp_set_fail(&hp_machine, cpu, (int)f - 1)
		      : -EINVAL;
	printk("hotplug: cpu %u: host injects a fault at %d (%s): %d\n", cpu,
	       (int)f - 1, hp_state_name((int)f - 1), ret);
}

/*
 * _OST under QEMU, as an OSPM evaluates it after handling a Notify: the
 * notify code (1 device check for an insert, 3 eject request for a
 * removal) and the ACPI status code.  hotvm gets its reports instead.
 */
static void hp_ost(unsigned int cpu, u32 event, u32 status)
{
	if (hp_qemu)
		hpio_ost(&hp_io, hp_sel[cpu], event, status);
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
	hp_bringup_batch(cpus, nr, results);
	us = tsc_to_us(rdtsc() - t0);
	for (unsigned int i = 0; i < nr; i++) {
		hp_report_done(cpus[i], true, results[i]);
		hp_ost(cpus[i], HP_OST_EV_DEVICE_CHECK,
		       results[i] ? HP_OST_FAILURE : HP_OST_SUCCESS);
		if (results[i] || cmdline.verbose)
			printk("hotplug: cpu %u (APIC ID %u) up: %d (%lu us "
			       "for %u, ap-starting overlaps %u)\n",
			       cpus[i], percpu[cpus[i]].apic_id, results[i], us,
			       nr, hp_starting_overlaps(cpus[i], cpus, nr));
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
		hp_report_done(0, false, -EPERM);
		hp_ost(0, HP_OST_EV_EJECT_REQUEST, HP_OST_EJECT_UNSUPPORTED);
		return;
	}
	hp_take_fault((unsigned int)cpu);
	seen = hp_done[cpu];
	t0 = rdtsc();
	ret = cpuhp_cpu_down(&hp_machine, (unsigned int)cpu, CPUHP_OFFLINE);
	if (hp_done[cpu] == seen)
		hp_report_done((unsigned int)cpu, false, ret);
	if (ret) {
		/* The host sees DONE+FAILED and fails the removal itself. */
		printk("hotplug: cpu %d down failed: %d, not ejected\n", cpu,
		       ret);
		hp_ost((unsigned int)cpu, HP_OST_EV_EJECT_REQUEST,
		       HP_OST_DEVICE_BUSY);
		return;
	}
	cpumask_clear(&hp_present, (unsigned int)cpu);
	hpio_eject(&hp_io, sel);
	hp_ost((unsigned int)cpu, HP_OST_EV_EJECT_REQUEST, HP_OST_SUCCESS);
	if (cmdline.verbose)
		printk("hotplug: cpu %d (APIC ID %u) down and ejected (%lu "
		       "us)\n",
		       cpu, percpu[cpu].apic_id, tsc_to_us(rdtsc() - t0));
}

void hotplug_eject_own(void)
{
	for (unsigned int c = smp_nr_possible; c-- > 1;)
		if (cpumask_test(&cpu_online_mask, c)) {
			hp_remove(hp_sel[c]);
			return;
		}
	printk("hotplug: no AP online to eject\n");
}

/*
 * The ring's mailbox instead of the register scan: the selectors whose
 * bit the host set, in order, each taken (and so cleared) at once.
 */
static void hp_mailbox_scan(enum gring_box box, u32 *sels, unsigned int *nr)
{
	*nr = 0;
	for (unsigned int w = 0; w * 64 < hp_io.nr_sel; w++) {
		u64 bits = gring_take(box, w);

		for (unsigned int b = 0; bits && b < 64; b++, bits >>= 1)
			if ((bits & 1) && w * 64 + b < hp_io.nr_sel &&
			    *nr < GUEST_MAX_CPUS)
				sels[(*nr)++] = w * 64 + b;
	}
}

static void hp_cpu_event(void)
{
	static u32 ins[GUEST_MAX_CPUS], rm[GUEST_MAX_CPUS];
	unsigned int nr_ins, nr_rm;

	if (gring_active()) {
		hp_mailbox_scan(GRING_INSERT, ins, &nr_ins);
		hp_mailbox_scan(GRING_REMOVE, rm, &nr_rm);
	} else {
		hpio_scan(&hp_io, ins, &nr_ins, rm, &nr_rm, GUEST_MAX_CPUS);
	}
	hp_insert(ins, nr_ins);
	for (unsigned int i = 0; i < nr_rm; i++)
		hp_remove(rm[i]);
}

/* ABI_GED_EVT_GUEST: the host set guest-side targets (command 0x12). */
static void hp_targets(void)
{
	for (unsigned int c = 0; c < smp_nr_possible; c++) {
		u32 sel = hp_sel[c], t, seen;
		bool recover;
		int target, ret;

		hp_take_fault(c);
		if (gring_active() && !gring_test_clear(GRING_TARGET, sel))
			continue;
		t = hpio_ext_read(&hp_io, sel, ABI_CPUHP_CMD_GUEST_TARGET);
		if (!t)
			continue;
		recover = t & ABI_GUEST_TARGET_RECOVER;
		t &= ~ABI_GUEST_TARGET_RECOVER;
		target = (int)t - 1;
		if (c == 0 && target == GUEST_ONLINE && !recover) {
			/* Where the boot CPU always is: a no-op. */
			hp_report_done(c, true, 0);
			continue;
		}
		if (c == 0 || t > GUEST_NR_STATES || !t) {
			printk("hotplug: cpu %u: target %d refused\n", c,
			       target);
			hp_report_done(c, false, -EINVAL);
			continue;
		}
		if (target > CPUHP_OFFLINE &&
		    !(hpio_read_flags(&hp_io, sel) & ABI_CPUHP_F_ENABLED)) {
			printk("hotplug: cpu %u: target %d (%s) refused: not "
			       "plugged\n",
			       c, target, hp_state_name(target));
			hp_report_done(c, true, -ENODEV);
			continue;
		}
		if (recover) {
			/* The host's cpuhp-recover: the rollback failure was
			 * dealt with; walk it again. */
			ret = cpuhp_clear_broken(&hp_machine, c);
			printk("hotplug: cpu %u: broken mark cleared: %d\n", c,
			       ret);
		}
		seen = hp_done[c];
		ret = cpuhp_set_target(&hp_machine, c, target);
		if (hp_done[c] == seen)
			hp_report_done(c, true, ret);
		if (ret || cmdline.verbose)
			printk("hotplug: cpu %u: target %d (%s): %d\n", c,
			       target, hp_state_name(target), ret);
	}
}

/* An exception with no IDT to deliver it through: a shutdown. */
static void triple_fault(void)
{
	static const struct {
		u16 limit;
		u64 base;
	} __attribute__((packed)) none = { 0, 0 };

	local_irq_disable();
	asm volatile("lidt %0; int3" : : "m"(none));
}

/* The power button, as an OS's power-key handler, per pwrbtn=. */
static void hp_power_button(void)
{
	static const char *const what[] = { "powering off", "rebooting",
					    "triple fault", "ignored",
					    "ejecting a CPU" };

	printk("power button: %s\n", what[cmdline.pwrbtn]);
	switch (cmdline.pwrbtn) {
	case CMDLINE_PWRBTN_POWEROFF:
		outb(ABI_PM_PORT + ABI_PM_SLEEP_CTL,
		     ABI_PM_SLP_EN |
			     (ABI_PM_SLP_TYP_S5 << ABI_PM_SLP_TYP_SHIFT));
		break;
	case CMDLINE_PWRBTN_REBOOT:
		outb(ABI_PM_PORT + ABI_PM_RESET, ABI_PM_RESET_VALUE);
		break;
	case CMDLINE_PWRBTN_TRIPLE_FAULT:
		triple_fault();
		break;
	case CMDLINE_PWRBTN_IGNORE:
		break;
	case CMDLINE_PWRBTN_EJECT:
		hotplug_eject_own();
		break;
	}
}

void hotplug_work(void)
{
	u32 ev = ged_take();

	if (ev & ABI_GED_EVT_CPU)
		hp_cpu_event();
	if (ev & ABI_GED_EVT_GUEST)
		hp_targets();
	if (ev & ABI_GED_EVT_PWRBTN)
		hp_power_button();
	ev &= ~(u32)(ABI_GED_EVT_CPU | ABI_GED_EVT_GUEST | ABI_GED_EVT_PWRBTN);
	if (ev)
		printk("hotplug: GED events 0x%x not handled\n", ev);
	/* The end of the work: one doorbell, if the host has not read it. */
	gring_flush();
}
