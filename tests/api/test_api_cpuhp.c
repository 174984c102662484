// SPDX-License-Identifier: GPL-2.0-only
/*
 * hotvm's own commands: query-cpuhp, the target state, injected faults
 * and the exits a hot-add costs, cpu-resize and its undo, a resize during
 * a reset and a reset that cancels one.
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

void test_query_cpuhp(void)
{
	static const char *const st[] = { "state",    "name",	 "startup",
					  "teardown", "section", "cant-stop",
					  "no-fail",  NULL };
	static const char *const cpu[] = { "cpu",     "apic-id",   "boot",
					   "present", "qom-path",  "host",
					   "guest",   "thread-id", "parked",
					   "agree",   NULL };
	static const char *const host[] = {
		"state",     "name",   "target",   "target-name", "fail",
		"fail-name", "broken", "rollback", NULL
	};
	static const char *const guest[] = {
		"reports",     "stage", "state",     "name",   "target",
		"target-name", "fail",	"fail-name", "broken", NULL
	};
	struct json_object *r, *a, *c;

	setup(4, 1);
	r = ok("query-cpuhp", NULL);
	a = get(r, "host-states");
	CHECK_EQ(json_object_array_length(a), HOST_NR_STATES);
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		keys(json_object_array_get_idx(a, i), st);
		CHECK_EQ(gi(json_object_array_get_idx(a, i), "state"), i);
	}
	CHECK_STREQ(gs(json_object_array_get_idx(a, HOST_AP_STARTING), "name"),
		    "guest:ap-starting");
	CHECK(json_object_is_type(
		get(json_object_array_get_idx(a, HOST_DYN_FIRST), "name"),
		json_type_null));
	CHECK_STREQ(gs(json_object_array_get_idx(a, 1), "section"), "prepare");
	a = get(r, "guest-states");
	CHECK_EQ(json_object_array_length(a), GUEST_NR_STATES);
	CHECK_STREQ(gs(json_object_array_get_idx(a, GUEST_AP_LAPIC), "name"),
		    "ap:starting-lapic");
	CHECK(json_object_get_boolean(
		get(json_object_array_get_idx(a, GUEST_AP_LAPIC), "no-fail")));
	CHECK_STREQ(gs(json_object_array_get_idx(a, GUEST_AP_LAPIC), "section"),
		    "starting");
	a = get(r, "cpus");
	CHECK_EQ(json_object_array_length(a), 4);
	c = json_object_array_get_idx(a, 0);
	keys(c, cpu);
	keys(get(c, "host"), host);
	keys(get(c, "guest"), guest);
	CHECK_STREQ(gs(get(c, "host"), "name"), "online");
	CHECK_STREQ(gs(get(c, "guest"), "name"), "online");
	CHECK(json_object_is_type(get(get(c, "host"), "fail"), json_type_null));
	c = json_object_array_get_idx(a, 2);
	CHECK(!has(c, "qom-path"));
	CHECK_EQ(gi(get(c, "host"), "state"), 0);
	CHECK_STREQ(gs(get(c, "host"), "name"), "offline");
	json_object_put(r);

	CHECK_EQ(hotplug_inject(t.hp, 2, HP_SIDE_HOST, HOST_VCPU_CREATE, NULL),
		 0);
	c = cpuhp_cpu(2);
	CHECK_EQ(gi(get(c, "host"), "fail"), HOST_VCPU_CREATE);
	CHECK_STREQ(gs(get(c, "host"), "fail-name"), "vcpu:create");
	CHECK_EQ(gi(c, "cpu"), 2);
	json_object_put(c);
	fails("GenericError", "Parameter 'cpu' expects a value between 0 and 3",
	      "query-cpuhp", "{\"cpu\": 4}");
	fails("GenericError", "Parameter 'all' is unexpected", "query-cpuhp",
	      "{\"all\": true}");
	teardown();
}

void test_set_target(void)
{
	static const char *const stp[] = { "side",	"state",    "name",
					   "direction", "rollback", "injected",
					   "ret",	"us",	    "own-us",
					   NULL };
	struct json_object *r, *s;

	setup(4, 1);
	r = ok("cpuhp-set-target",
	       "{\"cpu\": 2, \"side\": \"host\", \"target\": \"vcpu:create\"}");
	CHECK_EQ(gi(r, "cpu"), 2);
	CHECK_STREQ(gs(r, "side"), "host");
	CHECK_EQ(gi(r, "state"), HOST_VCPU_CREATE);
	CHECK_STREQ(gs(r, "name"), "vcpu:create");
	CHECK(gi(r, "total-us") >= 0);
	s = get(r, "steps");
	CHECK_EQ(json_object_array_length(s), 2);
	keys(json_object_array_get_idx(s, 1), stp);
	CHECK_STREQ(gs(json_object_array_get_idx(s, 1), "name"), "vcpu:create");
	CHECK_STREQ(gs(json_object_array_get_idx(s, 1), "direction"), "up");
	json_object_put(r);
	/* partially up: plugged, with a path */
	CHECK(cpu_plugged(2));
	fails("GenericError",
	      "the guest does not have it yet (host state 2); bring the host "
	      "side to guest:ap-starting first",
	      "cpuhp-set-target",
	      "{\"cpu\": 2, \"side\": \"guest\", \"target\": \"online\"}");
	/* by number, as JSON integer and as a string */
	json_object_put(ok("cpuhp-set-target", "{\"cpu\": 2, \"side\": "
					       "\"host\", \"target\": 3, "
					       "\"timeout-ms\": 2000}"));
	r = ok("cpuhp-set-target",
	       "{\"cpu\": 2, \"side\": \"guest\", \"target\": \"7\"}");
	CHECK_EQ(gi(r, "state"), GUEST_AP_WORK);
	CHECK_STREQ(gs(r, "side"), "guest");
	json_object_put(r);
	CHECK_EQ(sim_guest_state(2), GUEST_AP_WORK);
	/* The guest's cant-stop states are no target: the mirror's rule. */
	fails("GenericError",
	      "cpu 2: guest state ap:starting-lapic is not a valid target",
	      "cpuhp-set-target",
	      "{\"cpu\": 2, \"side\": \"guest\", \"target\": \"5\"}");
	r = ok("cpuhp-set-target",
	       "{\"cpu\": 2, \"side\": \"host\", \"target\": \"offline\"}");
	CHECK_STREQ(gs(r, "name"), "offline");
	json_object_put(r);

	fails("GenericError", "Parameter 'cpu' is missing", "cpuhp-set-target",
	      "{\"side\": \"host\", \"target\": 1}");
	fails("GenericError",
	      "Invalid parameter type for 'cpu', expected: "
	      "integer",
	      "cpuhp-set-target",
	      "{\"cpu\": \"2\", \"side\": \"host\", \"target\": 1}");
	fails("GenericError", "Parameter 'cpu' expects a value between 0 and 3",
	      "cpuhp-set-target",
	      "{\"cpu\": 9, \"side\": \"host\", \"target\": 1}");
	fails("GenericError", "Parameter 'side' does not accept value 'both'",
	      "cpuhp-set-target",
	      "{\"cpu\": 2, \"side\": \"both\", \"target\": 1}");
	fails("GenericError", "Parameter 'side' is missing", "cpuhp-set-target",
	      "{\"cpu\": 2, \"target\": 1}");
	fails("GenericError", "Parameter 'target' is missing",
	      "cpuhp-set-target", "{\"cpu\": 2, \"side\": \"host\"}");
	fails("GenericError", "the host table has no state 'nirvana'",
	      "cpuhp-set-target",
	      "{\"cpu\": 2, \"side\": \"host\", \"target\": \"nirvana\"}");
	fails("GenericError",
	      "Parameter 'target' expects a host state between "
	      "0 and 8",
	      "cpuhp-set-target",
	      "{\"cpu\": 2, \"side\": \"host\", \"target\": 99}");
	fails("GenericError",
	      "Invalid parameter type for 'target', expected: "
	      "string or integer",
	      "cpuhp-set-target",
	      "{\"cpu\": 2, \"side\": \"host\", \"target\": true}");
	fails("GenericError", "Parameter 'timeout-ms' expects a value between",
	      "cpuhp-set-target",
	      "{\"cpu\": 2, \"side\": \"host\", \"target\": 1, "
	      "\"timeout-ms\": -5}");
	fails("GenericError", "Parameter 'timeout' is unexpected",
	      "cpuhp-set-target",
	      "{\"cpu\": 2, \"side\": \"host\", \"target\": 1, "
	      "\"timeout\": 5}");
	fails("GenericError", "it is the boot CPU and cannot be taken down",
	      "cpuhp-set-target",
	      "{\"cpu\": 0, \"side\": \"host\", \"target\": \"offline\"}");
	teardown();
}

