// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hooks: arguments and environment, veto, signal, timeout, bad paths, and
 * what a hook may not take from the VMM or leave behind: its process group,
 * its signal state, its descriptors, its environment, an unbounded log.
 * At shutdown (hooks_cancel()) a running hook stops at once and no other
 * starts; a daemon a hook starts the documented way outlives it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "hooks.h"

static char dir[] = "/tmp/hotvm-hooks-XXXXXX";

/* hooks_add() with its reason copied into @err. */
static int add_hook(struct hooks *h, const char *path, char *err, size_t n)
{
	struct hv_err e = { 0 };
	int ret = hooks_add(h, path, &e);

	snprintf(err, n, "%s", hv_err_msg(&e));
	return ret;
}

/* hooks_run_vcpu() with its reason copied into @err. */
static int run_hooks_vcpu(const struct hooks *h, unsigned int cpu,
			  const char *state, bool up,
			  const struct hooks_vcpu *f, char *err, size_t n)
{
	struct hv_err e = { 0 };
	int ret = hooks_run_vcpu(h, cpu, state, up, f, &e);

	snprintf(err, n, "%s", hv_err_msg(&e));
	return ret;
}

/* hooks_run() with its reason copied into @err. */
static int run_hooks(const struct hooks *h, unsigned int cpu, const char *state,
		     bool up, char *err, size_t n)
{
	struct hv_err e = { 0 };
	int ret = hooks_run(h, cpu, state, up, &e);

	snprintf(err, n, "%s", hv_err_msg(&e));
	return ret;
}

static const char *script(const char *name, const char *body)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	chmod(path, 0755);
	return path;
}

static int count_children(void)
{
	char path[64];
	FILE *f;
	int n = 0;
	char buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", getpid(),
		 getpid());
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fscanf(f, "%4095s", buf) == 1)
		n++;
	fclose(f);
	return n;
}

static void test_arguments_and_environment(void)
{
	struct hooks h;
	char err[512] = "", out[300], line[512] = "";
	const char *p;
	FILE *f;

	snprintf(out, sizeof(out), "%s/out", dir);
	hooks_init(&h, "vm0", 5000);
	p = strdup(script("record",
			  "echo \"$1 $2 $3 $4|$HOTVM_VM $HOTVM_CPU "
			  "$HOTVM_STATE $HOTVM_DIRECTION\" > \"$(dirname "
			  "\"$0\")/out\""));
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(run_hooks(&h, 3, "vcpu:create", false, err, sizeof(err)), 0);
	f = fopen(out, "r");
	CHECK(f != NULL);
	if (f) {
		CHECK(fgets(line, sizeof(line), f) != NULL);
		fclose(f);
	}
	CHECK_STREQ(line, "vm0 3 vcpu:create down|vm0 3 vcpu:create down\n");
	free((void *)p);
}

static void test_nonzero_exit_vetoes(void)
{
	struct hooks h;
	char err[512] = "";
	const char *ok, *veto;

	hooks_init(&h, "vm0", 5000);
	ok = strdup(script("ok", "exit 0"));
	veto = strdup(script("veto", "exit 7"));
	CHECK_EQ(add_hook(&h, ok, err, sizeof(err)), 0);
	CHECK_EQ(add_hook(&h, veto, err, sizeof(err)), 0);
	CHECK_EQ(run_hooks(&h, 1, "online", true, err, sizeof(err)), -EPERM);
	CHECK(strstr(err, "exited with 7") != NULL);
	CHECK(strstr(err, "veto") != NULL);
	CHECK_EQ(count_children(), 0);
	free((void *)ok);
	free((void *)veto);
}

static void test_signal_vetoes(void)
{
	struct hooks h;
	char err[512] = "";
	const char *p = strdup(script("sig", "kill -TERM $$"));

	hooks_init(&h, "vm0", 5000);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(run_hooks(&h, 1, "online", true, err, sizeof(err)), -EPERM);
	CHECK(strstr(err, "killed by") != NULL);
	free((void *)p);
}

