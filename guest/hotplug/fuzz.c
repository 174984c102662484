// SPDX-License-Identifier: GPL-2.0-only
/*
 * Register fuzzing: see fuzz.h.  The point is to hurt the VMM, not the
 * guest, so a few writes are aimed rather than random:
 *  - a flags write (which can clear insert/remove or eject) first selects
 *    CPU 0 or an out-of-range selector, and an eject goes to CPU 0 or to
 *    a CPU the guest has offline: ejecting a CPU the guest still runs
 *    would break the guest, not test the VMM;
 *  - a read of the GED event register consumes events, so what it finds
 *    is handed to the hotplug worker.
 * Everything else is fair game, including fake guest-state reports and
 * OST writes: a host operation that overlaps the fuzzing may fail, and
 * that is the host's to survive.  After "fuzz: done" the guest is clean.
 */
#include "cpuhp_table.h"
#include "fuzz.h"
#include "ged.h"
#include "hotplug.h"
#include "hotvm/abi.h"
#include "platform.h"
#include "printf.h"
#include "smp.h"

#define FUZZ_CHUNK 64
#define FUZZ_SLACK 4 /* bytes probed either side of each window */

static u64 fz_state;
static unsigned int fz_left, fz_total;
static u32 fz_reads, fz_writes, fz_events;

u64 fuzz_xorshift64(u64 *state)
{
	u64 x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

static u64 rnd(void)
{
	return fuzz_xorshift64(&fz_state);
}

static u64 raw_read(u64 addr, unsigned int width)
{
	fz_reads++;
	switch (width) {
	case 1:
		return *(volatile u8 *)(uintptr_t)addr;
	case 2:
		return *(volatile u16 *)(uintptr_t)addr;
	case 4:
		return *(volatile u32 *)(uintptr_t)addr;
	}
	return *(volatile u64 *)(uintptr_t)addr;
}

static void raw_write(u64 addr, unsigned int width, u64 v)
{
	fz_writes++;
	switch (width) {
	case 1:
		*(volatile u8 *)(uintptr_t)addr = (u8)v;
		break;
	case 2:
		*(volatile u16 *)(uintptr_t)addr = (u16)v;
		break;
	case 4:
		*(volatile u32 *)(uintptr_t)addr = (u32)v;
		break;
	default:
		*(volatile u64 *)(uintptr_t)addr = v;
	}
}

static u64 hp_reg(unsigned int off)
{
	return platform.cpuhp_base + off;
}

/* CPU 0 or past the end: a flags write there cannot hurt a hotplug. */
static void select_harmless(void)
{
	u32 sel = rnd() & 1 ? hotplug_sel_of(0)
			    : smp_nr_possible + (u32)(rnd() % 64);

	raw_write(hp_reg(ABI_CPUHP_SELECTOR), 4, sel);
}

/* A CPU the guest has offline (so not one it is running), else CPU 0. */
static u32 offline_cpu_sel(void)
{
	unsigned int start = (unsigned int)(rnd() % smp_nr_possible);

	for (unsigned int i = 0; i < smp_nr_possible; i++) {
		unsigned int c = (start + i) % smp_nr_possible;
		struct cpuhp_cpu st;

		if (c && !cpuhp_cpu_info(&hp_machine, c, &st) &&
		    st.state == CPUHP_OFFLINE)
			return hotplug_sel_of(c);
	}
	return hotplug_sel_of(0);
}

static void fuzz_one(void)
{
	static const unsigned int widths[4] = { 1, 2, 4, 8 };
	u64 r = rnd();
	bool ged = r & 1;
	u64 base = ged ? platform.ged_base : platform.cpuhp_base;
	unsigned int size = ged ? ABI_GED_SIZE : ABI_CPUHP_SIZE;
	unsigned int width = widths[(r >> 8) & 3];
	int off = (int)((r >> 16) % (size + 2 * FUZZ_SLACK)) - FUZZ_SLACK;
	u64 v = rnd();

	switch ((r >> 1) % 16) {
	case 0:
	case 1:
	case 2:
		v = raw_read(base + (u64)(int64_t)off, width);
		if (ged && off == 0 && width == 4 && v) {
			fz_events++;
			ged_note((u32)v);
		}
		return;
	case 3: /* every command number, known or not */
		raw_write(hp_reg(ABI_CPUHP_COMMAND), 1, v & 0xff);
		return;
	case 4: /* in range, just past it, or anything */
		raw_write(hp_reg(ABI_CPUHP_SELECTOR), 4,
			  v & 1 ? (v >> 8) % (smp_nr_possible + 4) : v >> 32);
		return;
	case 5: /* eject of the boot CPU: must be refused */
		raw_write(hp_reg(ABI_CPUHP_SELECTOR), 4, hotplug_sel_of(0));
		raw_write(hp_reg(ABI_CPUHP_FLAGS), 1, ABI_CPUHP_F_EJECT);
		return;
	case 6: /* eject of a CPU nobody is removing: must be refused */
		raw_write(hp_reg(ABI_CPUHP_SELECTOR), 4, offline_cpu_sel());
		raw_write(hp_reg(ABI_CPUHP_FLAGS), 1, ABI_CPUHP_F_EJECT);
		return;
	case 7: /* a command, then its data */
		raw_write(hp_reg(ABI_CPUHP_COMMAND), 1, v & 0xff);
		if (v & 0x100)
			raw_read(hp_reg(ABI_CPUHP_DATA), 4);
		else /* half the time a well-formed guest-state word */
			raw_write(hp_reg(ABI_CPUHP_DATA), 4,
				  v & 0x200 ? (v >> 16) & 0xfff : v >> 32);
		return;
	default:
		if (!ged && off == ABI_CPUHP_FLAGS && width == 1)
			select_harmless();
		raw_write(base + (u64)(int64_t)off, width, v);
		return;
	}
}

void fuzz_init(unsigned int iterations)
{
	fz_state = rdtsc() ^ 0x9e3779b97f4a7c15ull;
	if (!fz_state)
		fz_state = 1;
	fz_left = fz_total = iterations;
	printk("fuzz: seed 0x%lx, %u iterations on GED 0x%lx and register "
	       "block 0x%lx\n",
	       fz_state, iterations, platform.ged_base, platform.cpuhp_base);
}

bool fuzz_pending(void)
{
	return fz_left != 0;
}

void fuzz_step(void)
{
	struct hpio *io = hotplug_io();

	hpio_lock(io);
	for (unsigned int i = 0; i < FUZZ_CHUNK && fz_left; i++, fz_left--)
		fuzz_one();
	/* We moved the selector and the command behind hpio's back. */
	hpio_invalidate(io);
	hpio_unlock(io);
	if (!fz_left)
		printk("fuzz: done: %u iterations, %u reads, %u writes, %u "
		       "GED events read\n",
		       fz_total, fz_reads, fz_writes, fz_events);
}
