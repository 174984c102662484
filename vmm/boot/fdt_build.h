/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flattened device tree hotvm hands the tiny guest as a PVH module
 * (after the initrd): memory, every possible CPU (boot CPUs "okay", the
 * rest "disabled"), the command line, and a node for each device of the
 * machine's table that has one (its descriptor's fdt, device.h).  Names avoid libfdt's own fdt_* functions.
 */
#ifndef HOTVM_FDT_BUILD_H
#define HOTVM_FDT_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"

struct fdt_build_range {
	uint64_t base;
	uint64_t size;
};

struct fdt_build_config {
	const struct fdt_build_range *ram;
	unsigned int nr_ram;
	unsigned int boot_cpus;
	unsigned int max_cpus; /* APIC ID of CPU n is n */
	/* max_cpus entries: present at boot; NULL: the first boot_cpus. */
	const bool *present;
	const char *cmdline;
	const struct dev_instance *devs; /* the machine's devices */
	size_t nr_devs;
};

/* Builds the tree into buf.  Returns its size or a negative errno. */
long fdt_build_machine(void *buf, size_t size,
		       const struct fdt_build_config *cfg);

#endif
