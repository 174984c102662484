// SPDX-License-Identifier: GPL-2.0-only
/*
 * The DSDT builder: scale (1 to DSDT_MAX_CPUS possible CPUs), the register
 * block fields of docs/design.md §6.2, the GED resources, the per-CPU _MAT
 * choice between Local APIC and Local x2APIC entries, and errors, for
 * hotvm's device table (board_devices()); and that each device's AML comes
 * from its row (another address, a second UART).  The expected bytes are
 * hand-assembled; test_dsdt_iasl.c checks the whole table with ACPICA.
 */
#include <errno.h>
#include <stdint.h>

#include "board_devices.h"
#include "check.h"
#include "dsdt.h"
#include "hotvm/abi.h"
#include "serial.h"

/* hotvm's machine, for ncpus possible CPUs. */
static struct dsdt_config machine(unsigned int ncpus, const uint32_t *ids)
{
	struct dsdt_config cfg = { .ncpus = ncpus, .apic_ids = ids };

	cfg.devs = board_devices(&cfg.nr_devs);
	return cfg;
}

static int build(struct aml_buf *b, unsigned int ncpus, const uint32_t *ids)
{
	const struct dsdt_config cfg = machine(ncpus, ids);

	*b = (struct aml_buf){ 0 };
	return dsdt_build_aml(b, &cfg);
}

static size_t count(const struct aml_buf *b, const void *pat, size_t n)
{
	const uint8_t *p = b->data, *end = b->data + b->len;
	size_t c = 0;

	while ((p = memmem(p, (size_t)(end - p), pat, n))) {
		c++;
		p++;
	}
	return c;
}

static int has(const struct aml_buf *b, const void *pat, size_t n)
{
	return memmem(b->data, b->len, pat, n) != NULL;
}

#define HAS(b, lit)   has(b, lit, sizeof(lit) - 1)
#define COUNT(b, lit) count(b, lit, sizeof(lit) - 1)

/* PkgLength at p: the value and, in *n, its size. */
static uint32_t pkglen_at(const uint8_t *p, unsigned int *n)
{
	uint32_t v;

	*n = 1 + (p[0] >> 6);
	if (*n == 1)
		return p[0] & 0x3f;
	v = p[0] & 0x0f;
	for (unsigned int i = 1; i < *n; i++)
		v |= (uint32_t)p[i] << (4 + 8 * (i - 1));
	return v;
}

static void test_scale(void)
{
	static const unsigned int sizes[] = { 1,   8,	 255,
					      256, 1024, DSDT_MAX_CPUS };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned int n = sizes[i], pl;
		size_t xapic = n < 255 ? n : 255;
		struct aml_buf b;

		CHECK_EQ(build(&b, n, NULL), 0);
		printf("# %u CPUs: %zu bytes of AML\n", n, b.len);
		/* One Scope (\_SB) whose length covers the whole body. */
		CHECK_EQ(b.data[0], AML_SCOPE_OP);
		CHECK_EQ(pkglen_at(b.data + 1, &pl), b.len - 1);
		CHECK(!memcmp(b.data + 1 + pl, "\\_SB_", 5));
		CHECK_EQ(COUNT(&b, "ACPI0007"), n);
		/* _EJ0 on every CPU but the boot CPU */
		CHECK_EQ(COUNT(&b, "_EJ0"), n - 1);
		CHECK_EQ(COUNT(&b, "_OST"), n);
		/* the definition, then one _MAT call per CPU */
		CHECK_EQ(COUNT(&b, "CMTL"), 1 + xapic);
		CHECK_EQ(COUNT(&b, "CMTX"), 1 + (n - xapic));
		/* CTFY notifies each CPU by name once */
		CHECK_EQ(COUNT(&b, "\x86"
				   "C000"
				   "\x69"),
			 1);
		aml_free(&b);
	}
}

