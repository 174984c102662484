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
 * If (One) around k raw bytes: the PkgLength counts itself and the
 * predicate, so k = 61 is the largest with a 1-byte length (61 + 1 + 1).
 */
static void if_with_body(size_t k, const uint8_t *lead, size_t n)
{
	struct aml_buf b = { 0 };
	uint8_t *body = malloc(k);
	int ok;

	for (size_t i = 0; i < k; i++)
		body[i] = (uint8_t)(i * 7 + 1);
	AML_IF(&b, aml_one()) {
		aml_bytes(&b, body, k);
	}
	ok = !aml_finish(&b) && b.len == 1 + n + 1 + k && b.data[0] == 0xa0 &&
	     !memcmp(b.data + 1, lead, n) && b.data[1 + n] == AML_ONE_OP &&
	     !memcmp(b.data + 2 + n, body, k);
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
	if_with_body(0, (const uint8_t *)"\x02", 1);
	if_with_body(61, (const uint8_t *)"\x3f", 1);
	/* 62 + 1 + 2 = 65 = 0x41 */
	if_with_body(62, (const uint8_t *)"\x41\x04", 2);
	if_with_body(4092, (const uint8_t *)"\x4f\xff", 2);
	/* 4093 + 1 + 3 = 4097 = 0x1001 */
	if_with_body(4093, (const uint8_t *)"\x81\x00\x01", 3);
	if_with_body(0xfffff - 4, (const uint8_t *)"\x8f\xff\xff", 3);
	/* 0xfffff - 3 + 1 + 4 = 0x100001 */
	if_with_body(0xfffff - 3, (const uint8_t *)"\xc1\x00\x00\x01", 4);
	if_with_body((1u << 20) - 1, (const uint8_t *)"\xc4\x00\x00\x01", 4);
}

static void test_nested_lengths(void)
{
	struct aml_buf b = { 0 };

	AML_SCOPE(&b, "\\_SB") {
		AML_DEVICE(&b, "GED") {
			aml_emit(&b, aml_name_decl("_UID", aml_zero()));
		}
	}
	EXPECT(&b, "\x10\x13\x5c"
		   "_SB_"
		   "\x5b\x82\x0b"
		   "GED_"
		   "\x08"
		   "_UID"
		   "\x00");
}

/* Emits t alone and compares. */
#define EXPECT_TERM(t, lit)                                                    \
	do {                                                                   \
		struct aml_buf tb_ = { 0 };                                    \
		aml_emit(&tb_, t);                                             \
		EXPECT(&tb_, lit);                                             \
	} while (0)

#define EXPECT_TERM_ERR(t, e)                                                  \
	do {                                                                   \
		struct aml_buf tb_ = { 0 };                                    \
		aml_emit(&tb_, t);                                             \
		CHECK_EQ(tb_.len, 0);                                          \
		EXPECT_ERR(&tb_, e);                                           \
	} while (0)

