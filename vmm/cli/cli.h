/* SPDX-License-Identifier: GPL-2.0-only */
/* Command-line parsing for `hotvm run`: pure functions, unit-tested. */
#ifndef HOTVM_VMM_CLI_H
#define HOTVM_VMM_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "seccomp_policy.h"
#include "serial.h"

#define CLI_DEFAULT_MEMORY (256ULL << 20)
#define CLI_DEFAULT_NAME   "hotvm"
#define CLI_MAX_HOOKS	   16 /* = HOOKS_MAX */

struct cli_cpus {
	unsigned int boot;
	unsigned int max;
};

struct cli_serial {
	enum serial_sink sink;
	const char *path; /* for SERIAL_SINK_FILE; points into argv */
};

struct cli_run_opts {
	const char *kernel; /* NULL: the embedded tiny guest */
	const char *cmdline;
	const char *initrd;
	uint64_t memory;
	struct cli_cpus cpus;
	struct cli_serial serial;
	const char *api_socket; /* NULL: no control API */
	const char *api_group;	/* also let this group's members connect */
	const char *hooks[CLI_MAX_HOOKS];
	unsigned int nr_hooks;
	int hook_timeout_ms;	/* 0: the hooks' default */
	int hotplug_timeout_ms; /* 0: HOTPLUG_DEFAULT_TIMEOUT_MS */
	int hotplug_wait;	/* enum hotplug_wait; 0: acknowledged */
	unsigned int prestage;	/* --prestage: free vCPUs created ahead */
	const char *name;	/* for hooks and QMP; default "hotvm" */
	const char *dump_acpi;	/* write the ACPI tables here, boot nothing */
	enum seccomp_policy seccomp; /* --seccomp; default on */
	bool no_reboot;		     /* a reset ends the VM (status 0) */
	int guest_eject;	     /* enum hotplug_guest_eject; 0: allow */
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
int cli_parse_cpus(const char *s, struct cli_cpus *out, char *why,
		   size_t whylen);

/* Milliseconds, 1 .. 24 h, decimal.  Returns 0 or -EINVAL. */
int cli_parse_ms(const char *s, int *out);

/* "stdio", "none" or "file:PATH".  Returns 0 or -EINVAL. */
int cli_parse_serial(const char *s, struct cli_serial *out);

/*
 * Parses the arguments after "run" (argv[0] is "run").  Prints a clear
 * message to stderr on error.  Returns 0 or -EINVAL.
 */
int cli_parse_run(int argc, char **argv, struct cli_run_opts *opts);

void cli_run_usage(FILE *f);

#endif
