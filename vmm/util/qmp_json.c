// SPDX-License-Identifier: GPL-2.0-only
/*
 * Builds json-c's tree of a text whose grammar is already checked
 * (qmp_json.h): a recursive descent that trusts the tokens' shapes (the
 * check bounds the depth) and only refuses a duplicate key.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qmp_json.h"
#include "qmp_lex.h"

struct build {
	const char *text, *p, *end;
	struct hv_err *err;
};

static void skip_ws(struct build *b)
{
	while (b->p < b->end && (*b->p == ' ' || *b->p == '\t' ||
				 *b->p == '\r' || *b->p == '\n'))
		b->p++;
}

static unsigned int hex4(const char *s)
{
	unsigned int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v = v << 4 | (unsigned int)(c <= '9'   ? c - '0'
					    : c <= 'F' ? c - 'A' + 10
						       : c - 'a' + 10);
	}
	return v;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * The string at b->p, unescaped into a NUL-terminated buffer (never
 * longer than its text); NULL when out of memory.
 */
static char *string(struct build *b, size_t *len)
{
	char quote = *b->p++;
	const char *s = b->p;
	char *out, *o;

	while (*s != quote)
		s += *s == '\\' ? 2 : 1;
	out = malloc((size_t)(s - b->p) + 1);
	if (!out)
		return NULL;
	for (o = out; *b->p != quote;) {
		char c = *b->p++;
		uint32_t cp;

		if (c != '\\') {
			*o++ = c;
			continue;
		}
		c = *b->p++;
		switch (c) {
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u':
			cp = hex4(b->p);
			b->p += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				/* The check saw its low half follow. */
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (hex4(b->p + 2) - 0xdc00);
				b->p += 6;
			}
			o += put_utf8(o, cp);
			break;
		default: /* " ' \ / */
			*o++ = c;
			break;
		}
	}
	b->p++;
	*o = '\0';
	*len = (size_t)(o - out);
	return out;
}

static struct json_object *number(struct build *b, int *err)
{
	const char *s = b->p;
	struct json_object *o;
	bool integer = true;
	char *text, *end;
	long long i;
	unsigned long long u;

	while (b->p < b->end && strchr("+-.eE0123456789", *b->p) && *b->p) {
		if (strchr(".eE", *b->p))
			integer = false;
		b->p++;
	}
	text = strndup(s, (size_t)(b->p - s));
	if (!text) {
		*err = -ENOMEM;
		return NULL;
	}
	if (integer) {
		errno = 0;
		i = strtoll(text, &end, 10);
		if (!errno) {
			free(text);
			o = json_object_new_int64(i);
			goto out;
		}
		errno = 0;
		u = strtoull(text, &end, 10);
		if (*text != '-' && !errno) {
			free(text);
			o = json_object_new_uint64(u);
			goto out;
		}
	}
	/* Out of the integers' range: a double, as QEMU takes it. */
	o = json_object_new_double_s(strtod(text, NULL), text);
	free(text);
out:
	if (!o)
		*err = -ENOMEM;
	return o;
}

static int value(struct build *b, struct json_object **out);

/*
 * After a member of an object or an array: on failure @rc, drops its
 * value @v (not added) and returns @rc; else steps over the comma, if
 * any, and returns 0.
 */
static int member_end(struct build *b, struct json_object *v, int rc)
{
	if (rc) {
		json_object_put(v);
		return rc;
	}
	skip_ws(b);
	if (*b->p == ',') {
		b->p++;
		skip_ws(b);
	}
	return 0;
}

static int object(struct build *b, struct json_object *o)
{
	b->p++;
	skip_ws(b);
	while (*b->p != '}') {
		size_t len, at = (size_t)(b->p - b->text);
		struct json_object *v = NULL;
		char *key = string(b, &len);
		int rc;

		if (!key)
			return -ENOMEM;
		skip_ws(b);
		b->p++; /* ':' */
		skip_ws(b);
		rc = value(b, &v);
		if (!rc && json_object_object_get_ex(o, key, NULL)) {
			rc = hv_err_set(b->err, -EPROTO,
					"duplicate key in an object at offset "
					"%zu of the request",
					at);
		}
		if (!rc && json_object_object_add(o, key, v))
			rc = -ENOMEM;
		free(key);
		rc = member_end(b, v, rc);
		if (rc)
			return rc;
	}
	b->p++;
	return 0;
}

static int array(struct build *b, struct json_object *a)
{
	b->p++;
	skip_ws(b);
	while (*b->p != ']') {
		struct json_object *v = NULL;
		int rc = value(b, &v);

		if (!rc && json_object_array_add(a, v))
			rc = -ENOMEM;
		rc = member_end(b, v, rc);
		if (rc)
			return rc;
	}
	b->p++;
	return 0;
}

static int value(struct build *b, struct json_object **out)
{
	struct json_object *o = NULL;
	size_t len;
	char *s;
	int rc = 0;

	skip_ws(b);
	switch (*b->p) {
	case '{':
	case '[':
		o = *b->p == '{' ? json_object_new_object()
				 : json_object_new_array();
		if (!o)
			return -ENOMEM;
		rc = *b->p == '{' ? object(b, o) : array(b, o);
		if (rc) {
			json_object_put(o);
			return rc;
		}
		break;
	case '"':
	case '\'':
		s = string(b, &len);
		if (!s)
			return -ENOMEM;
		o = json_object_new_string_len(s, (int)len);
		free(s);
		if (!o)
			return -ENOMEM;
		break;
	case 't':
	case 'f':
		o = json_object_new_boolean(*b->p == 't');
		b->p += *b->p == 't' ? 4 : 5;
		if (!o)
			return -ENOMEM;
		break;
	case 'n':
		b->p += 4;
		break;
	default:
		o = number(b, &rc);
		break;
	}
	*out = o;
	return rc;
}

int qmp_json_build(const char *p, size_t n, struct json_object **out,
		   struct hv_err *err)
{
	struct build b = {
		.text = p,
		.p = p,
		.end = p + n,
		.err = err,
	};

	*out = NULL;
	return value(&b, out);
}

int qmp_json_parse(const char *p, size_t n, size_t max_weight,
		   struct json_object **out, struct hv_err *err)
{
	struct qmp_lex lx;
	size_t end = 0;

	*out = NULL;
	qmp_lex_reset(&lx, max_weight);
	end = qmp_lex_scan(&lx, p, n);
	/* A number or a literal alone ends where the text does. */
	if (!lx.error && !lx.done)
		qmp_lex_scan(&lx, " ", 1);
	if (lx.error)
		return qmp_lex_describe(&lx, err);
	if (!lx.done)
		return hv_err_set(err, -EPROTO, "the text ends inside a value");
	for (size_t i = end; i < n; i++)
		if (!strchr(" \t\r\n", p[i]) || !p[i]) {
			return hv_err_set(
				err, -EPROTO,
				"more than one value in the text (offset "
				"%zu)",
				i);
		}
	return qmp_json_build(p, end, out, err);
}
