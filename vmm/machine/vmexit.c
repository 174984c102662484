// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exit counters (vmexit.h).  Relaxed atomics: a count is a statistic, read
 * while vCPUs run; no other memory is ordered by it.
 */
#include <stdio.h>
#include <time.h>

#include "vmexit.h"

static const char *const kind_names[VMEXIT_NR] = {
	[VMEXIT_PIO] = "pio",	  [VMEXIT_MMIO] = "mmio",
	[VMEXIT_HLT] = "hlt",	  [VMEXIT_SHUTDOWN] = "shutdown",
	[VMEXIT_OTHER] = "other",
};

const char *vmexit_kind_name(enum vmexit_kind k)
{
	return k < VMEXIT_NR ? kind_names[k] : "?";
}

void vmexit_count(struct vmexit_counters *c, enum vmexit_kind k, int dev)
{
	if (k >= VMEXIT_NR)
		k = VMEXIT_OTHER;
	atomic_fetch_add_explicit(&c->kind[k], 1, memory_order_relaxed);
	if (k != VMEXIT_PIO && k != VMEXIT_MMIO)
		return;
	if (dev < 0 || dev >= BUS_MAX_DEVS)
		dev = VMEXIT_DEV_UNCLAIMED;
	atomic_fetch_add_explicit(
		&c->dev[k == VMEXIT_PIO ? VMEXIT_SPACE_PIO : VMEXIT_SPACE_MMIO]
		       [dev],
		1, memory_order_relaxed);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t))
		return 0;
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

uint64_t vmexit_clock(struct vmexit_counters *c)
{
	uint64_t t;

	if (!atomic_load_explicit(&c->timing, memory_order_relaxed))
		return 0;
	atomic_fetch_add(&c->inflight, 1);
	t = thread_cpu_ns();
	return t ? t : 1; /* 0 says "not timed" */
}

void vmexit_time(struct vmexit_counters *c, uint64_t t0)
{
	uint64_t t1;

	if (!t0)
		return;
	t1 = thread_cpu_ns();
	if (t1 > t0)
		atomic_fetch_add_explicit(&c->handled_ns, t1 - t0,
					  memory_order_relaxed);
	atomic_fetch_sub(&c->inflight, 1);
}

bool vmexit_settled(const struct vmexit_counters *c)
{
	return atomic_load(&c->inflight) <= 0;
}

void vmexit_timing(struct vmexit_counters *c, bool on)
{
	atomic_fetch_add_explicit(&c->timing, on ? 1 : -1,
				  memory_order_relaxed);
}

void vmexit_read(const struct vmexit_counters *c, struct vmexit_counts *out)
{
	out->handled_ns =
		atomic_load_explicit(&c->handled_ns, memory_order_relaxed);
	for (unsigned int k = 0; k < VMEXIT_NR; k++)
		out->kind[k] =
			atomic_load_explicit(&c->kind[k], memory_order_relaxed);
	for (unsigned int s = 0; s < VMEXIT_SPACES; s++)
		for (unsigned int i = 0; i < VMEXIT_DEVS; i++)
			out->dev[s][i] = atomic_load_explicit(
				&c->dev[s][i], memory_order_relaxed);
}

void vmexit_sub(struct vmexit_counts *a, const struct vmexit_counts *b)
{
	a->handled_ns -= b->handled_ns;
	for (unsigned int k = 0; k < VMEXIT_NR; k++)
		a->kind[k] -= b->kind[k];
	for (unsigned int s = 0; s < VMEXIT_SPACES; s++)
		for (unsigned int i = 0; i < VMEXIT_DEVS; i++)
			a->dev[s][i] -= b->dev[s][i];
}

uint64_t vmexit_total(const struct vmexit_counts *c)
{
	uint64_t n = 0;

	for (unsigned int k = 0; k < VMEXIT_NR; k++)
		n += c->kind[k];
	return n;
}

const char *vmexit_dev_name(const struct vmexit_counters *c,
			    enum vmexit_space space, unsigned int i, char *buf,
			    size_t len)
{
	const struct bus *bus =
		c && space < VMEXIT_SPACES ? c->bus[space] : NULL;
	const char *sp = space == VMEXIT_SPACE_PIO ? "pio" : "mmio";

	if (i == VMEXIT_DEV_UNCLAIMED)
		snprintf(buf, len, "%s-unclaimed", sp);
	else if (bus && i < bus->nr)
		/* The base too: two UARTs share a name, not a window. */
		snprintf(buf, len, "%s@0x%llx",
			 bus->devs[i].name ? bus->devs[i].name : sp,
			 (unsigned long long)bus->devs[i].base);
	else
		snprintf(buf, len, "%s-device-%u", sp, i);
	return buf;
}
