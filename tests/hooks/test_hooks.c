// SPDX-License-Identifier: GPL-2.0-only
/* Hooks: arguments and environment, veto, signal, timeout, bad paths. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "hooks.h"

static char dir[] = "/tmp/hotvm-hooks-XXXXXX";

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
	CHECK_EQ(hooks_add(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(hooks_run(&h, 3, "vcpu:create", false, err, sizeof(err)), 0);
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
	CHECK_EQ(hooks_add(&h, ok, err, sizeof(err)), 0);
	CHECK_EQ(hooks_add(&h, veto, err, sizeof(err)), 0);
	CHECK_EQ(hooks_run(&h, 1, "online", true, err, sizeof(err)), -EPERM);
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
	CHECK_EQ(hooks_add(&h, p, err, sizeof(err)), 0);
	CHECK_EQ(hooks_run(&h, 1, "online", true, err, sizeof(err)), -EPERM);
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
	CHECK_EQ(hooks_add(&h, p, err, sizeof(err)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(hooks_run(&h, 2, "host:prepare", true, err, sizeof(err)),
		 -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Killed, not waited out: well under the hook's 30 s. */
	CHECK(t1.tv_sec - t0.tv_sec < 10);
	CHECK(strstr(err, "did not finish within 200 ms") != NULL);
	CHECK_EQ(count_children(), 0);
	free((void *)p);
}

static void test_bad_paths_are_refused(void)
{
	struct hooks h;
	char err[512] = "";
	const char *noexec;

	hooks_init(&h, "vm0", 0);
	CHECK_EQ(h.timeout_ms, HOOKS_DEFAULT_TIMEOUT);
	CHECK_EQ(hooks_add(&h, "/nonexistent/hook", err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "/nonexistent/hook") != NULL);
	CHECK(hooks_add(&h, dir, err, sizeof(err)) < 0);
	noexec = strdup(script("noexec", "exit 0"));
	chmod(noexec, 0644);
	/* root may execute nothing without an x bit either */
	CHECK(hooks_add(&h, noexec, err, sizeof(err)) < 0);
	CHECK_EQ(h.nr, 0);
	CHECK_EQ(hooks_run(&h, 0, "online", true, err, sizeof(err)), 0);
	free((void *)noexec);
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
	   TEST(test_timeout_kills_and_reaps), TEST(test_bad_paths_are_refused))
