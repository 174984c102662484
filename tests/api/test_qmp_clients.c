// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP server's clients: many at once, one that disconnects mid-request,
 * one that never reads, a slow reader, the peer's credentials, concurrent
 * clients, a stop without leaks, and the socket's path.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/time.h>

#include "check.h"
#include "qmp_server_fixture.h"

void test_many_clients(void)
{
	struct qmp_server *s = start(0, 0);
	struct raw r[40], extra;
	struct json_object *o;

	for (int i = 0; i < 40; i++) {
		CHECK_EQ(raw_open(&r[i], td.path), 0);
		o = raw_recv(&r[i], T_MS);
		if (i < QMP_DEFAULT_MAX_CLIENTS) {
			CHECK(jget(o, "QMP"));
		} else {
			CHECK_STREQ(err_class(o), "GenericError");
			json_object_put(o);
			o = raw_recv(&r[i], T_MS);
			CHECK(!o && r[i].eof);
		}
		json_object_put(o);
	}
	CHECK_EQ(qmp_server_clients(s), QMP_DEFAULT_MAX_CLIENTS);
	for (int i = 32; i < 40; i++)
		raw_close(&r[i]);
	/* Every admitted client is served. */
	for (int i = 0; i < 32; i++) {
		negotiate(&r[i]);
		o = req(&r[i], "{\"execute\": \"echo\", \"id\": \"x\"}");
		CHECK_STREQ(jstr(o, "id"), "x");
		json_object_put(o);
	}
	/* A freed slot is reusable. */
	raw_close(&r[0]);
	wait_clients(s, 31);
	open_client(&extra);
	negotiate(&extra);
	raw_close(&extra);
	for (int i = 1; i < 32; i++)
		raw_close(&r[i]);
	wait_clients(s, 0);
	stop(s);
}

void test_disconnect_mid_request(void)
{
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw a, b;

	open_client(&a);
	open_client(&b);
	negotiate(&a);
	raw_send(&a, "{\"execute\": \"echo\", \"argu");
	raw_close(&a);
	/* And one that leaves right after a request, before the reply. */
	open_client(&a);
	negotiate(&a);
	raw_send(&a, "{\"execute\": \"echo\"}");
	raw_close(&a);
	wait_clients(s, 1);
	/* A scripted client (socat, nc -U) half-closes: replies still come. */
	open_client(&a);
	raw_send(&a, "{\"execute\": \"qmp_capabilities\"}\n");
	for (int i = 0; i < 200; i++)
		raw_send(&a, "{\"execute\": \"echo\", \"id\": 1}\n");
	shutdown(a.fd, SHUT_WR);
	{
		int replies = 0;

		while ((o = raw_recv(&a, T_MS))) {
			replies += !!jget(o, "return");
			json_object_put(o);
		}
		CHECK_EQ(replies, 201);
		CHECK(a.eof);
	}
	raw_close(&a);
	wait_clients(s, 1);
	negotiate(&b);
	o = req(&b, "{\"execute\": \"echo\", \"id\": 7}");
	CHECK_EQ(json_object_get_int(jget(o, "id")), 7);
	json_object_put(o);
	raw_close(&b);
	stop(s);
}

