// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench-linux-qmp: one run of tools/bench linux's scenario against one
 * VMM (hotvm or QEMU) booting a Linux guest, inside the nested lab.  It
 * starts the VMM with the console in a file and QMP on a unix socket, then
 * times, with CLOCK_MONOTONIC:
 *   boot    process start -> the guest's "ready" line
 *   add k   device_add -> an "online: <cpulist>" line with k CPUs (k = 2..max)
 *           (--vmm hotvm-agent: hotvm --agent, the guest without an onlining
 *           rule and with qemu-ga, device_add "wait": "started": hotvm
 *           onlines the CPU through the agent after its 1 s grace time)
 *   del k   device_del -> DEVICE_DELETED (k = max..2: CPUs before the removal)
 * and, for the record, the QMP reply of each command, the first
 * ACPI_DEVICE_OST after it and, for a removal, the "online:" line without
 * the CPU.  Between the two, with all CPUs online, Linux's own soft
 * offline and online of cpu1 (--soft N times echo 0, echo 1 to its online
 * file, timed inside the guest by tools/lab/guest/pwrbtn's soft: action,
 * which the power button, system_powerdown, starts): what a hot-add costs
 * beyond Linux's own bring-up.  It waits on QMP events and on the console file as it grows
 * (inotify), never on sleeps.  One line on stdout:
 *   BENCH-JSON: {"vmm": ..., "boot_ms": ..., "add": [...], "del": [...]}
 * or BENCH-ERROR: <why> (exit status 1).  A benchmark, not a test.
 *
 *   bench-linux-qmp --vmm hotvm|hotvm-agent|qemu --kernel VMLINUX [--initrd INITRD]
 *                   [--max N] [--mem MB] [--cmdline TEXT] [--bin PATH]
 *                   [--dir DIR] [--rep N] [--timeout S] [--cpu MODEL]
 *                   [--soft N] [--label NAME]
 *
 * Built by meson (build/tools/bench-linux-qmp) on the QMP client of
 * vmm/api (qmp_client.h), which lab.sh copies into the lab with the
 * libraries it needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qmp_client.h"

#define MAX_CPUS 64

static struct {
	const char *vmm, *label, *kernel, *initrd, *bin, *dir, *cmdline, *cpu;
	unsigned int max, mem, rep, timeout_s, soft;
} opt = { .max = 4,
	  .soft = 3,
	  .mem = 512,
	  .dir = "/tmp",
	  .cmdline = "console=ttyS0",
	  .cpu = "host",
	  .timeout_s = 120 };

static char console_path[512], sock_path[100], stderr_path[512];
static bool agent; /* --vmm hotvm-agent */
static char cmdline[1024];
static pid_t child = -1;
static double t_start; /* ms, CLOCK_MONOTONIC */

/* The console: read as it grows, split in lines. */
static int con_fd = -1, ino_fd = -1;
static char con_line[4096];
static size_t con_len;
static char last_lines[8][256];
static unsigned int nr_last;

/* What the console said most recently (consumed by the waits). */
static bool seen_ready;
static double first_line_at;  /* the first console line (firmware or kernel) */
static double printk_s = -1;  /* the last kernel printk time before "ready" */
static int online_count = -1; /* CPUs in the last "online:" line */
static char online_list[256];
/* The first "online:" line with want_count CPUs read since want_since. */
static int want_count;
static double want_since, online_at;
static char match_list[256];
/* The guest's soft online line (pwrbtn) and cpu-event's mark after it. */
static char soft_line[1024];
static double soft_at, soft_mark_at;

/* QMP, and the one request in flight (0: none). */
static struct qmp_client *qmp;
static long qmp_seq;
static const char *qmp_name;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void stop_child(void)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = -1;
	}
}

