// SPDX-License-Identifier: GPL-2.0-only
/*
 * QEMU's commands as libvirt sends them, on the real controller over the
 * fake machine: the command list, query-hotpluggable-cpus' shape,
 * device_add and its errors, device_del, query-status and quit, and the
 * events with QEMU's fields.
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

void test_commands_listed(void)
{
	static const char *const want[] = {
		"query-hotpluggable-cpus",
		"device_add",
		"device_del",
		"query-cpus-fast",
		"query-status",
		"quit",
		"query-cpuhp",
		"cpuhp-set-target",
		"cpuhp-inject-fault",
		"cpu-resize",
		"cpu-hotplug",
	};
	struct json_object *r;

	setup(4, 1);
	r = ok("query-commands", NULL);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		bool found = false;

		for (size_t j = 0; j < json_object_array_length(r); j++)
			found |= !strcmp(
				gs(json_object_array_get_idx(r, j), "name"),
				want[i]);
		if (!found)
			printf("# %s not listed\n", want[i]);
		CHECK(found);
	}
	json_object_put(r);
	teardown();
}

void test_hotpluggable_shape(void)
{
	static const char *const ent[] = { "type", "vcpus-count", "props",
					   "qom-path", NULL };
	static const char *const props[] = { "socket-id", "core-id",
					     "thread-id", NULL };
	struct json_object *r;

	setup(4, 2);
	r = ok("query-hotpluggable-cpus", NULL);
	CHECK_EQ(json_object_array_length(r), 4);
	for (int i = 0; i < 4; i++) {
		struct json_object *e = json_object_array_get_idx(r, i);
		int slot = 3 - i; /* highest first, like QEMU */

		CHECK_STREQ(gs(e, "type"), "host-x86_64-cpu");
		CHECK_EQ(gi(e, "vcpus-count"), 1);
		keys(get(e, "props"), props);
		CHECK_EQ(gi(get(e, "props"), "socket-id"), slot);
		CHECK_EQ(gi(get(e, "props"), "core-id"), 0);
		CHECK_EQ(gi(get(e, "props"), "thread-id"), 0);
		if (slot < 2) {
			char p[64];

			keys(e, ent);
			snprintf(p, sizeof(p), "/machine/unattached/device[%d]",
				 slot);
			CHECK_STREQ(gs(e, "qom-path"), p);
		} else {
			CHECK_EQ(json_object_object_length(e), 3);
		}
	}
	json_object_put(r);
	fails("GenericError", "Parameter 'x' is unexpected",
	      "query-hotpluggable-cpus", "{\"x\": 1}");
	teardown();
}

void test_device_add_libvirt(void)
{
	static const char *const ost[] = { "device", "slot",   "slot-type",
					   "source", "status", NULL };
	static const char *const fast[] = { "cpu-index", "qom-path",
					    "thread-id", "props",
					    "target",	 NULL };
	struct json_object *r, *ev, *e;

	setup(4, 1);
	/* libvirt's qemuMonitorJSONAddDeviceProps for a vcpu */
	r = ok("device_add", "{\"driver\": \"qemu64-x86_64-cpu\", \"id\": "
			     "\"vcpu1\", \"core-id\": 0, \"thread-id\": 0, "
			     "\"socket-id\": 1}");
	CHECK(json_object_is_type(r, json_type_object));
	CHECK_EQ(json_object_object_length(r), 0);
	json_object_put(r);
	ev = event("ACPI_DEVICE_OST");
	CHECK(ev);
	e = get(get(ev, "data"), "info");
	keys(e, ost);
	CHECK_STREQ(gs(e, "device"), "vcpu1");
	CHECK_STREQ(gs(e, "slot"), "1");
	CHECK_STREQ(gs(e, "slot-type"), "CPU");
	CHECK_EQ(gi(e, "source"), 1);
	CHECK_EQ(gi(e, "status"), 0);
	CHECK(has(get(ev, "timestamp"), "seconds"));
	json_object_put(ev);
	drain_events();

	/* QEMU's docs/cpu-hotplug.rst: no id, anonymous path */
	json_object_put(ok("device_add", "{\"driver\": \"host-x86_64-cpu\", "
					 "\"socket-id\": 3, \"core-id\": 0, "
					 "\"thread-id\": 0}"));
	/* Decimal strings, as QemuOpts takes them. */
	json_object_put(ok("device_add",
			   "{\"driver\": \"max-x86_64-cpu\", "
			   "\"id\": \"c2\", \"socket-id\": \"2\"}"));
	r = ok("query-hotpluggable-cpus", NULL);
	CHECK_STREQ(gs(json_object_array_get_idx(r, 0), "qom-path"),
		    "/machine/peripheral-anon/device[0]");
	CHECK_STREQ(gs(json_object_array_get_idx(r, 1), "qom-path"),
		    "/machine/peripheral/c2");
	CHECK_STREQ(gs(json_object_array_get_idx(r, 2), "qom-path"),
		    "/machine/peripheral/vcpu1");
	CHECK_STREQ(gs(json_object_array_get_idx(r, 3), "qom-path"),
		    "/machine/unattached/device[0]");
	json_object_put(r);

	r = ok("query-cpus-fast", NULL);
	CHECK_EQ(json_object_array_length(r), 4);
	for (int i = 0; i < 4; i++) {
		e = json_object_array_get_idx(r, i);
		keys(e, fast);
		CHECK_EQ(gi(e, "cpu-index"), i);
		CHECK_EQ(gi(e, "thread-id"), 1000 + i);
		CHECK_STREQ(gs(e, "target"), "x86_64");
		CHECK_EQ(gi(get(e, "props"), "socket-id"), i);
	}
	CHECK_STREQ(gs(json_object_array_get_idx(r, 1), "qom-path"),
		    "/machine/peripheral/vcpu1");
	json_object_put(r);
	teardown();
}

