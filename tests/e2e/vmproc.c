// SPDX-License-Identifier: GPL-2.0-only
/*
 * A hotvm process under test: started with its console on a pipe and its
 * API on a socket, so that a test can wait for console lines and QMP
 * replies (events, never sleeps) and look at its fds and threads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "vmproc.h"

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

const char *vmproc_hotvm(void)
{
	const char *p = getenv("HOTVM");

	return p && *p ? p : "build/vmm/hotvm";
}

int vmproc_stop_bound_ms(void)
{
	const char *s = getenv("HOTVM_TEST_STOP_MS");
	int ms = s ? atoi(s) : 0;

	return ms > 0 ? ms : 1000;
}

/* Reads what the console has, up to @deadline; false at EOF or timeout. */
static bool vmproc_fill(struct vmproc *v, long deadline)
{
	struct pollfd p = { .fd = v->out_fd, .events = POLLIN };
	long left = deadline - now_ms();
	ssize_t n;

	if (v->len == sizeof(v->buf) - 1) /* a huge line: drop it */
		v->len = 0;
	if (left <= 0 || poll(&p, 1, (int)left) <= 0)
		return false;
	n = read(v->out_fd, v->buf + v->len, sizeof(v->buf) - 1 - v->len);
	if (n <= 0)
		return false;
	if (v->echo)
		fwrite(v->buf + v->len, 1, (size_t)n, stdout);
	if (v->log_fd >= 0 && write(v->log_fd, v->buf + v->len, (size_t)n) < 0)
		v->log_fd = -1;
	v->len += (size_t)n;
	v->buf[v->len] = 0;
	return true;
}

/* Takes the next complete line out of the buffer into @line. */
static bool vmproc_take_line(struct vmproc *v, char *line, size_t size)
{
	char *nl = memchr(v->buf, '\n', v->len);
	size_t n;

	if (!nl)
		return false;
	n = (size_t)(nl - v->buf);
	/* Linux's console ends its lines with CR LF. */
	snprintf(line, size, "%.*s",
		 (int)(n && v->buf[n - 1] == '\r' ? n - 1 : n), v->buf);
	memmove(v->buf, nl + 1, v->len - n - 1);
	v->len -= n + 1;
	if (!strncmp(line, "online: ", 8))
		snprintf(v->online, sizeof(v->online), "%s", line + 8);
	if (!strncmp(line, "apicids: ", 9))
		snprintf(v->apicids, sizeof(v->apicids), "%s", line + 9);
	return true;
}

/*
 * A long wait says every VMPROC_HEARTBEAT_MS how far the guest got: the
 * nested lab takes a silent console for a frozen lab kernel, and a hung
 * guest must not look like one.
 */
#define VMPROC_HEARTBEAT_MS 30000

int vmproc_wait_line(struct vmproc *v, const char *prefix, int timeout_ms,
		     char *out, size_t outlen)
{
	long start = now_ms(), deadline = start + timeout_ms;
	long beat = start + VMPROC_HEARTBEAT_MS;
	char line[512], last[160] = "";

	for (;;) {
		while (vmproc_take_line(v, line, sizeof(line))) {
			if (!strncmp(line, prefix, strlen(prefix))) {
				if (out)
					snprintf(out, outlen, "%s", line);
				return 0;
			}
			if (line[0])
				snprintf(last, sizeof(last), "%.159s", line);
		}
		long until = beat < deadline ? beat : deadline;

		if (vmproc_fill(v, until))
			continue;
		/* Back early with nothing: the console closed (hotvm ended). */
		if (now_ms() < until)
			return -EPIPE;
		if (now_ms() >= deadline)
			return -ETIMEDOUT;
		printf("# still waiting for '%s' after %ld s; the guest's last "
		       "line: %s\n",
		       prefix, (now_ms() - start) / 1000, last);
		fflush(stdout);
		beat += VMPROC_HEARTBEAT_MS;
	}
}

/* Waits until the last value of a line kept in @field is @want. */
static int vmproc_wait_field(struct vmproc *v, const char *field,
			     const char *want, int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	char line[512];

	for (;;) {
		while (vmproc_take_line(v, line, sizeof(line)))
			;
		if (!strcmp(field, want))
			return 0;
		if (!vmproc_fill(v, deadline))
			return -ETIMEDOUT;
	}
}

int vmproc_wait_online(struct vmproc *v, const char *cpulist, int timeout_ms)
{
	return vmproc_wait_field(v, v->online, cpulist, timeout_ms);
}