static void test_limits(void)
{
	struct aml_buf b;
	uint8_t small[64];
	const struct dsdt_config one = machine(1, NULL);
	long len;

	CHECK_EQ(build(&b, 0, NULL), -EINVAL);
	aml_free(&b);
	CHECK_EQ(build(&b, DSDT_MAX_CPUS + 1, NULL), -EINVAL);
	aml_free(&b);

	CHECK_EQ(build(&b, 1, NULL), 0);
	uint8_t *out = malloc(b.len);
	len = dsdt_build(out, b.len, &one);
	CHECK_EQ(len, b.len);
	CHECK(len > 0 && !memcmp(out, b.data, b.len));
	CHECK_EQ(dsdt_build(out, b.len - 1, &one), -E2BIG);
	CHECK_EQ(dsdt_build(small, sizeof(small), &one), -E2BIG);
	free(out);
	aml_free(&b);
}

static void test_register_block(void)
{
	struct aml_buf b;

	CHECK_EQ(build(&b, 4, NULL), 0);
	/* OperationRegion (PRST, SystemMemory, 0xFEB00100, 0x0C) */
	CHECK(HAS(&b, "\x5b\x80"
		      "PRST"
		      "\x00\x0c\x00\x01\xb0\xfe\x0a\x0c"));
	/*
	 * Field (PRST, ByteAcc, NoLock, WriteAsZeros) { Offset (4),
	 *	CPEN, 1, CINS, 1, CRMV, 1, CEJT, 1, , 4, CCMD, 8 }
	 */
	CHECK(HAS(&b, "\x5b\x81\x23"
		      "PRST"
		      "\x41\x00\x20"
		      "CPEN"
		      "\x01"
		      "CINS"
		      "\x01"
		      "CRMV"
		      "\x01"
		      "CEJT"
		      "\x01\x00\x04"
		      "CCMD"
		      "\x08"));
	/* Field (PRST, DWordAcc, NoLock, Preserve) { CSEL, 32, Offset (8), CDAT, 32 } */
	CHECK(HAS(&b, "\x5b\x81\x12"
		      "PRST"
		      "\x03"
		      "CSEL"
		      "\x20\x00\x20"
		      "CDAT"
		      "\x20"));
	CHECK(HAS(&b, "\x5b\x01"
		      "CPLK"
		      "\x00"));
	/* CSTA: Acquire, Store (Arg0, CSEL), ... If (LEqual (CPEN, One)) */
	CHECK(HAS(&b, "CSTA"
		      "\x09\x5b\x23"
		      "CPLK"
		      "\xff\xff\x70\x68"
		      "CSEL"
		      "\x70\x00\x60\xa0\x0b\x93"
		      "CPEN"
		      "\x01\x70\x0a\x0f\x60\x5b\x27"
		      "CPLK"
		      "\xa4\x60"));
	/* CEJ0: Store (One, CEJT) */
	CHECK(HAS(&b, "\x70\x01"
		      "CEJT"));
	/* COST: Store (1, CCMD) Store (Arg1, CDAT) Store (2, CCMD) Store (Arg2, CDAT) */
	CHECK(HAS(&b, "\x70\x01"
		      "CCMD"
		      "\x70\x69"
		      "CDAT"
		      "\x70\x0a\x02"
		      "CCMD"
		      "\x70\x6a"
		      "CDAT"));
	/* CSCN: Acquire, Store (Zero, CSEL), Store (One, Local0), Store (Zero, Local1) */
	CHECK(HAS(&b, "CSCN"
		      "\x08\x5b\x23"
		      "CPLK"
		      "\xff\xff\x70\x00"
		      "CSEL"
		      "\x70\x01\x60\x70\x00\x61\xa2"));
	/* CSCN: While (LAnd (Local0, LLess (Local1, 4))) { ... Store (Zero, CCMD) Store (CDAT, Local2) */
	CHECK(HAS(&b, "\x90\x60\x95\x61\x0a\x04\x70\x00\x60\x70\x00"
		      "CCMD"
		      "\x70"
		      "CDAT"
		      "\x62"));
	/* If (LEqual (CINS, One)) { CTFY (Local2, 1) Store (One, CINS) ... } */
	CHECK(HAS(&b, "\x93"
		      "CINS"
		      "\x01"
		      "CTFY"
		      "\x62\x01\x70\x01"
		      "CINS"));
	CHECK(HAS(&b, "\x93"
		      "CRMV"
		      "\x01"
		      "CTFY"
		      "\x62\x0a\x03\x70\x01"
		      "CRMV"));
	aml_free(&b);

	CHECK_EQ(build(&b, 1024, NULL), 0);
	CHECK(HAS(&b, "\x95\x61\x0b\x00\x04")); /* the scan's bound */
	aml_free(&b);
}

