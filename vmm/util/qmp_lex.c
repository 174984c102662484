// SPDX-License-Identifier: GPL-2.0-only
/*
 * A request's bytes checked strictly before json-c parses them (see
 * vmm/util/qmp_lex.h): a small state machine over the text that knows where
 * strings, escapes and comments are, and a UTF-8 decoder that knows which
 * second bytes each lead byte allows (RFC 3629, section 4).
 */
#include <stdio.h>
#include <string.h>

#include "qmp_lex.h"

/* Where in the text the next byte falls. */
enum {
	LX_OUT,	   /* between tokens (or inside one json-c judges) */
	LX_SLASH,  /* after a '/' between tokens: a comment may start */
	LX_LINE,   /* in a // comment */
	LX_BLOCK,  /* in a block comment */
	LX_STAR,   /* in a block comment, after a '*' */
	LX_STR,	   /* in a string */
	LX_ESC,	   /* in a string, after a backslash */
	LX_HEX,	   /* in a \u escape's four hex digits */
	LX_PAIR,   /* after a high surrogate escape: a backslash must follow */
	LX_PAIR_U, /* ... then a 'u' */
};

/* Any non-ASCII character, as the state machine sees it. */
#define LX_WIDE 0x80

void qmp_lex_reset(struct qmp_lex *lx, size_t max_weight)
{
	*lx = (struct qmp_lex){
		.state = LX_OUT,
		.lo = 0x80,
		.hi = 0xbf,
		.max_weight = max_weight,
	};
}

static int hex_value(uint8_t b)
{
	if (b >= '0' && b <= '9')
		return b - '0';
	if (b >= 'a' && b <= 'f')
		return b - 'a' + 10;
	if (b >= 'A' && b <= 'F')
		return b - 'A' + 10;
	return -1;
}

/* The four digits of a \u escape are in: is the code unit allowed there? */
static enum qmp_lex_error escape_done(struct qmp_lex *lx)
{
	bool low = lx->unit >= 0xdc00 && lx->unit <= 0xdfff;

	if (lx->high) {
		lx->high = false;
		lx->state = LX_STR;
		return low ? QMP_LEX_OK : QMP_LEX_LONE_SURROGATE;
	}
	if (low)
		return QMP_LEX_LONE_SURROGATE;
	if (lx->unit >= 0xd800 && lx->unit <= 0xdbff) {
		/* lx->esc stays at the high half's backslash. */
		lx->high = true;
		lx->state = LX_PAIR;
		return QMP_LEX_OK;
	}
	lx->state = LX_STR;
	return QMP_LEX_OK;
}

/* One character (b, or LX_WIDE for any non-ASCII one) through the states. */
static enum qmp_lex_error step(struct qmp_lex *lx, unsigned int b)
{
	int v;

	switch (lx->state) {
	case LX_OUT:
		/*
		 * The weight: every byte counts one (strings, numbers);
		 * these, what json-c allocates besides.  A value after a
		 * comma is taken for a number; a string adds its own.
		 */
		if (b == '"' || b == '\'') {
			lx->state = LX_STR;
			lx->quote = (uint8_t)b;
			lx->weight += QMP_LEX_COST_STRING;
		} else if (b == '/') {
			lx->state = LX_SLASH;
		} else if (b == '{') {
			lx->weight += QMP_LEX_COST_OBJECT;
		} else if (b == '[') {
			lx->weight += QMP_LEX_COST_ARRAY;
		} else if (b == ',') {
			lx->weight += QMP_LEX_COST_MEMBER;
		}
		break;
	case LX_SLASH:
		/* Anything else after '/' is json-c's error to report. */
		lx->state = b == '/' ? LX_LINE : b == '*' ? LX_BLOCK : LX_OUT;
		break;
	case LX_LINE:
		if (b == '\n')
			lx->state = LX_OUT;
		break;
	case LX_BLOCK:
	case LX_STAR:
		lx->state = b == '*'			       ? LX_STAR
			    : b == '/' && lx->state == LX_STAR ? LX_OUT
							       : LX_BLOCK;
		break;
	case LX_STR:
		if (b < 0x20)
			return QMP_LEX_CONTROL;
		if (b == lx->quote) {
			lx->state = LX_OUT;
		} else if (b == '\\') {
			lx->state = LX_ESC;
			lx->esc = lx->at;
		}
		break;
	case LX_ESC:
		if (b < 0x20)
			return QMP_LEX_CONTROL;
		if (b == 'u') {
			lx->state = LX_HEX;
			lx->hex = 4;
			lx->unit = 0;
		} else {
			lx->state = LX_STR; /* an unknown escape: json-c's */
		}
		break;
	case LX_HEX:
		if (b < 0x20)
			return QMP_LEX_CONTROL;
		v = b < LX_WIDE ? hex_value((uint8_t)b) : -1;
		if (v < 0) {
			/* Not a hex digit: json-c's error, at this byte. */
			lx->state = LX_STR;
			lx->high = false;
			break;
		}
		lx->unit = (uint16_t)(lx->unit << 4 | v);
		if (!--lx->hex)
			return escape_done(lx);
		break;
	case LX_PAIR:
		if (b != '\\')
			return QMP_LEX_LONE_SURROGATE;
		lx->state = LX_PAIR_U;
		break;
	case LX_PAIR_U:
		if (b != 'u')
			return QMP_LEX_LONE_SURROGATE;
		lx->state = LX_HEX;
		lx->hex = 4;
		lx->unit = 0;
		break;
	}
	return QMP_LEX_OK;
}

