// SPDX-License-Identifier: GPL-2.0-only
/*
 * A JSON text checked against QEMU's grammar as it arrives (see
 * vmm/util/qmp_lex.h): a state machine over the bytes that knows the
 * tokens (strings and their escapes, numbers, literals), a pushdown of
 * objects and arrays that knows which token may come next, and a UTF-8
 * decoder that knows which second bytes each lead byte allows (RFC 3629,
 * section 4).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qmp_lex.h"

/* Where in the text the next byte falls. */
enum {
	LX_OUT,	    /* between tokens */
	LX_STR,	    /* in a string */
	LX_ESC,	    /* in a string, after a backslash */
	LX_HEX,	    /* in a \u escape's four hex digits */
	LX_PAIR,    /* after a high surrogate escape: a backslash must follow */
	LX_PAIR_U,  /* ... then a 'u' */
	LX_SIGN,    /* a number: after its '-' */
	LX_ZERO,    /* ... its integer part is 0 */
	LX_INT,	    /* ... in its integer part, 1-9 first */
	LX_FRAC0,   /* ... after its '.' */
	LX_FRAC,    /* ... in its fraction */
	LX_EXP0,    /* ... after its 'e' */
	LX_EXPSIGN, /* ... after the exponent's sign */
	LX_EXP,	    /* ... in its exponent */
	LX_WORD,    /* a literal: true, false or null */
};

/* What the grammar wants next, between tokens. */
enum {
	EX_VALUE,	   /* a value: first, after ':', after ',' in [] */
	EX_VALUE_OR_CLOSE, /* after '[' */
	EX_KEY_OR_CLOSE,   /* after '{' */
	EX_KEY,		   /* after ',' in {} */
	EX_COLON,	   /* after a key */
	EX_NEXT,	   /* after a value in {} or []: ',' or the close */
};

/* Any non-ASCII character, as the state machine sees it. */
#define LX_WIDE 0x80

void qmp_lex_reset(struct qmp_lex *lx, size_t max_weight)
{
	*lx = (struct qmp_lex){
		.state = LX_OUT,
		.expect = EX_VALUE,
		.lo = 0x80,
		.hi = 0xbf,
		.max_weight = max_weight,
	};
}

static int hex_value(unsigned int b)
{
	if (b >= '0' && b <= '9')
		return (int)b - '0';
	if (b >= 'a' && b <= 'f')
		return (int)b - 'a' + 10;
	if (b >= 'A' && b <= 'F')
		return (int)b - 'A' + 10;
	return -1;
}

static bool is_digit(unsigned int b)
{
	return b >= '0' && b <= '9';
}

