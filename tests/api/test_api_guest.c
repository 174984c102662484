// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's side through the commands: its own eject (and a late one),
 * reset, the agreement check against a late claim, a guest not yet
 * reporting, and forged reports in the report ring.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <json-c/json.h>

#include "api_fixture.h"
#include "check.h"
#include "hotvm/guest_states.h"
#include "hotvm/ring.h"
#include "vm.h"

/*
 * The guest ejects a CPU on its own (Linux's sysfs eject): honoured as
 * QEMU does, the host table follows, DEVICE_DELETED, the slot is free.
 * With --guest-eject deny the CPU stays and the guest takes it back.
 */
void test_guest_eject(void)
{
	static const char *const add2 = "{\"driver\": \"host-x86_64-cpu\", "
					"\"socket-id\": 2, \"id\": \"g2\"}";
	struct json_object *ev, *c;

	setup(4, 1);
	json_object_put(ok("device_add", "%s", add2));
	drain_events();
	CHECK_EQ(sim_guest_eject(2), 0);
	CHECK_EQ(sim_guest_state(2), GUEST_OFFLINE);
	/* What the main thread does once the guest's eject wakes it. */
	hotplug_guest_work(t.hp);
	ev = event("DEVICE_DELETED");
	CHECK(ev);
	if (ev)
		CHECK_STREQ(gs(get(ev, "data"), "device"), "g2");
	json_object_put(ev);
	CHECK(!cpu_plugged(2));
	/* The slot and the id are free again. */
	json_object_put(ok("device_add", "%s", add2));
	CHECK(cpu_plugged(2));
	CHECK_EQ(sim_guest_state(2), GUEST_ONLINE);
	teardown();

	fake_vm_guest_eject = HOTPLUG_GUEST_EJECT_DENY;
	setup(4, 1);
	fake_vm_guest_eject = HOTPLUG_GUEST_EJECT_ALLOW;
	json_object_put(ok("device_add", "%s", add2));
	drain_events();
	CHECK_EQ(sim_guest_eject(2), 0);
	hotplug_guest_work(t.hp);
	CHECK(!saw_event("DEVICE_DELETED"));
	CHECK(cpu_plugged(2));
	/* Presented again: the guest's next scan brought it back up. */
	CHECK_EQ(sim_guest_state(2), GUEST_ONLINE);
	c = cpuhp_cpu(2);
	CHECK_STREQ(gs(get(c, "guest"), "stage"), "started");
	json_object_put(c);
	/* And a removal the host asks for still goes. */
	json_object_put(ok("device_del", "{\"id\": \"g2\"}"));
	CHECK(!cpu_plugged(2));
	teardown();

	/*
	 * A host fault armed for the next operation does not veto what the
	 * guest did (found by tests/e2e/consistency.c: it failed the host's walk,
	 * which went back up while DEVICE_DELETED said the vCPU was gone).
	 */
	setup(4, 1);
	json_object_put(ok("device_add", "%s", add2));
	json_object_put(ok("cpuhp-inject-fault", "{\"cpu\": 2, \"side\": "
						 "\"host\", \"state\": "
						 "\"host:prepare\"}"));
	drain_events();
	CHECK_EQ(sim_guest_eject(2), 0);
	hotplug_guest_work(t.hp);
	ev = event("DEVICE_DELETED");
	CHECK(ev);
	json_object_put(ev);
	CHECK(!cpu_plugged(2));
	c = cpuhp_cpu(2);
	CHECK_STREQ(gs(get(c, "host"), "name"), "offline");
	CHECK(!get(get(c, "host"), "fail-name") ||
	      !gs(get(c, "host"), "fail-name"));
	json_object_put(c);
	teardown();
}

/*
 * A removal the host gave up waiting for, that the guest finishes late:
 * its eject is the guest's word now, and the host follows it (it used to
 * roll back to online while the guest had ejected the CPU).
 */
void test_late_eject(void)
{
	struct json_object *ev;

	setup(4, 1);
	json_object_put(ok("device_add", "{\"driver\": \"host-x86_64-cpu\", "
					 "\"socket-id\": 3, \"id\": \"c3\"}"));
	drain_events();
	sim_guest_keep(3, true);
	fails("GenericError", "did not eject it within", "device_del",
	      "{\"id\": \"c3\"}");
	CHECK(cpu_plugged(3));
	sim_guest_keep(3, false);
	CHECK_EQ(sim_guest_eject(3), 0);
	hotplug_guest_work(t.hp);
	ev = event("DEVICE_DELETED");
	CHECK(ev);
	if (ev)
		CHECK_STREQ(gs(get(ev, "data"), "device"), "c3");
	json_object_put(ev);
	CHECK(!cpu_plugged(3));
	CHECK_EQ(sim_guest_state(3), GUEST_OFFLINE);
	teardown();
}

/*
 * A reset, as run.c walks it: the CPUs the guest had are present at the
 * next boot, every one walked down and up again, its id kept.
 */
