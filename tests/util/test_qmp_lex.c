// SPDX-License-Identifier: GPL-2.0-only
/*
 * The grammar check of a JSON text (vmm/util/qmp_lex.c), byte by byte: raw
 * control characters in strings and requests cut short (the ways a
 * request cut short at a line end would swallow the next one), the
 * classes of invalid UTF-8, \u escapes that are half a surrogate pair;
 * what is valid passes, in one piece or split anywhere.  Then QEMU's
 * grammar, case by case (test_qemu_verdicts): every text QEMU's monitor
 * takes is taken, every one it refuses is refused, built by qmp_json.c,
 * save the two narrowings qmp_lex.h names.  The server's use of it is in
 * test_qmp.c (test_parse_resync, test_qemu_grammar).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "check.h"
#include "qmp_json.h"
#include "qmp_lex.h"

#define GOOD ((size_t)-1)

struct lex_case {
	const char *name;
	const char *text;
	size_t len;
	size_t bad;   /* index of the byte it stops at, or GOOD */
	size_t start; /* offset the error names */
	enum qmp_lex_error error;
};

#define OK_CASE(n, t)                                                          \
	{                                                                      \
		n, t, sizeof(t) - 1, GOOD, 0, QMP_LEX_OK                       \
	}
#define BAD_CASE(n, t, b, s, e)                                                \
	{                                                                      \
		n, t, sizeof(t) - 1, b, s, e                                   \
	}

/* A request cut short, its line end, and the next request. */
#define NEXT "{\"execute\": \"echo\", \"id\": 2}\n"

