// SPDX-License-Identifier: GPL-2.0-only
/*
 * consistency: the randomized agreement test.  One VM (the tiny guest)
 * at a time, driven by random steps: single device_add/device_del and
 * cpu-hotplug online/offline, bursts of device_add/device_del pipelined on
 * one connection, cpu-resize, and operations sent by a second connection
 * that closes at once.  A step may carry a fault injected on either side,
 * a hook veto of one host state in either direction (the --hook script
 * reads a control file this program writes), and a timeout from 1 ms up
 * (timeout-ms, or the VM's --hotplug-timeout, chosen per VM).
 *
 * After every step, what each party says of every vCPU must agree:
 *
 *  - the host table (query-cpuhp: the host state's name);
 *  - the QMP views (query-cpus-fast lists it, query-hotpluggable-cpus
 *    gives it a qom-path);
 *  - the event stream: the last CPUS_CHANGED or DEVICE_DELETED for it, as
 *    a client following hotvm would know it (read on a connection of its
 *    own, so that no operation's events can push it out of a queue);
 *  - the guest's own word: its last "online: <cpulist>" console line.
 *
 * Why all four: each is what someone acts on (the VMM, an orchestrator
 * polling, one listening, the guest), and the bugs of issue 21 left them
 * apart with nothing saying so.  The only other allowed outcome is that
 * hotvm flagged the CPU itself: query-cpuhp's "agree": false (announced by
 * a CPUHP_AGREEMENT event) or a broken mark.  A flagged CPU is then put
 * back with cpuhp-recover, after which everything must agree again.  A
 * tree without the "agree" field flags nothing that way: there a
 * disagreement counts as unflagged.
 *
 * The views settle asynchronously (the guest prints its line after its
 * walk, a late eject is followed by the host after the reply), so the
 * check re-reads them whenever an event or a console line arrives, until
 * they agree or SETTLE_MS passes; only then is it a disagreement.
 *
 *   HOTVM=build/vmm/hotvm consistency [STEPS [SEED]]
 *
 * Prints the seed first, one line per step, every disagreement with the
 * step, the seed and all four views, and the figures at the end (the
 * disagreements in vCPUs: a step that leaves two apart counts two).  Exit
 * status 1 on any unflagged disagreement or failed recovery, 77 without
 * /dev/kvm (tests/lab runs it in the nested lab; tools/consistency.sh runs
 * it long, here or there).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmproc.h"

#define MAX_CPUS  6
#define BOOT_CPUS 2
/* How long the four views may take to settle after an operation. */
#define SETTLE_MS 20000
/* Steps per VM: each VM gets its own --hotplug-timeout and hook setting. */
#define EPOCH_MIN    25
#define EPOCH_MAX    60
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

enum { OFF = 0, ON = 1, MID = 2 }; /* MID: the host table is in between */

/* The host states a fault can be injected at: hotvm's table says. */
static const char *host_states[16];
static unsigned int nr_host_states;
/* Four in nine VMs wait long enough; the rest time out some or all waits. */
static const char *const hotplug_timeouts[] = { "10000", "10000", "10000",
						"10000", "1",	  "5",
						"50",	 "300",	  "2000" };
static const int timeouts_ms[] = { 1, 1, 2, 5, 10, 30, 100, 500, 3000 };

static struct vmproc v;
static struct qmp_client *evc; /* events only */
static unsigned long long seed, rng;
static unsigned int step;
static char tmpdir[64], ctl_path[96], veto_log[96], hook_path[96];
static long veto_log_off;
static char desc[512];	   /* what the current step does */
static bool hooks_on;	   /* this VM runs the veto hook */
static bool has_agree;	   /* this hotvm's query-cpuhp says "agree" */
static const char *vm_hpt; /* this VM's --hotplug-timeout */
/* The faults this step armed: {cpu, side (1: guest)}. */
static int armed[4][2];
static unsigned int narmed;

/* The guest's fault-injectable states, from query-cpuhp. */
static char guest_states[32][40];
static unsigned int nguest_states;

/* The event stream's view, per vCPU, since the VM started. */
static int ev_online[MAX_CPUS];
static bool ev_flag[MAX_CPUS];
static char anon_path[MAX_CPUS][64]; /* qom-paths seen, to map deletions */

static struct {
	unsigned long add, del, online, offline, bursts, burst_reqs, resize,
		disconnects, errors;
	unsigned long fault[2], fault_fired[2]; /* host, guest */
	unsigned long veto_armed[2], veto[2];	/* up, down */
	unsigned long timeout_set, timed_out, short_hpt_vms;
	unsigned long flagged, broken, recovered, unflagged, not_recovered, vms,
		unclean_exits;
} st;