static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;
	char buf[1024];
	int f;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("BENCH-ERROR: %s rep %u: %s\n", opt.label, opt.rep, buf);
	for (unsigned int i = 0; i < nr_last && i < 8; i++)
		printf("BENCH-ERROR:   console: %s\n",
		       last_lines[(nr_last - (nr_last < 8 ? nr_last : 8) + i) %
				  8]);
	f = open(stderr_path, O_RDONLY);
	if (f >= 0) {
		char e[2048];
		ssize_t n = read(f, e, sizeof(e) - 1);

		if (n > 0) {
			e[n] = 0;
			for (char *l = strtok(e, "\n"); l;
			     l = strtok(NULL, "\n"))
				printf("BENCH-ERROR:   stderr: %s\n", l);
		}
		close(f);
	}
	fflush(stdout);
	stop_child();
	exit(1);
}

/* Number of CPUs in a Linux cpulist ("0-2,5"); -1 if it is not one. */
static int cpulist_count(const char *s)
{
	int n = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b;

		if (end == s)
			return -1;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return -1;
		}
		n += (int)(b - a + 1);
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

static void console_line(char *l, double t)
{
	size_t n = strlen(l);
	char *p;

	while (n && (l[n - 1] == '\r' || l[n - 1] == ' '))
		l[--n] = 0;
	snprintf(last_lines[nr_last++ % 8], sizeof(last_lines[0]), "%s", l);
	if (!first_line_at && *l)
		first_line_at = t;
	if (!seen_ready && l[0] == '[') {
		char *end;
		double v = strtod(l + 1, &end);

		if (end != l + 1 && *end == ']')
			printk_s = v;
	}
	if (!strncmp(l, "pwrbtn: soft cpu", 16) && !soft_at) {
		soft_at = t;
		snprintf(soft_line, sizeof(soft_line), "%s", l);
	}
	if (soft_at && !soft_mark_at && !strcmp(l, "cpu-event: change cpu1"))
		soft_mark_at = t;
	/* Linux's init prints "ready"; the tiny guest "ready: ..." */
	if (!strcmp(l, "ready") || !strncmp(l, "ready: ", 7))
		seen_ready = true;
	/* Kernel messages may share the line: look for the words anywhere. */
	p = strstr(l, "online: ");
	if (p) {
		int c = cpulist_count(p + 8);

		if (c > 0) {
			online_count = c;
			snprintf(online_list, sizeof(online_list), "%s", p + 8);
		}
		if (c == want_count && want_since && !online_at &&
		    t >= want_since) {
			online_at = t;
			snprintf(match_list, sizeof(match_list), "%s", p + 8);
		}
	}
}