/* U+FDD0..U+FDEF and the last two of every plane: QEMU refuses them. */
static bool noncharacter(uint32_t cp)
{
	return (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe;
}

static bool in_object(const struct qmp_lex *lx)
{
	return lx->depth && (lx->nest >> (lx->depth - 1) & 1);
}

/* A value ended: the text, or its container goes on. */
static void value_done(struct qmp_lex *lx)
{
	lx->state = LX_OUT;
	if (lx->depth)
		lx->expect = EX_NEXT;
	else
		lx->done = true;
}

static enum qmp_lex_error syntax(struct qmp_lex *lx, const char *why)
{
	lx->why = why;
	return QMP_LEX_SYNTAX;
}

/* The four digits of a \u escape are in: is the code unit allowed there? */
static enum qmp_lex_error escape_done(struct qmp_lex *lx)
{
	bool low = lx->unit >= 0xdc00 && lx->unit <= 0xdfff;

	lx->state = LX_STR;
	if (lx->high) {
		lx->high = false;
		if (!low)
			return QMP_LEX_LONE_SURROGATE;
		/* The pair's code point ends in FFFE or FFFF. */
		if ((lx->hi_unit & 0x3f) == 0x3f && (lx->unit & 0x3fe) == 0x3fe)
			return QMP_LEX_NONCHARACTER;
		return QMP_LEX_OK;
	}
	if (low)
		return QMP_LEX_LONE_SURROGATE;
	if (lx->unit >= 0xd800 && lx->unit <= 0xdbff) {
		/* lx->esc stays at the high half's backslash. */
		lx->high = true;
		lx->hi_unit = lx->unit;
		lx->state = LX_PAIR;
		return QMP_LEX_OK;
	}
	if (!lx->unit)
		return QMP_LEX_NUL;
	return noncharacter(lx->unit) ? QMP_LEX_NONCHARACTER : QMP_LEX_OK;
}

static enum qmp_lex_error open_container(struct qmp_lex *lx, bool object)
{
	if (lx->depth >= QMP_LEX_MAX_DEPTH)
		return QMP_LEX_DEPTH;
	if (object)
		lx->nest |= 1u << lx->depth;
	else
		lx->nest &= ~(1u << lx->depth);
	lx->depth++;
	lx->expect = object ? EX_KEY_OR_CLOSE : EX_VALUE_OR_CLOSE;
	lx->weight += object ? QMP_LEX_COST_OBJECT : QMP_LEX_COST_ARRAY;
	return QMP_LEX_OK;
}

static void close_container(struct qmp_lex *lx)
{
	lx->depth--;
	value_done(lx);
}

static void open_string(struct qmp_lex *lx, unsigned int quote, bool key)
{
	lx->state = LX_STR;
	lx->quote = (uint8_t)quote;
	lx->key = key;
	lx->weight += QMP_LEX_COST_STRING;
}

/* A value starts with b, where the grammar wants one. */
static enum qmp_lex_error open_value(struct qmp_lex *lx, unsigned int b)
{
	lx->tok = lx->at;
	if (b == '{' || b == '[')
		return open_container(lx, b == '{');
	if (b == '"' || b == '\'') {
		open_string(lx, b, false);
	} else if (b == '-') {
		lx->state = LX_SIGN;
	} else if (b == '0') {
		lx->state = LX_ZERO;
	} else if (is_digit(b)) {
		lx->state = LX_INT;
	} else if (b >= 'a' && b <= 'z') {
		lx->state = LX_WORD;
		lx->word[0] = (char)b;
		lx->word_len = 1;
	} else {
		return syntax(lx, "a value");
	}
	return QMP_LEX_OK;
}

/* A byte between tokens. */
static enum qmp_lex_error between(struct qmp_lex *lx, unsigned int b)
{
	if (b == ' ' || b == '\t' || b == '\r' || b == '\n')
		return QMP_LEX_OK;
	if (b < 0x20 || (!strchr("{}[]:,\"'-", (int)b) && !is_digit(b) &&
			 !(b >= 'a' && b <= 'z')))
		return QMP_LEX_STRAY;
	switch (lx->expect) {
	case EX_VALUE_OR_CLOSE:
		if (b == ']') {
			close_container(lx);
			return QMP_LEX_OK;
		}
		return open_value(lx, b);
	case EX_VALUE:
		if (b == ']' && lx->depth && !in_object(lx))
			return syntax(lx, "a value after ',', not ']' (a "
					  "trailing comma)");
		return open_value(lx, b);
	case EX_KEY_OR_CLOSE:
	case EX_KEY:
		if (b == '}' && lx->expect == EX_KEY)
			return syntax(lx, "a key after ',', not '}' (a "
					  "trailing comma)");
		if (b == '}') {
			close_container(lx);
			return QMP_LEX_OK;
		}
		if (b != '"' && b != '\'')
			return syntax(lx, "a string as the member's key");
		lx->tok = lx->at;
		open_string(lx, b, true);
		return QMP_LEX_OK;
	case EX_COLON:
		if (b != ':')
			return syntax(lx, "':' after the member's key");
		lx->expect = EX_VALUE;
		return QMP_LEX_OK;
	default: /* EX_NEXT */
		if (b == ',') {
			lx->expect = in_object(lx) ? EX_KEY : EX_VALUE;
			lx->weight += QMP_LEX_COST_MEMBER;
			return QMP_LEX_OK;
		}
		if (b == (in_object(lx) ? '}' : ']')) {
			close_container(lx);
			return QMP_LEX_OK;
		}
		return syntax(lx, in_object(lx) ? "',' or '}'" : "',' or ']'");
	}
}

/* A literal ended: is it one? */
static enum qmp_lex_error word_done(struct qmp_lex *lx)
{
	static const char *const words[] = { "true", "false", "null" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (lx->word_len == strlen(words[i]) &&
		    !memcmp(lx->word, words[i], lx->word_len)) {
			value_done(lx);
			return QMP_LEX_OK;
		}
	return QMP_LEX_KEYWORD;
}

/*
 * In a number or a literal: b continues it (true), or ends it and is the
 * next token's (false).
 */
static bool token_goes_on(struct qmp_lex *lx, unsigned int b,
			  enum qmp_lex_error *e)
{
	bool exp = b == 'e' || b == 'E';

	*e = QMP_LEX_OK;
	switch (lx->state) {
	case LX_SIGN:
		if (!is_digit(b))
			*e = QMP_LEX_NUMBER;
		lx->state = b == '0' ? LX_ZERO : LX_INT;
		return true;
	case LX_ZERO:
		if (is_digit(b))
			*e = QMP_LEX_NUMBER; /* a leading zero */
		else if (b == '.')
			lx->state = LX_FRAC0;
		return is_digit(b) || b == '.';
	case LX_INT:
		lx->state = b == '.' ? LX_FRAC0 : exp ? LX_EXP0 : LX_INT;
		return is_digit(b) || b == '.' || exp;
	case LX_FRAC0:
	case LX_EXPSIGN:
		if (!is_digit(b))
			*e = QMP_LEX_NUMBER;
		lx->state = lx->state == LX_FRAC0 ? LX_FRAC : LX_EXP;
		return true;
	case LX_FRAC:
		lx->state = exp ? LX_EXP0 : LX_FRAC;
		return is_digit(b) || exp;
	case LX_EXP0:
		if (!is_digit(b) && b != '-' && b != '+')
			*e = QMP_LEX_NUMBER;
		lx->state = is_digit(b) ? LX_EXP : LX_EXPSIGN;
		return true;
	case LX_EXP:
		return is_digit(b);
	default: /* LX_WORD */
		if (b < 'a' || b > 'z')
			return false;
		if (lx->word_len >= 5) /* longer than "false" */
			*e = QMP_LEX_KEYWORD;
		else
			lx->word[lx->word_len++] = (char)b;
		return true;
	}
}

/* A character in a string, outside an escape. */
static enum qmp_lex_error in_string(struct qmp_lex *lx, unsigned int b)
{
	if (b < 0x20)
		return QMP_LEX_CONTROL;
	if (b == lx->quote) {
		if (lx->key) {
			lx->state = LX_OUT;
			lx->expect = EX_COLON;
		} else {
			value_done(lx);
		}
	} else if (b == '\\') {
		lx->state = LX_ESC;
		lx->esc = lx->at;
	}
	return QMP_LEX_OK;
}

/* A \u escape's four hex digits come next. */
static enum qmp_lex_error open_hex(struct qmp_lex *lx)
{
	lx->state = LX_HEX;
	lx->hex = 4;
	lx->unit = 0;
	return QMP_LEX_OK;
}

/* The character after a backslash in a string. */
static enum qmp_lex_error in_escape(struct qmp_lex *lx, unsigned int b)
{
	if (b < 0x20)
		return QMP_LEX_CONTROL;
	if (b == 'u')
		return open_hex(lx);
	if (b >= LX_WIDE || !strchr("\"'\\/bfnrt", (int)b))
		return QMP_LEX_ESCAPE;
	lx->state = LX_STR;
	return QMP_LEX_OK;
}

/* One of a \u escape's hex digits. */
static enum qmp_lex_error in_hex(struct qmp_lex *lx, unsigned int b)
{
	int v;

	if (b < 0x20)
		return QMP_LEX_CONTROL;
	v = hex_value(b);
	if (v < 0)
		return QMP_LEX_ESCAPE;
	lx->unit = (uint16_t)(lx->unit << 4 | v);
	return --lx->hex ? QMP_LEX_OK : escape_done(lx);
}

/* After a high surrogate escape: the low half's backslash, then its 'u'. */
static enum qmp_lex_error in_pair(struct qmp_lex *lx, unsigned int b)
{
	if (lx->state == LX_PAIR) {
		if (b != '\\')
			return QMP_LEX_LONE_SURROGATE;
		lx->state = LX_PAIR_U;
		return QMP_LEX_OK;
	}
	if (b != 'u')
		return QMP_LEX_LONE_SURROGATE;
	return open_hex(lx);
}

/*
 * In a number or a literal: b goes on with it, or ends it; then b is the
 * next token's, or the next text's if the value ended the text
 * (*consumed false).
 */
static enum qmp_lex_error in_token(struct qmp_lex *lx, unsigned int b,
				   bool *consumed)
{
	enum qmp_lex_error e;

	if (token_goes_on(lx, b, &e))
		return e;
	if (lx->state == LX_WORD) {
		e = word_done(lx);
		if (e)
			return e;
	} else {
		value_done(lx);
	}
	if (lx->done) {
		*consumed = false;
		return QMP_LEX_OK;
	}
	return between(lx, b);
}

/*
 * One character (b, or LX_WIDE for any non-ASCII one) through the states.
 * *consumed: false when b ended a number or literal that ended the text
 * (b is the next text's).
 */
static enum qmp_lex_error step(struct qmp_lex *lx, unsigned int b,
			       bool *consumed)
{
	*consumed = true;
	switch (lx->state) {
	case LX_OUT:
		return between(lx, b);
	case LX_STR:
		return in_string(lx, b);
	case LX_ESC:
		return in_escape(lx, b);
	case LX_HEX:
		return in_hex(lx, b);
	case LX_PAIR:
	case LX_PAIR_U:
		return in_pair(lx, b);
	default: /* a number or a literal */
		return in_token(lx, b, consumed);
	}
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
		lx->cp = b & 0x1f;
	} else if (b < 0xf0) {
		lx->need = 2;
		lx->cp = b & 0x0f;
		if (b == 0xe0)
			lx->lo = 0xa0; /* below: U+0000..U+07FF, overlong */
		else if (b == 0xed)
			lx->hi = 0x9f; /* above: U+D800..U+DFFF */
	} else if (b < 0xf5) {
		lx->need = 3;
		lx->cp = b & 0x07;
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
static enum qmp_lex_error continuation(struct qmp_lex *lx, uint8_t b)
{
	if (b >= lx->lo && b <= lx->hi) {
		lx->lo = 0x80;
		lx->hi = 0xbf;
		lx->cp = lx->cp << 6 | (b & 0x3f);
		if (--lx->need == 0 && noncharacter(lx->cp))
			return QMP_LEX_NONCHARACTER;
		return QMP_LEX_OK;
	}
	if (b < 0x80 || b > 0xbf)
		return QMP_LEX_UTF8_SHORT;
	/* A continuation byte, outside the lead byte's narrower range. */
	if (lx->lo == 0xa0 || lx->lo == 0x90)
		return QMP_LEX_UTF8_OVERLONG;
	return lx->hi == 0x9f ? QMP_LEX_UTF8_SURROGATE : QMP_LEX_UTF8_TOO_BIG;
}

/* The offset an error names: the bad character's, escape's or token's. */
static size_t error_start(const struct qmp_lex *lx, enum qmp_lex_error e)
{
	switch (e) {
	case QMP_LEX_LONE_SURROGATE:
	case QMP_LEX_NUL:
	case QMP_LEX_ESCAPE:
	case QMP_LEX_NONCHARACTER: /* escaped; written, it is the below */
		return lx->esc;
	case QMP_LEX_KEYWORD:
		return lx->tok;
	case QMP_LEX_UTF8_CONTINUATION:
	case QMP_LEX_UTF8_OVERLONG:
	case QMP_LEX_UTF8_SURROGATE:
	case QMP_LEX_UTF8_TOO_BIG:
	case QMP_LEX_UTF8_BAD_BYTE:
	case QMP_LEX_UTF8_SHORT:
		return lx->seq;
	default:
		return lx->at;
	}
}

size_t qmp_lex_scan(struct qmp_lex *lx, const char *p, size_t n)
{
	size_t i;

	if (lx->error || lx->done)
		return 0;
	for (i = 0; i < n; i++, lx->at++) {
		uint8_t b = (uint8_t)p[i];
		bool consumed = true;
		enum qmp_lex_error e;

		lx->byte = b;
		lx->weight++;
		if (lx->need) {
			e = continuation(lx, b);
			if (e) {
				lx->error = e;
				lx->start = lx->seq;
				return i;
			}
		} else if (b >= 0x80) {
			lx->seq = lx->at;
			e = lead(lx, b);
			/* The character is whole later; its place is here. */
			if (!e)
				e = step(lx, LX_WIDE, &consumed);
		} else {
			e = step(lx, b, &consumed);
		}
		if (!e && lx->max_weight && lx->weight > lx->max_weight)
			e = QMP_LEX_TOO_BIG;
		if (e) {
			lx->error = e;
			lx->start = error_start(lx, e);
			return i;
		}
		if (lx->done) {
			if (!consumed)
				return i;
			lx->at++;
			return i + 1;
		}
	}
	return n;
}

/* An error inside a string: a raw control character or a bad escape. */
static void describe_string(const struct qmp_lex *lx, struct hv_err *err)
{
	size_t at = lx->start;

	switch (lx->error) {
	case QMP_LEX_CONTROL:
		hv_err_set(err, -EPROTO,
			   "control character U+%04X in a string at offset %zu "
			   "of the request (write it as an escape, \\u%04X)",
			   lx->byte, at, lx->byte);
		break;
	case QMP_LEX_LONE_SURROGATE:
		hv_err_set(
			err, -EPROTO,
			"the \\u escape at offset %zu of the request is half "
			"of a UTF-16 surrogate pair",
			at);
		break;
	case QMP_LEX_NUL:
		hv_err_set(
			err, -EPROTO,
			"\\u0000 at offset %zu of the request: U+0000 is not "
			"taken in a string",
			at);
		break;
	case QMP_LEX_NONCHARACTER:
		hv_err_set(err, -EPROTO,
			   "a Unicode noncharacter (U+FDD0..U+FDEF, U+xFFFE, "
			   "U+xFFFF) at offset %zu of the request",
			   at);
		break;
	default: /* QMP_LEX_ESCAPE */
		hv_err_set(
			err, -EPROTO,
			"invalid escape sequence in a string at offset %zu "
			"of the request (\\\" \\' \\\\ \\/ \\b \\f \\n \\r \\t "
			"\\uXXXX)",
			at);
		break;
	}
}

/* A byte that starts no token. */
static void describe_stray(const struct qmp_lex *lx, struct hv_err *err)
{
	if (lx->byte > 0x20 && lx->byte < 0x7f)
		hv_err_set(err, -EPROTO,
			   "stray '%c' at offset %zu of the request (no "
			   "comments, NaN or Infinity; true, false and "
			   "null in lower case)",
			   lx->byte, lx->start);
	else
		hv_err_set(err, -EPROTO,
			   "stray byte 0x%02X at offset %zu of the request",
			   lx->byte, lx->start);
}

/* An error between strings: a token, or where the grammar put it. */
static void describe_token(const struct qmp_lex *lx, struct hv_err *err)
{
	size_t at = lx->start;

	switch (lx->error) {
	case QMP_LEX_NUMBER:
		hv_err_set(err, -EPROTO,
			   "malformed number at offset %zu of the request (a "
			   "leading zero, or no digit where one is due)",
			   at);
		break;
	case QMP_LEX_KEYWORD:
		hv_err_set(
			err, -EPROTO,
			"invalid literal '%.*s' at offset %zu of the request "
			"(true, false and null, in lower case)",
			(int)lx->word_len, lx->word, at);
		break;
	case QMP_LEX_SYNTAX:
		hv_err_set(err, -EPROTO,
			   "expected %s at offset %zu of the request", lx->why,
			   at);
		break;
	default: /* QMP_LEX_DEPTH */
		hv_err_set(err, -EPROTO,
			   "objects and arrays nested deeper than %d at offset "
			   "%zu of the request",
			   QMP_LEX_MAX_DEPTH, at);
		break;
	}
}

/* A byte that breaks UTF-8. */
static void describe_utf8(const struct qmp_lex *lx, struct hv_err *err)
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

	hv_err_set(err, -EPROTO,
		   "invalid UTF-8 at offset %zu of the request: %s (byte "
		   "0x%02X)",
		   lx->start, utf8[lx->error], lx->byte);
}

int qmp_lex_describe(const struct qmp_lex *lx, struct hv_err *err)
{
	switch (lx->error) {
	case QMP_LEX_OK:
		hv_err_set(err, -EPROTO, "no error");
		break;
	case QMP_LEX_TOO_BIG:
		hv_err_set(
			err, -EPROTO,
			"request too big: parsed, it would take more than "
			"%zu KiB (the read-ahead limit per client) by offset "
			"%zu; send it in smaller requests",
			(lx->max_weight + 1023) / 1024, lx->start);
		break;
	case QMP_LEX_CONTROL:
	case QMP_LEX_LONE_SURROGATE:
	case QMP_LEX_NUL:
	case QMP_LEX_NONCHARACTER:
	case QMP_LEX_ESCAPE:
		describe_string(lx, err);
		break;
	case QMP_LEX_STRAY:
		describe_stray(lx, err);
		break;
	case QMP_LEX_NUMBER:
	case QMP_LEX_KEYWORD:
	case QMP_LEX_SYNTAX:
	case QMP_LEX_DEPTH:
		describe_token(lx, err);
		break;
	default:
		describe_utf8(lx, err);
		break;
	}
	return -EPROTO;
}