struct views {
	int host[MAX_CPUS];
	char hname[MAX_CPUS][32];
	char id[MAX_CPUS][32];
	bool agree[MAX_CPUS], broken[MAX_CPUS];
	char why[MAX_CPUS][160];
	bool fail_host[MAX_CPUS], fail_guest[MAX_CPUS];
	bool fast[MAX_CPUS], plugged[MAX_CPUS], guest[MAX_CPUS];
};

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* xorshift64*: the whole run follows from the seed. */
static unsigned int rnd(unsigned int n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (unsigned int)((rng * 2685821657736338717ull) >> 33) % n;
}

static bool chance(unsigned int percent)
{
	return rnd(100) < percent;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	size_t n = strlen(desc);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc + n, sizeof(desc) - n, fmt, ap);
	va_end(ap);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		printf("# cannot write %s: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/*
 * The hook: a veto of whatever the control file names ("CPU|* STATE
 * up|down"), logged so that the vetoes counted are the ones that happened.
 */
static void write_hook(void)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "#!/bin/sh\n"
		 "# consistency's hook: vetoes the step its control file "
		 "names.\n"
		 "read -r cpu state dir <'%s' || exit 0\n"
		 "[ \"$state $dir\" = \"$HOTVM_STATE $HOTVM_DIRECTION\" ] || "
		 "exit 0\n"
		 "[ \"$cpu\" = '*' ] || [ \"$cpu\" = \"$HOTVM_CPU\" ] || exit "
		 "0\n"
		 "echo \"$HOTVM_CPU $HOTVM_STATE $HOTVM_DIRECTION\" >>'%s'\n"
		 "exit 1\n",
		 ctl_path, veto_log);
	write_file(hook_path, text);
	chmod(hook_path, 0755);
}

/* Counts the vetoes the hook logged since the last call. */
static void count_vetoes(void)
{
	FILE *f = fopen(veto_log, "r");
	char line[160];

	if (!f)
		return;
	fseek(f, veto_log_off, SEEK_SET);
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		st.veto[n >= 4 && !strcmp(line + n - 4, "down")]++;
	}
	veto_log_off = ftell(f);
	fclose(f);
}

/* --- the event stream ---------------------------------------------------- */

static int path_cpu(const char *path)
{
	unsigned int n;

	if (sscanf(path, "/machine/unattached/device[%u]", &n) == 1 &&
	    n < MAX_CPUS)
		return (int)n;
	for (int c = 0; c < MAX_CPUS; c++)
		if (anon_path[c][0] && !strcmp(anon_path[c], path))
			return c;
	return -1;
}

static int id_cpu(const char *id)
{
	unsigned int n;

	return id && sscanf(id, "c%u", &n) == 1 && n < MAX_CPUS ? (int)n : -1;
}

/* Reads every event the stream has now (no wait). */
static void drain_events(void)
{
	struct json_object *e;

	while (evc && !qmp_client_next_event(evc, &e, 0)) {
		const char *name = vmproc_str(e, "event", NULL);
		struct json_object *d = NULL, *x;
		int cpu = -1;

		json_object_object_get_ex(e, "data", &d);
		if (json_object_object_get_ex(d, "cpu", &x))
			cpu = json_object_get_int(x);
		if (!name || !d) {
		} else if (!strcmp(name, "CPUS_CHANGED") && cpu >= 0 &&
			   cpu < MAX_CPUS) {
			ev_online[cpu] = vmproc_flag(d, "online", NULL);
		} else if (!strcmp(name, "DEVICE_DELETED")) {
			cpu = id_cpu(vmproc_str(d, "device", NULL));
			if (cpu < 0 && vmproc_str(d, "path", NULL))
				cpu = path_cpu(vmproc_str(d, "path", NULL));
			if (cpu >= 0)
				ev_online[cpu] = OFF;
		} else if (!strcmp(name, "CPUHP_AGREEMENT") && cpu >= 0 &&
			   cpu < MAX_CPUS) {
			ev_flag[cpu] = !vmproc_flag(d, "agree", NULL);
		}
		json_object_put(e);
	}
}

/* --- the views ----------------------------------------------------------- */

static void parse_cpulist(const char *s, bool out[MAX_CPUS])
{
	memset(out, 0, sizeof(bool) * MAX_CPUS);
	while (s && *s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b; c++)
			if (c >= 0 && c < MAX_CPUS)
				out[c] = true;
		s = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
}

