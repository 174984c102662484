// SPDX-License-Identifier: GPL-2.0-only
/*
 * The report ring as the controller sees it (vmm/hotplug/hotplug_guest.c
 * through vmm/devices/cpuhp_ring.c), on the API tests' fake machine with
 * a ring area as its guest memory: what the guest puts in the ring
 * reaches the mirror when a query asks (no doorbell needed), the state
 * events carry the guest's own time converted to the host's clock, a
 * bad entry changes nothing, an entry about a CPU the host did not ask
 * the guest to move is refused, and the mailbox follows the block's
 * events.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "fake_vm.h"
#include "hotplug.h"
#include "hotvm/guest_states.h"
#include "hotvm/ring.h"
#include "sim_guest.h"

#define MAX 4

static struct fake_vm *fv;
static uint8_t *area;

static struct {
	unsigned int n, cpu;
	int state;
	bool done;
	uint64_t at_ns;
} ev;

static void on_state(void *ctx, enum hp_side side, const struct cpuhp_notice *n,
		     uint64_t at_ns)
{
	(void)ctx;
	if (side != HP_SIDE_GUEST)
		return;
	ev.n++;
	ev.cpu = n->cpu;
	ev.state = n->state;
	ev.done = n->kind == CPUHP_NOTICE_DONE;
	ev.at_ns = at_ns;
}

static struct abi_ring_hdr *hdr(void)
{
	return (struct abi_ring_hdr *)(area + ABI_RING_HDR_OFF);
}

static void put(uint32_t sel, uint32_t value, uint64_t tsc)
{
	uint32_t head = hdr()->head;
	struct abi_ring_entry *e =
		(struct abi_ring_entry *)(area + ABI_RING_ENTRY_OFF +
					  (head % ABI_RING_ENTRIES) *
						  ABI_RING_ENTRY_SIZE);

	*e = (struct abi_ring_entry){
		.sel = sel, .value = value, .tsc = tsc, .seq = head + 1
	};
	__atomic_store_n(&hdr()->head, head + 1, __ATOMIC_RELEASE);
}

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int guest_state(unsigned int cpu)
{
	struct hp_cpu_view v;

	CHECK_EQ(hotplug_cpu_view(fv->hp, cpu, &v), 0);
	return v.guest_state;
}

static void start(void)
{
	struct hp_report rep = { 0 };

	area = calloc(1, ABI_RING_SIZE);
	CHECK(area != NULL);
	fake_vm_ring = area;
	CHECK_EQ(fake_vm_create(MAX, 1, 2000, &fv), 0);
	fake_vm_ring = NULL;
	hotplug_set_events(fv->hp, &(struct hp_events){ .state = on_state });
	/* The scripted guest speaks the registers: CPU 1 comes up so. */
	CHECK_EQ(
		hotplug_cpu_add(fv->hp, 1, NULL, 0, HOTPLUG_WAIT_DEFAULT, &rep),
		0);
	hdr()->magic = ABI_RING_MAGIC;
	hdr()->version = ABI_RING_VERSION;
	CHECK_EQ(hpregs_ring_doorbell(&fv->regs, ABI_RING_DB_ENABLE, mono()),
		 1);
	memset(&ev, 0, sizeof(ev));
}

static void stop(void)
{
	fake_vm_destroy(fv);
	free(area);
}

static pthread_t adder;
static int add_rc;

static void *add_cpu2(void *arg)
{
	struct hp_report rep = { 0 };

	(void)arg;
	add_rc = hotplug_cpu_add(fv->hp, 2, NULL, 5000, HOTPLUG_WAIT_DEFAULT,
				 &rep);
	return NULL;
}

/*
 * The host asks the guest to bring CPU 2 up, and the test is the guest
 * (the scripted one keeps out of it): from now on, until the walk's DONE,
 * the ring's entries for CPU 2 are believed.  Returns once the scripted
 * guest has read the insert event: its register reads drain the ring, so
 * an entry the test puts before then could be read there, at another
 * time than the test's doorbell gives.
 */
static void ask_cpu2(void)
{
	struct hp_cpu_view v = { 0 };
	unsigned int irqs = sim_guest_interrupts();
	long i;

	sim_guest_keep(2, true);
	CHECK_EQ(pthread_create(&adder, NULL, add_cpu2, NULL), 0);
	for (i = 0; i < 100000000L; i++) {
		if (!hotplug_cpu_view(fv->hp, 2, &v) && v.present)
			break;
		sched_yield();
	}
	CHECK(v.present);
	for (i = 0; i < 100000000L && sim_guest_interrupts() == irqs; i++)
		sched_yield();
	CHECK(sim_guest_interrupts() != irqs);
}