static void test_timeout_kills_and_reaps(void)
{
	struct hooks h;
	char err[512] = "";
	struct timespec t0, t1;
	const char *p = strdup(script("hang", "exec sleep 30"));

	hooks_init(&h, "vm0", 200);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(run_hooks(&h, 2, "host:prepare", true, err, sizeof(err)),
		 -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Killed, not waited out: well under the hook's 30 s. */
	CHECK(t1.tv_sec - t0.tv_sec < 10);
	CHECK(strstr(err, "did not finish within 200 ms") != NULL);
	CHECK_EQ(count_children(), 0);
	free((void *)p);
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The pid a hook wrote to @name in the test directory, or -1. */
static pid_t read_pid(const char *name)
{
	char path[300];
	long pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = -1;
	fclose(f);
	return (pid_t)pid;
}

/*
 * Whether @pid is dead (gone, or a zombie its new parent has not reaped
 * yet), allowing a second for a SIGKILL to land.
 */
static bool pid_dead(pid_t pid)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		char path[64], stat[512], *p;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "r");
		if (!f)
			return true;
		p = fgets(stat, sizeof(stat), f);
		fclose(f);
		p = p ? strrchr(stat, ')') : NULL;
		if (!p || (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X')))
			return true;
		usleep(20000);
	} while (elapsed_ms(&t0) < 1000);
	return false;
}

/* Checks that the hook's child in @name is dead; kills it if not. */
static void check_child_dead(const char *name)
{
	pid_t pid = read_pid(name);

	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK(pid_dead(pid));
	kill(pid, SIGKILL);
}

static void test_timeout_kills_the_process_group(void)
{
	struct hooks h;
	char err[512] = "";
	const char *p = strdup(script("hang-kids",
				      "sleep 30 & echo $! > \"$(dirname "
				      "\"$0\")/kid-timeout\"\nexec sleep 30"));

	hooks_init(&h, "vm0", 300);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(run_hooks(&h, 2, "host:prepare", true, err, sizeof(err)),
		 -ETIMEDOUT);
	check_child_dead("kid-timeout");
	CHECK_EQ(count_children(), 0);
	free((void *)p);
}

static void test_exit_kills_leftover_children(void)
{
	struct hooks h;
	char err[512] = "";
	const char *p =
		strdup(script("leave-kids", "sleep 30 & echo $! > \"$(dirname "
					    "\"$0\")/kid-exit\"\nexit 0"));

	hooks_init(&h, "vm0", 5000);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(run_hooks(&h, 1, "online", true, err, sizeof(err)), 0);
	check_child_dead("kid-exit");
	free((void *)p);
}

/* A child that left the group keeps the output pipe: no wait for it. */
static void test_escaped_child_does_not_hold_the_call(void)
{
	struct hooks h;
	char err[512] = "";
	struct timespec t0;
	const char *p = strdup(script("escape",
				      "setsid sleep 30 & echo $! > \"$(dirname "
				      "\"$0\")/kid-escaped\"\nexit 0"));
	pid_t pid;

	hooks_init(&h, "vm0", 5000);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(run_hooks(&h, 1, "online", true, err, sizeof(err)), 0);
	CHECK(elapsed_ms(&t0) < 3000);
	pid = read_pid("kid-escaped");
	if (pid > 0)
		kill(pid, SIGKILL);
	free((void *)p);
}

/* One "Sig...:" line of /proc/PID/status as a hook recorded it. */
static unsigned long long status_mask(const char *file, const char *key)
{
	char path[300], line[256];
	unsigned long long v = ~0ULL;
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return v;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 16);
	fclose(f);
	return v;
}

/*
 * The VMM blocks its stop signals and the vCPU kick in every thread and
 * ignores SIGPIPE; a hook must start with none of that.
 */
static void test_clean_signal_state(void)
{
	struct hooks h;
	char err[512] = "";
	const char *p = strdup(
		script("sigs", "# builtins only: dash blocks every signal "
			       "while it forks\n"
			       "while read -r l; do echo \"$l\"; done "
			       "</proc/$$/status >\"$(dirname "
			       "\"$0\")/sigs-out\""));
	sigset_t set, old;
	void (*old_pipe)(int);

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	old_pipe = signal(SIGPIPE, SIG_IGN);

	hooks_init(&h, "vm0", 5000);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(run_hooks(&h, 1, "online", true, err, sizeof(err)), 0);
	CHECK_EQ(status_mask("sigs-out", "SigBlk"), 0);
	/* Signals 1..31 (glibc keeps its own above them). */
	CHECK_EQ(status_mask("sigs-out", "SigIgn") & 0x7fffffffULL, 0);

	signal(SIGPIPE, old_pipe);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free((void *)p);
}

