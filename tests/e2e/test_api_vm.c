// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control API of a real hotvm against hostile clients: bad JSON,
 * unknown commands and arguments, wrong types, very long lines, 40 clients
 * at once, a client that disconnects mid-request, one that never reads.
 * After each, the VMM must still answer query-status and query-cpuhp; at
 * the end `quit` must give exit status 0 and leave no process behind.
 *
 * Usage: test-api-vm PATH-TO-HOTVM.  Exit 77 (skip) without /dev/kvm or
 * when that hotvm has no --api-socket.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include "check.h"
#include "qmp_client.h"
#include "qmp_test_util.h"

#define T_MS	   60000 /* the software /dev/kvm here is slow */
#define N_CLIENTS  40
#define LONG_BYTES (3u << 20) /* above the server's 1 MiB request limit */

static const char *hotvm;
static struct tdir td;
static pid_t pid = -1;

static bool has_api_socket(void)
{
	char cmd[600], line[256];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' run --help 2>&1", hotvm);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p))
		found |= strstr(line, "--api-socket") != NULL;
	pclose(p);
	return found;
}

static int start_vm(void)
{
	char log[128];
	long long end = t_now_ms() + T_MS;

	snprintf(log, sizeof(log), "%s/console.log", td.dir);
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execl(hotvm, hotvm, "run", "--cpus", "boot=1,max=4",
		      "--api-socket", td.path, "--cmdline", "", (char *)NULL);
		_exit(127);
	}
	while (t_now_ms() < end) {
		struct qmp_client *c;
		struct qmp_client_error e;

		if (!qmp_client_connect(td.path, 1, 1000, &c, &e)) {
			qmp_client_close(c);
			return 0;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			pid = -1;
			return -1;
		}
		usleep(50000);
	}
	return -1;
}

/* The VMM still answers, on a fresh connection. */
static void check_alive(const char *after)
{
	struct qmp_client *c;
	struct qmp_client_error e;
	struct json_object *r = NULL;
	int rc = qmp_client_connect(td.path, 1, T_MS, &c, &e);

	if (rc) {
		printf("# after %s: cannot connect: %s\n", after, e.desc);
		check_failures++;
		return;
	}
	rc = qmp_client_execute(c, "query-status", NULL, &r, &e, T_MS);
	CHECK_EQ(rc, 0);
	CHECK_STREQ(jstr(r, "status"), "running");
	json_object_put(r);
	r = NULL;
	rc = qmp_client_execute(c, "query-cpuhp", NULL, &r, &e, T_MS);
	CHECK_EQ(rc, 0);
	CHECK(json_object_is_type(jget(r, "cpus"), json_type_array) &&
	      json_object_array_length(jget(r, "cpus")) == 4);
	if (rc)
		printf("# after %s: %s: %s\n", after, e.class, e.desc);
	json_object_put(r);
	qmp_client_close(c);
}

static struct json_object *raw_exec(struct raw *r, const char *req)
{
	CHECK_EQ(raw_send(r, req), 0);
	return raw_reply(r, T_MS);
}

static void raw_negotiated(struct raw *r)
{
	struct json_object *o;

	CHECK_EQ(raw_open(r, td.path), 0);
	o = raw_recv(r, T_MS); /* greeting */
	CHECK(jget(o, "QMP"));
	json_object_put(o);
	o = raw_exec(r, "{\"execute\": \"qmp_capabilities\"}\n");
	CHECK(jget(o, "return"));
	json_object_put(o);
}

static void expect_error(struct raw *r, const char *req, const char *class)
{
	struct json_object *o = raw_exec(r, req);

	if (!err_class(o) || strcmp(err_class(o), class))
		printf("# %s -> %s\n", req,
		       o ? json_object_to_json_string(o) : "(nothing)");
	CHECK_STREQ(err_class(o), class);
	json_object_put(o);
}