static void test_names(void)
{
	EXPECT_TERM(aml_name("_SB"), "_SB_");
	EXPECT_TERM(aml_name("CSTA"), "CSTA");
	EXPECT_TERM(aml_name("\\_SB"), "\\_SB_");
	EXPECT_TERM(aml_name("\\_SB.CPUS"), "\\\x2e"
					    "_SB_CPUS");
	EXPECT_TERM(aml_name("\\_SB.CPUS.CSCN"), "\\\x2f\x03"
						 "_SB_CPUSCSCN");
	EXPECT_TERM(aml_name("_SB.A.B.C"), "\x2f\x04"
					   "_SB_A___B___C___");
	EXPECT_TERM(aml_name("^^PCI0.S1"), "^^\x2e"
					   "PCI0S1__");
	EXPECT_TERM(aml_name("\\"), "\\\x00");
	EXPECT_TERM(aml_name("^"), "^\x00");

	static const char *const bad[] = {
		"", "a", "1ABC", "ABCDE", "A..B", "A.", ".A", "\\^A", "A-B",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_TERM_ERR(aml_name(bad[i]), -EINVAL);
	/* 24 segments do not fit in one term. */
	EXPECT_TERM_ERR(
		aml_name("A.B.C.D.E.F.G.H.I.J.K.L.M.N.O.P.Q.R.S.T.U.V.W."
			 "X"),
		-E2BIG);
}

static void test_integers(void)
{
	EXPECT_TERM(AML_PACKAGE(aml_zero(), aml_one(), aml_ones()),
		    "\x12\x05\x03\x00\x01\xff");
	EXPECT_TERM(aml_int(0), "\x00");
	EXPECT_TERM(aml_int(1), "\x01");
	EXPECT_TERM(aml_int(2), "\x0a\x02");
	EXPECT_TERM(aml_int(0xff), "\x0a\xff");
	EXPECT_TERM(aml_int(0x100), "\x0b\x00\x01");
	EXPECT_TERM(aml_int(0xffff), "\x0b\xff\xff");
	EXPECT_TERM(aml_int(0x10000), "\x0c\x00\x00\x01\x00");
	EXPECT_TERM(aml_int(0xfeb00100), "\x0c\x00\x01\xb0\xfe");
	EXPECT_TERM(aml_int(0x100000000ULL),
		    "\x0e\x00\x00\x00\x00\x01\x00\x00\x00");
	EXPECT_TERM(aml_int(UINT64_MAX),
		    "\x0e\xff\xff\xff\xff\xff\xff\xff\xff");
}

static void test_strings_buffers_packages(void)
{
	struct aml_buf b = { 0 };

	EXPECT_TERM(aml_string("ACPI0007"), "\x0d"
					    "ACPI0007"
					    "\x00");
	EXPECT_TERM(aml_string(""), "\x0d\x00");
	EXPECT_TERM_ERR(aml_string("\x80"), -EINVAL);

	/* Buffer (3) { 1, 2, 3 }: PkgLength (counting itself), BufferSize */
	EXPECT_TERM(aml_buffer("\x01\x02\x03", 3),
		    "\x11\x06\x0a\x03\x01\x02\x03");
	EXPECT_TERM(aml_buffer(NULL, 0), "\x11\x02\x00");

	/* 80 bytes: BufferSize 0x0a 0x50, PkgLength 2 + 80 + 2 = 84 */
	uint8_t big[80] = { 0 };
	aml_emit(&b, aml_buffer(big, sizeof(big)));
	CHECK_EQ(b.len, 1 + 2 + 2 + 80);
	CHECK(!memcmp(b.data, "\x11\x44\x05\x0a\x50", 5));
	aml_free(&b);
	b = (struct aml_buf){ 0 };
	/* More than a term holds. */
	uint8_t huge[AML_TERM_MAX] = { 0 };
	EXPECT_TERM_ERR(aml_buffer(huge, sizeof(huge)), -E2BIG);

	/* Package (2) { One, "A" } */
	EXPECT_TERM(AML_PACKAGE(aml_one(), aml_string("A")),
		    "\x12\x06\x02\x01\x0d"
		    "A"
		    "\x00");
	/* An element's error is the package's. */
	EXPECT_TERM_ERR(AML_PACKAGE(aml_one(), aml_local(9)), -EINVAL);
}

static void test_eisaid(void)
{
	uint32_t v;

	/* P=16 N=14 P=16 -> 0x41d0, then 0x0a05, stored big-endian */
	EXPECT_TERM(aml_eisaid("PNP0A05"), "\x0c\x41\xd0\x0a\x05");
	CHECK_EQ(aml_eisaid_value("PNP0A03", &v), 0);
	CHECK_EQ(v, 0x030ad041);
	/* A DWordConst even when the value would fit a word. */
	EXPECT_TERM(aml_eisaid("PNP0000"), "\x0c\x41\xd0\x00\x00");
	CHECK_EQ(aml_eisaid_value("pnp0a05", &v), -EINVAL);
	CHECK_EQ(aml_eisaid_value("PNP0A0", &v), -EINVAL);
	CHECK_EQ(aml_eisaid_value("PNP0A0G", &v), -EINVAL);
	EXPECT_TERM_ERR(aml_eisaid("PNP0a05"), -EINVAL);
}

static void test_methods(void)
{
	struct aml_buf b = { 0 };

	AML_METHOD(&b, "_STA", 0, AML_NOTSERIALIZED) {
		aml_emit(&b, aml_return(aml_int(0x0f)));
	}
	EXPECT(&b, "\x14\x09"
		   "_STA"
		   "\x00\xa4\x0a\x0f");
	AML_METHOD(&b, "COST", 4, AML_SERIALIZED) {
	}
	EXPECT(&b, "\x14\x06"
		   "COST"
		   "\x0c");
	AML_METHOD(&b, "_EJ0", 1, AML_NOTSERIALIZED) {
		aml_emit(&b, aml_call("CEJ0", aml_int(3)));
	}
	EXPECT(&b, "\x14\x0c"
		   "_EJ0"
		   "\x01"
		   "CEJ0"
		   "\x0a\x03");
	/* COST (1, Arg0, Arg1, Arg2); a call without arguments is its name */
	EXPECT_TERM(
		aml_call("COST", aml_one(), aml_arg(0), aml_arg(1), aml_arg(2)),
		"COST"
		"\x01\x68\x69\x6a");
	EXPECT_TERM(aml_call0("\\_SB.CPUS.CSCN"), "\\\x2f\x03"
						  "_SB_CPUSCSCN");
	EXPECT_TERM_ERR(aml_call("X", aml_one(), aml_one(), aml_one(),
				 aml_one(), aml_one(), aml_one(), aml_one(),
				 aml_one()),
			-EINVAL);
	AML_METHOD(&b, "BAD", 8, AML_NOTSERIALIZED) {
	}
	EXPECT_ERR(&b, -EINVAL);
}

static void test_regions_fields(void)
{
	struct aml_buf b = { 0 };

	EXPECT_TERM(aml_opregion("PRST", AML_SYSTEM_MEMORY, 0xfeb00100, 0x0c),
		    "\x5b\x80"
		    "PRST"
		    "\x00\x0c\x00\x01\xb0\xfe\x0a\x0c");
	EXPECT_TERM(aml_opregion("PRST", AML_SYSTEM_IO, 0x0cd8, 0x0c),
		    "\x5b\x80"
		    "PRST"
		    "\x01\x0b\xd8\x0c\x0a\x0c");

	/* flags 0x41; Offset(4) is ReservedField 0x00, 32 bits. */
	AML_FIELD(&b, "PRST", AML_BYTE_ACC, AML_NOLOCK, AML_WRITE_AS_ZEROS) {
		aml_field_offset(&b, 4);
		aml_field_unit(&b, "CPEN", 1);
		aml_field_unit(&b, "CINS", 1);
		aml_field_reserved(&b, 6);
		aml_field_unit(&b, "CCMD", 8);
		aml_field_offset(&b, 6); /* already there: nothing */
	}
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
	AML_FIELD(&b, "R", AML_DWORD_ACC, AML_LOCK, AML_PRESERVE) {
		aml_field_unit(&b, "BIG", 256);
	}
	EXPECT(&b, "\x5b\x81\x0c"
		   "R___"
		   "\x13"
		   "BIG_"
		   "\x40\x10");

	/* WriteAsOnes, QWordAcc */
	AML_FIELD(&b, "R", AML_QWORD_ACC, AML_NOLOCK, AML_WRITE_AS_ONES) {
		aml_field_unit(&b, "Q", 64);
	}
	EXPECT(&b, "\x5b\x81\x0c"
		   "R___"
		   "\x24"
		   "Q___"
		   "\x40\x04");

	/* Offsets only go forwards; units only inside a Field. */
	AML_FIELD(&b, "R", AML_BYTE_ACC, AML_NOLOCK, AML_PRESERVE) {
		aml_field_unit(&b, "A", 16);
		aml_field_offset(&b, 1);
	}
	EXPECT_ERR(&b, -EINVAL);
	aml_field_unit(&b, "A", 8);
	EXPECT_ERR(&b, -EINVAL);
	aml_field_offset(&b, 0);
	EXPECT_ERR(&b, -EINVAL);
	AML_IF(&b, aml_one()) {
		aml_field_reserved(&b, 8);
	}
	EXPECT_ERR(&b, -EINVAL);
	AML_FIELD(&b, "R", AML_BYTE_ACC, AML_NOLOCK, AML_PRESERVE) {
		aml_field_unit(&b, "A.B", 8); /* a NameSeg, not a path */
	}
	EXPECT_ERR(&b, -EINVAL);
}

static void test_control_flow(void)
{
	struct aml_buf b = { 0 };

	AML_IF(&b, aml_lequal(aml_local(0), aml_one())) {
		aml_emit(&b, aml_store(aml_int(0x0f), aml_local(0)));
	}
	AML_ELSE(&b) {
		aml_emit(&b, aml_return(aml_zero()));
	}
	EXPECT(&b, "\xa0\x08\x93\x60\x01\x70\x0a\x0f\x60"
		   "\xa1\x03\xa4\x00");

	AML_WHILE(&b, aml_lless(aml_local(1), aml_int(0x10))) {
		aml_emit(&b, aml_increment(aml_local(1)));
		aml_emit(&b, aml_break());
	}
	EXPECT(&b, "\xa2\x08\x95\x61\x0a\x10\x75\x61\xa5");

	/* Blocks nest, each closed with its own length. */
	AML_WHILE(&b, aml_one()) {
		AML_IF(&b, aml_zero()) {
			AML_IF(&b, aml_one()) {
				aml_emit(&b, aml_break());
			}
		}
	}
	EXPECT(&b, "\xa2\x09\x01\xa0\x06\x00\xa0\x03\x01\xa5");

	/* Else must follow an If directly. */
	AML_ELSE(&b) {
	}
	EXPECT_ERR(&b, -EINVAL);
	AML_IF(&b, aml_one()) {
	}
	aml_emit(&b, aml_zero());
	AML_ELSE(&b) {
	}
	EXPECT_ERR(&b, -EINVAL);
	/* A bad predicate is the buffer's error. */
	AML_IF(&b, aml_lequal(aml_arg(7), aml_one())) {
	}
	EXPECT_ERR(&b, -EINVAL);
}

static void test_expressions(void)
{
	EXPECT_TERM(aml_add(aml_local(0), aml_one(), aml_local(1)),
		    "\x72\x60\x01\x61");
	EXPECT_TERM(aml_subtract(aml_arg(0), aml_int(2), aml_local(0)),
		    "\x74\x68\x0a\x02\x60");
	EXPECT_TERM(aml_and(aml_local(0), aml_int(8), aml_no_target()),
		    "\x7b\x60\x0a\x08\x00");
	EXPECT_TERM(aml_or(aml_arg(6), aml_local(7), aml_local(2)),
		    "\x7d\x6e\x67\x62");
	EXPECT_TERM(aml_decrement(aml_local(3)), "\x76\x63");
	EXPECT_TERM(aml_shift_left(aml_one(), aml_arg(1), aml_local(2)),
		    "\x79\x01\x69\x62");
	EXPECT_TERM(aml_shift_right(aml_arg(0), aml_int(4), aml_local(0)),
		    "\x7a\x68\x0a\x04\x60");
	EXPECT_TERM(aml_land(aml_lnot(aml_local(0)),
			     aml_lor(aml_lgreater(aml_arg(0), aml_one()),
				     aml_lless(aml_arg(1), aml_int(2)))),
		    "\x90\x92\x60\x91\x94\x68\x01\x95\x69\x0a\x02");
	/* Store (And (CSTA (Arg0), One), LFLG): calls nest as operands */
	EXPECT_TERM(aml_store(aml_and(aml_call("CSTA", aml_arg(0)), aml_one(),
				      aml_no_target()),
			      aml_name("LFLG")),
		    "\x70\x7b"
		    "CSTA"
		    "\x68\x01\x00"
		    "LFLG");

	EXPECT_TERM_ERR(aml_local(8), -EINVAL);
	EXPECT_TERM_ERR(aml_arg(7), -EINVAL);
	/* An operand's error is the whole term's. */
	EXPECT_TERM_ERR(aml_store(aml_one(), aml_name("a")), -EINVAL);
}

static void test_sync_notify_fields(void)
{
	EXPECT_TERM(aml_mutex("CPLK", 0), "\x5b\x01"
					  "CPLK"
					  "\x00");
	EXPECT_TERM(aml_acquire("CPLK", AML_WAIT_FOREVER), "\x5b\x23"
							   "CPLK"
							   "\xff\xff");
	EXPECT_TERM(aml_release("CPLK"), "\x5b\x27"
					 "CPLK");
	EXPECT_TERM_ERR(aml_mutex("M", 16), -EINVAL);

	EXPECT_TERM(aml_notify(aml_name("C001"), aml_int(3)), "\x86"
							      "C001"
							      "\x0a\x03");
	EXPECT_TERM(aml_notify(aml_name("\\_SB.CPUS.C001"), aml_arg(1)),
		    "\x86\\\x2f\x03"
		    "_SB_CPUSC001"
		    "\x69");

	EXPECT_TERM(
		aml_create_dword_field(aml_name("LAPI"), aml_int(4), "LFLG"),
		"\x8a"
		"LAPI"
		"\x0a\x04"
		"LFLG");
	EXPECT_TERM(aml_create_byte_field(aml_name("LAPI"), aml_int(2), "LUID"),
		    "\x8c"
		    "LAPI"
		    "\x0a\x02"
		    "LUID");
	EXPECT_TERM_ERR(
		aml_create_byte_field(aml_name("LAPI"), aml_int(2), "A.B"),
		-EINVAL);
}

static void test_resource_templates(void)
{
	uint32_t irq = 5, irqs[2] = { 9, 0x12345678 };

	/* 12 + 9 + 2 = 23 bytes of descriptors. */
	EXPECT_TERM(AML_RESOURCES(aml_memory32_fixed(AML_MEM_READ_WRITE,
						     0xfeb00000, 4),
				  aml_interrupt(AML_IRQ_CONSUMER | AML_IRQ_EDGE,
						&irq, 1)),
		    "\x11\x1a\x0a\x17"
		    "\x86\x09\x00\x01\x00\x00\xb0\xfe\x04\x00\x00\x00"
		    "\x89\x06\x00\x03\x01\x05\x00\x00\x00"
		    "\x79\x00");

	/* Level, ActiveLow, Shared, two interrupts; ReadOnly memory */
	EXPECT_TERM(aml_memory32_fixed(AML_MEM_READ_ONLY, 0x1000, 0x2000),
		    "\x86\x09\x00\x00\x00\x10\x00\x00\x00\x20\x00\x00");
	EXPECT_TERM(aml_interrupt(AML_IRQ_CONSUMER | AML_IRQ_ACTIVE_LOW |
					  AML_IRQ_SHARED | AML_IRQ_WAKE,
				  irqs, 2),
		    "\x89\x0a\x00\x1d\x02\x09\x00\x00\x00\x78\x56\x34\x12");

	/* IO (Decode16, 0x3F8, 0x3F8, 1, 8)  IRQNoFlags () { 4 } */
	EXPECT_TERM(AML_RESOURCES(aml_io(0x3f8, 8), aml_irq_noflags(4)),
		    "\x11\x10\x0a\x0d"
		    "\x47\x01\xf8\x03\xf8\x03\x01\x08"
		    "\x22\x10\x00"
		    "\x79\x00");
	EXPECT_TERM_ERR(aml_irq_noflags(16), -EINVAL);

	EXPECT_TERM_ERR(aml_interrupt(AML_IRQ_EDGE, irqs, 0), -EINVAL);
	EXPECT_TERM_ERR(aml_interrupt(1u << 5, irqs, 1), -EINVAL);
	/* A descriptor's error is the template's. */
	EXPECT_TERM_ERR(AML_RESOURCES(aml_io(0x3f8, 8),
				      aml_interrupt(1u << 5, irqs, 1)),
			-EINVAL);
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
	AML_SCOPE(b, "\\_SB") {
		for (int i = 0; i < 200; i++) {
			AML_DEVICE(b, "DEV") {
				aml_emit(b,
					 aml_name_decl("_HID",
						       aml_string("ACPI0007")));
				AML_METHOD(b, "_STA", 0, AML_NOTSERIALIZED) {
					aml_emit(b, aml_return(aml_int(0x0f)));
				}
			}
		}
	}
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
		/* a later error does not replace it */
		aml_emit(&b, aml_name("bad"));
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
		aml_if_begin(&b, aml_one());
	for (int i = 0; i <= AML_MAX_DEPTH; i++)
		aml_end(&b);
	EXPECT_ERR(&b, -EINVAL);
	for (int i = 0; i < AML_MAX_DEPTH; i++)
		aml_if_begin(&b, aml_one());
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