/* The UART and the claimed MMIO windows, as Linux's pnp drivers read them. */
static void test_com1_mres(void)
{
	struct aml_buf b = { 0 };

	CHECK_EQ(build(&b, 2, NULL), 0);
	/* COM1: PNP0501, IO (Decode16, 0x3F8, 0x3F8, 1, 8), IRQNoFlags { 4 } */
	CHECK(HAS(&b, "COM1"
		      "\x08"
		      "_HID"
		      "\x0c\x41\xd0\x05\x01"
		      "\x08"
		      "_UID"
		      "\x00\x08"
		      "_CRS"
		      "\x11\x10\x0a\x0d"
		      "\x47\x01\xf8\x03\xf8\x03\x01\x08"
		      "\x22\x10\x00"
		      "\x79\x00"));
	/* MRES: PNP0C02 with the GED's 4 bytes and the block's 12 */
	CHECK(HAS(&b, "MRES"
		      "\x08"
		      "_HID"
		      "\x0c\x41\xd0\x0c\x02"
		      "\x08"
		      "_UID"
		      "\x00\x08"
		      "_CRS"
		      "\x11\x1d\x0a\x1a"
		      "\x86\x09\x00\x01\x00\x00\xb0\xfe\x04\x00\x00\x00"
		      "\x86\x09\x00\x01\x00\x01\xb0\xfe\x0c\x00\x00\x00"
		      "\x79\x00"));
	aml_free(&b);
}

/* hotvm's table with the GED and the register block moved. */
static struct dsdt_config moved(struct dev_instance *devs, size_t max)
{
	struct dsdt_config cfg = machine(2, NULL);

	CHECK(cfg.nr_devs <= max);
	for (size_t i = 0; i < cfg.nr_devs && i < max; i++) {
		devs[i] = cfg.devs[i];
		if (!strcmp(devs[i].name, "GED_")) {
			devs[i].base = 0xfed00000;
			devs[i].irq = 9;
		} else if (!strcmp(devs[i].name, "CPUS")) {
			devs[i].base = 0xfed00100;
		}
	}
	cfg.devs = devs;
	return cfg;
}

