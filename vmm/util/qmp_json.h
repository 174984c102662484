/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * json-c's tree of a JSON text that the grammar check (qmp_lex.h) passed:
 * the QMP server's requests and the guest agent's lines are parsed here,
 * not by json-c's tokener, whose lenient mode takes comments, NaN and
 * trailing commas and whose strict mode refuses QEMU's single-quoted
 * strings and the \' escape.  It refuses a key given twice in one object,
 * as QEMU's parser does ("duplicate key"), instead of keeping either.
 * A number is an int64 if it fits, else a uint64 if it fits, else a
 * double (as QEMU's parser takes them); a double keeps its text, so
 * echoing it (an "id") writes the client's own, valid, digits.
 */
#ifndef HOTVM_QMP_JSON_H
#define HOTVM_QMP_JSON_H

#include <json-c/json.h>
#include <stddef.h>

#include "hv_err.h"

/*
 * Builds the value of p[0..n), a text qmp_lex_scan() found whole and
 * good.  Returns 0 with it in *out (NULL for null), -EPROTO for a
 * duplicate key (@err says where) or -ENOMEM.
 */
int qmp_json_build(const char *p, size_t n, struct json_object **out,
		   struct hv_err *err);

/*
 * Checks and builds a whole text: exactly one value, whitespace around it
 * allowed, whose built size stays under max_weight bytes (0: no limit).
 * Returns 0, -EPROTO with the reason in @err, or -ENOMEM.
 */
int qmp_json_parse(const char *p, size_t n, size_t max_weight,
		   struct json_object **out, struct hv_err *err);

#endif
