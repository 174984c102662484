// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm run`: the options, then the board builds and runs the machine
 * they describe (vmm/board).  Nothing here touches KVM.
 */
#include <stdio.h>

#include "board.h"
#include "cli.h"
#include "hotvm/abi.h"
#include "run.h"

int run_main(int argc, char **argv)
{
	struct cli_run_opts opts;

	if (cli_parse_run(argc, argv, &opts))
		return ABI_STATUS_USAGE;
	if (opts.help) {
		cli_run_usage(stdout);
		return 0;
	}
	if (opts.dump_acpi)
		return board_dump_acpi(&opts.board, opts.dump_acpi);
	return board_run(&opts.board);
}
