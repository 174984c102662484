// SPDX-License-Identifier: GPL-2.0-only
/* The error object every layer fills (see vmm/util/hv_err.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hv_err.h"

int hv_err_set(struct hv_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	code = code > 0 ? -code : code ? code : -EIO;
	if (!err)
		return code;
	if (err->code)
		return code;
	err->code = code;
	err->msg[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

void hv_err_prepend(struct hv_err *err, const char *fmt, ...)
{
	char buf[HV_ERR_MAX];
	va_list ap;
	int n;

	if (!err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, "%s", hv_err_msg(err));
	memcpy(err->msg, buf, sizeof(buf));
}

void hv_err_append(struct hv_err *err, const char *fmt, ...)
{
	size_t len;
	va_list ap;

	if (!err)
		return;
	if (!err->msg[0] && err->code)
		snprintf(err->msg, sizeof(err->msg), "%s", hv_err_msg(err));
	len = strlen(err->msg);
	va_start(ap, fmt);
	vsnprintf(err->msg + len, sizeof(err->msg) - len, fmt, ap);
	va_end(ap);
}

const char *hv_err_msg(const struct hv_err *err)
{
	if (!err || !err->code)
		return "";
	return err->msg[0] ? err->msg : strerror(-err->code);
}
