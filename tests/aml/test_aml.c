// SPDX-License-Identifier: GPL-2.0-only
/*
 * Byte-exact tests of the AML encoders.  Every expected sequence is
 * assembled by hand from the ACPI 6.4 AML grammar (section 20.2) and the
 * resource descriptor formats (section 6.4), not taken from the builder.
 */
#include <errno.h>
#include <stdint.h>

#include "aml.h"
#include "check.h"

static void dump(const char *what, const uint8_t *p, size_t n)
{
	printf("# %s (%zu):", what, n);
	for (size_t i = 0; i < n && i < 64; i++)
		printf(" %02x", p[i]);
	printf("%s\n", n > 64 ? " ..." : "");
}

static void expect_bytes(struct aml_buf *b, const void *exp, size_t n, int line)
{
	int err = aml_finish(b);

	if (err || b->len != n || memcmp(b->data, exp, n)) {
		printf("# line %d: err %d\n", line, err);
		dump("got", b->data, b->len);
		dump("expected", exp, n);
		check_failures++;
	}
	aml_free(b);
	*b = (struct aml_buf){ 0 };
}

/* Expected bytes as a string literal: "\x5b\x01" "CPLK" "\x00". */
#define EXPECT(b, lit) expect_bytes(b, lit, sizeof(lit) - 1, __LINE__)

static void expect_err(struct aml_buf *b, int err, int line)
{
	int got = aml_finish(b);

	if (got != err) {
		printf("# line %d: error %d, expected %d\n", line, got, err);
		check_failures++;
	}
	aml_free(b);
	*b = (struct aml_buf){ 0 };
}

#define EXPECT_ERR(b, err) expect_err(b, err, __LINE__)

static void pkglen_is(uint32_t v, const uint8_t *exp, int n)
{
	uint8_t out[4];
	int got = aml_pkglen_encode(out, v);

	CHECK_EQ(got, n);
	if (got == n && memcmp(out, exp, (size_t)n)) {
		printf("# pkglen %u\n", v);
		dump("got", out, (size_t)n);
		dump("expected", exp, (size_t)n);
		check_failures++;
	}
}

static void test_pkglen_encode(void)
{
	uint8_t out[4];

	pkglen_is(0, (const uint8_t *)"\x00", 1);
	pkglen_is(63, (const uint8_t *)"\x3f", 1);
	/* 2 bytes: lead 0x40 | low nibble, then bits 4-11 */
	pkglen_is(64, (const uint8_t *)"\x40\x04", 2);
	pkglen_is(4095, (const uint8_t *)"\x4f\xff", 2);
	pkglen_is(4096, (const uint8_t *)"\x80\x00\x01", 3);
	pkglen_is(0xfffff, (const uint8_t *)"\x8f\xff\xff", 3);
	pkglen_is(1u << 20, (const uint8_t *)"\xc0\x00\x00\x01", 4);
	pkglen_is(AML_PKGLEN_MAX, (const uint8_t *)"\xcf\xff\xff\xff", 4);
	CHECK_EQ(aml_pkglen_encode(out, AML_PKGLEN_MAX + 1), -E2BIG);
}

/*
 * An If around k raw bytes: the PkgLength counts itself, so a body of 62
 * bytes is the largest with a 1-byte length (62 + 1 = 63).
 */
static void if_with_body(size_t k, const uint8_t *lead, size_t n)
{
	struct aml_buf b = { 0 };
	uint8_t *body = malloc(k);
	int ok;

	for (size_t i = 0; i < k; i++)
		body[i] = (uint8_t)(i * 7 + 1);
	aml_if_begin(&b);
	aml_bytes(&b, body, k);
	aml_end(&b);
	ok = !aml_finish(&b) && b.len == 1 + n + k && b.data[0] == 0xa0 &&
	     !memcmp(b.data + 1, lead, n) && !memcmp(b.data + 1 + n, body, k);
	if (!ok) {
		printf("# body %zu: len %zu\n", k, b.len);
		dump("got", b.data, b.len);
		check_failures++;
	}
	free(body);
	aml_free(&b);
}

