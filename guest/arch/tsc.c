// SPDX-License-Identifier: GPL-2.0-only
/*
 * TSC frequency, for delays and timeouts.  CPUID's frequency leaves are
 * unreliable under emulation (TCG's rdtsc runs at the host's rate whatever
 * CPUID says), so measure it against the LAPIC timer, which both KVM and
 * QEMU clock at 1 GHz (one count per nanosecond at divide-by-1).
 */
#include "lapic.h"
#include "printf.h"
#include "tsc.h"

#define APIC_BUS_KHZ 1000000 /* 1 GHz */
#define CALIB_COUNTS 2000000 /* 2 ms */

u64 tsc_khz = 3000000; /* until calibrated: a guess that errs long */

void tsc_init(void)
{
	u32 start = 0xffffffff;
	u64 t0, t1;
	u32 now;

	lapic_calib_start(start);
	t0 = rdtsc();
	do {
		now = lapic_calib_count();
	} while (start - now < CALIB_COUNTS && now);
	t1 = rdtsc();
	lapic_calib_stop();
	if (start - now >= CALIB_COUNTS && t1 > t0)
		tsc_khz = (t1 - t0) * APIC_BUS_KHZ / (start - now);
	if (tsc_khz < 100000) /* below 100 MHz is not believable */
		tsc_khz = 3000000;
}

void udelay(u64 us)
{
	u64 end = tsc_deadline_us(us);

	while (!tsc_passed(end))
		cpu_relax();
}