int vmproc_wait_apicids(struct vmproc *v, const char *ids, int timeout_ms)
{
	return vmproc_wait_field(v, v->apicids, ids, timeout_ms);
}

void vmproc_drain(struct vmproc *v)
{
	struct pollfd p = { .fd = v->out_fd, .events = POLLIN };
	char line[512];

	do {
		while (vmproc_take_line(v, line, sizeof(line)))
			;
	} while (v->out_fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & POLLIN) &&
		 vmproc_fill(v, now_ms() + 1));
}

void vmproc_console_tail(struct vmproc *v, unsigned int lines)
{
	static char buf[16384];
	unsigned int seen = 0;
	ssize_t n;
	char *p, *end;
	int fd;

	vmproc_drain(v);
	fd = open(v->log, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* The last 16 KiB is plenty for a few dozen lines. */
	if (lseek(fd, 0, SEEK_END) > (off_t)sizeof(buf) - 1)
		lseek(fd, -(off_t)sizeof(buf) + 1, SEEK_END);
	else
		lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	end = buf + n;
	/* Back from the end to just after the (lines + 1)-th newline. */
	for (p = end; p > buf; p--)
		if (p[-1] == '\n' && p != end && ++seen > lines)
			break;
	printf("# guest console, last lines:\n");
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);

		if (len && p[len - 1] == '\r')
			len--;
		if (len)
			printf("#   %.*s\n", (int)len, p);
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* $VMPROC_READY_MS: a Linux guest in the nested lab boots in 10-60 s. */
static int vmproc_ready_ms(void)
{
	const char *s = getenv("VMPROC_READY_MS");
	int ms = s ? atoi(s) : 0;

	return ms > 0 ? ms : VMPROC_TIMEOUT_MS;
}

int vmproc_start(struct vmproc *v, const char *cpus, const char *cmdline,
		 const char *const *extra)
{
	return vmproc_start_ms(v, cpus, cmdline, extra, vmproc_ready_ms());
}

int vmproc_start_ms(struct vmproc *v, const char *cpus, const char *cmdline,
		    const char *const *extra, int ready_ms)
{
	char tmpl[] = "/tmp/hotvm-e2e-XXXXXX";
	const char *argv[48];
	struct qmp_client_error err;
	int fds[2], n = 0;
	char line[256];

	*v = (struct vmproc){ .out_fd = -1,
			      .log_fd = -1,
			      .echo = getenv("E2E_ECHO"),
			      .stop_ms = ready_ms > VMPROC_TIMEOUT_MS
						 ? ready_ms
						 : VMPROC_TIMEOUT_MS };
	if (!mkdtemp(tmpl))
		return -errno;
	snprintf(v->dir, sizeof(v->dir), "%s", tmpl);
	snprintf(v->sock, sizeof(v->sock), "%s/api.sock", tmpl);
	snprintf(v->log, sizeof(v->log), "%s/console.log", tmpl);
	v->log_fd =
		open(v->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	argv[n++] = vmproc_hotvm();
	argv[n++] = "run";
	argv[n++] = "--cpus";
	argv[n++] = cpus;
	argv[n++] = "--api-socket";
	argv[n++] = v->sock;
	argv[n++] = "--serial";
	argv[n++] = "stdio";
	argv[n++] = "--cmdline";
	argv[n++] = cmdline;
	for (; extra && *extra && n < 46; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	v->pid = fork();
	if (v->pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(fds[1]);
	v->out_fd = fds[0];
	if (v->pid < 0)
		return -errno;
	if (vmproc_wait_line(v, "ready", ready_ms, line, sizeof(line))) {
		printf("# %s: no ready line\n", argv[0]);
		return -ETIMEDOUT;
	}
	if (qmp_client_connect(v->sock, 1, VMPROC_TIMEOUT_MS, &v->c, &err)) {
		printf("# connect %s: %s\n", v->sock, err.desc);
		return -ECONNREFUSED;
	}
	return 0;
}

int vmproc_qmp(struct vmproc *v, const char *cmd, struct json_object **reply,
	       char *errdesc, size_t errlen, const char *fmt, ...)
{
	struct qmp_client_error err = { 0 };
	struct json_object *args = NULL;
	char buf[1024];
	va_list ap;
	int ret;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		args = json_tokener_parse(buf);
		if (!args) {
			printf("# bad test JSON: %s\n", buf);
			return -EINVAL;
		}
	}
	ret = qmp_client_execute(v->c, cmd, args, reply, &err,
				 VMPROC_TIMEOUT_MS);
	json_object_put(args);
	if (errdesc)
		snprintf(errdesc, errlen, "%s: %s", err.class, err.desc);
	if (ret && getenv("E2E_ECHO"))
		printf("# %s -> %s: %s\n", cmd, err.class, err.desc);
	return ret;
}

int vmproc_burst(struct vmproc *v, bool plug, unsigned int n,
		 const char *idprefix, bool at_once, char *errdesc,
		 size_t errlen)
{
	const char *cmd = plug ? "device_add" : "device_del";
	struct qmp_client_error err = { 0 };
	long seq[VMPROC_BURST_MAX + 1];
	int ret = n <= VMPROC_BURST_MAX ? 0 : -EINVAL;

	for (unsigned int i = 1; i <= n && !ret; i++) {
		char buf[160];
		struct json_object *a;

		if (plug)
			snprintf(buf, sizeof(buf),
				 "{\"driver\": \"host-x86_64-cpu\", "
				 "\"socket-id\": %u, \"id\": \"%s%u\"}",
				 i, idprefix, i);
		else
			snprintf(buf, sizeof(buf), "{\"id\": \"%s%u\"}",
				 idprefix, i);
		a = json_tokener_parse(buf);
		seq[i] = qmp_client_send(v->c, cmd, a, &err);
		json_object_put(a);
		if (seq[i] < 0)
			ret = (int)seq[i];
		else if (!at_once)
			ret = qmp_client_wait(v->c, cmd, seq[i], NULL, &err,
					      VMPROC_TIMEOUT_MS);
	}
	for (unsigned int i = 1; at_once && i <= n && !ret; i++)
		ret = qmp_client_wait(v->c, cmd, seq[i], NULL, &err,
				      VMPROC_TIMEOUT_MS);
	if (errdesc)
		snprintf(errdesc, errlen, "%s: %s", err.class, err.desc);
	return ret;
}

static int vmproc_count_dir(pid_t pid, const char *what)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, what);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

int vmproc_inject(struct vmproc *v, unsigned int cpu, const char *side,
		  const char *state)
{
	char err[600];
	int ret = vmproc_qmp(v, "cpuhp-inject-fault", NULL, err, sizeof(err),
			     "{\"cpu\": %u, \"side\": \"%s\", "
			     "\"state\": \"%s\"}",
			     cpu, side, state);

	if (ret)
		printf("# inject %s %s on cpu %u: %s\n", side, state, cpu, err);
	return ret;
}

int vmproc_fds(struct vmproc *v)
{
	return vmproc_count_dir(v->pid, "fd");
}

/*
 * A joined thread can linger in /proc for a moment after pthread_join()
 * returned (the kernel wakes the joiner before it has released the task):
 * wait, bounded, for the count the test expects.
 */
int vmproc_threads(struct vmproc *v, int expect)
{
	long deadline = now_ms() + 2000;
	int n;

	while ((n = vmproc_count_dir(v->pid, "task")) != expect &&
	       expect >= 0 && now_ms() < deadline)
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	return n;
}

/* One look at /proc/PID/task: the threads named "vcpuN". */
static int vcpu_threads_once(pid_t pid, int *tid_of, unsigned int max)
{
	char path[96], comm[32];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	for (unsigned int i = 0; tid_of && i < max; i++)
		tid_of[i] = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		unsigned int cpu;
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/comm", pid,
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue; /* ended meanwhile */
		if (fgets(comm, sizeof(comm), f) &&
		    sscanf(comm, "vcpu%u", &cpu) == 1) {
			n++;
			if (tid_of && cpu < max)
				tid_of[cpu] = atoi(d->d_name);
		}
		fclose(f);
	}
	closedir(dir);
	return n;
}

int vmproc_vcpu_threads(struct vmproc *v, int expect, int *tid_of,
			unsigned int max)
{
	long deadline = now_ms() + 2000;
	int n;

	/* As vmproc_threads(): a joined thread lingers for a moment. */
	while ((n = vcpu_threads_once(v->pid, tid_of, max)) != expect &&
	       expect >= 0 && now_ms() < deadline)
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	return n;
}

int vmproc_fast_tid(struct vmproc *v, unsigned int cpu)
{
	struct json_object *r = NULL, *idx, *tid;
	int ret = 0;

	if (vmproc_qmp(v, "query-cpus-fast", &r, NULL, 0, NULL))
		return -1;
	for (size_t i = 0; i < json_object_array_length(r); i++) {
		struct json_object *c = json_object_array_get_idx(r, i);

		if (json_object_object_get_ex(c, "cpu-index", &idx) &&
		    json_object_get_int(idx) == (int)cpu &&
		    json_object_object_get_ex(c, "thread-id", &tid))
			ret = json_object_get_int(tid);
	}
	json_object_put(r);
	return ret;
}

int vmproc_wait_exit(struct vmproc *v, int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	int pidfd, status = 0;
	char line[512];
	pid_t got;

	if (v->pid <= 0)
		return -ECHILD;
	/* Readable once the process has ended; without it, look every 10 ms. */
	pidfd = (int)syscall(SYS_pidfd_open, v->pid, 0);
	while ((got = waitpid(v->pid, &status, WNOHANG)) == 0) {
		struct pollfd p[2] = { { .fd = v->out_fd, .events = POLLIN },
				       { .fd = pidfd, .events = POLLIN } };
		long left = deadline - now_ms();

		if (left <= 0) {
			if (pidfd >= 0)
				close(pidfd);
			return -ETIMEDOUT;
		}
		if (poll(p, 2, pidfd >= 0 ? (int)left : 10) < 0 &&
		    errno != EINTR)
			break;
		if (p[0].revents & POLLIN) {
			vmproc_fill(v, now_ms() + 100);
			while (vmproc_take_line(v, line, sizeof(line)))
				;
		} else if (p[0].revents) {
			/* The console's end: everything written was read. */
			close(v->out_fd);
			v->out_fd = -1;
		}
	}
	if (got == 0) /* poll failed: wait without it */
		got = waitpid(v->pid, &status, 0);
	if (pidfd >= 0)
		close(pidfd);
	v->pid = 0;
	return got > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int vmproc_stop(struct vmproc *v)
{
	long deadline =
		now_ms() + (v->stop_ms ? v->stop_ms : VMPROC_TIMEOUT_MS);
	int status = -1;
	char cmd[300];

	if (v->c) {
		vmproc_qmp(v, "quit", NULL, NULL, 0, NULL);
		qmp_client_close(v->c);
		v->c = NULL;
	}
	if (v->pid > 0) {
		/* Drain the console so hotvm never blocks on a full pipe. */
		while (waitpid(v->pid, &status, WNOHANG) == 0) {
			if (now_ms() > deadline) {
				printf("# hotvm did not exit after quit\n");
				kill(v->pid, SIGKILL);
				waitpid(v->pid, &status, 0);
				status = -1;
				break;
			}
			vmproc_fill(v, now_ms() + 100);
			v->len = 0;
		}
	}
	if (v->out_fd >= 0)
		close(v->out_fd);
	if (v->log_fd >= 0)
		close(v->log_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", v->dir);
	if (v->dir[0] && system(cmd))
		printf("# could not remove %s\n", v->dir);
	v->pid = 0;
	return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct json_object *vmproc_cpu(struct json_object *cpuhp, unsigned int cpu)
{
	struct json_object *cpus, *c, *n;

	if (!json_object_object_get_ex(cpuhp, "cpus", &cpus))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(cpus); i++) {
		c = json_object_array_get_idx(cpus, i);
		if (json_object_object_get_ex(c, "cpu", &n) &&
		    json_object_get_int(n) == (int)cpu)
			return c;
	}
	return NULL;
}

const char *vmproc_str(struct json_object *o, const char *a, const char *b)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, a, &x))
		return NULL;
	if (b && !json_object_object_get_ex(x, b, &x))
		return NULL;
	return json_object_get_type(x) == json_type_string
		       ? json_object_get_string(x)
		       : NULL;
}

bool vmproc_flag(struct json_object *o, const char *a, const char *b)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, a, &x))
		return false;
	if (b && !json_object_object_get_ex(x, b, &x))
		return false;
	return json_object_get_boolean(x);
}

int vmproc_states(struct vmproc *v, const char *side, const char **names,
		  int max)
{
	struct json_object *r = NULL, *list;
	int n = 0;

	if (vmproc_qmp(v, "query-cpuhp", &r, NULL, 0, NULL))
		return -1;
	if (!json_object_object_get_ex(r, side, &list)) {
		json_object_put(r);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(list) && n < max; i++) {
		struct json_object *st = json_object_array_get_idx(list, i), *x;
		const char *name = vmproc_str(st, "name", NULL);

		if (!name || !vmproc_flag(st, "startup", NULL) ||
		    !json_object_object_get_ex(st, "state", &x) ||
		    !json_object_get_int(x))
			continue;
		names[n] = strdup(name);
		if (!names[n++]) {
			n = -1;
			break;
		}
	}
	json_object_put(r);
	return n;
}