static const struct lex_case cases[] = {
	/* Valid requests, and valid text of every kind. */
	OK_CASE("request", "{\"execute\": \"echo\", \"arguments\": {\"s\": "
			   "\"caf\xc3\xa9\"}, \"id\": 1}\n" NEXT),
	OK_CASE("escapes", "{\"s\": \"a\\\"b\\\\\\/c\\n\\t\\u00e9\x7f\"}"),
	OK_CASE("whitespace", "{\n\t\"a\":\r\n 1 ,\"b\" : [ 2 ]\r\n}\r\n"),
	OK_CASE("single quotes", "{'a': 'say \"hi\\' \\\"'}"),
	OK_CASE("apostrophe", "{\"a\": \"it's\"}"),
	OK_CASE("values", "[-0, 0.5, 1e5, 12.5E-3, true, false, null, {}, []]"),
	BAD_CASE("comments", "/* it's \"quoted\" */ {\"a\": 1}", 0, 0,
		 QMP_LEX_STRAY),
	BAD_CASE("comment after", "{\"a\": 1 // don't\n}", 8, 8, QMP_LEX_STRAY),
	OK_CASE("U+0080", "\"\xc2\x80\""),
	OK_CASE("U+07FF", "\"\xdf\xbf\""),
	OK_CASE("U+0800", "\"\xe0\xa0\x80\""),
	OK_CASE("U+D7FF", "\"\xed\x9f\xbf\""),
	OK_CASE("U+E000", "\"\xee\x80\x80\""),
	OK_CASE("U+FFFD", "\"\xef\xbf\xbd\""),
	OK_CASE("U+10000", "\"\xf0\x90\x80\x80\""),
	OK_CASE("U+10FFFD", "\"\xf4\x8f\xbf\xbd\""),
	OK_CASE("surrogate pair", "\"\\ud83d\\ude00 \\uD83D\\uDE00\""),
	BAD_CASE("NUL escaped", "\"ab\\u0000\"", 8, 3, QMP_LEX_NUL),
	BAD_CASE("not hex", "\"\\u12x4\"", 5, 1, QMP_LEX_ESCAPE),
	BAD_CASE("unknown escape", "\"a\\q\"", 3, 2, QMP_LEX_ESCAPE),
	BAD_CASE("control outside a string", "{\x01}", 1, 1, QMP_LEX_STRAY),
	BAD_CASE("U+FFFF", "\"\xef\xbf\xbf\"", 3, 1, QMP_LEX_NONCHARACTER),
	BAD_CASE("U+10FFFF", "\"\xf4\x8f\xbf\xbf\"", 4, 1,
		 QMP_LEX_NONCHARACTER),
	BAD_CASE("U+FDD0 escaped", "\"\\uFDD0\"", 6, 1, QMP_LEX_NONCHARACTER),
	BAD_CASE("U+1FFFE escaped", "\"\\ud83f\\udffe\"", 12, 1,
		 QMP_LEX_NONCHARACTER),

	/*
	 * The 8 ways of cutting a request short at a line end: inside a
	 * string the line end is the error, so the server resumes after it;
	 * between tokens the next request's '{' is where the grammar wants
	 * something else (ways 1 and 3), so the server resumes there.
	 */
	BAD_CASE("cut 1: after the brace", "{\n" NEXT, 2, 2, QMP_LEX_SYNTAX),
	BAD_CASE("cut 2: in a key", "{\"exec\n" NEXT, 6, 6, QMP_LEX_CONTROL),
	BAD_CASE("cut 3: after a key", "{\"execute\"\n" NEXT, 11, 11,
		 QMP_LEX_SYNTAX),
	BAD_CASE("cut 4: in a value", "{\"execute\": \"ec\n" NEXT, 15, 15,
		 QMP_LEX_CONTROL),
	BAD_CASE("cut 5: after a backslash",
		 "{\"arguments\": {\"s\": \"a\\\n" NEXT, 23, 23,
		 QMP_LEX_CONTROL),
	BAD_CASE("cut 6: in a \\u escape",
		 "{\"arguments\": {\"s\": \"\\u00\n" NEXT, 25, 25,
		 QMP_LEX_CONTROL),
	BAD_CASE("cut 7: in a single-quoted string", "{'execute': 'ec\n" NEXT,
		 15, 15, QMP_LEX_CONTROL),
	BAD_CASE("cut 8: in the id",
		 "{\"execute\": \"echo\", \"id\": \"x\n" NEXT, 28, 28,
		 QMP_LEX_CONTROL),
	BAD_CASE("cut with CRLF", "{\"execute\": \"ec\r\n" NEXT, 15, 15,
		 QMP_LEX_CONTROL),
	BAD_CASE("tab", "{\"s\": \"a\tb\"}", 8, 8, QMP_LEX_CONTROL),
	BAD_CASE("NUL", "{\"s\": \"a\0b\"}", 8, 8, QMP_LEX_CONTROL),
	BAD_CASE("ESC after a backslash", "\"\\\x1b\"", 2, 2, QMP_LEX_CONTROL),

	/* The 11 classes of invalid UTF-8, each in a string. */
	BAD_CASE("1 overlong, C0", "\"a\xc0\xaf\"", 2, 2,
		 QMP_LEX_UTF8_OVERLONG),
	BAD_CASE("1 overlong, C1", "\"a\xc1\xbf\"", 2, 2,
		 QMP_LEX_UTF8_OVERLONG),
	BAD_CASE("2 overlong, 3 bytes", "\"a\xe0\x80\xaf\"", 3, 2,
		 QMP_LEX_UTF8_OVERLONG),
	BAD_CASE("3 overlong, 4 bytes", "\"a\xf0\x80\x80\xaf\"", 3, 2,
		 QMP_LEX_UTF8_OVERLONG),
	BAD_CASE("4 high surrogate", "\"a\xed\xa0\x80\"", 3, 2,
		 QMP_LEX_UTF8_SURROGATE),
	BAD_CASE("5 low surrogate", "\"a\xed\xbf\xbf\"", 3, 2,
		 QMP_LEX_UTF8_SURROGATE),
	BAD_CASE("6 above U+10FFFF, F4", "\"a\xf4\x90\x80\x80\"", 3, 2,
		 QMP_LEX_UTF8_TOO_BIG),
	BAD_CASE("7 above U+10FFFF, F5", "\"a\xf5\x80\x80\x80\"", 2, 2,
		 QMP_LEX_UTF8_TOO_BIG),
	BAD_CASE("8 lone continuation", "\"a\x80\"", 2, 2,
		 QMP_LEX_UTF8_CONTINUATION),
	BAD_CASE("8 continuation too many", "\"\xc3\xa9\xa9\"", 3, 3,
		 QMP_LEX_UTF8_CONTINUATION),
	BAD_CASE("9 cut short, 2 bytes", "\"a\xc3\"", 3, 2, QMP_LEX_UTF8_SHORT),
	BAD_CASE("9 cut short by a line end", "\"a\xe2\x82\n", 4, 2,
		 QMP_LEX_UTF8_SHORT),
	BAD_CASE("10 five-byte form, F8", "\"a\xf8\x88\x80\x80\x80\"", 2, 2,
		 QMP_LEX_UTF8_BAD_BYTE),
	BAD_CASE("10 six-byte form, FC", "\"a\xfc\x84\x80\x80\x80\x80\"", 2, 2,
		 QMP_LEX_UTF8_BAD_BYTE),
	BAD_CASE("11 FF", "\"a\xff\"", 2, 2, QMP_LEX_UTF8_BAD_BYTE),
	BAD_CASE("11 FE", "\"a\xfe\"", 2, 2, QMP_LEX_UTF8_BAD_BYTE),
	/* Anywhere, not only in strings. */
	BAD_CASE("between tokens", "{\"a\": 1 \xff}", 8, 8,
		 QMP_LEX_UTF8_BAD_BYTE),
	BAD_CASE("outside a string", "\xc3\xa9", 0, 0, QMP_LEX_STRAY),

	/* Escapes that are half a surrogate pair. */
	BAD_CASE("lone high", "\"\\ud800\"", 7, 1, QMP_LEX_LONE_SURROGATE),
	BAD_CASE("lone low", "\"x\\udc00\"", 7, 2, QMP_LEX_LONE_SURROGATE),
	BAD_CASE("high, then not low", "\"\\ud800\\u0041\"", 12, 1,
		 QMP_LEX_LONE_SURROGATE),
	BAD_CASE("high, then another escape", "\"\\uD800\\n\"", 8, 1,
		 QMP_LEX_LONE_SURROGATE),
	BAD_CASE("high, then a character", "\"\\ud800\xc3\xa9\"", 7, 1,
		 QMP_LEX_LONE_SURROGATE),
};