static int read_views(struct views *w)
{
	struct json_object *r = NULL, *a;

	memset(w, 0, sizeof(*w));
	if (vmproc_qmp(&v, "query-cpuhp", &r, NULL, 0, NULL))
		return -1;
	has_agree = false;
	for (int c = 0; c < MAX_CPUS; c++) {
		struct json_object *o = vmproc_cpu(r, (unsigned int)c), *x;
		const char *n = vmproc_str(o, "host", "name");
		const char *id = vmproc_str(o, "id", NULL);
		const char *why = vmproc_str(o, "disagreement", NULL);

		snprintf(w->hname[c], sizeof(w->hname[c]), "%s", n ? n : "?");
		w->host[c] = !n			     ? MID
			     : !strcmp(n, "online")  ? ON
			     : !strcmp(n, "offline") ? OFF
						     : MID;
		snprintf(w->id[c], sizeof(w->id[c]), "%s", id ? id : "");
		w->agree[c] = true;
		if (json_object_object_get_ex(o, "agree", &x)) {
			has_agree = true;
			w->agree[c] = json_object_get_boolean(x);
		}
		snprintf(w->why[c], sizeof(w->why[c]), "%s", why ? why : "");
		w->broken[c] = vmproc_flag(o, "host", "broken") ||
			       vmproc_flag(o, "guest", "broken");
		w->fail_host[c] = vmproc_str(o, "host", "fail-name") != NULL;
		w->fail_guest[c] = vmproc_str(o, "guest", "fail-name") != NULL;
	}
	json_object_put(r);

	r = NULL;
	if (vmproc_qmp(&v, "query-cpus-fast", &r, NULL, 0, NULL))
		return -1;
	for (size_t i = 0; i < json_object_array_length(r); i++) {
		struct json_object *x;
		int c = -1;

		if (json_object_object_get_ex(json_object_array_get_idx(r, i),
					      "cpu-index", &x))
			c = json_object_get_int(x);
		if (c >= 0 && c < MAX_CPUS)
			w->fast[c] = true;
	}
	json_object_put(r);

	r = NULL;
	if (vmproc_qmp(&v, "query-hotpluggable-cpus", &r, NULL, 0, NULL))
		return -1;
	for (size_t i = 0; i < json_object_array_length(r); i++) {
		struct json_object *o = json_object_array_get_idx(r, i), *x;
		const char *path = vmproc_str(o, "qom-path", NULL);
		int c = -1;

		if (json_object_object_get_ex(o, "props", &a) &&
		    json_object_object_get_ex(a, "socket-id", &x))
			c = json_object_get_int(x);
		if (c < 0 || c >= MAX_CPUS || !path)
			continue;
		w->plugged[c] = true;
		snprintf(anon_path[c], sizeof(anon_path[c]), "%s", path);
	}
	json_object_put(r);

	vmproc_drain(&v);
	parse_cpulist(v.online, w->guest);
	return 0;
}

static bool flagged(const struct views *w, int c)
{
	return !w->agree[c] || w->broken[c];
}

/*
 * What is wrong with @c, "" if nothing: its views apart while nothing
 * flags it, or flagged in the query but never announced by an event.
 */
static void judge(const struct views *w, int c, char *out, size_t len)
{
	int h = w->host[c];

	out[0] = 0;
	if (flagged(w, c)) {
		if (!w->agree[c] && !ev_flag[c])
			snprintf(out, len,
				 "flagged (%s) without a CPUHP_AGREEMENT "
				 "event",
				 w->why[c]);
		return;
	}
	if (h == MID)
		snprintf(out, len, "host table at %s", w->hname[c]);
	else if (w->fast[c] != h || w->plugged[c] != h)
		snprintf(out, len,
			 "host %s, query-cpus-fast %s, "
			 "query-hotpluggable-cpus %s",
			 w->hname[c], w->fast[c] ? "lists it" : "does not",
			 w->plugged[c] ? "plugged" : "free");
	else if (ev_online[c] != h)
		snprintf(out, len, "host %s, events say %s", w->hname[c],
			 ev_online[c] ? "online" : "offline");
	else if (w->guest[c] != h)
		snprintf(out, len, "host %s, the guest says %s", w->hname[c],
			 w->guest[c] ? "online" : "offline");
	else if (ev_flag[c] && has_agree)
		snprintf(out, len,
			 "a CPUHP_AGREEMENT event flagged it, the "
			 "query does not");
}

static void cpulist_of(const bool *set, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int c = 0; c < MAX_CPUS; c++)
		if (set[c])
			n += (size_t)snprintf(buf + n, len - n,
					      n ? ",%d" : "%d", c);
}