static void test_pkglen_boundaries(void)
{
	if_with_body(0, (const uint8_t *)"\x01", 1);
	if_with_body(62, (const uint8_t *)"\x3f", 1);
	/* 63 + 2 = 65 = 0x41 */
	if_with_body(63, (const uint8_t *)"\x41\x04", 2);
	if_with_body(4093, (const uint8_t *)"\x4f\xff", 2);
	/* 4094 + 3 = 4097 = 0x1001 */
	if_with_body(4094, (const uint8_t *)"\x81\x00\x01", 3);
	if_with_body(0xfffff - 3, (const uint8_t *)"\x8f\xff\xff", 3);
	/* 0xfffff - 2 + 4 = 0x100001 */
	if_with_body(0xfffff - 2, (const uint8_t *)"\xc1\x00\x00\x01", 4);
	if_with_body(1u << 20, (const uint8_t *)"\xc4\x00\x00\x01", 4);
}

static void test_nested_lengths(void)
{
	struct aml_buf b = { 0 };

	/* Scope (\_SB) { Device (GED_) { Name (_UID, Zero) } } */
	aml_scope_begin(&b, "\\_SB");
	aml_device_begin(&b, "GED");
	aml_name_decl(&b, "_UID");
	aml_zero(&b);
	aml_end(&b);
	aml_end(&b);
	EXPECT(&b, "\x10\x13\x5c"
		   "_SB_"
		   "\x5b\x82\x0b"
		   "GED_"
		   "\x08"
		   "_UID"
		   "\x00");
}

static void test_names(void)
{
	struct aml_buf b = { 0 };

	aml_name(&b, "_SB");
	EXPECT(&b, "_SB_");
	aml_name(&b, "CSTA");
	EXPECT(&b, "CSTA");
	aml_name(&b, "\\_SB");
	EXPECT(&b, "\\_SB_");
	aml_name(&b, "\\_SB.CPUS");
	EXPECT(&b, "\\\x2e"
		   "_SB_CPUS");
	aml_name(&b, "\\_SB.CPUS.CSCN");
	EXPECT(&b, "\\\x2f\x03"
		   "_SB_CPUSCSCN");
	aml_name(&b, "_SB.A.B.C");
	EXPECT(&b, "\x2f\x04"
		   "_SB_A___B___C___");
	aml_name(&b, "^^PCI0.S1");
	EXPECT(&b, "^^\x2e"
		   "PCI0S1__");
	aml_name(&b, "\\");
	EXPECT(&b, "\\\x00");
	aml_name(&b, "^");
	EXPECT(&b, "^\x00");

	static const char *const bad[] = {
		"", "a", "1ABC", "ABCDE", "A..B", "A.", ".A", "\\^A", "A-B",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		aml_name(&b, bad[i]);
		CHECK_EQ(b.len, 0);
		EXPECT_ERR(&b, -EINVAL);
	}
}

static void test_integers(void)
{
	struct aml_buf b = { 0 };

	aml_zero(&b);
	aml_one(&b);
	aml_ones(&b);
	EXPECT(&b, "\x00\x01\xff");
	aml_int(&b, 0);
	aml_int(&b, 1);
	EXPECT(&b, "\x00\x01");
	aml_int(&b, 2);
	aml_int(&b, 0xff);
	EXPECT(&b, "\x0a\x02\x0a\xff");
	aml_int(&b, 0x100);
	aml_int(&b, 0xffff);
	EXPECT(&b, "\x0b\x00\x01\x0b\xff\xff");
	aml_int(&b, 0x10000);
	aml_int(&b, 0xfeb00100);
	EXPECT(&b, "\x0c\x00\x00\x01\x00\x0c\x00\x01\xb0\xfe");
	aml_int(&b, 0x100000000ULL);
	aml_int(&b, UINT64_MAX);
	EXPECT(&b, "\x0e\x00\x00\x00\x00\x01\x00\x00\x00"
		   "\x0e\xff\xff\xff\xff\xff\xff\xff\xff");
}

