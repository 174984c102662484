// SPDX-License-Identifier: GPL-2.0-only
/*
 * AML terms, built in place as values (struct aml_term): names, data
 * objects, operators and resource descriptors, with the PkgLength and
 * integer encodings they use.  Encodings follow ACPI 6.4 section 20.2 (the
 * AML grammar) and 6.4 (resource descriptors); the blocks they go into are
 * aml.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aml.h"

/*
 * PkgLeadByte bits 7-6 count the bytes that follow.  With none, bits 5-0
 * hold the value (up to 63); otherwise bits 3-0 hold its low nibble, bits
 * 5-4 are zero and each following byte holds the next 8 bits.
 */
int aml_pkglen_encode(uint8_t out[4], uint32_t value)
{
	int n;

	if (value <= 0x3f) {
		out[0] = (uint8_t)value;
		return 1;
	}
	if (value > AML_PKGLEN_MAX)
		return -E2BIG;
	n = value <= 0xfff ? 2 : value <= 0xfffff ? 3 : 4;
	out[0] = (uint8_t)(((n - 1) << 6) | (value & 0xf));
	for (int i = 1; i < n; i++)
		out[i] = (uint8_t)(value >> (4 + 8 * (i - 1)));
	return n;
}

/* The value of a PkgLength that counts itself, for a body of len bytes. */
int aml_pkglen_for_body(uint8_t out[4], size_t len)
{
	for (size_t n = 1; n <= 4; n++) {
		static const size_t limit[] = { 0, 0x3f, 0xfff, 0xfffff,
						AML_PKGLEN_MAX };

		if (len <= limit[n] - n)
			return aml_pkglen_encode(out, (uint32_t)(len + n));
	}
	return -E2BIG;
}

/* Encodes v the shortest way into out; returns the length (1-9). */
static size_t int_encode(uint8_t out[9], uint64_t v)
{
	size_t n;

	if (v == 0 || v == 1) {
		out[0] = v ? AML_ONE_OP : AML_ZERO_OP;
		return 1;
	}
	if (v <= 0xff) {
		out[0] = AML_BYTE_PREFIX;
		n = 1;
	} else if (v <= 0xffff) {
		out[0] = AML_WORD_PREFIX;
		n = 2;
	} else if (v <= 0xffffffff) {
		out[0] = AML_DWORD_PREFIX;
		n = 4;
	} else {
		out[0] = AML_QWORD_PREFIX;
		n = 8;
	}
	for (size_t i = 0; i < n; i++)
		out[1 + i] = (uint8_t)(v >> (8 * i));
	return n + 1;
}

/* --- terms ---------------------------------------------------------------- */

static struct aml_term term_err(int err)
{
	return (struct aml_term){ .err = err };
}

static void put(struct aml_term *t, const void *p, size_t n)
{
	if (t->err ||
	    !n) /* p may be NULL then, which memcpy() does not allow */
		return;
	if (n > AML_TERM_MAX - (size_t)t->len) {
		t->err = -E2BIG;
		return;
	}
	memcpy(t->code + t->len, p, n);
	t->len = (uint16_t)(t->len + n);
}

static void put_byte(struct aml_term *t, uint8_t v)
{
	put(t, &v, 1);
}