/* PATH and the HOTVM_* facts only (and the PWD the shell sets itself). */
static void test_minimal_environment(void)
{
	static const char *const allowed[] = {
		"PATH=",	"HOTVM_VM=",	    "HOTVM_CPU=",
		"HOTVM_STATE=", "HOTVM_DIRECTION=", "HOTVM_PID=",
		"PWD="
	};
	struct hooks h;
	char err[512] = "", path[300], line[4096];
	const char *p =
		strdup(script("env", "env > \"$(dirname \"$0\")/env-out\""));
	int lines = 0, path_seen = 0, unexpected = 0;
	FILE *f;

	setenv("HOTVM_TEST_SECRET", "do-not-pass", 1);
	hooks_init(&h, "vm0", 5000);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(run_hooks(&h, 4, "vcpu:create", true, err, sizeof(err)), 0);
	unsetenv("HOTVM_TEST_SECRET");

	snprintf(path, sizeof(path), "%s/env-out", dir);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		bool ok = false;

		for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]);
		     i++)
			ok |= !strncmp(line, allowed[i], strlen(allowed[i]));
		if (!ok && unexpected++ < 3)
			printf("# unexpected in a hook's environment: %s",
			       line);
		path_seen += !strncmp(line, "PATH=", 5);
		lines++;
	}
	if (f)
		fclose(f);
	CHECK_EQ(unexpected, 0);
	CHECK_EQ(path_seen, 1);
	CHECK(lines >= 5);
	free((void *)p);
}

/* A descriptor the VMM left without close-on-exec still stays with it. */
static void test_no_inherited_descriptors(void)
{
	struct hooks h;
	char err[512] = "";
	const char *p = strdup(
		script("fds", "[ -e /proc/$$/fd/50 ] && exit 9\nexit 0"));
	int fd = open("/dev/null", O_RDONLY);

	CHECK(fd >= 0);
	CHECK_EQ(dup2(fd, 50), 50);
	hooks_init(&h, "vm0", 5000);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(run_hooks(&h, 1, "online", true, err, sizeof(err)), 0);
	close(50);
	close(fd);
	free((void *)p);
}

/* Hook output goes to stderr: the tests send stderr to a file. */
static int stderr_saved = -1;

static void capture_stderr(void)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/log", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	stderr_saved = dup(STDERR_FILENO);
	CHECK(fd >= 0 && stderr_saved >= 0);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

/* Restores stderr; what was captured, malloc'd, and its size. */
static char *captured_stderr(long *size)
{
	char path[300], *log = NULL;
	FILE *f;

	fflush(stderr);
	dup2(stderr_saved, STDERR_FILENO);
	close(stderr_saved);
	*size = 0;
	snprintf(path, sizeof(path), "%s/log", dir);
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (f) {
		fseek(f, 0, SEEK_END);
		*size = ftell(f);
		rewind(f);
		log = calloc(1, (size_t)*size + 1);
		if (log && fread(log, 1, (size_t)*size, f) != (size_t)*size)
			log[0] = '\0';
		fclose(f);
	}
	return log;
}

/*
 * 1 MB of output: the log gets the first HOOKS_OUTPUT_MAX bytes line by
 * line, prefixed, and one line saying how much was dropped.
 */
