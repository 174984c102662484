/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `hotvm cpu ...`: the control API's command-line client.  Speaks QMP, so
 * `add`, `remove` and `list` also drive a QEMU started with -qmp unix:PATH.
 */
#ifndef HOTVM_CPU_CMD_H
#define HOTVM_CPU_CMD_H

#include <stdio.h>

struct json_object;

#define CPU_CMD_DEFAULT_TIMEOUT_S 60

/* argv[0] is "cpu".  Exit status: 0, 1 (the VMM said no, or I/O), 2 usage. */
int cpu_cmd_main(int argc, char **argv);

/* The same, writing to out and errf: for tests. */
int cpu_cmd_run(int argc, char **argv, FILE *out, FILE *errf);

/*
 * Table printers, exposed for tests.  They print whatever the replies
 * hold and never fail on an unexpected shape.
 */
/* query-hotpluggable-cpus and (may be NULL) query-cpus-fast replies. */
void cpu_cmd_print_list(FILE *out, struct json_object *hotpluggable,
			struct json_object *cpus_fast);
/* query-cpuhp's reply; cpu < 0: a row per vCPU, else that vCPU's tables. */
void cpu_cmd_print_states(FILE *out, struct json_object *cpuhp, long cpu);
/* The same with every column of the vCPU's row (states --wide). */
void cpu_cmd_print_states_wide(FILE *out, struct json_object *cpuhp, long cpu);
/* Any other reply, as indented "key: value" lines. */
void cpu_cmd_print_value(FILE *out, struct json_object *v);

#endif
