// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pool of vCPUs created ahead (vmm/hotplug/prestage.c, --prestage K)
 * on the real controller over the API tests' fake machine: K free slots
 * wait at vcpu:create, unseen by the guest and not counted as plugged; a
 * hot-add takes one, a burst or a resize takes several, and the pool is
 * topped up again from the lowest free slots after each operation that
 * changed it.
 */
#include <errno.h>

#include "check.h"
#include "fake_vm.h"
#include "hotplug.h"
#include "hotplug_many.h"
#include "hotvm/guest_states.h"
#include "sim_guest.h"

#define MAX	   6
#define POOL	   2
#define T_GUEST_MS 300

static struct fake_vm *fv;

static struct hp_cpu_view view(unsigned int cpu)
{
	struct hp_cpu_view v;

	CHECK_EQ(hotplug_cpu_view(fv->hp, cpu, &v), 0);
	return v;
}

/* Created ahead: at vcpu:create, free, and nothing the guest can see. */
static void check_pooled(unsigned int cpu)
{
	struct hp_cpu_view v = view(cpu);

	CHECK_EQ(v.host.state, HOST_VCPU_CREATE);
	CHECK(v.prestaged);
	CHECK(!v.present);
	CHECK(!hotplug_cpu_plugged(&v));
	CHECK(!hotplug_cpu_counted(&v));
	CHECK_EQ(hotplug_add_check(fv->hp, cpu, NULL), 0);
	CHECK_EQ(sim_guest_state(cpu), GUEST_OFFLINE);
}

static void check_free(unsigned int cpu)
{
	struct hp_cpu_view v = view(cpu);

	CHECK_EQ(v.host.state, HOST_OFFLINE);
	CHECK(!v.prestaged);
	CHECK_EQ(sim_guest_state(cpu), GUEST_OFFLINE);
}

static void check_running(unsigned int cpu)
{
	struct hp_cpu_view v = view(cpu);

	CHECK(hotplug_cpu_counted(&v));
	CHECK(!v.prestaged);
	CHECK(v.present);
	CHECK_EQ(sim_guest_state(cpu), GUEST_ONLINE);
}

static unsigned int pooled(void)
{
	unsigned int n = 0;

	for (unsigned int cpu = 0; cpu < MAX; cpu++)
		n += view(cpu).prestaged;
	return n;
}

static void setup(void)
{
	fake_vm_prestage = POOL;
	if (fake_vm_create(MAX, 1, T_GUEST_MS, &fv))
		abort();
	fake_vm_prestage = 0;
}

/* One hot-add takes a pooled slot, and the pool is topped up behind it. */
static void test_single(void)
{
	struct hp_report rep = { 0 };

	setup();
	check_pooled(1);
	check_pooled(2);
	check_free(3);
	CHECK_EQ(
		hotplug_cpu_add(fv->hp, 1, "c1", 0, HOTPLUG_WAIT_DEFAULT, &rep),
		0);
	check_running(1);
	check_pooled(2);
	check_pooled(3);
	/* A slot outside the pool: created on demand, the pool unchanged. */
	CHECK_EQ(
		hotplug_cpu_add(fv->hp, 5, NULL, 0, HOTPLUG_WAIT_DEFAULT, &rep),
		0);
	check_running(5);
	CHECK_EQ(pooled(), POOL);
	check_free(4);
	/* A removal frees a slot; the pool stays K, lowest slots first. */
	CHECK_EQ(hotplug_cpu_remove(fv->hp, 1, 0, &rep), 0);
	check_free(1);
	CHECK_EQ(pooled(), POOL);
	check_pooled(2);
	check_pooled(3);
	fake_vm_destroy(fv);
}

/*
 * A burst takes the whole pool and more; the pool refills only from what
 * is left free, never taking a slot the guest has.
 */
static void test_burst_and_resize(void)
{
	const struct hotplug_req reqs[] = { { .cpu = 1 },
					    { .cpu = 2 },
					    { .cpu = 3 } };
	struct hotplug_step steps[MAX];
	struct hotplug_resize_result res = { .steps = steps };
	int rcs[3];

	setup();
	CHECK_EQ(hotplug_add_many(fv->hp, reqs, 3, 0, NULL, rcs), 0);
	for (unsigned int cpu = 1; cpu <= 3; cpu++)
		check_running(cpu);
	check_pooled(4);
	check_pooled(5);
	/* Up to every slot: the pool is used up and cannot refill. */
	CHECK_EQ(hotplug_resize(fv->hp, MAX, 0, NULL, &res), 0);
	CHECK_EQ(res.n, 2);
	CHECK_EQ(pooled(), 0);
	for (unsigned int cpu = 1; cpu < MAX; cpu++)
		check_running(cpu);
	/*
	 * Back down: the pool is K again (the first slots freed, as the
	 * removals end), and only the boot CPU runs.
	 */
	CHECK_EQ(hotplug_resize(fv->hp, 1, 0, NULL, &res), 0);
	CHECK_EQ(res.count, 1);
	CHECK_EQ(pooled(), POOL);
	for (unsigned int cpu = 1; cpu < MAX; cpu++)
		if (view(cpu).prestaged)
			check_pooled(cpu);
		else
			check_free(cpu);
	fake_vm_destroy(fv);
}

CHECK_MAIN(TEST(test_single), TEST(test_burst_and_resize))