static void print_views(const struct views *w)
{
	bool host[MAX_CPUS], ev[MAX_CPUS];
	char a[64], b[64], c[64], d[64], e[64];

	for (int i = 0; i < MAX_CPUS; i++) {
		host[i] = w->host[i] == ON;
		ev[i] = ev_online[i] == ON;
	}
	cpulist_of(host, a, sizeof(a));
	cpulist_of(w->fast, b, sizeof(b));
	cpulist_of(w->plugged, c, sizeof(c));
	cpulist_of(ev, d, sizeof(d));
	cpulist_of(w->guest, e, sizeof(e));
	printf("#   host table online: [%s]; query-cpus-fast: [%s]; "
	       "query-hotpluggable-cpus plugged: [%s]; events online: [%s]; "
	       "guest 'online: %s' [%s]\n",
	       a, b, c, d, v.online, e);
	for (int i = 0; i < MAX_CPUS; i++)
		printf("#   cpu %d: host %s%s, agree %s%s%s, event-flag %d\n",
		       i, w->hname[i], w->broken[i] ? " (broken)" : "",
		       has_agree ? (w->agree[i] ? "yes" : "no") : "(no field)",
		       w->why[i][0] ? ": " : "", w->why[i], ev_flag[i]);
}

/*
 * Waits, up to a second and not past @deadline, for a console line or an
 * event; the caller reads them.
 */
static void wait_news(long deadline)
{
	struct pollfd p[2] = {
		{ .fd = v.out_fd, .events = POLLIN },
		{ .fd = evc ? qmp_client_fd(evc) : -1, .events = POLLIN },
	};
	long left = deadline - now_ms();

	if (left > 0)
		poll(p, 2, left < 1000 ? (int)left : 1000);
}

/*
 * Waits until every vCPU agrees or is flagged.  Returns the number of
 * vCPUs still wrong after SETTLE_MS (0: good), -1 if hotvm is gone.
 * *nflag counts the flagged ones.
 */
static int settle(struct views *w, int *nflag, const char *what)
{
	long deadline = now_ms() + SETTLE_MS;
	char why[MAX_CPUS][256];
	int bad;

	for (;;) {
		drain_events();
		if (read_views(w))
			return -1;
		drain_events();
		bad = *nflag = 0;
		for (int c = 0; c < MAX_CPUS; c++) {
			judge(w, c, why[c], sizeof(why[c]));
			bad += why[c][0] != 0;
			*nflag += flagged(w, c);
		}
		if (!bad || now_ms() >= deadline)
			break;
		/* Something new to look at, or once a second at least. */
		wait_news(deadline);
	}
	if (!bad)
		return 0;
	printf("# DISAGREEMENT %s at step %u (seed %llu): %s\n", what, step,
	       seed, desc);
	for (int c = 0; c < MAX_CPUS; c++)
		if (why[c][0])
			printf("#   cpu %d: %s\n", c, why[c]);
	print_views(w);
	fflush(stdout);
	return bad;
}

/* --- the VM -------------------------------------------------------------- */

static void stop_vm(void)
{
	if (evc)
		qmp_client_close(evc);
	evc = NULL;
	if (v.pid > 0 && vmproc_stop(&v) != 0) {
		printf("# hotvm did not exit cleanly (seed %llu, step %u)\n",
		       seed, step);
		st.unclean_exits++;
	}
	v.pid = 0;
}

static void read_guest_states(void)
{
	struct json_object *r = NULL, *a;

	nguest_states = 0;
	if (vmproc_qmp(&v, "query-cpuhp", &r, NULL, 0, NULL) ||
	    !json_object_object_get_ex(r, "guest-states", &a))
		goto out;
	for (size_t i = 0; i < json_object_array_length(a) &&
			   nguest_states < ARRAY_LEN(guest_states);
	     i++) {
		struct json_object *s = json_object_array_get_idx(a, i);
		const char *n = vmproc_str(s, "name", NULL);

		if (!n || vmproc_flag(s, "no-fail", NULL) ||
		    (!vmproc_flag(s, "startup", NULL) &&
		     !vmproc_flag(s, "teardown", NULL)))
			continue;
		snprintf(guest_states[nguest_states++], sizeof(guest_states[0]),
			 "%s", n);
	}
out:
	json_object_put(r);
}

static int start_vm(void)
{
	const char *extra[8];
	struct qmp_client_error err;
	char cpus[32];
	int n = 0;

	stop_vm();
	vm_hpt = hotplug_timeouts[rnd(ARRAY_LEN(hotplug_timeouts))];
	hooks_on = rnd(4) != 0;
	extra[n++] = "--hotplug-timeout";
	extra[n++] = vm_hpt;
	if (hooks_on) {
		extra[n++] = "--hook";
		extra[n++] = hook_path;
	}
	extra[n] = NULL;
	write_file(ctl_path, "");
	snprintf(cpus, sizeof(cpus), "boot=%d,max=%d", BOOT_CPUS, MAX_CPUS);
	printf("vm %lu: --hotplug-timeout %s%s\n", st.vms, vm_hpt,
	       hooks_on ? " --hook" : "");
	fflush(stdout);
	if (vmproc_start(&v, cpus, "", extra)) {
		printf("# the VM did not start (seed %llu)\n", seed);
		return -1;
	}
	if (!nr_host_states) {
		int n = vmproc_states(&v, "host-states", host_states, 16);

		if (n <= 0) {
			printf("# query-cpuhp gave no host states\n");
			return -1;
		}
		nr_host_states = (unsigned int)n;
	}
	st.vms++;
	st.short_hpt_vms += atoi(vm_hpt) < 10000;
	if (qmp_client_connect(v.sock, 1, VMPROC_TIMEOUT_MS, &evc, &err)) {
		printf("# events connection: %s\n", err.desc);
		return -1;
	}
	for (int c = 0; c < MAX_CPUS; c++) {
		ev_online[c] = c < BOOT_CPUS ? ON : OFF;
		ev_flag[c] = false;
		anon_path[c][0] = 0;
	}
	read_guest_states();
	return 0;
}

