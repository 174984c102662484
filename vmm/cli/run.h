/* SPDX-License-Identifier: GPL-2.0-only */
/* `hotvm run`: build a machine from the options, run it, tear it down. */
#ifndef HOTVM_RUN_H
#define HOTVM_RUN_H

/* argv[0] is "run".  Returns the process exit status. */
int run_main(int argc, char **argv);

#endif