#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/*
 * Where scanning text in pieces of at most piece bytes stops; a whole
 * value ends a text, and the next starts after it.  *base: where the text
 * with the error started.
 */
static size_t scan_pieces(struct qmp_lex *lx, const struct lex_case *c,
			  size_t piece, size_t *base)
{
	size_t at = 0;

	*base = 0;
	qmp_lex_reset(lx, 0);
	while (at < c->len) {
		size_t n = c->len - at < piece ? c->len - at : piece;
		size_t good = qmp_lex_scan(lx, c->text + at, n);

		at += good;
		if (lx->error)
			return at;
		if (lx->done) {
			qmp_lex_reset(lx, 0);
			*base = at;
		}
	}
	return GOOD;
}

static void check_case(const struct lex_case *c)
{
	struct qmp_lex lx;
	size_t base, again;
	size_t got = scan_pieces(&lx, c, c->len, &base);

	if (got != c->bad || lx.error != c->error ||
	    (c->bad != GOOD && base + lx.start != c->start)) {
		printf("# %s: stopped at %zd (want %zd), error %d (want %d), "
		       "offset %zu (want %zu)\n",
		       c->name, (ssize_t)got, (ssize_t)c->bad, lx.error,
		       c->error, lx.start, c->start);
		check_failures++;
	}
	/* The same, fed in pieces of every size: incremental. */
	for (size_t piece = 1; piece < c->len; piece++) {
		again = scan_pieces(&lx, c, piece, &base);
		if (again != got) {
			printf("# %s: in pieces of %zu, stopped at %zd\n",
			       c->name, piece, (ssize_t)again);
			check_failures++;
			break;
		}
	}
}

