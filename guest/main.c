// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tiny guest's boot CPU: from the PVH entry to "ready", then the
 * command line's action.
 */
#include "cmdline.h"
#include "cpuhp_table.h"
#include "fuzz.h"
#include "hotplug.h"
#include "hotvm/abi.h"
#include "idt.h"
#include "lapic.h"
#include "platform.h"
#include "printf.h"
#include "pvh.h"
#include "selftest.h"
#include "serial.h"
#include "smp.h"
#include "tsc.h"

/* 16 TiB: canonical, but far above the 4 GiB identity map. */
#define UNMAPPED_ADDR 0x100000000000UL

static int crash(void *arg)
{
	(void)arg;
	return *(volatile int *)UNMAPPED_ADDR;
}

/*
 * The boot CPU's idle loop: hotplug work first, then a chunk of fuzzing,
 * else halt.  The check and the halt happen with interrupts off, and
 * "sti; hlt" cannot lose an interrupt in between.
 */
static void __noreturn idle(void)
{
	for (;;) {
		local_irq_disable();
		if (hotplug_pending()) {
			local_irq_enable();
			hotplug_work();
		} else if (fuzz_pending()) {
			local_irq_enable();
			fuzz_step();
		} else {
			safe_halt();
		}
	}
}

void __noreturn guest_main(u32 start_info);

void __noreturn guest_main(u32 start_info)
{
	static unsigned int aps[GUEST_MAX_CPUS];
	unsigned int nr_possible, nr_aps = 0;
	u64 t0 = rdtsc(), t1;
	int ret;

	serial_init();
	ret = pvh_init(start_info);
	printk("hotvm-tiny: PVH start_info at 0x%x%s\n", start_info,
	       ret ? " is not valid" : "");
	cmdline_parse(boot_info.cmdline);
	printk("hotvm-tiny: cmdline '%s'\n", boot_info.cmdline);

	idt_init();
	lapic_detect();
	lapic_setup();
	tsc_init();
	printk("hotvm-tiny: %s mode%s, TSC %lu kHz, %lu MiB RAM\n",
	       lapic_x2apic() ? "x2APIC" : "xAPIC",
	       lapic_pv_eoi() ? ", PV EOI" : "", tsc_khz,
	       boot_info.ram_bytes >> 20);

	if (cmdline.nofdt)
		boot_info.fdt_paddr = 0;
	if (platform_init()) {
		printk("hotvm-tiny: no FDT and no MADT: running on one CPU\n");
		platform.source = "none";
	}
	nr_possible = smp_init();
	printk("hotvm-tiny: platform from %s: %u possible CPUs, boot APIC ID "
	       "%u\n",
	       platform.source, nr_possible, percpu[0].apic_id);

	ret = hp_init(nr_possible, cmdline.trace, hotplug_report);
	if (ret) {
		printk("hotvm-tiny: cpuhp table rejected: %d\n", ret);
		guest_exit(ABI_EXIT_PANIC);
	}
	hp_print_online();
	hotplug_init(cmdline.ignore_hotplug);
	/*
	 * Interrupts on from here: every vector in use has its handler, and
	 * the boot CPU's waits for its APs halt until an AP wakes it
	 * (smp.c) instead of spinning, the boot's bring-up too.
	 */
	local_irq_enable();

	for (unsigned int c = 1; c < nr_possible; c++)
		if (percpu[c].boot_present)
			aps[nr_aps++] = c;
	ret = hp_bringup(aps, nr_aps, !cmdline.serial_bringup);
	if (ret)
		printk("hotvm-tiny: bring-up of some CPUs failed: %d\n", ret);

	t1 = rdtsc();
	printk("ready: %u cpus online, %u possible (%lu us)\n",
	       cpumask_weight(&cpu_online_mask), nr_possible,
	       tsc_to_us(t1 - t0));

	if (cmdline.crash)
		crash(NULL);
	if (cmdline.crash_ap && cpumask_test(&cpu_online_mask, 1))
		smp_call_on_cpu(1, crash, NULL);
	if (cmdline.selftest)
		guest_exit(selftest_run() ? ABI_EXIT_FAILURE
					  : ABI_EXIT_SUCCESS);
	if (cmdline.exit)
		guest_exit(ret ? ABI_EXIT_FAILURE : ABI_EXIT_SUCCESS);
	if (cmdline.fuzz_regs)
		fuzz_init(cmdline.fuzz_regs);
	idle();
}
