/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The grammar of a JSON text as hotvm takes it from a client, checked on
 * the bytes as they arrive, before anything is built from them (the QMP
 * server's input, vmm/api/qmp_input.c; the guest agent's lines,
 * vmm/agent/qga.c).  It is QEMU's JSON grammar (qobject/json-lexer.c and
 * json-parser.c), so that what QEMU's monitor takes hotvm takes:
 *  - RFC 8259 JSON: whitespace is space, tab, CR and LF; the literals are
 *    true, false and null in lower case; a number is
 *    -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)? except that QEMU's
 *    lexer ends a number at 0 before an exponent ("0e5" is refused);
 *  - QEMU's extensions: strings in single quotes as well as double, and
 *    the escape \' in either;
 *  - and nothing else: no comments, no NaN or Infinity, no trailing comma,
 *    no leading zero, no upper-case literal, no byte outside a token;
 *  - strings hold UTF-8 (RFC 3629) and no raw control character, and no
 *    Unicode noncharacter (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF), written or
 *    escaped; a \u escape is never half a surrogate pair.
 * Narrowings of QEMU's verdict: U+0000, which QEMU keeps as modified
 * UTF-8 (C0 80) and hotvm's C strings cannot hold, is refused both as
 * \u0000 (QEMU takes it, so "quit\u0000x" is an unknown command there)
 * and as the overlong C0 80 (QEMU's one overlong form); objects and
 * arrays nest at most QMP_LEX_MAX_DEPTH deep (QEMU: 1024).
 *
 * It also bounds what one text costs once built (max_weight, below), and
 * finds where a text ends: scanning stops after the first complete value,
 * so the rest of the buffer is the next request's.  An error is found at
 * the byte that makes the text impossible, so a request cut short at a
 * line end is refused where the next one starts.  Scanning is
 * incremental: a text may arrive a byte at a time.
 */
#ifndef HOTVM_QMP_LEX_H
#define HOTVM_QMP_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hv_err.h"

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
	QMP_LEX_TOO_BIG,	   /* built, more than max_weight bytes */
	QMP_LEX_NUL,		   /* \u0000 */
	QMP_LEX_NONCHARACTER,	   /* U+FDD0..U+FDEF, U+xFFFE, U+xFFFF */
	QMP_LEX_ESCAPE,	 /* \ then not one of "'\/bfnrtu; \u, not hex */
	QMP_LEX_STRAY,	 /* a byte that starts no token */
	QMP_LEX_NUMBER,	 /* a leading zero, or a number cut short */
	QMP_LEX_KEYWORD, /* a word other than true, false, null */
	QMP_LEX_SYNTAX,	 /* a token where the grammar has no place */
	QMP_LEX_DEPTH,	 /* nested deeper than QMP_LEX_MAX_DEPTH */
};

/* Objects and arrays nested deeper are refused (json-c's default). */
#define QMP_LEX_MAX_DEPTH 32

/*
 * What json-c 0.16 allocates for a built value, about (x86-64, glibc,
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
	uint8_t state;	/* where in the text: between tokens, string... */
	uint8_t expect; /* between tokens: what the grammar wants next */
	uint8_t quote;	/* the quote that ends the string: '"' or '\'' */
	uint8_t need;	/* UTF-8 continuation bytes still to come */
	uint8_t lo, hi; /* the range the next continuation byte must be in */
	uint8_t hex;	/* \u escape: hex digits still to come */
	bool high;	/* the \u escape being read follows a high surrogate */
	bool key;	/* the string being read is an object's key */
	bool done;	/* a whole value was scanned: the text ends there */
	uint8_t depth;
	uint32_t nest;	  /* per depth: 1 an object, 0 an array */
	uint16_t unit;	  /* \u escape: its value so far */
	uint16_t hi_unit; /* the high surrogate before it */
	uint32_t cp;	  /* the UTF-8 character being read */
	char word[8];	  /* the literal being read */
	uint8_t word_len;
	size_t at;    /* bytes scanned since qmp_lex_reset() */
	size_t seq;   /* offset of the UTF-8 sequence being read */
	size_t esc;   /* offset of the \u escape (of a pair: the high half) */
	size_t tok;   /* offset of the number or literal being read */
	size_t start; /* after an error: the offset it names */
	/* The estimated built size of what was scanned; 0: no limit. */
	size_t weight, max_weight;
	enum qmp_lex_error error;
	const char *why; /* QMP_LEX_SYNTAX: what the grammar wanted */
	uint8_t byte;	 /* the byte qmp_lex_scan() stopped at */
};

/*
 * Before the first byte of a text: a text whose estimated built size
 * passes max_weight bytes (0: no limit) is refused.
 */
void qmp_lex_reset(struct qmp_lex *lx, size_t max_weight);

/*
 * Scans the next n bytes of the text.  Returns n if they are good so far
 * and the value goes on; with lx->done set, the length of the rest of the
 * value in them (the text ends there, the bytes after it are not
 * scanned); or the index of the first bad byte: then lx->error says why
 * and qmp_lex_describe() words it.  Reset before scanning again.
 */
size_t qmp_lex_scan(struct qmp_lex *lx, const char *p, size_t n);

/*
 * The error, for a reply: what is wrong and at which byte of the text
 * (the start of the bad character, escape or token), never the bytes
 * themselves (they may not be UTF-8), set in @err.  Returns -EPROTO.
 */
int qmp_lex_describe(const struct qmp_lex *lx, struct hv_err *err);

#endif
