// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP server over real unix sockets: framing, negotiation, errors,
 * events, hostile clients, serialisation and a leak-free stop.  The cases
 * sit by subject in test_qmp_protocol.c, test_qmp_clients.c,
 * test_qmp_events.c and test_qmp_readahead.c, on the server of
 * qmp_server_fixture.c; this is their list, in the order they run.
 */
#include "check.h"
#include "qmp_server_fixture.h"

CHECK_MAIN(TEST(test_greeting), TEST(test_negotiation), TEST(test_id_echo),
	   TEST(test_error_classes), TEST(test_malformed),
	   TEST(test_long_request), TEST(test_many_clients),
	   TEST(test_disconnect_mid_request), TEST(test_never_reads),
	   TEST(test_events), TEST(test_control_plane), TEST(test_after_ops),
	   TEST(test_events_during_command), TEST(test_slow_reader),
	   TEST(test_parse_resync), TEST(test_qemu_grammar),
	   TEST(test_negotiate_timeout), TEST(test_peer_credentials),
	   TEST(test_concurrent_clients), TEST(test_stop_no_leaks),
	   TEST(test_socket_path), TEST(test_bad_declarations),
	   TEST(test_read_ahead), TEST(test_lex_cut_short), TEST(test_lex_utf8),
	   TEST(test_read_ahead_budget))