static void put_word(struct aml_term *t, uint16_t v)
{
	uint8_t p[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	put(t, p, sizeof(p));
}

static void put_dword(struct aml_term *t, uint32_t v)
{
	put_word(t, (uint16_t)v);
	put_word(t, (uint16_t)(v >> 16));
}

static void put_term(struct aml_term *t, const struct aml_term *s)
{
	if (!t->err && s->err)
		t->err = s->err;
	put(t, s->code, s->len);
}

static void put_int(struct aml_term *t, uint64_t v)
{
	uint8_t out[9];

	put(t, out, int_encode(out, v));
}

static void put_ext_op(struct aml_term *t, uint8_t op)
{
	put_byte(t, AML_EXT_OP_PREFIX);
	put_byte(t, op);
}

/* A PkgLength that counts itself, then the body: Buffer, Package. */
static void put_pkg(struct aml_term *t, const struct aml_term *body)
{
	uint8_t len[4];
	int n = aml_pkglen_for_body(len, body->len);

	if (n < 0 && !t->err)
		t->err = n;
	put(t, len, n < 0 ? 0 : (size_t)n);
	put_term(t, body);
}

static struct aml_term op_terms(uint8_t op, const struct aml_term *a,
				unsigned int n)
{
	struct aml_term t = { 0 };

	put_byte(&t, op);
	for (unsigned int i = 0; i < n; i++)
		put_term(&t, &a[i]);
	return t;
}

static struct aml_term op1(uint8_t op, struct aml_term a)
{
	return op_terms(op, &a, 1);
}

static struct aml_term op2(uint8_t op, struct aml_term a, struct aml_term b)
{
	const struct aml_term args[] = { a, b };

	return op_terms(op, args, 2);
}

static struct aml_term op3(uint8_t op, struct aml_term a, struct aml_term b,
			   struct aml_term c)
{
	const struct aml_term args[] = { a, b, c };

	return op_terms(op, args, 3);
}

static int seg_char_ok(char c, int first)
{
	return (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

/* Writes segs NameSegs of path (already validated) to out. */
static void put_segs(uint8_t *out, const char *path)
{
	while (*path) {
		int i = 0;

		for (; path[i] && path[i] != '.'; i++)
			out[i] = (uint8_t)path[i];
		for (int j = i; j < 4; j++)
			out[j] = '_';
		out += 4;
		path += i;
		if (*path == '.')
			path++;
	}
}

/* Number of NameSegs in path, or -EINVAL. */
static int count_segs(const char *path)
{
	int segs = 0;

	if (!*path)
		return 0;
	for (;;) {
		int i = 0;

		while (path[i] && path[i] != '.') {
			if (i == 4 || !seg_char_ok(path[i], i == 0))
				return -EINVAL;
			i++;
		}
		if (!i || ++segs > AML_MAX_SEGS)
			return -EINVAL;
		if (!path[i])
			return segs;
		path += i + 1;
	}
}

struct aml_term aml_name(const char *path)
{
	struct aml_term t = { 0 };
	size_t prefix = 0;
	uint8_t segs_buf[4 * AML_MAX_SEGS];
	int segs;

	if (path[0] == '\\')
		prefix = 1;
	else
		while (path[prefix] == '^')
			prefix++;
	segs = count_segs(path + prefix);
	if (segs < 0 || (!segs && !prefix))
		return term_err(-EINVAL);
	put(&t, path, prefix);
	switch (segs) {
	case 0:
		put_byte(&t, AML_ZERO_OP); /* NullName */
		break;
	case 1:
		break;
	case 2:
		put_byte(&t, AML_DUAL_NAME_PREFIX);
		break;
	default:
		put_byte(&t, AML_MULTI_NAME_PREFIX);
		put_byte(&t, (uint8_t)segs);
		break;
	}
	put_segs(segs_buf, path + prefix);
	put(&t, segs_buf, 4 * (size_t)segs);
	return t;
}

/* Field units and Name() take a single NameSeg, not a path. */
static void put_name_seg(struct aml_term *t, const char *seg)
{
	uint8_t out[4];

	if (count_segs(seg) != 1) {
		if (!t->err)
			t->err = -EINVAL;
		return;
	}
	put_segs(out, seg);
	put(t, out, 4);
}

struct aml_term aml_name_seg(const char *seg)
{
	struct aml_term t = { 0 };

	put_name_seg(&t, seg);
	return t;
}

struct aml_term aml_zero(void)
{
	return aml_int(0);
}

struct aml_term aml_one(void)
{
	return aml_int(1);
}

struct aml_term aml_ones(void)
{
	struct aml_term t = { 0 };

	put_byte(&t, AML_ONES_OP);
	return t;
}

struct aml_term aml_no_target(void)
{
	return aml_zero(); /* NullName */
}

struct aml_term aml_int(uint64_t v)
{
	struct aml_term t = { 0 };

	put_int(&t, v);
	return t;
}

struct aml_term aml_string(const char *s)
{
	struct aml_term t = { 0 };
	size_t n = strlen(s);

	/* AsciiCharList: 0x01-0x7f, then NullChar. */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] > 0x7f)
			return term_err(-EINVAL);
	put_byte(&t, AML_STRING_PREFIX);
	put(&t, s, n + 1);
	return t;
}

/* Buffer: PkgLength covers BufferSize too, which comes first. */
static struct aml_term buffer_of(const struct aml_term *bytes)
{
	struct aml_term t = { 0 }, body = aml_int(bytes->len);

	put_term(&body, bytes);
	put_byte(&t, AML_BUFFER_OP);
	put_pkg(&t, &body);
	return t;
}

struct aml_term aml_buffer(const void *p, size_t n)
{
	struct aml_term bytes = { 0 };

	put(&bytes, p, n);
	return buffer_of(&bytes);
}

struct aml_term aml_package_n(const struct aml_term *elems, unsigned int n)
{
	struct aml_term t = { 0 }, body = { 0 };

	if (n > 255)
		return term_err(-EINVAL);
	put_byte(&body, (uint8_t)n); /* NumElements */
	for (unsigned int i = 0; i < n; i++)
		put_term(&body, &elems[i]);
	put_byte(&t, AML_PACKAGE_OP);
	put_pkg(&t, &body);
	return t;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * EISA ID: three letters, 5 bits each ('A' is 1), then four hex digits,
 * stored most significant byte first.
 */
int aml_eisaid_value(const char *id, uint32_t *out)
{
	uint32_t v = 0;

	if (strlen(id) != 7)
		return -EINVAL;
	for (int i = 0; i < 3; i++) {
		if (id[i] < 'A' || id[i] > 'Z')
			return -EINVAL;
		v = v << 5 | (uint32_t)(id[i] - '@');
	}
	for (int i = 3; i < 7; i++) {
		int d = hex_digit(id[i]);

		if (d < 0)
			return -EINVAL;
		v = v << 4 | (uint32_t)d;
	}
	*out = (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) |
	       (v << 24);
	return 0;
}

struct aml_term aml_eisaid(const char *id)
{
	struct aml_term t = { 0 };
	uint32_t v;
	int err = aml_eisaid_value(id, &v);

	if (err)
		return term_err(err);
	/* Always a DWordConst, as ASL's EISAID() compiles to. */
	put_byte(&t, AML_DWORD_PREFIX);
	put_dword(&t, v);
	return t;
}

struct aml_term aml_local(unsigned int n)
{
	struct aml_term t = { 0 };

	if (n > 7)
		return term_err(-EINVAL);
	put_byte(&t, (uint8_t)(AML_LOCAL0_OP + n));
	return t;
}

struct aml_term aml_arg(unsigned int n)
{
	struct aml_term t = { 0 };

	if (n > 6)
		return term_err(-EINVAL);
	put_byte(&t, (uint8_t)(AML_ARG0_OP + n));
	return t;
}

struct aml_term aml_name_decl(const char *name, struct aml_term value)
{
	struct aml_term t = { 0 }, n = aml_name(name);

	put_byte(&t, AML_NAME_OP);
	put_term(&t, &n);
	put_term(&t, &value);
	return t;
}

struct aml_term aml_mutex(const char *name, uint8_t sync_level)
{
	struct aml_term t = { 0 }, n = aml_name(name);

	if (sync_level > 15)
		return term_err(-EINVAL);
	put_ext_op(&t, AML_MUTEX_OP);
	put_term(&t, &n);
	put_byte(&t, sync_level);
	return t;
}

struct aml_term aml_opregion(const char *name, enum aml_region_space space,
			     uint64_t offset, uint64_t len)
{
	struct aml_term t = { 0 }, n = aml_name(name);

	put_ext_op(&t, AML_OPREGION_OP);
	put_term(&t, &n);
	put_byte(&t, (uint8_t)space);
	put_int(&t, offset);
	put_int(&t, len);
	return t;
}

struct aml_term aml_store(struct aml_term src, struct aml_term dst)
{
	return op2(AML_STORE_OP, src, dst);
}

struct aml_term aml_add(struct aml_term a, struct aml_term b,
			struct aml_term target)
{
	return op3(AML_ADD_OP, a, b, target);
}

struct aml_term aml_subtract(struct aml_term a, struct aml_term b,
			     struct aml_term target)
{
	return op3(AML_SUBTRACT_OP, a, b, target);
}

struct aml_term aml_and(struct aml_term a, struct aml_term b,
			struct aml_term target)
{
	return op3(AML_AND_OP, a, b, target);
}

struct aml_term aml_or(struct aml_term a, struct aml_term b,
		       struct aml_term target)
{
	return op3(AML_OR_OP, a, b, target);
}

struct aml_term aml_shift_left(struct aml_term a, struct aml_term count,
			       struct aml_term target)
{
	return op3(AML_SHIFT_LEFT_OP, a, count, target);
}

struct aml_term aml_shift_right(struct aml_term a, struct aml_term count,
				struct aml_term target)
{
	return op3(AML_SHIFT_RIGHT_OP, a, count, target);
}

struct aml_term aml_increment(struct aml_term target)
{
	return op1(AML_INCREMENT_OP, target);
}

struct aml_term aml_decrement(struct aml_term target)
{
	return op1(AML_DECREMENT_OP, target);
}

struct aml_term aml_land(struct aml_term a, struct aml_term b)
{
	return op2(AML_LAND_OP, a, b);
}

struct aml_term aml_lor(struct aml_term a, struct aml_term b)
{
	return op2(AML_LOR_OP, a, b);
}

struct aml_term aml_lnot(struct aml_term a)
{
	return op1(AML_LNOT_OP, a);
}

struct aml_term aml_lequal(struct aml_term a, struct aml_term b)
{
	return op2(AML_LEQUAL_OP, a, b);
}

struct aml_term aml_lless(struct aml_term a, struct aml_term b)
{
	return op2(AML_LLESS_OP, a, b);
}

struct aml_term aml_lgreater(struct aml_term a, struct aml_term b)
{
	return op2(AML_LGREATER_OP, a, b);
}

struct aml_term aml_return(struct aml_term value)
{
	return op1(AML_RETURN_OP, value);
}

struct aml_term aml_break(void)
{
	return op_terms(AML_BREAK_OP, NULL, 0);
}

struct aml_term aml_notify(struct aml_term object, struct aml_term value)
{
	return op2(AML_NOTIFY_OP, object, value);
}

static struct aml_term create_field(uint8_t op, struct aml_term buffer,
				    struct aml_term index, const char *name)
{
	struct aml_term t = op2(op, buffer, index);

	put_name_seg(&t, name);
	return t;
}

struct aml_term aml_create_dword_field(struct aml_term buffer,
				       struct aml_term index, const char *name)
{
	return create_field(AML_CREATE_DWORD_FIELD_OP, buffer, index, name);
}

struct aml_term aml_create_byte_field(struct aml_term buffer,
				      struct aml_term index, const char *name)
{
	return create_field(AML_CREATE_BYTE_FIELD_OP, buffer, index, name);
}

struct aml_term aml_acquire(const char *mutex, uint16_t timeout)
{
	struct aml_term t = { 0 }, n = aml_name(mutex);

	put_ext_op(&t, AML_ACQUIRE_OP);
	put_term(&t, &n);
	put_word(&t, timeout);
	return t;
}

struct aml_term aml_release(const char *mutex)
{
	struct aml_term t = { 0 }, n = aml_name(mutex);

	put_ext_op(&t, AML_RELEASE_OP);
	put_term(&t, &n);
	return t;
}

/* A method call is its NameString followed by the arguments. */
struct aml_term aml_call_n(const char *method, const struct aml_term *args,
			   unsigned int n)
{
	struct aml_term t = aml_name(method);

	if (n > 7)
		return term_err(-EINVAL);
	for (unsigned int i = 0; i < n; i++)
		put_term(&t, &args[i]);
	return t;
}

struct aml_term aml_call0(const char *method)
{
	return aml_name(method);
}

struct aml_term aml_resources_n(const struct aml_term *descs, unsigned int n)
{
	/* End Tag: small item 0xf, length 1; checksum 0 is always valid. */
	static const uint8_t end_tag[] = { 0x79, 0x00 };
	struct aml_term bytes = { 0 };

	for (unsigned int i = 0; i < n; i++)
		put_term(&bytes, &descs[i]);
	put(&bytes, end_tag, sizeof(end_tag));
	return buffer_of(&bytes);
}

/* Large resource data type: tag byte, 16-bit length of what follows. */
static void large_item(struct aml_term *t, uint8_t tag, uint16_t len)
{
	put_byte(t, tag);
	put_word(t, len);
}

struct aml_term aml_memory32_fixed(uint32_t info, uint32_t base, uint32_t len)
{
	struct aml_term t = { 0 };

	large_item(&t, 0x86, 9);
	put_byte(&t, (uint8_t)(info & 1));
	put_dword(&t, base);
	put_dword(&t, len);
	return t;
}

struct aml_term aml_interrupt(uint32_t flags, const uint32_t *irqs,
			      unsigned int n)
{
	struct aml_term t = { 0 };

	if (!n || n > 255 || (flags & ~0x1fu))
		return term_err(-EINVAL);
	/* Flags, table length, the table; no ResourceSource. */
	large_item(&t, 0x89, (uint16_t)(2 + 4 * n));
	put_byte(&t, (uint8_t)flags);
	put_byte(&t, (uint8_t)n);
	for (unsigned int i = 0; i < n; i++)
		put_dword(&t, irqs[i]);
	return t;
}

/* Small items: the tag byte holds the item name and the body length. */
static void small_item(struct aml_term *t, uint8_t name, uint8_t len)
{
	put_byte(t, (uint8_t)(name << 3 | len));
}

struct aml_term aml_io(uint16_t base, uint8_t len)
{
	struct aml_term t = { 0 };

	small_item(&t, 0x08, 7);
	put_byte(&t, 1); /* decodes 16 address bits */
	put_word(&t, base);
	put_word(&t, base);
	put_byte(&t, 1); /* alignment */
	put_byte(&t, len);
	return t;
}

struct aml_term aml_irq_noflags(unsigned int irq)
{
	struct aml_term t = { 0 };

	if (irq > 15)
		return term_err(-EINVAL);
	small_item(&t, 0x04, 2);
	put_word(&t, (uint16_t)(1u << irq));
	return t;
}