/* --- the steps ----------------------------------------------------------- */

/* An operation's JSON arguments for @kind on @cpu (@count for resize). */
enum op { OP_ADD, OP_DEL, OP_ONLINE, OP_OFFLINE, OP_RESIZE };

static const char *op_cmd(enum op k)
{
	static const char *const cmds[] = { "device_add", "device_del",
					    "cpu-hotplug", "cpu-hotplug",
					    "cpu-resize" };
	return cmds[k];
}

static struct json_object *op_args(enum op k, int cpu, const char *id,
				   int timeout)
{
	char buf[256], t[40] = "";

	if (timeout > 0)
		snprintf(t, sizeof(t), ", \"timeout-ms\": %d", timeout);
	switch (k) {
	case OP_ADD:
		snprintf(buf, sizeof(buf),
			 "{\"driver\": \"host-x86_64-cpu\", \"id\": \"c%d\", "
			 "\"socket-id\": %d, \"core-id\": 0, \"thread-id\": 0}",
			 cpu, cpu);
		break;
	case OP_DEL:
		snprintf(buf, sizeof(buf), "{\"id\": \"%s\"}", id);
		break;
	case OP_ONLINE:
	case OP_OFFLINE:
		snprintf(buf, sizeof(buf), "{\"cpu\": %d, \"state\": \"%s\"%s}",
			 cpu, k == OP_ONLINE ? "online" : "offline", t);
		break;
	default:
		snprintf(buf, sizeof(buf), "{\"count\": %d%s}", cpu, t);
		break;
	}
	return json_tokener_parse(buf);
}

static void count_op(enum op k)
{
	unsigned long *n[] = { &st.add, &st.del, &st.online, &st.offline,
			       &st.resize };
	(*n[k])++;
}

static void note_reply(int rc, const struct qmp_client_error *err)
{
	if (!rc)
		return;
	st.errors++;
	if (strstr(err->desc, "within") || strstr(err->desc, "timed out"))
		st.timed_out++;
}

/* Picks one operation on a random vCPU, as its current state allows. */
static enum op pick_single(const struct views *w, int *cpu, const char **id,
			   int *timeout)
{
	int c = 1 + (int)rnd(MAX_CPUS - 1);
	bool up = w->host[c] != ON;

	*cpu = c;
	*id = w->id[c][0] ? w->id[c] : NULL;
	*timeout = 0;
	if (chance(50)) {
		/* device_del needs the id device_add gave it. */
		if (up || *id)
			return up ? OP_ADD : OP_DEL;
	}
	if (chance(30)) {
		*timeout = timeouts_ms[rnd(ARRAY_LEN(timeouts_ms))];
		st.timeout_set++;
	}
	return up ? OP_ONLINE : OP_OFFLINE;
}

static void run_op(enum op k, int cpu, const char *id, int timeout)
{
	struct json_object *a = op_args(k, cpu, id, timeout);
	struct qmp_client_error err = { 0 };
	int rc;

	rc = qmp_client_execute(v.c, op_cmd(k), a, NULL, &err,
				VMPROC_TIMEOUT_MS);
	json_object_put(a);
	count_op(k);
	note_reply(rc, &err);
	say(" -> %s", rc ? err.desc : "ok");
}

/*
 * Picks the vCPUs of a burst: mostly all adds of free slots or all
 * removals of vCPUs device_add gave an id, now and then a mix or a
 * duplicate (refused in the batch, which must not upset the rest).
 */
static unsigned int pick_burst(const struct views *w, enum op kind[],
			       int cpus[], unsigned int max)
{
	bool del = chance(45), mix = chance(15);
	unsigned int n = 0, want = 2 + rnd(max - 1);

	for (unsigned int tries = 0; n < want && tries < 4 * MAX_CPUS;
	     tries++) {
		int c = 1 + (int)rnd(MAX_CPUS - 1);
		bool can_del = w->host[c] == ON && w->id[c][0];
		bool dup = false;

		for (unsigned int i = 0; i < n; i++)
			dup |= cpus[i] == c;
		if (dup && !chance(10))
			continue;
		if (!mix && (del ? !can_del : w->host[c] != OFF))
			continue;
		kind[n] = can_del ? OP_DEL : OP_ADD;
		cpus[n++] = c;
	}
	return n;
}

