// SPDX-License-Identifier: GPL-2.0-only
/*
 * The controller's whole operations (vmm/hotplug/many.c, resize.c) with no
 * front end: bursts of hot-adds and hot-removals as one batch, and the
 * all-or-nothing resize, on the real controller over the fake machine of
 * the API tests (fake vCPUs, the scripted guest on the real GED and
 * register block).  What is checked is the policy a front end relies on:
 * who joins the batch, what runs alone afterwards and why, the order in
 * which results are told, where a CPU that fails ends, and the undo.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "fake_vm.h"
#include "hotplug.h"
#include "hotplug_many.h"
#include "hotvm/guest_states.h"
#include "sim_guest.h"

#define MAX	   5
#define T_GUEST_MS 300

/* What the done() callback was told, in order. */
struct told_one {
	unsigned int k, cpu;
	bool add, walk_back, has_rep;
	enum hotplug_phase phase;
	int rc;
};

struct told {
	unsigned int n;
	struct told_one r[32];
	int refuse_k; /* admit() refuses this request (-1: none) */
	unsigned int admitted;
};

static void told_done(void *ctx, const struct hotplug_result *r)
{
	struct told *t = ctx;

	if (t->n < sizeof(t->r) / sizeof(t->r[0]))
		t->r[t->n] = (struct told_one){
			.k = r->k,
			.cpu = r->cpu,
			.add = r->add,
			.walk_back = r->walk_back,
			.has_rep = r->rep != NULL,
			.phase = r->phase,
			.rc = r->rc,
		};
	t->n++;
}

static int told_admit(void *ctx, unsigned int k, enum hotplug_phase phase)
{
	struct told *t = ctx;

	(void)phase;
	t->admitted++;
	return (int)k == t->refuse_k ? -ECANCELED : 0;
}

static struct fake_vm *fv;

static void setup(unsigned int boot)
{
	if (fake_vm_create(MAX, boot, T_GUEST_MS, &fv))
		abort();
}

static void teardown(void)
{
	fake_vm_destroy(fv);
	fv = NULL;
}

static struct hp_cpu_view view(unsigned int cpu)
{
	struct hp_cpu_view v;

	CHECK_EQ(hotplug_cpu_view(fv->hp, cpu, &v), 0);
	return v;
}

static bool counted(unsigned int cpu)
{
	struct hp_cpu_view v = view(cpu);

	return hotplug_cpu_counted(&v);
}

static bool plugged(unsigned int cpu)
{
	struct hp_cpu_view v = view(cpu);

	return hotplug_cpu_plugged(&v);
}

/* Neither side has the CPU, and nothing is flagged. */
static void check_gone(unsigned int cpu)
{
	struct hp_cpu_view v = view(cpu);

	CHECK(!hotplug_cpu_plugged(&v));
	CHECK(!v.host.broken);
	CHECK(!v.disagree);
	CHECK_EQ(sim_guest_state(cpu), GUEST_OFFLINE);
}

/* Both sides run the CPU. */
static void check_running(unsigned int cpu)
{
	CHECK(counted(cpu));
	CHECK_EQ(sim_guest_state(cpu), GUEST_ONLINE);
}

/*
 * The batch takes the first request of each CPU and id; the others run
 * alone after it and get the answer they would have had one at a time.
 */
