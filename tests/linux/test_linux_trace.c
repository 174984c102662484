// SPDX-License-Identifier: GPL-2.0-only
/*
 * Linux's own cpuhp table beside the host's: Debian's
 * kernel and qemu-ga on hotvm --agent in the nested lab, traced with
 * `hotvm cpu trace` (the user's command, on its own QMP connection).
 *
 *  - a hot-add ("wait": "started") and a removal: the trace's Linux lane
 *    has Linux's states in the walk's order (rising, then falling), each
 *    named and numbered as the guest's own
 *    /sys/devices/system/cpu/hotplug/states says, which the guest's init
 *    prints on the console (hotvm.states=1) and this test reads there, not
 *    through hotvm; every enter matched by an exit, no line malformed, and
 *    the alignment's bound stated;
 *  - query-cpuhp's linux-states is the same list, and the CPU's
 *    linux-state is Linux's online state after the add;
 *  - tracefs unmounted in the guest: the operation still works and the
 *    trace says why there is no Linux lane.
 *
 * The traces' JSON is printed ("# trace-json add|remove: ..."): `hotvm cpu
 * trace --from FILE --svg OUT` draws it again (README's picture).
 *
 * Usage: test-linux-trace DIR [CASE...], or test-linux-trace DIR bench N
 * (tools/bench linux-trace: hot-add to running with and without the
 * trace, N samples each, one boot).  HOTVM is the binary.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "lab_linux.h"
#include "vmproc.h"

#define WAIT_MS	   30000
#define STATES_MAX 1024

static struct vmproc v;
/* The guest's own list, from its console: name by number, NULL none. */
static char *console_state[STATES_MAX];
static int console_states;

static int boot(const char *cpus, const char *cmdline)
{
	const char *more[] = { "--agent", "--agent-channel",
			       "com2",	  "--agent-trace",
			       "on",	  NULL };

	return lab_linux_boot(&v, cpus, cmdline, more);
}

/* "cpuhp-state: N: name" lines of the console log, read independently. */
static void read_console_states(void)
{
	FILE *f = fopen(v.log, "r");
	char line[512];

	for (int i = 0; i < STATES_MAX; i++) {
		free(console_state[i]);
		console_state[i] = NULL;
	}
	console_states = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "cpuhp-state: "), *name;
		long n;

		if (!p)
			continue;
		n = strtol(p + 13, &name, 10);
		if (n < 0 || n >= STATES_MAX || strncmp(name, ": ", 2))
			continue;
		name += 2;
		name[strcspn(name, "\r\n")] = '\0';
		console_state[n] = strdup(name);
		console_states++;
	}
	fclose(f);
	printf("# the guest's console lists %d states\n", console_states);
}

static bool agent_answers(int timeout_ms)
{
	long end = lab_now_ms() + timeout_ms;

	do {
		struct json_object *r = NULL;
		bool up = vmproc_qmp(&v, "query-hotplug-stats", &r, NULL, 0,
				     NULL) == 0 &&
			  vmproc_flag(r, "agent", "answers");

		json_object_put(r);
		if (up)
			return true;
	} while (lab_now_ms() < end && !usleep(200000));
	printf("# the agent does not answer\n");
	return false;
}

static struct json_object *member(struct json_object *o, const char *k)
{
	struct json_object *x = NULL;

	json_object_object_get_ex(o, k, &x);
	return x;
}

static long num(struct json_object *o, const char *k)
{
	return json_object_get_int64(member(o, k));
}

/* `hotvm cpu trace OP 1 [--wait started] --json` on its own connection. */
static struct json_object *trace(const char *op)
{
	char cmd[1024], *out = NULL;
	size_t len = 0, cap = 0;
	struct json_object *t;
	FILE *p;
	char buf[4096];
	size_t n;

	snprintf(cmd, sizeof(cmd),
		 "'%s' cpu trace %s 1 %s --json --api-socket '%s'",
		 vmproc_hotvm(), op, strcmp(op, "add") ? "" : "--wait started",
		 v.sock);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			out = realloc(out, cap);
		}
		memcpy(out + len, buf, n);
		len += n;
	}
	CHECK_EQ(pclose(p), 0);
	if (!out)
		return NULL;
	out[len] = '\0';
	t = json_tokener_parse(out);
	free(out);
	if (t)
		printf("# trace-json %s: %s\n", op,
		       json_object_to_json_string_ext(t,
						      JSON_C_TO_STRING_PLAIN));
	return t;
}

