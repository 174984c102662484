// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP server's protocol over a real unix socket: the greeting,
 * negotiation, ids, declared arguments, error classes, malformed and long
 * requests, QEMU's JSON grammar, resynchronising after garbage, the
 * negotiation timeout, and the lexer's cuts and UTF-8.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "check.h"
#include "qmp_server_fixture.h"

void test_greeting(void)
{
	struct qmp_server *s = start(0, 0);
	struct json_object *g, *ver, *qemu;
	struct stat st;
	struct raw r;

	CHECK_EQ(stat(td.path, &st), 0);
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK_EQ(raw_open(&r, td.path), 0);
	g = raw_recv(&r, T_MS);
	ver = jget(jget(g, "QMP"), "version");
	qemu = jget(ver, "qemu");
	CHECK_EQ(json_object_get_int(jget(qemu, "major")), 7);
	CHECK_EQ(json_object_get_int(jget(qemu, "minor")), 2);
	CHECK_EQ(json_object_get_int(jget(qemu, "micro")), 0);
	CHECK(json_object_is_type(jget(qemu, "micro"), json_type_int));
	CHECK_STREQ(jstr(ver, "package"), "hotvm-0.1.0");
	CHECK(json_object_is_type(jget(jget(g, "QMP"), "capabilities"),
				  json_type_array));
	CHECK_EQ(json_object_array_length(jget(jget(g, "QMP"), "capabilities")),
		 0);
	CHECK_EQ(json_object_object_length(g), 1);
	json_object_put(g);
	/* QEMU ends each message with CRLF. */
	CHECK(r.len >= 2 && !memcmp(r.buf + r.len - 2, "\r\n", 2));
	raw_close(&r);
	stop(s);
}

void test_negotiation(void)
{
	struct qmp_server *s = start(0, 0);
	struct raw r;

	open_client(&r);
	expect_error(&r, "{\"execute\": \"echo\"}", "CommandNotFound",
		     "Expecting capabilities negotiation with "
		     "'qmp_capabilities'");
	expect_error(&r, "{\"execute\": \"query-commands\"}", "CommandNotFound",
		     NULL);
	expect_error(&r, "{\"execute\": \"nope\"}", "CommandNotFound",
		     "Expecting capabilities negotiation with "
		     "'qmp_capabilities'");
	expect_error(&r,
		     "{\"execute\": \"qmp_capabilities\", \"arguments\": "
		     "{\"enable\": [\"oob\"]}}",
		     "GenericError", "Capability 'oob' not available");
	expect_error(&r,
		     "{\"execute\": \"qmp_capabilities\", \"arguments\": "
		     "{\"x\": 1}}",
		     "GenericError", "Parameter 'x' is unexpected");
	CHECK_EQ(atomic_load(&tc.calls), 0);
	negotiate(&r);
	expect_error(&r, "{\"execute\": \"qmp_capabilities\"}",
		     "CommandNotFound",
		     "Capabilities negotiation is already complete, command "
		     "ignored");
	{
		struct json_object *o = req(&r, "{\"execute\": \"echo\", "
						"\"arguments\": {\"a\": 1}}");

		CHECK_EQ(json_object_get_int(jget(jget(o, "return"), "a")), 1);
		json_object_put(o);
	}
	raw_close(&r);
	stop(s);
}