/* The exits device @prefix ("ged@") took, by its name in "by-device". */
static long long exits_on(struct json_object *x, const char *prefix)
{
	json_object_object_foreach(get(x, "by-device"), name, n)
	{
		if (!strncmp(name, prefix, strlen(prefix)))
			return json_object_get_int64(n);
	}
	return 0;
}

/*
 * Exits on the fake machine: the scripted guest's MMIO accesses, each
 * counted as the exit KVM would make of it, every one taken by the
 * register block or the GED.
 */
static void check_exits(struct json_object *x)
{
	static const char *const kinds[] = { "total",	  "pio",      "mmio",
					     "hlt",	  "shutdown", "other",
					     "by-device", NULL };
	long long sum = 0;

	keys(x, kinds);
	CHECK_EQ(gi(x, "total"), gi(x, "mmio"));
	json_object_object_foreach(get(x, "by-device"), name, n)
	{
		(void)name;
		sum += json_object_get_int64(n);
	}
	CHECK_EQ(sum, gi(x, "mmio"));
	CHECK(exits_on(x, "cpuhp-regs@") > 0);
	CHECK(exits_on(x, "ged@") > 0);
	CHECK_EQ(sum, exits_on(x, "cpuhp-regs@") + exits_on(x, "ged@"));
}