static void console_read(void)
{
	char buf[4096];
	ssize_t n;
	double t = now_ms();

	if (con_fd < 0) {
		con_fd = open(console_path, O_RDONLY | O_CLOEXEC);
		if (con_fd < 0)
			return;
	}
	while ((n = read(con_fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				con_line[con_len] = 0;
				console_line(con_line, t);
				con_len = 0;
			} else if (con_len < sizeof(con_line) - 1 &&
				   buf[i] != 0) {
				con_line[con_len++] = buf[i];
			}
		}
}

/*
 * Sends a request (args: NULL or an object, consumed); its reply is taken
 * by wait_for() as it comes (struct waiter's reply_at and reply).
 */
static void qmp_request(const char *name, struct json_object *args)
{
	struct qmp_client_error err;
	long seq = qmp_client_send(qmp, name, args, &err);

	json_object_put(args);
	if (seq < 0)
		fail("QMP: %s", err.desc);
	qmp_seq = seq;
	qmp_name = name;
}

static struct json_object *ms(double t, double t0);

/* An event's "timestamp" (CLOCK_REALTIME), in ms; 0 without one. */
static double stamp_ms(struct json_object *m)
{
	struct json_object *ts, *sec, *usec;

	if (!json_object_object_get_ex(m, "timestamp", &ts) ||
	    !json_object_object_get_ex(ts, "seconds", &sec) ||
	    !json_object_object_get_ex(ts, "microseconds", &usec))
		return 0;
	return json_object_get_int64(sec) * 1e3 +
	       json_object_get_int64(usec) / 1e3;
}

static double real_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

struct waiter {
	/* What has arrived, with the time it was seen (0: not yet). */
	double reply_at, ost_at, deleted_at;
	struct json_object *reply; /* "return" value, owned */
	struct json_object *osts; /* [{"ms", "status"}] of this device, owned */
	double t0;
	double t0_real; /* CLOCK_REALTIME at t0, for the events' timestamps */
	double deleted_stamp;
	const char *id; /* the device of this step */
	int ost_source; /* ACPI_DEVICE_OST source: 1 insert, 3 eject */
};

/* ACPI_DEVICE_OST's {"info": {"device": id, "source": n, ...}} */
static bool ost_matches(struct json_object *m, struct waiter *w)
{
	struct json_object *d, *info, *o;

	return json_object_object_get_ex(m, "data", &d) &&
	       json_object_object_get_ex(d, "info", &info) &&
	       json_object_object_get_ex(info, "device", &o) &&
	       !strcmp(json_object_get_string(o), w->id) &&
	       json_object_object_get_ex(info, "source", &o) &&
	       json_object_get_int(o) == w->ost_source;
}

/* An event read at t: the step's _OST and DEVICE_DELETED. */
static void qmp_event(struct json_object *m, struct waiter *w, double t)
{
	struct json_object *o, *d;

	if (!w || !w->id || !json_object_object_get_ex(m, "event", &o))
		return;
	if (!strcmp(json_object_get_string(o), "ACPI_DEVICE_OST")) {
		if (ost_matches(m, w)) {
			struct json_object *e = json_object_new_object(), *st;

			if (!w->ost_at)
				w->ost_at = t;
			json_object_object_add(e, "ms", ms(t, w->t0));
			json_object_object_add(e, "stamp_ms",
					       ms(stamp_ms(m), w->t0_real));
			json_object_object_get_ex(m, "data", &d);
			json_object_object_get_ex(d, "info", &d);
			if (json_object_object_get_ex(d, "status", &st))
				json_object_object_add(e, "status",
						       json_object_get(st));
			json_object_array_add(w->osts, e);
		}
	} else if (!strcmp(json_object_get_string(o), "DEVICE_DELETED") &&
		   !w->deleted_at && json_object_object_get_ex(m, "data", &d) &&
		   json_object_object_get_ex(d, "device", &o) &&
		   !strcmp(json_object_get_string(o), w->id)) {
		w->deleted_at = t;
		w->deleted_stamp = stamp_ms(m);
	}
}

/*
 * What QMP has brought, without waiting: the reply to the request in
 * flight, then the events, all stamped now (they came since the last poll).
 */
static void qmp_read(struct waiter *w)
{
	struct qmp_client_error err;
	struct json_object *m;
	double t = now_ms();
	int rc;

	if (qmp_seq) {
		rc = qmp_client_wait(qmp, qmp_name, qmp_seq, &m, &err, 0);
		if (rc == -EREMOTEIO)
			fail("QMP error: %s", err.desc);
		if (rc && rc != -ETIMEDOUT)
			fail("QMP: %s", err.desc);
		if (!rc) {
			qmp_seq = 0;
			if (w && !w->reply_at) {
				w->reply_at = t;
				w->reply = m;
			} else {
				json_object_put(m);
			}
		}
	}
	while (!(rc = qmp_client_next_event(qmp, &m, 0))) {
		qmp_event(m, w, t);
		json_object_put(m);
	}
	if (rc != -ETIMEDOUT)
		fail("QMP: the VMM closed the socket (%s)", strerror(-rc));
}

/*
 * Wait until done(w) or the timeout, reading the console as it grows and
 * QMP messages as they come.  The child exiting is a failure.
 */
static void wait_for(bool (*done)(struct waiter *), struct waiter *w,
		     const char *what)
{
	double deadline = now_ms() + opt.timeout_s * 1e3;

	for (;;) {
		struct pollfd p[2] = { { .fd = ino_fd, .events = POLLIN },
				       { .fd = qmp ? qmp_client_fd(qmp) : -1,
					 .events = POLLIN } };
		double left;
		int st;

		console_read();
		if (qmp)
			qmp_read(w);
		if (done(w))
			return;
		if (waitpid(child, &st, WNOHANG) == child) {
			child = -1;
			fail("the VMM exited (status 0x%x) waiting for %s", st,
			     what);
		}
		left = deadline - now_ms();
		if (left <= 0)
			fail("timeout (%u s) waiting for %s", opt.timeout_s,
			     what);
		/* The 100 ms cap only notices a VMM that died quietly. */
		if (poll(p, qmp ? 2 : 1, left < 100 ? (int)left + 1 : 100) <
			    0 &&
		    errno != EINTR)
			fail("poll: %s", strerror(errno));
		if (p[0].revents & POLLIN) {
			char ev[4096];

			while (read(ino_fd, ev, sizeof(ev)) > 0)
				;
		}
	}
}

static bool is_ready(struct waiter *w)
{
	(void)w;
	return seen_ready;
}

static bool has_reply(struct waiter *w)
{
	return w->reply_at;
}

static bool add_done(struct waiter *w)
{
	return w->reply_at && online_at;
}

static bool del_done(struct waiter *w)
{
	return w->reply_at && w->deleted_at && online_at;
}

static bool soft_timed(struct waiter *w)
{
	(void)w;
	return soft_at;
}

/*
 * cpu-event's line for the mark pwrbtn leaves after its soft line: the
 * "online:" reports of the offlines and onlines are all out (uevent runs
 * them in order), so none is left to be taken for a removal's.
 */
static bool soft_reported(struct waiter *w)
{
	(void)w;
	return soft_mark_at;
}

/* "... offline 1 2 3, ..." -> [1, 2, 3] (µs) */
static struct json_object *soft_list(const char *key)
{
	struct json_object *a = json_object_new_array();
	const char *p = strstr(soft_line, key);
	char *end;

	if (!p)
		return a;
	p += strlen(key);
	for (;;) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		json_object_array_add(a, json_object_new_int64(v));
		p = end;
	}
	return a;
}