/* Several device_add/device_del sent before any reply: one batch. */
static void run_burst(const struct views *w, enum op kind[], int cpus[],
		      unsigned int n)
{
	long seq[8];

	for (unsigned int i = 0; i < n; i++) {
		struct json_object *a;
		struct qmp_client_error err;

		a = op_args(kind[i], cpus[i], w->id[cpus[i]], 0);
		seq[i] = qmp_client_send(v.c, op_cmd(kind[i]), a, &err);
		json_object_put(a);
	}
	st.bursts++;
	st.burst_reqs += n;
	say(" ->");
	for (unsigned int i = 0; i < n; i++) {
		struct qmp_client_error err = { 0 };
		int rc = seq[i] < 0 ? (int)seq[i]
				    : qmp_client_wait(v.c, op_cmd(kind[i]),
						      seq[i], NULL, &err,
						      VMPROC_TIMEOUT_MS);

		count_op(kind[i]);
		note_reply(rc, &err);
		say(" %s", rc ? "err" : "ok");
	}
}

/*
 * A client that sends one operation and is gone before its reply.  The
 * operation is one of the VM's like any other: a barrier operation of our
 * own comes after it (operations run in arrival order), and the check
 * settles anyway should it still run.
 */
static void run_disconnect(enum op k, int cpu, const char *id, int timeout)
{
	struct qmp_client_error err;
	struct qmp_client *c;
	struct json_object *a;

	st.disconnects++;
	if (qmp_client_connect(v.sock, 1, VMPROC_TIMEOUT_MS, &c, &err)) {
		say(" (connect: %s)", err.desc);
		return;
	}
	a = op_args(k, cpu, id, timeout);
	if (qmp_client_send(c, op_cmd(k), a, &err) < 0)
		say(" (send: %s)", err.desc);
	json_object_put(a);
	qmp_client_close(c);
	count_op(k);
	/* Clearing a fault that is not there: a no-op behind the op. */
	vmproc_qmp(&v, "cpuhp-inject-fault", NULL, NULL, 0,
		   "{\"cpu\": 0, \"side\": \"host\", \"state\": \"none\"}");
}

static void arm_fault(const struct views *w, int cpu)
{
	bool guest = nguest_states && chance(50);
	const char *state = guest ? guest_states[rnd(nguest_states)]
				  : host_states[rnd(nr_host_states)];
	char e[512];

	if (vmproc_qmp(&v, "cpuhp-inject-fault", NULL, e, sizeof(e),
		       "{\"cpu\": %d, \"side\": \"%s\", \"state\": \"%s\"}",
		       cpu, guest ? "guest" : "host", state)) {
		say(" [fault %s %s@%d refused]", guest ? "guest" : "host",
		    state, cpu);
		return;
	}
	(void)w;
	st.fault[guest]++;
	if (narmed < ARRAY_LEN(armed)) {
		armed[narmed][0] = cpu;
		armed[narmed++][1] = guest;
	}
	say(" [fault %s %s@%d]", guest ? "guest" : "host", state, cpu);
}

static void arm_veto(int cpu)
{
	const char *state = host_states[rnd(nr_host_states)];
	bool down = chance(50);
	char line[96], who[16];

	if (cpu >= 0)
		snprintf(who, sizeof(who), "%d", cpu);
	else
		snprintf(who, sizeof(who), "*");
	snprintf(line, sizeof(line), "%s %s %s\n", who, state,
		 down ? "down" : "up");
	write_file(ctl_path, line);
	st.veto_armed[down]++;
	say(" [veto %s %s %s]", who, state, down ? "down" : "up");
}

/* Faults left armed end with the step: each step's faults are its own. */
static void clear_faults(const struct views *w)
{
	for (int c = 0; c < MAX_CPUS; c++) {
		for (int side = 0; side < 2; side++) {
			bool armed = side ? w->fail_guest[c] : w->fail_host[c];

			if (!armed)
				continue;
			vmproc_qmp(&v, "cpuhp-inject-fault", NULL, NULL, 0,
				   "{\"cpu\": %d, \"side\": \"%s\", "
				   "\"state\": \"none\"}",
				   c, side ? "guest" : "host");
		}
	}
}

/* A vCPU @count would touch in a resize from the current set. */
static int resize_victim(const struct views *w, int count)
{
	int on = 0, c;

	for (c = 0; c < MAX_CPUS; c++)
		on += w->host[c] == ON;
	for (unsigned int tries = 0; tries < 4 * MAX_CPUS; tries++) {
		c = 1 + (int)rnd(MAX_CPUS - 1);
		if ((count > on) == (w->host[c] == OFF))
			return c;
	}
	return c;
}

