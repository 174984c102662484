/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading replies without trusting their shape: every `hotvm cpu` verb and
 * printer goes through these, so an unexpected member is "-" or a default,
 * never a crash.  The replies of hotvm's own commands may still grow.
 */
#ifndef HOTVM_CPU_JSON_H
#define HOTVM_CPU_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

/* Big enough for any cell the tables print; longer text is cut. */
#define CPU_JSON_CELL_MAX 128

/* o's member key, NULL when o is not an object or lacks it. */
struct json_object *cpu_json_member(struct json_object *o, const char *key);
/* A value as table text ("-" for none), in buf or a constant. */
const char *cpu_json_cell(struct json_object *o, char *buf, size_t len);
/* Neither an object nor an array. */
bool cpu_json_scalar(struct json_object *o);
/* An entry's vCPU number: its "cpu", "cpu-index" or "id", or NULL. */
struct json_object *cpu_json_cpu(struct json_object *entry);
/* o as an integer, a true boolean, a string; dflt, false, NULL if not. */
int64_t cpu_json_num(struct json_object *o, int64_t dflt);
bool cpu_json_flag(struct json_object *o);
const char *cpu_json_str(struct json_object *o);

#endif