void test_never_reads(void)
{
	struct qmp_server *s = start(0, 64 << 10);
	char *line = malloc(16384);
	struct json_object *o;
	struct raw slow, good;
	int sent = 0;
	long long end;

	open_client(&slow);
	open_client(&good);
	negotiate(&slow);
	negotiate(&good);
	memset(line, 'z', 16000);
	memcpy(line, "{\"execute\": \"echo\", \"arguments\": {\"s\": \"", 40);
	strcpy(line + 16000, "\"}}\n");
	/* Requests, never a read: ~16 KB of reply each. */
	end = t_now_ms() + T_MS;
	while (qmp_server_clients(s) == 2 && t_now_ms() < end) {
		ssize_t n = send(slow.fd, line, strlen(line),
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		if (n > 0)
			sent++;
		if (sent % 16 == 0) {
			o = req(&good, "{\"execute\": \"echo\", \"id\": 1}");
			CHECK_EQ(json_object_get_int(jget(o, "id")), 1);
			json_object_put(o);
		}
	}
	wait_clients(s, 1);
	CHECK(sent > 4);
	o = req(&good, "{\"execute\": \"echo\", \"id\": 2}");
	CHECK_EQ(json_object_get_int(jget(o, "id")), 2);
	json_object_put(o);
	raw_close(&slow);
	raw_close(&good);
	free(line);
	stop(s);
}

/*
 * A client that does not read: lossy events are skipped for it and it is
 * told how many with EVENTS_LOST; the others all arrive, and it stays
 * connected.
 */
void test_slow_reader(void)
{
	struct qmp_server *s = start(0, 256 << 10);
	struct json_object *o;
	long long lost = 0;
	int keep = 0, progress = 0, lost_events = 0;
	bool replied = false;
	struct raw a;

	open_client(&a);
	negotiate(&a);
	/* 20000 events of ~170 bytes: far more than the socket holds. */
	raw_send(&a, "{\"execute\": \"flood\", \"arguments\": {\"n\": 20000, "
		     "\"keep\": 100, \"lossy\": true}, \"id\": \"f\"}");
	usleep(300000); /* the handler is fast; give the writes time */
	while ((o = raw_recv(&a, 1000))) {
		const char *ev = jstr(o, "event");

		if (ev && !strcmp(ev, "KEEP"))
			keep++;
		else if (ev && !strcmp(ev, "PROGRESS"))
			progress++;
		else if (ev && !strcmp(ev, QMP_EVENT_LOST)) {
			lost_events++;
			lost += json_object_get_int64(
				jget(jget(o, "data"), "count"));
		} else if (jstr(o, "id"))
			replied = true;
		json_object_put(o);
	}
	CHECK(!a.eof);
	CHECK(replied);
	CHECK_EQ(keep, 200);
	CHECK(lost > 0);
	CHECK(lost_events >= 1);
	CHECK_EQ(progress + lost, 20000 - 200);
	printf("# slow reader: %d progress events delivered, %lld lost in %d "
	       "EVENTS_LOST\n",
	       progress, lost, lost_events);
	/* Still a working client. */
	o = req(&a, "{\"execute\": \"ping\", \"id\": \"p\"}");
	CHECK_STREQ(jstr(o, "id"), "p");
	json_object_put(o);
	raw_close(&a);
	stop(s);
}

/*
 * In a child with other credentials: 1 if it got the greeting, 0 if the
 * server refused it with an error, 2 if the socket file did.
 */
static int connect_as(uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct raw r;
		struct json_object *o;

		if (setgroups(ngroups, groups) || setgid(gid) || setuid(uid))
			_exit(3);
		if (raw_open(&r, td.path))
			_exit(2);
		o = raw_recv(&r, T_MS);
		_exit(jget(o, "QMP") ? 1 : err_class(o) ? 0 : 4);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Deliverable 2: SO_PEERCRED, and --api-group. */
void test_peer_credentials(void)
{
	const gid_t grp = 4242, nobody = 65534;
	struct qmp_server *s;
	struct stat st;

	if (geteuid()) {
		printf("# not root: cannot connect as another uid; skipped\n");
		return;
	}
	s = start(0, 0);
	CHECK_EQ(chmod(td.dir, 0711), 0);
	CHECK_EQ(stat(td.path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK_EQ(connect_as(nobody, nobody, NULL, 0), 2);
	/* Past the file mode, the credential check still refuses. */
	CHECK_EQ(chmod(td.path, 0666), 0);
	CHECK_EQ(connect_as(0, 0, NULL, 0), 1);
	CHECK_EQ(connect_as(nobody, nobody, NULL, 0), 0);
	CHECK_EQ(connect_as(nobody, grp, NULL, 0), 0);
	stop(s);

	s = start_opts(
		(struct qmp_server_opts){ .api_group = true, .api_gid = grp });
	CHECK_EQ(chmod(td.dir, 0711), 0);
	CHECK_EQ(stat(td.path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0660);
	CHECK_EQ(st.st_gid, grp);
	CHECK_EQ(connect_as(nobody, grp, NULL, 0), 1);
	CHECK_EQ(connect_as(nobody, nobody, &grp, 1), 1);
	CHECK_EQ(connect_as(nobody, nobody, NULL, 0), 2);
	CHECK_EQ(chmod(td.path, 0666), 0);
	CHECK_EQ(connect_as(nobody, nobody, NULL, 0), 0);
	stop(s);
}

static void *hammer(void *arg)
{
	struct raw r;
	int ok = 0;

	(void)arg;
	open_client(&r);
	negotiate(&r);
	for (int i = 0; i < 20; i++) {
		char text[96];
		struct json_object *o;

		snprintf(text, sizeof(text),
			 "{\"execute\": \"%s\", \"id\": %d}",
			 i % 2 ? "slow" : "echo", i);
		o = req(&r, text);
		ok += json_object_get_int(jget(o, "id")) == i &&
		      jget(o, "return");
		json_object_put(o);
	}
	raw_close(&r);
	return (void *)(intptr_t)ok;
}

void test_concurrent_clients(void)
{
	struct qmp_server *s = start(0, 0);
	pthread_t th[8];
	int ok = 0;

	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, hammer, NULL);
	for (int i = 0; i < 8; i++) {
		void *v;

		pthread_join(th[i], &v);
		ok += (int)(intptr_t)v;
	}
	CHECK_EQ(ok, 160);
	CHECK_EQ(atomic_load(&tc.calls), 160);
	CHECK_EQ(atomic_load(&tc.max_inside), 1);
	stop(s);
}

void test_stop_no_leaks(void)
{
	int before = count_fds();
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw a, b, c;
	struct stat st;

	open_client(&a);
	open_client(&b);
	open_client(&c);
	negotiate(&a);
	raw_send(&b, "{\"execute\": \"ec"); /* left mid-request */
	wait_clients(s, 3);
	/* Queued right before the stop: still delivered. */
	qmp_emit_event(s, "SHUTDOWN", NULL);
	qmp_server_stop(s);
	CHECK(stat(td.path, &st) && errno == ENOENT);
	o = raw_recv(&a, T_MS);
	CHECK_STREQ(jstr(o, "event"), "SHUTDOWN");
	json_object_put(o);
	o = raw_recv(&a, T_MS);
	CHECK(!o && a.eof);
	o = raw_recv(&b, T_MS);
	CHECK(!o && b.eof);
	raw_close(&a);
	raw_close(&b);
	raw_close(&c);
	tdir_remove(&td);
	CHECK_EQ(count_fds(), before);
	/* Created but never started: stop still cleans up. */
	tdir_make(&td);
	{
		struct qmp_server_opts opts = { .path = td.path };

		CHECK_EQ(qmp_server_create(&opts, &s), 0);
		qmp_server_stop(s);
	}
	CHECK(stat(td.path, &st) && errno == ENOENT);
	tdir_remove(&td);
	CHECK_EQ(count_fds(), before);
}

void test_socket_path(void)
{
	struct qmp_server_opts o = { .path = NULL };
	struct qmp_server *s = NULL, *s2 = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char longpath[200];
	struct stat st;
	FILE *f;
	int fd;

	tdir_make(&td);
	o.path = td.path;
	/* Not a socket: left alone. */
	f = fopen(td.path, "w");
	fputs("precious\n", f);
	fclose(f);
	CHECK_EQ(qmp_server_create(&o, &s), -EEXIST);
	CHECK_EQ(stat(td.path, &st), 0);
	CHECK(S_ISREG(st.st_mode) && st.st_size == 9);
	unlink(td.path);
	/* A stale socket (its server died) is replaced. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sa.sun_path, td.path);
	CHECK_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	CHECK_EQ(qmp_server_create(&o, &s), 0);
	/* A live one is not. */
	CHECK_EQ(qmp_server_create(&o, &s2), -EADDRINUSE);
	CHECK_EQ(qmp_server_register(s, cmds, 1, NULL), 0);
	CHECK_EQ(qmp_server_register(s, cmds, 1, NULL), -EEXIST);
	{
		static const struct qmp_command builtin[] = {
			{ .name = "query-commands", .handler = h_echo },
		};

		CHECK_EQ(qmp_server_register(s, builtin, 1, NULL), -EEXIST);
	}
	CHECK_EQ(qmp_server_start(s), 0);
	CHECK_EQ(qmp_server_register(s, cmds + 1, 1, NULL), -EBUSY);
	qmp_server_stop(s);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	o.path = longpath;
	CHECK_EQ(qmp_server_create(&o, &s), -ENAMETOOLONG);
	tdir_remove(&td);
}
