/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Why something failed, carried from the code that knows to whoever asked
 * (QEMU's Error **errp idea): the deepest layer that can say why writes the
 * reason, once; the layers above put context around it (which CPU, which
 * operation, where it rolled back to) but do not replace it; the control
 * API sends it as the reply's "desc", and `hotvm cpu` prints that.
 *
 * A NULL struct hv_err * is allowed everywhere: nobody asked.  The first
 * reason set wins: a later failure (a rollback's) is a consequence, not
 * the cause.
 */
#ifndef HOTVM_HV_ERR_H
#define HOTVM_HV_ERR_H

#include <stdbool.h>

#define HV_ERR_MAX 512

struct hv_err {
	int code;	      /* a negative errno; 0 while nothing failed */
	char msg[HV_ERR_MAX]; /* the reason in words; "" if only code is known */
};

/*
 * Records code (negative; a positive one is negated, 0 becomes -EIO) and
 * the reason, unless err is NULL or already holds one.  Returns the code
 * recorded, so that `return hv_err_set(err, -EBUSY, ...)` reads as it
 * means.  fmt may be NULL: the code alone, no words.
 */
int hv_err_set(struct hv_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Context before the reason: "cpu 3: hot-add failed: " + msg. */
void hv_err_prepend(struct hv_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Context after it: msg + "; rolled back to offline". */
void hv_err_append(struct hv_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The reason in words: msg, or strerror(code) when there are none. */
const char *hv_err_msg(const struct hv_err *err);

static inline bool hv_err_is_set(const struct hv_err *err)
{
	return err && err->code;
}

static inline void hv_err_clear(struct hv_err *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}

#endif
