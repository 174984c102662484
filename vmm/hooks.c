// SPDX-License-Identifier: GPL-2.0-only
/*
 * Running orchestration hooks.  Each hook is a child process waited for
 * through a pidfd, so the timeout needs neither signals nor polling, and a
 * hook that hangs is killed and reaped: nothing is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"

extern char **environ;

void hooks_init(struct hooks *h, const char *vm_name, int timeout_ms)
{
	*h = (struct hooks){
		.timeout_ms =
			timeout_ms > 0 ? timeout_ms : HOOKS_DEFAULT_TIMEOUT,
		.vm_name = vm_name,
	};
}

int hooks_add(struct hooks *h, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (h->nr == HOOKS_MAX) {
		snprintf(err, errlen, "--hook %s: at most %d hooks", path,
			 HOOKS_MAX);
		return -E2BIG;
	}
	if (stat(path, &st) || access(path, X_OK)) {
		int e = errno;

		snprintf(err, errlen,
			 "--hook %s: %s; give the path of an executable file",
			 path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen,
			 "--hook %s: not a regular file; give the path of an "
			 "executable file",
			 path);
		return -EINVAL;
	}
	h->paths[h->nr++] = path;
	return 0;
}

static int hooks_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static long hooks_elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Waits for @pid up to @timeout_ms; kills it on timeout.  Reaps it. */
static int hooks_wait(pid_t pid, int timeout_ms, int *status)
{
	int pidfd = hooks_pidfd_open(pid);
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	struct timespec t0;
	int ret = 0, r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pidfd < 0) {
		/* Without a pidfd there is no bounded wait: do not hang. */
		ret = -errno;
		kill(pid, SIGKILL);
	} else {
		do {
			long left = timeout_ms - hooks_elapsed_ms(&t0);

			r = poll(&p, 1, left > 0 ? (int)left : 0);
		} while (r < 0 && errno == EINTR);
		if (r <= 0) {
			ret = r == 0 ? -ETIMEDOUT : -errno;
			kill(pid, SIGKILL);
		}
		close(pidfd);
	}
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return ret ? ret : -errno;
	return ret;
}

static int hooks_run_one(const struct hooks *h, const char *path,
			 unsigned int cpu, const char *state, bool up,
			 char *err, size_t errlen)
{
	char cpu_s[16], env_vm[256], env_cpu[32], env_state[128], env_dir[32];
	const char *dir = up ? "up" : "down";
	char *argv[] = { (char *)path,	(char *)h->vm_name, cpu_s,
			 (char *)state, (char *)dir,	    NULL };
	char *extra[] = { env_vm, env_cpu, env_state, env_dir };
	size_t n = 0;
	char **envp;
	pid_t pid;
	int ret, status;

	snprintf(cpu_s, sizeof(cpu_s), "%u", cpu);
	snprintf(env_vm, sizeof(env_vm), "HOTVM_VM=%s", h->vm_name);
	snprintf(env_cpu, sizeof(env_cpu), "HOTVM_CPU=%u", cpu);
	snprintf(env_state, sizeof(env_state), "HOTVM_STATE=%s", state);
	snprintf(env_dir, sizeof(env_dir), "HOTVM_DIRECTION=%s", dir);

	while (environ[n])
		n++;
	envp = calloc(n + 5, sizeof(*envp));
	if (!envp)
		return -ENOMEM;
	memcpy(envp, environ, n * sizeof(*envp));
	memcpy(envp + n, extra, sizeof(extra));

	/* stdin from /dev/null and stdout to stderr: the guest console owns
	 * the VMM's stdout. */
	posix_spawn_file_actions_t fa;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
					 O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
	ret = -posix_spawn(&pid, path, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	if (ret) {
		snprintf(err, errlen, "hook %s could not be started: %s", path,
			 strerror(-ret));
		return ret;
	}
	ret = hooks_wait(pid, h->timeout_ms, &status);
	if (ret == -ETIMEDOUT) {
		snprintf(err, errlen,
			 "hook %s (cpu %u, %s, %s) did not finish within %d "
			 "ms: killed",
			 path, cpu, state, dir, h->timeout_ms);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "hook %s: wait failed: %s", path,
			 strerror(-ret));
		return ret;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		snprintf(err, errlen, "hook %s (cpu %u, %s, %s) exited with %d",
			 path, cpu, state, dir, WEXITSTATUS(status));
	else
		snprintf(err, errlen, "hook %s (cpu %u, %s, %s) killed by %s",
			 path, cpu, state, dir, strsignal(WTERMSIG(status)));
	return -EPERM;
}

int hooks_run(const struct hooks *h, unsigned int cpu, const char *state,
	      bool up, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < h->nr; i++) {
		int ret = hooks_run_one(h, h->paths[i], cpu, state, up, err,
					errlen);

		if (ret)
			return ret;
	}
	return 0;
}
