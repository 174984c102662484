// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of the guest's pure parts: the cpulist formatter, the FDT
 * walker and both platform parsers (FDT built here with libfdt, as the VMM
 * builds it; MADT built by hand), and the register-block sequences of
 * hpio.c run against the VMM's own model of the block (vmm/devices/cpuhp_regs.c).
 */
#include <libfdt.h>

#include "cpuhp_regs.h"
#include "hotvm/guest_states.h"
#include "hpio.h"

#include "check.h"
#include "cpulist.h"
#include "dt.h"
#include "hotvm/abi.h"
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
	/* Word edges of the word-at-a-time walk. */
	CHECK_STREQ(FMT(62, 63, 64, 65, 127, 128), "62-65,127-128");
	CHECK_STREQ(FMT(0, 64, 1023), "0,64,1023");
	CHECK_STREQ(FMT(1022, 1023), "1022-1023");

	for (unsigned int c = 0; c < CPUMASK_BITS; c++)
		cpumask_set(&m, c);
	CHECK_EQ(cpumask_weight(&m), CPUMASK_BITS);
	/* The last CPU's number, as the full lists below end. */
	char all[16], holed[32];
	size_t len;

	snprintf(all, sizeof(all), "0-%u", CPUMASK_BITS - 1);
	snprintf(holed, sizeof(holed), "0-99,101-%u", CPUMASK_BITS - 1);
	len = strlen(holed);
	CHECK_EQ(cpulist_format(buf, sizeof(buf), &m), strlen(all));
	CHECK_STREQ(buf, all);
	cpumask_clear(&m, 100);
	CHECK_EQ(cpumask_weight(&m), CPUMASK_BITS - 1);
	CHECK_STREQ((cpulist_format(buf, sizeof(buf), &m), buf), holed);

	/* Truncation: NUL-terminated, full length returned. */
	CHECK_EQ(cpulist_format(buf, 4, &m), len);
	CHECK_STREQ(buf, "0-9");
	CHECK_EQ(cpulist_format(NULL, 0, &m), len);
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
	/* An I/O APIC entry: address at 4, GSI base at 8. */
	m[len] = 1;
	m[len + 1] = 12;
	put32(m + len + 4, 0xfec01000);
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
	CHECK(platform.ioapic_found);
	CHECK_EQ(platform.ioapic_base, 0xfec01000);

	/* Before ACPI 6.3 a disabled entry is a possible CPU (QEMU 7.2). */
	build_madt(&img, 3);
	memset(&platform, 0, sizeof(platform));
	CHECK_EQ(platform_from_acpi((uint64_t)(uintptr_t)img.rsdp), 0);
	CHECK_EQ(platform.nr_cpus, 4);
	CHECK_EQ(platform.cpus[2].apic_id, 3);
	CHECK(!platform.cpus[2].enabled);
}

/* The devices as the VMM's FDT describes them; @ac address cells. */
static void *build_fdt_devices(unsigned int ac, bool compat_ok)
{
	static char fdt[8192];
	fdt32_t reg[4];
	unsigned int n = 0;

	CHECK_EQ(fdt_create(fdt, sizeof(fdt)), 0);
	CHECK_EQ(fdt_finish_reservemap(fdt), 0);
	CHECK_EQ(fdt_begin_node(fdt, ""), 0);
	CHECK_EQ(fdt_property_string(fdt, "compatible", ABI_FDT_COMPATIBLE), 0);
	CHECK_EQ(fdt_property_u32(fdt, "#address-cells", ac), 0);
	CHECK_EQ(fdt_property_u32(fdt, "#size-cells", 1), 0);
	CHECK_EQ(fdt_begin_node(fdt, "cpus"), 0);
	fdt_cpu(fdt, 0, 0, "okay");
	fdt_cpu(fdt, 1, 1, "disabled");
	CHECK_EQ(fdt_end_node(fdt), 0);

	if (ac == 2)
		reg[n++] = cpu_to_fdt32(0);
	reg[n++] = cpu_to_fdt32(0xfea00000);
	reg[n++] = cpu_to_fdt32(4);
	CHECK_EQ(fdt_begin_node(fdt, "ged@fea00000"), 0);
	CHECK_EQ(fdt_property_string(fdt, "compatible",
				     compat_ok ? "hotvm,ged" : "acme,ged"),
		 0);
	CHECK_EQ(fdt_property(fdt, "reg", reg, (int)(n * 4)), 0);
	CHECK_EQ(fdt_property_u32(fdt, "interrupts", 9), 0);
	CHECK_EQ(fdt_end_node(fdt), 0);

	n = 0;
	if (ac == 2)
		reg[n++] = cpu_to_fdt32(1);
	reg[n++] = cpu_to_fdt32(0xfea00100);
	reg[n++] = cpu_to_fdt32(12);
	CHECK_EQ(fdt_begin_node(fdt, "cpuhp@fea00100"), 0);
	CHECK_EQ(fdt_property_string(fdt, "compatible", "hotvm,cpuhp-regs"), 0);
	CHECK_EQ(fdt_property(fdt, "reg", reg, (int)(n * 4)), 0);
	CHECK_EQ(fdt_end_node(fdt), 0);
	CHECK_EQ(fdt_end_node(fdt), 0);
	CHECK_EQ(fdt_finish(fdt), 0);
	return fdt;
}