void test_device_add_errors(void)
{
	setup(4, 1);
	fails("GenericError", "Parameter 'driver' is missing", "device_add",
	      "{\"socket-id\": 1}");
	fails("GenericError",
	      "Invalid parameter type for 'driver', expected: string",
	      "device_add", "{\"driver\": 7, \"socket-id\": 1}");
	fails("GenericError", "'e1000' is not a valid device model name",
	      "device_add", "{\"driver\": \"e1000\", \"socket-id\": 1}");
	fails("GenericError", "'-x86_64-cpu' is not a valid device model name",
	      "device_add", "{\"driver\": \"-x86_64-cpu\", \"socket-id\": 1}");
	fails("GenericError", "Property 'host-x86_64-cpu.node' not found",
	      "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 1, "
	      "\"node\": 0}");
	fails("GenericError", "CPU socket-id is not set", "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"core-id\": 0}");
	fails("GenericError", "Invalid CPU socket-id: 4 must be in range 0:3",
	      "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 4}");
	fails("GenericError", "Invalid CPU socket-id: -1 must be in range 0:3",
	      "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": -1}");
	fails("GenericError", "Invalid CPU core-id: 1 must be in range 0:0",
	      "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 1, "
	      "\"core-id\": 1}");
	fails("GenericError", "Invalid CPU thread-id: 1 must be in range 0:0",
	      "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 1, "
	      "\"thread-id\": 1}");
	fails("GenericError",
	      "Invalid parameter type for 'socket-id', expected: integer",
	      "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": \"one\"}");
	fails("GenericError",
	      "Invalid parameter type for 'core-id', expected: integer",
	      "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 1, "
	      "\"core-id\": [0]}");
	fails("GenericError", "Parameter 'id' expects an identifier",
	      "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 1, "
	      "\"id\": \"1cpu\"}");
	fails("GenericError", "CPU[0] with APIC ID 0 exists", "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 0}");
	json_object_put(ok("device_add",
			   "{\"driver\": \"host-x86_64-cpu\", "
			   "\"socket-id\": 1, \"id\": \"cpu1\"}"));
	fails("GenericError", "CPU[1] with APIC ID 1 exists", "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 1, "
	      "\"id\": \"other\"}");
	fails("GenericError", "Duplicate device ID 'cpu1'", "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 2, "
	      "\"id\": \"cpu1\"}");
	/* The step that presents it fails: the add rolls back. */
	inject_host(2, "guest:ap-starting");
	fails("GenericError",
	      "cpu 2: guest:ap-starting failed: Resource temporarily "
	      "unavailable (injected fault); rolled back to offline",
	      "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 2}");
	CHECK(!cpu_plugged(2));
	CHECK_EQ(sim_guest_state(2), GUEST_OFFLINE);
	teardown();
}