/*
 * Linux's own offline and online of cpu1, opt.soft times, as the guest
 * timed them: {"clock_us", "offline_us": [...], "online_us": [...],
 * "failed"}.
 */
static struct json_object *soft_phase(void)
{
	struct json_object *r = json_object_new_object();
	struct waiter w;
	const char *p;

	unsigned int timeout_s = opt.timeout_s;

	memset(&w, 0, sizeof(w)); /* no id: no device's events */
	printf("BENCH-PROGRESS: %s rep %u: soft offline/online of cpu1\n",
	       opt.label, opt.rep);
	qmp_request("system_powerdown", NULL);
	/* Failed with the console's last lines before the lab, silent for
	 * 180 s, is taken for frozen. */
	if (opt.timeout_s > 150)
		opt.timeout_s = 150;
	wait_for(soft_timed, &w, "the guest's soft offline and online of cpu1");
	printf("BENCH-PROGRESS: %s rep %u: %s\n", opt.label, opt.rep,
	       soft_line);
	wait_for(soft_reported, &w, "the reports of the soft offlines/onlines");
	opt.timeout_s = timeout_s;
	json_object_put(w.reply);
	json_object_put(w.osts);
	p = strstr(soft_line, "clock ");
	json_object_object_add(r, "clock_us",
			       json_object_new_int64(p ? atol(p + 6) : -1));
	json_object_object_add(r, "offline_us", soft_list(", offline"));
	json_object_object_add(r, "online_us", soft_list(", online"));
	p = strstr(soft_line, "failed ");
	json_object_object_add(r, "failed",
			       json_object_new_int(p ? atoi(p + 7) : -1));
	return r;
}

/* Start of a step: the console line to look for has want CPUs. */
static double step(struct waiter *w, int want, const char *id, int source)
{
	memset(w, 0, sizeof(*w));
	w->id = id;
	w->ost_source = source;
	w->osts = json_object_new_array();
	want_count = want;
	online_at = 0;
	w->t0_real = real_ms();
	return w->t0 = want_since = now_ms();
}

