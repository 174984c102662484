// SPDX-License-Identifier: GPL-2.0-only
/*
 * The values `hotvm run`'s options take: sizes, vCPU counts, milliseconds,
 * console sinks, disks, NICs.  Each parser only reads text and says what is
 * wrong; the option table (cli_options.c) names the option in its message.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

int cli_parse_size(const char *s, uint64_t *out)
{
	unsigned int shift = 0;
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	if (shift) {
		end++;
		if (!strcasecmp(end, "ib") || !strcasecmp(end, "b"))
			end += strlen(end);
	}
	if (*end)
		return -EINVAL;
	if (!v || (shift && v > (UINT64_MAX >> shift)))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

int cli_parse_memory(const char *s, uint64_t *out)
{
	size_t n = s ? strlen(s) : 0;
	uint64_t v;
	int ret;

	ret = cli_parse_size(s, &v);
	if (ret)
		return ret;
	/* cli_parse_size() took it, so a final digit means no unit. */
	if (s[n - 1] >= '0' && s[n - 1] <= '9') {
		if (v > (UINT64_MAX >> 20))
			return -ERANGE;
		v <<= 20;
	}
	*out = v;
	return 0;
}

/* A decimal unsigned int, no sign, no suffix, no junk. */
static int parse_uint(const char *s, size_t len, unsigned int *out)
{
	unsigned long v = 0;

	if (!len || len > 9)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	*out = (unsigned int)v;
	return 0;
}

int cli_parse_cpus(const char *s, struct board_cpus *out, struct hv_err *err)
{
	bool have_boot = false, have_max = false;
	unsigned int boot = 1, max = 0;
	const char *p = s;

	if (!s || !*s) {
		return hv_err_set(err, -EINVAL, "empty value");
	}
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		size_t klen, vlen;
		unsigned int v;

		if (!eq) {
			return hv_err_set(err, -EINVAL,
					  "'%.*s' is not key=value", (int)len,
					  p);
		}
		klen = (size_t)(eq - p);
		vlen = len - klen - 1;
		if (parse_uint(eq + 1, vlen, &v)) {
			return hv_err_set(err, -EINVAL,
					  "'%.*s' is not a number", (int)vlen,
					  eq + 1);
		}
		if (klen == 4 && !strncmp(p, "boot", 4) && !have_boot) {
			boot = v;
			have_boot = true;
		} else if (klen == 3 && !strncmp(p, "max", 3) && !have_max) {
			max = v;
			have_max = true;
		} else {
			return hv_err_set(err, -EINVAL,
					  "unknown or repeated key '%.*s'",
					  (int)klen, p);
		}
		if (!comma)
			break;
		p = comma + 1;
		if (!*p) {
			return hv_err_set(err, -EINVAL, "trailing comma");
		}
	}
	if (!have_max)
		max = boot;
	if (boot < 1) {
		return hv_err_set(err, -EINVAL, "boot must be at least 1");
	}
	if (boot > max) {
		return hv_err_set(err, -EINVAL,
				  "boot=%u is greater than max=%u", boot, max);
	}
	out->boot = boot;
	out->max = max;
	return 0;
}

