// SPDX-License-Identifier: GPL-2.0-only
/*
 * Running orchestration hooks.  A hook is a child process in a process
 * group of its own, started as if from a clean shell: empty signal mask,
 * default dispositions, only stdin/stdout/stderr open and a minimal
 * environment, so nothing of the VMM (its blocked stop signals, its ignored
 * SIGPIPE, its sockets and KVM fds, its caller's secrets) leaks into it.
 *
 * It is waited for through a pidfd, with its output read from a pipe at the
 * same time, so the timeout needs neither signals nor polling and a chatty
 * hook can neither block on a full pipe nor flood the log: the first
 * HOOKS_OUTPUT_MAX bytes are logged, the rest counted and dropped.  When
 * the hook exits or is killed, its process group is killed too, so its
 * children do not outlive it.  The same poll watches an eventfd that
 * hooks_cancel() makes readable at shutdown, so a hook that sleeps stops
 * at once instead of holding the VMM until its timeout.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "hooks.h"
#include "log.h"
#include "vcpu.h"

/* Used when the VMM itself has no PATH, as a login shell would set it. */
#define HOOKS_DEFAULT_PATH                                                     \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/*
 * The most output read in one go: a hook writing without pause must not
 * keep the wait from seeing its timeout.  After the hook is gone, what it
 * wrote just before exiting is read up to this much too, so a process that
 * left its group and keeps the pipe open cannot keep the caller reading.
 */
#define HOOKS_READ_MAX (1 << 20)

extern char **environ;

/* One call of one hook: what its messages and log lines are prefixed by. */
struct hooks_call {
	const char *path;
	unsigned int cpu;
	const char *state;
	const char *dir;
	const struct hooks_vcpu *vcpu; /* may be NULL */
};

/* The hook's combined stdout and stderr, as much as is kept of it. */
struct hooks_output {
	char buf[HOOKS_OUTPUT_MAX];
	size_t len;
	unsigned long long dropped;
	bool eof;
};

void hooks_init(struct hooks *h, const char *vm_name, int timeout_ms)
{
	*h = (struct hooks){
		.timeout_ms =
			timeout_ms > 0 ? timeout_ms : HOOKS_DEFAULT_TIMEOUT,
		.vm_name = vm_name,
		.cancel_fd = -1,
	};
}

/* The QOM paths QEMU gives a vCPU (and hotvm's QMP shows). */
#define HOOKS_QOM_PERIPHERAL "/machine/peripheral/%s"
#define HOOKS_QOM_UNATTACHED "/machine/unattached/device[%u]"

void hooks_vcpu_facts(struct hooks_vcpu *f, const struct vcpu *vcpu,
		      const char *id, bool boot)
{
	*f = (struct hooks_vcpu){
		.tid = vcpu_tid(vcpu), /* none while parked */
		.apic_id = vcpu->apic_id,
	};
	if (id && *id)
		snprintf(f->qom_path, sizeof(f->qom_path), HOOKS_QOM_PERIPHERAL,
			 id);
	else if (boot)
		snprintf(f->qom_path, sizeof(f->qom_path), HOOKS_QOM_UNATTACHED,
			 vcpu->id);
}