void test_id_echo(void)
{
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw r;

	open_client(&r);
	/* Even before negotiation and on errors, the id comes back. */
	o = req(&r, "{\"execute\": \"echo\", \"id\": \"early\"}");
	CHECK_STREQ(jstr(o, "id"), "early");
	json_object_put(o);
	negotiate(&r);
	o = req(&r, "{\"execute\": \"echo\", \"id\": 42}");
	CHECK_EQ(json_object_get_int(jget(o, "id")), 42);
	CHECK(jget(o, "return"));
	json_object_put(o);
	o = req(&r, "{\"id\": {\"a\": [1, 2]}, \"execute\": \"nope\"}");
	CHECK_EQ(json_object_get_int(json_object_array_get_idx(
			 jget(jget(o, "id"), "a"), 1)),
		 2);
	CHECK_STREQ(err_class(o), "CommandNotFound");
	json_object_put(o);
	o = req(&r, "{\"execute\": \"echo\"}");
	CHECK(!jget(o, "id"));
	CHECK_EQ(json_object_object_length(jget(o, "return")), 0);
	json_object_put(o);
	o = req(&r, "{\"execute\": \"query-commands\", \"id\": \"q\"}");
	{
		struct json_object *l = jget(o, "return");
		bool echo = false, caps = false, qc = false;

		for (size_t i = 0; i < json_object_array_length(l); i++) {
			const char *n =
				jstr(json_object_array_get_idx(l, i), "name");

			echo |= n && !strcmp(n, "echo");
			caps |= n && !strcmp(n, "qmp_capabilities");
			qc |= n && !strcmp(n, "query-commands");
		}
		CHECK(echo && caps && qc);
		CHECK_EQ(json_object_array_length(l),
			 2 + sizeof(cmds) / sizeof(cmds[0]));
	}
	json_object_put(o);
	raw_close(&r);
	stop(s);
}

/*
 * What a declaration checks beyond the basic types: integers given as
 * decimal strings (as Kata sends "socket-id": "1"), names or numbers,
 * null where it is a value, allowed values, ranges, open commands.
 */
static void test_declared_args(struct raw *r)
{
	struct json_object *o;

	o = req(r, "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		   "\"t\": \"12\"}}");
	CHECK_EQ(json_object_get_int(jget(jget(o, "return"), "t")), 12);
	json_object_put(o);
	o = req(r, "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		   "\"t\": -3, \"st\": \"name\", \"nul\": null, \"mode\": "
		   "\"odd\", \"r\": -2}}");
	CHECK_EQ(json_object_get_int(jget(jget(o, "return"), "t")), -3);
	CHECK_STREQ(jstr(jget(o, "return"), "mode"), "odd");
	json_object_put(o);
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"t\": \"1x\"}}",
		     "GenericError",
		     "Invalid parameter type for 't', expected: integer");
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"t\": \"\"}}",
		     "GenericError",
		     "Invalid parameter type for 't', expected: integer");
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"st\": true}}",
		     "GenericError",
		     "Invalid parameter type for 'st', expected: string or "
		     "integer");
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"st\": null}}",
		     "GenericError",
		     "Invalid parameter type for 'st', expected: string or "
		     "integer");
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"mode\": \"quick\"}}",
		     "GenericError",
		     "Parameter 'mode' does not accept value 'quick' (expected "
		     "'fast', 'slow' or 'odd')");
	expect_error(r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 0, "
		     "\"r\": 3}}",
		     "GenericError",
		     "Parameter 'r' expects a value between -2 and 2");
	expect_error(r, "{\"execute\": \"typed\", \"arguments\": {\"n\": -1}}",
		     "GenericError",
		     "Parameter 'n' expects a value between 0 and 10");
	/* Open: undeclared members reach the handler, declared are checked. */
	o = req(r, "{\"execute\": \"open\", \"arguments\": {\"zz\": 1}}");
	CHECK(json_object_is_type(jget(o, "return"), json_type_object));
	json_object_put(o);
	expect_error(r,
		     "{\"execute\": \"open\", \"arguments\": {\"x\": \"1\"}}",
		     "GenericError",
		     "Invalid parameter type for 'x', expected: integer");
	/* The server's own commands are declared too. */
	expect_error(r,
		     "{\"execute\": \"query-commands\", \"arguments\": "
		     "{\"x\": 1}}",
		     "GenericError", "Parameter 'x' is unexpected");
	expect_error(r,
		     "{\"execute\": \"qmp_capabilities\", \"arguments\": "
		     "{\"enable\": 1}}",
		     "GenericError",
		     "Invalid parameter type for 'enable', expected: array");
}