static void test_bad_input(void)
{
	struct raw r;

	raw_negotiated(&r);
	expect_error(&r, "{\"execute\": oops}\n", "GenericError");
	expect_error(&r, "[1, 2]\n", "GenericError");
	expect_error(&r, "42\n", "GenericError");
	expect_error(&r, "{\"arguments\": {}}\n", "GenericError");
	expect_error(&r, "{\"execute\": \"no-such-command\"}\n",
		     "CommandNotFound");
	expect_error(&r,
		     "{\"execute\": \"query-status\", \"arguments\": "
		     "{\"x\": 1}}\n",
		     "GenericError");
	expect_error(&r,
		     "{\"execute\": \"device_add\", \"arguments\": "
		     "{\"driver\": 5}}\n",
		     "GenericError");
	expect_error(&r,
		     "{\"execute\": \"device_add\", \"arguments\": "
		     "{\"driver\": \"host-x86_64-cpu\", \"socket-id\": "
		     "99}}\n",
		     "GenericError");
	expect_error(&r,
		     "{\"execute\": \"cpu-hotplug\", \"arguments\": "
		     "{\"cpu\": \"one\", \"state\": \"online\"}}\n",
		     "GenericError");
	expect_error(&r,
		     "{\"execute\": \"cpuhp-set-target\", \"arguments\": "
		     "{\"cpu\": 1, \"side\": \"host\", \"target\": {}}}\n",
		     "GenericError");
	expect_error(&r,
		     "{\"execute\": \"cpu-resize\", \"arguments\": "
		     "{\"count\": 9999999999999999999999}}\n",
		     "GenericError");
	expect_error(&r,
		     "{\"execute\": \"device_del\", \"arguments\": "
		     "{\"id\": \"nope\"}}\n",
		     "DeviceNotFound");
	/* The same connection still works after all that. */
	json_object_put(raw_exec(&r, "{\"execute\": \"query-status\"}\n"));
	raw_close(&r);
	check_alive("bad input");
}

static void test_long_line(void)
{
	char *big = malloc(LONG_BYTES + 64);
	struct raw r;
	size_t off = 0;

	raw_negotiated(&r);
	off = sprintf(big, "{\"execute\": \"query-status\", \"x\": \"");
	memset(big + off, 'A', LONG_BYTES);
	strcpy(big + off + LONG_BYTES, "\"}\n");
	/* The server drops us part way: a send error is expected. */
	raw_send(&r, big);
	free(big);
	raw_close(&r);
	check_alive("a very long line");
}

static void test_many_clients(void)
{
	static struct raw r[N_CLIENTS];
	int ok = 1, refused = 0;

	/*
	 * The client of the previous check may not be reaped yet: a first
	 * client's round trip makes sure the server has seen that close (it
	 * was pending before this request), so the count below is exact.
	 */
	raw_negotiated(&r[0]);
	raw_send(&r[0], "{\"execute\": \"query-status\", \"id\": 1}\n");
	json_object_put(raw_reply(&r[0], T_MS));
	for (int i = 1; i < N_CLIENTS; i++)
		CHECK_EQ(raw_open(&r[i], td.path), 0);
	for (int i = 1; i < N_CLIENTS; i++)
		raw_send(&r[i], "{\"execute\": \"qmp_capabilities\"}\n"
				"{\"execute\": \"query-cpuhp\", \"id\": 1}\n");
	for (int i = 1; i < N_CLIENTS; i++) {
		struct json_object *o = raw_recv(&r[i], T_MS);

		if (jget(o, "QMP")) {
			json_object_put(o);
			json_object_put(raw_reply(&r[i], T_MS));
			o = raw_reply(&r[i], T_MS);
			ok += jget(o, "return") != NULL;
		} else {
			refused += err_class(o) != NULL;
		}
		json_object_put(o);
	}
	printf("# %d clients served, %d refused\n", ok, refused);
	CHECK_EQ(ok + refused, N_CLIENTS);
	CHECK_EQ(ok, 32); /* the server's limit */
	for (int i = 0; i < N_CLIENTS; i++)
		raw_close(&r[i]);
	check_alive("40 clients");
}