static void test_platform_fdt_devices(void)
{
	memset(&platform, 0, sizeof(platform));
	platform_set_defaults();
	CHECK_EQ(platform_from_fdt(build_fdt_devices(2, true)), 0);
	CHECK(platform.ged_found);
	CHECK_EQ(platform.ged_base, 0xfea00000);
	CHECK_EQ(platform.ged_irq, 9);
	CHECK(platform.cpuhp_found);
	CHECK_EQ(platform.cpuhp_base, 0x1fea00100ULL);

	memset(&platform, 0, sizeof(platform));
	platform_set_defaults();
	CHECK_EQ(platform_from_fdt(build_fdt_devices(1, false)), 0);
	CHECK(!platform.ged_found); /* wrong compatible: defaults stay */
	CHECK_EQ(platform.ged_base, ABI_GED_MMIO);
	CHECK_EQ(platform.ged_irq, ABI_GED_IRQ);
	CHECK(platform.cpuhp_found);
	CHECK_EQ(platform.cpuhp_base, 0xfea00100);

	/* The old test FDT: a ged node without reg is not used. */
	memset(&platform, 0, sizeof(platform));
	platform_set_defaults();
	CHECK_EQ(platform_from_fdt(build_fdt(ABI_FDT_COMPATIBLE)), 0);
	CHECK(!platform.ged_found);
	CHECK(!platform.cpuhp_found);
	CHECK_EQ(platform.cpuhp_base, ABI_CPUHP_MMIO);
}

/* hpio against the VMM's model, with every access logged. */
struct fake {
	struct hpregs regs;
	uint32_t states[8][64]; /* guest-state words per CPU */
	unsigned int nr_states[8];
	uint32_t fault[8], target[8];
	unsigned int ejects[8];
	unsigned int accesses, ignored;
};

static void fake_eject(void *ctx, unsigned int cpu, bool asked)
{
	(void)asked;
	((struct fake *)ctx)->ejects[cpu]++;
}

static void fake_state(void *ctx, unsigned int cpu, uint32_t v)
{
	struct fake *f = ctx;

	if (f->nr_states[cpu] < 64)
		f->states[cpu][f->nr_states[cpu]++] = v;
}

static uint32_t fake_fault(void *ctx, unsigned int cpu)
{
	struct fake *f = ctx;
	uint32_t v = f->fault[cpu];

	f->fault[cpu] = 0;
	return v;
}

static uint32_t fake_target(void *ctx, unsigned int cpu)
{
	struct fake *f = ctx;
	uint32_t v = f->target[cpu];

	f->target[cpu] = 0;
	return v;
}

static u32 fake_read(struct hpio *io, unsigned int off, unsigned int width)
{
	struct fake *f = io->ctx;
	uint64_t v = 0;

	f->accesses++;
	if (hpregs_access(&f->regs, off, width, false, &v) != HPREGS_OK)
		f->ignored++;
	return (u32)v;
}

