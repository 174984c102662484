// SPDX-License-Identifier: GPL-2.0-only
/*
 * linetime: runs a command, passes its output through, and reports how long
 * after the start the first line beginning with PREFIX appeared and when the
 * command exited.  The benchmarks use it, in place of a shell clock, so that
 * they also run under busybox in the nested lab.
 *
 *   linetime PREFIX COMMAND [ARG...]
 *   -> stderr: "linetime: line_ms=12.3 exit_ms=45.6 status=1"
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double linetime_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec t0;
	double line_ms = -1;
	char buf[4096];
	int fds[2], status;
	size_t plen;
	FILE *in;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: linetime PREFIX COMMAND [ARG...]\n");
		return 2;
	}
	plen = strlen(argv[1]);
	if (pipe(fds)) {
		perror("linetime: pipe");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("linetime: fork");
		return 2;
	}
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "linetime: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	in = fdopen(fds[0], "r");
	if (!in) {
		perror("linetime: fdopen");
		return 2;
	}
	while (fgets(buf, sizeof(buf), in)) {
		if (line_ms < 0 && !strncmp(buf, argv[1], plen))
			line_ms = linetime_ms(&t0);
		fputs(buf, stdout);
	}
	fclose(in);
	if (waitpid(pid, &status, 0) < 0) {
		perror("linetime: waitpid");
		return 2;
	}
	fprintf(stderr, "linetime: line_ms=%.1f exit_ms=%.1f status=%d\n",
		line_ms, linetime_ms(&t0),
		WIFEXITED(status) ? WEXITSTATUS(status)
				  : 128 + WTERMSIG(status));
	return 0;
}