void test_inject_and_hotplug(void)
{
	static const char *const rep[] = { "cpu",    "state",	    "total-us",
					   "own-us", "own-exit-us", "exits",
					   "steps",  NULL };
	struct json_object *r, *s, *ev;
	bool down = false, named = false;
	long long us = 0;

	setup(4, 1);
	r = ok("cpu-hotplug", "{\"cpu\": 1, \"state\": \"online\"}");
	keys(r, rep);
	CHECK_EQ(gi(r, "cpu"), 1);
	CHECK_STREQ(gs(r, "state"), "online");
	s = get(r, "steps");
	/* 4 host callbacks and 8 guest ones (2 dynamic slots are free) */
	CHECK_EQ(json_object_array_length(s), 12);
	for (size_t i = 0; i < json_object_array_length(s); i++) {
		struct json_object *st = json_object_array_get_idx(s, i);
		bool host = !strcmp(gs(st, "side"), "host");

		CHECK(host || !strcmp(gs(st, "side"), "guest"));
		us += gi(st, "us");
		/* hotvm's own share: on host steps only, never above it. */
		CHECK_EQ(has(st, "own-us"), host);
		if (host)
			CHECK(gi(st, "own-us") >= 0);
	}
	/* Each step's time runs from the one before: they add up. */
	CHECK(gi(r, "total-us") >= us);
	CHECK(gi(r, "own-us") <= gi(r, "total-us"));
	CHECK(gi(r, "own-exit-us") <= gi(r, "own-us"));
	check_exits(get(r, "exits"));
	json_object_put(r);
	/*
	 * Since the start, as query-hotplug-stats counts them: every access
	 * the register block saw was one exit.
	 */
	r = ok("query-hotplug-stats", NULL);
	check_exits(get(r, "exits"));
	CHECK_EQ(exits_on(get(r, "exits"), "cpuhp-regs@"),
		 gi(get(r, "cpuhp-regs"), "accesses"));
	/* The one hot-add, in its kind's sums. */
	CHECK_EQ(gi(get(get(r, "own"), "hot-add"), "operations"), 1);
	CHECK(gi(get(get(r, "own"), "hot-add"), "own-us") <=
	      gi(get(get(r, "own"), "hot-add"), "total-us"));
	CHECK_EQ(gi(get(get(r, "own"), "hot-remove"), "operations"), 0);
	json_object_put(r);
	/* Already online: a no-op, like Linux's online file. */
	json_object_put(
		ok("cpu-hotplug", "{\"cpu\": 1, \"state\": \"online\"}"));
	r = ok("cpu-hotplug",
	       "{\"cpu\": 1, \"state\": \"offline\", \"timeout-ms\": 1000}");
	s = get(r, "steps");
	for (size_t i = 0; i < json_object_array_length(s); i++)
		down |= !strcmp(
			gs(json_object_array_get_idx(s, i), "direction"),
			"down");
	CHECK(down);
	json_object_put(r);
	CHECK(!cpu_plugged(1));

	/* A host fault: named, injected, rolled back. */
	json_object_put(ok("cpuhp-inject-fault", "{\"cpu\": 1, \"side\": "
						 "\"host\", \"state\": "
						 "\"vcpu:create\"}"));
	fails("GenericError",
	      "cpu 1: vcpu:create failed: Resource temporarily unavailable "
	      "(injected fault); rolled back to offline",
	      "cpu-hotplug", "{\"cpu\": 1, \"state\": \"online\"}");
	/* A guest fault. */
	json_object_put(ok("cpuhp-inject-fault", "{\"cpu\": 1, \"side\": "
						 "\"guest\", \"state\": "
						 "\"ap:online-work\"}"));
	drain_events();
	fails("GenericError",
	      "cpu 1: online failed: the guest failed to bring it up; see the "
	      "guest's console; rolled back to offline",
	      "cpu-hotplug", "{\"cpu\": 1, \"state\": \"online\"}");
	CHECK(!cpu_plugged(1));
	CHECK_EQ(sim_guest_state(1), GUEST_OFFLINE);
	/* The guest's report names the state that failed, as injected. */
	while ((ev = event("CPUHP_STATE"))) {
		struct json_object *d = get(ev, "data");

		named |= !strcmp(gs(d, "side"), "guest") &&
			 !strcmp(gs(d, "name") ?: "", "ap:online-work") &&
			 json_object_get_boolean(get(d, "injected")) &&
			 gi(d, "ret") == -EAGAIN;
		json_object_put(ev);
	}
	CHECK(named);
	/* Set, then cleared: no failure. */
	json_object_put(ok("cpuhp-inject-fault", "{\"cpu\": 1, \"side\": "
						 "\"host\", \"state\": 2}"));
	json_object_put(ok("cpuhp-inject-fault", "{\"cpu\": 1, \"side\": "
						 "\"host\", \"state\": null}"));
	json_object_put(
		ok("cpu-hotplug", "{\"cpu\": 1, \"state\": \"online\"}"));

	fails("GenericError", "cpu 1: host state 4 cannot fail",
	      "cpuhp-inject-fault",
	      "{\"cpu\": 1, \"side\": \"host\", \"state\": 4}");
	fails("GenericError", "guest state ap:starting-lapic cannot fail",
	      "cpuhp-inject-fault",
	      "{\"cpu\": 1, \"side\": \"guest\", \"state\": "
	      "\"ap:starting-lapic\"}");
	fails("GenericError", "Parameter 'state' is missing",
	      "cpuhp-inject-fault", "{\"cpu\": 1, \"side\": \"host\"}");
	fails("GenericError",
	      "Parameter 'state' does not accept value "
	      "'sideways'",
	      "cpu-hotplug", "{\"cpu\": 1, \"state\": \"sideways\"}");
	fails("GenericError",
	      "Invalid parameter type for 'timeout-ms', expected: integer",
	      "cpu-hotplug",
	      "{\"cpu\": 1, \"state\": \"online\", \"timeout-ms\": 1.5}");
	fails("GenericError", "Boot CPU is unpluggable", "cpu-hotplug",
	      "{\"cpu\": 0, \"state\": \"offline\"}");
	inject_host(2, "guest:ap-starting");
	fails("GenericError",
	      "cpu 2: guest:ap-starting failed: Resource temporarily "
	      "unavailable (injected fault); rolled back to offline",
	      "cpu-hotplug", "{\"cpu\": 2, \"state\": \"online\"}");
	teardown();
}