/* A declaration the server cannot check is refused at registration. */
void test_bad_declarations(void)
{
	static const char *const v[] = { "a", NULL };
	static const struct qmp_arg twice[] = {
		{ .name = "a", .type = QMP_ARG_INT },
		{ .name = "a", .type = QMP_ARG_STR },
		{ 0 },
	};
	static const struct qmp_arg untyped[] = { { .name = "a" }, { 0 } };
	static const struct qmp_arg int_values[] = {
		{ .name = "a", .type = QMP_ARG_INT, .values = v },
		{ 0 },
	};
	const struct qmp_arg *bad[] = { twice, untyped, int_values };
	struct qmp_server_opts o = { 0 };
	struct qmp_server *s = NULL;

	tdir_make(&td);
	o.path = td.path;
	CHECK_EQ(qmp_server_create(&o, &s), 0);
	for (size_t i = 0; s && i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct qmp_command c = { .name = "c",
					 .handler = h_look,
					 .args = bad[i] };

		CHECK_EQ(qmp_server_register(s, &c, 1, NULL), -EINVAL);
	}
	if (s)
		qmp_server_stop(s);
	tdir_remove(&td);
}

void test_error_classes(void)
{
	static const char *const classes[] = {
		"GenericError", "CommandNotFound", "DeviceNotActive",
		"DeviceNotFound", "KVMMissingCap"
	};
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	char text[256], desc[64];
	struct raw r;

	open_client(&r);
	negotiate(&r);
	for (size_t i = 0; i < 5; i++) {
		snprintf(text, sizeof(text),
			 "{\"execute\": \"fail\", \"arguments\": {\"class\": "
			 "\"%s\"}, \"id\": %zu}",
			 classes[i], i);
		snprintf(desc, sizeof(desc), "failed as %s", classes[i]);
		o = req(&r, text);
		CHECK_STREQ(err_class(o), classes[i]);
		CHECK_STREQ(err_desc(o), desc);
		CHECK_EQ(json_object_get_int(jget(o, "id")), i);
		CHECK(!jget(o, "return"));
		json_object_put(o);
	}
	expect_error(
		&r,
		"{\"execute\": \"fail\", \"arguments\": {\"class\": \"x\"}}",
		"GenericError", "No such device");
	expect_error(&r, "{\"execute\": \"nope\"}", "CommandNotFound",
		     "The command nope has not been found");
	expect_error(&r, "{\"execute\": \"typed\"}", "GenericError",
		     "Parameter 'n' is missing");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": \"1\"}}",
		     "GenericError",
		     "Invalid parameter type for 'n', expected: integer");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 1.5}}",
		     "GenericError",
		     "Invalid parameter type for 'n', expected: integer");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": null}}",
		     "GenericError",
		     "Invalid parameter type for 'n', expected: integer");
	expect_error(&r, "{\"execute\": \"typed\", \"arguments\": {\"n\": 11}}",
		     "GenericError",
		     "Parameter 'n' expects a value between 0 and 10");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": "
		     "{\"n\": 18446744073709551615}}",
		     "GenericError", NULL);
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 1, "
		     "\"s\": 2}}",
		     "GenericError",
		     "Invalid parameter type for 's', expected: string");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 1, "
		     "\"b\": \"yes\"}}",
		     "GenericError",
		     "Invalid parameter type for 'b', expected: boolean");
	expect_error(&r,
		     "{\"execute\": \"typed\", \"arguments\": {\"n\": 1, "
		     "\"zz\": 0}}",
		     "GenericError", "Parameter 'zz' is unexpected");
	o = req(&r, "{\"execute\": \"typed\", \"arguments\": {\"n\": 10, "
		    "\"s\": \"hi\", \"b\": true}}");
	CHECK_EQ(json_object_get_int(jget(jget(o, "return"), "n")), 10);
	CHECK_STREQ(jstr(jget(o, "return"), "s"), "hi");
	CHECK(json_object_get_boolean(jget(jget(o, "return"), "b")));
	json_object_put(o);
	test_declared_args(&r);
	raw_close(&r);
	stop(s);
}

