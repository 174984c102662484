/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `hotvm cpu ...`: the control API's command-line client.  Speaks QMP, so
 * `add`, `remove` and `list` also drive a QEMU started with -qmp unix:PATH.
 */
#ifndef HOTVM_CPU_CMD_H
#define HOTVM_CPU_CMD_H

#include <stdio.h>

#define CPU_CMD_DEFAULT_TIMEOUT_S 60

/* argv[0] is "cpu".  Exit status: 0, 1 (the VMM said no, or I/O), 2 usage. */
int cpu_cmd_main(int argc, char **argv);

/* The same, writing to out and errf: for tests. */
int cpu_cmd_run(int argc, char **argv, FILE *out, FILE *errf);

#endif
