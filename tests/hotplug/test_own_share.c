// SPDX-License-Identifier: GPL-2.0-only
/*
 * hotvm's own share of an operation (struct hp_report's own_ns, each host
 * step's own_ns; docs/design.md §14) on the real controller over the API
 * tests' fake machine: it is there, it never exceeds the time it is part
 * of, and it leaves out the time the operation sleeps waiting for the
 * guest, here a guest that never answers an eject, so the wait lasts the
 * whole timeout.
 */
#include <errno.h>

#include "check.h"
#include "fake_vm.h"
#include "hotplug.h"
#include "hotvm/guest_states.h"
#include "sim_guest.h"
#include "vmexit.h"

#define MAX	  4
#define T_WAIT_MS 400

static struct fake_vm *fv;

/* The host steps' own time, summed, and each no more than the report's. */
static uint64_t host_own(const struct hp_report *rep)
{
	uint64_t sum = 0;

	CHECK(rep->n > 0);
	for (unsigned int i = 0; i < rep->n; i++) {
		const struct hp_step_time *st = &rep->steps[i];

		if (st->side == HP_SIDE_GUEST) {
			CHECK_EQ(st->own_ns, 0);
			continue;
		}
		CHECK(st->own_ns <= rep->own_ns);
		sum += st->own_ns;
	}
	CHECK(sum <= rep->own_ns);
	CHECK(rep->own_ns <= rep->total_ns);
	return sum;
}

/* A hot-add and a removal that go well: own <= total, host steps in it. */
static void test_add_remove(void)
{
	struct hp_report rep = { 0 };
	struct hp_own_stats st[HP_OP_KINDS];

	CHECK_EQ(fake_vm_create(MAX, 1, T_WAIT_MS, &fv), 0);
	CHECK_EQ(
		hotplug_cpu_add(fv->hp, 1, "c1", 0, HOTPLUG_WAIT_DEFAULT, &rep),
		0);
	CHECK(host_own(&rep) > 0);
	CHECK(rep.own_ns > 0);
	CHECK_EQ(hotplug_cpu_remove(fv->hp, 1, 0, &rep), 0);
	host_own(&rep);
	hotplug_own_stats(fv->hp, st);
	CHECK_EQ(st[HP_OP_ADD].ops, 1);
	CHECK_EQ(st[HP_OP_REMOVE].ops, 1);
	CHECK_EQ(st[HP_OP_TARGET].ops, 0);
	CHECK(st[HP_OP_REMOVE].own_ns >= rep.own_ns);
	CHECK(st[HP_OP_ADD].own_ns <= st[HP_OP_ADD].wall_ns);
	CHECK(st[HP_OP_ADD].exits > 0); /* the scripted guest's MMIO */
	fake_vm_destroy(fv);
}

/*
 * A guest that does not eject: guest:ap-starting's teardown waits the
 * whole timeout for it.  That step's time holds the wait; its own share,
 * and the operation's, do not.
 */
static void test_wait_left_out(void)
{
	struct hp_report rep = { 0 };
	const struct hp_step_time *wait = NULL;

	CHECK_EQ(fake_vm_create(MAX, 1, T_WAIT_MS, &fv), 0);
	CHECK_EQ(
		hotplug_cpu_add(fv->hp, 2, "c2", 0, HOTPLUG_WAIT_DEFAULT, &rep),
		0);
	sim_guest_keep(2, true);
	CHECK_EQ(hotplug_cpu_remove(fv->hp, 2, T_WAIT_MS, &rep), -ETIMEDOUT);
	for (unsigned int i = 0; i < rep.n; i++)
		if (rep.steps[i].side == HP_SIDE_HOST &&
		    rep.steps[i].state == HOST_AP_STARTING && !rep.steps[i].up)
			wait = &rep.steps[i];
	CHECK(wait);
	if (wait) {
		CHECK_EQ(wait->ret, -ETIMEDOUT);
		CHECK(wait->ns >= T_WAIT_MS * 1000000ull);
		CHECK(wait->own_ns * 4 < wait->ns);
	}
	host_own(&rep);
	CHECK(rep.total_ns >= T_WAIT_MS * 1000000ull);
	CHECK(rep.own_ns * 4 < rep.total_ns);
	sim_guest_keep(2, false);
	fake_vm_destroy(fv);
}

/*
 * --prestage: the pool's refill after a hot-add took from it is counted
 * as its own kind, not as the hot-add's (nor as a set-target's).
 */
static void test_prestage_apart(void)
{
	struct hp_report rep = { 0 };
	struct hp_own_stats st[HP_OP_KINDS];

	fake_vm_prestage = 1;
	CHECK_EQ(fake_vm_create(MAX, 1, T_WAIT_MS, &fv), 0);
	fake_vm_prestage = 0;
	hotplug_own_stats(fv->hp, st);
	CHECK_EQ(st[HP_OP_PRESTAGE].ops, 1); /* the pool's first fill */
	CHECK_EQ(
		hotplug_cpu_add(fv->hp, 1, "c1", 0, HOTPLUG_WAIT_DEFAULT, &rep),
		0);
	host_own(&rep);
	hotplug_own_stats(fv->hp, st);
	CHECK_EQ(st[HP_OP_ADD].ops, 1);
	CHECK_EQ(st[HP_OP_PRESTAGE].ops, 2); /* refilled behind it */
	CHECK_EQ(st[HP_OP_TARGET].ops, 0);
	CHECK(st[HP_OP_PRESTAGE].own_ns <= st[HP_OP_PRESTAGE].wall_ns);
	fake_vm_destroy(fv);
}

/*
 * The exits' share (vmexit.h): timed on the handling thread's CPU clock
 * only while an operation asks, and an exit still being handled keeps the
 * counters unsettled until its time is in.
 */
static void test_exit_time(void)
{
	struct vmexit_counters c = { 0 };
	struct vmexit_counts a, b;
	volatile unsigned long spin = 0;
	uint64_t t0;

	CHECK_EQ(vmexit_clock(&c), 0); /* no operation: not timed */
	CHECK(vmexit_settled(&c));
	vmexit_read(&c, &a);
	vmexit_timing(&c, true);
	t0 = vmexit_clock(&c);
	CHECK(t0 != 0);
	CHECK(!vmexit_settled(&c));
	for (unsigned long i = 0; i < 2000000; i++)
		spin += i;
	vmexit_time(&c, t0);
	CHECK(vmexit_settled(&c));
	vmexit_timing(&c, false);
	CHECK_EQ(vmexit_clock(&c), 0);
	vmexit_read(&c, &b);
	vmexit_sub(&b, &a);
	CHECK(b.handled_ns > 0);
	CHECK_EQ(vmexit_total(&b), 0); /* time is not a count */
}

CHECK_MAIN(TEST(test_add_remove), TEST(test_wait_left_out),
	   TEST(test_prestage_apart), TEST(test_exit_time))
