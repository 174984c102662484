// SPDX-License-Identifier: GPL-2.0-only
/*
 * vmm/api/qmp_cmds*.c on the real hotplug controller, host table and cpuhp,
 * with fake vCPUs and a scripted guest (fake_vm.h), through the real QMP
 * server and the client library: every command's reply shape, every
 * argument error, QEMU's request shapes (as libvirt sends them), events
 * with QEMU's fields, cpu-resize's undo.  Failures are injected as a user
 * injects them (cpuhp-inject-fault), or scripted into the guest.
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

#include "fake_vm.h"
#include "hotvm/guest_states.h"
#include "hotvm/ring.h"
#include "hotplug.h"
#include "hotplug_vmm.h"
#include "qmp.h"
#include "qmp_client.h"
#include "qmp_cmds.h"
#include "check.h"
#include "sim_guest.h"
#include "vm.h"

#define T_MS 5000
/* How long the controller waits for a guest told not to answer. */
#define T_GUEST_MS 300

static struct {
	char dir[48], path[96];
	struct qmp_server *s;
	struct qmp_cmds *qc;
	struct fake_vm *fv;
	struct hotplug *hp;
	struct qmp_client *c;
} t;

static void setup(unsigned int max, unsigned int boot)
{
	struct qmp_client_error e;

	snprintf(t.dir, sizeof(t.dir), "/tmp/hotvm-api-XXXXXX");
	if (!mkdtemp(t.dir))
		abort();
	snprintf(t.path, sizeof(t.path), "%s/api.sock", t.dir);
	if (fake_vm_create(max, boot, T_GUEST_MS, &t.fv))
		abort();
	t.hp = t.fv->hp;
	CHECK_EQ(qmp_server_create(&(struct qmp_server_opts){ .path = t.path },
				   &t.s),
		 0);
	CHECK_EQ(qmp_cmds_register(t.s, t.hp, &t.fv->vm, &t.qc), 0);
	CHECK_EQ(qmp_server_start(t.s), 0);
	CHECK_EQ(qmp_client_connect(t.path, 1, T_MS, &t.c, &e), 0);
}

static struct json_object *get(struct json_object *o, const char *k);
static const char *gs(struct json_object *o, const char *k);
static long long gi(struct json_object *o, const char *k);

/*
 * Every test ends with the two sides in agreement, as the controller's
 * own check sees them (test_agreement makes them disagree on purpose and
 * recovers).
 */
static void check_agreement(void)
{
	struct json_object *r = NULL, *cpus, *c;
	struct qmp_client_error e;

	if (qmp_client_execute(t.c, "query-cpuhp", NULL, &r, &e, T_MS))
		return; /* a test that closed the connection on purpose */
	cpus = get(r, "cpus");
	for (size_t i = 0; i < json_object_array_length(cpus); i++) {
		c = json_object_array_get_idx(cpus, i);
		if (!json_object_get_boolean(get(c, "agree"))) {
			printf("# cpu %lld: the sides disagree: %s\n",
			       gi(c, "cpu"), gs(c, "disagreement"));
			check_failures++;
		}
	}
	json_object_put(r);
}

static void teardown(void)
{
	check_agreement();
	qmp_client_close(t.c);
	qmp_cmds_detach(t.qc);
	qmp_server_stop(t.s);
	fake_vm_destroy(t.fv);
	qmp_cmds_unregister(t.qc);
	rmdir(t.dir);
}

/* Runs cmd with printf-style JSON arguments; the reply, or NULL. */
static struct json_object *ok(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static struct json_object *ok(const char *cmd, const char *fmt, ...)
{
	struct json_object *args = NULL, *r = NULL;
	struct qmp_client_error e;
	char buf[1024];
	va_list ap;
	int rc;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		args = json_tokener_parse(buf);
		CHECK(args);
	}
	rc = qmp_client_execute(t.c, cmd, args, &r, &e, T_MS);
	json_object_put(args);
	if (rc)
		printf("# %s %s: %d %s: %s\n", cmd, fmt ? buf : "", rc, e.class,
		       e.desc);
	CHECK_EQ(rc, 0);
	return r;
}