static int hooks_add_one(struct hooks *h, const char *path, struct hv_err *err)
{
	struct stat st;

	if (h->nr == HOOKS_MAX) {
		return hv_err_set(err, -E2BIG, "--hook %s: at most %d hooks",
				  path, HOOKS_MAX);
	}
	if (stat(path, &st) || access(path, X_OK)) {
		int e = errno;

		return hv_err_set(
			err, -e,
			"--hook %s: %s; give the path of an executable file",
			path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		return hv_err_set(
			err, -EINVAL,
			"--hook %s: not a regular file; give the path of an "
			"executable file",
			path);
	}
	/* Made now, before any seccomp filter or thread: see hooks_cancel(). */
	if (h->cancel_fd < 0) {
		h->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (h->cancel_fd < 0) {
			int e = errno;

			return hv_err_set(err, -e, "--hook %s: eventfd: %s",
					  path, strerror(e));
		}
	}
	h->paths[h->nr++] = path;
	return 0;
}

static int hooks_name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* A directory entry that is a hook: an executable regular file. */
static bool hooks_is_hook(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* @dir/@name, if it is a hook; other entries are skipped. */
static int hooks_add_found(struct hooks *h, const char *dir, const char *name,
			   struct hv_err *err)
{
	char *slot;

	if (h->nr == HOOKS_MAX) {
		return hv_err_set(err, -E2BIG,
				  "--hook %s: at most %d hooks (%s is one "
				  "too many)",
				  dir, HOOKS_MAX, name);
	}
	slot = h->found[h->nr];
	if (snprintf(slot, HOOKS_PATH_MAX, "%s/%s", dir, name) >=
	    HOOKS_PATH_MAX) {
		return hv_err_set(
			err, -ENAMETOOLONG,
			"--hook %s: the path of %s is longer than %d bytes",
			dir, name, HOOKS_PATH_MAX - 1);
	}
	return hooks_is_hook(slot) ? hooks_add_one(h, slot, err) : 0;
}

/* Every executable in @dir, in strcmp order, as libvirt's qemu.d. */
static int hooks_add_dir(struct hooks *h, const char *dir, struct hv_err *err)
{
	struct dirent **names;
	unsigned int before = h->nr;
	int n = scandir(dir, &names, NULL, hooks_name_cmp);
	int ret = 0;

	if (n < 0) {
		ret = -errno;
		return hv_err_set(err, ret, "--hook %s: %s", dir,
				  strerror(-ret));
	}
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;

		if (!ret && name[0] != '.')
			ret = hooks_add_found(h, dir, name, err);
		free(names[i]);
	}
	free(names);
	if (!ret && h->nr == before) {
		ret = hv_err_set(
			err, -ENOENT,
			"--hook %s: the directory holds no executable file",
			dir);
	}
	return ret;
}

int hooks_add(struct hooks *h, const char *path, struct hv_err *err)
{
	struct stat st;

	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return hooks_add_dir(h, path, err);
	return hooks_add_one(h, path, err);
}

static int hooks_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static long hooks_elapsed_ms(long long t0)
{
	return (long)(hv_now_ms() - t0);
}

/* The hook's environment is PATH and the HOTVM_* facts, nothing else. */
static const char *hooks_path_env(void)
{
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "PATH=", 5))
			return *e;
	return "PATH=" HOOKS_DEFAULT_PATH;
}

/*
 * A close-on-exec pipe whose ends are above stderr, so the child's dup2
 * onto 1 and 2 never closes one of them; the read end does not block.
 */
static int hooks_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	for (int i = 0; i < 2; i++) {
		if (p[i] > STDERR_FILENO)
			continue;
		int fd = fcntl(p[i], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);

		if (fd < 0) {
			int e = errno;

			close(p[0]);
			close(p[1]);
			return -e;
		}
		close(p[i]);
		p[i] = fd;
	}
	if (fcntl(p[0], F_SETFL, O_NONBLOCK)) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	return 0;
}

/*
 * Reads what the pipe has now, up to HOOKS_READ_MAX, keeping the first
 * bytes and counting the rest; 0 or -errno.
 */
static int hooks_read_output(int fd, struct hooks_output *o)
{
	char scratch[4096];
	size_t total = 0;

	while (total < HOOKS_READ_MAX) {
		size_t room = sizeof(o->buf) - o->len;
		char *dst = room ? o->buf + o->len : scratch;
		ssize_t n = read(fd, dst, room ? room : sizeof(scratch));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0) {
			o->eof = true;
			return 0;
		}
		if (room)
			o->len += (size_t)n;
		else
			o->dropped += (unsigned long long)n;
		total += (size_t)n;
	}
	return 0;
}