/*
 * --vmm hotvm-agent: hotvm asks the agent every 2 s; until it has
 * answered once, "wait": "started" would not use it.
 */
static bool agent_answers(void)
{
	struct json_object *r = NULL, *a, *x;
	struct waiter w;
	bool up = false;

	step(&w, 0, NULL, 0);
	qmp_request("query-hotplug-stats", NULL);
	wait_for(has_reply, &w, "query-hotplug-stats");
	r = w.reply;
	if (json_object_object_get_ex(r, "agent", &a) &&
	    json_object_object_get_ex(a, "answers", &x))
		up = json_object_get_boolean(x);
	json_object_put(r);
	json_object_put(w.osts);
	return up;
}

static void wait_agent(void)
{
	double end = now_ms() + opt.timeout_s * 1e3;

	while (!agent_answers()) {
		if (now_ms() > end)
			fail("the guest agent never answered hotvm");
		usleep(100000); /* a benchmark's poll, not a test's */
	}
}

static void spawn(void)
{
	char mem[32], smp[96], cpus[64], qmp[600], serial[600];
	const char *argv[40];
	int n = 0, fd;

	if (strcmp(opt.vmm, "qemu")) {
		snprintf(cpus, sizeof(cpus), "boot=1,max=%u", opt.max);
		snprintf(mem, sizeof(mem), "%uM", opt.mem);
		snprintf(serial, sizeof(serial), "file:%s", console_path);
		argv[n++] = opt.bin ? opt.bin : "hotvm";
		argv[n++] = "run";
		argv[n++] = "--kernel";
		argv[n++] = opt.kernel;
		if (opt.initrd) {
			argv[n++] = "--initrd";
			argv[n++] = opt.initrd;
		}
		argv[n++] = "--cmdline";
		argv[n++] = cmdline;
		argv[n++] = "--cpus";
		argv[n++] = cpus;
		argv[n++] = "--memory";
		argv[n++] = mem;
		argv[n++] = "--api-socket";
		argv[n++] = sock_path;
		argv[n++] = "--serial";
		argv[n++] = serial;
		if (agent) {
			argv[n++] = "--agent";
			argv[n++] = "--agent-channel";
			argv[n++] = "com2";
		}
	} else {
		snprintf(smp, sizeof(smp),
			 "1,maxcpus=%u,sockets=%u,cores=1,threads=1", opt.max,
			 opt.max);
		snprintf(mem, sizeof(mem), "%u", opt.mem);
		snprintf(qmp, sizeof(qmp), "unix:%s,server=on,wait=off",
			 sock_path);
		snprintf(serial, sizeof(serial), "file:%s", console_path);
		argv[n++] = opt.bin ? opt.bin : "qemu-system-x86_64";
		argv[n++] = "-accel";
		argv[n++] = "kvm";
		argv[n++] = "-M";
		argv[n++] = "q35";
		argv[n++] = "-cpu";
		argv[n++] = opt.cpu;
		argv[n++] = "-m";
		argv[n++] = mem;
		argv[n++] = "-smp";
		argv[n++] = smp;
		argv[n++] = "-nographic";
		argv[n++] = "-monitor";
		argv[n++] = "none";
		argv[n++] = "-nic";
		argv[n++] = "none";
		argv[n++] = "-no-reboot";
		argv[n++] = "-kernel";
		argv[n++] = opt.kernel;
		if (opt.initrd) {
			argv[n++] = "-initrd";
			argv[n++] = opt.initrd;
		}
		argv[n++] = "-append";
		argv[n++] = cmdline;
		argv[n++] = "-qmp";
		argv[n++] = qmp;
		argv[n++] = "-serial";
		argv[n++] = serial;
	}
	argv[n] = NULL;

	t_start = now_ms();
	child = fork();
	if (child < 0)
		fail("fork: %s", strerror(errno));
	if (child == 0) {
		fd = open("/dev/null", O_RDONLY);
		dup2(fd, 0);
		fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], (char **)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
}

