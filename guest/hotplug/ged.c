// SPDX-License-Identifier: GPL-2.0-only
/* GED interrupt: see ged.h. */
#include <errno.h>

#include "ged.h"
#include "hotvm/regs.h"
#include "idt.h"
#include "ioapic.h"
#include "lapic.h"
#include "percpu.h"
#include "printf.h"

static volatile u32 *ged_reg;
static u32 ged_events; /* pending for the idle loop; atomic ops only */

u32 ged_read(void)
{
	return ged_reg ? *ged_reg : 0;
}

void ged_note(u32 events)
{
	if (events && events != 0xffffffffu)
		__atomic_or_fetch(&ged_events, events, __ATOMIC_SEQ_CST);
}

u32 ged_take(void)
{
	return __atomic_exchange_n(&ged_events, 0, __ATOMIC_SEQ_CST);
}

bool ged_pending(void)
{
	return __atomic_load_n(&ged_events, __ATOMIC_RELAXED) != 0;
}

/*
 * Edge-triggered: the EOI can come right after the read.  An event the
 * VMM raises after our read comes with a new edge, and a raise whose bits
 * we already took leaves a spurious edge that reads 0: both harmless.
 */
static void ged_irq(struct idt_regs *regs)
{
	u32 ev = ged_read();

	(void)regs;
	lapic_eoi();
	ged_note(ev);
}

int ged_init(u64 base, unsigned int gsi, u64 ioapic, bool ignore)
{
	unsigned int nr_rte;
	int ret;

	_Static_assert(ABI_GED_EVENT_WIDTH == sizeof(*ged_reg), "GED width");
	ged_reg = (volatile u32 *)(uintptr_t)(base + ABI_GED_EVENT);
	nr_rte = ioapic_init(ioapic);
	if (!nr_rte) {
		printk("ged: no I/O APIC at 0x%lx: no hotplug interrupt\n",
		       ioapic);
		return -ENODEV;
	}
	if (ignore) {
		ioapic_mask(gsi);
		printk("ged: ignore-hotplug: GSI %u stays masked\n", gsi);
		return 0;
	}
	idt_set_handler(VEC_GED, ged_irq);
	ret = ioapic_route_edge(gsi, VEC_GED, percpu[0].apic_id);
	if (ret) {
		printk("ged: cannot route GSI %u (I/O APIC has %u pins) to "
		       "APIC ID %u: %d\n",
		       gsi, nr_rte, percpu[0].apic_id, ret);
		return ret;
	}
	/* An edge before the route existed is lost: look once by hand. */
	ged_note(ged_read());
	return 0;
}