void test_reset(void)
{
	struct json_object *r;

	setup(4, 1);
	json_object_put(ok("device_add", "{\"driver\": \"host-x86_64-cpu\", "
					 "\"socket-id\": 3, \"id\": \"r3\"}"));
	drain_events();
	CHECK(!hotplug_present_at_boot(t.hp, 3));
	hotplug_reset_begin(t.hp);
	hotplug_unboot(t.hp);
	CHECK(!cpu_plugged(3));
	CHECK(hotplug_present_at_boot(t.hp, 0));
	CHECK(!hotplug_present_at_boot(t.hp, 1));
	CHECK(hotplug_present_at_boot(t.hp, 3));
	CHECK_EQ(hotplug_boot(t.hp), 0);
	CHECK(cpu_plugged(3));
	r = ok("query-hotpluggable-cpus", NULL);
	CHECK(strstr(json_object_to_json_string_ext(
			     r, JSON_C_TO_STRING_NOSLASHESCAPE),
		     "\"/machine/peripheral/r3\""));
	json_object_put(r);
	json_object_put(ok("device_del", "{\"id\": \"r3\"}"));
	CHECK(!cpu_plugged(3));
	teardown();
}

/*
 * The agreement check: a guest that claims a CPU the host asked for and
 * then took back is flagged (query-cpuhp, CPUHP_AGREEMENT), the CPU
 * refused until cpuhp-recover, which puts both sides back in line.
 */
void test_agreement(void)
{
	struct json_object *c, *ev, *r;

	setup(4, 1);
	c = cpuhp_cpu(2);
	CHECK(gb(c, "agree"));
	json_object_put(c);
	late_claim(2);
	drain_events();
	c = cpuhp_cpu(2); /* query-cpuhp checks on demand */
	CHECK(!gb(c, "agree"));
	CHECK(strstr(gs(c, "disagreement") ?: "", "the guest reports it at") !=
	      NULL);
	json_object_put(c);
	ev = event("CPUHP_AGREEMENT");
	CHECK(ev);
	CHECK_EQ(gi(get(ev, "data"), "cpu"), 2);
	CHECK(!gb(get(ev, "data"), "agree"));
	json_object_put(ev);
	fails("GenericError", "the host and the guest disagree about it",
	      "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 2}");
	r = ok("cpuhp-recover", "{\"cpu\": 2}");
	json_object_put(r);
	ev = event("CPUHP_AGREEMENT");
	CHECK(ev);
	CHECK(gb(get(ev, "data"), "agree"));
	json_object_put(ev);
	c = cpuhp_cpu(2);
	CHECK(gb(c, "agree"));
	CHECK_EQ(gi(get(c, "guest"), "state"), GUEST_OFFLINE);
	json_object_put(c);
	json_object_put(ok("device_add", "{\"driver\": \"host-x86_64-cpu\", "
					 "\"socket-id\": 2}"));
	CHECK(cpu_plugged(2));
	teardown();
}

/*
 * Issue 21, item 3: until the guest says that it reports its table (the
 * tiny guest's hotplug driver does as it starts, before "ready"),
 * guest-side faults and targets are refused in words that say so; from
 * then on, before any hot-add, they are taken.
 */
void test_guest_not_yet_reporting(void)
{
	static const char fault[] = "{\"cpu\": 1, \"side\": \"guest\", "
				    "\"state\": \"ap:online-work\"}";
	struct json_object *c;

	sim_guest_late = true;
	setup(4, 1);
	sim_guest_late = false;
	c = cpuhp_cpu(1);
	CHECK(!json_object_get_boolean(get(get(c, "guest"), "reports")));
	json_object_put(c);
	fails("GenericError",
	      "cpu 1: inject-fault refused: the guest has not said that it "
	      "reports its hotplug states: hotvm's tiny guest says so before "
	      "its 'ready' line",
	      "cpuhp-inject-fault", "%s", fault);
	fails("GenericError", "set-target refused: the guest has not said",
	      "cpuhp-set-target",
	      "{\"cpu\": 1, \"side\": \"guest\", \"target\": \"online\"}");

	sim_guest_report(GUEST_BOOT_CPU, GUEST_ONLINE);
	c = cpuhp_cpu(1);
	CHECK(json_object_get_boolean(get(get(c, "guest"), "reports")));
	json_object_put(c);
	json_object_put(ok("cpuhp-inject-fault", "%s", fault));
	fails("GenericError", "the guest failed to bring it up", "cpu-hotplug",
	      "{\"cpu\": 1, \"state\": \"online\"}");
	CHECK(!cpu_plugged(1));
	teardown();
}

/* Guest memory for the report ring of the next setup(). */
static uint8_t ring_area[ABI_RING_SIZE];