static void test_cases(void)
{
	for (size_t i = 0; i < N_CASES; i++)
		check_case(&cases[i]);
}

/* Every control character in a string; none of the others. */
static void test_controls(void)
{
	for (unsigned int b = 0; b < 0x80; b++) {
		char text[] = "{\"s\": \"a?b\"}";
		struct qmp_lex lx;
		size_t got;

		if (b == '"' || b == '\\')
			continue;
		text[8] = (char)b;
		qmp_lex_reset(&lx, 0);
		got = qmp_lex_scan(&lx, text, sizeof(text) - 1);
		if (b < 0x20) {
			CHECK_EQ(got, 8);
			CHECK_EQ(lx.error, QMP_LEX_CONTROL);
		} else {
			CHECK_EQ(got, sizeof(text) - 1);
		}
	}
}

/*
 * Every lead byte with every second byte: valid exactly where RFC 3629's
 * table says, invalid in the class it names.
 */
static void test_second_bytes(void)
{
	for (unsigned int b1 = 0x80; b1 <= 0xff; b1++) {
		for (unsigned int b2 = 0; b2 <= 0xff; b2++) {
			char text[] = "\"..\x80\x80\"";
			unsigned int lo = b1 == 0xe0   ? 0xa0
					  : b1 == 0xf0 ? 0x90
						       : 0x80;
			unsigned int hi = b1 == 0xed || b1 == 0xf4
						  ? (b1 == 0xed ? 0x9f : 0x8f)
						  : 0xbf;
			bool lead_ok = b1 >= 0xc2 && b1 <= 0xf4;
			unsigned int k = b1 < 0xe0 ? 1 : b1 < 0xf0 ? 2 : 3;
			struct qmp_lex lx;
			size_t got, want;

			/* The lead, b2, then continuations or ASCII. */
			text[1] = (char)b1;
			text[2] = (char)b2;
			text[3] = k >= 2 ? '\x80' : 'x';
			text[4] = k >= 3 ? '\x80' : 'y';
			qmp_lex_reset(&lx, 0);
			got = qmp_lex_scan(&lx, text, sizeof(text) - 1);
			if (!lead_ok)
				want = 1;
			else if (b2 < lo || b2 > hi)
				want = 2;
			else
				want = sizeof(text) - 1;
			if (got != want) {
				printf("# %02X %02X: stopped at %zu, want "
				       "%zu\n",
				       b1, b2, got, want);
				check_failures++;
			}
			if (want == 2 && b2 >= 0x80 && b2 <= 0xbf)
				CHECK(lx.error == QMP_LEX_UTF8_OVERLONG ||
				      lx.error == QMP_LEX_UTF8_SURROGATE ||
				      lx.error == QMP_LEX_UTF8_TOO_BIG);
			if (want == 2 && (b2 < 0x80 || b2 > 0xbf))
				CHECK_EQ(lx.error, QMP_LEX_UTF8_SHORT);
		}
	}
}