static void test_output_is_bounded_and_logged(void)
{
	struct hooks h;
	char err[512] = "", want[600], *log;
	const char *p = strdup(script("chatty",
				      "echo hello\nprintf 'esc\\033[2J\\n'\n"
				      "echo to-stderr >&2\n"
				      "head -c 1000000 /dev/zero | tr '\\000' "
				      "x"));
	long size;

	capture_stderr();
	hooks_init(&h, "vm0", 10000);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(run_hooks(&h, 5, "online", true, err, sizeof(err)), 0);
	log = captured_stderr(&size);

	CHECK(size > HOOKS_OUTPUT_MAX);
	CHECK(size < 3 * HOOKS_OUTPUT_MAX);
	snprintf(want, sizeof(want),
		 "hotvm: hook %s (cpu 5, online up): hello\n", p);
	CHECK(log && strstr(log, want) == log);
	snprintf(want, sizeof(want),
		 "hotvm: hook %s (cpu 5, online up): to-stderr\n", p);
	CHECK(log && strstr(log, want));
	/* A control character cannot reach the log (or a terminal). */
	snprintf(want, sizeof(want),
		 "hotvm: hook %s (cpu 5, online up): esc?[2J\n", p);
	CHECK(log && strstr(log, want));
	/* 6 + 8 + 10 + 1000000 bytes written, 4096 kept. */
	snprintf(want, sizeof(want),
		 "hotvm: hook %s (cpu 5, online up): %d more bytes of output "
		 "dropped",
		 p, 1000024 - HOOKS_OUTPUT_MAX);
	CHECK(log && strstr(log, want));
	if (log && !strstr(log, want))
		printf("# log ends: %s\n", log + (size > 300 ? size - 300 : 0));
	free(log);
	free((void *)p);
}

/* A hook that writes without pause still meets its timeout. */
static void test_endless_output_meets_the_timeout(void)
{
	struct hooks h;
	char err[512] = "", *log;
	const char *p = strdup(script("yes", "exec yes"));
	struct timespec t0;
	long size;

	capture_stderr();
	hooks_init(&h, "vm0", 300);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(run_hooks(&h, 1, "online", true, err, sizeof(err)),
		 -ETIMEDOUT);
	CHECK(elapsed_ms(&t0) < 3000);
	log = captured_stderr(&size);
	CHECK(size < 3 * HOOKS_OUTPUT_MAX);
	CHECK(log && strstr(log, "more bytes of output dropped"));
	CHECK_EQ(count_children(), 0);
	free(log);
	free((void *)p);
}

static void test_bad_paths_are_refused(void)
{
	struct hooks h;
	char err[512] = "", empty[300];
	const char *noexec;

	hooks_init(&h, "vm0", 0);
	CHECK_EQ(h.timeout_ms, HOOKS_DEFAULT_TIMEOUT);
	CHECK_EQ(add_hook(&h, "/nonexistent/hook", err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "/nonexistent/hook") != NULL);
	snprintf(empty, sizeof(empty), "%s/empty.d", dir);
	CHECK_EQ(mkdir(empty, 0755), 0);
	/* A directory with no hook in it is a mistake, not "no hooks". */
	CHECK_EQ(add_hook(&h, empty, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "no executable") != NULL);
	noexec = strdup(script("noexec", "exit 0"));
	chmod(noexec, 0644);
	/* root may execute nothing without an x bit either */
	CHECK(add_hook(&h, noexec, err, sizeof(err)) < 0);
	CHECK_EQ(h.nr, 0);
	CHECK_EQ(run_hooks(&h, 0, "online", true, err, sizeof(err)), 0);
	free((void *)noexec);
}

