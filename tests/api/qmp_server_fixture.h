/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The QMP server the test_qmp*.c cases run (qmp_server_fixture.c), and
 * the cases themselves, for test_qmp.c's list.
 */
#ifndef HOTVM_TESTS_QMP_SERVER_FIXTURE_H
#define HOTVM_TESTS_QMP_SERVER_FIXTURE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "qmp.h"
#include "qmp_schema.h"
#include "qmp_test_util.h"

#define T_MS 5000 /* generous: ASan and busy CI machines */

/* The commands' shared state: who is inside, a block to release. */
struct tctx {
	struct qmp_server *s;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool blocked, release;
	atomic_int inside, max_inside, calls;
};

extern struct tctx tc;
/* The test's commands; echo's handler, and ping's and look's. */
extern const struct qmp_command cmds[10];
int h_echo(void *ctx, struct json_object *args, struct json_object **ret,
	   struct qmp_error *err);
int h_look(void *ctx, struct json_object *args, struct json_object **ret,
	   struct qmp_error *err);
/* The socket's temporary directory. */
extern struct tdir td;

/* A server on td's socket with the test's commands, started. */
struct qmp_server *start_opts(struct qmp_server_opts o);
struct qmp_server *start(unsigned int max_clients, size_t max_output);
void stop(struct qmp_server *s);
/* Connects and reads the greeting. */
void open_client(struct raw *r);
void negotiate(struct raw *r);
/* Sends one request, returns the reply (events skipped). */
struct json_object *req(struct raw *r, const char *text);
void expect_error(struct raw *r, const char *text, const char *class,
		  const char *desc);
void wait_clients(struct qmp_server *s, unsigned int n);
/* Until the block command is inside its handler; then lets it return. */
void wait_blocked(void);
void release_block(void);

/* test_qmp_protocol.c */
void test_greeting(void);
void test_negotiation(void);
void test_id_echo(void);
void test_bad_declarations(void);
void test_error_classes(void);
void test_malformed(void);
void test_long_request(void);
void test_qemu_grammar(void);
void test_parse_resync(void);
void test_negotiate_timeout(void);
void test_lex_cut_short(void);
void test_lex_utf8(void);

/* test_qmp_clients.c */
void test_many_clients(void);
void test_disconnect_mid_request(void);
void test_never_reads(void);
void test_slow_reader(void);
void test_peer_credentials(void);
void test_concurrent_clients(void);
void test_stop_no_leaks(void);
void test_socket_path(void);

/* test_qmp_events.c */
void test_events(void);
void test_control_plane(void);
void test_after_ops(void);
void test_events_during_command(void);

/* test_qmp_readahead.c */
void test_read_ahead(void);
void test_read_ahead_budget(void);

#endif
