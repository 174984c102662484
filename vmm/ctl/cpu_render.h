/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What `hotvm cpu` prints of a reply when --json is not given.  The
 * printers show whatever the replies hold and never fail on an unexpected
 * shape (the tests feed them odd ones).
 */
#ifndef HOTVM_CPU_RENDER_H
#define HOTVM_CPU_RENDER_H

#include <stdbool.h>
#include <stdio.h>

struct json_object;

/* query-hotpluggable-cpus and (may be NULL) query-cpus-fast replies. */
void cpu_render_list(FILE *out, struct json_object *hotpluggable,
		     struct json_object *cpus_fast);
/* query-cpuhp's Linux columns (with the guest agent), or nothing. */
void cpu_render_linux(FILE *out, struct json_object *cpuhp);
/*
 * query-cpuhp's reply; cpu < 0: a row per vCPU, else that vCPU's tables;
 * wide: that vCPU's row with every column, before its tables.
 */
void cpu_render_states(FILE *out, struct json_object *cpuhp, long cpu,
		       bool wide);
/* Any other reply, as indented "key: value" lines. */
void cpu_render_value(FILE *out, struct json_object *v);

#endif