void test_device_del(void)
{
	static const char *const del[] = { "device", "path", NULL };
	struct json_object *ev, *d;

	setup(4, 2);
	json_object_put(ok("device_add",
			   "{\"driver\": \"host-x86_64-cpu\", "
			   "\"socket-id\": 2, \"id\": \"cpu2\"}"));
	json_object_put(ok("device_add", "{\"driver\": \"host-x86_64-cpu\", "
					 "\"socket-id\": 3}"));
	drain_events();
	json_object_put(ok("device_del", "{\"id\": \"cpu2\"}"));
	/* The event came before the reply: it is kept by the client. */
	CHECK(qmp_client_pending_events(t.c) > 0);
	ev = event("DEVICE_DELETED");
	CHECK(ev);
	d = get(ev, "data");
	keys(d, del);
	CHECK_STREQ(gs(d, "device"), "cpu2");
	CHECK_STREQ(gs(d, "path"), "/machine/peripheral/cpu2");
	json_object_put(ev);
	CHECK(!cpu_plugged(2));

	/* By QOM path; no id, so no "device" member. */
	json_object_put(ok("device_del",
			   "{\"id\": \"/machine/peripheral-anon/device[0]\"}"));
	ev = event("DEVICE_DELETED");
	CHECK(ev);
	d = get(ev, "data");
	CHECK(!has(d, "device"));
	CHECK_STREQ(gs(d, "path"), "/machine/peripheral-anon/device[0]");
	json_object_put(ev);

	/* A boot CPU other than 0, by its path. */
	json_object_put(ok("device_del",
			   "{\"id\": \"/machine/unattached/device[1]\"}"));
	ev = event("DEVICE_DELETED");
	CHECK_STREQ(gs(get(ev, "data"), "path"),
		    "/machine/unattached/device[1]");
	json_object_put(ev);

	fails("GenericError", "Boot CPU is unpluggable", "device_del",
	      "{\"id\": \"/machine/unattached/device[0]\"}");
	fails("DeviceNotFound", "Device 'cpu2' not found", "device_del",
	      "{\"id\": \"cpu2\"}");
	fails("DeviceNotFound", "Device 'nope' not found", "device_del",
	      "{\"id\": \"nope\"}");
	fails("GenericError", "Parameter 'id' is missing", "device_del", "{}");
	fails("GenericError",
	      "Invalid parameter type for 'id', expected: string", "device_del",
	      "{\"id\": 2}");
	fails("GenericError", "Parameter 'force' is unexpected", "device_del",
	      "{\"id\": \"cpu2\", \"force\": true}");

	/* A guest that does not eject: an error, and the CPU stays. */
	json_object_put(ok("device_add", "{\"driver\": \"host-x86_64-cpu\", "
					 "\"socket-id\": 3, \"id\": \"c3\"}"));
	drain_events();
	sim_guest_keep(3, true);
	fails("GenericError",
	      "cpu 3: hot-remove failed: the guest did not eject it within "
	      "300 ms (give a longer timeout for a slow guest); rolled back "
	      "to online",
	      "device_del", "{\"id\": \"c3\"}");
	CHECK(cpu_plugged(3));
	CHECK_EQ(sim_guest_state(3), GUEST_ONLINE);
	CHECK(!saw_event("DEVICE_DELETED"));
	sim_guest_hold(3, true);
	fails("GenericError",
	      "cpu 3: hot-remove refused: the guest is still walking",
	      "device_del", "{\"id\": \"c3\"}");
	teardown();
}

void test_status_quit(void)
{
	static const char *const st[] = { "running", "singlestep", "status",
					  NULL };
	struct json_object *r;
	uint64_t v = 0;

	setup(2, 1);
	r = ok("query-status", NULL);
	keys(r, st);
	CHECK(json_object_get_boolean(get(r, "running")));
	CHECK(!json_object_get_boolean(get(r, "singlestep")));
	CHECK_STREQ(gs(r, "status"), "running");
	json_object_put(r);
	fails("GenericError", "Parameter 'a' is unexpected", "query-status",
	      "{\"a\": 1}");
	fails("GenericError", "Parameter 'now' is unexpected", "quit",
	      "{\"now\": true}");
	CHECK(read(t.fv->vm.stop_efd, &v, sizeof(v)) < 0);
	r = ok("quit", NULL);
	CHECK_EQ(json_object_object_length(r), 0);
	json_object_put(r);
	CHECK_EQ(read(t.fv->vm.stop_efd, &v, sizeof(v)), sizeof(v));
	CHECK(vm_stopping(&t.fv->vm));
	CHECK_EQ(t.fv->vm.stop_status, 0);
	teardown();
}

/* ---- hotvm's commands ---- */

void test_events(void)
{
	static const char *const f[] = { "cpu",	     "side",	 "kind",
					 "state",    "name",	 "direction",
					 "rollback", "injected", "ret",
					 NULL };
	static const char *const stage[] = { "cpu",   "side",	   "kind",
					     "stage", "direction", NULL };
	struct json_object *ev;
	int steps = 0, dones = 0, guest = 0;
	char stages[64] = "";

	setup(4, 1);
	json_object_put(
		ok("cpu-hotplug", "{\"cpu\": 3, \"state\": \"online\"}"));
	while ((ev = event("CPUHP_STATE"))) {
		struct json_object *d = get(ev, "data");

		CHECK_EQ(gi(d, "cpu"), 3);
		/* What the host saw of the guest: the CPU presented, started. */
		if (!strcmp(gs(d, "kind"), "stage")) {
			keys(d, stage);
			CHECK_STREQ(gs(d, "side"), "guest");
			snprintf(stages + strlen(stages),
				 sizeof(stages) - strlen(stages), " %s",
				 gs(d, "stage") ?: "?");
			json_object_put(ev);
			continue;
		}
		keys(d, f);
		steps += !strcmp(gs(d, "kind"), "step");
		dones += !strcmp(gs(d, "kind"), "done");
		guest += !strcmp(gs(d, "side"), "guest");
		if (!strcmp(gs(d, "kind"), "done") &&
		    !strcmp(gs(d, "side"), "host")) {
			CHECK_STREQ(gs(d, "name"), "online");
			CHECK_EQ(gi(d, "ret"), 0);
		}
		json_object_put(ev);
	}
	CHECK_EQ(steps, 12);
	CHECK_EQ(dones, 2);
	CHECK_EQ(guest, 9);
	CHECK_STREQ(stages, " presented started");
	teardown();
}