/* The greeting and qmp_capabilities, with the client's own deadline. */
static void qmp_connect(void)
{
	double deadline = now_ms() + 10e3;
	struct qmp_client_error err;
	int rc;

	for (;;) {
		rc = qmp_client_connect(sock_path, 1, 10000, &qmp, &err);
		if (!rc)
			return;
		if ((rc != -ENOENT && rc != -ECONNREFUSED) ||
		    now_ms() > deadline)
			fail("cannot connect to %s: %s", sock_path, err.desc);
		/* Only before the socket exists; nothing timed waits here. */
		usleep(2000);
	}
}

struct slot {
	char type[64], id[16];
	struct json_object *props; /* as returned: device_add's arguments */
	long socket;
	bool plugged;
};

/* query-hotpluggable-cpus -> the slots, by socket-id. */
static unsigned int query_slots(struct slot *s)
{
	struct waiter w = { 0 };
	unsigned int n = 0;

	qmp_request("query-hotpluggable-cpus", NULL);
	wait_for(has_reply, &w, "query-hotpluggable-cpus");
	for (size_t i = 0;
	     i < json_object_array_length(w.reply) && n < MAX_CPUS; i++) {
		struct json_object *e = json_object_array_get_idx(w.reply, i);
		struct json_object *t, *p, *sk;

		if (!json_object_object_get_ex(e, "type", &t) ||
		    !json_object_object_get_ex(e, "props", &p) ||
		    !json_object_object_get_ex(p, "socket-id", &sk))
			continue;
		snprintf(s[n].type, sizeof(s[n].type), "%s",
			 json_object_get_string(t));
		s[n].socket = json_object_get_int64(sk);
		snprintf(s[n].id, sizeof(s[n].id), "cpu%ld", s[n].socket);
		s[n].props = json_object_get(p);
		s[n].plugged = json_object_object_get_ex(e, "qom-path", &t);
		n++;
	}
	json_object_put(w.reply);
	/* Ascending socket-id: both VMMs list them descending. */
	for (unsigned int i = 1; i < n; i++)
		for (unsigned int j = i; j > 0 && s[j].socket < s[j - 1].socket;
		     j--) {
			struct slot x = s[j];

			s[j] = s[j - 1];
			s[j - 1] = x;
		}
	return n;
}

/* ms with 3 decimals; -1 for an event that never came. */
static struct json_object *ms(double t, double t0)
{
	char b[32];

	if (!t)
		return json_object_new_int(-1);
	snprintf(b, sizeof(b), "%.3f", t - t0);
	return json_object_new_double_s(t - t0, b);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench-linux-qmp --vmm hotvm|hotvm-agent|qemu "
			"--kernel K [--initrd I] [--max 2..64] [--mem MB]"
			" [--cmdline T] [--bin P] [--dir D] [--rep N]"
			" [--timeout S] [--cpu QEMU-CPU] [--soft N]"
			" [--label NAME]\n");
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "vmm", 1, 0, 'v' },	 { "kernel", 1, 0, 'k' },
		{ "initrd", 1, 0, 'i' }, { "max", 1, 0, 'm' },
		{ "mem", 1, 0, 'M' },	 { "cmdline", 1, 0, 'c' },
		{ "bin", 1, 0, 'b' },	 { "dir", 1, 0, 'd' },
		{ "rep", 1, 0, 'r' },	 { "timeout", 1, 0, 't' },
		{ "cpu", 1, 0, 'C' },	 { "soft", 1, 0, 's' },
		{ "label", 1, 0, 'L' },	 { 0, 0, 0, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1)
		switch (c) {
		case 'v':
			opt.vmm = optarg;
			break;
		case 'k':
			opt.kernel = optarg;
			break;
		case 'i':
			opt.initrd = optarg;
			break;
		case 'm':
			opt.max = atoi(optarg);
			break;
		case 'M':
			opt.mem = atoi(optarg);
			break;
		case 'c':
			opt.cmdline = optarg;
			break;
		case 'b':
			opt.bin = optarg;
			break;
		case 'd':
			opt.dir = optarg;
			break;
		case 'r':
			opt.rep = atoi(optarg);
			break;
		case 't':
			opt.timeout_s = atoi(optarg);
			break;
		case 'C':
			opt.cpu = optarg;
			break;
		case 's':
			opt.soft = atoi(optarg);
			break;
		case 'L':
			opt.label = optarg;
			break;
		default:
			usage();
		}
	if (!opt.vmm || !opt.kernel || strlen(opt.dir) > 80 ||
	    (strcmp(opt.vmm, "hotvm") && strcmp(opt.vmm, "hotvm-agent") &&
	     strcmp(opt.vmm, "qemu")) ||
	    opt.max < 2 || opt.max > MAX_CPUS)
		usage();
	/* Another build of the same VMM in one run needs its own name. */
	if (!opt.label)
		opt.label = opt.vmm;
	/* It names files in --dir too. */
	if (!*opt.label || strlen(opt.label) > 32 ||
	    opt.label[strspn(opt.label,
			     "abcdefghijklmnopqrstuvwxyz0123456789-")]) {
		fprintf(stderr, "bench-linux-qmp: --label: 1-32 of a-z, 0-9 "
				"and '-'\n");
		exit(2);
	}
}