/* A directory: its executables in strcmp order, others skipped. */
static void test_directory_in_name_order(void)
{
	static const char *const names[] = { "20-second", "10-first",
					     "3-third" };
	struct hooks h;
	char d[300], path[400], err[512] = "", line[256] = "", all[1024] = "";
	FILE *f;

	snprintf(d, sizeof(d), "%s/qemu.d", dir);
	CHECK_EQ(mkdir(d, 0755), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", d, names[i]);
		f = fopen(path, "w");
		fprintf(f, "#!/bin/sh\necho %s >> %s/order\n", names[i], dir);
		fclose(f);
		chmod(path, 0755);
	}
	snprintf(path, sizeof(path), "%s/.hidden", d);
	f = fopen(path, "w");
	fprintf(f, "#!/bin/sh\nexit 1\n");
	fclose(f);
	chmod(path, 0755);
	snprintf(path, sizeof(path), "%s/40-not-executable", d);
	f = fopen(path, "w");
	fprintf(f, "exit 1\n");
	fclose(f);
	snprintf(path, sizeof(path), "%s/50-subdir", d);
	CHECK_EQ(mkdir(path, 0755), 0);

	hooks_init(&h, "vm0", 5000);
	CHECK_EQ(add_hook(&h, d, err, sizeof(err)), 0);
	CHECK_EQ(h.nr, 3);
	CHECK_EQ(run_hooks(&h, 1, "online", true, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/order", dir);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f))
		strncat(all, line, sizeof(all) - strlen(all) - 1);
	if (f)
		fclose(f);
	/* strcmp order, as libvirt's qemu.d: "10-" < "20-" < "3-". */
	CHECK_STREQ(all, "10-first\n20-second\n3-third\n");
}

/* What a hook places a vCPU by: its thread, APIC ID, the VMM, QOM path. */
static void test_vcpu_facts(void)
{
	struct hooks h;
	struct hooks_vcpu f = { .tid = 4242, .apic_id = 7 };
	char out[300], err[512] = "", line[512] = "", want[512];
	const char *p;
	FILE *fp;

	snprintf(out, sizeof(out), "%s/facts-out", dir);
	snprintf(f.qom_path, sizeof(f.qom_path), "/machine/peripheral/vcpu7");
	p = strdup(script("facts", "echo \"$HOTVM_PID $HOTVM_APIC_ID "
				   "$HOTVM_THREAD_ID $HOTVM_QOM_PATH\" > "
				   "\"$(dirname \"$0\")/facts-out\""));
	hooks_init(&h, "vm0", 5000);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(run_hooks_vcpu(&h, 7, "vcpu:create", true, &f, err,
				sizeof(err)),
		 0);
	fp = fopen(out, "r");
	CHECK(fp != NULL);
	if (fp) {
		CHECK(fgets(line, sizeof(line), fp) != NULL);
		fclose(fp);
	}
	snprintf(want, sizeof(want), "%d 7 4242 /machine/peripheral/vcpu7\n",
		 (int)getpid());
	CHECK_STREQ(line, want);
	/* No thread yet, no path yet: the variables are absent. */
	f.tid = 0;
	f.qom_path[0] = 0;
	CHECK_EQ(run_hooks_vcpu(&h, 7, "host:prepare", true, &f, err,
				sizeof(err)),
		 0);
	fp = fopen(out, "r");
	line[0] = 0;
	if (fp) {
		CHECK(fgets(line, sizeof(line), fp) != NULL);
		fclose(fp);
	}
	snprintf(want, sizeof(want), "%d 7  \n", (int)getpid());
	CHECK_STREQ(line, want);
	free((void *)p);
}

/* Field 5 of /proc/PID/stat (the process group), or -1. */
static pid_t pgid_of(pid_t pid)
{
	char path[64], stat[512], *p;
	int pgrp = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(stat, sizeof(stat), f);
	fclose(f);
	p = p ? strrchr(stat, ')') : NULL;
	if (!p || sscanf(p + 1, " %*c %*d %d", &pgrp) != 1)
		return -1;
	return (pid_t)pgrp;
}

/* Whether any process is left in the process group @pgid. */
static bool group_empty(pid_t pgid)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct dirent *e;
		bool left = false;
		DIR *d = opendir("/proc");

		while (d && (e = readdir(d))) {
			pid_t pid = (pid_t)atoi(e->d_name);

			if (pid > 0 && pgid_of(pid) == pgid && !pid_dead(pid))
				left = true;
		}
		if (d)
			closedir(d);
		if (!left)
			return true;
		usleep(20000);
	} while (elapsed_ms(&t0) < 1000);
	return false;
}

/*
 * The "VMM's main thread" of the cancel tests: it waits until the hook
 * says it runs (it opens the FIFO and writes its pid: an event, not a
 * sleep), then cancels and notes when.
 */
struct canceller {
	const struct hooks *h;
	char fifo[300];
	pid_t hook_pid;
	struct timespec at;
};

static void *cancel_when_running(void *arg)
{
	struct canceller *c = arg;
	char buf[32] = "";
	FILE *f = fopen(c->fifo, "r"); /* until the hook opens it */

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			c->hook_pid = (pid_t)atoi(buf);
		fclose(f);
	}
	clock_gettime(CLOCK_MONOTONIC, &c->at);
	if (c->hook_pid > 0)
		hooks_cancel(c->h);
	return NULL;
}

/*
 * Runs @body (which writes its pid to the FIFO "$1-ready" before it
 * sleeps) with a 20 s timeout while another thread cancels it once it
 * runs; returns hooks_run()'s value, the ms from the cancel to the
 * return and the hook's pid (its group's id).
 */