void test_resize(void)
{
	struct json_object *r;

	setup(4, 1);
	r = ok("cpu-resize", "{\"count\": 3}");
	CHECK_EQ(gi(r, "count"), 3);
	CHECK_STREQ(json_object_to_json_string_ext(get(r, "added"),
						   JSON_C_TO_STRING_PLAIN),
		    "[1,2]");
	CHECK_STREQ(json_object_to_json_string_ext(get(r, "removed"),
						   JSON_C_TO_STRING_PLAIN),
		    "[]");
	json_object_put(r);
	r = ok("cpu-resize", "{\"count\": 3, \"timeout-ms\": 100}");
	CHECK_EQ(json_object_array_length(get(r, "added")), 0);
	json_object_put(r);
	r = ok("cpu-resize", "{\"count\": 1}");
	CHECK_STREQ(json_object_to_json_string_ext(get(r, "removed"),
						   JSON_C_TO_STRING_PLAIN),
		    "[2,1]");
	json_object_put(r);
	CHECK(!cpu_plugged(1) && !cpu_plugged(2));

	fails("GenericError",
	      "Parameter 'count' expects a value between 1 "
	      "and 4",
	      "cpu-resize", "{\"count\": 0}");
	fails("GenericError",
	      "Parameter 'count' expects a value between 1 "
	      "and 4",
	      "cpu-resize", "{\"count\": 5}");
	fails("GenericError", "Parameter 'count' is missing", "cpu-resize",
	      "{}");
	fails("GenericError",
	      "Invalid parameter type for 'count', expected: "
	      "integer",
	      "cpu-resize", "{\"count\": \"4\"}");

	/*
	 * The third add of the batch fails: the batch took it to vcpu:create
	 * and back to offline; the two before it are taken back.
	 */
	inject_host(3, "guest:ap-starting");
	fails("GenericError",
	      "cpu 3: guest:ap-starting failed: Resource temporarily "
	      "unavailable (injected fault); it stays at offline; "
	      "cpu-resize to 4: nothing changed (2 of 2 steps undone)",
	      "cpu-resize", "{\"count\": 4}");
	CHECK(cpu_plugged(0));
	CHECK(!cpu_plugged(1) && !cpu_plugged(2) && !cpu_plugged(3));

	/*
	 * A removal fails in the middle of the batch (3, 2, 1): the others
	 * of the batch still finish, then come back.
	 */
	json_object_put(ok("device_add", "{\"driver\": \"host-x86_64-cpu\", "
					 "\"socket-id\": 3, \"id\": \"c3\"}"));
	json_object_put(ok("cpu-resize", "{\"count\": 4}"));
	inject_host(2, "guest:ap-starting");
	fails("GenericError",
	      "cpu 2: guest:ap-starting failed: Resource temporarily "
	      "unavailable (injected fault); it stays at guest:ap-starting, "
	      "then back to online; cpu-resize to 1: nothing changed (2 of "
	      "2 steps undone)",
	      "cpu-resize", "{\"count\": 1}");
	for (unsigned int i = 0; i < 4; i++)
		CHECK(cpu_plugged(i));
	r = cpuhp_cpu(3);
	CHECK_STREQ(gs(r, "id"), "c3");
	CHECK_STREQ(gs(r, "qom-path"), "/machine/peripheral/c3");
	json_object_put(r);
	teardown();
}