static void test_disconnect_mid_request(void)
{
	struct qmp_client *c;
	struct qmp_client_error e;
	struct json_object *o = NULL;
	struct raw r;

	raw_negotiated(&r);
	raw_send(&r, "{\"execute\": \"query-cpu");
	raw_close(&r);
	check_alive("a half request");

	/* Gone before the reply to a hot-add: the add still completes. */
	raw_negotiated(&r);
	raw_send(&r, "{\"execute\": \"cpu-hotplug\", \"arguments\": {\"cpu\": "
		     "1, \"state\": \"online\"}}\n");
	raw_close(&r);
	check_alive("a client gone mid hot-add");
	CHECK_EQ(qmp_client_connect(td.path, 1, T_MS, &c, &e), 0);
	/*
	 * Queries do not wait for operations; another operation does, and
	 * onlining an online CPU is a no-op.
	 */
	o = json_tokener_parse("{\"cpu\": 1, \"state\": \"online\"}");
	CHECK_EQ(qmp_client_execute(c, "cpu-hotplug", o, NULL, &e, T_MS), 0);
	json_object_put(o);
	CHECK_EQ(qmp_client_execute(c, "query-cpuhp", NULL, &o, &e, T_MS), 0);
	CHECK_STREQ(jstr(jget(json_object_array_get_idx(jget(o, "cpus"), 1),
			      "host"),
			 "name"),
		    "online");
	json_object_put(o);
	o = json_tokener_parse("{\"cpu\": 1, \"state\": \"offline\"}");
	CHECK_EQ(qmp_client_execute(c, "cpu-hotplug", o, NULL, &e, T_MS), 0);
	json_object_put(o);
	qmp_client_close(c);
}

static void test_never_reads(void)
{
	static const char req[] = "{\"execute\": \"query-cpuhp\"}\n";
	long long end = t_now_ms() + 20000;
	int sent = 0, stalls = 0;
	struct raw r;

	raw_negotiated(&r);
	/* Requests without reading a reply, until the server gives up. */
	while (t_now_ms() < end && stalls < 200) {
		ssize_t n = send(r.fd, req, sizeof(req) - 1,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			stalls++;
			usleep(10000);
			continue;
		}
		if (n < 0)
			break; /* dropped by the server */
		stalls = 0;
		sent++;
	}
	printf("# %d requests sent unread\n", sent);
	check_alive("a client that never reads");
	raw_close(&r);
	check_alive("closing the client that never read");
}

static void test_quit(void)
{
	struct qmp_client *c;
	struct qmp_client_error e;
	struct json_object *o = NULL;
	long long end;
	int status = -1;

	CHECK_EQ(qmp_client_connect(td.path, 1, T_MS, &c, &e), 0);
	CHECK_EQ(qmp_client_execute(c, "quit", NULL, &o, &e, T_MS), 0);
	CHECK(json_object_is_type(o, json_type_object));
	json_object_put(o);
	qmp_client_close(c);
	for (end = t_now_ms() + T_MS; t_now_ms() < end; usleep(20000))
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		CHECK(kill(pid, 0) < 0 && errno == ESRCH);
		pid = -1;
	}
	CHECK(access(td.path, F_OK) < 0);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_bad_input),	 TEST(test_long_line),
		TEST(test_many_clients), TEST(test_disconnect_mid_request),
		TEST(test_never_reads),	 TEST(test_quit),
	};
	char log[128];
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH-TO-HOTVM\n", argv[0]);
		return 2;
	}
	hotvm = argv[1];
	if (access("/dev/kvm", R_OK | W_OK)) {
		printf("1..0 # SKIP no usable /dev/kvm\n");
		return 77;
	}
	if (!has_api_socket()) {
		printf("1..0 # SKIP %s has no --api-socket\n", hotvm);
		return 77;
	}
	signal(SIGPIPE, SIG_IGN);
	tdir_make(&td);
	snprintf(log, sizeof(log), "%s/console.log", td.dir);
	if (start_vm()) {
		printf("Bail out! hotvm did not start its API; see %s\n", log);
		if (pid > 0)
			kill(pid, SIGKILL);
		return 1;
	}
	rc = check_run(cases, sizeof(cases) / sizeof(cases[0]));
	if (pid > 0) { /* quit failed: leave nothing behind */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (!rc)
		unlink(log);
	tdir_remove(&td);
	return rc;
}
