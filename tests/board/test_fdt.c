// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for the FDT builder: parse the tree back with libfdt. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libfdt.h>

#include "board_devices.h"
#include "check.h"
#include "fdt_build.h"
#include "hotvm/abi.h"

static void check_hotplug_nodes(void);

static char buf[ABI_FDT_MAX];

static const struct fdt_build_range ram[] = {
	{ .base = 0, .size = 0xa0000 },
	{ .base = 0x100000, .size = 0xff00000 },
};

static void check_tree(unsigned int boot, unsigned int max)
{
	struct fdt_build_config cfg = {
		.ram = ram,
		.nr_ram = 2,
		.boot_cpus = boot,
		.max_cpus = max,
		.cmdline = "exit now",
	};
	const fdt64_t *reg;
	const char *s;
	int node, cpus, len, n = 0, okay = 0;
	long size;
	cfg.devs = board_devices(&cfg.nr_devs);

	size = fdt_build_machine(buf, sizeof(buf), &cfg);
	CHECK(size > 0);
	if (size <= 0)
		return;
	CHECK_EQ(fdt_check_header(buf), 0);
	CHECK_EQ(fdt_totalsize(buf), size);
	CHECK_EQ(fdt_node_check_compatible(buf, 0, ABI_FDT_COMPATIBLE), 0);
	CHECK_EQ(fdt_address_cells(buf, 0), 2);
	CHECK_EQ(fdt_size_cells(buf, 0), 2);

	node = fdt_path_offset(buf, "/chosen");
	CHECK(node >= 0);
	s = fdt_getprop(buf, node, "bootargs", NULL);
	CHECK_STREQ(s, "exit now");

	node = fdt_path_offset(buf, "/memory@0");
	CHECK(node >= 0);
	reg = fdt_getprop(buf, node, "reg", &len);
	CHECK(reg);
	CHECK_EQ(len, 32);
	if (reg && len == 32) {
		fdt64_t cells[4]; /* property data is only 4-byte aligned */

		memcpy(cells, reg, sizeof(cells));
		CHECK_EQ(fdt64_to_cpu(cells[0]), 0);
		CHECK_EQ(fdt64_to_cpu(cells[1]), 0xa0000);
		CHECK_EQ(fdt64_to_cpu(cells[2]), 0x100000);
		CHECK_EQ(fdt64_to_cpu(cells[3]), 0xff00000);
	}

	cpus = fdt_path_offset(buf, "/cpus");
	CHECK(cpus >= 0);
	CHECK_EQ(fdt_address_cells(buf, cpus), 1);
	CHECK_EQ(fdt_size_cells(buf, cpus), 0);
	fdt_for_each_subnode(node, buf, cpus)
	{
		const fdt32_t *r = fdt_getprop(buf, node, "reg", &len);
		char name[24];
		uint32_t id;

		CHECK(r && len == 4);
		if (!r || len != 4)
			continue;
		id = fdt32_to_cpu(*r);
		snprintf(name, sizeof(name), "cpu@%u", id);
		CHECK_STREQ(fdt_get_name(buf, node, NULL), name);
		CHECK_STREQ(fdt_getprop(buf, node, "device_type", NULL), "cpu");
		s = fdt_getprop(buf, node, "status", NULL);
		CHECK_STREQ(s, id < boot ? "okay" : "disabled");
		if (s && !strcmp(s, "okay"))
			okay++;
		CHECK_EQ(id, n);
		n++;
	}
	CHECK_EQ(n, max);
	CHECK_EQ(okay, boot);
	check_hotplug_nodes();
}

/* The two hotplug devices, by the paths and names the tiny guest uses. */
static void check_hotplug_nodes(void)
{
	static const struct {
		const char *path, *compatible;
		uint64_t base, size;
	} devs[] = {
		{ "/ged@feb00000", "hotvm,ged", ABI_GED_MMIO, ABI_GED_SIZE },
		{ "/cpuhp@feb00100", "hotvm,cpuhp-regs", ABI_CPUHP_MMIO,
		  ABI_CPUHP_SIZE },
	};

	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		int node = fdt_path_offset(buf, devs[i].path), len;
		const void *reg;
		fdt64_t cells[2];

		CHECK(node >= 0);
		if (node < 0)
			continue;
		CHECK_EQ(fdt_node_check_compatible(buf, node,
						   devs[i].compatible),
			 0);
		reg = fdt_getprop(buf, node, "reg", &len);
		CHECK(reg && len == 16);
		if (reg && len == 16) {
			memcpy(cells, reg, sizeof(cells));
			CHECK_EQ(fdt64_to_cpu(cells[0]), devs[i].base);
			CHECK_EQ(fdt64_to_cpu(cells[1]), devs[i].size);
		}
	}
	{
		int node = fdt_path_offset(buf, "/ged@feb00000"), len;
		const fdt32_t *irq = fdt_getprop(buf, node, "interrupts", &len);

		CHECK(irq && len == 4);
		if (irq && len == 4)
			CHECK_EQ(fdt32_to_cpu(*irq), ABI_GED_IRQ);
	}
}

static void test_small(void)
{
	check_tree(1, 1);
	check_tree(2, 8);
}

/* The largest machine KVM here allows must fit the ABI's FDT area. */
static void test_max(void)
{
	check_tree(8, 1024);
}

static void test_errors(void)
{
	struct fdt_build_config cfg = {
		.ram = ram,
		.nr_ram = 2,
		.boot_cpus = 1,
		.max_cpus = 64,
	};
	cfg.devs = board_devices(&cfg.nr_devs);

	CHECK_EQ(fdt_build_machine(buf, 256, &cfg), -E2BIG);
	cfg.boot_cpus = 0;
	CHECK_EQ(fdt_build_machine(buf, sizeof(buf), &cfg), -EINVAL);
	cfg.boot_cpus = 2;
	cfg.max_cpus = 1;
	CHECK_EQ(fdt_build_machine(buf, sizeof(buf), &cfg), -EINVAL);
	cfg.max_cpus = 2;
	cfg.nr_ram = 0;
	CHECK_EQ(fdt_build_machine(buf, sizeof(buf), &cfg), -EINVAL);
}

CHECK_MAIN(TEST(test_small), TEST(test_max), TEST(test_errors))
