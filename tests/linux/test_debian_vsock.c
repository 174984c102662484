// SPDX-License-Identifier: GPL-2.0-only
/*
 * hotvm's virtio-vsock (docs/design.md §6.10) with the Debian 12 image
 * (tools/debian-image.sh) in the nested lab, as test_debian.c boots it:
 * --vsock cid=7 and --agent-channel vsock, with hotvm.agent=vsock on the
 * command line, which starts the image's unit hotvm-agent-vsock, a
 * second qemu-ga (`qemu-ga -m vsock-listen -p 4294967295:1024`, bound to
 * any CID, so that a CID other than 3 works; Debian's own unit listens on
 * virtio-serial only and stays off, there being no such port).
 *
 * test_vsock: a vCPU hot-added and onlined by that agent over vsock
 * (onlined-by agent; /sys/devices/system/cpu/online 0-1, read through
 * it); the guest's connection to host port 5000 (socat started through
 * the agent's guest-exec) reaching the unix socket PATH_5000, 108894
 * bytes checked on the host and echoed back, checked by the guest; a host
 * client's `CONNECT 6000` reaching the guest's socat listener, and
 * 100000 bytes through it and back, checked.  More than the 64 KiB of
 * credit each way, so credit updates are needed.
 *
 * bench_agent_channels (run by name, not by default): the agent's share
 * of a hot-add over COM2, virtio-console and vsock, one boot each, with
 * --agent-trace off (the channel alone): a hot-add with "wait":
 * "acknowledged" (no agent) and one with "started" (onlined by the
 * agent), the latter's agent calls (query-hotplug-stats' call-us, with
 * and without guest-set-vcpus, inside which Linux brings the CPU up, as
 * tools/bench debian takes them), and the agent's round trip
 * (guest-get-vcpus through --agent-socket, median of 10).
 *
 * Usage: test-debian-vsock LINUX IMAGE [CASE...], as test-debian.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check.h"
#include "lab_linux.h"
#include "vmproc.h"

#define IO_MS	  60000
#define VPATH	  "/tmp/hotvm-debian-vsock.sock"
#define ASOCK	  "/tmp/hotvm-debian-vsock-agent.sock"
#define SEQ_N	  20000	 /* `seq 1 20000`: 108894 bytes */
#define HOST_SEND 100000 /* bytes a host client sends and gets back */

/* cpu-hotplug @cpu with @wait: its time, and who onlined it in @by. */
static long hotadd(struct vmproc *v, int cpu, const char *wait, char *by,
		   size_t size)
{
	struct json_object *r = NULL;
	char err[256];
	long t0 = lab_now_ms();
	int ret = vmproc_qmp(v, "cpu-hotplug", &r, err, sizeof(err),
			     "{\"cpu\": %d, \"state\": \"online\", "
			     "\"wait\": \"%s\"}",
			     cpu, wait);
	long t = lab_now_ms() - t0;

	if (ret)
		printf("# cpu-hotplug %d: %s\n", cpu, err);
	CHECK_EQ(ret, 0);
	snprintf(by, size, "%s",
		 r && vmproc_str(r, "onlined-by", NULL)
			 ? vmproc_str(r, "onlined-by", NULL)
			 : "-");
	json_object_put(r);
	return ret ? -1 : t;
}

static int listen_unix(const char *p)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(p) >= sizeof(a.sun_path))
		return -1;
	memcpy(a.sun_path, p, strlen(p) + 1);
	unlink(p);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 1)) {
		perror(p);
		return -1;
	}
	return fd;
}

/* Reads what is there within IO_MS: bytes, 0 at EOF, -1 for nothing. */
static ssize_t read_wait(int fd, void *buf, size_t n)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, IO_MS) <= 0)
		return -1;
	return read(fd, buf, n);
}