void test_malformed(void)
{
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw r;

	open_client(&r);
	negotiate(&r);
	expect_error(&r, "null\n", "GenericError",
		     "QMP input must be a JSON object");
	expect_error(&r, "[1, 2]", "GenericError",
		     "QMP input must be a JSON object");
	expect_error(&r, "\"execute\"", "GenericError",
		     "QMP input must be a JSON object");
	expect_error(&r, "{\"execute\": 1}", "GenericError",
		     "QMP input member 'execute' must be a string");
	expect_error(&r, "{\"arguments\": {}}", "GenericError",
		     "QMP input lacks member 'execute'");
	expect_error(&r, "{}", "GenericError",
		     "QMP input lacks member 'execute'");
	expect_error(&r, "{\"execute\": \"echo\", \"arguments\": [1]}",
		     "GenericError",
		     "QMP input member 'arguments' must be an object");
	expect_error(&r, "{\"execute\": \"echo\", \"foo\": 1}", "GenericError",
		     "QMP input member 'foo' is unexpected");
	/* Bad JSON, then a good request in the same write. */
	CHECK_EQ(raw_send(&r, "{\"execute\": ]]] \n"
			      "{\"execute\": \"echo\", \"id\": \"after\"}\n"),
		 0);
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	CHECK(err_desc(o) && !strncmp(err_desc(o), "JSON parse error, ", 18));
	json_object_put(o);
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(jstr(o, "id"), "after");
	CHECK(jget(o, "return"));
	json_object_put(o);
	/* Garbage split over writes, binary bytes, then a good one. */
	raw_send(&r, "}}} \xff\xfe");
	usleep(20000);
	raw_send(&r, "still garbage\n");
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	json_object_put(o);
	/* A request split byte by byte is still one request. */
	{
		const char *t = "{\"execute\": \"echo\", \"id\": \"split\"}";

		for (; *t; t++) {
			char b[2] = { *t, 0 };

			raw_send(&r, b);
		}
	}
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(jstr(o, "id"), "split");
	json_object_put(o);
	/* Two requests in one line, no separator. */
	raw_send(&r, "{\"execute\":\"echo\",\"id\":1}{\"execute\":\"echo\","
		     "\"id\":2}");
	o = raw_reply(&r, T_MS);
	CHECK_EQ(json_object_get_int(jget(o, "id")), 1);
	json_object_put(o);
	o = raw_reply(&r, T_MS);
	CHECK_EQ(json_object_get_int(jget(o, "id")), 2);
	json_object_put(o);
	/* Too deep for the parser: an error, not a crash. */
	{
		char deep[2100];

		memset(deep, '[', 2000);
		strcpy(deep + 2000, "\n");
		raw_send(&r, deep);
		o = raw_reply(&r, T_MS);
		CHECK_STREQ(err_class(o), "GenericError");
		json_object_put(o);
	}
	o = req(&r, "{\"execute\": \"echo\", \"id\": \"alive\"}");
	CHECK_STREQ(jstr(o, "id"), "alive");
	json_object_put(o);
	raw_close(&r);
	stop(s);
}

