// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Linux-lab tests' shared helpers: the guest's files, its boot on
 * hotvm and its console (lab_linux.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "lab_linux.h"

#define LAB_BOOT_MAX_ARGS 32

const char *lab_linux_dir = "/lab/linux";

const char *lab_path_in(const char *dir, const char *name)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

const char *lab_linux_path(const char *name)
{
	return lab_path_in(lab_linux_dir, name);
}

int lab_linux_init(const char *dir)
{
	if (dir)
		lab_linux_dir = dir;
	/* A Linux boot in the lab: 10-60 s, three times that when busy. */
	setenv("VMPROC_READY_MS", "180000", 0);
	if (access(lab_linux_path("vmlinux"), R_OK) ||
	    access(lab_linux_path("initrd.gz"), R_OK)) {
		printf("Bail out! no Linux guest (vmlinux, initrd.gz) in %s: "
		       "run this under tools/lab/lab.sh --linux-guest\n",
		       lab_linux_dir);
		return 1;
	}
	return 0;
}

long lab_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000;
}

size_t lab_unbase64(const char *in, char *out, size_t size)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned int acc = 0, bits = 0;
	size_t n = 0;

	for (; *in && *in != '=' && n + 1 < size; in++) {
		const char *p = strchr(abc, *in);

		if (!p)
			continue; /* a line break or blank: not data */
		acc = (acc << 6 | (unsigned int)(p - abc)) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (char)(acc >> bits);
		}
	}
	if (size)
		out[n] = 0;
	return n;
}

void lab_console_tail(struct vmproc *v)
{
	vmproc_console_tail(v, 40);
}

bool lab_line(struct vmproc *v, const char *prefix, int timeout_ms)
{
	char got[512];
	int ret = vmproc_wait_line(v, prefix, timeout_ms, got, sizeof(got));

	if (ret) {
		printf("# no console line '%s'\n", prefix);
		lab_console_tail(v);
	} else {
		printf("# console: %s\n", got);
	}
	CHECK_EQ(ret, 0);
	return !ret;
}

int lab_linux_boot(struct vmproc *v, const char *cpus, const char *cmdline,
		   const char *const *more)
{
	const char *extra[LAB_BOOT_MAX_ARGS] = {
		"--kernel",	     lab_linux_path("vmlinux"),
		"--initrd",	     lab_linux_path("initrd.gz"),
		"--memory",	     "512M",
		"--hotplug-timeout", "20000",
	};
	size_t n = 8;
	int ret;

	for (; more && *more; more++) {
		if (n + 1 >= LAB_BOOT_MAX_ARGS) {
			printf("# too many options for hotvm\n");
			CHECK(!"boot");
			return -E2BIG;
		}
		extra[n++] = *more;
	}
	extra[n] = NULL;
	ret = vmproc_start(v, cpus, cmdline, extra);
	if (ret) {
		printf("# did not boot: %s\n", strerror(-ret));
		CHECK(!"boot");
		lab_console_tail(v);
		vmproc_stop(v);
	}
	return ret;
}