/* The words: what and where, never the bad bytes themselves. */
static void test_describe(void)
{
	static const struct {
		const char *text;
		const char *want[2];
	} d[] = {
		{ "{\"s\": \"a\nb\"}", { "U+000A", "offset 8" } },
		{ "\"ab\xe0\x80\xaf\"", { "overlong", "offset 3" } },
		{ "\"\xed\xa0\x80\"", { "surrogate", "offset 1" } },
		{ "\"\xf4\x90\x80\x80\"", { "above U+10FFFF", "offset 1" } },
		{ "\"\xf5\"", { "above U+10FFFF", "0xF5" } },
		{ "\"\xff\"", { "never occurs", "0xFF" } },
		{ "\"\xc3\"", { "cut short", "offset 1" } },
		{ "\"\x80\"", { "continuation", "offset 1" } },
		{ "\"ab\\udc00\"", { "surrogate pair", "offset 3" } },
	};

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		struct qmp_lex lx;
		struct hv_err err = { 0 };
		const char *buf = err.msg;

		qmp_lex_reset(&lx, 0);
		CHECK(qmp_lex_scan(&lx, d[i].text, strlen(d[i].text)) <
		      strlen(d[i].text));
		CHECK_EQ(qmp_lex_describe(&lx, &err), -EPROTO);
		for (size_t k = 0; k < 2; k++)
			if (!strstr(buf, d[i].want[k])) {
				printf("# \"%s\" lacks \"%s\"\n", buf,
				       d[i].want[k]);
				check_failures++;
			}
		for (const char *p = buf; *p; p++)
			CHECK((unsigned char)*p >= 0x20 &&
			      (unsigned char)*p < 0x80);
	}
}

/* After an error it stays stopped until reset; reset starts over. */
static void test_reset(void)
{
	struct qmp_lex lx;

	qmp_lex_reset(&lx, 0);
	CHECK_EQ(qmp_lex_scan(&lx, "\"\xff", 2), 1);
	CHECK_EQ(qmp_lex_scan(&lx, "\"ok\"", 4), 0);
	qmp_lex_reset(&lx, 0);
	CHECK_EQ(qmp_lex_scan(&lx, "\"ok\"", 4), 4);
	CHECK_EQ(lx.error, QMP_LEX_OK);
	CHECK_EQ(lx.at, 4);
}

/*
 * The weight: what json-c would allocate.  Objects weigh far more than
 * their text, a string about its length; past the limit it stops.
 */
static void test_weight(void)
{
	static char text[8192];
	struct qmp_lex lx;
	size_t n = 0, got;

	n += snprintf(text, sizeof(text), "{\"a\": [");
	for (int i = 0; i < 20; i++)
		n += snprintf(text + n, sizeof(text) - n, "{},");
	text[n - 1] = ']';
	text[n++] = '}';
	qmp_lex_reset(&lx, 0);
	CHECK_EQ(qmp_lex_scan(&lx, text, n), n);
	CHECK(lx.weight >= 20 * QMP_LEX_COST_OBJECT);
	/* 8 KiB: the fifth object or so passes it, 20 text bytes in. */
	qmp_lex_reset(&lx, 8192);
	got = qmp_lex_scan(&lx, text, n);
	CHECK(got < 40);
	CHECK_EQ(lx.error, QMP_LEX_TOO_BIG);
	CHECK_EQ(lx.start, got);
	/* A string of 8000 bytes weighs about that: it passes. */
	text[0] = '"';
	memset(text + 1, 'x', 8000);
	text[8001] = '"';
	qmp_lex_reset(&lx, 8192);
	CHECK_EQ(qmp_lex_scan(&lx, text, 8002), 8002);
	CHECK(lx.weight >= 8002 && lx.weight <= 8192);
	/* Fed in pieces, the same. */
	qmp_lex_reset(&lx, 8192);
	for (size_t i = 0; i < 8002; i++)
		CHECK_EQ(qmp_lex_scan(&lx, text + i, 1), 1);
}

/*
 * QEMU's grammar, case by case: each text with QEMU's verdict (qobject/
 * json-lexer.c, json-parser.c; NULL: it takes it, else the start of its
 * error's desc) and hotvm's (qmp_json_parse(): QMP_LEX_OK and, taken, the
 * value of "a" as json-c writes it; a duplicate key is QEMU_DUP).  Where
 * the two differ, .narrowing says why (qmp_lex.h).
 */
#define QEMU_DUP 100

struct qemu_case {
	const char *text;
	const char *qemu;
	int want;
	const char *value;
	const char *narrowing;
};

#define TAKEN(t, v)                                                            \
	{                                                                      \
		.text = (t), .want = QMP_LEX_OK, .value = (v)                  \
	}