/* Until an operation waits at the controller's gate (bounded). */
static void wait_gate(void)
{
	for (long i = 0; i < 100000000L && !hotplug_op_waiters(t.hp); i++)
		sched_yield();
	CHECK(hotplug_op_waiters(t.hp) > 0);
}

/*
 * A cpu-resize that arrives while a reset has the boot CPUs walked down
 * counts after the reset, inside its own operation: it used to count
 * them as free then, pick slots 0-4, fail with "hot-add refused: it is
 * the boot CPU", and its undo removed boot CPU 1.
 */
void test_resize_during_reset(void)
{
	struct qmp_client_error e;
	struct json_object *r = NULL;
	long seq;

	setup(6, 2);
	drain_events();
	hotplug_reset_begin(t.hp);
	hotplug_unboot(t.hp);
	seq = send_req("cpu-resize", "{\"count\": 5}");
	wait_gate(); /* the resize waits for the guest to run again */
	/* The guest first, so it answers from the resize's first step. */
	CHECK_EQ(fake_vm_guest_boot(t.fv, 2), 0);
	CHECK_EQ(hotplug_boot(t.hp), 0);
	CHECK_EQ(qmp_client_wait(t.c, "cpu-resize", seq, &r, &e, T_MS), 0);
	CHECK_EQ(gi(r, "count"), 5);
	CHECK_STREQ(json_object_to_json_string_ext(get(r, "added"),
						   JSON_C_TO_STRING_PLAIN),
		    "[2,3,4]");
	json_object_put(r);
	for (unsigned int i = 0; i < 5; i++)
		CHECK(cpu_plugged(i));
	CHECK(!cpu_plugged(5));
	CHECK_EQ(cpus_fast(), 5);
	teardown();
}

