// SPDX-License-Identifier: GPL-2.0-only
/*
 * The values `hotvm run`'s options take: sizes, vCPU counts, milliseconds,
 * console sinks.  Each parser only reads text and says what is wrong; the
 * option table (cli_options.c) names the option in its message.
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

int cli_parse_cpus(const char *s, struct board_cpus *out, char *why,
		   size_t whylen)
{
	bool have_boot = false, have_max = false;
	unsigned int boot = 1, max = 0;
	const char *p = s;

	if (!s || !*s) {
		snprintf(why, whylen, "empty value");
		return -EINVAL;
	}
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		size_t klen, vlen;
		unsigned int v;

		if (!eq) {
			snprintf(why, whylen, "'%.*s' is not key=value",
				 (int)len, p);
			return -EINVAL;
		}
		klen = (size_t)(eq - p);
		vlen = len - klen - 1;
		if (parse_uint(eq + 1, vlen, &v)) {
			snprintf(why, whylen, "'%.*s' is not a number",
				 (int)vlen, eq + 1);
			return -EINVAL;
		}
		if (klen == 4 && !strncmp(p, "boot", 4) && !have_boot) {
			boot = v;
			have_boot = true;
		} else if (klen == 3 && !strncmp(p, "max", 3) && !have_max) {
			max = v;
			have_max = true;
		} else {
			snprintf(why, whylen, "unknown or repeated key '%.*s'",
				 (int)klen, p);
			return -EINVAL;
		}
		if (!comma)
			break;
		p = comma + 1;
		if (!*p) {
			snprintf(why, whylen, "trailing comma");
			return -EINVAL;
		}
	}
	if (!have_max)
		max = boot;
	if (boot < 1) {
		snprintf(why, whylen, "boot must be at least 1");
		return -EINVAL;
	}
	if (boot > max) {
		snprintf(why, whylen, "boot=%u is greater than max=%u", boot,
			 max);
		return -EINVAL;
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