/* Whether hooks_cancel() was called (the eventfd stays readable). */
static bool hooks_cancelled(const struct hooks *h)
{
	struct pollfd p = { .fd = h->cancel_fd, .events = POLLIN };

	return h->cancel_fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

void hooks_cancel(const struct hooks *h)
{
	uint64_t one = 1;

	/* nr > 0: cancel_fd is ours (a zeroed struct hooks has fd 0). */
	if (h && h->nr && h->cancel_fd >= 0 &&
	    write(h->cancel_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_err("hooks: cannot stop the running hooks: %s",
		       strerror(errno));
}

/*
 * Cancelled: SIGTERM to the hook's group, a hook can clean up as it would
 * at a shutdown of the host, then up to HOOKS_CANCEL_GRACE_MS for the hook
 * itself to go; the caller then SIGKILLs the group.
 */
static void hooks_terminate(pid_t pid, int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	long long t0;
	long left;

	kill(-pid, SIGTERM);
	t0 = hv_now_ms();
	while ((left = HOOKS_CANCEL_GRACE_MS - hooks_elapsed_ms(t0)) > 0)
		if (poll(&p, 1, (int)left) >= 0 || errno != EINTR)
			break;
}

/*
 * Waits up to @timeout_ms for the hook to exit while collecting its output,
 * or until @cancel_fd is readable (-ECANCELED: hooks_terminate()); then
 * kills whatever is left of its process group and reaps it.  The group is
 * killed before the reap: until then the leader's pid (the group's id)
 * cannot be reused, so the kill cannot reach anyone else.
 */
static int hooks_wait(pid_t pid, int out_fd, int cancel_fd, int timeout_ms,
		      struct hooks_output *o, int *status)
{
	int pidfd = hooks_pidfd_open(pid);
	int ret = pidfd < 0 ? -errno : 0; /* no bounded wait: do not hang */
	struct pollfd p[3] = {
		{ .fd = pidfd, .events = POLLIN },
		{ .fd = out_fd, .events = POLLIN },
		{ .fd = cancel_fd, .events = POLLIN },
	};
	long long t0 = hv_now_ms();
	int r;

	while (!ret) {
		long left = timeout_ms - hooks_elapsed_ms(t0);

		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		r = poll(p, 3, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			break;
		}
		if (p[1].revents) {
			r = hooks_read_output(out_fd, o);
			if (r || o->eof)
				p[1].fd = -1; /* the exit still ends the wait */
		}
		if (p[0].revents)
			break;
		if (p[2].revents) {
			ret = -ECANCELED;
			break;
		}
	}
	if (ret == -ECANCELED)
		hooks_terminate(pid, pidfd);
	kill(-pid, SIGKILL);
	if (!o->eof)
		hooks_read_output(out_fd, o);
	if (pidfd >= 0)
		close(pidfd);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return ret ? ret : -errno;
	return ret;
}

/* One line of output, with control characters made harmless for the log. */
static void hooks_log_line(const struct hooks_call *c, const char *s,
			   size_t len)
{
	char line[HOOKS_OUTPUT_MAX + 1];

	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		line[i] = (ch < 0x20 && ch != '\t') || ch == 0x7f ? '?' : s[i];
	}
	line[len] = '\0';
	pr_err("hook %s (cpu %u, %s %s): %s", c->path, c->cpu, c->state, c->dir,
	       line);
}

/*
 * The kept output, line by line; a flood of short lines would multiply
 * the log by the prefix, so HOOKS_OUTPUT_LINES lines at most.
 */
static void hooks_log_output(const struct hooks_call *c,
			     const struct hooks_output *o)
{
	unsigned long long dropped = o->dropped;
	size_t start = 0, i;
	unsigned int lines = 0;

	for (i = 0; i < o->len && lines < HOOKS_OUTPUT_LINES; i++) {
		if (o->buf[i] != '\n')
			continue;
		hooks_log_line(c, o->buf + start, i - start);
		start = i + 1;
		lines++;
	}
	if (start < o->len && lines < HOOKS_OUTPUT_LINES) {
		hooks_log_line(c, o->buf + start, o->len - start);
		start = o->len;
	}
	dropped += o->len - start;
	if (dropped)
		pr_err("hook %s (cpu %u, %s %s): %llu more bytes of output "
		       "dropped; only the first %zu bytes (at most %d lines) "
		       "are logged",
		       c->path, c->cpu, c->state, c->dir, dropped, start,
		       HOOKS_OUTPUT_LINES);
}

/*
 * Starts the hook in its own process group, with a clean signal state,
 * stdin from /dev/null, stdout and stderr into @out_fd (the guest console
 * owns the VMM's stdout) and every other descriptor closed.
 */
static int hooks_spawn(pid_t *pid, const char *path, char **argv, char **envp,
		       int out_fd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int ret;

	sigemptyset(&none);
	sigfillset(&all);
	ret = posix_spawnattr_init(&attr);
	if (ret)
		return -ret;
	ret = posix_spawn_file_actions_init(&fa);
	if (ret) {
		posix_spawnattr_destroy(&attr);
		return -ret;
	}
	ret = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
						      POSIX_SPAWN_SETSIGMASK |
						      POSIX_SPAWN_SETSIGDEF);
	if (!ret)
		ret = posix_spawnattr_setpgroup(&attr, 0);
	if (!ret)
		ret = posix_spawnattr_setsigmask(&attr, &none);
	if (!ret)
		ret = posix_spawnattr_setsigdefault(&attr, &all);
	if (!ret)
		ret = posix_spawn_file_actions_addopen(
			&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (!ret)
		ret = posix_spawn_file_actions_adddup2(&fa, out_fd,
						       STDOUT_FILENO);
	if (!ret)
		ret = posix_spawn_file_actions_adddup2(&fa, out_fd,
						       STDERR_FILENO);
	if (!ret)
		ret = posix_spawn_file_actions_addclosefrom_np(
			&fa, STDERR_FILENO + 1);
	if (!ret)
		ret = posix_spawn(pid, path, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	return -ret;
}

/* The vCPU's facts as environment strings, appended at envp[*n]. */
static void hooks_vcpu_env(const struct hooks_call *c, char *pid_s,
			   char *apic_s, char *tid_s, char *qom_s, char **envp,
			   unsigned int *n)
{
	const struct hooks_vcpu *f = c->vcpu;

	snprintf(pid_s, 32, "HOTVM_PID=%d", (int)getpid());
	envp[(*n)++] = pid_s;
	if (!f)
		return;
	snprintf(apic_s, 32, "HOTVM_APIC_ID=%u", f->apic_id);
	envp[(*n)++] = apic_s;
	if (f->tid > 0) {
		snprintf(tid_s, 32, "HOTVM_THREAD_ID=%d", f->tid);
		envp[(*n)++] = tid_s;
	}
	if (f->qom_path[0]) {
		snprintf(qom_s, HOOKS_QOM_MAX + 16, "HOTVM_QOM_PATH=%s",
			 f->qom_path);
		envp[(*n)++] = qom_s;
	}
}

/*
 * What the wait for the hook of @c said (@ret, and its exit @status): 0
 * for an exit with 0, else the errno and, in @err, why.
 */
static int hooks_verdict(const struct hooks *h, const struct hooks_call *c,
			 int ret, int status, struct hv_err *err)
{
	if (ret == -ETIMEDOUT) {
		return hv_err_set(
			err, ret,
			"hook %s (cpu %u, %s, %s) did not finish within %d "
			"ms: killed",
			c->path, c->cpu, c->state, c->dir, h->timeout_ms);
	}
	if (ret == -ECANCELED) {
		struct hv_err why = { 0 };

		hv_err_set(&why, ret,
			   "hook %s (cpu %u, %s, %s) stopped: the VMM is "
			   "shutting down",
			   c->path, c->cpu, c->state, c->dir);
		pr_err("%s",
		       why.msg); /* cut short: it may have left work undone */
		return hv_err_set(err, ret, "%s", why.msg);
	}
	if (ret) {
		return hv_err_set(err, ret, "hook %s: wait failed: %s", c->path,
				  strerror(-ret));
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		return hv_err_set(
			err, -EPERM, "hook %s (cpu %u, %s, %s) exited with %d",
			c->path, c->cpu, c->state, c->dir, WEXITSTATUS(status));
	return hv_err_set(err, -EPERM, "hook %s (cpu %u, %s, %s) killed by %s",
			  c->path, c->cpu, c->state, c->dir,
			  strsignal(WTERMSIG(status)));
}

static int hooks_run_one(const struct hooks *h, const struct hooks_call *c,
			 struct hv_err *err)
{
	char cpu_s[16], env_vm[256], env_cpu[32], env_state[128], env_dir[32];
	char env_pid[32], env_apic[32], env_tid[32],
		env_qom[HOOKS_QOM_MAX + 16];
	char *argv[] = { (char *)c->path,  (char *)h->vm_name, cpu_s,
			 (char *)c->state, (char *)c->dir,     NULL };
	char *envp[10] = { (char *)hooks_path_env(), env_vm, env_cpu, env_state,
			   env_dir };
	unsigned int nenv = 5;
	struct hooks_output *o;
	int ret, status = 0, out[2];
	pid_t pid;

	snprintf(cpu_s, sizeof(cpu_s), "%u", c->cpu);
	snprintf(env_vm, sizeof(env_vm), "HOTVM_VM=%s", h->vm_name);
	snprintf(env_cpu, sizeof(env_cpu), "HOTVM_CPU=%u", c->cpu);
	snprintf(env_state, sizeof(env_state), "HOTVM_STATE=%s", c->state);
	snprintf(env_dir, sizeof(env_dir), "HOTVM_DIRECTION=%s", c->dir);
	hooks_vcpu_env(c, env_pid, env_apic, env_tid, env_qom, envp, &nenv);
	envp[nenv] = NULL;

	if (hooks_cancelled(h)) {
		return hv_err_set(
			err, -ECANCELED,
			"hook %s (cpu %u, %s, %s) not run: the VMM is "
			"shutting down",
			c->path, c->cpu, c->state, c->dir);
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		return hv_err_set(err, -ENOMEM, "hook %s: out of memory",
				  c->path);
	}
	ret = hooks_pipe(out);
	if (ret) {
		hv_err_set(err, ret, "hook %s: cannot make its output pipe: %s",
			   c->path, strerror(-ret));
		free(o);
		return ret;
	}
	ret = hooks_spawn(&pid, c->path, argv, envp, out[1]);
	close(out[1]); /* the hook holds the only write end: EOF is its end */
	if (ret) {
		hv_err_set(err, ret, "hook %s could not be started: %s",
			   c->path, strerror(-ret));
		close(out[0]);
		free(o);
		return ret;
	}
	ret = hooks_wait(pid, out[0], h->cancel_fd, h->timeout_ms, o, &status);
	close(out[0]);
	hooks_log_output(c, o);
	free(o);
	return hooks_verdict(h, c, ret, status, err);
}

int hooks_run(const struct hooks *h, unsigned int cpu, const char *state,
	      bool up, struct hv_err *err)
{
	return hooks_run_vcpu(h, cpu, state, up, NULL, err);
}

int hooks_run_vcpu(const struct hooks *h, unsigned int cpu, const char *state,
		   bool up, const struct hooks_vcpu *f, struct hv_err *err)
{
	for (unsigned int i = 0; i < h->nr; i++) {
		const struct hooks_call c = {
			.path = h->paths[i],
			.cpu = cpu,
			.state = state,
			.dir = up ? "up" : "down",
			.vcpu = f,
		};
		int ret = hooks_run_one(h, &c, err);

		if (ret)
			return ret;
	}
	return 0;
}
