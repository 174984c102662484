/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `hotvm run`'s options: one table (cli_run_options[], cli_options.c) gives
 * the parser, --help and README.md's options table.  Pure functions,
 * unit-tested.
 */
#ifndef HOTVM_CLI_H
#define HOTVM_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "board.h"
#include "hv_err.h"

/* What `hotvm run` was asked: a machine, or one of the other modes. */
#define CLI_DISK_TEXT	     4200 /* a --disk's value: a path and its options */
#define CLI_NET_TEXT	     128  /* a --net's value: names and a MAC */
#define CLI_AGENT_VSOCK_PORT 1024 /* --agent-channel vsock's default */

struct cli_run_opts {
	struct board_config board;
	/* --disk values, split in place: board.disks' strings point here. */
	char disk_text[BOARD_MAX_DISKS][CLI_DISK_TEXT];
	/* --net values, split in place: board.nets' strings point here. */
	char net_text[BOARD_MAX_NETS][CLI_NET_TEXT];
	char vsock_text[CLI_DISK_TEXT]; /* --vsock's, split in place */
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
 * Returns 0 or -EINVAL with the reason in @err.
 */
int cli_parse_cpus(const char *s, struct board_cpus *out, struct hv_err *err);

#define CLI_MAX_MS (24 * 3600 * 1000) /* a day: a typo beyond */

/* Milliseconds, 1 .. CLI_MAX_MS, decimal.  Returns 0 or -EINVAL. */
int cli_parse_ms(const char *s, int *out);

/*
 * "stdio", "none" or "file:PATH" into out's sink and path (its option is
 * kept).  Returns 0 or -EINVAL.
 */
int cli_parse_serial(const char *s, struct serial_config *out);

/* A count: decimal, no sign, no suffix, at most 9 digits.  0 or -EINVAL. */
int cli_parse_count(const char *s, unsigned int *out);

/*
 * --disk's "path=P[,readonly=on|off][,id=NAME]" (keys in any order, each
 * once; path required; NAME 1-20 of [A-Za-z0-9._-]), split in @text (a
 * copy of it, which @out's strings then point into).  0, or -EINVAL with
 * the reason in @why.
 */
int cli_parse_disk(char *text, struct vblk_config *out, struct hv_err *err);

/*
 * --net's "tap=NAME[,mac=MAC][,id=NAME][,offload=on|off][,mrg_rxbuf=on|off]"
 * (keys in any order, each once; tap required; id 1-16 of
 * [A-Za-z0-9._-]; MAC six hex pairs with colons, unicast, not zero),
 * split in @text.  0, or -EINVAL with the reason in @err.
 */
int cli_parse_net(char *text, struct vnet_config *out, struct hv_err *err);

/* A parse function's answer that ends parsing with success (--help). */
#define CLI_OPT_STOP 1

/*
 * One option of `hotvm run`.  The table of these is the only place the
 * option list is written: the parser walks it, and --help and README.md's
 * table are rendered from it (cli_usage.c).
 */
struct cli_opt {
	const char *name;  /* "--memory" */
	const char *alias; /* a short spelling ("-h"), or NULL */
	const char *arg;   /* the value's placeholder ("SIZE"); NULL: none */
	/* What it does; `code` in backquotes (kept in README, not in --help). */
	const char *help;
	const char *def; /* the default, in words; NULL: none */
	/*
	 * Stores v (NULL for an option without a value) into o.  On bad
	 * input it says why on stderr, naming the option, and returns
	 * -EINVAL; CLI_OPT_STOP ends parsing; else 0.
	 */
	int (*parse)(struct cli_run_opts *o, const char *v);
};

/* The option table, in --help's order. */
const struct cli_opt *cli_run_options(size_t *n);

/*
 * Parses the arguments after "run" (argv[0] is "run"), "--opt value" or
 * "--opt=value".  Prints a clear message to stderr on error.  Returns 0
 * or -EINVAL.
 */
int cli_parse_run(int argc, char **argv, struct cli_run_opts *opts);

/* `hotvm run --help`, from the table. */
void cli_run_usage(FILE *f);

/*
 * README.md's options table (header and one row per option), from the
 * table: what sits between its run-options markers.
 */
void cli_run_markdown(FILE *f);

#endif
