// SPDX-License-Identifier: GPL-2.0-only
/*
 * The trace's model and drawings without a VM: events shaped as hotvm
 * sends them (vmm/api/qmp_cmds_events.c) for a Linux guest, which reports only
 * the stages the host observes, and for the tiny guest; a cpu-hotplug
 * reply; the text and SVG drawn from the result.  The VM-backed checks
 * are in watch-trace.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "check.h"
#include "cpu_trace.h"

#define T0 1000000000000LL /* the client's clock when it sent the request */

static struct json_object *ev_step(long cpu, const char *side, const char *name,
				   int state, const char *dir, int ret,
				   long long at_us)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"event\": \"CPUHP_STATE\", \"data\": {\"cpu\": %ld, "
		 "\"side\": \"%s\", \"kind\": \"step\", \"state\": %d, "
		 "\"name\": \"%s\", \"direction\": \"%s\", \"rollback\": "
		 "false, \"injected\": false, \"ret\": %d}, \"timestamp\": "
		 "{\"seconds\": %lld, \"microseconds\": %lld}}",
		 cpu, side, state, name, dir, ret, (T0 + at_us) / 1000000,
		 (T0 + at_us) % 1000000);
	return json_tokener_parse(buf);
}

static struct json_object *ev_stage(long cpu, const char *stage,
				    long long at_us)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"event\": \"CPUHP_STATE\", \"data\": {\"cpu\": %ld, "
		 "\"side\": \"guest\", \"kind\": \"stage\", \"stage\": \"%s\", "
		 "\"direction\": \"up\"}, \"timestamp\": {\"seconds\": %lld, "
		 "\"microseconds\": %lld}}",
		 cpu, stage, (T0 + at_us) / 1000000, (T0 + at_us) % 1000000);
	return json_tokener_parse(buf);
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, k, &v);
	return v;
}

static long long iget(struct json_object *o, const char *k)
{
	return json_object_get_int64(get(o, k));
}

static const char *sget(struct json_object *o, const char *k)
{
	return json_object_get_string(get(o, k));
}

static struct json_object *bar(struct json_object *t, size_t i)
{
	return json_object_array_get_idx(get(t, "bars"), i);
}

/* A Linux guest's hot-add: host states, and what the host saw. */
static struct json_object *linux_events(void)
{
	struct json_object *a = json_object_new_array();

	json_object_array_add(
		a, ev_step(2, "host", "host:prepare", 1, "up", 0, 100));
	json_object_array_add(
		a, ev_step(2, "host", "vcpu:create", 2, "up", 0, 600));
	json_object_array_add(a, ev_stage(2, "presented", 700));
	/* Another vCPU's step, and the news that some were lost. */
	json_object_array_add(a, ev_step(1, "host", "online", 8, "up", 0, 800));
	json_object_array_add(
		a, json_tokener_parse("{\"event\": \"EVENTS_LOST\", \"data\": "
				      "{\"count\": 3}}"));
	json_object_array_add(a, ev_stage(2, "acknowledged", 300700));
	json_object_array_add(
		a, ev_step(2, "host", "guest:ap-starting", 3, "up", 0, 300800));
	json_object_array_add(a, ev_stage(2, "started", 500000));
	json_object_array_add(a,
			      ev_step(2, "host", "online", 8, "up", 0, 500100));
	return a;
}

static void test_linux_stages_are_guest_bars(void)
{
	struct json_object *ev = linux_events();
	struct json_object *t = cpu_trace_from_events(ev, 2, T0);
	static const char *const names[] = {
		"host:prepare",	     "vcpu:create", "presented", "acknowledged",
		"guest:ap-starting", "started",	    "online",
	};

	CHECK_EQ(iget(t, "cpu"), 2);
	CHECK_STREQ(sget(t, "source"), "events");
	CHECK_EQ(iget(t, "events-lost"), 3);
	CHECK_EQ(json_object_array_length(get(t, "bars")), 7);
	CHECK_EQ(json_object_array_length(get(t, "marks")), 0);
	for (size_t i = 0; i < 7; i++)
		CHECK_STREQ(sget(bar(t, i), "name"), names[i]);
	/* A stage is a guest bar, from the host's step before it. */
	CHECK_STREQ(sget(bar(t, 2), "lane"), "guest");
	CHECK_STREQ(sget(bar(t, 2), "kind"), "stage");
	CHECK_EQ(iget(bar(t, 2), "start-us"), 600);
	CHECK_EQ(iget(bar(t, 2), "end-us"), 700);
	CHECK_EQ(iget(bar(t, 3), "start-us"), 700);
	CHECK_EQ(iget(bar(t, 3), "us"), 300000);
	/* The host lane runs on: guest:ap-starting from vcpu:create's end. */
	CHECK_EQ(iget(bar(t, 4), "start-us"), 600);
	CHECK_EQ(iget(bar(t, 6), "start-us"), 300800);
	CHECK_EQ(iget(t, "total-us"), 500100);
	json_object_put(t);
	json_object_put(ev);
}

