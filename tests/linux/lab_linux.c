// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Linux-lab tests' shared helpers: the guest's files, its boot on
 * hotvm and its console; the Debian image's boot and the guest's agent
 * (lab_linux.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check.h"
#include "lab_linux.h"
#include "mux_client.h"

#define LAB_BOOT_MAX_ARGS 32

const char *lab_linux_dir = "/lab/linux";
const char *lab_debian_dir = "/lab/debian";
const char *lab_debian_disk = "/dev/vda";

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

int lab_debian_init(int argc, char **argv)
{
	struct stat st;

	if (argc > 1)
		lab_linux_dir = argv[1];
	if (argc > 2)
		lab_debian_dir = argv[2];
	if (getenv("DISK"))
		lab_debian_disk = getenv("DISK");
	if (access(lab_linux_path("vmlinux"), R_OK) ||
	    access(lab_path_in(lab_debian_dir, "initrd.img"), R_OK) ||
	    stat(lab_debian_disk, &st) || !S_ISBLK(st.st_mode)) {
		printf("Bail out! no vmlinux in %s, initrd.img in %s or block "
		       "device %s: run this under tests/lab/debian.sh\n",
		       lab_linux_dir, lab_debian_dir, lab_debian_disk);
		return 1;
	}
	return 0;
}

int lab_debian_boot(struct vmproc *v, const char *cmdline, const char *sock,
		    const char *channel, const char *const *more)
{
	static char dspec[300];
	const char *extra[LAB_BOOT_MAX_ARGS] = {
		"--kernel",	   lab_linux_path("vmlinux"),
		"--initrd",	   lab_path_in(lab_debian_dir, "initrd.img"),
		"--memory",	   "512M",
		"--disk",	   dspec,
		"--agent-socket",  sock,
		"--agent-channel", channel,
	};
	size_t n = 12;
	long t0 = lab_now_ms();
	int ret;

	snprintf(dspec, sizeof(dspec), "path=%s,id=debian", lab_debian_disk);
	for (; more && *more; more++) {
		if (n + 1 >= LAB_BOOT_MAX_ARGS)
			return -E2BIG;
		extra[n++] = *more;
	}
	extra[n] = NULL;
	ret = vmproc_start_ms(v, "boot=1,max=3",
			      cmdline ? cmdline : "root=/dev/vda console=ttyS0",
			      extra, 240000);
	if (ret) {
		printf("# agent on %s: did not reach multi-user.target: %s\n",
		       channel, strerror(-ret));
		vmproc_console_tail(v, 60);
		vmproc_stop(v);
		return ret;
	}
	printf("# agent on %s: multi-user.target %ld ms after hotvm started\n",
	       channel, lab_now_ms() - t0);
	return 0;
}

/* lab_agent(), an error reply said when SAY. */
static struct json_object *agent_call(const char *sock, const char *cmd,
				      struct json_object *args, bool say)
{
	struct json_object *req = json_object_new_object(), *r, *ret = NULL;
	char line[8192];
	int fd = mux_connect(sock);

	json_object_object_add(req, "execute", json_object_new_string(cmd));
	if (args)
		json_object_object_add(req, "arguments", args);
	snprintf(line, sizeof(line), "%s\n",
		 json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
	json_object_put(req);
	if (fd < 0)
		return NULL;
	r = mux_ask(fd, line, LAB_AGENT_MS, NULL);
	close(fd);
	if (r && json_object_object_get_ex(r, "return", &ret))
		json_object_get(ret);
	else if (r && say)
		printf("# agent: %s -> %s\n", cmd,
		       json_object_to_json_string_ext(r,
						      JSON_C_TO_STRING_PLAIN));
	json_object_put(r);
	return ret;
}

struct json_object *lab_agent(const char *sock, const char *cmd,
			      struct json_object *args)
{
	return agent_call(sock, cmd, args, true);
}

bool lab_agent_wait(const char *sock, int ms)
{
	long end = lab_now_ms() + ms;

	while (lab_now_ms() < end) {
		struct json_object *r =
			agent_call(sock, "guest-ping", NULL, false);

		if (r) {
			json_object_put(r);
			return true;
		}
		poll(NULL, 0, 500); /* qemu-ga is not up yet: no event says */
	}
	return false;
}

long lab_guest_exec(const char *sock, const char *shell, const char *cmd,
		    bool capture)
{
	struct json_object *a = json_object_new_object(), *argv, *r, *pid;
	long p = -1;

	argv = json_object_new_array();
	json_object_array_add(argv, json_object_new_string("-c"));
	json_object_array_add(argv, json_object_new_string(cmd));
	json_object_object_add(a, "path", json_object_new_string(shell));
	json_object_object_add(a, "arg", argv);
	if (capture)
		json_object_object_add(a, "capture-output",
				       json_object_new_boolean(1));
	r = lab_agent(sock, "guest-exec", a);
	if (r && json_object_object_get_ex(r, "pid", &pid))
		p = json_object_get_int64(pid);
	else
		printf("# guest-exec of '%s' failed\n", cmd);
	json_object_put(r);
	return p;
}

/* guest-exec-status's @st of an exited process: its exit code. */
static int exec_ended(struct json_object *st, char *out, size_t size)
{
	struct json_object *x;
	char err[512];
	int code = -1;

	if (json_object_object_get_ex(st, "exitcode", &x))
		code = json_object_get_int(x);
	if (out && json_object_object_get_ex(st, "out-data", &x))
		lab_unbase64(json_object_get_string(x), out, size);
	if (json_object_object_get_ex(st, "err-data", &x) &&
	    lab_unbase64(json_object_get_string(x), err, sizeof(err)))
		printf("# guest stderr: %s\n", err);
	return code;
}

int lab_guest_wait(const char *sock, long pid, char *out, size_t size, int ms)
{
	long end = lab_now_ms() + ms;

	if (out && size)
		out[0] = 0;
	while (lab_now_ms() < end) {
		struct json_object *a = json_object_new_object(), *r, *x;

		json_object_object_add(a, "pid", json_object_new_int64(pid));
		r = lab_agent(sock, "guest-exec-status", a);
		if (r && json_object_object_get_ex(r, "exited", &x) &&
		    json_object_get_boolean(x)) {
			int code = exec_ended(r, out, size);

			json_object_put(r);
			return code;
		}
		json_object_put(r);
		poll(NULL, 0, 200);
	}
	return -1;
}

int lab_guest_sh(const char *sock, const char *cmd, char *out, size_t size)
{
	long pid = lab_guest_exec(sock, "/bin/sh", cmd, true);
	int code = pid < 0 ? -1
			   : lab_guest_wait(sock, pid, out, size, LAB_AGENT_MS);

	if (code)
		printf("# guest: '%s' exit %d%s%s\n", cmd, code,
		       out && *out ? ", said: " : "", out ? out : "");
	return code;
}

bool lab_guest_line(const char *sock, const char *file, char *out, size_t size)
{
	struct json_object *a = json_object_new_object(), *r, *b64;
	long handle = -1;
	bool ok = false;

	out[0] = 0;
	json_object_object_add(a, "path", json_object_new_string(file));
	json_object_object_add(a, "mode", json_object_new_string("r"));
	r = lab_agent(sock, "guest-file-open", a);
	if (r)
		handle = json_object_get_int64(r);
	json_object_put(r);
	if (handle < 0)
		return false;
	a = json_object_new_object();
	json_object_object_add(a, "handle", json_object_new_int64(handle));
	json_object_object_add(a, "count", json_object_new_int(256));
	r = lab_agent(sock, "guest-file-read", a);
	if (r && json_object_object_get_ex(r, "buf-b64", &b64)) {
		lab_unbase64(json_object_get_string(b64), out, size);
		out[strcspn(out, "\n")] = 0;
		ok = true;
	}
	json_object_put(r);
	a = json_object_new_object();
	json_object_object_add(a, "handle", json_object_new_int64(handle));
	json_object_put(lab_agent(sock, "guest-file-close", a));
	return ok;
}

long lab_agent_stat(struct vmproc *v, const char *key)
{
	struct json_object *r = NULL, *a, *x;
	long n = -1;

	if (vmproc_qmp(v, "query-hotplug-stats", &r, NULL, 0, NULL))
		return -1;
	if (json_object_object_get_ex(r, "agent", &a) &&
	    json_object_object_get_ex(a, key, &x))
		n = json_object_is_type(x, json_type_boolean)
			    ? json_object_get_boolean(x)
			    : (long)json_object_get_int64(x);
	json_object_put(r);
	return n;
}