static void fake_write(struct hpio *io, unsigned int off, unsigned int width,
		       u32 val)
{
	struct fake *f = io->ctx;
	uint64_t v = val;

	f->accesses++;
	if (hpregs_access(&f->regs, off, width, true, &v) != HPREGS_OK)
		f->ignored++;
}

static const struct hpregs_ops fake_ops = {
	.eject = fake_eject,
	.guest_state = fake_state,
	.guest_fault = fake_fault,
	.guest_target = fake_target,
};

static void fake_init(struct fake *f, struct hpio *io, unsigned int nr)
{
	struct hpregs_config cfg = { .max_cpus = nr,
				     .ops = &fake_ops,
				     .ctx = f };

	memset(f, 0, sizeof(*f));
	CHECK_EQ(hpregs_init(&f->regs, &cfg), 0);
	*io = (struct hpio){
		.read = fake_read, .write = fake_write, .ctx = f, .nr_sel = nr
	};
	hpio_invalidate(io);
	CHECK_EQ(hpregs_coldplug(&f->regs, 0), 0);
}

static void test_hpio_scan(void)
{
	struct fake f;
	struct hpio io;
	u32 ins[8], rm[8];
	unsigned int ni, nr;
	struct hpregs_cpu c;

	fake_init(&f, &io, 8);
	CHECK_EQ(hpregs_coldplug(&f.regs, 2), 0);
	CHECK_EQ(hpregs_plug(&f.regs, 1), 0);
	CHECK_EQ(hpregs_plug(&f.regs, 7), 0);
	CHECK_EQ(hpregs_request_unplug(&f.regs, 2), 0);

	hpio_scan(&io, ins, &ni, rm, &nr, 8);
	CHECK_EQ(ni, 2);
	CHECK_EQ(ins[0], 1);
	CHECK_EQ(ins[1], 7);
	CHECK_EQ(nr, 1);
	CHECK_EQ(rm[0], 2);
	CHECK_EQ(f.ignored, 0);
	hpregs_get_cpu(&f.regs, 1, &c);
	CHECK(!c.inserting && c.enabled);
	hpregs_get_cpu(&f.regs, 2, &c);
	CHECK(!c.removing && c.unplug_requested);

	/* Events consumed: a second scan finds nothing, in one round. */
	CHECK_EQ(hpio_scan(&io, ins, &ni, rm, &nr, 8), 1);
	CHECK_EQ(ni + nr, 0);

	/* Eject: honoured for a present CPU, never for CPU 0. */
	hpio_eject(&io, 0);
	hpio_eject(&io, 4);
	CHECK_EQ(f.ejects[0] + f.ejects[4], 0);
	hpio_eject(&io, 2);
	CHECK_EQ(f.ejects[2], 1);
	CHECK(!hpregs_is_enabled(&f.regs, 2));

	/* An event below the start is found by wrapping: the scan stops. */
	CHECK_EQ(hpregs_plug(&f.regs, 3), 0);
	CHECK_EQ(hpregs_plug(&f.regs, 5), 0);
	hpio_scan(&io, ins, &ni, rm, &nr, 1); /* room for one */
	CHECK_EQ(ni, 1);
	CHECK_EQ(ins[0], 3);
	hpregs_get_cpu(&f.regs, 5, &c);
	CHECK(!c.inserting); /* cleared even though not recorded */
	hpregs_destroy(&f.regs);
}