/* Linux's own step, as linux_trace.c reports it after the operation. */
static struct json_object *ev_linux(long cpu, const char *name, int state,
				    long long start_us, long long end_us)
{
	char buf[768];

	snprintf(buf, sizeof(buf),
		 "{\"event\": \"CPUHP_STATE\", \"data\": {\"cpu\": %ld, "
		 "\"side\": \"linux\", \"kind\": \"step\", \"state\": %d, "
		 "\"name\": \"%s\", \"callback\": \"fn\", \"linux-cpu\": 1, "
		 "\"direction\": \"up\", \"multi\": false, \"rollback\": "
		 "false, \"injected\": false, \"ret\": 0, \"start\": "
		 "{\"seconds\": %lld, \"microseconds\": %lld}, \"end\": "
		 "{\"seconds\": %lld, \"microseconds\": %lld}, \"us\": %lld}, "
		 "\"timestamp\": {\"seconds\": %lld, \"microseconds\": 0}}",
		 cpu, state, name, (T0 + start_us) / 1000000,
		 (T0 + start_us) % 1000000, (T0 + end_us) / 1000000,
		 (T0 + end_us) % 1000000, end_us - start_us,
		 (T0 + 900000) / 1000000);
	return json_tokener_parse(buf);
}

/*
 * With the guest agent: Linux's steps, sent after the host's, are bars of
 * their own lane at the times they carry, not at the events' arrival.
 */
static void test_linux_lane(void)
{
	struct json_object *a = linux_events(), *t, *l;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	json_object_array_add(
		a, ev_linux(2, "threads:prepare", 1, 350000, 350400));
	json_object_array_add(a, ev_linux(2, "online", 238, 490000, 499000));
	json_object_array_add(a, ev_linux(1, "other:cpu", 5, 10, 20));
	json_object_array_add(
		a,
		json_tokener_parse("{\"event\": \"CPUHP_LINUX_TRACE\", "
				   "\"data\": {\"steps\": 2, \"unmatched\": "
				   "0, \"malformed\": 1, \"align-us\": 1500, "
				   "\"truncated\": false}}"));
	t = cpu_trace_from_events(a, 2, T0);
	CHECK_EQ(json_object_array_length(get(t, "bars")), 9);
	CHECK_STREQ(sget(bar(t, 7), "lane"), "linux");
	CHECK_STREQ(sget(bar(t, 7), "name"), "threads:prepare");
	CHECK_EQ(iget(bar(t, 7), "state"), 1);
	CHECK_EQ(iget(bar(t, 7), "start-us"), 350000);
	CHECK_EQ(iget(bar(t, 7), "end-us"), 350400);
	CHECK_EQ(iget(bar(t, 8), "us"), 9000);
	/* The host lane is as it was. */
	CHECK_EQ(iget(bar(t, 6), "start-us"), 300800);
	CHECK_EQ(iget(t, "total-us"), 500100);
	l = get(t, "linux");
	CHECK_EQ(iget(l, "align-us"), 1500);
	CHECK_EQ(iget(l, "malformed"), 1);
	f = open_memstream(&text, &len);
	cpu_trace_print_text(f, t, 100);
	fclose(f);
	CHECK(strstr(text, "linux up   ok       threads:prepare"));
	CHECK(strstr(text, "placed to +-1.50ms"));
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	cpu_trace_write_svg(f, t);
	fclose(f);
	CHECK(strstr(text, "Linux's own cpuhp table"));
	CHECK(strstr(text, "linux online up: ok, 9.00ms"));
	free(text);
	json_object_put(t);
	json_object_put(a);
}