#define REFUSED(t, q, w)                                                       \
	{                                                                      \
		.text = (t), .qemu = (q), .want = (w)                          \
	}
#define NARROWED(t, w, n)                                                      \
	{                                                                      \
		.text = (t), .want = (w), .narrowing = (n)                     \
	}

static const struct qemu_case qemu_cases[] = {
	/* Taken by both. */
	TAKEN("{\"a\": 1}", "1"),
	TAKEN("{'a': 'x'}", "\"x\""),
	TAKEN("{\"a\": 'say \"hi\"'}", "\"say \\\"hi\\\"\""),
	TAKEN("{\"a\": 'it\\'s'}", "\"it's\""),
	TAKEN("{\"a\": \"it\\'s\"}", "\"it's\""),
	TAKEN("{\"a\": \"\\/\\b\\f\\n\\r\\t\\\\\\\"\"}",
	      "\"\\/\\b\\f\\n\\r\\t\\\\\\\"\""),
	TAKEN("{\"a\": -0}", "0"),
	TAKEN("{\"a\": 0.5e5}", "0.5e5"),
	TAKEN("{\"a\": 1E+2}", "1E+2"),
	TAKEN("{\"a\": -1.5e-3}", "-1.5e-3"),
	TAKEN("{\"a\": 18446744073709551615}", "18446744073709551615"),
	TAKEN("{\"a\": 18446744073709551616}", "18446744073709551616"),
	/* QEMU writes it back as inf, which is not JSON; hotvm its text. */
	TAKEN("{\"a\": 1e999}", "1e999"),
	TAKEN("{\"a\": [true, false, null]}", "[true,false,null]"),
	TAKEN("{\"a\": \"\\ud83d\\ude00\"}", "\"\xf0\x9f\x98\x80\""),
	TAKEN("{\"a\": \"caf\\u00e9 caf\xc3\xa9\"}",
	      "\"caf\xc3\xa9 caf\xc3\xa9\""),
	TAKEN("{\"a\": \"\\uFFFD\"}", "\"\xef\xbf\xbd\""),
	TAKEN(" \t\r\n{\"a\" : { } } \r\n", "{}"),
	TAKEN("{\"a\": {\"b\": 1}, \"b\": {\"b\": 2}}", "{\"b\":1}"),
	/* Refused by both. */
	REFUSED("{\"a\": 1 /* c */}", "stray '/'", QMP_LEX_STRAY),
	REFUSED("// c\n{\"a\": 1}", "stray '/'", QMP_LEX_STRAY),
	REFUSED("{\"a\": NaN}", "stray 'N'", QMP_LEX_STRAY),
	REFUSED("{\"a\": Infinity}", "stray 'I'", QMP_LEX_STRAY),
	REFUSED("{\"a\": -Infinity}", "stray '-I'", QMP_LEX_NUMBER),
	REFUSED("{\"a\": nan}", "invalid keyword 'nan'", QMP_LEX_KEYWORD),
	REFUSED("{\"a\": infinity}", "invalid keyword 'infinity'",
		QMP_LEX_KEYWORD),
	REFUSED("{\"a\": TRUE}", "stray 'T'", QMP_LEX_STRAY),
	REFUSED("{\"a\": True}", "stray 'T'", QMP_LEX_STRAY),
	REFUSED("{\"a\": Null}", "stray 'N'", QMP_LEX_STRAY),
	REFUSED("{\"a\": nulL}", "stray 'L'", QMP_LEX_KEYWORD),
	REFUSED("{\"a\": 007}", "stray '00'", QMP_LEX_NUMBER),
	REFUSED("{\"a\": 0e5}", "expected separator in dict", QMP_LEX_SYNTAX),
	REFUSED("{\"a\": 1.}", "stray '1.}'", QMP_LEX_NUMBER),
	REFUSED("{\"a\": .5}", "stray '.'", QMP_LEX_STRAY),
	REFUSED("{\"a\": +1}", "stray '+'", QMP_LEX_STRAY),
	REFUSED("{\"a\": 1.5e}", "stray '1.5e}'", QMP_LEX_NUMBER),
	REFUSED("{\"a\": -}", "stray '-}'", QMP_LEX_NUMBER),
	REFUSED("{\"a\": 1,}", "expecting value", QMP_LEX_SYNTAX),
	REFUSED("{\"a\": [1,]}", "expecting value", QMP_LEX_SYNTAX),
	REFUSED("{\"a\": 1,, \"b\": 2}", "expecting value", QMP_LEX_SYNTAX),
	REFUSED("{\"a\" 1}", "missing : in object pair", QMP_LEX_SYNTAX),
	REFUSED("{1: 2}", "key is not a string in object", QMP_LEX_SYNTAX),
	REFUSED("{\"a\": 1 \"b\": 2}", "expected separator in dict",
		QMP_LEX_SYNTAX),
	REFUSED("{\"a\": [1 2]}", "expected separator in list", QMP_LEX_SYNTAX),
	REFUSED("{\"a\": 1, \"a\": 2}", "duplicate key", QEMU_DUP),
	REFUSED("{\"a\": {\"b\": 1, \"b\": 1}}", "duplicate key", QEMU_DUP),
	REFUSED("{\"execute\": \"x\", 'execute': \"y\"}", "duplicate key",
		QEMU_DUP),
	REFUSED("{\"a\": \"\\q\"}", "invalid escape sequence in string",
		QMP_LEX_ESCAPE),
	REFUSED("{\"a\": \"\\u12x4\"}",
		"\\u12x4 is not a valid Unicode character", QMP_LEX_ESCAPE),
	REFUSED("{\"a\": \"\\ud800\"}",
		"\\ud800 is not a valid Unicode character",
		QMP_LEX_LONE_SURROGATE),
	REFUSED("{\"a\": \"\\udc00\"}",
		"\\udc00 is not a valid Unicode character",
		QMP_LEX_LONE_SURROGATE),
	REFUSED("{\"a\": \"\\uFDD0\"}",
		"\\uFDD0 is not a valid Unicode character",
		QMP_LEX_NONCHARACTER),
	REFUSED("{\"a\": \"\\uFFFF\"}",
		"\\uFFFF is not a valid Unicode character",
		QMP_LEX_NONCHARACTER),
	REFUSED("{\"a\": \"\\udbff\\udfff\"}",
		"\\udbff\\udfff is not a valid Unicode character",
		QMP_LEX_NONCHARACTER),
	REFUSED("{\"a\": \"\xef\xbf\xbf\"}", "invalid UTF-8 sequence in string",
		QMP_LEX_NONCHARACTER),
	REFUSED("{\"a\": \"\xef\xb7\x90\"}", "invalid UTF-8 sequence in string",
		QMP_LEX_NONCHARACTER),
	REFUSED("{\"a\": \"x\ty\"}", "stray '\"x\t'", QMP_LEX_CONTROL),
	REFUSED("{\"a\": \"\xff\"}", "stray '\"\xff'", QMP_LEX_UTF8_BAD_BYTE),
	REFUSED("{\"a\": \"\xc0\xaf\"}", "invalid UTF-8 sequence in string",
		QMP_LEX_UTF8_OVERLONG),
	REFUSED("{\"a\": \"\xed\xa0\x80\"}", "invalid UTF-8 sequence in string",
		QMP_LEX_UTF8_SURROGATE),
	REFUSED("\x01{\"a\": 1}", "stray '\x01'", QMP_LEX_STRAY),
	REFUSED("{\"a\": %d}", "stray '%'", QMP_LEX_STRAY),
	/* Taken by QEMU, refused by hotvm. */
	NARROWED("{\"a\": \"quit\\u0000please-not\"}", QMP_LEX_NUL,
		 "U+0000: QEMU keeps it as C0 80, hotvm's C strings end there"),
	NARROWED("{\"a\": \"\xc0\x80\"}", QMP_LEX_UTF8_OVERLONG,
		 "U+0000 as modified UTF-8: QEMU's one overlong form"),
	NARROWED("{\"a\": "
		 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
		 "]]]}",
		 QMP_LEX_DEPTH,
		 "nested 33 deep: QEMU allows 1024, hotvm json-c's 32"),
};

