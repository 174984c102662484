// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP server's strict lexical check (vmm/util/qmp_lex.c), byte by byte:
 * raw control characters in strings (the ways a request cut short at a
 * line end would swallow the next one), the classes of invalid UTF-8, and
 * \u escapes that are half a surrogate pair; what is valid passes, in one
 * piece or split anywhere.  The server's use of it is in test_qmp.c
 * (test_lex_cut_short, test_lex_utf8).
 */
#include <stdbool.h>
#include <sys/types.h>

#include "check.h"
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
	OK_CASE("comments", "/* it's \"quoted\"\n * and 'this' */ {\"a\": "
			    "1} // don't \"\n{'b': 2}"),
	OK_CASE("comment star", "/** x **/ {\"a\": 1} /*/ still */"),
	OK_CASE("U+0080", "\"\xc2\x80\""),
	OK_CASE("U+07FF", "\"\xdf\xbf\""),
	OK_CASE("U+0800", "\"\xe0\xa0\x80\""),
	OK_CASE("U+D7FF", "\"\xed\x9f\xbf\""),
	OK_CASE("U+E000", "\"\xee\x80\x80\""),
	OK_CASE("U+FFFF", "\"\xef\xbf\xbf\""),
	OK_CASE("U+10000", "\"\xf0\x90\x80\x80\""),
	OK_CASE("U+10FFFF", "\"\xf4\x8f\xbf\xbf\""),
	OK_CASE("surrogate pair", "\"\\ud83d\\ude00 \\uD83D\\uDE00\""),
	OK_CASE("NUL escaped", "\"\\u0000\""),
	OK_CASE("not hex: json-c's", "\"\\u12x4\" \"\\q\""),
	OK_CASE("controls outside strings: json-c's", "{\x01}\x1b"),

	/*
	 * The 8 ways of cutting a request short at a line end: inside a
	 * string the line end is the error, so the server resumes after it;
	 * between tokens json-c finds the next request's '{' where it wants
	 * something else (ways 1 and 3), so the lexer has nothing to say.
	 */
	OK_CASE("cut 1: after the brace", "{\n" NEXT),
	BAD_CASE("cut 2: in a key", "{\"exec\n" NEXT, 6, 6, QMP_LEX_CONTROL),
	OK_CASE("cut 3: after a key", "{\"execute\"\n" NEXT),
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
	BAD_CASE("in a comment", "/* \xc0\x80 */ {}", 3, 3,
		 QMP_LEX_UTF8_OVERLONG),

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

/* Where scanning text in pieces of at most piece bytes stops. */
static size_t scan_pieces(struct qmp_lex *lx, const struct lex_case *c,
			  size_t piece)
{
	size_t at = 0;

	qmp_lex_reset(lx, 0);
	while (at < c->len) {
		size_t n = c->len - at < piece ? c->len - at : piece;
		size_t good = qmp_lex_scan(lx, c->text + at, n);

		at += good;
		if (good < n)
			return at;
	}
	return GOOD;
}

static void check_case(const struct lex_case *c)
{
	struct qmp_lex lx;
	size_t got = scan_pieces(&lx, c, c->len);

	if (got != c->bad || lx.error != c->error ||
	    (c->bad != GOOD && lx.start != c->start)) {
		printf("# %s: stopped at %zd (want %zd), error %d (want %d), "
		       "offset %zu (want %zu)\n",
		       c->name, (ssize_t)got, (ssize_t)c->bad, lx.error,
		       c->error, lx.start, c->start);
		check_failures++;
	}
	/* The same, fed in pieces of every size: incremental. */
	for (size_t piece = 1; piece < c->len; piece++) {
		size_t again = scan_pieces(&lx, c, piece);

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
		char buf[256];

		qmp_lex_reset(&lx, 0);
		CHECK(qmp_lex_scan(&lx, d[i].text, strlen(d[i].text)) <
		      strlen(d[i].text));
		qmp_lex_describe(&lx, buf, sizeof(buf));
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

CHECK_MAIN(TEST(test_cases), TEST(test_controls), TEST(test_second_bytes),
	   TEST(test_describe), TEST(test_reset), TEST(test_weight))