/* Expects an error of class whose desc contains want. */
static void fails(const char *class, const char *want, const char *cmd,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void fails(const char *class, const char *want, const char *cmd,
		  const char *fmt, ...)
{
	struct json_object *args = NULL, *r = NULL;
	struct qmp_client_error e = { 0 };
	char buf[1024] = "";
	va_list ap;
	int rc;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		args = json_tokener_parse(buf);
		CHECK(args);
	}
	rc = qmp_client_execute(t.c, cmd, args, &r, &e, T_MS);
	json_object_put(args);
	json_object_put(r);
	CHECK_EQ(rc, -EREMOTEIO);
	if (rc != -EREMOTEIO || strcmp(e.class, class) || !strstr(e.desc, want))
		printf("# %s %s: got %s: '%s', want %s: '%s'\n", cmd, buf,
		       e.class, e.desc, class, want);
	CHECK_STREQ(e.class, class);
	CHECK(strstr(e.desc, want));
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, k, &v))
		return NULL;
	return v;
}

static const char *gs(struct json_object *o, const char *k)
{
	struct json_object *v = get(o, k);

	return json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static long long gi(struct json_object *o, const char *k)
{
	struct json_object *v = get(o, k);

	return json_object_is_type(v, json_type_int) ? json_object_get_int64(v)
						     : -999;
}

static bool gb(struct json_object *o, const char *k)
{
	return json_object_get_boolean(get(o, k));
}

static bool has(struct json_object *o, const char *k)
{
	return json_object_is_type(o, json_type_object) &&
	       json_object_object_get_ex(o, k, NULL);
}

/* Exactly these members, no others. */
static void keys(struct json_object *o, const char *const *want)
{
	size_t n = 0;

	CHECK(json_object_is_type(o, json_type_object));
	for (; want[n]; n++)
		if (!has(o, want[n])) {
			printf("# missing member '%s' in %s\n", want[n],
			       json_object_to_json_string(o));
			check_failures++;
		}
	CHECK_EQ(json_object_object_length(o), n);
}

/* The next event called name, skipping others; NULL if none comes. */
static struct json_object *event(const char *name)
{
	for (;;) {
		struct json_object *ev;

		if (qmp_client_next_event(t.c, &ev, 200))
			return NULL;
		if (!strcmp(gs(ev, "event") ?: "", name))
			return ev;
		json_object_put(ev);
	}
}

/* Whether an event @name comes (within event()'s wait); none is kept. */
static bool saw_event(const char *name)
{
	struct json_object *ev = event(name);
	bool seen = ev != NULL;

	json_object_put(ev);
	return seen;
}

static void drain_events(void)
{
	struct json_object *ev;

	while (!qmp_client_next_event(t.c, &ev, 50))
		json_object_put(ev);
}

static struct json_object *cpuhp_cpu(unsigned int cpu)
{
	char a[32];
	struct json_object *r, *c;

	snprintf(a, sizeof(a), "{\"cpu\": %u}", cpu);
	r = ok("query-cpuhp", "%s", a);
	c = json_object_get(json_object_array_get_idx(get(r, "cpus"), 0));
	json_object_put(r);
	return c;
}

static bool cpu_plugged(unsigned int cpu)
{
	struct json_object *c = cpuhp_cpu(cpu);
	bool p = gi(get(c, "host"), "state") != HOST_OFFLINE;

	json_object_put(c);
	return p;
}

/* The next callback of a host state fails for cpu, as a user injects it. */
static void inject_host(unsigned int cpu, const char *state)
{
	char a[128];

	snprintf(a, sizeof(a),
		 "{\"cpu\": %u, \"side\": \"host\", \"state\": \"%s\"}", cpu,
		 state);
	json_object_put(ok("cpuhp-inject-fault", "%s", a));
}

/* ---- QEMU's commands ---- */

static void test_commands_listed(void)
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

static void test_hotpluggable_shape(void)
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

static void test_device_add_libvirt(void)
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

static void test_device_add_errors(void)
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

static void test_device_del(void)
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

/*
 * The guest ejects a CPU on its own (Linux's sysfs eject): honoured as
 * QEMU does, the host table follows, DEVICE_DELETED, the slot is free.
 * With --guest-eject deny the CPU stays and the guest takes it back.
 */
static void test_guest_eject(void)
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
static void test_late_eject(void)
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
static void test_reset(void)
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
 * A late guest's word: the host asks it to bring CPU @cpu up, it does not
 * answer in time (the hot-add fails and is taken back), then it reports
 * the CPU online.  Believed, since the host asked and the walk never
 * ended, but the host does not hold the CPU: the sides disagree.
 */
static void late_claim(unsigned int cpu)
{
	sim_guest_keep(cpu, true);
	fails("GenericError", "the guest did not bring it up", "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": %u}", cpu);
	sim_guest_keep(cpu, false);
	sim_guest_report(cpu, GUEST_ONLINE);
}

/*
 * The agreement check: a guest that claims a CPU the host asked for and
 * then took back is flagged (query-cpuhp, CPUHP_AGREEMENT), the CPU
 * refused until cpuhp-recover, which puts both sides back in line.
 */
static void test_agreement(void)
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

static void test_status_quit(void)
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

static void test_query_cpuhp(void)
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

static void test_set_target(void)
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

/*
 * Issue 21, item 3: until the guest says that it reports its table (the
 * tiny guest's hotplug driver does as it starts, before "ready"),
 * guest-side faults and targets are refused in words that say so; from
 * then on, before any hot-add, they are taken.
 */
static void test_guest_not_yet_reporting(void)
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

static void test_inject_and_hotplug(void)
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

static void test_events(void)
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

static void test_resize(void)
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

/* Several clients: requests serialised, every client sees the events. */
static void test_two_clients(void)
{
	struct qmp_client *c2, *c1;
	struct qmp_client_error e;
	struct json_object *ev;

	setup(4, 1);
	CHECK_EQ(qmp_client_connect(t.path, 1, T_MS, &c2, &e), 0);
	json_object_put(ok("device_add", "{\"driver\": \"host-x86_64-cpu\", "
					 "\"socket-id\": 1, \"id\": \"a\"}"));
	CHECK_EQ(qmp_client_next_event(c2, &ev, T_MS), 0);
	CHECK(has(ev, "event"));
	json_object_put(ev);
	c1 = t.c;
	t.c = c2;
	fails("GenericError", "Duplicate device ID 'a'", "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": 2, \"id\": "
	      "\"a\"}");
	t.c = c1;
	qmp_client_close(c2);
	teardown();
}

/* ---- bursts: requests queued together run as one batch ---- */

/*
 * Holds the operation thread: CPU 1's guest answers no eject, so c2's
 * removal of it waits ms for one (and then fails, CPU 1 staying online).
 * Returns once it runs; finish with unblock().
 */
static long block(struct qmp_client *c2, int ms)
{
	struct qmp_client_error e;
	struct json_object *a, *ev;
	char buf[96];
	long seq;

	sim_guest_keep(1, true);
	snprintf(buf, sizeof(buf),
		 "{\"cpu\": 1, \"state\": \"offline\", \"timeout-ms\": %d}",
		 ms);
	a = json_tokener_parse(buf);
	seq = qmp_client_send(c2, "cpu-hotplug", a, &e);
	json_object_put(a);
	CHECK(seq > 0);
	/* It runs once CPU 1 has left online (however loaded the host). */
	while (!qmp_client_next_event(t.c, &ev, T_MS)) {
		struct json_object *d = get(ev, "data");
		bool running = !strcmp(gs(ev, "event") ?: "", "CPUHP_STATE") &&
			       gi(d, "cpu") == 1 &&
			       !strcmp(gs(d, "direction") ?: "", "down");

		json_object_put(ev);
		if (running)
			return seq;
	}
	CHECK(!"the blocking operation never started");
	return seq;
}

static void unblock(struct qmp_client *c2, long seq)
{
	struct qmp_client_error e;

	CHECK_EQ(qmp_client_wait(c2, "cpu-hotplug", seq, NULL, &e, T_MS),
		 -EREMOTEIO);
	sim_guest_keep(1, false);
}

/* Waits until n operations are queued behind the one that runs. */
static void wait_queued(struct qmp_client *c3, long long n)
{
	struct qmp_client_error e;
	long long have = -1;

	for (int i = 0; i < 100000 && have != n; i++) {
		struct json_object *r = NULL;

		CHECK_EQ(qmp_client_execute(c3, "query-hotplug-stats", NULL, &r,
					    &e, T_MS),
			 0);
		have = gi(r, "queued-operations");
		json_object_put(r);
	}
	CHECK_EQ(have, n);
}

/* Sends cmd with JSON args on t.c without waiting; its sequence number. */
static long send_req(const char *cmd, const char *args)
{
	struct qmp_client_error e;
	struct json_object *a = json_tokener_parse(args);
	long seq;

	CHECK(a);
	seq = qmp_client_send(t.c, cmd, a, &e);
	json_object_put(a);
	CHECK(seq > 0);
	return seq;
}

/* The reply to seq: ok (want NULL) or an error whose desc has want. */
static void reply_is(const char *cmd, long seq, const char *want)
{
	struct qmp_client_error e = { 0 };
	struct json_object *r = NULL;
	int rc = qmp_client_wait(t.c, cmd, seq, &r, &e, T_MS);

	json_object_put(r);
	if (want ? rc != -EREMOTEIO || !strstr(e.desc, want) : rc != 0)
		printf("# %s #%ld: %d '%s', want '%s'\n", cmd, seq, rc, e.desc,
		       want ?: "ok");
	CHECK(want ? rc == -EREMOTEIO && strstr(e.desc, want) : rc == 0);
}

/*
 * The order a batch leaves in the host's CPUHP_STATE events (Linux 6.5's
 * parallel bring-up): every CPU of it (@cpus, a mask) reaches @first
 * before any reaches @second.  Returns how many reached @second.
 */
static int batched(unsigned int cpus, const char *dir, const char *first,
		   const char *second)
{
	struct json_object *ev;
	int last_first = -1, first_second = -1, n = 0, seconds = 0;

	while ((ev = event("CPUHP_STATE"))) {
		struct json_object *d = get(ev, "data");
		const char *name = gs(d, "name") ?: "";

		if (!strcmp(gs(d, "side") ?: "", "host") &&
		    !strcmp(gs(d, "kind") ?: "", "step") &&
		    !strcmp(gs(d, "direction") ?: "", dir) &&
		    !json_object_get_boolean(get(d, "rollback")) &&
		    (cpus >> gi(d, "cpu") & 1)) {
			if (!strcmp(name, first))
				last_first = n;
			if (!strcmp(name, second)) {
				seconds++;
				if (first_second < 0)
					first_second = n;
			}
		}
		n++;
		json_object_put(ev);
	}
	if (!(last_first >= 0 && last_first < first_second))
		printf("# %s: last %s at %d, first %s at %d\n", dir, first,
		       last_first, second, first_second);
	CHECK(last_first >= 0 && last_first < first_second);
	return seconds;
}

#define ADD(sock, id)                                                          \
	"{\"driver\": \"host-x86_64-cpu\", \"socket-id\": " #sock id "}"

/*
 * A burst of device_add and device_del from one client, queued while
 * another operation runs: each burst is one batch, every request answered
 * in order as if they had run one at a time, a failure in the middle of
 * the batch its own.
 */
static void test_burst(void)
{
	struct qmp_client_error e;
	struct qmp_client *c2, *c3;
	long blk, seq[8];

	setup(8, 2);
	CHECK_EQ(qmp_client_connect(t.path, 1, T_MS, &c2, &e), 0);
	CHECK_EQ(qmp_client_connect(t.path, 1, T_MS, &c3, &e), 0);

	/* Eight adds; the batch takes 2, 3, 4, 5: 3 fails in its walk. */
	inject_host(3, "guest:ap-starting");
	drain_events();
	blk = block(c2, 1000);
	seq[0] = send_req("device_add", ADD(2, ", \"id\": \"b2\""));
	seq[1] = send_req("device_add", ADD(3, ", \"id\": \"b3\""));
	seq[2] = send_req("device_add", ADD(4, ""));
	seq[3] = send_req("device_add", ADD(2, ", \"id\": \"again\""));
	seq[4] = send_req("device_add", ADD(6, ", \"id\": \"b2\""));
	seq[5] = send_req("device_add", ADD(99, ""));
	seq[6] = send_req("device_add", ADD(3, ", \"id\": \"b3\""));
	seq[7] = send_req("device_add", ADD(5, ", \"id\": \"b5\""));
	wait_queued(c3, 8);
	unblock(c2, blk);
	reply_is("device_add", seq[0], NULL);
	reply_is("device_add", seq[1],
		 "cpu 3: guest:ap-starting failed: Resource temporarily "
		 "unavailable (injected fault); it stays at offline");
	reply_is("device_add", seq[2], NULL);
	reply_is("device_add", seq[3], "CPU[2] with APIC ID 2 exists");
	reply_is("device_add", seq[4], "Duplicate device ID 'b2'");
	reply_is("device_add", seq[5], "Invalid CPU socket-id: 99");
	/* After its twin failed, as it would have one at a time. */
	reply_is("device_add", seq[6], NULL);
	reply_is("device_add", seq[7], NULL);
	/* 3 is also walked after the batch, by itself. */
	CHECK_EQ(batched(1u << 2 | 1u << 4 | 1u << 5, "up", "vcpu:create",
			 "guest:ap-starting"),
		 3);
	for (unsigned int i = 0; i < 8; i++)
		CHECK_EQ(cpu_plugged(i), i != 6 && i != 7);

	/* Removals: one batch of 2, 4, 5 (one eject scan); 3 after it. */
	blk = block(c2, 1000);
	seq[0] = send_req("device_del", "{\"id\": \"b2\"}");
	seq[1] = send_req("device_del",
			  "{\"id\": \"/machine/peripheral-anon/device[0]\"}");
	seq[2] = send_req("device_del", "{\"id\": \"b5\"}");
	seq[3] = send_req("device_del", "{\"id\": \"b2\"}");
	seq[4] = send_req("device_del", "{\"id\": \"nosuch\"}");
	seq[5] = send_req("query-status", "{}");
	wait_queued(c3, 5);
	unblock(c2, blk);
	reply_is("device_del", seq[0], NULL);
	reply_is("device_del", seq[1], NULL);
	reply_is("device_del", seq[2], NULL);
	reply_is("device_del", seq[3], "Device 'b2' not found");
	reply_is("device_del", seq[4], "Device 'nosuch' not found");
	reply_is("query-status", seq[5], NULL);
	CHECK_EQ(batched(1u << 2 | 1u << 4 | 1u << 5, "down", "online",
			 "guest:ap-starting"),
		 3);
	for (unsigned int i = 0; i < 8; i++)
		CHECK_EQ(cpu_plugged(i), i < 2 || i == 3);
	qmp_client_close(c3);
	qmp_client_close(c2);
	teardown();
}

/* One line from a raw client's socket, without its end; false on timeout. */
static bool raw_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char ch;

		if (poll(&p, 1, T_MS) != 1 || read(fd, &ch, 1) != 1)
			return false;
		if (ch == '\n') {
			buf[n] = 0;
			return true;
		}
		if (n + 1 < len && ch != '\r')
			buf[n++] = ch;
	}
}