/* The guest's command line, the run's files, the console's watch. */
static void prepare(void)
{
	char soft[48] = "";

	agent = !strcmp(opt.vmm, "hotvm-agent");
	/*
	 * No onlining rule in the guest: the agent is what onlines.  The
	 * power button's action: pwrbtn's soft:COUNT:CPU.
	 */
	if (opt.soft)
		snprintf(soft, sizeof(soft), " hotvm.pwrbtn=soft:%u:1",
			 opt.soft);
	snprintf(cmdline, sizeof(cmdline), "%s%s%s", opt.cmdline,
		 agent ? " hotvm.online=none hotvm.agent=1" : "", soft);
	snprintf(console_path, sizeof(console_path), "%s/%s-%u.console",
		 opt.dir, opt.label, opt.rep);
	snprintf(sock_path, sizeof(sock_path), "%s/%s-%u.qmp", opt.dir,
		 opt.label, opt.rep);
	snprintf(stderr_path, sizeof(stderr_path), "%s/%s-%u.stderr", opt.dir,
		 opt.label, opt.rep);
	unlink(console_path);
	unlink(sock_path);

	/* The directory's watch sees the console file appear and grow. */
	ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ino_fd < 0 ||
	    inotify_add_watch(ino_fd, opt.dir, IN_CREATE | IN_MODIFY) < 0)
		fail("inotify on %s: %s", opt.dir, strerror(errno));
}

/* Boot to "ready" with one CPU online; the run's first figures. */
static struct json_object *boot(void)
{
	struct json_object *out = json_object_new_object();
	double boot_ms;

	spawn();
	wait_for(is_ready, NULL, "the guest's \"ready\" line");
	boot_ms = now_ms() - t_start;
	if (online_count != 1)
		fail("the guest booted with %d CPUs online (%s), not 1",
		     online_count, online_list);

	/* Progress, for a lab that takes a silent console for a frozen one. */
	printf("BENCH-PROGRESS: %s rep %u: ready after %.0f ms\n", opt.label,
	       opt.rep, boot_ms);
	json_object_object_add(out, "vmm", json_object_new_string(opt.label));
	json_object_object_add(out, "rep", json_object_new_int(opt.rep));
	json_object_object_add(out, "max", json_object_new_int(opt.max));
	json_object_object_add(out, "boot_ms", ms(boot_ms, 0));
	json_object_object_add(out, "first_line_ms",
			       ms(first_line_at, t_start));
	json_object_object_add(out, "printk_s",
			       json_object_new_double(printk_s));
	return out;
}

/* device_add of slot s, timed to k CPUs online. */
static struct json_object *add_one(struct slot *s, unsigned int k)
{
	struct json_object *r = json_object_new_object();
	struct json_object *args = json_object_new_object();
	struct waiter w;
	double t0;

