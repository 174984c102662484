// SPDX-License-Identifier: GPL-2.0-only
/*
 * hotvm's entry point: a subcommand dispatcher.  Each subcommand owns its
 * options and returns the process exit status; only main() exits.
 */
#include <stdio.h>
#include <string.h>

#include "cpu_cmd.h"
#include "hotvm/abi.h"
#include "image.h"
#include "run.h"
#include "vm_cmd.h"

struct subcommand {
	const char *name;
	const char *summary;
	int (*main)(int argc, char **argv);
};

static const struct subcommand subcommands[] = {
	{ .name = "run",
	  .summary = "boot a virtual machine",
	  .main = run_main },
	{ .name = "cpu",
	  .summary = "add, remove, list a running VM's vCPUs (QMP client)",
	  .main = cpu_cmd_main },
	{ .name = "vm",
	  .summary = "power down, reset, quit a running VM, or its status",
	  .main = vm_cmd_main },
};

static void usage(FILE *f)
{
	fputs("Usage: hotvm COMMAND [options]\n"
	      "       hotvm --help | --version\n"
	      "\n"
	      "A small KVM virtual machine monitor for vCPU hotplug.\n"
	      "\n"
	      "Commands:\n",
	      f);
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]);
	     i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name,
			subcommands[i].summary);
	fputs("\nRun 'hotvm COMMAND --help' for a command's options.\n", f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return ABI_STATUS_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("hotvm %s\nbuilt-in guest: %s\n", HOTVM_VERSION,
		       image_embedded(&(struct image){ 0 }) ? "none" : "yes");
		return 0;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]);
	     i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].main(argc - 1, argv + 1);
	fprintf(stderr,
		"hotvm: unknown command '%s'; run 'hotvm --help' for the "
		"list\n",
		argv[1]);
	return ABI_STATUS_USAGE;
}