int cli_parse_ms(const char *s, int *out)
{
	unsigned int v;

	if (!s || parse_uint(s, strlen(s), &v) || !v || v > CLI_MAX_MS)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

int cli_parse_serial(const char *s, struct serial_config *out)
{
	if (!strcmp(s, "stdio")) {
		out->sink = SERIAL_SINK_STDIO;
		out->path = NULL;
	} else if (!strcmp(s, "none")) {
		out->sink = SERIAL_SINK_NONE;
		out->path = NULL;
	} else if (!strncmp(s, "file:", 5) && s[5]) {
		out->sink = SERIAL_SINK_FILE;
		out->path = s + 5;
	} else {
		return -EINVAL;
	}
	return 0;
}

int cli_parse_count(const char *s, unsigned int *out)
{
	return s ? parse_uint(s, strlen(s), out) : -EINVAL;
}

/* An id: 1 to @max of A-Z a-z 0-9 . _ - */
static bool id_ok(const char *v, size_t max)
{
	size_t n = strlen(v);

	return n && n <= max &&
	       strspn(v, "abcdefghijklmnopqrstuvwxyz"
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._-") == n;
}

int cli_parse_disk(char *text, struct vblk_config *out, struct hv_err *err)
{
	bool seen_ro = false;
	char *save = NULL;

	*out = (struct vblk_config){ 0 };
	for (char *kv = strtok_r(text, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');

		if (!v) {
			return hv_err_set(err, -EINVAL, "'%s' is not key=value",
					  kv);
		}
		*v++ = 0;
		if (!strcmp(kv, "path") && !out->path) {
			if (!*v) {
				return hv_err_set(err, -EINVAL, "empty path");
			}
			out->path = v;
		} else if (!strcmp(kv, "readonly") && !seen_ro) {
			if (strcmp(v, "on") && strcmp(v, "off")) {
				return hv_err_set(err, -EINVAL,
						  "readonly=%s: give on or off",
						  v);
			}
			out->readonly = !strcmp(v, "on");
			seen_ro = true;
		} else if (!strcmp(kv, "id") && !out->id) {
			if (!id_ok(v, 20)) {
				return hv_err_set(
					err, -EINVAL,
					"id=%s: give 1 to 20 of A-Z a-z 0-9 "
					". _ -",
					v);
			}
			out->id = v;
		} else {
			return hv_err_set(
				err, -EINVAL, "%s: %s", kv,
				strcmp(kv, "path") && strcmp(kv, "readonly") &&
						strcmp(kv, "id")
					? "unknown key"
					: "given twice");
		}
	}
	if (!out->path) {
		return hv_err_set(err, -EINVAL, "no path");
	}
	return 0;
}

/* "on" or "off" into *out: 0, or -EINVAL with the reason. */
static int on_off(const char *key, const char *v, bool *out, struct hv_err *err)
{
	if (strcmp(v, "on") && strcmp(v, "off")) {
		return hv_err_set(err, -EINVAL, "%s=%s: give on or off", key,
				  v);
	}
	*out = !strcmp(v, "on");
	return 0;
}

/* --net's keys, in the order of the bits that say one was given. */
enum { NET_TAP, NET_MAC, NET_ID, NET_OFFLOAD, NET_MRG_RXBUF, NET_KEYS };

/* The value @v of key @k (NET_*, named @kv) into *out, or why not. */
static int net_value(unsigned int k, const char *kv, char *v,
		     struct vnet_config *out, struct hv_err *err)
{
	bool on = false;

	switch (k) {
	case NET_TAP:
		if (!*v)
			return hv_err_set(err, -EINVAL, "empty tap name");
		out->tap = v;
		return 0;
	case NET_MAC:
		if (vnet_parse_mac(v, out->mac)) {
			return hv_err_set(err, -EINVAL,
					  "mac=%s: not a unicast MAC (six hex "
					  "pairs with colons, e.g. "
					  "02:00:00:00:00:01)",
					  v);
		}
		out->mac_set = true;
		return 0;
	case NET_ID:
		if (!id_ok(v, VNET_ID_MAX)) {
			return hv_err_set(err, -EINVAL,
					  "id=%s: give 1 to %d of A-Z a-z 0-9 "
					  ". _ -",
					  v, VNET_ID_MAX);
		}
		out->id = v;
		return 0;
	}
	if (on_off(kv, v, &on, err))
		return -EINVAL;
	if (k == NET_OFFLOAD)
		out->no_offload = !on;
	else
		out->no_mrg_rxbuf = !on;
	return 0;
}

int cli_parse_net(char *text, struct vnet_config *out, struct hv_err *err)
{
	static const char *const keys[NET_KEYS] = {
		[NET_TAP] = "tap",
		[NET_MAC] = "mac",
		[NET_ID] = "id",
		[NET_OFFLOAD] = "offload",
		[NET_MRG_RXBUF] = "mrg_rxbuf",
	};
	unsigned int seen = 0;
	char *save = NULL;

	*out = (struct vnet_config){ 0 };
	for (char *kv = strtok_r(text, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		unsigned int k = 0;

		if (!v) {
			return hv_err_set(err, -EINVAL, "'%s' is not key=value",
					  kv);
		}
		*v++ = 0;
		while (k < NET_KEYS && strcmp(kv, keys[k]))
			k++;
		if (k == NET_KEYS || (seen & (1u << k))) {
			return hv_err_set(err, -EINVAL, "%s: %s", kv,
					  k == NET_KEYS ? "unknown key"
							: "given twice");
		}
		seen |= 1u << k;
		if (net_value(k, kv, v, out, err))
			return -EINVAL;
	}
	if (!out->tap) {
		return hv_err_set(err, -EINVAL, "no tap");
	}
	return 0;
}
