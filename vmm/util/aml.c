// SPDX-License-Identifier: GPL-2.0-only
/*
 * AML byte-code builder.  Encodings follow ACPI 6.4 section 20.2 (the AML
 * grammar) and 6.4 (resource descriptors); see vmm/util/aml.h for the calling
 * convention.  Terms are built in place (struct aml_term, a value); blocks
 * grow in the buffer and get their PkgLength when they close.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aml.h"

enum aml_open_kind {
	AML_OPEN_PKG,	/* PkgLength only */
	AML_OPEN_FIELD, /* PkgLength only, but takes field elements */
	AML_OPEN_IF,	/* PkgLength only; an Else may follow */
};

static void fail(struct aml_buf *b, int err)
{
	if (!b->err)
		b->err = err;
}

/* Makes room for n more bytes; on failure the buffer is left as it was. */
static int reserve(struct aml_buf *b, size_t n)
{
	size_t need, cap;
	void *p;

	if (b->err)
		return b->err;
	if (n > SIZE_MAX - b->len) {
		fail(b, -E2BIG);
		return b->err;
	}
	need = b->len + n;
	if (need <= b->cap)
		return 0;
	if (b->max && need > b->max) {
		fail(b, -E2BIG);
		return b->err;
	}
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (b->max && cap > b->max)
		cap = b->max;
	p = (b->realloc_fn ? b->realloc_fn : realloc)(b->data, cap);
	if (!p) {
		fail(b, -ENOMEM);
		return b->err;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

void aml_free(struct aml_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->depth = 0;
}

int aml_finish(struct aml_buf *b)
{
	if (!b->err && b->depth)
		fail(b, -EINVAL); /* a begin without its end */
	return b->err;
}

void aml_bytes(struct aml_buf *b, const void *p, size_t n)
{
	if (!n) /* p may be NULL then, which memcpy() does not allow */
		return;
	if (reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void aml_byte(struct aml_buf *b, uint8_t v)
{
	aml_bytes(b, &v, 1);
}

void aml_emit(struct aml_buf *b, struct aml_term t)
{
	if (t.err)
		fail(b, t.err);
	else
		aml_bytes(b, t.code, t.len);
}

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
static int pkglen_for_body(uint8_t out[4], size_t len)
{
	for (size_t n = 1; n <= 4; n++) {
		static const size_t limit[] = { 0, 0x3f, 0xfff, 0xfffff,
						AML_PKGLEN_MAX };

		if (len <= limit[n] - n)
			return aml_pkglen_encode(out, (uint32_t)(len + n));
	}
	return -E2BIG;
}

static void open_block(struct aml_buf *b, enum aml_open_kind kind)
{
	if (b->err)
		return;
	if (b->depth == AML_MAX_DEPTH) {
		fail(b, -EINVAL);
		return;
	}
	b->open[b->depth++] = (struct aml_open){
		.start = b->len,
		.kind = (uint8_t)kind,
	};
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

void aml_end(struct aml_buf *b)
{
	uint8_t prefix[4];
	struct aml_open *o;
	size_t body, n;
	int k;

	if (b->err)
		return;
	if (!b->depth) {
		fail(b, -EINVAL);
		return;
	}
	o = &b->open[b->depth - 1];
	body = b->len - o->start;
	k = pkglen_for_body(prefix, body);
	if (k < 0) {
		fail(b, k);
		return;
	}
	n = (size_t)k;
	if (reserve(b, n))
		return;
	memmove(b->data + o->start + n, b->data + o->start, body);
	memcpy(b->data + o->start, prefix, n);
	b->len += n;
	b->depth--;
	b->if_end = o->kind == AML_OPEN_IF ? b->len : 0;
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
	int n = pkglen_for_body(len, body->len);

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

/* --- blocks --------------------------------------------------------------- */

static void ext_op(struct aml_buf *b, uint8_t op)
{
	uint8_t p[2] = { AML_EXT_OP_PREFIX, op };

	aml_bytes(b, p, 2);
}

void aml_scope_begin(struct aml_buf *b, const char *name)
{
	aml_byte(b, AML_SCOPE_OP);
	open_block(b, AML_OPEN_PKG);
	aml_emit(b, aml_name(name));
}

void aml_device_begin(struct aml_buf *b, const char *name)
{
	ext_op(b, AML_DEVICE_OP);
	open_block(b, AML_OPEN_PKG);
	aml_emit(b, aml_name(name));
}

void aml_method_begin(struct aml_buf *b, const char *name, unsigned int nargs,
		      enum aml_method_serialize serialized)
{
	if (nargs > 7)
		fail(b, -EINVAL);
	aml_byte(b, AML_METHOD_OP);
	open_block(b, AML_OPEN_PKG);
	aml_emit(b, aml_name(name));
	/* MethodFlags: ArgCount bits 0-2, SerializeFlag bit 3, SyncLevel 0. */
	aml_byte(b, (uint8_t)((nargs & 7) | (serialized ? 1u << 3 : 0)));
}

void aml_if_begin(struct aml_buf *b, struct aml_term predicate)
{
	aml_byte(b, AML_IF_OP);
	open_block(b, AML_OPEN_IF);
	aml_emit(b, predicate);
}

void aml_else_begin(struct aml_buf *b)
{
	/* DefElse is part of DefIfElse: it must follow the If's TermList. */
	if (!b->err && (!b->if_end || b->if_end != b->len))
		fail(b, -EINVAL);
	aml_byte(b, AML_ELSE_OP);
	open_block(b, AML_OPEN_PKG);
}

void aml_while_begin(struct aml_buf *b, struct aml_term predicate)
{
	aml_byte(b, AML_WHILE_OP);
	open_block(b, AML_OPEN_PKG);
	aml_emit(b, predicate);
}

void aml_field_begin(struct aml_buf *b, const char *region,
		     enum aml_field_access access, enum aml_field_lock lock,
		     enum aml_field_update update)
{
	ext_op(b, AML_FIELD_OP);
	open_block(b, AML_OPEN_FIELD);
	aml_emit(b, aml_name(region));
	aml_byte(b, (uint8_t)(access | lock | update));
	b->field_bits = 0;
}

static int in_field(struct aml_buf *b)
{
	if (!b->err &&
	    (!b->depth || b->open[b->depth - 1].kind != AML_OPEN_FIELD))
		fail(b, -EINVAL);
	return !b->err;
}

/* A field element's PkgLength is a plain bit count, not a byte length. */
static void field_element(struct aml_buf *b, uint32_t bits)
{
	uint8_t len[4];
	int n;

	if (b->err)
		return;
	if (!bits || bits > UINT32_MAX - b->field_bits) {
		fail(b, -EINVAL);
		return;
	}
	n = aml_pkglen_encode(len, bits);
	if (n < 0) {
		fail(b, n);
		return;
	}
	aml_bytes(b, len, (size_t)n);
	b->field_bits += bits;
}

void aml_field_unit(struct aml_buf *b, const char *seg, uint32_t bits)
{
	struct aml_term t = { 0 };

	if (!in_field(b))
		return;
	put_name_seg(&t, seg);
	aml_emit(b, t);
	field_element(b, bits);
}

void aml_field_reserved(struct aml_buf *b, uint32_t bits)
{
	if (!in_field(b))
		return;
	aml_byte(b, 0x00); /* ReservedField */
	field_element(b, bits);
}

void aml_field_offset(struct aml_buf *b, uint32_t byte)
{
	if (!in_field(b))
		return;
	if (byte > UINT32_MAX / 8 || byte * 8 < b->field_bits) {
		fail(b, -EINVAL);
		return;
	}
	if (byte * 8 > b->field_bits)
		aml_field_reserved(b, byte * 8 - b->field_bits);
}