/* `seq 1 SEQ_N`'s bytes into @buf; their count. */
static size_t seq_text(char *buf, size_t size)
{
	size_t n = 0;

	for (int i = 1; i <= SEQ_N && n + 16 < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%d\n", i);
	return n;
}

/*
 * The guest connects to host port 5000 and sends `seq 1 SEQ_N`; the host
 * (PATH_5000) checks the bytes and echoes them; the guest compares what
 * came back with its own.
 */
static void guest_to_host(void)
{
	static char want[200000], got[200000];
	char p5000[128], out[256];
	size_t wn = seq_text(want, sizeof(want)), gn = 0;
	int l, c = -1;
	long pid;

	snprintf(p5000, sizeof(p5000), "%s_5000", VPATH);
	l = listen_unix(p5000);
	CHECK(l >= 0);
	pid = lab_guest_exec(ASOCK, "/bin/sh",
			     "seq 1 20000 | socat -t 30 - VSOCK-CONNECT:2:5000 "
			     ">/tmp/back; seq 1 20000 | cmp - /tmp/back && "
			     "echo same $(wc -c </tmp/back)",
			     true);
	CHECK(pid >= 0);
	if (l >= 0 && pid >= 0) {
		struct pollfd p = { .fd = l, .events = POLLIN };

		if (poll(&p, 1, IO_MS) == 1)
			c = accept(l, NULL, NULL);
	}
	CHECK(c >= 0);
	while (c >= 0 && gn < sizeof(got)) {
		ssize_t r = read_wait(c, got + gn, sizeof(got) - gn);

		if (r <= 0)
			break;
		/* The echo, as it comes: the guest reads while it sends. */
		CHECK_EQ(write(c, got + gn, (size_t)r), r);
		gn += (size_t)r;
	}
	printf("# guest to host: %zu bytes (want %zu)\n", gn, wn);
	CHECK_EQ(gn, wn);
	CHECK(!memcmp(got, want, wn));
	if (c >= 0)
		close(c);
	CHECK_EQ(pid >= 0 ? lab_guest_wait(ASOCK, pid, out, sizeof(out), IO_MS)
			  : -1,
		 0);
	printf("# the guest: %s", out);
	snprintf(got, sizeof(got), "same %zu\n", wn);
	CHECK_STREQ(out, got);
	if (l >= 0)
		close(l);
	unlink(p5000);
}

/* A host client: CONNECT 6000; its "OK <port>" or -1 if refused. */
static int host_connect(char *ok, size_t size)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t n = 0;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", VPATH);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    write(fd, "CONNECT 6000\n", 13) != 13) {
		close(fd);
		return -1;
	}
	/* The reply line, one byte at a time: the bytes after it are data. */
	while (n + 1 < size && read_wait(fd, ok + n, 1) == 1)
		if (ok[n++] == '\n')
			break;
	ok[n] = 0;
	if (strncmp(ok, "OK ", 3)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A host client through PATH to the guest's echo on port 6000. */
static void host_to_guest(void)
{
	static char send_buf[HOST_SEND], got[HOST_SEND + 1];
	char ok[64];
	size_t sent = 0, gn = 0;
	long pid = lab_guest_exec(ASOCK, "/bin/sh",
				  "socat -t 30 VSOCK-LISTEN:6000 EXEC:cat",
				  true),
	     end;
	int fd = -1;

	CHECK(pid >= 0);
	for (size_t i = 0; i < sizeof(send_buf); i++)
		send_buf[i] = (char)('a' + (i * 7) % 26);
	/* Until the guest's socat listens (the guest's RST closes us). */
	end = lab_now_ms() + IO_MS;
	while (pid >= 0 && fd < 0 && lab_now_ms() < end) {
		fd = host_connect(ok, sizeof(ok));
		if (fd < 0)
			poll(NULL, 0, 200);
	}
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	printf("# host to guest: %s", ok);
	while (sent < sizeof(send_buf) || gn < sent) {
		struct pollfd p = {
			.fd = fd,
			.events =
				(short)(POLLIN |
					(sent < sizeof(send_buf) ? POLLOUT : 0))
		};
		ssize_t r;

		if (poll(&p, 1, IO_MS) <= 0)
			break;
		if (p.revents & POLLOUT) {
			r = write(fd, send_buf + sent, sizeof(send_buf) - sent);
			if (r > 0)
				sent += (size_t)r;
			if (sent == sizeof(send_buf))
				shutdown(fd, SHUT_WR);
		}
		if (p.revents & (POLLIN | POLLHUP)) {
			r = read(fd, got + gn, sizeof(got) - gn);
			if (r <= 0)
				break;
			gn += (size_t)r;
		}
	}
	printf("# host to guest: sent %zu, got back %zu\n", sent, gn);
	CHECK_EQ(sent, sizeof(send_buf));
	CHECK_EQ(gn, sizeof(send_buf));
	CHECK(!memcmp(got, send_buf, sizeof(send_buf)));
	/*
	 * The host's half-close reached the guest (its cat ended), and the
	 * guest's close reached the host: EOF.
	 */
	CHECK_EQ(read_wait(fd, got, 1), 0);
	close(fd);
}

static void test_vsock(void)
{
	const char *more[] = { "--vsock", "cid=7,socket=" VPATH, NULL };
	char by[32], online[64];
	struct vmproc v;
	long t;

	if (lab_debian_boot(&v, "root=/dev/vda console=ttyS0 hotvm.agent=vsock",
			    ASOCK, "vsock", more)) {
		CHECK(!"boot");
		return;
	}
	CHECK(lab_agent_wait(ASOCK, LAB_AGENT_MS));
	t = hotadd(&v, 1, "started", by, sizeof(by));
	printf("# cpu-hotplug 1 over vsock, onlined by %s: %ld ms\n", by, t);
	CHECK_STREQ(by, "agent");
	CHECK(lab_guest_line(ASOCK, "/sys/devices/system/cpu/online", online,
			     sizeof(online)));
	printf("# the guest's /sys/devices/system/cpu/online: %s\n", online);
	CHECK_STREQ(online, "0-1");
	guest_to_host();
	host_to_guest();
	vmproc_stop(&v);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* One channel's boot: the hot-adds and the agent's round trip. */
static void bench_one(const char *channel, const char *cmdline,
		      const char *const *more)
{
	char by1[32], by2[32];
	long ack, started, rt[10], c0, s0, c1, s1;
	struct vmproc v;

	if (lab_debian_boot(&v, cmdline, ASOCK, channel, more)) {
		CHECK(!"boot");
		return;
	}
	CHECK(lab_agent_wait(ASOCK, LAB_AGENT_MS));
	ack = hotadd(&v, 1, "acknowledged", by1, sizeof(by1));
	c0 = lab_agent_stat(&v, "call-us");
	s0 = lab_agent_stat(&v, "set-vcpus-us");
	started = hotadd(&v, 2, "started", by2, sizeof(by2));
	c1 = lab_agent_stat(&v, "call-us");
	s1 = lab_agent_stat(&v, "set-vcpus-us");
	CHECK_STREQ(by2, "agent");
	for (int i = 0; i < 10; i++) {
		long t0 = lab_now_ms();
		struct json_object *r =
			lab_agent(ASOCK, "guest-get-vcpus", NULL);

		CHECK(r != NULL);
		json_object_put(r);
		rt[i] = lab_now_ms() - t0;
	}
	qsort(rt, 10, sizeof(rt[0]), cmp_long);
	/* The agent's share as tools/bench debian takes it: call-us. */
	printf("BENCH-AGENT channel=%s acknowledged_ms=%ld started_ms=%ld "
	       "agent_calls_ms=%ld agent_calls_no_setv_ms=%ld onlined_by=%s "
	       "get_vcpus_median_ms=%ld min=%ld max=%ld\n",
	       channel, ack, started, (c1 - c0) / 1000,
	       ((c1 - c0) - (s1 - s0)) / 1000, by2, (rt[4] + rt[5]) / 2, rt[0],
	       rt[9]);
	vmproc_stop(&v);
}

static void bench_agent_channels(void)
{
	/* The channel alone: Linux's trace off on all three. */
	const char *vs[] = { "--vsock", "cid=3,socket=" VPATH, "--agent-trace",
			     "off", NULL };
	const char *off[] = { "--agent-trace", "off", NULL };

	bench_one("com2", "root=/dev/vda console=ttyS0 hotvm.agent=com2", off);
	bench_one("virtio", "root=/dev/vda console=ttyS0", off);
	bench_one("vsock", "root=/dev/vda console=ttyS0 hotvm.agent=vsock", vs);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_vsock),
		TEST(bench_agent_channels),
	};

	if (lab_debian_init(argc, argv))
		return 1;
	/* By default the test; the benchmark only by name. */
	if (argc > 3)
		return check_run_named(cases, 2, argv + 3, argc - 3);
	return check_run_named(cases, 2, (char *[]){ "test_vsock" }, 1);
}
