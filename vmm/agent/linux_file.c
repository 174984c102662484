// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest files through the guest agent (linux_file.h).  The agent's
 * answers are guest data: a handle must be a non-negative integer, data
 * must be base64 that fits the caller's buffer, a write must say it wrote
 * it all.  Each call's deadline is capped by the caller's (lx_agent's
 * cap_ms), but a close's.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "linux_file.h"
#include "qga.h"

/* @want_ms, capped by the caller's deadline. */
static int call_ms(const struct lx_agent *ag, int want_ms)
{
	return ag->cap_ms ? ag->cap_ms(ag->ctx, want_ms) : want_ms;
}

/* The most one write sends: its base64 stays far below QGA_REPLY_MAX. */
#define LINUX_WRITE_MAX (48u << 10)

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* One base64 digit's value, or -1. */
static int b64_digit(char c)
{
	const char *p = c ? strchr(b64_alphabet, c) : NULL;

	return p ? (int)(p - b64_alphabet) : -1;
}

/* Decodes @len base64 characters into at most @max bytes; -EPROTO. */
static long b64_decode(const char *s, size_t len, char *out, size_t max)
{
	uint32_t acc = 0;
	size_t n = 0;
	int bits = 0;

	while (len && s[len - 1] == '=')
		len--;
	for (size_t i = 0; i < len; i++) {
		int d = b64_digit(s[i]);

		if (d < 0)
			return -EPROTO;
		acc = (acc << 6) | (uint32_t)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == max)
				return -EPROTO;
			out[n++] = (char)(acc >> bits);
		}
	}
	return (long)n;
}

/* @len bytes as base64, NUL-terminated, in a new string. */
static char *b64_encode(const char *in, size_t len)
{
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)(uint8_t)in[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)(uint8_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= (uint8_t)in[i + 2];
		*o++ = b64_alphabet[(v >> 18) & 63];
		*o++ = b64_alphabet[(v >> 12) & 63];
		*o++ = i + 1 < len ? b64_alphabet[(v >> 6) & 63] : '=';
		*o++ = i + 2 < len ? b64_alphabet[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

static struct json_object *handle_args(long handle)
{
	struct json_object *a = json_object_new_object();

	json_object_object_add(a, "handle", json_object_new_int64(handle));
	return a;
}

long lx_file_open(const struct lx_agent *ag, const char *path, const char *mode,
		  struct hv_err *err)
{
	struct json_object *a = json_object_new_object(), *r = NULL;
	long handle;
	int ret;

	json_object_object_add(a, "path", json_object_new_string(path));
	json_object_object_add(a, "mode", json_object_new_string(mode));
	ret = qga_call(ag->qga, "guest-file-open", a, &r,
		       call_ms(ag, LINUX_AGENT_TIMEOUT_MS), err);
	json_object_put(a);
	if (ret)
		return ret;
	handle = json_object_is_type(r, json_type_int)
			 ? (long)json_object_get_int64(r)
			 : -1;
	json_object_put(r);
	if (handle < 0)
		return hv_err_set(err, -EPROTO,
				  "the guest agent gave no file handle");
	return handle;
}

long lx_file_read(const struct lx_agent *ag, long handle, char *buf, size_t len,
		  bool *eof, struct hv_err *err)
{
	struct json_object *a = handle_args(handle), *r = NULL, *v;
	long n;

	json_object_object_add(a, "count", json_object_new_int64((long)len));
	/*
	 * The reply is the data in base64, and the UART carries a byte per
	 * VM exit or more: room for more data gets a longer deadline (0.5
	 * ms a byte; Linux's state list, about 2 KiB, took most of a second
	 * in the nested lab).
	 */
	n = qga_call(ag->qga, "guest-file-read", a, &r,
		     call_ms(ag, LINUX_AGENT_TIMEOUT_MS +
					 (int)(len < (1u << 20) ? len / 2
								: 1u << 19)),
		     err);
	json_object_put(a);
	if (n)
		return n;
	if (json_object_object_get_ex(r, "buf-b64", &v) &&
	    json_object_is_type(v, json_type_string)) {
		n = b64_decode(json_object_get_string(v),
			       (size_t)json_object_get_string_len(v), buf, len);
		if (n < 0)
			hv_err_set(err, -EPROTO,
				   "the guest agent's file data is not base64 "
				   "of at most %zu bytes",
				   len);
	} else {
		n = hv_err_set(err, -EPROTO,
			       "the guest agent's read has no data");
	}
	if (eof)
		*eof = json_object_object_get_ex(r, "eof", &v) &&
		       json_object_is_type(v, json_type_boolean) &&
		       json_object_get_boolean(v);
	json_object_put(r);
	return n;
}

int lx_file_write(const struct lx_agent *ag, long handle, const char *data,
		  size_t len, struct hv_err *err)
{
	struct json_object *a, *r = NULL, *v;
	char *b64;
	int ret;

	if (len > LINUX_WRITE_MAX)
		return hv_err_set(err, -EMSGSIZE,
				  "%zu bytes is too much for "
				  "one guest file write",
				  len);
	b64 = b64_encode(data, len);
	if (!b64)
		return hv_err_set(err, -ENOMEM, NULL);
	a = handle_args(handle);
	json_object_object_add(a, "buf-b64", json_object_new_string(b64));
	free(b64);
	ret = qga_call(ag->qga, "guest-file-write", a, &r,
		       call_ms(ag, LINUX_AGENT_TIMEOUT_MS), err);
	json_object_put(a);
	if (!ret && !(json_object_object_get_ex(r, "count", &v) &&
		      json_object_is_type(v, json_type_int) &&
		      json_object_get_int64(v) == (int64_t)len))
		ret = hv_err_set(err, -EIO,
				 "the guest agent wrote less than asked");
	json_object_put(r);
	return ret;
}

int lx_file_flush(const struct lx_agent *ag, long handle, struct hv_err *err)
{
	struct json_object *a = handle_args(handle);
	int ret = qga_call(ag->qga, "guest-file-flush", a, NULL,
			   call_ms(ag, LINUX_AGENT_TIMEOUT_MS), err);

	json_object_put(a);
	return ret;
}

void lx_file_close(const struct lx_agent *ag, long handle)
{
	struct json_object *a = handle_args(handle);

	/* Its own deadline: a handle left open stays open in the agent. */
	qga_call(ag->qga, "guest-file-close", a, NULL, LINUX_AGENT_TIMEOUT_MS,
		 NULL);
	json_object_put(a);
}

long lx_file_read_all(const struct lx_agent *ag, const char *path, char *buf,
		      size_t len, struct hv_err *err)
{
	long handle = lx_file_open(ag, path, "r", err), n;

	if (handle < 0)
		return handle;
	n = lx_file_read(ag, handle, buf, len, NULL, err);
	lx_file_close(ag, handle);
	return n;
}

int lx_file_write_all(const struct lx_agent *ag, const char *path,
		      const char *data, size_t len, struct hv_err *err)
{
	long handle = lx_file_open(ag, path, "w", err);
	int ret;

	if (handle < 0)
		return (int)handle;
	ret = lx_file_write(ag, handle, data, len, err);
	if (!ret)
		ret = lx_file_flush(ag, handle, err);
	lx_file_close(ag, handle);
	return ret;
}