/* The guest's DONE ends the walk: the hot-add succeeds. */
static void finish_cpu2(void)
{
	put(2, GUEST_ONLINE | ABI_GUEST_STATE_UP | ABI_GUEST_STATE_DONE, 0);
	hpregs_ring_doorbell(&fv->regs, ABI_RING_DB_DRAIN, mono());
	pthread_join(adder, NULL);
	CHECK_EQ(add_rc, 0);
	CHECK_EQ(guest_state(2), GUEST_ONLINE);
	sim_guest_keep(2, false);
}

/*
 * An entry the guest wrote and never rang for: the query reads it.  One
 * about CPU 1, which the host holds online and asked nothing of, is
 * refused; one about CPU 2 while the host asks for it is believed.
 */
static void test_query_reads_ring(void)
{
	struct hpregs_stats rs;
	struct ged_stats gs;

	start();
	CHECK_EQ(guest_state(1), GUEST_ONLINE);
	put(1, GUEST_AP_WORK | ABI_GUEST_STATE_DONE, 0);
	CHECK_EQ(guest_state(1), GUEST_ONLINE);
	CHECK_EQ(ev.n, 0);
	hotplug_device_stats(fv->hp, &rs, &gs);
	CHECK_EQ(rs.refused_states, 1);
	ask_cpu2();
	put(2, GUEST_AP_WORK | ABI_GUEST_STATE_UP, 0);
	CHECK_EQ(guest_state(2), GUEST_AP_WORK);
	CHECK_EQ(ev.n, 1);
	CHECK(!ev.done);
	CHECK_EQ(ev.state, GUEST_AP_WORK);
	/* A bad one (a state the table has not) changes nothing. */
	put(2, GUEST_NR_STATES | ABI_GUEST_STATE_DONE, 0);
	put(MAX, GUEST_ONLINE | ABI_GUEST_STATE_DONE, 0);
	CHECK_EQ(guest_state(2), GUEST_AP_WORK);
	CHECK_EQ(ev.n, 1);
	finish_cpu2();
	stop();
}

/* The event's time is the guest's, from the doorbell's pair. */
static void test_event_time(void)
{
	uint64_t now;

	start();
	hpring_set_tsc_khz(&fv->regs.ring, 1000000); /* a tick a nanosecond */
	ask_cpu2();
	put(2, GUEST_AP_WORK | ABI_GUEST_STATE_UP, 5000000);
	hdr()->db_tsc = 8000000;
	now = mono();
	CHECK_EQ(hpregs_ring_doorbell(&fv->regs, ABI_RING_DB_DRAIN, now), 0);
	CHECK_EQ(ev.n, 1);
	CHECK(!ev.done);
	CHECK_EQ(ev.at_ns, now - 3000000); /* 3 ms before the doorbell */
	finish_cpu2();
	stop();
}

/*
 * The mailbox follows the block: a removal request sets the bit, and the
 * guest's taking it is the event cleared, as a flags write would be.
 */
static void test_mailbox_follows(void)
{
	struct hpregs_cpu c;
	uint64_t *rm;

	start();
	rm = (uint64_t *)(area + ABI_RING_REMOVE_OFF);
	CHECK_EQ(hpregs_request_unplug(&fv->regs, 1), 0);
	CHECK_EQ(*rm, 2ull);
	CHECK_EQ(hpregs_get_cpu(&fv->regs, 1, &c), 0);
	CHECK(c.removing);
	__atomic_store_n(rm, 0, __ATOMIC_SEQ_CST);
	CHECK_EQ(hpregs_get_cpu(&fv->regs, 1, &c), 0);
	CHECK(!c.removing);
	CHECK(c.unplug_requested); /* the eject is still allowed */
	CHECK_EQ(hpregs_cancel_unplug(&fv->regs, 1), 0);
	stop();
}

int check_failures;

int main(void)
{
	static const struct check_case cases[] = {
		TEST(test_query_reads_ring),
		TEST(test_event_time),
		TEST(test_mailbox_follows),
	};

	return check_run(cases, sizeof(cases) / sizeof(cases[0]));
}
