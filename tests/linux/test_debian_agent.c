// SPDX-License-Identifier: GPL-2.0-only
/*
 * Linux hot-plug the way Debian does it, in the nested
 * lab: the Debian 12 image (tools/debian-image.sh) on hotvm --agent with
 * its default channel (virtio-console, Debian's own qemu-guest-agent
 * unit), --agent-trace off so that every agent call counted during an
 * operation is the operation's own.
 *
 * A hot-add with "wait": "started" must be onlined by the agent as soon
 * as Linux acknowledged the CPU: its host step "online" (the wait for
 * Linux's online list) may last no longer than the agent's calls in it
 * (query-hotplug-stats' agent call-us, taken around the operation) and
 * 500 ms more; a fixed grace time before the agent is asked (hotvm's was
 * 1 s) fails it.  The removal that follows must be Linux's own
 * (offlined-by guest: Debian's kernel offlines the CPU in its eject path),
 * with no agent call before the eject.
 *
 * Usage: test-debian-agent LINUX IMAGE (as test-debian); HOTVM, DISK.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check.h"
#include "lab_linux.h"
#include "vmproc.h"

/* The online step's time beyond its agent calls: 0 without a grace. */
#define SLACK_MS 500

static struct vmproc v;

/* The reply's host step @name's time (us), or -1. */
static long step_us(struct json_object *r, const char *name)
{
	struct json_object *steps, *s, *x;

	if (!json_object_object_get_ex(r, "steps", &steps))
		return -1;
	for (size_t i = 0; i < json_object_array_length(steps); i++) {
		s = json_object_array_get_idx(steps, i);
		if (strcmp(vmproc_str(s, "side", NULL), "host") ||
		    strcmp(vmproc_str(s, "name", NULL), name))
			continue;
		if (json_object_object_get_ex(s, "us", &x))
			return (long)json_object_get_int64(x);
	}
	return -1;
}

/* One hot-add with "wait": "started", onlined by Debian's agent at once. */
static void add_at_once(int cpu)
{
	struct json_object *r = NULL;
	long calls0 = lab_agent_stat(&v, "call-us"),
	     set0 = lab_agent_stat(&v, "set-vcpus-us");
	long t0 = lab_now_ms(), ms, online, calls, set;
	char err[256];
	int ret = vmproc_qmp(&v, "cpu-hotplug", &r, err, sizeof(err),
			     "{\"cpu\": %d, \"state\": \"online\", "
			     "\"wait\": \"started\"}",
			     cpu);

	ms = lab_now_ms() - t0;
	if (ret)
		printf("# cpu-hotplug %d: %s\n", cpu, err);
	CHECK_EQ(ret, 0);
	if (!r)
		return;
	calls = lab_agent_stat(&v, "call-us") - calls0;
	set = lab_agent_stat(&v, "set-vcpus-us") - set0;
	online = step_us(r, "online");
	printf("# cpu %d: %ld ms, onlined by %s; step online %ld us, agent "
	       "calls %ld us (guest-set-vcpus %ld us)\n",
	       cpu, ms, vmproc_str(r, "onlined-by", NULL), online, calls, set);
	CHECK_STREQ(vmproc_str(r, "onlined-by", NULL), "agent");
	CHECK(calls0 >= 0 && calls > 0 && set > 0 && online > 0);
	/* No wait before the agent is asked: the step is its calls. */
	CHECK(online - calls < SLACK_MS * 1000L);
	json_object_put(r);
}

/* The removal is Linux's own: it offlines the CPU in its eject path. */
static void remove_own(int cpu)
{
	struct json_object *r = NULL;
	long set0 = lab_agent_stat(&v, "set-vcpus-us"), t0 = lab_now_ms();
	char err[256];
	int ret = vmproc_qmp(&v, "cpu-hotplug", &r, err, sizeof(err),
			     "{\"cpu\": %d, \"state\": \"offline\"}", cpu);

	if (ret)
		printf("# cpu-hotplug %d offline: %s\n", cpu, err);
	CHECK_EQ(ret, 0);
	printf("# cpu %d removed in %ld ms, offlined by %s\n", cpu,
	       lab_now_ms() - t0, r ? vmproc_str(r, "offlined-by", NULL) : "-");
	if (r)
		CHECK_STREQ(vmproc_str(r, "offlined-by", NULL), "guest");
	CHECK_EQ(lab_agent_stat(&v, "set-vcpus-us"), set0);
	json_object_put(r);
}

static void test_online_at_once(void)
{
	const char *more[] = { "--agent-trace", "off", NULL };
	long end;

	if (lab_debian_boot(&v, NULL, "/tmp/hotvm-debian-agent.sock", "virtio",
			    more)) {
		CHECK(!"boot");
		return;
	}
	/* Debian's unit starts qemu-ga once its port is there: it answers. */
	end = lab_now_ms() + 60000;
	while (lab_agent_stat(&v, "answers") != 1 && lab_now_ms() < end)
		usleep(200000);
	printf("# the agent answers: %ld, %ld calls\n",
	       lab_agent_stat(&v, "answers"), lab_agent_stat(&v, "calls"));
	add_at_once(1);
	add_at_once(2);
	remove_own(2);
	CHECK_EQ(vmproc_stop(&v), 0);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_online_at_once),
	};

	if (lab_debian_init(argc, argv))
		return 1;
	return check_run(cases, sizeof(cases) / sizeof(cases[0]));
}