static void test_strings_buffers_packages(void)
{
	struct aml_buf b = { 0 };

	aml_string(&b, "ACPI0007");
	EXPECT(&b, "\x0d"
		   "ACPI0007"
		   "\x00");
	aml_string(&b, "");
	EXPECT(&b, "\x0d\x00");
	aml_string(&b, "\x80");
	EXPECT_ERR(&b, -EINVAL);

	/* Buffer (3) { 1, 2, 3 }: PkgLength (counting itself), BufferSize */
	aml_buffer(&b, "\x01\x02\x03", 3);
	EXPECT(&b, "\x11\x06\x0a\x03\x01\x02\x03");
	aml_buffer(&b, NULL, 0);
	EXPECT(&b, "\x11\x02\x00");

	/* 100 bytes: BufferSize 0x0a 0x64, PkgLength 2 + 100 + 2 = 104 */
	uint8_t big[100] = { 0 };
	aml_buffer(&b, big, sizeof(big));
	CHECK_EQ(b.len, 1 + 2 + 2 + 100);
	CHECK(!memcmp(b.data, "\x11\x48\x06\x0a\x64", 5));
	aml_free(&b);
	b = (struct aml_buf){ 0 };

	/* Package (2) { One, "A" } */
	aml_package_begin(&b, 2);
	aml_one(&b);
	aml_string(&b, "A");
	aml_end(&b);
	EXPECT(&b, "\x12\x06\x02\x01\x0d"
		   "A"
		   "\x00");
}

static void test_eisaid(void)
{
	struct aml_buf b = { 0 };
	uint32_t v;

	/* P=16 N=14 P=16 -> 0x41d0, then 0x0a05, stored big-endian */
	aml_eisaid(&b, "PNP0A05");
	EXPECT(&b, "\x0c\x41\xd0\x0a\x05");
	CHECK_EQ(aml_eisaid_value("PNP0A03", &v), 0);
	CHECK_EQ(v, 0x030ad041);
	/* A DWordConst even when the value would fit a word. */
	aml_eisaid(&b, "PNP0000");
	EXPECT(&b, "\x0c\x41\xd0\x00\x00");
	CHECK_EQ(aml_eisaid_value("pnp0a05", &v), -EINVAL);
	CHECK_EQ(aml_eisaid_value("PNP0A0", &v), -EINVAL);
	CHECK_EQ(aml_eisaid_value("PNP0A0G", &v), -EINVAL);
	aml_eisaid(&b, "PNP0a05");
	EXPECT_ERR(&b, -EINVAL);
}

static void test_methods(void)
{
	struct aml_buf b = { 0 };

	/* Method (_STA, 0, NotSerialized) { Return (0x0F) } */
	aml_method_begin(&b, "_STA", 0, 0);
	aml_return(&b);
	aml_int(&b, 0x0f);
	aml_end(&b);
	EXPECT(&b, "\x14\x09"
		   "_STA"
		   "\x00\xa4\x0a\x0f");
	/* Method (COST, 4, Serialized) {} */
	aml_method_begin(&b, "COST", 4, 1);
	aml_end(&b);
	EXPECT(&b, "\x14\x06"
		   "COST"
		   "\x0c");
	aml_method_begin(&b, "_EJ0", 1, 0);
	aml_call(&b, "CEJ0");
	aml_int(&b, 3);
	aml_end(&b);
	EXPECT(&b, "\x14\x0c"
		   "_EJ0"
		   "\x01"
		   "CEJ0"
		   "\x0a\x03");
	aml_method_begin(&b, "BAD", 8, 0);
	aml_end(&b);
	EXPECT_ERR(&b, -EINVAL);
}