/* The guest puts a state report for @sel in its ring (hotvm/ring.h). */
static void ring_put(uint32_t sel, uint32_t value)
{
	struct abi_ring_hdr *h =
		(struct abi_ring_hdr *)(ring_area + ABI_RING_HDR_OFF);
	uint32_t head = h->head;
	struct abi_ring_entry *e =
		(struct abi_ring_entry *)(ring_area + ABI_RING_ENTRY_OFF +
					  (head % ABI_RING_ENTRIES) *
						  ABI_RING_ENTRY_SIZE);

	*e = (struct abi_ring_entry){ .sel = sel,
				      .value = value,
				      .seq = head + 1 };
	__atomic_store_n(&h->head, head + 1, __ATOMIC_RELEASE);
}

static long long refused_states(void)
{
	struct json_object *r = ok("query-hotplug-stats", NULL);
	long long n = gi(get(r, "cpuhp-regs"), "refused-states");

	json_object_put(r);
	return n;
}

/* CPU @cpu's guest state in the mirror, and whether it is flagged. */
static int mirror_state(unsigned int cpu, bool *agree, char *why, size_t len)
{
	struct json_object *c = cpuhp_cpu(cpu);
	int st = (int)gi(get(c, "guest"), "state");

	*agree = gb(c, "agree");
	snprintf(why, len, "%s", gs(c, "disagreement") ?: "");
	json_object_put(c);
	return st;
}

/*
 * Forged state reports, through the register block and the report ring,
 * for running CPUs (0, 1), a parked one (3: added, then removed) and an
 * absent one (4): none is believed (the host asked the guest to move
 * none of them), each is counted in query-hotplug-stats and flagged as
 * the guest's doing, and query-cpus-fast and cpu-resize still count what
 * runs: a resize to 3 adds one CPU, and the flagged CPU 1 can still be
 * removed (one forged report for CPU 0 used to hide it
 * from the counts, and cpu-resize gave the guest a vCPU more).
 */
void test_forged_reports(void)
{
	static const int mirror[] = { GUEST_ONLINE, GUEST_ONLINE, -1,
				      GUEST_OFFLINE, GUEST_OFFLINE };
	struct abi_ring_hdr *h =
		(struct abi_ring_hdr *)(ring_area + ABI_RING_HDR_OFF);
	struct json_object *r;
	char why[160];
	bool agree;

	memset(ring_area, 0, sizeof(ring_area));
	fake_vm_ring = ring_area;
	setup(6, 2);
	fake_vm_ring = NULL;
	h->magic = ABI_RING_MAGIC;
	h->version = ABI_RING_VERSION;
	CHECK_EQ(hpregs_ring_doorbell(&t.fv->regs, ABI_RING_DB_ENABLE, 1), 1);
	json_object_put(ok("device_add", "{\"driver\": \"host-x86_64-cpu\", "
					 "\"socket-id\": 3, \"id\": \"p3\"}"));
	json_object_put(ok("device_del", "{\"id\": \"p3\"}"));
	CHECK(!cpu_plugged(3));
	CHECK_EQ(cpus_fast(), 2);
	drain_events();

	/* The register block: running CPU 0 "offline", parked 3 "online". */
	sim_guest_report(0, GUEST_OFFLINE);
	sim_guest_report(3, GUEST_ONLINE);
	/* The ring: running CPU 1 half down, then absent 4 "online". */
	ring_put(1, GUEST_AP_WORK);
	ring_put(1, GUEST_AP_WORK | ABI_GUEST_STATE_DONE);
	ring_put(4, GUEST_ONLINE | ABI_GUEST_STATE_UP | ABI_GUEST_STATE_DONE);
	CHECK_EQ(refused_states(), 5); /* the query reads the ring first */
	for (unsigned int cpu = 0; cpu < 5; cpu++) {
		if (mirror[cpu] < 0)
			continue;
		CHECK_EQ(mirror_state(cpu, &agree, why, sizeof(why)),
			 mirror[cpu]);
		CHECK(!agree);
		if (!strstr(why, "unasked (refused)"))
			printf("# cpu %u: '%s'\n", cpu, why);
		CHECK(strstr(why, "unasked (refused)"));
	}
	CHECK(saw_event("CPUHP_AGREEMENT"));
	CHECK_EQ(cpus_fast(), 2);

	r = ok("cpu-resize", "{\"count\": 3}");
	CHECK_EQ(gi(r, "count"), 3);
	CHECK_STREQ(json_object_to_json_string_ext(get(r, "added"),
						   JSON_C_TO_STRING_PLAIN),
		    "[2]");
	json_object_put(r);
	CHECK_EQ(cpus_fast(), 3);
	r = ok("cpu-resize", "{\"count\": 1}");
	CHECK_STREQ(json_object_to_json_string_ext(get(r, "removed"),
						   JSON_C_TO_STRING_PLAIN),
		    "[2,1]");
	json_object_put(r);
	CHECK_EQ(cpus_fast(), 1);
	/* The flags go with cpuhp-recover, even the boot CPU's. */
	for (unsigned int cpu = 0; cpu < 5; cpu++)
		if (cpu != 2)
			json_object_put(
				ok("cpuhp-recover", "{\"cpu\": %u}", cpu));
	teardown();
}