static int run_and_cancel(const char *name, const char *body, char *err,
			  size_t errlen, long *ms, pid_t *pgid)
{
	struct canceller c = { 0 };
	struct hooks h;
	struct timespec t;
	pthread_t thread;
	const char *p = strdup(script(name, body));
	int ret, fd;

	snprintf(c.fifo, sizeof(c.fifo), "%s/%s-ready", dir, name);
	CHECK_EQ(mkfifo(c.fifo, 0600), 0);
	hooks_init(&h, "vm0", 20000);
	CHECK_EQ(add_hook(&h, p, err, errlen), 0);
	c.h = &h;
	CHECK_EQ(pthread_create(&thread, NULL, cancel_when_running, &c), 0);
	ret = run_hooks(&h, 2, "host:prepare", true, err, errlen);
	clock_gettime(CLOCK_MONOTONIC, &t);
	/* A hook that never said it runs: let the thread go. */
	fd = open(c.fifo, O_WRONLY | O_NONBLOCK);
	if (fd >= 0)
		close(fd);
	pthread_join(thread, NULL);
	CHECK(c.hook_pid > 0);
	*ms = (t.tv_sec - c.at.tv_sec) * 1000 +
	      (t.tv_nsec - c.at.tv_nsec) / 1000000;
	*pgid = c.hook_pid;
	free((void *)p);
	return ret;
}

/*
 * Shutdown while a hook sleeps 20 s: the call returns at once, the hook
 * and its children are gone, and hooks_run() says why.
 */
static void test_cancel_stops_a_running_hook(void)
{
	char err[512] = "";
	long ms = -1;
	pid_t pgid = -1;
	int ret;

	ret = run_and_cancel("sleeper",
			     "sleep 20 & echo $! > \"$0-kid\"\n"
			     "echo $$ > \"$0-ready\"\nwait $!",
			     err, sizeof(err), &ms, &pgid);
	printf("# cancelled after the hook ran: returned in %ld ms\n", ms);
	CHECK_EQ(ret, -ECANCELED);
	CHECK(ms >= 0 && ms < 1000);
	CHECK(strstr(err, "stopped: the VMM is shutting down") != NULL);
	check_child_dead("sleeper-kid");
	CHECK(pgid > 0 && group_empty(pgid));
	CHECK_EQ(count_children(), 0);
}

/* SIGTERM first: a hook's trap runs, so it can undo what it did. */
static void test_cancel_lets_a_trap_run(void)
{
	char err[512] = "", path[300];
	long ms = -1;
	pid_t pgid = -1;

	CHECK_EQ(run_and_cancel("trapper",
				"trap 'echo undone > \"$0-undone\"; exit 3' "
				"TERM\nsleep 20 & echo $$ > \"$0-ready\"\n"
				"wait $!",
				err, sizeof(err), &ms, &pgid),
		 -ECANCELED);
	CHECK(ms >= 0 && ms < 1000);
	snprintf(path, sizeof(path), "%s/trapper-undone", dir);
	CHECK_EQ(access(path, F_OK), 0);
	CHECK(pgid > 0 && group_empty(pgid));
}

/* A hook that ignores SIGTERM is killed after the grace. */
static void test_cancel_kills_a_hook_that_ignores_sigterm(void)
{
	char err[512] = "";
	long ms = -1;
	pid_t pgid = -1;

	/* sleep inherits the ignored SIGTERM: only SIGKILL ends the group. */
	CHECK_EQ(run_and_cancel("stubborn",
				"trap '' TERM\nsleep 20 & echo $! > "
				"\"$0-kid\"\necho $$ > \"$0-ready\"\n"
				"wait $!\nwait $!",
				err, sizeof(err), &ms, &pgid),
		 -ECANCELED);
	printf("# a hook ignoring SIGTERM: returned in %ld ms\n", ms);
	CHECK(ms >= HOOKS_CANCEL_GRACE_MS - 10 && ms < 1000);
	check_child_dead("stubborn-kid");
	CHECK(pgid > 0 && group_empty(pgid));
	CHECK_EQ(count_children(), 0);
}