/*
 * A byte where a character starts, at or above 0x80: how many continuation
 * bytes follow and the range of the first (the others are 80-BF).
 */
static enum qmp_lex_error lead(struct qmp_lex *lx, uint8_t b)
{
	lx->lo = 0x80;
	lx->hi = 0xbf;
	if (b < 0xc0)
		return QMP_LEX_UTF8_CONTINUATION;
	if (b < 0xc2)
		return QMP_LEX_UTF8_OVERLONG; /* C0, C1: U+0000..U+007F */
	if (b < 0xe0) {
		lx->need = 1;
	} else if (b < 0xf0) {
		lx->need = 2;
		if (b == 0xe0)
			lx->lo = 0xa0; /* below: U+0000..U+07FF, overlong */
		else if (b == 0xed)
			lx->hi = 0x9f; /* above: U+D800..U+DFFF */
	} else if (b < 0xf5) {
		lx->need = 3;
		if (b == 0xf0)
			lx->lo = 0x90; /* below: U+0000..U+FFFF, overlong */
		else if (b == 0xf4)
			lx->hi = 0x8f; /* above: beyond U+10FFFF */
	} else {
		return b < 0xf8 ? QMP_LEX_UTF8_TOO_BIG : QMP_LEX_UTF8_BAD_BYTE;
	}
	return QMP_LEX_OK;
}

/* A byte that should continue a sequence: what is wrong with it, if any. */
static enum qmp_lex_error continuation(const struct qmp_lex *lx, uint8_t b)
{
	if (b >= lx->lo && b <= lx->hi)
		return QMP_LEX_OK;
	if (b < 0x80 || b > 0xbf)
		return QMP_LEX_UTF8_SHORT;
	/* A continuation byte, outside the lead byte's narrower range. */
	if (lx->lo == 0xa0 || lx->lo == 0x90)
		return QMP_LEX_UTF8_OVERLONG;
	return lx->hi == 0x9f ? QMP_LEX_UTF8_SURROGATE : QMP_LEX_UTF8_TOO_BIG;
}

/* The offset an error names: the bad character's or escape's start. */
static size_t error_start(const struct qmp_lex *lx, enum qmp_lex_error e)
{
	switch (e) {
	case QMP_LEX_CONTROL:
	case QMP_LEX_TOO_BIG:
		return lx->at;
	case QMP_LEX_LONE_SURROGATE:
		return lx->esc;
	default:
		return lx->seq;
	}
}

size_t qmp_lex_scan(struct qmp_lex *lx, const char *p, size_t n)
{
	size_t i;

	if (lx->error)
		return 0;
	for (i = 0; i < n; i++, lx->at++) {
		uint8_t b = (uint8_t)p[i];
		enum qmp_lex_error e;

		lx->byte = b;
		lx->weight++;
		if (lx->need) {
			e = continuation(lx, b);
			if (!e) {
				lx->need--;
				lx->lo = 0x80;
				lx->hi = 0xbf;
			}
		} else if (b >= 0x80) {
			lx->seq = lx->at;
			e = lead(lx, b);
			/* The character is whole later; its place is here. */
			if (!e)
				e = step(lx, LX_WIDE);
		} else {
			e = step(lx, b);
		}
		if (!e && lx->max_weight && lx->weight > lx->max_weight)
			e = QMP_LEX_TOO_BIG;
		if (e) {
			lx->error = e;
			lx->start = error_start(lx, e);
			return i;
		}
	}
	return n;
}

void qmp_lex_describe(const struct qmp_lex *lx, char *buf, size_t len)
{
	static const char *const utf8[] = {
		[QMP_LEX_UTF8_CONTINUATION] = "a continuation byte where a "
					      "character starts",
		[QMP_LEX_UTF8_OVERLONG] = "an overlong encoding",
		[QMP_LEX_UTF8_SURROGATE] = "a UTF-16 surrogate "
					   "(U+D800..U+DFFF) encoded",
		[QMP_LEX_UTF8_TOO_BIG] = "a code point above U+10FFFF",
		[QMP_LEX_UTF8_BAD_BYTE] = "a byte that never occurs in UTF-8",
		[QMP_LEX_UTF8_SHORT] = "a sequence cut short",
	};

	switch (lx->error) {
	case QMP_LEX_OK:
		snprintf(buf, len, "no error");
		break;
	case QMP_LEX_CONTROL:
		snprintf(buf, len,
			 "control character U+%04X in a string at offset %zu "
			 "of the request (write it as an escape, \\u%04X)",
			 lx->byte, lx->start, lx->byte);
		break;
	case QMP_LEX_TOO_BIG:
		snprintf(buf, len,
			 "request too big: parsed, it would take more than "
			 "%zu KiB (the read-ahead limit per client) by offset "
			 "%zu; send it in smaller requests",
			 (lx->max_weight + 1023) / 1024, lx->start);
		break;
	case QMP_LEX_LONE_SURROGATE:
		snprintf(buf, len,
			 "the \\u escape at offset %zu of the request is half "
			 "of a UTF-16 surrogate pair",
			 lx->start);
		break;
	default:
		snprintf(buf, len,
			 "invalid UTF-8 at offset %zu of the request: %s (byte "
			 "0x%02X)",
			 lx->start, utf8[lx->error], lx->byte);
		break;
	}
}
