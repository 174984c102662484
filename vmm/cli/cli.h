/* SPDX-License-Identifier: GPL-2.0-only */
/* Command-line parsing for `hotvm run`: pure functions, unit-tested. */
#ifndef HOTVM_VMM_CLI_H
#define HOTVM_VMM_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "board.h"

/* What `hotvm run` was asked: a machine, or one of the other modes. */
struct cli_run_opts {
	struct board_config board;
	const char *dump_acpi; /* write the ACPI tables here, boot nothing */
	bool help;
};

/*
 * "256M", "1G", "4096", "64k": a byte count with an optional binary suffix
 * (K, M, G, T; case-insensitive; "KiB"/"KB" spellings allowed).
 * Returns 0, -EINVAL for malformed text, -ERANGE for zero or overflow.
 */
int cli_parse_size(const char *s, uint64_t *out);

/*
 * --memory: as cli_parse_size(), but a bare number means MiB, as QEMU's -m
 * has it ("512" is 512M; "4096" is 4G).
 */
int cli_parse_memory(const char *s, uint64_t *out);

/*
 * Cloud Hypervisor's "boot=N,max=M": keys in any order, each at most once;
 * boot defaults to 1, max to boot.  Checks 1 <= boot <= max; the limit
 * from KVM is checked later, by the caller that knows it.
 * Returns 0 or -EINVAL with a reason in why.
 */
int cli_parse_cpus(const char *s, struct board_cpus *out, char *why,
		   size_t whylen);

/* Milliseconds, 1 .. 24 h, decimal.  Returns 0 or -EINVAL. */
int cli_parse_ms(const char *s, int *out);

/* "stdio", "none" or "file:PATH".  Returns 0 or -EINVAL. */
int cli_parse_serial(const char *s, struct board_serial *out);

/*
 * Parses the arguments after "run" (argv[0] is "run").  Prints a clear
 * message to stderr on error.  Returns 0 or -EINVAL.
 */
int cli_parse_run(int argc, char **argv, struct cli_run_opts *opts);

void cli_run_usage(FILE *f);

#endif
