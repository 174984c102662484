// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control plane of a real hotvm under faults:
 *  - SIGTERM while a command runs (query-hotpluggable-cpus with max=1024,
 *    cpu-resize, device_add while a hook runs), many times: exit status 0,
 *    no sanitizer report, no socket file left;
 *  - a hot-add stuck in a slow hook holds up neither query-status, nor the
 *    events, nor quit from another client.
 *
 * Usage: test-qmp-vm PATH-TO-HOTVM.  TAP; skips without /dev/kvm.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "check.h"
#include "qmp_test_util.h"

#define T_MS 30000 /* the software /dev/kvm here is slow, ASan slower */

static const char *hotvm;

struct vmp {
	pid_t pid;
	char dir[64];
	char sock[96];
	char log[96];
	char hook[96];
};

static void vm_hook(struct vmp *v, const char *body)
{
	int fd;

	snprintf(v->hook, sizeof(v->hook), "%s/hook.sh", v->dir);
	fd = open(v->hook, O_WRONLY | O_CREAT | O_TRUNC, 0700);
	if (fd < 0 || dprintf(fd, "#!/bin/sh\n%s\nexit 0\n", body) < 0)
		printf("# cannot write the hook: %s\n", strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void vm_dir(struct vmp *v)
{
	memset(v, 0, sizeof(*v));
	v->pid = -1;
	snprintf(v->dir, sizeof(v->dir), "/tmp/hotvm-qmpvm-XXXXXX");
	if (!mkdtemp(v->dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(v->sock, sizeof(v->sock), "%s/api.sock", v->dir);
	snprintf(v->log, sizeof(v->log), "%s/hotvm.log", v->dir);
}

/* Starts hotvm and returns a negotiated client on *r, or -1. */
static int vm_start(struct vmp *v, const char *cpus, bool with_hook,
		    struct raw *r)
{
	long long end = t_now_ms() + T_MS;
	struct json_object *o;

	v->pid = fork();
	if (v->pid == 0) {
		int fd = open(v->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (with_hook)
			execl(hotvm, hotvm, "run", "--cpus", cpus,
			      "--api-socket", v->sock, "--serial", "none",
			      "--hook", v->hook, (char *)NULL);
		else
			execl(hotvm, hotvm, "run", "--cpus", cpus,
			      "--api-socket", v->sock, "--serial", "none",
			      (char *)NULL);
		_exit(127);
	}
	while (t_now_ms() < end) {
		if (!raw_open(r, v->sock)) {
			o = raw_recv(r, T_MS);
			if (jget(o, "QMP")) {
				json_object_put(o);
				raw_send(r, "{\"execute\": "
					    "\"qmp_capabilities\"}\n");
				o = raw_reply(r, T_MS);
				if (jget(o, "return")) {
					json_object_put(o);
					return 0;
				}
			}
			json_object_put(o);
			raw_close(r);
		}
		if (waitpid(v->pid, NULL, WNOHANG) == v->pid)
			break;
		usleep(20000);
	}
	printf("# hotvm did not come up\n");
	return -1;
}

/* The exit status, or -1 (killed, or still running after timeout_ms). */
static int vm_wait(struct vmp *v, int timeout_ms)
{
	long long end = t_now_ms() + timeout_ms;
	int st;

	while (t_now_ms() < end) {
		pid_t p = waitpid(v->pid, &st, WNOHANG);

		if (p == v->pid) {
			v->pid = -1;
			if (WIFSIGNALED(st))
				printf("# hotvm died of signal %d\n",
				       WTERMSIG(st));
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		}
		usleep(5000);
	}
	printf("# hotvm still running after %d ms: killed\n", timeout_ms);
	kill(v->pid, SIGKILL);
	waitpid(v->pid, NULL, 0);
	v->pid = -1;
	return -1;
}

/* No sanitizer report, no crash in the log; prints it otherwise. */
static bool log_clean(struct vmp *v)
{
	static const char *const bad[] = { "runtime error", "Sanitizer", "SEGV",
					   "use-after-free" };
	char buf[8192];
	bool clean = true;
	ssize_t n;
	int fd = open(v->log, O_RDONLY);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		clean &= !strstr(buf, bad[i]);
	if (!clean)
		printf("# hotvm's log:\n# %.2000s\n", buf);
	return clean;
}

static void vm_cleanup(struct vmp *v)
{
	char p[128];

	if (v->pid > 0) {
		kill(v->pid, SIGKILL);
		waitpid(v->pid, NULL, 0);
	}
	unlink(v->sock);
	unlink(v->log);
	if (v->hook[0])
		unlink(v->hook);
	snprintf(p, sizeof(p), "%s/hook.out", v->dir);
	unlink(p);
	rmdir(v->dir);
}

/*
 * Runs hotvm n times; each time sends request, waits a delay that moves
 * through [0, max_delay_ms) from run to run, and sends SIGTERM.  Every run
 * must end with status 0, a clean log and no socket file.
 */
static void sigterm_during(const char *what, const char *cpus, const char *hook,
			   const char *request, int n, int max_delay_ms)
{
	int good = 0;

	for (int i = 0; i < n; i++) {
		struct vmp v;
		struct raw r;
		struct stat st;
		int status;
		bool ok;

		vm_dir(&v);
		if (hook)
			vm_hook(&v, hook);
		if (vm_start(&v, cpus, hook != NULL, &r)) {
			check_failures++;
			vm_cleanup(&v);
			return;
		}
		raw_send(&r, request);
		usleep((useconds_t)(max_delay_ms * 1000 * i / n));
		kill(v.pid, SIGTERM);
		status = vm_wait(&v, T_MS);
		ok = status == 0 && log_clean(&v) && lstat(v.sock, &st);
		if (!ok)
			printf("# %s, run %d: status %d, socket %s\n", what, i,
			       status, lstat(v.sock, &st) ? "gone" : "left");
		good += ok;
		raw_close(&r);
		vm_cleanup(&v);
	}
	printf("# SIGTERM during %s: %d of %d runs clean\n", what, good, n);
	CHECK_EQ(good, n);
}

static void test_sigterm_query_1024(void)
{
	char req[64 * 60] = "";

	for (int i = 0; i < 60; i++)
		strcat(req, "{\"execute\": \"query-hotpluggable-cpus\"}\n");
	sigterm_during("query-hotpluggable-cpus, max=1024", "boot=1,max=1024",
		       NULL, req, 10, 30);
}

/* A client's next requests wait behind its command, as tools send them. */
static void then_queries(char *req, size_t cap)
{
	for (int i = 0; i < 20; i++)
		strncat(req, "{\"execute\": \"query-hotpluggable-cpus\"}\n",
			cap - strlen(req) - 1);
}

static void test_sigterm_resize(void)
{
	char req[64 * 24] = "{\"execute\": \"cpu-resize\", \"arguments\": "
			    "{\"count\": 24}}\n";

	then_queries(req, sizeof(req));
	sigterm_during("cpu-resize to 24", "boot=1,max=24", NULL, req, 14, 560);
}

static void test_sigterm_hook(void)
{
	char req[64 * 24] = "{\"execute\": \"device_add\", \"arguments\": "
			    "{\"driver\": \"host-x86_64-cpu\", "
			    "\"socket-id\": 1, \"id\": \"c1\"}}\n";

	then_queries(req, sizeof(req));
	/* At online the add succeeds after the hook: it then uses the state. */
	sigterm_during("a hook in device_add", "boot=1,max=2",
		       "[ \"$3\" = online ] && [ \"$4\" = up ] && sleep 0.4",
		       req, 6, 500);
}

/* Sends @cmd on @r and checks its reply comes within a second. */
static void answers_at_once(struct raw *r, const char *cmd)
{
	char req[128];
	struct json_object *o;
	long long t0 = t_now_ms(), t;

	snprintf(req, sizeof(req), "{\"execute\": \"%s\", \"id\": \"%s\"}\n",
		 cmd, cmd);
	raw_send(r, req);
	o = raw_reply(r, T_MS);
	t = t_now_ms() - t0;
	CHECK_STREQ(jstr(o, "id"), cmd);
	json_object_put(o);
	printf("# %s answered in %lld ms during the hook\n", cmd, t);
	CHECK(t < 1000);
}

/*
 * A hot-add stuck in a hook (10 s at online, CPU 1): another client's
 * query-status, the hot-add's events and quit must not wait for it.  The
 * hook is long so that a slow machine (an ASan build in the lab) still
 * reaches it well before it would end; quit ends it anyway.
 */
static void test_responsive_during_hook(void)
{
	struct vmp v;
	struct raw a, b;
	struct json_object *o;
	long long t0, t;
	int events = 0, status;

	vm_dir(&v);
	/* Only the hot-added CPU: the boot CPU's walk runs hooks too. */
	vm_hook(&v, "[ \"$2\" = 1 ] && [ \"$3\" = online ] && "
		    "[ \"$4\" = up ] && sleep 10");
	if (vm_start(&v, "boot=1,max=2", true, &a)) {
		check_failures++;
		vm_cleanup(&v);
		return;
	}
	CHECK_EQ(raw_open(&b, v.sock), 0);
	o = raw_recv(&b, T_MS);
	json_object_put(o);
	raw_send(&b, "{\"execute\": \"qmp_capabilities\"}\n");
	o = raw_reply(&b, T_MS);
	CHECK(jget(o, "return"));
	json_object_put(o);
	t0 = t_now_ms();
	raw_send(&a,
		 "{\"execute\": \"device_add\", \"arguments\": {\"driver\": "
		 "\"host-x86_64-cpu\", \"socket-id\": 1, \"id\": \"c1\"}, "
		 "\"id\": \"add\"}\n");
	/* The add's progress reaches b while the hook still runs. */
	while (events < 3 && !b.eof && t_now_ms() - t0 < 8000) {
		const char *ev;

		o = raw_recv(&b, 200);
		if (!o)
			continue; /* a slow guest: wait on, to the deadline */
		ev = jstr(o, "event");
		events += ev && !strcmp(ev, "CPUHP_STATE");
		json_object_put(o);
	}
	t = t_now_ms() - t0;
	printf("# %d CPUHP_STATE events at b after %lld ms\n", events, t);
	CHECK(events >= 3 && t < 8000);
	/* The add is in its hook now: query-status and quit still answer. */
	usleep(300000);
	answers_at_once(&b, "query-status");
	/* So do the queries that read the host table the walk holds. */
	answers_at_once(&b, "query-cpuhp");
	answers_at_once(&b, "quit");
	/* The add ends with the shutdown; hotvm exits cleanly. */
	status = vm_wait(&v, T_MS);
	CHECK_EQ(status, 0);
	CHECK(log_clean(&v));
	CHECK(access(v.sock, F_OK) != 0);
	raw_close(&a);
	raw_close(&b);
	vm_cleanup(&v);
}

static bool have_kvm(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static const struct check_case cases[] = {
	TEST(test_sigterm_query_1024),
	TEST(test_sigterm_resize),
	TEST(test_sigterm_hook),
	TEST(test_responsive_during_hook),
};

int check_failures;

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH-TO-HOTVM\n", argv[0]);
		return 2;
	}
	hotvm = argv[1];
	if (!have_kvm()) {
		printf("1..0 # SKIP no /dev/kvm\n");
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	return check_run(cases, sizeof(cases) / sizeof(cases[0]));
}