static void test_add_many(void)
{
	const struct hotplug_req reqs[] = {
		{ .cpu = 1, .id = "a" }, { .cpu = 2 },
		{ .cpu = 1, .id = "b" }, /* CPU 1 is the batch's */
		{ .cpu = 3, .id = "a" }, /* so is the id "a" */
		{ .cpu = 4, .id = "d" },
	};
	struct told t = { .refuse_k = -1 };
	struct hotplug_many_ops ops = { .ctx = &t, .done = told_done };
	int rcs[5];

	setup(1);
	CHECK_EQ(hotplug_add_many(fv->hp, reqs, 5, 0, &ops, rcs), 2);
	CHECK_EQ(t.n, 5);
	/* The batch first, in request order; then the ones left out. */
	CHECK_EQ(t.r[0].k, 0);
	CHECK_EQ(t.r[0].phase, HOTPLUG_PHASE_FINISH);
	CHECK_EQ(t.r[1].k, 1);
	CHECK_EQ(t.r[2].k, 4);
	CHECK_EQ(t.r[2].phase, HOTPLUG_PHASE_FINISH);
	CHECK_EQ(t.r[3].k, 2);
	CHECK_EQ(t.r[3].phase, HOTPLUG_PHASE_ALONE);
	CHECK_EQ(t.r[3].rc, -EEXIST);
	CHECK_EQ(t.r[4].k, 3);
	CHECK_EQ(t.r[4].phase, HOTPLUG_PHASE_ALONE);
	CHECK_EQ(t.r[4].rc, -EADDRINUSE);
	CHECK_EQ(rcs[0], 0);
	CHECK_EQ(rcs[1], 0);
	CHECK_EQ(rcs[2], -EEXIST);
	CHECK_EQ(rcs[3], -EADDRINUSE);
	CHECK_EQ(rcs[4], 0);
	for (unsigned int i = 0; i < 5; i++)
		CHECK(t.r[i].add);
	check_running(1);
	check_running(2);
	check_running(4);
	check_gone(3);
	CHECK_STREQ(view(1).id, "a");
	CHECK_STREQ(view(4).id, "d");
	/* A slot taken before the burst: refused by the first phase. */
	t = (struct told){ .refuse_k = -1 };
	CHECK_EQ(hotplug_add_many(fv->hp, reqs + 1, 1, 0, &ops, rcs), 1);
	CHECK_EQ(t.n, 1);
	CHECK_EQ(t.r[0].phase, HOTPLUG_PHASE_BEGIN);
	CHECK_EQ(t.r[0].rc, -EEXIST);
	CHECK(!t.r[0].has_rep);
	teardown();
}

/* The caller's admit() ends a request there: no done(), its rc kept. */
static void test_admit(void)
{
	const struct hotplug_req reqs[] = { { .cpu = 1 }, { .cpu = 2 } };
	struct told t = { .refuse_k = 1 };
	struct hotplug_many_ops ops = { .ctx = &t,
					.admit = told_admit,
					.done = told_done };
	int rcs[2];

	setup(1);
	CHECK_EQ(hotplug_add_many(fv->hp, reqs, 2, 0, &ops, rcs), 1);
	CHECK_EQ(t.admitted, 2);
	CHECK_EQ(t.n, 1);
	CHECK_EQ(t.r[0].cpu, 1);
	CHECK_EQ(rcs[0], 0);
	CHECK_EQ(rcs[1], -ECANCELED);
	check_running(1);
	check_gone(2);
	teardown();
}

/*
 * A CPU whose own walk fails inside the batch is walked back to offline
 * on both sides before its result is told; the others still finish.
 */
static void test_add_fault(void)
{
	const struct hotplug_req reqs[] = { { .cpu = 1 },
					    { .cpu = 2 },
					    { .cpu = 3 } };
	struct told t = { .refuse_k = -1 };
	struct hotplug_many_ops ops = { .ctx = &t, .done = told_done };
	int rcs[3];

	setup(1);
	CHECK_EQ(
		hotplug_inject(fv->hp, 2, HP_SIDE_HOST, HOST_AP_STARTING, NULL),
		0);
	CHECK_EQ(hotplug_add_many(fv->hp, reqs, 3, 0, &ops, rcs), 1);
	CHECK_EQ(t.n, 3);
	CHECK_EQ(t.r[1].cpu, 2);
	CHECK_EQ(t.r[1].phase, HOTPLUG_PHASE_FINISH);
	CHECK(t.r[1].rc != 0);
	CHECK(t.r[1].has_rep);
	CHECK(!t.r[1].walk_back); /* an add is back before it is told */
	check_running(1);
	check_gone(2);
	check_running(3);
	/* The slot is free again for the next add. */
	CHECK_EQ(hotplug_add_check(fv->hp, 2, NULL), 0);
	teardown();
}

/*
 * A removal the guest does not answer times out and goes back to online
 * after its result is told; the others of the batch are removed.
 */
static void test_remove_many(void)
{
	const struct hotplug_req reqs[] = {
		{ .cpu = 2 }, { .cpu = 3 }, { .cpu = 4 }, { .cpu = 3 }
	};
	struct told t = { .refuse_k = -1 };
	struct hotplug_many_ops ops = { .ctx = &t, .done = told_done };
	int rcs[4];

	setup(MAX);
	sim_guest_keep(3, true);
	CHECK_EQ(hotplug_remove_many(fv->hp, reqs, 4, T_GUEST_MS, &ops, rcs),
		 2);
	sim_guest_keep(3, false);
	CHECK_EQ(t.n, 4);
	CHECK_EQ(t.r[1].cpu, 3);
	CHECK_EQ(t.r[1].rc, -ETIMEDOUT);
	CHECK(t.r[1].walk_back);
	CHECK(!t.r[1].add);
	/* The second request for CPU 3 ran alone, and timed out too. */
	CHECK_EQ(t.r[3].k, 3);
	CHECK_EQ(t.r[3].phase, HOTPLUG_PHASE_ALONE);
	CHECK_EQ(t.r[3].rc, -ETIMEDOUT);
	CHECK_EQ(rcs[0], 0);
	CHECK_EQ(rcs[2], 0);
	check_gone(2);
	check_gone(4);
	check_running(3);
	check_running(1);
	teardown();
}