static void test_regions_fields(void)
{
	struct aml_buf b = { 0 };

	aml_opregion(&b, "PRST", AML_SYSTEM_MEMORY, 0xfeb00100, 0x0c);
	EXPECT(&b, "\x5b\x80"
		   "PRST"
		   "\x00\x0c\x00\x01\xb0\xfe\x0a\x0c");
	aml_opregion(&b, "PRST", AML_SYSTEM_IO, 0x0cd8, 0x0c);
	EXPECT(&b, "\x5b\x80"
		   "PRST"
		   "\x01\x0b\xd8\x0c\x0a\x0c");

	/*
	 * Field (PRST, ByteAcc, NoLock, WriteAsZeros) {
	 *	Offset (4), CPEN, 1, CINS, 1, , 6, CCMD, 8 }
	 * flags 0x41; Offset(4) is ReservedField 0x00, 32 bits.
	 */
	aml_field_begin(&b, "PRST", AML_BYTE_ACC, AML_NOLOCK,
			AML_WRITE_AS_ZEROS);
	aml_field_offset(&b, 4);
	aml_field_unit(&b, "CPEN", 1);
	aml_field_unit(&b, "CINS", 1);
	aml_field_reserved(&b, 6);
	aml_field_unit(&b, "CCMD", 8);
	aml_field_offset(&b, 6); /* already there: nothing */
	aml_end(&b);
	EXPECT(&b, "\x5b\x81\x19"
		   "PRST"
		   "\x41\x00\x20"
		   "CPEN"
		   "\x01"
		   "CINS"
		   "\x01\x00\x06"
		   "CCMD"
		   "\x08");

	/* DWordAcc, Lock, Preserve = 0x13; a 256-bit unit has a 2-byte length */
	aml_field_begin(&b, "R", AML_DWORD_ACC, AML_LOCK, AML_PRESERVE);
	aml_field_unit(&b, "BIG", 256);
	aml_end(&b);
	EXPECT(&b, "\x5b\x81\x0c"
		   "R___"
		   "\x13"
		   "BIG_"
		   "\x40\x10");

	/* WriteAsOnes, QWordAcc */
	aml_field_begin(&b, "R", AML_QWORD_ACC, AML_NOLOCK, AML_WRITE_AS_ONES);
	aml_field_unit(&b, "Q", 64);
	aml_end(&b);
	EXPECT(&b, "\x5b\x81\x0c"
		   "R___"
		   "\x24"
		   "Q___"
		   "\x40\x04");

	/* Offsets only go forwards; units only inside a Field. */
	aml_field_begin(&b, "R", AML_BYTE_ACC, AML_NOLOCK, AML_PRESERVE);
	aml_field_unit(&b, "A", 16);
	aml_field_offset(&b, 1);
	aml_end(&b);
	EXPECT_ERR(&b, -EINVAL);
	aml_field_unit(&b, "A", 8);
	EXPECT_ERR(&b, -EINVAL);
	aml_if_begin(&b);
	aml_field_reserved(&b, 8);
	aml_end(&b);
	EXPECT_ERR(&b, -EINVAL);
	aml_field_begin(&b, "R", AML_BYTE_ACC, AML_NOLOCK, AML_PRESERVE);
	aml_field_unit(&b, "A.B", 8); /* a NameSeg, not a path */
	aml_end(&b);
	EXPECT_ERR(&b, -EINVAL);
}

static void test_control_flow(void)
{
	struct aml_buf b = { 0 };

	/* If (LEqual (Local0, One)) { Store (0x0F, Local0) } Else { Return (Zero) } */
	aml_if_begin(&b);
	aml_lequal(&b);
	aml_local(&b, 0);
	aml_one(&b);
	aml_store(&b);
	aml_int(&b, 0x0f);
	aml_local(&b, 0);
	aml_end(&b);
	aml_else_begin(&b);
	aml_return(&b);
	aml_zero(&b);
	aml_end(&b);
	EXPECT(&b, "\xa0\x08\x93\x60\x01\x70\x0a\x0f\x60"
		   "\xa1\x03\xa4\x00");

	/* While (LLess (Local1, 0x10)) { Increment (Local1) Break } */
	aml_while_begin(&b);
	aml_lless(&b);
	aml_local(&b, 1);
	aml_int(&b, 0x10);
	aml_increment(&b);
	aml_local(&b, 1);
	aml_break(&b);
	aml_end(&b);
	EXPECT(&b, "\xa2\x08\x95\x61\x0a\x10\x75\x61\xa5");

	/* Else must follow an If directly. */
	aml_else_begin(&b);
	aml_end(&b);
	EXPECT_ERR(&b, -EINVAL);
	aml_if_begin(&b);
	aml_one(&b);
	aml_end(&b);
	aml_zero(&b);
	aml_else_begin(&b);
	aml_end(&b);
	EXPECT_ERR(&b, -EINVAL);
}