/* Reads lines until the next reply ("return" or "error"); false if none. */
static bool raw_reply(int fd, char *buf, size_t len)
{
	while (raw_line(fd, buf, len))
		if (!strncmp(buf, "{\"return\"", 9) ||
		    !strncmp(buf, "{\"error\"", 8))
			return true;
	return false;
}

/*
 * A burst sent in one write to an idle server, as a client that does not
 * wait for each reply sends it: queued whole before the operation thread
 * takes its first request (qmp_submit_hold), so it is one batch, not the
 * first alone and then the rest.
 */
static void test_burst_one_write(void)
{
	static const char burst[] =
		"{\"execute\": \"device_add\", \"arguments\": " ADD(
			2,
			"") "}\n"
			    "{\"execute\": \"device_add\", \"arguments\": " ADD(
				    3, "") "}\n"
					   "{\"execute\": \"device_add\", "
					   "\"arguments\": " ADD(4, "") "}\n";
	static const char caps[] = "{\"execute\": \"qmp_capabilities\"}\n";
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char line[4096];
	int fd;

	setup(8, 2);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", t.path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	CHECK_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK(raw_line(fd, line, sizeof(line))); /* the greeting */
	CHECK_EQ(write(fd, caps, strlen(caps)), (ssize_t)strlen(caps));
	CHECK(raw_reply(fd, line, sizeof(line)));
	drain_events();
	CHECK_EQ(write(fd, burst, strlen(burst)), (ssize_t)strlen(burst));
	for (int i = 0; i < 3; i++) {
		CHECK(raw_reply(fd, line, sizeof(line)));
		CHECK(!strncmp(line, "{\"return\"", 9));
	}
	/* Every one created before any is shown to the guest: one batch. */
	CHECK_EQ(batched(1u << 2 | 1u << 3 | 1u << 4, "up", "vcpu:create",
			 "guest:ap-starting"),
		 3);
	for (unsigned int i = 0; i < 8; i++)
		CHECK_EQ(cpu_plugged(i), i < 5);
	close(fd);
	teardown();
}

