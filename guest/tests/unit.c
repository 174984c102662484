// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of the guest's pure parts: the cpulist formatter, the FDT
 * walker and both platform parsers (FDT built here with libfdt, as the VMM
 * builds it; MADT built by hand).
 */
#include <libfdt.h>

#include "check.h"
#include "cpulist.h"
#include "dt.h"
#include "hotvm_abi.h"
#include "platform.h"
#include "pvh.h"

/* What platform.c needs from the rest of the guest. */
struct boot_info boot_info;

int printk(const char *fmt, ...)
{
	(void)fmt;
	return 0;
}

static const char *fmt_mask(const unsigned int *cpus, size_t n)
{
	static char buf[2048];
	struct cpumask m = { 0 };

	for (size_t i = 0; i < n; i++)
		cpumask_set(&m, cpus[i]);
	cpulist_format(buf, sizeof(buf), &m);
	return buf;
}

#define FMT(...)                                                               \
	fmt_mask((const unsigned int[]){ __VA_ARGS__ },                        \
		 sizeof((const unsigned int[]){ __VA_ARGS__ }) /               \
			 sizeof(unsigned int))

static void test_cpulist(void)
{
	struct cpumask m = { 0 };
	char buf[16];

	CHECK_STREQ(fmt_mask(NULL, 0), "");
	CHECK_STREQ(FMT(0), "0");
	CHECK_STREQ(FMT(0, 1), "0-1");
	CHECK_STREQ(FMT(0, 1, 2, 5), "0-2,5");
	CHECK_STREQ(FMT(1, 3, 5), "1,3,5");
	CHECK_STREQ(FMT(0, 2, 3, 4, 7, 8), "0,2-4,7-8");
	CHECK_STREQ(FMT(63, 64), "63-64");
	CHECK_STREQ(FMT(255), "255");
	CHECK_STREQ(FMT(5, 4, 3, 10), "3-5,10");

	for (unsigned int c = 0; c < CPUMASK_BITS; c++)
		cpumask_set(&m, c);
	CHECK_EQ(cpumask_weight(&m), CPUMASK_BITS);
	CHECK_EQ(cpulist_format(buf, sizeof(buf), &m), 5);
	CHECK_STREQ(buf, "0-255");
	cpumask_clear(&m, 100);
	CHECK_EQ(cpumask_weight(&m), CPUMASK_BITS - 1);
	CHECK_STREQ((cpulist_format(buf, sizeof(buf), &m), buf),
		    "0-99,101-255");

	/* Truncation: NUL-terminated, full length returned. */
	CHECK_EQ(cpulist_format(buf, 4, &m), 12);
	CHECK_STREQ(buf, "0-9");
	CHECK_EQ(cpulist_format(NULL, 0, &m), 12);
}

static void fdt_cpu(void *fdt, unsigned int n, unsigned int apic,
		    const char *status)
{
	char name[32];

	snprintf(name, sizeof(name), "cpu@%u", n);
	CHECK_EQ(fdt_begin_node(fdt, name), 0);
	CHECK_EQ(fdt_property_string(fdt, "device_type", "cpu"), 0);
	CHECK_EQ(fdt_property_u32(fdt, "reg", apic), 0);
	if (status)
		CHECK_EQ(fdt_property_string(fdt, "status", status), 0);
	CHECK_EQ(fdt_end_node(fdt), 0);
}

static void *build_fdt(const char *compat)
{
	static char fdt[8192];

	CHECK_EQ(fdt_create(fdt, sizeof(fdt)), 0);
	CHECK_EQ(fdt_finish_reservemap(fdt), 0);
	CHECK_EQ(fdt_begin_node(fdt, ""), 0);
	CHECK_EQ(fdt_property_string(fdt, "compatible", compat), 0);
	CHECK_EQ(fdt_property_u32(fdt, "#address-cells", 2), 0);
	CHECK_EQ(fdt_begin_node(fdt, "chosen"), 0);
	CHECK_EQ(fdt_end_node(fdt), 0);
	CHECK_EQ(fdt_begin_node(fdt, "cpus"), 0);
	CHECK_EQ(fdt_property_u32(fdt, "#address-cells", 1), 0);
	CHECK_EQ(fdt_property_u32(fdt, "#size-cells", 0), 0);
	fdt_cpu(fdt, 0, 0, "okay");
	fdt_cpu(fdt, 1, 1, "okay");
	fdt_cpu(fdt, 2, 6, "disabled");
	fdt_cpu(fdt, 3, 7, NULL);
	CHECK_EQ(fdt_begin_node(fdt, "cpu-map"), 0); /* not a cpu@N */
	CHECK_EQ(fdt_end_node(fdt), 0);
	CHECK_EQ(fdt_end_node(fdt), 0);
	CHECK_EQ(fdt_begin_node(fdt, "ged@fe000000"), 0);
	CHECK_EQ(fdt_property_string(fdt, "compatible", "hotvm,ged"), 0);
	CHECK_EQ(fdt_end_node(fdt), 0);
	CHECK_EQ(fdt_end_node(fdt), 0);
	CHECK_EQ(fdt_finish(fdt), 0);
	return fdt;
}