void test_long_request(void)
{
	struct qmp_server *s = start(0, 0);
	size_t n = QMP_DEFAULT_MAX_REQUEST + 4096;
	char *big = malloc(n + 1);
	struct json_object *o;
	struct raw r, other;

	open_client(&r);
	open_client(&other);
	negotiate(&r);
	memset(big, 'x', n);
	memcpy(big, "{\"execute\": \"echo\", \"arguments\": {\"s\": \"", 40);
	big[n] = '\0';
	raw_send(&r, big); /* may fail part way: the server hangs up */
	o = raw_recv(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	CHECK(err_desc(o) && strstr(err_desc(o), "longer than"));
	json_object_put(o);
	o = raw_recv(&r, T_MS);
	CHECK(!o && r.eof);
	raw_close(&r);
	/* Just under the limit is fine. */
	negotiate(&other);
	n = QMP_DEFAULT_MAX_REQUEST - 64;
	memset(big, 'y', n);
	memcpy(big, "{\"execute\": \"echo\", \"arguments\": {\"s\": \"", 40);
	strcpy(big + n - 3, "\"}}");
	o = req(&other, big);
	CHECK_EQ(strlen(jstr(jget(o, "return"), "s")), n - 43);
	json_object_put(o);
	raw_close(&other);
	free(big);
	stop(s);
}

/* Bytes until a reply with "id": "last" arrives, for checks on the wire. */
static size_t read_until_last(struct raw *r, char *buf, size_t cap)
{
	long long end = t_now_ms() + T_MS;
	size_t len = 0;

	while (len + 1 < cap && t_now_ms() < end) {
		struct pollfd p = { .fd = r->fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(r->fd, buf + len, cap - len - 1, 0);
		if (n <= 0)
			break;
		len += n;
		buf[len] = 0;
		if (strstr(buf, "\"id\": \"last\"") ||
		    strstr(buf, "\"id\":\"last\""))
			break;
	}
	buf[len] = 0;
	return len;
}

/* Strict UTF-8 (RFC 3629): no overlong form, surrogate, or beyond U+10FFFF. */
static bool valid_utf8(const unsigned char *p, size_t n)
{
	static const uint32_t least[] = { 0, 0x80, 0x800, 0x10000 };

	for (size_t i = 0; i < n;) {
		unsigned char b = p[i];
		size_t k = b < 0x80		   ? 0
			   : b >= 0xc2 && b < 0xe0 ? 1
			   : b >= 0xe0 && b < 0xf0 ? 2
			   : b >= 0xf0 && b < 0xf5 ? 3
						   : 9;
		uint32_t cp;

		if (k == 9 || n - i <= k)
			return false;
		cp = k ? b & (0x3fu >> k) : b;
		for (size_t j = 1; j <= k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		if (cp < least[k] || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

/*
 * Issue 32, item 9: QMP input is QEMU's grammar and nothing else.  No
 * comment, NaN or trailing comma is taken, and no reply echoes a value
 * that is not JSON (raw_open() parses replies strictly); \u0000 cuts no
 * name short; a complete request is answered before a bad one after it is
 * refused.  Every case of QEMU's grammar is in test_qmp_lex.c.
 */
void test_qemu_grammar(void)
{
	static const char *const refused[] = {
		"{\"execute\": \"echo\", \"id\": NaN}",
		"{\"execute\": \"echo\", \"id\": -Infinity}",
		"{\"execute\": \"echo\", \"id\": 007}",
		"{\"execute\": \"echo\", \"id\": TRUE}",
		"{\"execute\": \"echo\", \"id\": Null}",
		"{\"execute\": \"echo\", \"id\": 1,}",
		"{\"execute\": \"echo\", /* c */ \"id\": 1}",
		"{\"execute\": \"echo\\u0000please-not\", \"id\": 1}",
		"{\"execute\": \"echo\", \"arguments\": {\"id\": "
		"\"ab\\u0000cd\"}}",
		"{\"execute\": \"echo\", \"arguments\": {\"a\\u0000b\": 1}}",
	};
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	struct raw r;

	open_client(&r);
	negotiate(&r);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int calls = atomic_load(&tc.calls);
		char line[256];

		snprintf(line, sizeof(line), "%s\n", refused[i]);
		o = req(&r, line);
		if (!err_desc(o) ||
		    strncmp(err_desc(o), "JSON parse error, ", 18))
			printf("# %s: got %s\n", refused[i],
			       o ? json_object_to_json_string(o)
				 : "no strict JSON");
		CHECK(err_desc(o) &&
		      !strncmp(err_desc(o), "JSON parse error, ", 18));
		CHECK_STREQ(err_class(o), "GenericError");
		CHECK(!jget(o, "id"));
		CHECK_EQ(atomic_load(&tc.calls), calls);
		json_object_put(o);
		/* The next request is read whole. */
		o = req(&r, "{\"execute\": \"echo\", \"id\": \"next\"}\n");
		CHECK_STREQ(jstr(o, "id"), "next");
		json_object_put(o);
	}
	/* QEMU's single quotes and \' are taken; an id is echoed as sent. */
	o = req(&r, "{'execute': 'echo', 'arguments': {'s': 'it\\'s'}, "
		    "'id': 1e999}\n");
	CHECK_STREQ(jstr(jget(o, "return"), "s"), "it's");
	CHECK_EQ(json_object_get_type(jget(o, "id")), json_type_double);
	json_object_put(o);
	/* An unterminated comment after a whole request: it is answered. */
	raw_send(&r, "{\"execute\": \"echo\", \"id\": 3} /*\n");
	o = raw_reply(&r, T_MS);
	CHECK_EQ(json_object_get_int(jget(o, "id")), 3);
	CHECK(jget(o, "return"));
	json_object_put(o);
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	json_object_put(o);
	o = req(&r, "{\"execute\": \"echo\", \"id\": 4}\n");
	CHECK_EQ(json_object_get_int(jget(o, "id")), 4);
	json_object_put(o);
	raw_close(&r);
	stop(s);
}

/* Issue 8, item 7: the parser's smaller wrong answers. */
void test_parse_resync(void)
{
	struct qmp_server *s = start(0, 0);
	static char buf[65536];
	struct json_object *o;
	struct raw r;
	size_t n;

	open_client(&r);
	negotiate(&r);
	/* A truncated request, then a valid one on the next line. */
	raw_send(&r, "{\"execute\": \"echo\", \"id\": 1\n"
		     "{\"execute\": \"echo\", \"id\": 2}\n");
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	CHECK(err_desc(o) && !strncmp(err_desc(o), "JSON parse error, ", 18));
	json_object_put(o);
	o = raw_reply(&r, T_MS);
	CHECK_EQ(json_object_get_int(jget(o, "id")), 2);
	CHECK(jget(o, "return"));
	json_object_put(o);
	/* The same, with the new request split over two writes. */
	raw_send(&r, "{\"execute\": \"echo\", \"id\": 3,\n  {\"exec");
	usleep(20000);
	raw_send(&r, "ute\": \"echo\", \"id\": 4}\n");
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	json_object_put(o);
	o = raw_reply(&r, T_MS);
	CHECK_EQ(json_object_get_int(jget(o, "id")), 4);
	json_object_put(o);
	/* Bytes that are not UTF-8: an error, and every reply is UTF-8. */
	raw_send(&r,
		 "{\"execute\": \"ec\xff\xfeho\", \"id\": \"\xc3\"}\n"
		 "{\"execute\": \"no\xe2\x82such\", \"id\": 5}\n"
		 "{\"execute\": \"echo\", \"arguments\": {\"\xf0\x28\": 1}}\n"
		 "{\"execute\": \"echo\", \"arguments\": {\"s\": "
		 "\"caf\xc3\xa9\"}, \"id\": \"last\"}\n");
	n = read_until_last(&r, buf, sizeof(buf));
	CHECK(valid_utf8((unsigned char *)buf, n));
	CHECK(strstr(buf, "caf\xc3\xa9") != NULL);
	CHECK(!strstr(buf, "\xff"));
	{
		const char *p = buf;
		int errors = 0;

		while ((p = strstr(p, "JSON parse error")))
			errors++, p++;
		CHECK_EQ(errors, 3);
	}
	/* Duplicate keys are an error, at any depth; the same key in two
	 * objects is not. */
	expect_error(&r, "{\"execute\": \"echo\", \"execute\": \"echo\"}",
		     "GenericError", NULL);
	o = req(&r, "{\"execute\": \"echo\", \"arguments\": {\"a\": 1, "
		    "\"a\": 2}, \"id\": 6}");
	CHECK_STREQ(err_class(o), "GenericError");
	CHECK(err_desc(o) && strstr(err_desc(o), "duplicate key"));
	json_object_put(o);
	expect_error(&r,
		     "{\"execute\": \"echo\", \"arguments\": {\"x\": [{\"b\": "
		     "1, \"b\": {\"c\": 1}}]}}",
		     "GenericError", NULL);
	o = req(&r, "{\"execute\": \"echo\", \"arguments\": {\"a\": {\"a\": "
		    "\"x:y\", 'q': \"a\\\":\"}, \"b\": [{\"a\": 1}]}, "
		    "\"id\": 7}");
	CHECK_EQ(json_object_get_int(jget(o, "id")), 7);
	CHECK(jget(o, "return"));
	json_object_put(o);
	raw_close(&r);
	stop(s);
}

/*
 * Clients that never negotiate are closed after the timeout, so idle
 * connections cannot lock everyone out; a negotiated one may stay.
 */
void test_negotiate_timeout(void)
{
	struct qmp_server *s = start_opts((struct qmp_server_opts){
		.max_clients = 4,
		.negotiate_timeout_ms = 300,
	});
	struct json_object *o;
	struct raw idle[3], keeper, late;

	open_client(&keeper);
	negotiate(&keeper);
	for (int i = 0; i < 3; i++)
		open_client(&idle[i]);
	wait_clients(s, 4);
	/* Full: the fifth is refused... */
	CHECK_EQ(raw_open(&late, td.path), 0);
	o = raw_recv(&late, T_MS);
	CHECK_STREQ(err_class(o), "GenericError");
	json_object_put(o);
	raw_close(&late);
	/* ...until the idle ones are closed. */
	for (int i = 0; i < 3; i++) {
		o = raw_recv(&idle[i], T_MS);
		CHECK_STREQ(err_class(o), "GenericError");
		json_object_put(o);
		o = raw_recv(&idle[i], T_MS);
		CHECK(!o && idle[i].eof);
		raw_close(&idle[i]);
	}
	wait_clients(s, 1);
	open_client(&late);
	negotiate(&late);
	usleep(400000);
	o = req(&keeper, "{\"execute\": \"ping\", \"id\": \"k\"}");
	CHECK_STREQ(jstr(o, "id"), "k");
	json_object_put(o);
	o = req(&late, "{\"execute\": \"ping\", \"id\": \"l\"}");
	CHECK_STREQ(jstr(o, "id"), "l");
	json_object_put(o);
	raw_close(&keeper);
	raw_close(&late);
	stop(s);
}

/*
 * Issue 21, item 7: a request cut short at a line end, then a good one.
 * Cut inside a string, the line end used to be taken into the string, so
 * the good request went down with the cut one; a raw control character in
 * a string is now the error (as in RFC 8259 and QEMU's lexer) and parsing
 * resumes after the line end.  The 8 ways, each with LF and with CRLF.
 */
void test_lex_cut_short(void)
{
	/* Cut: after the brace, in a key, after it, in a value, after a
	 * backslash, in a \u escape, in the id, in a single-quoted string. */
	static const char *const cuts[] = {
		"{",
		"{\"exec",
		"{\"execute\"",
		"{\"execute\": \"ec",
		"{\"execute\": \"echo\", \"arguments\": {\"s\": \"a\\",
		"{\"execute\": \"echo\", \"arguments\": {\"s\": \"\\u00",
		"{\"execute\": \"echo\", \"id\": \"x",
		"{'execute': 'ec",
	};
	struct qmp_server *s = start(0, 0);
	struct json_object *o;
	int answered = 0;
	struct raw r;

	open_client(&r);
	negotiate(&r);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		for (int crlf = 0; crlf < 2; crlf++) {
			const char *eol = crlf ? "\r\n" : "\n";
			char text[256], id[32];

			snprintf(id, sizeof(id), "next-%zu-%d", i + 1, crlf);
			snprintf(
				text, sizeof(text),
				"%s%s{\"execute\": \"echo\", \"id\": \"%s\"}%s",
				cuts[i], eol, id, eol);
			raw_send(&r, text);
			o = raw_reply(&r, T_MS);
			CHECK(err_desc(o) &&
			      !strncmp(err_desc(o), "JSON parse error, ", 18));
			json_object_put(o);
			o = raw_reply(&r, T_MS);
			if (jstr(o, "id") && !strcmp(jstr(o, "id"), id) &&
			    jget(o, "return"))
				answered++;
			else
				printf("# cut %zu (%s): the next request was "
				       "swallowed\n",
				       i + 1, crlf ? "CRLF" : "LF");
			json_object_put(o);
		}
	}
	CHECK_EQ(answered, 16);
	/* A raw tab is refused, with words; escaped it is fine, DEL too. */
	o = req(&r, "{\"execute\": \"echo\", \"arguments\": {\"s\": \"a\tb\"}, "
		    "\"id\": 1}\n");
	CHECK_STREQ(err_class(o), "GenericError");
	CHECK(err_desc(o) && strstr(err_desc(o), "control character U+0009"));
	json_object_put(o);
	o = req(&r, "{\"execute\": \"echo\", \"arguments\": {\"s\": "
		    "\"a\\tb\x7f\"}, \"id\": 2}\n");
	CHECK_STREQ(jstr(jget(o, "return"), "s"), "a\tb\x7f");
	json_object_put(o);
	raw_close(&r);
	stop(s);
}

/*
 * Issue 21, item 7: the 11 classes of invalid UTF-8 (7 were echoed raw:
 * overlong forms, surrogates, above U+10FFFF, F5) and \u escapes that are
 * half a surrogate pair, each in a request's id: a parse error that names
 * it, the next request answered, and not one byte on the wire that is not
 * strict UTF-8.
 */
void test_lex_utf8(void)
{
	static const char *const bad[] = {
		"\xc0\xaf",
		"\xe0\x80\xaf",
		"\xf0\x80\x80\xaf",
		"\xed\xa0\x80",
		"\xed\xbf\xbf",
		"\xf4\x90\x80\x80",
		"\xf5\x80\x80\x80",
		"\x80",
		"\xc3",
		"\xf8\x88\x80\x80\x80",
		"\xff",
		"\\ud800",
		"\\udc00",
		"\\ud800\\u0041",
	};
	size_t nbad = sizeof(bad) / sizeof(bad[0]);
	struct qmp_server *s = start(0, 0);
	static char buf[65536], text[8192];
	size_t n, at = 0, line = 0;
	struct json_object *o;
	char *p;
	struct raw r;

	open_client(&r);
	negotiate(&r);
	/*
	 * A character split across two reads is still a character (json-c's
	 * own check failed it): once "p" is answered, the server has read
	 * the first half, which came in the same write.
	 */
	raw_send(&r, "{\"execute\": \"ping\", \"id\": \"p\"}"
		     "{\"execute\": \"echo\", \"id\": \"caf\xc3");
	o = raw_reply(&r, T_MS);
	CHECK_STREQ(jstr(o, "id"), "p");
	json_object_put(o);
	o = req(&r, "\xa9\"}");
	CHECK_STREQ(jstr(o, "id"), "caf\xc3\xa9");
	json_object_put(o);
	for (size_t i = 0; i < nbad; i++)
		at += snprintf(text + at, sizeof(text) - at,
			       "{\"execute\": \"echo\", \"id\": \"a%sb\"}\n"
			       "{\"execute\": \"echo\", \"id\": \"ok-%zu\"}\n",
			       bad[i], i);
	snprintf(text + at, sizeof(text) - at,
		 "{\"execute\": \"echo\", \"id\": \"\\ud83d\\ude00\"}\n"
		 "{\"execute\": \"echo\", \"id\": \"last\"}\n");
	raw_send(&r, text);
	n = read_until_last(&r, buf, sizeof(buf));
	CHECK(valid_utf8((unsigned char *)buf, n));
	/* Line by line: an error and the next reply, for each. */
	for (p = buf; p < buf + n; line++) {
		char *nl = strstr(p, "\r\n");
		char want[32];

		if (!nl)
			break;
		*nl = 0;
		o = json_tokener_parse(p);
		p = nl + 2;
		if (line < 2 * nbad && line % 2 == 0) {
			const char *d = err_desc(o);
			bool named = d &&
				     !strncmp(d, "JSON parse error, ", 18) &&
				     (strstr(d, "invalid UTF-8") ||
				      strstr(d, "surrogate pair"));

			CHECK(named);
			if (!named)
				printf("# bad %zu: got %s\n", line / 2,
				       json_object_to_json_string(o));
		} else if (line < 2 * nbad) {
			snprintf(want, sizeof(want), "ok-%zu", line / 2);
			CHECK_STREQ(jstr(o, "id"), want);
		} else if (line == 2 * nbad) {
			/* A proper pair is a character: back as UTF-8. */
			CHECK_STREQ(jstr(o, "id"), "\xf0\x9f\x98\x80");
		} else {
			CHECK_STREQ(jstr(o, "id"), "last");
		}
		json_object_put(o);
	}
	CHECK_EQ(line, 2 * nbad + 2);
	raw_close(&r);
	stop(s);
}
