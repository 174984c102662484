// SPDX-License-Identifier: GPL-2.0-only
/* GPE0 and the SCI: see gpe.h. */
#include <errno.h>

#include "ged.h"
#include "gpe.h"
#include "hotvm/abi.h"
#include "idt.h"
#include "ioapic.h"
#include "lapic.h"
#include "percpu.h"
#include "platform.h"
#include "printf.h"
#include "tsc.h"

#define PM1_CNT_SCI_EN	   0x01
#define GPE_ACPI_ENABLE_MS 100
/* An SCI line that stays up with nothing of ours: give up on it. */
#define GPE_MAX_EMPTY 10000

static u16 gpe_sts; /* port of the status byte holding our bit */
static u16 gpe_en;  /* ... and of its enable byte */
static u8 gpe_mask;
static u32 gpe_gsi;
static u32 gpe_empty_run;
/*
 * Take our status bit: write-1-to-clear, and only that bit.  It happens
 * before the EOI, so the level-triggered line is down by then; an event
 * QEMU raises after the clear sets the bit again, and with it the line.
 */
static bool gpe_take(void)
{
	if (!(inb(gpe_sts) & gpe_mask))
		return false;
	outb(gpe_sts, gpe_mask);
	ged_note(ABI_GED_EVT_CPU);
	return true;
}

static void gpe_irq(struct idt_regs *regs)
{
	(void)regs;
	if (gpe_take()) {
		gpe_empty_run = 0;
	} else {
		if (++gpe_empty_run == GPE_MAX_EMPTY) {
			/* Someone else's event keeps the line up. */
			ioapic_mask(gpe_gsi);
			printk("gpe: SCI stuck with GPE0 bit clear: masked\n");
		}
	}
	lapic_eoi();
}

/* Linux's acpi_enable(): ACPI_ENABLE to SMI_CMD, wait for SCI_EN. */
static void gpe_acpi_mode(void)
{
	u16 cnt = (u16)platform.pm1a_cnt;
	u64 end;

	if (!cnt || (inb(cnt) & PM1_CNT_SCI_EN))
		return;
	if (!platform.smi_cmd || !platform.acpi_enable) {
		printk("gpe: SCI_EN clear and no SMI_CMD: trying anyway\n");
		return;
	}
	outb((u16)platform.smi_cmd, platform.acpi_enable);
	end = rdtsc() + tsc_khz * GPE_ACPI_ENABLE_MS;
	while (!(inb(cnt) & PM1_CNT_SCI_EN)) {
		if (rdtsc() > end) {
			printk("gpe: ACPI mode not entered after %u ms\n",
			       GPE_ACPI_ENABLE_MS);
			return;
		}
		cpu_relax();
	}
}

int gpe_init(unsigned int bit, u64 ioapic, bool ignore)
{
	unsigned int half = platform.gpe0_len / 2, nr_rte;
	int ret;

	if (!platform.gpe0_blk || bit / 8 >= half)
		return -ENODEV;
	gpe_sts = (u16)(platform.gpe0_blk + bit / 8);
	gpe_en = (u16)(platform.gpe0_blk + half + bit / 8);
	gpe_mask = (u8)(1u << (bit % 8));
	gpe_gsi = platform.sci_gsi;

	nr_rte = ioapic_init(ioapic);
	if (!nr_rte) {
		printk("gpe: no I/O APIC at 0x%lx: no SCI\n", ioapic);
		return -ENODEV;
	}
	gpe_acpi_mode();
	if (ignore) {
		ioapic_mask(gpe_gsi);
		printk("gpe: ignore-hotplug: SCI (GSI %u) stays masked\n",
		       gpe_gsi);
		return 0;
	}
	idt_set_handler(VEC_SCI, gpe_irq);
	ret = ioapic_route(gpe_gsi, VEC_SCI, percpu[0].apic_id,
			   platform.sci_level, platform.sci_active_low);
	if (ret) {
		printk("gpe: cannot route SCI (GSI %u, I/O APIC has %u pins) "
		       "to APIC ID %u: %d\n",
		       gpe_gsi, nr_rte, percpu[0].apic_id, ret);
		return ret;
	}
	outb(gpe_en, inb(gpe_en) | gpe_mask);
	/* An event from before the enable left the bit set: take it now. */
	gpe_take();
	printk("gpe: GPE0 bit %u (status 0x%x, enable 0x%x), SCI GSI %u %s "
	       "active %s\n",
	       bit, gpe_sts, gpe_en, gpe_gsi,
	       platform.sci_level ? "level" : "edge",
	       platform.sci_active_low ? "low" : "high");
	return 0;
}