/* After the cancel no hook starts: each call fails at once. */
static void test_no_hook_starts_after_cancel(void)
{
	struct hooks h;
	char err[512] = "", path[300];
	struct timespec t0;
	const char *p = strdup(script("late", "touch \"$0-ran\""));

	hooks_cancel(NULL); /* no hooks object: nothing to do */
	hooks_init(&h, "vm0", 5000);
	hooks_cancel(&h); /* no hook yet: nothing to do either */
	CHECK_EQ(run_hooks(&h, 1, "online", true, err, sizeof(err)), 0);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	hooks_cancel(&h);
	hooks_cancel(&h); /* twice is once */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(run_hooks(&h, 1, "online", false, err, sizeof(err)),
		 -ECANCELED);
	CHECK_EQ(run_hooks(&h, 1, "vcpu:create", false, err, sizeof(err)),
		 -ECANCELED);
	CHECK(elapsed_ms(&t0) < 100);
	CHECK(strstr(err, "not run: the VMM is shutting down") != NULL);
	snprintf(path, sizeof(path), "%s-ran", p);
	CHECK(access(path, F_OK) != 0);
	CHECK_EQ(count_children(), 0);
	free((void *)p);
}

/*
 * The way docs/orchestration.md gives for a daemon to outlive its hook:
 * setsid in the hook's foreground, which has called setsid() before it
 * runs what starts the daemon, so the daemon is out of the group before
 * the hook goes on.
 * All 6 live on, in a group that is not the hook's.  (`setsid daemon &`
 * races with the kill of the group at the hook's exit and loses.)
 */
static void test_daemons_outlive_their_hook(void)
{
	struct hooks h;
	char err[512] = "", path[300];
	const char *p = strdup(script(
		"daemons", "for i in 1 2 3 4 5 6; do\n"
			   "\tsetsid sh -c 'sleep 30 & echo $! >> \"$0\"' "
			   "\"$0-pids\" </dev/null >/dev/null 2>&1\n"
			   "done\necho $$ > \"$0-pgid\"\nexit 0"));
	pid_t hook_pgid;
	int alive = 0, n = 0;
	long pid;
	FILE *f;

	hooks_init(&h, "vm0", 5000);
	CHECK_EQ(add_hook(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(run_hooks(&h, 1, "online", true, err, sizeof(err)), 0);
	hook_pgid = read_pid("daemons-pgid");
	CHECK(hook_pgid > 0);
	snprintf(path, sizeof(path), "%s-pids", p);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (f && fscanf(f, "%ld", &pid) == 1) {
		pid_t g = pgid_of((pid_t)pid);

		n++;
		/* Its group is not the one killed: it cannot have been. */
		if (g > 0 && g != hook_pgid && kill((pid_t)pid, 0) == 0)
			alive++;
		kill((pid_t)pid, SIGKILL);
	}
	if (f)
		fclose(f);
	printf("# %d of %d daemons outlived their hook\n", alive, n);
	CHECK_EQ(n, 6);
	CHECK_EQ(alive, 6);
	free((void *)p);
}

static void cleanup(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
}

static void test_setup(void)
{
	CHECK(mkdtemp(dir) != NULL);
	atexit(cleanup);
}

CHECK_MAIN(TEST(test_setup), TEST(test_arguments_and_environment),
	   TEST(test_nonzero_exit_vetoes), TEST(test_signal_vetoes),
	   TEST(test_timeout_kills_and_reaps),
	   TEST(test_timeout_kills_the_process_group),
	   TEST(test_exit_kills_leftover_children),
	   TEST(test_escaped_child_does_not_hold_the_call),
	   TEST(test_clean_signal_state), TEST(test_minimal_environment),
	   TEST(test_no_inherited_descriptors),
	   TEST(test_output_is_bounded_and_logged),
	   TEST(test_endless_output_meets_the_timeout),
	   TEST(test_bad_paths_are_refused), TEST(test_directory_in_name_order),
	   TEST(test_vcpu_facts), TEST(test_cancel_stops_a_running_hook),
	   TEST(test_cancel_lets_a_trap_run),
	   TEST(test_cancel_kills_a_hook_that_ignores_sigterm),
	   TEST(test_no_hook_starts_after_cancel),
	   TEST(test_daemons_outlive_their_hook))