static void test_qemu_verdicts(void)
{
	for (size_t i = 0; i < sizeof(qemu_cases) / sizeof(qemu_cases[0]);
	     i++) {
		const struct qemu_case *c = &qemu_cases[i];
		struct json_object *o = NULL, *a;
		struct hv_err err = { 0 };
		const char *why = err.msg;
		struct qmp_lex lx;
		int rc, got;
		size_t n = strlen(c->text);

		rc = qmp_json_parse(c->text, n, 0, &o, &err);
		/* The check's own verdict: what refused it. */
		qmp_lex_reset(&lx, 0);
		qmp_lex_scan(&lx, c->text, n);
		got = rc == -EPROTO && !lx.error ? QEMU_DUP : lx.error;
		if (rc == -EPROTO && !lx.error && !strstr(why, "duplicate key"))
			got = -1;
		if (got != c->want || (rc == 0) != (c->want == QMP_LEX_OK)) {
			printf("# %s: rc %d, verdict %d (want %d; QEMU: %s): "
			       "%s\n",
			       c->text, rc, got, c->want,
			       c->qemu ? c->qemu : "takes it", why);
			check_failures++;
		}
		/* Same verdict as QEMU's, or a narrowing said why. */
		CHECK(!c->qemu == !rc || c->narrowing);
		if (!rc && c->value) {
			a = json_object_object_get(o, "a");
			if (strcmp(json_object_to_json_string_ext(
					   a, JSON_C_TO_STRING_PLAIN),
				   c->value)) {
				printf("# %s: \"a\" is %s, want %s\n", c->text,
				       json_object_to_json_string_ext(
					       a, JSON_C_TO_STRING_PLAIN),
				       c->value);
				check_failures++;
			}
		}
		json_object_put(o);
	}
}