	if (s->plugged)
		fail("slot %ld is already plugged", s->socket);
	json_object_object_add(args, "driver", json_object_new_string(s->type));
	json_object_object_add(args, "id", json_object_new_string(s->id));
	json_object_object_foreach(s->props, key, val)
		json_object_object_add(args, key, json_object_get(val));
	if (agent)
		json_object_object_add(args, "wait",
				       json_object_new_string("started"));
	t0 = step(&w, k, s->id, 1);
	qmp_request("device_add", args);
	wait_for(add_done, &w, "the new CPU online");
	json_object_object_add(r, "k", json_object_new_int(k));
	json_object_object_add(r, "online_ms", ms(online_at, t0));
	json_object_object_add(r, "reply_ms", ms(w.reply_at, t0));
	json_object_object_add(r, "ost_ms", ms(w.ost_at, t0));
	json_object_object_add(r, "osts", w.osts);
	json_object_object_add(r, "online", json_object_new_string(match_list));
	printf("BENCH-PROGRESS: %s rep %u: %u CPUs\n", opt.label, opt.rep, k);
	json_object_put(w.reply);
	return r;
}

/* device_del of slot s, timed to DEVICE_DELETED and k - 1 CPUs online. */
static struct json_object *del_one(struct slot *s, unsigned int k)
{
	struct json_object *r = json_object_new_object();
	struct json_object *args = json_object_new_object();
	struct waiter w;
	double t0;

	json_object_object_add(args, "id", json_object_new_string(s->id));
	t0 = step(&w, k - 1, s->id, 3);
	qmp_request("device_del", args);
	wait_for(del_done, &w, "DEVICE_DELETED and the CPU offline");
	json_object_object_add(r, "k", json_object_new_int(k));
	json_object_object_add(r, "deleted_ms", ms(w.deleted_at, t0));
	json_object_object_add(r, "deleted_stamp_ms",
			       ms(w.deleted_stamp, w.t0_real));
	json_object_object_add(r, "reply_ms", ms(w.reply_at, t0));
	json_object_object_add(r, "ost_ms", ms(w.ost_at, t0));
	json_object_object_add(r, "offline_ms", ms(online_at, t0));
	json_object_object_add(r, "osts", w.osts);
	json_object_object_add(r, "online", json_object_new_string(match_list));
	json_object_put(w.reply);
	return r;
}

/* Quit; a VMM that does not go within 10 s is killed. */
static bool quit(void)
{
	qmp_request("quit", NULL);
	for (int i = 0; i < 1000 && child > 0; i++) {
		if (waitpid(child, NULL, WNOHANG) == child)
			child = -1;
		else
			usleep(10000);
	}
	return child < 0;
}

int main(int argc, char **argv)
{
	struct slot slots[MAX_CPUS];
	struct json_object *out, *adds, *dels;
	unsigned int nslots, k;

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	prepare();
	out = boot();
	qmp_connect();
	if (agent)
		wait_agent();
	nslots = query_slots(slots);
	if (nslots != opt.max)
		fail("query-hotpluggable-cpus: %u slots, not %u", nslots,
		     opt.max);

	/* Add sockets 1..max-1 one by one: k CPUs after each. */
	adds = json_object_new_array();
	for (k = 2; k <= opt.max; k++)
		json_object_array_add(adds, add_one(&slots[k - 1], k));
	json_object_object_add(out, "add", adds);
	if (opt.soft)
		json_object_object_add(out, "soft", soft_phase());
	/* Remove them, the last added first: k CPUs before each. */
	dels = json_object_new_array();
	for (k = opt.max; k >= 2; k--)
		json_object_array_add(dels, del_one(&slots[k - 1], k));
	json_object_object_add(out, "del", dels);

	json_object_object_add(out, "quit_clean",
			       json_object_new_boolean(quit()));
	stop_child();
	printf("BENCH-JSON: %s\n",
	       json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
	json_object_put(out);
	qmp_client_close(qmp);
	unlink(sock_path);
	return 0;
}