/*
 * The Linux lane: at least @min steps, numbers strictly rising (@up) or
 * falling, each named as the guest's own list names that number, and
 * the summary clean.  Returns how many Linux steps.
 */
static int check_linux_lane(struct json_object *t, bool up, int min)
{
	struct json_object *bars = member(t, "bars"), *l = member(t, "linux");
	size_t n = json_object_array_length(bars);
	int steps = 0, last = up ? -1 : STATES_MAX, host = 0;

	CHECK(l != NULL);
	if (member(l, "error"))
		printf("# linux: %s\n",
		       json_object_get_string(member(l, "error")));
	CHECK(!member(l, "error"));
	CHECK_EQ(num(l, "unmatched"), 0);
	CHECK_EQ(num(l, "malformed"), 0);
	CHECK(!json_object_get_boolean(member(l, "truncated")));
	printf("# linux lane placed to +-%ld us\n", num(l, "align-us"));
	CHECK(num(l, "align-us") > 0 && num(l, "align-us") < 2000000);
	for (size_t i = 0; i < n; i++) {
		struct json_object *b = json_object_array_get_idx(bars, i);
		const char *lane = json_object_get_string(member(b, "lane"));
		const char *name = json_object_get_string(member(b, "name"));
		const char *dir_ =
			json_object_get_string(member(b, "direction"));
		long st = num(b, "state");

		if (!strcmp(lane, "host"))
			host++;
		if (strcmp(lane, "linux"))
			continue;
		steps++;
		CHECK_STREQ(dir_, up ? "up" : "down");
		/* Multi-instance states repeat their number: not backwards. */
		CHECK(up ? st >= last : st <= last);
		last = (int)st;
		CHECK(st >= 0 && st < STATES_MAX && console_state[st]);
		if (st >= 0 && st < STATES_MAX && console_state[st] &&
		    strcmp(console_state[st], name)) {
			printf("# state %ld: trace says '%s', the guest '%s'\n",
			       st, name, console_state[st]);
			CHECK(!"names agree");
		}
		CHECK_EQ(num(b, "ret"), 0);
		CHECK(num(b, "us") >= 0);
		CHECK(num(b, "end-us") <= num(t, "total-us"));
	}
	printf("# %d Linux steps, %d host steps\n", steps, host);
	CHECK(host >= 3);
	CHECK(steps >= min);
	return steps;
}

/* query-cpuhp's linux-states: the console's list exactly. */
static void check_linux_states(void)
{
	struct json_object *r = NULL, *a, *c;
	size_t n;

	CHECK_EQ(vmproc_qmp(&v, "query-cpuhp", &r, NULL, 0, NULL), 0);
	a = member(r, "linux-states");
	CHECK(a != NULL);
	n = a ? json_object_array_length(a) : 0;
	CHECK_EQ(n, console_states);
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(a, i);
		long st = num(s, "state");

		CHECK(st >= 0 && st < STATES_MAX && console_state[st] &&
		      !strcmp(console_state[st],
			      json_object_get_string(member(s, "name"))));
	}
	/* After the add: CPU 1 at Linux's last state, "online". */
	c = vmproc_cpu(r, 1);
	CHECK_STREQ(vmproc_str(c, "guest", "linux-state-name") ?: "", "online");
	json_object_put(r);
}

static void test_trace_add_remove(void)
{
	struct json_object *t;
	int added;

	if (boot("boot=1,max=2", "console=ttyS0 hotvm.agent=1 hotvm.states=1 "
				 "hotvm.pwrbtn=tracefs:off"))
		return;
	read_console_states();
	/* Linux 6.1 lists 66 states; far fewer is a console cut short. */
	CHECK(console_states >= 30);
	CHECK(agent_answers(WAIT_MS));
	t = trace("add");
	CHECK(t != NULL);
	added = t ? check_linux_lane(t, true, 20) : 0;
	json_object_put(t);
	CHECK_EQ(vmproc_wait_online(&v, "0-1", WAIT_MS), 0);
	check_linux_states();
	t = trace("remove");
	CHECK(t != NULL);
	/* The removal walks back what the add walked (less the AP's own). */
	if (t)
		CHECK(check_linux_lane(t, false, added / 2) > 0);
	json_object_put(t);
	CHECK_EQ(vmproc_wait_online(&v, "0", WAIT_MS), 0);
	/* No tracefs: the operation works, the trace says why no lane. */
	CHECK_EQ(vmproc_qmp(&v, "system_powerdown", NULL, NULL, 0, NULL), 0);
	CHECK_EQ(vmproc_wait_line(&v, "pwrbtn: tracefs off", WAIT_MS, NULL, 0),
		 0);
	t = trace("add");
	CHECK(t != NULL);
	if (t) {
		struct json_object *l = member(t, "linux");
		const char *err =
			l ? json_object_get_string(member(l, "error")) : NULL;

		printf("# without tracefs: %s\n", err ? err : "(no word)");
		CHECK(err && strstr(err, "not mounted"));
	}
	json_object_put(t);
	CHECK_EQ(vmproc_stop(&v), 0);
}

