// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent protocol against the real QEMU guest agent, a peer written
 * elsewhere: qemu-ga runs on this machine as it would in a guest
 * (`qemu-ga -m isa-serial -p /dev/pts/N`), on a pty whose other end a
 * bridge thread joins to the emulated UART: what the host sends the guest
 * driver reads and writes to the pty, and what qemu-ga answers the driver
 * writes to the UART.  Then guest-ping, guest-info, guest-get-vcpus, an
 * unknown command, a client of hotvm's agent socket (qga_mux.h) written
 * as libvirt's is (agent_client.py, $HOTVM_AGENT_CLIENT) while hotvm asks
 * the agent too, and qemu-ga killed and started again mid-session.
 *
 * Usage: test-qga-real [QEMU-GA]; exit 77 (skip) when qemu-ga is missing
 * (Debian's qemu-guest-agent; tools/setup.sh installs it).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "check.h"
#include "qga_mux.h"
#include "uart_guest.h"

static const char *qga_path = "/usr/sbin/qemu-ga";
static char dir[] = "/tmp/hotvm-qga-XXXXXX";

static struct {
	struct uart_guest u;
	int master, slave;
	char pts[64];
	bool uart_up;
	pthread_t bridge;
	_Atomic bool stop;
	pid_t pid;
	/* Bytes through the bridge, counted by its thread. */
	_Atomic unsigned long to_pty, from_pty;
} rl = { .master = -1, .slave = -1, .pid = -1 };

/* UART to pty: what the host sent, as the guest's driver reads it. */
static void bridge_out(void)
{
	char buf[512];
	size_t n;
	int c;

	uart_guest_irq_ack();
	do {
		for (n = 0; n < sizeof(buf); n++) {
			c = uart_guest_getc(&rl.u);
			if (c < 0)
				break;
			buf[n] = (char)c;
		}
		/* Nobody reading the pty: the bytes are lost, as on a wire. */
		if (n && write(rl.master, buf, n) > 0)
			atomic_fetch_add(&rl.to_pty, n);
	} while (n == sizeof(buf));
}

/* pty to UART: qemu-ga's answer, written by the driver to the UART. */
static void bridge_in(void)
{
	char buf[4096];
	ssize_t n = read(rl.master, buf, sizeof(buf));

	if (n > 0) {
		uart_guest_write(&rl.u, buf, (size_t)n);
		atomic_fetch_add(&rl.from_pty, (size_t)n);
	}
}

static void *bridge_main(void *arg)
{
	struct pollfd p[2] = {
		{ .fd = uart_guest_irq_fd(), .events = POLLIN },
		{ .fd = rl.master, .events = POLLIN },
	};

	(void)arg;
	uart_guest_rx_irq(&rl.u, true);
	while (!atomic_load(&rl.stop)) {
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[0].revents)
			bridge_out();
		if (p[1].revents & POLLIN)
			bridge_in();
	}
	return NULL;
}