static void test_expressions(void)
{
	struct aml_buf b = { 0 };

	/* Add (Local0, One, Local1)  Subtract (Arg0, 2, Local0) */
	aml_add(&b);
	aml_local(&b, 0);
	aml_one(&b);
	aml_local(&b, 1);
	aml_subtract(&b);
	aml_arg(&b, 0);
	aml_int(&b, 2);
	aml_local(&b, 0);
	EXPECT(&b, "\x72\x60\x01\x61\x74\x68\x0a\x02\x60");

	/* And (Local0, 8, Zero)  Or (Arg6, Local7, Local2)  Decrement (Local3) */
	aml_and(&b);
	aml_local(&b, 0);
	aml_int(&b, 8);
	aml_no_target(&b);
	aml_or(&b);
	aml_arg(&b, 6);
	aml_local(&b, 7);
	aml_local(&b, 2);
	aml_decrement(&b);
	aml_local(&b, 3);
	EXPECT(&b, "\x7b\x60\x0a\x08\x00\x7d\x6e\x67\x62\x76\x63");

	/* ShiftLeft (One, Arg1, Local2)  ShiftRight (Arg0, 4, Local0) */
	aml_shift_left(&b);
	aml_one(&b);
	aml_arg(&b, 1);
	aml_local(&b, 2);
	aml_shift_right(&b);
	aml_arg(&b, 0);
	aml_int(&b, 4);
	aml_local(&b, 0);
	EXPECT(&b, "\x79\x01\x69\x62\x7a\x68\x0a\x04\x60");

	/* LAnd (LNot (Local0), LOr (LGreater (Arg0, 1), LLess (Arg1, 2))) */
	aml_land(&b);
	aml_lnot(&b);
	aml_local(&b, 0);
	aml_lor(&b);
	aml_lgreater(&b);
	aml_arg(&b, 0);
	aml_one(&b);
	aml_lless(&b);
	aml_arg(&b, 1);
	aml_int(&b, 2);
	EXPECT(&b, "\x90\x92\x60\x91\x94\x68\x01\x95\x69\x0a\x02");

	aml_local(&b, 8);
	EXPECT_ERR(&b, -EINVAL);
	aml_arg(&b, 7);
	EXPECT_ERR(&b, -EINVAL);
}

static void test_sync_notify_fields(void)
{
	struct aml_buf b = { 0 };

	aml_mutex(&b, "CPLK", 0);
	aml_acquire(&b, "CPLK", 0xffff);
	aml_release(&b, "CPLK");
	EXPECT(&b, "\x5b\x01"
		   "CPLK"
		   "\x00\x5b\x23"
		   "CPLK"
		   "\xff\xff\x5b\x27"
		   "CPLK");
	aml_mutex(&b, "M", 16);
	EXPECT_ERR(&b, -EINVAL);

	/* Notify (C001, 3)  Notify (\_SB.CPUS.C001, Arg1) */
	aml_notify(&b);
	aml_name(&b, "C001");
	aml_int(&b, 3);
	aml_notify(&b);
	aml_name(&b, "\\_SB.CPUS.C001");
	aml_arg(&b, 1);
	EXPECT(&b, "\x86"
		   "C001"
		   "\x0a\x03\x86\\\x2f\x03"
		   "_SB_CPUSC001"
		   "\x69");

	/* CreateDWordField (LAPI, 4, LFLG)  CreateByteField (LAPI, 2, LUID) */
	aml_create_dword_field(&b);
	aml_name(&b, "LAPI");
	aml_int(&b, 4);
	aml_name(&b, "LFLG");
	aml_create_byte_field(&b);
	aml_name(&b, "LAPI");
	aml_int(&b, 2);
	aml_name(&b, "LUID");
	EXPECT(&b, "\x8a"
		   "LAPI"
		   "\x0a\x04"
		   "LFLG"
		   "\x8c"
		   "LAPI"
		   "\x0a\x02"
		   "LUID");
}

static void test_resource_templates(void)
{
	struct aml_buf b = { 0 };
	uint32_t irq = 5, irqs[2] = { 9, 0x12345678 };

	/*
	 * ResourceTemplate () {
	 *	Memory32Fixed (ReadWrite, 0xFEB00000, 0x4)
	 *	Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive) { 5 }
	 * }: 12 + 9 + 2 = 23 bytes of descriptors.
	 */
	aml_restmpl_begin(&b);
	aml_memory32_fixed(&b, AML_MEM_READ_WRITE, 0xfeb00000, 4);
	aml_interrupt(&b, AML_IRQ_CONSUMER | AML_IRQ_EDGE, &irq, 1);
	aml_restmpl_end(&b);
	EXPECT(&b, "\x11\x1a\x0a\x17"
		   "\x86\x09\x00\x01\x00\x00\xb0\xfe\x04\x00\x00\x00"
		   "\x89\x06\x00\x03\x01\x05\x00\x00\x00"
		   "\x79\x00");

	/* Level, ActiveLow, Shared, two interrupts; ReadOnly memory */
	aml_memory32_fixed(&b, AML_MEM_READ_ONLY, 0x1000, 0x2000);
	aml_interrupt(&b,
		      AML_IRQ_CONSUMER | AML_IRQ_ACTIVE_LOW | AML_IRQ_SHARED |
			      AML_IRQ_WAKE,
		      irqs, 2);
	EXPECT(&b, "\x86\x09\x00\x00\x00\x10\x00\x00\x00\x20\x00\x00"
		   "\x89\x0a\x00\x1d\x02\x09\x00\x00\x00\x78\x56\x34\x12");

	/* ResourceTemplate () {}: just the EndTag */
	aml_restmpl_begin(&b);
	aml_restmpl_end(&b);
	EXPECT(&b, "\x11\x05\x0a\x02\x79\x00");

	aml_interrupt(&b, AML_IRQ_EDGE, irqs, 0);
	EXPECT_ERR(&b, -EINVAL);
	aml_interrupt(&b, 1u << 5, irqs, 1);
	EXPECT_ERR(&b, -EINVAL);
}