/*
 * A request of a burst refused in the batch's first phase keeps the
 * reason the same request sent alone gets (it used to say only
 * "State not recoverable").
 */
static void test_burst_reasons(void)
{
	struct qmp_client_error e;
	struct qmp_client *c2, *c3;
	struct json_object *c;
	long blk, seq[2];

	setup(4, 2);
	CHECK_EQ(qmp_client_connect(t.path, 1, T_MS, &c2, &e), 0);
	CHECK_EQ(qmp_client_connect(t.path, 1, T_MS, &c3, &e), 0);
	late_claim(2);
	c = cpuhp_cpu(2); /* the check flags it */
	CHECK(!gb(c, "agree"));
	json_object_put(c);
	drain_events();
	blk = block(c2, 1000);
	seq[0] = send_req("device_add", ADD(2, ""));
	seq[1] = send_req("device_add", ADD(3, ""));
	wait_queued(c3, 2);
	unblock(c2, blk);
	reply_is("device_add", seq[0],
		 "the host and the guest disagree about it");
	reply_is("device_add", seq[1], NULL);
	json_object_put(ok("cpuhp-recover", "{\"cpu\": 2}"));
	qmp_client_close(c2);
	qmp_client_close(c3);
	teardown();
}

/* How many vCPUs query-cpus-fast lists. */
static size_t cpus_fast(void)
{
	struct json_object *r = ok("query-cpus-fast", NULL);
	size_t n = json_object_array_length(r);

	json_object_put(r);
	return n;
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
 * the boot CPU", and its undo removed boot CPU 1 (issue 32, item 2).
 */
static void test_resize_during_reset(void)
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
static void test_reset_cancels_resize(void)
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
 * removed (issue 32, item 3: one forged report for CPU 0 used to hide it
 * from the counts, and cpu-resize gave the guest a vCPU more).
 */
static void test_forged_reports(void)
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

CHECK_MAIN(TEST(test_commands_listed), TEST(test_hotpluggable_shape),
	   TEST(test_device_add_libvirt), TEST(test_device_add_errors),
	   TEST(test_device_del), TEST(test_guest_eject), TEST(test_reset),
	   TEST(test_agreement), TEST(test_late_eject),
	   TEST(test_burst_reasons), TEST(test_status_quit),
	   TEST(test_query_cpuhp), TEST(test_set_target),
	   TEST(test_inject_and_hotplug), TEST(test_guest_not_yet_reporting),
	   TEST(test_events), TEST(test_resize), TEST(test_resize_during_reset),
	   TEST(test_reset_cancels_resize), TEST(test_two_clients),
	   TEST(test_burst), TEST(test_burst_one_write),
	   TEST(test_forged_reports))