static void test_ged(void)
{
	struct dev_instance devs[BOARD_MAX_DEVICES];
	const struct dsdt_config cfg = moved(devs, BOARD_MAX_DEVICES);
	struct aml_buf b = { 0 };

	CHECK_EQ(build(&b, 2, NULL), 0);
	CHECK(HAS(&b, "GED_"
		      "\x08"
		      "_HID"
		      "\x0d"
		      "ACPI0013"
		      "\x00\x08"
		      "_UID"
		      "\x00"));
	/*
	 * _CRS: only Interrupt (Edge, ActiveHigh, Exclusive) { 5 }: Linux's
	 * evged fails its probe on any other resource.
	 */
	CHECK(HAS(&b, "GED_"
		      "\x08"
		      "_HID"
		      "\x0d"
		      "ACPI0013"
		      "\x00\x08"
		      "_UID"
		      "\x00\x08"
		      "_CRS"
		      "\x11\x0e\x0a\x0b"
		      "\x89\x06\x00\x03\x01\x05\x00\x00\x00\x79\x00"));
	CHECK(HAS(&b, "\x5b\x80"
		      "EREG"
		      "\x00\x0c\x00\x00\xb0\xfe\x0a\x04"));
	CHECK(HAS(&b, "\x5b\x81\x0b"
		      "EREG"
		      "\x43"
		      "ESEL"
		      "\x20"));
	/* Method (_EVT, 1, Serialized) { Store (ESEL, Local0)
	 *	If (And (Local0, 8)) { \_SB.CPUS.CSCN () }
	 *	If (And (Local0, 2)) { Notify (\_SB.PWRB, 0x80) } } */
	CHECK(HAS(&b, "\x14\x36"
		      "_EVT"
		      "\x09\x70"
		      "ESEL"
		      "\x60\xa0\x15\x7b\x60\x0a\x08\x00\\\x2f\x03"
		      "_SB_CPUSCSCN"
		      "\xa0\x13\x7b\x60\x0a\x02\x00\x86\\\x2e"
		      "_SB_PWRB"
		      "\x0a\x80"));
	/* Name (\_S5, Package (4) { 5, 5, 0, 0 }): poweroff's SLP_TYP. */
	CHECK(HAS(&b, "\x08\\_S5_\x12\x08\x04\x0a\x05\x0a\x05\x00\x00"));
	/* Device (PWRB) { Name (_HID, EisaId ("PNP0C0C")) } */
	CHECK(HAS(&b, "\x5b\x82\x15"
		      "PWRB"
		      "\x08_HID\x0c\x41\xd0\x0c\x0c"));
	/* The container: _HID "ACPI0010", _CID EISAID ("PNP0A05") */
	CHECK(HAS(&b, "CPUS"
		      "\x08"
		      "_HID"
		      "\x0d"
		      "ACPI0010"
		      "\x00\x08"
		      "_CID"
		      "\x0c\x41\xd0\x0a\x05"));
	aml_free(&b);

	b = (struct aml_buf){ 0 };
	CHECK_EQ(dsdt_build_aml(&b, &cfg), 0);
	/* the GED's interrupt where asked, and its window claimed by MRES */
	CHECK(HAS(&b, "\x89\x06\x00\x03\x01\x09\x00\x00\x00\x79\x00"));
	CHECK(HAS(&b, "\x86\x09\x00\x01\x00\x00\xd0\xfe\x04\x00\x00\x00"
		      "\x86\x09\x00\x01\x00\x01\xd0\xfe\x0c\x00\x00\x00"));
	CHECK(HAS(&b, "\x5b\x80"
		      "PRST"
		      "\x00\x0c\x00\x01\xd0\xfe\x0a\x0c"));
	aml_free(&b);
}

/* A second UART is one more row: its own name, _UID, ports and IRQ. */
static void test_second_uart(void)
{
	struct dev_instance devs[BOARD_MAX_DEVICES + 1];
	struct dsdt_config cfg = machine(1, NULL);
	struct aml_buf b = { 0 };
	size_t n = 0;

	for (size_t i = 0; i < cfg.nr_devs && n < BOARD_MAX_DEVICES; i++) {
		devs[n++] = cfg.devs[i];
		if (cfg.devs[i].desc == &serial_desc)
			devs[n++] = (struct dev_instance){
				.desc = &serial_desc,
				.name = "COM2",
				.base = 0x2f8,
				.irq = 3,
				.uid = 1,
			};
	}
	cfg.devs = devs;
	cfg.nr_devs = n;
	CHECK_EQ(dsdt_build_aml(&b, &cfg), 0);
	/* Device (COM1) { _HID PNP0501, _UID 0, IO 0x3f8/8, IRQ 4 } */
	CHECK(HAS(&b, "COM1\x08_HID\x0c\x41\xd0\x05\x01\x08_UID\x00\x08_CRS"
		      "\x11\x10\x0a\x0d\x47\x01\xf8\x03\xf8\x03\x01\x08"
		      "\x22\x10\x00"));
	/* Device (COM2) { _HID PNP0501, _UID 1, IO 0x2f8/8, IRQ 3 } */
	CHECK(HAS(&b, "COM2\x08_HID\x0c\x41\xd0\x05\x01\x08_UID\x01\x08_CRS"
		      "\x11\x10\x0a\x0d\x47\x01\xf8\x02\xf8\x02\x01\x08"
		      "\x22\x08\x00"));
	aml_free(&b);
}