/* The step's modifiers, aimed at the vCPU it will touch (-1: any). */
static void modifiers(const struct views *w, int cpu, unsigned int percent)
{
	if (chance(percent))
		arm_fault(w, cpu >= 0 ? cpu : 1 + (int)rnd(MAX_CPUS - 1));
	if (hooks_on && chance(percent))
		arm_veto(cpu >= 0 && chance(50) ? cpu : -1);
}

static void one_step(const struct views *w)
{
	unsigned int kind = rnd(100), n = 0;
	int cpu, timeout = 0, cpus[6];
	enum op k, kinds[6];
	const char *id;

	k = pick_single(w, &cpu, &id, &timeout);
	if (kind >= 35 && kind < 60) {
		n = pick_burst(w, kinds, cpus, ARRAY_LEN(cpus));
		/* Nothing a burst could take now: one operation instead. */
		if (!n)
			kind = 0;
	}
	if (kind < 35) { /* a single operation */
		say("%s %d%s", op_cmd(k), cpu,
		    k == OP_ONLINE    ? " online"
		    : k == OP_OFFLINE ? " offline"
				      : "");
		if (timeout)
			say(" timeout %d ms", timeout);
		modifiers(w, cpu, 30);
		run_op(k, cpu, id, timeout);
	} else if (kind < 60) { /* a burst */
		say("burst");
		for (unsigned int i = 0; i < n; i++)
			say(" %s:%d", kinds[i] == OP_ADD ? "add" : "del",
			    cpus[i]);
		modifiers(w, cpus[rnd(n)], 40);
		run_burst(w, kinds, cpus, n);
	} else if (kind < 85) { /* a resize */
		int count = 1 + (int)rnd(MAX_CPUS);

		timeout = 0;
		if (chance(30)) {
			timeout = timeouts_ms[rnd(ARRAY_LEN(timeouts_ms))];
			st.timeout_set++;
		}
		say("cpu-resize %d", count);
		if (timeout)
			say(" timeout %d ms", timeout);
		modifiers(w, resize_victim(w, count), 40);
		run_op(OP_RESIZE, count, NULL, timeout);
	} else { /* a client that disconnects */
		if (chance(25)) {
			k = OP_RESIZE;
			cpu = 1 + (int)rnd(MAX_CPUS);
		}
		say("disconnect after %s %d", op_cmd(k), cpu);
		modifiers(w, k == OP_RESIZE ? resize_victim(w, cpu) : cpu, 25);
		run_disconnect(k, cpu, id, timeout);
	}
}

/*
 * cpuhp-recover of @c.  hotvm refuses it while the guest is still walking
 * the CPU (a late guest after a timeout) and says to try again once the
 * guest reports done: it is tried again after every event or console
 * line, for SETTLE_MS.
 */
static void recover_one(int c)
{
	long deadline = now_ms() + SETTLE_MS;
	char e[512];

	/* The VM's own timeout may be 1 ms: recovery is not what it tests. */
	while (vmproc_qmp(&v, "cpuhp-recover", NULL, e, sizeof(e),
			  "{\"cpu\": %d, \"timeout-ms\": 10000}", c)) {
		if (!strstr(e, "try again") || now_ms() >= deadline) {
			printf("# step %u: cpuhp-recover %d: %s\n", step, c, e);
			return;
		}
		wait_news(deadline);
		drain_events();
		vmproc_drain(&v);
	}
}

/* cpuhp-recover of every flagged vCPU; then all must agree, unflagged. */
static int recover(struct views *w)
{
	int nflag, bad, n = 0;

	for (int c = 0; c < MAX_CPUS; c++) {
		if (!flagged(w, c))
			continue;
		n++;
		if (w->broken[c])
			st.broken++;
		else
			st.flagged++;
		recover_one(c);
	}
	bad = settle(w, &nflag, "after cpuhp-recover");
	if (bad < 0)
		return -1;
	if (bad || nflag) {
		printf("# NOT RECOVERED at step %u (seed %llu): %d vCPUs "
		       "apart, %d flagged\n",
		       step, seed, bad, nflag);
		if (!bad)
			print_views(w);
		st.not_recovered++;
		return 1;
	}
	st.recovered += (unsigned long)n;
	return 0;
}