static void test_hpio_ext(void)
{
	struct fake f;
	struct hpio io;
	unsigned int before;

	fake_init(&f, &io, 4);
	CHECK_EQ(hpregs_plug(&f.regs, 3), 0);
	f.fault[3] = GUEST_AP_WORK + 1;
	f.target[1] = GUEST_KICK_AP + 1;
	CHECK_EQ(hpio_ext_read(&io, 3, ABI_CPUHP_CMD_GUEST_FAULT),
		 GUEST_AP_WORK + 1);
	CHECK_EQ(hpio_ext_read(&io, 3, ABI_CPUHP_CMD_GUEST_FAULT), 0);
	CHECK_EQ(hpio_ext_read(&io, 1, ABI_CPUHP_CMD_GUEST_TARGET),
		 GUEST_KICK_AP + 1);
	CHECK_EQ(hpio_ext_read(&io, 1, ABI_CPUHP_CMD_GUEST_TARGET), 0);
	/* An unknown command reads 0, not the previous command's data. */
	CHECK_EQ(hpio_ext_read(&io, 3, 0x7f), 0);
	CHECK_EQ(hpio_arch_id(&io, 3), 3);
	CHECK_EQ(hpio_read_flags(&io, 3) & ABI_CPUHP_F_ENABLED,
		 ABI_CPUHP_F_ENABLED);

	/* Reports: 0x10 once, then one data write per report. */
	hpio_report(&io, 3, 0x105);
	before = f.accesses;
	hpio_report(&io, 3, 0x106);
	CHECK_EQ(f.accesses - before, 1);
	hpio_report(&io, 1, 0x907);
	CHECK_EQ(f.accesses - before, 3); /* select + data */
	CHECK_EQ(f.nr_states[3], 2);
	CHECK_EQ(f.states[3][0], 0x105);
	CHECK_EQ(f.states[3][1], 0x106);
	CHECK_EQ(f.nr_states[1], 1);
	CHECK_EQ(f.states[1][0], 0x907);

	/* After someone else wrote the block, hpio must not trust its cache. */
	hpio_invalidate(&io);
	f.regs.command = ABI_CPUHP_CMD_OST_STATUS; /* what a fuzzer leaves */
	hpio_report(&io, 3, 0x107);
	CHECK_EQ(f.nr_states[3], 3);
	CHECK_EQ(f.ignored, 2); /* 0x7f and the data read under command 1 */
	hpregs_destroy(&f.regs);
}

static void test_hpio_report_value(void)
{
	struct cpuhp_notice n = { .kind = CPUHP_NOTICE_STEP,
				  .state = GUEST_AP_LAPIC,
				  .bringup = true };

	CHECK_EQ(hpio_report_value(&n), ABI_GUEST_STATE_UP | GUEST_AP_LAPIC);
	n.ret = -11; /* startup failed: still below it */
	CHECK_EQ(hpio_report_value(&n), ABI_GUEST_STATE_UP |
						ABI_GUEST_STATE_FAILED |
						(GUEST_AP_LAPIC - 1));
	n = (struct cpuhp_notice){ .kind = CPUHP_NOTICE_STEP,
				   .state = GUEST_ONLINE };
	CHECK_EQ(hpio_report_value(&n), GUEST_ONLINE - 1);
	n.ret = -16; /* teardown failed: still at it */
	CHECK_EQ(hpio_report_value(&n), ABI_GUEST_STATE_FAILED | GUEST_ONLINE);
	n = (struct cpuhp_notice){ .kind = CPUHP_NOTICE_STEP,
				   .state = GUEST_AP_WORK,
				   .rollback = true };
	CHECK_EQ(hpio_report_value(&n),
		 ABI_GUEST_STATE_ROLLBACK | (GUEST_AP_WORK - 1));
	n = (struct cpuhp_notice){ .kind = CPUHP_NOTICE_DONE,
				   .state = GUEST_ONLINE,
				   .bringup = true };
	CHECK_EQ(hpio_report_value(&n),
		 ABI_GUEST_STATE_DONE | ABI_GUEST_STATE_UP | GUEST_ONLINE);
	n = (struct cpuhp_notice){ .kind = CPUHP_NOTICE_DONE,
				   .state = CPUHP_OFFLINE,
				   .rollback = true,
				   .ret = -11 };
	CHECK_EQ(hpio_report_value(&n), ABI_GUEST_STATE_DONE |
						ABI_GUEST_STATE_ROLLBACK |
						ABI_GUEST_STATE_FAILED);
}

CHECK_MAIN(TEST(test_cpulist), TEST(test_fdt_walk), TEST(test_platform_fdt),
	   TEST(test_platform_madt), TEST(test_platform_fdt_devices),
	   TEST(test_hpio_scan), TEST(test_hpio_ext),
	   TEST(test_hpio_report_value))
