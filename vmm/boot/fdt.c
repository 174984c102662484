// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tiny guest's FDT, built with libfdt's sequential-write API.  Every
 * possible CPU has a node from the start so that hot-adding one later only
 * changes its status, never the tree's shape.
 */
#include <errno.h>
#include <stdio.h>

#include <libfdt.h>

#include "fdt_build.h"
#include "hotvm/abi.h"

#define FDT_BUILD_MAX_RAM  8
#define FDT_BUILD_MAX_DEVS 32

/* libfdt errors are negative FDT_ERR_* codes; callers want an errno. */
static int fdt_build_errno(int err)
{
	return err == -FDT_ERR_NOSPACE ? -E2BIG : -EINVAL;
}

#define TRY(expr)                                                              \
	do {                                                                   \
		int try_err_ = (expr);                                         \
		if (try_err_ < 0)                                              \
			return fdt_build_errno(try_err_);                      \
	} while (0)

static int fdt_build_cpus(void *fdt, const struct fdt_build_config *cfg)
{
	char name[24];

	TRY(fdt_begin_node(fdt, "cpus"));
	TRY(fdt_property_u32(fdt, "#address-cells", 1));
	TRY(fdt_property_u32(fdt, "#size-cells", 0));
	for (unsigned int i = 0; i < cfg->max_cpus; i++) {
		snprintf(name, sizeof(name), "cpu@%u", i);
		TRY(fdt_begin_node(fdt, name));
		TRY(fdt_property_string(fdt, "device_type", "cpu"));
		TRY(fdt_property_u32(fdt, "reg", i)); /* APIC ID */
		bool on = cfg->present ? cfg->present[i] : i < cfg->boot_cpus;

		TRY(fdt_property_string(fdt, "status",
					on ? "okay" : "disabled"));
		TRY(fdt_end_node(fdt));
	}
	TRY(fdt_end_node(fdt));
	return 0;
}

/* One reg property with a (base, size) pair per RAM range. */
static int fdt_build_memory(void *fdt, const struct fdt_build_config *cfg)
{
	fdt64_t cells[2 * FDT_BUILD_MAX_RAM];

	for (unsigned int i = 0; i < cfg->nr_ram; i++) {
		cells[2 * i] = cpu_to_fdt64(cfg->ram[i].base);
		cells[2 * i + 1] = cpu_to_fdt64(cfg->ram[i].size);
	}
	TRY(fdt_begin_node(fdt, "memory@0"));
	TRY(fdt_property_string(fdt, "device_type", "memory"));
	TRY(fdt_property(fdt, "reg", cells,
			 (int)(sizeof(cells[0]) * 2 * cfg->nr_ram)));
	TRY(fdt_end_node(fdt));
	return 0;
}

/* Each device with a node builds its own, in address order (as DTS files). */
static int fdt_build_devices(void *fdt, const struct fdt_build_config *cfg)
{
	const struct dev_instance *devs[FDT_BUILD_MAX_DEVS];
	size_t n = dev_by_address(cfg->devs, cfg->nr_devs, DEV_BUS_NONE, devs,
				  FDT_BUILD_MAX_DEVS);

	for (size_t i = 0; i < n; i++)
		if (devs[i]->desc->fdt)
			TRY(devs[i]->desc->fdt(fdt, devs[i]));
	return 0;
}

static int fdt_build_tree(void *fdt, size_t size,
			  const struct fdt_build_config *cfg)
{
	int ret;

	TRY(fdt_create(fdt, (int)size));
	TRY(fdt_finish_reservemap(fdt));
	TRY(fdt_begin_node(fdt, ""));
	TRY(fdt_property_string(fdt, "compatible", ABI_FDT_COMPATIBLE));
	TRY(fdt_property_u32(fdt, "#address-cells", 2));
	TRY(fdt_property_u32(fdt, "#size-cells", 2));

	TRY(fdt_begin_node(fdt, "chosen"));
	TRY(fdt_property_string(fdt, "bootargs",
				cfg->cmdline ? cfg->cmdline : ""));
	TRY(fdt_end_node(fdt));

	ret = fdt_build_memory(fdt, cfg);
	if (ret)
		return ret;
	ret = fdt_build_cpus(fdt, cfg);
	if (ret)
		return ret;
	ret = fdt_build_devices(fdt, cfg);
	if (ret)
		return ret;

	TRY(fdt_end_node(fdt));
	TRY(fdt_finish(fdt));
	return 0;
}

long fdt_build_machine(void *buf, size_t size,
		       const struct fdt_build_config *cfg)
{
	int ret;

	if (!cfg->boot_cpus || cfg->boot_cpus > cfg->max_cpus || !cfg->nr_ram ||
	    cfg->nr_ram > FDT_BUILD_MAX_RAM ||
	    cfg->nr_devs > FDT_BUILD_MAX_DEVS || size > INT32_MAX)
		return -EINVAL;
	ret = fdt_build_tree(buf, size, cfg);
	if (ret)
		return ret;
	return fdt_totalsize(buf);
}