/* Until CPU @cpu's host table has walked down to offline. */
static void wait_host_offline(unsigned int cpu)
{
	struct json_object *ev;

	while ((ev = event("CPUHP_STATE"))) {
		struct json_object *d = get(ev, "data");
		bool off = gi(d, "cpu") == cpu &&
			   !strcmp(gs(d, "side") ?: "", "host") &&
			   !strcmp(gs(d, "direction") ?: "", "down") &&
			   !strcmp(gs(d, "name") ?: "", "host:prepare");

		json_object_put(ev);
		if (off)
			return;
	}
	CHECK(!"the CPU never left host:prepare");
}

/*
 * A reset during a resize cancels it whole: CPUs 4 and 3 are removed,
 * the guest does not answer for CPU 2, the reset cancels that wait, and
 * the undo brings 4 and 3 back on the host's side alone (the guest is
 * going away), so the next boot has the 5 CPUs the VM had.  The undo
 * used to ask the guest and fail, and the reset then booted 2.
 */
void test_reset_cancels_resize(void)
{
	struct qmp_client_error e;
	long seq;

	setup(6, 2);
	json_object_put(ok("cpu-resize", "{\"count\": 5}"));
	drain_events();
	sim_guest_keep(2, true);
	seq = send_req("cpu-resize", "{\"count\": 2, \"timeout-ms\": 5000}");
	wait_host_offline(3); /* 4, then 3 are gone; 2 waits */
	hotplug_reset_begin(t.hp);
	CHECK_EQ(qmp_client_wait(t.c, "cpu-resize", seq, NULL, &e, T_MS),
		 -EREMOTEIO);
	if (!strstr(e.desc, "nothing changed (2 of 2 steps undone)"))
		printf("# cpu-resize: %s\n", e.desc);
	CHECK(strstr(e.desc, "nothing changed (2 of 2 steps undone)"));
	sim_guest_keep(2, false);
	hotplug_unboot(t.hp);
	for (unsigned int i = 0; i < 5; i++)
		CHECK(hotplug_present_at_boot(t.hp, i));
	CHECK(!hotplug_present_at_boot(t.hp, 5));
	CHECK_EQ(fake_vm_guest_boot(t.fv, 5), 0);
	CHECK_EQ(hotplug_boot(t.hp), 0);
	CHECK_EQ(cpus_fast(), 5);
	teardown();
}