static void test_fdt_walk(void)
{
	void *fdt = build_fdt("vendor,other\0" ABI_FDT_COMPATIBLE);
	int root, cpus, node, len;
	const u32 *reg;

	CHECK_EQ(dt_check(fdt, fdt_totalsize(fdt)), 0);
	CHECK_EQ(dt_check(fdt, 16), -1);
	root = dt_path_offset(fdt, "/");
	CHECK(root >= 0);
	cpus = dt_path_offset(fdt, "/cpus");
	CHECK_EQ(cpus, fdt_path_offset(fdt, "/cpus"));
	node = dt_path_offset(fdt, "/cpus/cpu@2");
	CHECK_EQ(node, fdt_path_offset(fdt, "/cpus/cpu@2"));
	reg = dt_getprop(fdt, node, "reg", &len);
	CHECK(reg != NULL);
	CHECK_EQ(len, 4);
	CHECK_EQ(reg ? dt32_to_cpu(*reg) : 0, 6);
	CHECK_EQ(dt_path_offset(fdt, "/nope"), -1);
	CHECK(dt_getprop(fdt, node, "nope", &len) == NULL);
	CHECK_STREQ(dt_get_name(fdt, dt_first_subnode(fdt, cpus)), "cpu@0");
	CHECK_EQ(dt_path_offset(fdt, "/ged"), fdt_path_offset(fdt, "/ged"));
}

static void test_platform_fdt(void)
{
	void *fdt = build_fdt(ABI_FDT_COMPATIBLE);

	memset(&platform, 0, sizeof(platform));
	CHECK_EQ(platform_from_fdt(fdt), 0);
	CHECK_EQ(platform.nr_cpus, 4);
	CHECK_EQ(platform.cpus[0].apic_id, 0);
	CHECK(platform.cpus[0].enabled);
	CHECK_EQ(platform.cpus[1].apic_id, 1);
	CHECK(platform.cpus[1].enabled);
	CHECK_EQ(platform.cpus[2].apic_id, 6);
	CHECK(!platform.cpus[2].enabled);
	CHECK_EQ(platform.cpus[3].apic_id, 7);
	CHECK(platform.cpus[3].enabled); /* no status: okay */

	memset(&platform, 0, sizeof(platform));
	CHECK_EQ(platform_from_fdt(build_fdt("vendor,other")), -1);
}

struct madt_image {
	char rsdp[36];
	char xsdt[36 + 8];
	char madt[512];
};

static void put32(char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static size_t build_madt(struct madt_image *img, uint8_t rev)
{
	char *m = img->madt;
	size_t len = 44;
	uint64_t addr;

	memset(img, 0, sizeof(*img));
	memcpy(img->rsdp, "RSD PTR ", 8);
	img->rsdp[15] = 2;
	addr = (uint64_t)(uintptr_t)img->xsdt;
	memcpy(img->rsdp + 24, &addr, 8);

	memcpy(img->xsdt, "XSDT", 4);
	put32(img->xsdt + 4, sizeof(img->xsdt));
	addr = (uint64_t)(uintptr_t)img->madt;
	memcpy(img->xsdt + 36, &addr, 8);

	memcpy(m, "APIC", 4);
	m[8] = (char)rev;
#define LAPIC(id, flags)                                                       \
	do {                                                                   \
		m[len] = 0;                                                    \
		m[len + 1] = 8;                                                \
		m[len + 3] = (char)(id);                                       \
		put32(m + len + 4, flags);                                     \
		len += 8;                                                      \
	} while (0)
	LAPIC(0, 1);
	LAPIC(2, 2);
	LAPIC(3, 0);
	/* An I/O APIC entry, skipped. */
	m[len] = 1;
	m[len + 1] = 12;
	len += 12;
	/* x2APIC: type 9, length 16, id at 4, flags at 8. */
	m[len] = 9;
	m[len + 1] = 16;
	put32(m + len + 4, 300);
	put32(m + len + 8, 1);
	len += 16;
	put32(m + 4, (uint32_t)len);
	return len;
}

static void test_platform_madt(void)
{
	static struct madt_image img;

	build_madt(&img, 5);
	memset(&platform, 0, sizeof(platform));
	CHECK_EQ(platform_from_acpi((uint64_t)(uintptr_t)img.rsdp), 0);
	CHECK_EQ(platform.nr_cpus, 3);
	CHECK_EQ(platform.cpus[0].apic_id, 0);
	CHECK(platform.cpus[0].enabled);
	CHECK_EQ(platform.cpus[1].apic_id, 2);
	CHECK(!platform.cpus[1].enabled);
	CHECK_EQ(platform.cpus[2].apic_id, 300);
	CHECK(platform.cpus[2].enabled);

	/* Before ACPI 6.3 a disabled entry is a possible CPU (QEMU 7.2). */
	build_madt(&img, 3);
	memset(&platform, 0, sizeof(platform));
	CHECK_EQ(platform_from_acpi((uint64_t)(uintptr_t)img.rsdp), 0);
	CHECK_EQ(platform.nr_cpus, 4);
	CHECK_EQ(platform.cpus[2].apic_id, 3);
	CHECK(!platform.cpus[2].enabled);
}

CHECK_MAIN(TEST(test_cpulist), TEST(test_fdt_walk), TEST(test_platform_fdt),
	   TEST(test_platform_madt))