static int realloc_budget;

static void *failing_realloc(void *p, size_t size)
{
	if (realloc_budget-- <= 0)
		return NULL;
	return realloc(p, size);
}

/* Emits enough nested AML to need several reallocations. */
static void build_some(struct aml_buf *b)
{
	aml_scope_begin(b, "\\_SB");
	for (int i = 0; i < 200; i++) {
		aml_device_begin(b, "DEV");
		aml_name_decl(b, "_HID");
		aml_string(b, "ACPI0007");
		aml_method_begin(b, "_STA", 0, 0);
		aml_return(b);
		aml_int(b, 0x0f);
		aml_end(b);
		aml_end(b);
	}
	aml_end(b);
}

static void test_errors(void)
{
	struct aml_buf ref = { 0 }, b;
	int err;

	build_some(&ref);
	CHECK_EQ(aml_finish(&ref), 0);

	/* Allocation failure at every point: one -ENOMEM, no crash. */
	for (int fail_at = 0; fail_at < 8; fail_at++) {
		b = (struct aml_buf){ .realloc_fn = failing_realloc };
		realloc_budget = fail_at;
		build_some(&b);
		aml_name(&b, "bad"); /* a later error does not replace it */
		err = aml_finish(&b);
		CHECK(err == -ENOMEM || (err == -EINVAL && b.len == ref.len));
		if (realloc_budget < 0)
			CHECK_EQ(err, -ENOMEM);
		aml_free(&b);
	}

	/* A size limit fails with -E2BIG and keeps what fitted. */
	b = (struct aml_buf){ .max = ref.len - 1 };
	build_some(&b);
	CHECK_EQ(aml_finish(&b), -E2BIG);
	CHECK(b.len < ref.len);
	aml_free(&b);
	b = (struct aml_buf){ .max = ref.len };
	build_some(&b);
	CHECK_EQ(aml_finish(&b), 0);
	CHECK_EQ(b.len, ref.len);
	CHECK(!memcmp(b.data, ref.data, ref.len));
	aml_free(&b);
	aml_free(&ref);

	/* Unbalanced blocks. */
	b = (struct aml_buf){ 0 };
	aml_scope_begin(&b, "\\_SB");
	EXPECT_ERR(&b, -EINVAL);
	aml_end(&b);
	EXPECT_ERR(&b, -EINVAL);
	for (int i = 0; i <= AML_MAX_DEPTH; i++)
		aml_if_begin(&b);
	for (int i = 0; i <= AML_MAX_DEPTH; i++)
		aml_end(&b);
	EXPECT_ERR(&b, -EINVAL);
	for (int i = 0; i < AML_MAX_DEPTH; i++)
		aml_if_begin(&b);
	for (int i = 0; i < AML_MAX_DEPTH; i++)
		aml_end(&b);
	CHECK_EQ(aml_finish(&b), 0);
	aml_free(&b);
}

CHECK_MAIN(TEST(test_pkglen_encode), TEST(test_pkglen_boundaries),
	   TEST(test_nested_lengths), TEST(test_names), TEST(test_integers),
	   TEST(test_strings_buffers_packages), TEST(test_eisaid),
	   TEST(test_methods), TEST(test_regions_fields),
	   TEST(test_control_flow), TEST(test_expressions),
	   TEST(test_sync_notify_fields), TEST(test_resource_templates),
	   TEST(test_errors))