/* One hot-add with "wait": "started": ms to running and to the reply. */
static bool add_sample(long *running_ms, long *reply_ms)
{
	struct json_object *r = NULL;
	char err[256];
	long t0 = lab_now_ms();
	int rc = vmproc_qmp(&v, "cpu-hotplug", &r, err, sizeof(err),
			    "{\"cpu\": 1, \"state\": \"online\", \"wait\": "
			    "\"started\"}");

	*reply_ms = lab_now_ms() - t0;
	json_object_put(r);
	if (rc) {
		printf("# cpu-hotplug: %s\n", err);
		return false;
	}
	/* The console's "online:" line came with Linux running it. */
	if (vmproc_wait_online(&v, "0-1", WAIT_MS))
		return false;
	*running_ms = *reply_ms; /* an upper bound, refined below */
	return true;
}

static bool remove_cpu(void)
{
	struct json_object *r = NULL;
	int rc = vmproc_qmp(&v, "cpu-hotplug", &r, NULL, 0,
			    "{\"cpu\": 1, \"state\": \"offline\"}");

	json_object_put(r);
	return !rc && !vmproc_wait_online(&v, "0", WAIT_MS);
}

/*
 * The running time: from the request to the CPUHP_STATE stage "started"
 * (the vCPU left wait-for-SIPI: Linux runs it), from the events.
 */
static long started_ms(long t0_wall_ms)
{
	struct json_object *ev;
	long at = -1;

	while (!qmp_client_next_event(v.c, &ev, 0)) {
		struct json_object *d = member(ev, "data"), *ts;

		if (!strcmp(vmproc_str(ev, "event", NULL) ?: "",
			    "CPUHP_STATE") &&
		    !strcmp(vmproc_str(d, "stage", NULL) ?: "", "started") &&
		    num(d, "cpu") == 1 && at < 0) {
			ts = member(ev, "timestamp");
			at = num(ts, "seconds") * 1000 +
			     num(ts, "microseconds") / 1000 - t0_wall_ms;
		}
		json_object_put(ev);
	}
	return at;
}

static void drain_events(void)
{
	struct json_object *ev;

	while (!qmp_client_next_event(v.c, &ev, 0))
		json_object_put(ev);
}

static long wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void bench(int n)
{
	static const char *const mode[] = { "traced", "untraced" };

	if (boot("boot=1,max=2", "console=ttyS0 hotvm.agent=1 "
				 "hotvm.pwrbtn=tracefs:off"))
		return;
	CHECK(agent_answers(WAIT_MS));
	for (int m = 0; m < 2; m++) {
		if (m) {
			vmproc_qmp(&v, "system_powerdown", NULL, NULL, 0, NULL);
			vmproc_wait_line(&v, "pwrbtn: tracefs off", WAIT_MS,
					 NULL, 0);
		}
		for (int i = 0; i <= n; i++) {
			long run, reply, w0;

			drain_events();
			w0 = wall_ms();
			if (!add_sample(&run, &reply) || !remove_cpu()) {
				CHECK(!"sample");
				break;
			}
			run = started_ms(w0);
			/* The first of each mode warms up (and finds tracefs). */
			if (i)
				printf("bench: %s running-ms %ld reply-ms "
				       "%ld\n",
				       mode[m], run, reply);
		}
	}
	CHECK_EQ(vmproc_stop(&v), 0);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_trace_add_remove),
	};

	if (argc < 2) {
		fprintf(stderr,
			"usage: test-linux-trace DIR [CASE...|bench N]\n");
		return 2;
	}
	if (lab_linux_init(argv[1]))
		return 1;
	if (argc == 4 && !strcmp(argv[2], "bench")) {
		/* Each line as it comes: the lab takes silence for a freeze. */
		setvbuf(stdout, NULL, _IOLBF, 0);
		bench(atoi(argv[3]));
		return check_failures ? 1 : 0;
	}
	return check_run_named(cases, sizeof(cases) / sizeof(cases[0]),
			       argv + 2, argc - 2);
}