/* The pty, raw, with one slave fd held so it never hangs up. */
static int pty_open(void)
{
	struct termios t;

	rl.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (rl.master < 0 || grantpt(rl.master) || unlockpt(rl.master) ||
	    ptsname_r(rl.master, rl.pts, sizeof(rl.pts)))
		return -errno;
	rl.slave = open(rl.pts, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (rl.slave < 0 || tcgetattr(rl.slave, &t))
		return -errno;
	cfmakeraw(&t);
	return tcsetattr(rl.slave, TCSANOW, &t) ? -errno : 0;
}

static void qga_start(void)
{
	char pid[128], state[128], log[128];
	char *argv[] = { (char *)qga_path,
			 "-m",
			 "isa-serial",
			 "-p",
			 rl.pts,
			 "-f",
			 pid,
			 "-t",
			 state,
			 "-l",
			 log,
			 NULL };

	snprintf(pid, sizeof(pid), "%s/qga.pid", dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(log, sizeof(log), "%s/qga.log", dir);
	mkdir(state, 0700);
	CHECK_EQ(posix_spawn(&rl.pid, qga_path, NULL, NULL, argv, environ), 0);
}

static void qga_kill(void)
{
	if (rl.pid <= 0)
		return;
	kill(rl.pid, SIGKILL);
	waitpid(rl.pid, NULL, 0);
	rl.pid = -1;
}

/*
 * The first call to a freshly started qemu-ga: it may open the port after
 * the handshake was written and lose it, so each try is a whole call with
 * its own deadline, and the number of tries is bounded.
 */
static int call_until_up(const char *cmd, struct json_object **r, int *tries)
{
	struct hv_err err = { 0 };
	int ret = -ETIMEDOUT;

	for (*tries = 1; *tries <= 20; (*tries)++) {
		hv_err_clear(&err);
		ret = qga_call(&rl.u.agent, cmd, NULL, r, 1000, &err);
		if (ret != -ETIMEDOUT)
			break;
	}
	if (ret)
		printf("# %s: %s\n", cmd, hv_err_msg(&err));
	return ret;
}

static void test_ping_info(void)
{
	struct json_object *r = NULL;
	int tries;

	CHECK_EQ(call_until_up("guest-ping", &r, &tries), 0);
	printf("# qemu-ga answered on try %d\n", tries);
	CHECK(json_object_is_type(r, json_type_object));
	json_object_put(r);
	CHECK_EQ(qga_call(&rl.u.agent, "guest-info", NULL, &r, 2000, NULL), 0);
	CHECK(json_object_is_type(json_object_object_get(r, "version"),
				  json_type_string));
	printf("# qemu-ga %s\n",
	       json_object_get_string(json_object_object_get(r, "version")));
	json_object_put(r);
}

/* Linux's view of this machine's CPUs, as the guest would report it. */
static void test_get_vcpus(void)
{
	struct json_object *r = NULL, *c;
	long online = 0, n;

	CHECK_EQ(qga_call(&rl.u.agent, "guest-get-vcpus", NULL, &r, 2000, NULL),
		 0);
	CHECK(json_object_is_type(r, json_type_array));
	n = (long)json_object_array_length(r);
	CHECK(n >= 1);
	for (long i = 0; i < n; i++) {
		c = json_object_array_get_idx(r, (size_t)i);
		CHECK(json_object_is_type(
			json_object_object_get(c, "logical-id"),
			json_type_int));
		online += json_object_get_boolean(
			json_object_object_get(c, "online"));
	}
	CHECK_EQ(online, sysconf(_SC_NPROCESSORS_ONLN));
	printf("# guest-get-vcpus: %ld CPUs, %ld online\n", n, online);
	json_object_put(r);
}

static void test_unknown_command(void)
{
	struct hv_err err = { 0 };

	CHECK_EQ(
		qga_call(&rl.u.agent, "guest-nonesuch", NULL, NULL, 2000, &err),
		-EREMOTEIO);
	printf("# %s\n", err.msg);
	CHECK(strstr(err.msg, "CommandNotFound"));
	/* The agent's error did not upset the next call. */
	CHECK_EQ(qga_call(&rl.u.agent, "guest-ping", NULL, NULL, 2000, NULL),
		 0);
}

/*
 * A client of the agent's socket, written as libvirt's (sync with an id
 * before each command), runs while hotvm asks the agent itself: both get
 * the real agent's answers, neither upsets the other.
 */
static void test_socket_client(void)
{
	const char *client = getenv("HOTVM_AGENT_CLIENT");
	struct qga_mux_stats st;
	struct qga_mux *m = NULL;
	int own = 0, own_ok = 0, status = -1;
	char sock[128];
	pid_t pid;

	if (!client) {
		printf("# HOTVM_AGENT_CLIENT not set (meson test sets it)\n");
		CHECK(client != NULL);
		return;
	}
	snprintf(sock, sizeof(sock), "%s/agent.sock", dir);
	CHECK_EQ(qga_mux_create(&rl.u.agent, sock, NULL, &m), 0);
	CHECK_EQ(qga_mux_start(m), 0);
	CHECK_EQ(posix_spawnp(
			 &pid, "python3", NULL, NULL,
			 (char *[]){ "python3", (char *)client, sock, NULL },
			 environ),
		 0);
	/* hotvm's own calls, one after another, until the client ends. */
	while (waitpid(pid, &status, WNOHANG) == 0) {
		own++;
		own_ok += !qga_call(&rl.u.agent, "guest-get-vcpus", NULL, NULL,
				    2000, NULL);
	}
	printf("# hotvm's own calls meanwhile: %d, %d answered\n", own, own_ok);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(own >= 1);
	CHECK_EQ(own_ok, own);
	qga_mux_get_stats(m, &st);
	/* Four commands, each after a sync, and a delimited sync. */
	CHECK_EQ(st.requests, 9);
	CHECK_EQ(st.bad, 0);
	CHECK_EQ(st.failed, 1); /* guest-nonesuch, the agent's own error */
	qga_mux_stop(m);
}

/* Killed: calls time out, the host is not stuck; restarted: it answers. */
static void test_kill_restart(void)
{
	struct hv_err err = { 0 };
	struct qga_stats st;
	int tries;

	qga_kill();
	CHECK_EQ(qga_call(&rl.u.agent, "guest-ping", NULL, NULL, 300, &err),
		 -ETIMEDOUT);
	CHECK_EQ(qga_call(&rl.u.agent, "guest-ping", NULL, NULL, 300, NULL),
		 -ETIMEDOUT);
	qga_start();
	CHECK_EQ(call_until_up("guest-ping", NULL, &tries), 0);
	printf("# restarted qemu-ga answered on try %d\n", tries);
	test_get_vcpus();
	qga_get_stats(&rl.u.agent, &st);
	printf("# calls %lu failed %lu timeouts %lu bad %lu skipped %lu "
	       "stray %lu; bridge %lu bytes out, %lu in\n",
	       st.calls, st.failed, st.timeouts, st.bad_replies, st.skipped,
	       st.stray_bytes, atomic_load(&rl.to_pty),
	       atomic_load(&rl.from_pty));
	CHECK_EQ(st.bad_replies, 0);
	CHECK_EQ(st.skipped, 0);
}

static void cleanup(void)
{
	char cmd[128];

	qga_kill();
	if (rl.bridge) {
		atomic_store(&rl.stop, true);
		uart_guest_kick();
		pthread_join(rl.bridge, NULL);
	}
	if (rl.uart_up)
		uart_guest_destroy(&rl.u);
	if (rl.slave >= 0)
		close(rl.slave);
	if (rl.master >= 0)
		close(rl.master);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_ping_info),	    TEST(test_get_vcpus),
		TEST(test_unknown_command), TEST(test_socket_client),
		TEST(test_kill_restart),
	};
	int ret;

	if (argc > 1)
		qga_path = argv[1];
	if (access(qga_path, X_OK)) {
		printf("1..0 # SKIP no %s (apt-get install qemu-guest-agent)\n",
		       qga_path);
		return 77;
	}
	rl.uart_up = !uart_guest_init(&rl.u);
	if (!rl.uart_up || !mkdtemp(dir) || pty_open()) {
		printf("1..0 # SKIP cannot set up a pty: %s\n",
		       strerror(errno));
		cleanup();
		return 77;
	}
	if (pthread_create(&rl.bridge, NULL, bridge_main, NULL)) {
		rl.bridge = 0;
		cleanup();
		return 1;
	}
	qga_start();
	ret = check_run(cases, sizeof(cases) / sizeof(cases[0]));
	cleanup();
	return ret;
}