static void test_tiny_guest_stages_are_marks(void)
{
	struct json_object *a = json_object_new_array(), *t, *m;

	json_object_array_add(
		a, ev_step(1, "host", "vcpu:create", 2, "up", 0, 50));
	json_object_array_add(a, ev_stage(1, "presented", 60));
	json_object_array_add(
		a, ev_step(1, "guest", "percpu:prepare", 1, "up", 0, 900));
	json_object_array_add(
		a, ev_step(1, "guest", "smpboot:prepare", 2, "up", -11, 1000));
	json_object_array_add(
		a, ev_step(1, "host", "guest:ap-starting", 3, "up", -5, 1200));
	t = cpu_trace_from_events(a, 1, T0);
	CHECK_EQ(json_object_array_length(get(t, "bars")), 4);
	m = json_object_array_get_idx(get(t, "marks"), 0);
	CHECK_STREQ(sget(m, "name"), "presented");
	CHECK_EQ(iget(m, "at-us"), 60);
	/* The guest starts when the host hands over: at the stage. */
	CHECK_EQ(iget(bar(t, 1), "start-us"), 60);
	CHECK_STREQ(sget(bar(t, 2), "mark"), "failed");
	CHECK_STREQ(sget(bar(t, 3), "mark"), "failed");
	CHECK_EQ(iget(bar(t, 3), "start-us"), 50);
	json_object_put(t);
	json_object_put(a);
}

static void test_from_reply(void)
{
	struct json_object *r = json_tokener_parse(
		"{\"return\": {\"cpu\": 3, \"state\": \"online\", "
		"\"total-us\": 900, \"steps\": ["
		"{\"side\": \"host\", \"state\": 1, \"name\": "
		"\"host:prepare\", "
		"\"direction\": \"up\", \"rollback\": false, \"injected\": "
		"false, \"ret\": 0, \"us\": 10},"
		"{\"side\": \"guest\", \"state\": 8, \"name\": null, "
		"\"direction\": \"up\", \"rollback\": false, \"injected\": "
		"false, \"ret\": 0, \"us\": 300},"
		"{\"side\": \"host\", \"state\": 3, \"name\": \"guest:ap-x\", "
		"\"direction\": \"up\", \"rollback\": false, \"injected\": "
		"false, \"ret\": 0, \"us\": 500}]}}");
	struct json_object *t = cpu_trace_from_reply(r), *none;

	CHECK(t);
	CHECK_EQ(iget(t, "cpu"), 3);
	CHECK_STREQ(sget(t, "operation"), "online");
	CHECK_STREQ(sget(t, "source"), "reply");
	CHECK_EQ(iget(t, "total-us"), 900);
	CHECK_STREQ(sget(bar(t, 1), "name"), "state 8");
	CHECK_EQ(iget(bar(t, 1), "start-us"), 10);
	CHECK_EQ(iget(bar(t, 1), "end-us"), 310);
	CHECK_EQ(iget(bar(t, 2), "start-us"), 10);
	CHECK_EQ(iget(bar(t, 2), "end-us"), 810);
	json_object_put(t);
	json_object_put(r);
	/* An error reply, or anything else without steps. */
	none = json_tokener_parse("{\"error\": {\"desc\": \"no\"}}");
	CHECK(!cpu_trace_from_reply(none));
	json_object_put(none);
	CHECK(!cpu_trace_from_reply(NULL));
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

static void test_drawings(void)
{
	struct json_object *ev = linux_events();
	struct json_object *t = cpu_trace_from_events(ev, 2, T0);
	char *buf;
	size_t len, rows = 0;
	FILE *f;

	json_object_object_add(t, "operation", json_object_new_string("on<&>"));
	json_object_object_add(t, "result", json_object_new_string("ok"));
	for (int width = 60; width <= 160; width += 20) {
		f = open_memstream(&buf, &len);
		cpu_trace_print_text(f, t, width);
		fclose(f);
		rows = 0;
		for (char *l = buf, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
			CHECK((int)(nl - l) <= width);
			rows += !strncmp(l, "host ", 5) ||
				!strncmp(l, "guest ", 6);
		}
		CHECK_EQ(rows, 7);
		free(buf);
	}
	f = open_memstream(&buf, &len);
	cpu_trace_write_svg(f, t);
	fclose(f);
	CHECK(!strncmp(buf, "<?xml", 5));
	CHECK_EQ(count(buf, "class=\"bar "), 7);
	CHECK(strstr(buf, "on&lt;&amp;&gt;"));
	CHECK(!strstr(buf, "on<&>"));
	CHECK(strstr(buf, "</svg>\n"));
	free(buf);
	json_object_put(t);
	json_object_put(ev);
}

CHECK_MAIN(TEST(test_linux_stages_are_guest_bars), TEST(test_linux_lane),
	   TEST(test_tiny_guest_stages_are_marks), TEST(test_from_reply),
	   TEST(test_drawings))
