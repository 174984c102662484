// SPDX-License-Identifier: GPL-2.0-only
/*
 * The machine and client the API tests' cases run on (test_api*.c): the
 * real QMP server and commands on the real controller over the fake
 * machine (tests/fake), a client connected, the reply helpers, and the
 * agreement check every case ends with.
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
#include "vm.h"

struct api_test t;

void setup(unsigned int max, unsigned int boot)
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

struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, k, &v))
		return NULL;
	return v;
}

/*
 * Every test ends with the two sides in agreement, as the controller's
 * own check sees them (test_agreement makes them disagree on purpose and
 * recovers).
 */
void check_agreement(void)
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

void teardown(void)
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
struct json_object *ok(const char *cmd, const char *fmt, ...)
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
void fails(const char *class, const char *want, const char *cmd,
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

const char *gs(struct json_object *o, const char *k)
{
	struct json_object *v = get(o, k);

	return json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

long long gi(struct json_object *o, const char *k)
{
	struct json_object *v = get(o, k);

	return json_object_is_type(v, json_type_int) ? json_object_get_int64(v)
						     : -999;
}

bool gb(struct json_object *o, const char *k)
{
	return json_object_get_boolean(get(o, k));
}

bool has(struct json_object *o, const char *k)
{
	return json_object_is_type(o, json_type_object) &&
	       json_object_object_get_ex(o, k, NULL);
}

/* Exactly these members, no others. */
void keys(struct json_object *o, const char *const *want)
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
struct json_object *event(const char *name)
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
bool saw_event(const char *name)
{
	struct json_object *ev = event(name);
	bool seen = ev != NULL;

	json_object_put(ev);
	return seen;
}

void drain_events(void)
{
	struct json_object *ev;

	while (!qmp_client_next_event(t.c, &ev, 50))
		json_object_put(ev);
}

struct json_object *cpuhp_cpu(unsigned int cpu)
{
	char a[32];
	struct json_object *r, *c;

	snprintf(a, sizeof(a), "{\"cpu\": %u}", cpu);
	r = ok("query-cpuhp", "%s", a);
	c = json_object_get(json_object_array_get_idx(get(r, "cpus"), 0));
	json_object_put(r);
	return c;
}

bool cpu_plugged(unsigned int cpu)
{
	struct json_object *c = cpuhp_cpu(cpu);
	bool p = gi(get(c, "host"), "state") != HOST_OFFLINE;

	json_object_put(c);
	return p;
}

/* The next callback of a host state fails for cpu, as a user injects it. */
void inject_host(unsigned int cpu, const char *state)
{
	char a[128];

	snprintf(a, sizeof(a),
		 "{\"cpu\": %u, \"side\": \"host\", \"state\": \"%s\"}", cpu,
		 state);
	json_object_put(ok("cpuhp-inject-fault", "%s", a));
}

/* ---- QEMU's commands ---- */

/*
 * A late guest's word: the host asks it to bring CPU @cpu up, it does not
 * answer in time (the hot-add fails and is taken back), then it reports
 * the CPU online.  Believed, since the host asked and the walk never
 * ended, but the host does not hold the CPU: the sides disagree.
 */
void late_claim(unsigned int cpu)
{
	sim_guest_keep(cpu, true);
	fails("GenericError", "the guest did not bring it up", "device_add",
	      "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": %u}", cpu);
	sim_guest_keep(cpu, false);
	sim_guest_report(cpu, GUEST_ONLINE);
}

/* Sends cmd with JSON args on t.c without waiting; its sequence number. */
long send_req(const char *cmd, const char *args)
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

/* How many vCPUs query-cpus-fast lists. */
size_t cpus_fast(void)
{
	struct json_object *r = ok("query-cpus-fast", NULL);
	size_t n = json_object_array_length(r);

	json_object_put(r);
	return n;
}