/*
 * A number is an int64, else a uint64, else a double (QEMU's order); a
 * string may hold the character U+0001 escaped, and \' in either quote.
 */
static void test_build_types(void)
{
	static const char text[] =
		"{\"i\": -9223372036854775808, \"u\": 18446744073709551615, "
		"\"d\": -9223372036854775809, 's': 'a\\u0001\\'\"'}";
	struct json_object *o = NULL;

	CHECK_EQ(qmp_json_parse(text, sizeof(text) - 1, 0, &o, NULL), 0);
	CHECK(json_object_is_type(json_object_object_get(o, "i"),
				  json_type_int));
	CHECK_EQ(json_object_get_int64(json_object_object_get(o, "i")),
		 INT64_MIN);
	CHECK_EQ(json_object_get_uint64(json_object_object_get(o, "u")),
		 UINT64_MAX);
	CHECK(json_object_is_type(json_object_object_get(o, "d"),
				  json_type_double));
	CHECK_EQ(json_object_get_string_len(json_object_object_get(o, "s")), 4);
	CHECK_STREQ(json_object_get_string(json_object_object_get(o, "s")),
		    "a\x01'\"");
	json_object_put(o);
	/* One value only; a bare literal or number is whole at the end. */
	CHECK_EQ(qmp_json_parse("{} {}", 5, 0, &o, NULL), -EPROTO);
	CHECK_EQ(qmp_json_parse("12", 2, 0, &o, NULL), 0);
	CHECK_EQ(json_object_get_int(o), 12);
	json_object_put(o);
	CHECK_EQ(qmp_json_parse("{\"a\"", 4, 0, &o, NULL), -EPROTO);
}

CHECK_MAIN(TEST(test_cases), TEST(test_controls), TEST(test_second_bytes),
	   TEST(test_describe), TEST(test_reset), TEST(test_weight),
	   TEST(test_qemu_verdicts), TEST(test_build_types))