static void test_cpu_devices(void)
{
	struct aml_buf b;

	CHECK_EQ(build(&b, 300, NULL), 0);
	/* Device (C000) { _HID, _UID Zero, _STA, _MAT, no _EJ0, _OST } */
	CHECK(HAS(&b, "C000"
		      "\x08"
		      "_HID"
		      "\x0d"
		      "ACPI0007"
		      "\x00\x08"
		      "_UID"
		      "\x00\x14\x0c"
		      "_STA"
		      "\x00\xa4"
		      "CSTA"
		      "\x00\x14\x0d"
		      "_MAT"
		      "\x00\xa4"
		      "CMTL"
		      "\x00\x00\x14\x0e"
		      "_OST"
		      "\x03"
		      "COST"
		      "\x00\x68\x69\x6a"));
	/* C001: Method (_EJ0, 1) { CEJ0 (One) } */
	CHECK(HAS(&b, "\x14\x0b"
		      "_EJ0"
		      "\x01"
		      "CEJ0"
		      "\x01"));
	/* 254 still fits the Local APIC entry; 255 and up take x2APIC. */
	CHECK(HAS(&b, "_MAT"
		      "\x00\xa4"
		      "CMTL"
		      "\x0a\xfe\x0a\xfe"));
	CHECK(HAS(&b, "_MAT"
		      "\x00\xa4"
		      "CMTX"
		      "\x0a\xff\x0a\xff"));
	CHECK(HAS(&b, "_MAT"
		      "\x00\xa4"
		      "CMTX"
		      "\x0b\x00\x01\x0b\x00\x01"));
	/* Device (C12B): hex names */
	CHECK(HAS(&b, "\x5b\x82"));
	CHECK(HAS(&b, "C12B"
		      "\x08"
		      "_HID"));
	/* CTFY: If (LEqual (Local0, 0x12)) { ... If (LEqual (Arg0, 0x12B)) { Notify (C12B, Arg1) } } */
	CHECK(HAS(&b, "\x93\x60\x0a\x12"));
	CHECK(HAS(&b, "\x93\x68\x0b\x2b\x01\x86"
		      "C12B"
		      "\x69"));
	/* CMTL: Buffer (8) { 0, 8, ... } and its fields */
	CHECK(HAS(&b, "\x08"
		      "LAPI"
		      "\x11\x0b\x0a\x08\x00\x08\x00\x00\x00\x00\x00\x00"));
	CHECK(HAS(&b, "\x8c"
		      "LAPI"
		      "\x0a\x02"
		      "LUID"));
	CHECK(HAS(&b, "\x8a"
		      "LAPI"
		      "\x0a\x04"
		      "LFLG"));
	/* And (CSTA (Arg0), One, LFLG): Enabled while present */
	CHECK(HAS(&b, "\x7b"
		      "CSTA"
		      "\x68\x01"
		      "LFLG"));
	CHECK(HAS(&b, "\x08"
		      "X2AP"
		      "\x11\x13\x0a\x10\x09\x10"));
	CHECK(HAS(&b, "\x8a"
		      "X2AP"
		      "\x0a\x0c"
		      "XUID"));
	aml_free(&b);
}

static void test_apic_ids(void)
{
	static const uint32_t ids[] = { 0, 300, 2, 0x12345 };
	struct aml_buf b;

	CHECK_EQ(build(&b, 4, ids), 0);
	CHECK(HAS(&b, "\xa4"
		      "CMTL"
		      "\x00\x00"));
	CHECK(HAS(&b, "\xa4"
		      "CMTX"
		      "\x01\x0b\x2c\x01"));
	CHECK(HAS(&b, "\xa4"
		      "CMTL"
		      "\x0a\x02\x0a\x02"));
	CHECK(HAS(&b, "\xa4"
		      "CMTX"
		      "\x0a\x03\x0c\x45\x23\x01\x00"));
	aml_free(&b);
}

CHECK_MAIN(TEST(test_scale), TEST(test_limits), TEST(test_register_block),
	   TEST(test_ged), TEST(test_com1_mres), TEST(test_second_uart),
	   TEST(test_cpu_devices), TEST(test_apic_ids))