/* Resizes up and down: lowest free slots first, highest CPUs removed. */
static void test_resize(void)
{
	struct hotplug_step steps[MAX];
	struct hotplug_resize_result res = { .steps = steps };
	struct told t = { .refuse_k = -1 };
	struct hotplug_many_ops ops = { .ctx = &t, .done = told_done };

	setup(1);
	CHECK_EQ(hotplug_resize(fv->hp, 4, 0, &ops, &res), 0);
	CHECK_EQ(res.count, 4);
	CHECK_EQ(res.n, 3);
	for (unsigned int i = 0; i < 3; i++) {
		CHECK_EQ(steps[i].cpu, i + 1);
		CHECK(steps[i].added);
		check_running(i + 1);
	}
	CHECK_EQ(hotplug_resize(fv->hp, 2, 0, &ops, &res), 0);
	CHECK_EQ(res.count, 2);
	CHECK_EQ(res.n, 2);
	CHECK_EQ(steps[0].cpu, 3);
	CHECK_EQ(steps[1].cpu, 2);
	CHECK(!steps[0].added);
	check_gone(2);
	check_gone(3);
	check_running(1);
	/* Already there: nothing to do. */
	CHECK_EQ(hotplug_resize(fv->hp, 2, 0, &ops, &res), 0);
	CHECK_EQ(res.n, 0);
	CHECK_EQ(res.count, 2);
	teardown();
}

/*
 * All or nothing: a CPU that fails, or a count out of reach, undoes every
 * step done, newest first, each told with phase UNDO.
 */
static void test_resize_undo(void)
{
	struct hotplug_step steps[MAX];
	struct hotplug_resize_result res = { .steps = steps };
	struct told t = { .refuse_k = -1 };
	struct hotplug_many_ops ops = { .ctx = &t, .done = told_done };
	unsigned int undos = 0;

	setup(2);
	CHECK_EQ(
		hotplug_inject(fv->hp, 3, HP_SIDE_HOST, HOST_AP_STARTING, NULL),
		0);
	CHECK(hotplug_resize(fv->hp, 4, 0, &ops, &res) != 0);
	CHECK_EQ(res.n, 1); /* CPU 2 was added, then removed again */
	CHECK_EQ(steps[0].cpu, 2);
	CHECK_EQ(res.undo_failed, 0);
	CHECK_EQ(t.r[t.n - 1].phase, HOTPLUG_PHASE_UNDO);
	CHECK_EQ(t.r[t.n - 1].cpu, 2);
	CHECK(!t.r[t.n - 1].add);
	CHECK_EQ(t.r[t.n - 1].rc, 0);
	check_running(1);
	check_gone(2);
	check_gone(3);

	t = (struct told){ .refuse_k = -1 };
	CHECK_EQ(hotplug_resize(fv->hp, MAX + 1, 0, &ops, &res), -ENOSPC);
	CHECK_EQ(res.count, MAX); /* what it reached before the undo */
	CHECK_EQ(res.n, 3);
	for (unsigned int i = 0; i < t.n; i++)
		undos += t.r[i].phase == HOTPLUG_PHASE_UNDO;
	CHECK_EQ(undos, 3);
	for (unsigned int cpu = 2; cpu < MAX; cpu++)
		CHECK(!plugged(cpu));
	check_running(1);

	/* Down, then a removal fails: the removed CPUs come back. */
	CHECK_EQ(hotplug_resize(fv->hp, 4, 0, &ops, &res), 0);
	sim_guest_keep(2, true);
	t = (struct told){ .refuse_k = -1 };
	CHECK_EQ(hotplug_resize(fv->hp, 1, T_GUEST_MS, &ops, &res), -ETIMEDOUT);
	sim_guest_keep(2, false);
	CHECK_EQ(res.undo_failed, 0);
	for (unsigned int cpu = 1; cpu < 4; cpu++)
		check_running(cpu);
	teardown();
}

CHECK_MAIN(TEST(test_add_many), TEST(test_admit), TEST(test_add_fault),
	   TEST(test_remove_many), TEST(test_resize), TEST(test_resize_undo))
