/* SPDX-License-Identifier: GPL-2.0-only */
/* `hotvm vm`: a running VM's power and state, as QMP's system_* commands. */
#ifndef HOTVM_VM_CMD_H
#define HOTVM_VM_CMD_H

#include <stdio.h>

int vm_cmd_main(int argc, char **argv);

#endif