static void figures(unsigned int steps, long ms)
{
	printf("consistency: seed %llu: %u steps in %ld s, %lu VMs (%lu with "
	       "a --hotplug-timeout under 10 s)\n",
	       seed, steps, ms / 1000, st.vms, st.short_hpt_vms);
	printf("consistency: operations: %lu device_add, %lu device_del, "
	       "%lu cpu-hotplug online, %lu cpu-hotplug offline, %lu "
	       "cpu-resize; %lu bursts of %lu requests; %lu failed as "
	       "expected or not\n",
	       st.add, st.del, st.online, st.offline, st.resize, st.bursts,
	       st.burst_reqs, st.errors);
	printf("consistency: faults: host %lu (%lu fired), guest %lu (%lu "
	       "fired)\n",
	       st.fault[0], st.fault_fired[0], st.fault[1], st.fault_fired[1]);
	printf("consistency: vetoes: up %lu (%lu armed), down %lu (%lu "
	       "armed)\n",
	       st.veto[0], st.veto_armed[0], st.veto[1], st.veto_armed[1]);
	printf("consistency: timeouts: %lu timeout-ms given, %lu replies "
	       "said a wait timed out\n",
	       st.timeout_set, st.timed_out);
	printf("consistency: disconnects: %lu\n", st.disconnects);
	printf("consistency: disagreements found: %lu (%lu flagged by hotvm, "
	       "%lu unflagged); %lu broken by a failed rollback\n",
	       st.flagged + st.unflagged, st.flagged, st.unflagged, st.broken);
	printf("consistency: recovered: %lu by cpuhp-recover, %lu not "
	       "recovered\n",
	       st.recovered, st.not_recovered);
	printf("consistency: unflagged disagreements: %lu; unclean exits: "
	       "%lu\n",
	       st.unflagged, st.unclean_exits);
}

int main(int argc, char **argv)
{
	unsigned int steps = argc > 1 ? (unsigned int)atoi(argv[1]) : 200;
	unsigned int epoch_start = 0, epoch_end = 0;
	long start = now_ms();
	bool fatal = false;
	struct views w;
	int nflag;

	seed = argc > 2 ? strtoull(argv[2], NULL, 0)
			: (unsigned long long)time(NULL) ^
				  ((unsigned long long)getpid() << 16);
	rng = seed ? seed : 1;
	printf("consistency: seed %llu, %u steps\n", seed, steps);
	if (access("/dev/kvm", R_OK | W_OK)) {
		printf("consistency: skipped: /dev/kvm is absent (tests/lab "
		       "runs it in the nested lab)\n");
		return 77; /* meson's "skipped" */
	}
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/consistency-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(ctl_path, sizeof(ctl_path), "%s/veto", tmpdir);
	snprintf(veto_log, sizeof(veto_log), "%s/vetoes", tmpdir);
	snprintf(hook_path, sizeof(hook_path), "%s/hook", tmpdir);
	write_hook();
	write_file(veto_log, "");

	for (step = 0; step < steps && !fatal; step++) {
		int bad;

		if (step == epoch_end) {
			if (start_vm()) {
				fatal = true;
				break;
			}
			epoch_start = step;
			epoch_end = step + EPOCH_MIN +
				    rnd(EPOCH_MAX - EPOCH_MIN + 1);
		}
		desc[0] = 0;
		narmed = 0;
		if (step == epoch_start && settle(&w, &nflag, "at boot") != 0) {
			st.unflagged++;
			fatal = true;
			break;
		}
		one_step(&w);
		write_file(ctl_path, "");
		count_vetoes();
		printf("step %u: %s\n", step, desc);
		fflush(stdout);

		bad = settle(&w, &nflag, "after the step");
		if (bad < 0) {
			printf("# hotvm is gone after step %u (seed %llu): "
			       "%s\n",
			       step, seed, desc);
			st.unflagged++;
			fatal = true;
			break;
		}
		/* A fault no longer armed was used by this step's walks. */
		for (unsigned int i = 0; i < narmed; i++) {
			int c = armed[i][0], g = armed[i][1];

			if (!(g ? w.fail_guest[c] : w.fail_host[c]))
				st.fault_fired[g]++;
		}
		clear_faults(&w);
		if (bad) {
			st.unflagged += (unsigned long)bad;
			/*
			 * Put it back if hotvm can (CPU 0 is never walked);
			 * else a fresh VM.
			 */
			for (int c = 1; c < MAX_CPUS; c++)
				vmproc_qmp(&v, "cpuhp-recover", NULL, NULL, 0,
					   "{\"cpu\": %d}", c);
			if (settle(&w, &nflag, "after recovering it") || nflag)
				epoch_end = step + 1;
			continue;
		}
		if (nflag && recover(&w))
			epoch_end = step + 1; /* a fresh VM */
	}
	stop_vm();
	count_vetoes();
	figures(step, now_ms() - start);
	unlink(ctl_path);
	unlink(veto_log);
	unlink(hook_path);
	rmdir(tmpdir);
	return fatal || st.unflagged || st.not_recovered || st.unclean_exits
		       ? 1
		       : 0;
}
