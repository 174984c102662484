/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The QMP server's strict lexical check of a request, run on its bytes as
 * they arrive and before json-c sees them (the server's input,
 * vmm/api/qmp_input.c, feeds json-c only the bytes found good).  json-c
 * accepts raw control characters in strings and checks UTF-8 only for its
 * shape; this checks what RFC 8259 and QEMU's JSON lexer and parser
 * refuse:
 *  - a raw byte below 0x20 inside a string (a line end inside a string is
 *    how a request cut short swallows the next one: refused at that byte,
 *    the server resumes after the line end);
 *  - bytes that are not UTF-8 (RFC 3629), anywhere in the request: a
 *    continuation byte without a lead byte, overlong forms (C0, C1, E0 80-9F,
 *    F0 80-8F), surrogates (ED A0-BF), code points above U+10FFFF (F4 90-BF,
 *    F5-F7), bytes that never occur (F8-FF), sequences cut short;
 *  - a \u escape that is half of a UTF-16 surrogate pair;
 *  - a request that json-c would turn into more than a given number of
 *    bytes (the text is no measure: "[{},{},...]" takes 260 times its
 *    length), so what one request costs is bounded while it is parsed.
 *
 * It follows json-c's own syntax (single-quoted strings, C and C++
 * comments) closely enough to know where strings are, and leaves every
 * other error to json-c: whatever json-c finds earlier in the request is
 * reported first.  Scanning is incremental: a request may arrive a byte at
 * a time.
 */
#ifndef HOTVM_QMP_LEX_H
#define HOTVM_QMP_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What is wrong with the byte qmp_lex_scan() stopped at. */
enum qmp_lex_error {
	QMP_LEX_OK,
	QMP_LEX_CONTROL,	   /* a raw control character in a string */
	QMP_LEX_UTF8_CONTINUATION, /* 80-BF where a character starts */
	QMP_LEX_UTF8_OVERLONG,	   /* C0, C1; E0 80-9F; F0 80-8F */
	QMP_LEX_UTF8_SURROGATE,	   /* ED A0-BF: U+D800..U+DFFF */
	QMP_LEX_UTF8_TOO_BIG,	   /* F4 90-BF, F5-F7: above U+10FFFF */
	QMP_LEX_UTF8_BAD_BYTE,	   /* F8-FF: never in UTF-8 */
	QMP_LEX_UTF8_SHORT,	   /* a sequence cut short by this byte */
	QMP_LEX_LONE_SURROGATE,	   /* \uD800-\uDFFF not in a proper pair */
	QMP_LEX_TOO_BIG,	   /* parsed, more than max_weight bytes */
};

/*
 * What json-c 0.16 allocates for a parsed value, about (x86-64, glibc,
 * measured): the weight of the text scanned so far, and the server's
 * estimate of a parsed request (vmm/api/qmp_dispatch.c).
 */
#define QMP_LEX_COST_OBJECT  800 /* empty, with its hash table */
#define QMP_LEX_COST_MEMBER  96	 /* one more in an object, and its key */
#define QMP_LEX_COST_ARRAY   160
#define QMP_LEX_COST_ELEMENT 8	/* one more in an array */
#define QMP_LEX_COST_STRING  88 /* and its length */
#define QMP_LEX_COST_INT     72 /* a boolean too */
#define QMP_LEX_COST_DOUBLE  104

struct qmp_lex {
	uint8_t state;	/* where in the text: outside, string, comment... */
	uint8_t quote;	/* the quote that ends the string: '"' or '\'' */
	uint8_t need;	/* UTF-8 continuation bytes still to come */
	uint8_t lo, hi; /* the range the next continuation byte must be in */
	uint8_t hex;	/* \u escape: hex digits still to come */
	bool high;	/* the \u escape being read follows a high surrogate */
	uint16_t unit;	/* \u escape: its value so far */
	size_t at;	/* bytes scanned since qmp_lex_reset() */
	size_t seq;	/* offset of the UTF-8 sequence being read */
	size_t esc;	/* offset of the \u escape (of a pair: the high half) */
	size_t start;	/* after an error: the offset it names */
	/* The estimated parsed size of what was scanned; 0: no limit. */
	size_t weight, max_weight;
	enum qmp_lex_error error;
	uint8_t byte; /* the byte qmp_lex_scan() stopped at */
};

/*
 * Before the first byte of a request: a request whose estimated parsed
 * size passes max_weight bytes (0: no limit) is refused.
 */
void qmp_lex_reset(struct qmp_lex *lx, size_t max_weight);

/*
 * Scans the next n bytes of the request.  Returns n if they are good so
 * far, or the index of the first bad byte: then lx->error says why and
 * qmp_lex_describe() words it; reset before scanning again.
 */
size_t qmp_lex_scan(struct qmp_lex *lx, const char *p, size_t n);

/*
 * The error, for a reply: what is wrong and at which byte of the request
 * (the start of the bad character or escape), never the bytes themselves
 * (they are not UTF-8).
 */
void qmp_lex_describe(const struct qmp_lex *lx, char *buf, size_t len);

#endif
