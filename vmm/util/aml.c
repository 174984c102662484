// SPDX-License-Identifier: GPL-2.0-only
/*
 * AML byte-code builder.  Encodings follow ACPI 6.4 section 20.2 (the AML
 * grammar) and 6.4 (resource descriptors); see vmm/util/aml.h for the calling
 * convention.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aml.h"

enum aml_open_kind {
	AML_OPEN_PKG,	 /* PkgLength only */
	AML_OPEN_BUFFER, /* PkgLength, then BufferSize */
	AML_OPEN_FIELD,	 /* PkgLength only, but takes field elements */
	AML_OPEN_IF,	 /* PkgLength only; an Else may follow */
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

void aml_byte(struct aml_buf *b, uint8_t v)
{
	aml_bytes(b, &v, 1);
}

void aml_word(struct aml_buf *b, uint16_t v)
{
	uint8_t p[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	aml_bytes(b, p, sizeof(p));
}

void aml_dword(struct aml_buf *b, uint32_t v)
{
	aml_word(b, (uint16_t)v);
	aml_word(b, (uint16_t)(v >> 16));
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
	uint8_t prefix[4 + 9];
	struct aml_open *o;
	size_t body, n, m = 0;
	int k;

	if (b->err)
		return;
	if (!b->depth) {
		fail(b, -EINVAL);
		return;
	}
	o = &b->open[b->depth - 1];
	body = b->len - o->start;
	/* Buffer: PkgLength covers BufferSize too, which comes first. */
	if (o->kind == AML_OPEN_BUFFER)
		m = int_encode(prefix + 4, body);
	k = pkglen_for_body(prefix, body + m);
	if (k < 0) {
		fail(b, k);
		return;
	}
	n = (size_t)k;
	memmove(prefix + n, prefix + 4, m);
	if (reserve(b, n + m))
		return;
	memmove(b->data + o->start + n + m, b->data + o->start, body);
	memcpy(b->data + o->start, prefix, n + m);
	b->len += n + m;
	b->depth--;
	b->if_end = o->kind == AML_OPEN_IF ? b->len : 0;
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

void aml_name(struct aml_buf *b, const char *path)
{
	size_t prefix = 0;
	int segs;
	uint8_t *p;

	if (b->err)
		return;
	if (path[0] == '\\')
		prefix = 1;
	else
		while (path[prefix] == '^')
			prefix++;
	segs = count_segs(path + prefix);
	if (segs < 0 || (!segs && !prefix)) {
		fail(b, -EINVAL);
		return;
	}
	if (reserve(b, prefix + 2 + 4 * (size_t)segs))
		return;
	p = b->data + b->len;
	memcpy(p, path, prefix);
	p += prefix;
	switch (segs) {
	case 0:
		*p++ = AML_ZERO_OP; /* NullName */
		break;
	case 1:
		break;
	case 2:
		*p++ = AML_DUAL_NAME_PREFIX;
		break;
	default:
		*p++ = AML_MULTI_NAME_PREFIX;
		*p++ = (uint8_t)segs;
		break;
	}
	put_segs(p, path + prefix);
	b->len = (size_t)(p - b->data) + 4 * (size_t)segs;
}

/* Field units and Name() take a single NameSeg, not a path. */
static void name_seg(struct aml_buf *b, const char *seg)
{
	uint8_t out[4];

	if (count_segs(seg) != 1) {
		fail(b, -EINVAL);
		return;
	}
	put_segs(out, seg);
	aml_bytes(b, out, 4);
}

void aml_zero(struct aml_buf *b)
{
	aml_byte(b, AML_ZERO_OP);
}

void aml_one(struct aml_buf *b)
{
	aml_byte(b, AML_ONE_OP);
}

void aml_ones(struct aml_buf *b)
{
	aml_byte(b, AML_ONES_OP);
}

void aml_no_target(struct aml_buf *b)
{
	aml_byte(b, AML_ZERO_OP);
}

void aml_int(struct aml_buf *b, uint64_t v)
{
	uint8_t out[9];

	aml_bytes(b, out, int_encode(out, v));
}

void aml_string(struct aml_buf *b, const char *s)
{
	size_t n = strlen(s);

	/* AsciiCharList: 0x01-0x7f, then NullChar. */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] > 0x7f)
			fail(b, -EINVAL);
	aml_byte(b, AML_STRING_PREFIX);
	aml_bytes(b, s, n + 1);
}

void aml_buffer_begin(struct aml_buf *b)
{
	aml_byte(b, AML_BUFFER_OP);
	open_block(b, AML_OPEN_BUFFER);
}

void aml_buffer(struct aml_buf *b, const void *p, size_t n)
{
	aml_buffer_begin(b);
	aml_bytes(b, p, n);
	aml_end(b);
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

void aml_eisaid(struct aml_buf *b, const char *id)
{
	uint32_t v;
	int err = aml_eisaid_value(id, &v);

	if (err) {
		fail(b, err);
		return;
	}
	/* Always a DWordConst, as ASL's EISAID() compiles to. */
	aml_byte(b, AML_DWORD_PREFIX);
	aml_dword(b, v);
}

void aml_local(struct aml_buf *b, unsigned int n)
{
	if (n > 7)
		fail(b, -EINVAL);
	aml_byte(b, (uint8_t)(AML_LOCAL0_OP + (n & 7)));
}

void aml_arg(struct aml_buf *b, unsigned int n)
{
	if (n > 6)
		fail(b, -EINVAL);
	aml_byte(b, (uint8_t)(AML_ARG0_OP + (n & 7)));
}

void aml_scope_begin(struct aml_buf *b, const char *name)
{
	aml_byte(b, AML_SCOPE_OP);
	open_block(b, AML_OPEN_PKG);
	aml_name(b, name);
}

static void ext_op(struct aml_buf *b, uint8_t op)
{
	uint8_t p[2] = { AML_EXT_OP_PREFIX, op };

	aml_bytes(b, p, 2);
}

void aml_device_begin(struct aml_buf *b, const char *name)
{
	ext_op(b, AML_DEVICE_OP);
	open_block(b, AML_OPEN_PKG);
	aml_name(b, name);
}

void aml_method_begin(struct aml_buf *b, const char *name, unsigned int nargs,
		      int serialized)
{
	if (nargs > 7)
		fail(b, -EINVAL);
	aml_byte(b, AML_METHOD_OP);
	open_block(b, AML_OPEN_PKG);
	aml_name(b, name);
	/* MethodFlags: ArgCount bits 0-2, SerializeFlag bit 3, SyncLevel 0. */
	aml_byte(b, (uint8_t)((nargs & 7) | (serialized ? 1u << 3 : 0)));
}

void aml_if_begin(struct aml_buf *b)
{
	aml_byte(b, AML_IF_OP);
	open_block(b, AML_OPEN_IF);
}

void aml_else_begin(struct aml_buf *b)
{
	/* DefElse is part of DefIfElse: it must follow the If's TermList. */
	if (!b->err && (!b->if_end || b->if_end != b->len))
		fail(b, -EINVAL);
	aml_byte(b, AML_ELSE_OP);
	open_block(b, AML_OPEN_PKG);
}

void aml_while_begin(struct aml_buf *b)
{
	aml_byte(b, AML_WHILE_OP);
	open_block(b, AML_OPEN_PKG);
}

void aml_package_begin(struct aml_buf *b, uint8_t nelems)
{
	aml_byte(b, AML_PACKAGE_OP);
	open_block(b, AML_OPEN_PKG);
	aml_byte(b, nelems);
}

void aml_name_decl(struct aml_buf *b, const char *name)
{
	aml_byte(b, AML_NAME_OP);
	aml_name(b, name);
}

void aml_mutex(struct aml_buf *b, const char *name, uint8_t sync_level)
{
	if (sync_level > 15)
		fail(b, -EINVAL);
	ext_op(b, AML_MUTEX_OP);
	aml_name(b, name);
	aml_byte(b, sync_level & 15);
}

void aml_opregion(struct aml_buf *b, const char *name,
		  enum aml_region_space space, uint64_t offset, uint64_t len)
{
	ext_op(b, AML_OPREGION_OP);
	aml_name(b, name);
	aml_byte(b, (uint8_t)space);
	aml_int(b, offset);
	aml_int(b, len);
}

void aml_field_begin(struct aml_buf *b, const char *region,
		     enum aml_field_access access, enum aml_field_lock lock,
		     enum aml_field_update update)
{
	ext_op(b, AML_FIELD_OP);
	open_block(b, AML_OPEN_FIELD);
	aml_name(b, region);
	aml_byte(b, (uint8_t)(access | lock | update));
	b->field_bits = 0;
}

/* A field element's PkgLength is a plain bit count, not a byte length. */
static void field_element(struct aml_buf *b, uint32_t bits)
{
	uint8_t len[4];
	int n;

	if (b->err)
		return;
	if (!b->depth || b->open[b->depth - 1].kind != AML_OPEN_FIELD ||
	    !bits || bits > UINT32_MAX - b->field_bits) {
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
	if (!b->err &&
	    (!b->depth || b->open[b->depth - 1].kind != AML_OPEN_FIELD)) {
		fail(b, -EINVAL);
		return;
	}
	name_seg(b, seg);
	field_element(b, bits);
}

void aml_field_reserved(struct aml_buf *b, uint32_t bits)
{
	if (!b->err &&
	    (!b->depth || b->open[b->depth - 1].kind != AML_OPEN_FIELD)) {
		fail(b, -EINVAL);
		return;
	}
	aml_byte(b, 0x00); /* ReservedField */
	field_element(b, bits);
}

void aml_field_offset(struct aml_buf *b, uint32_t byte)
{
	if (b->err)
		return;
	if (byte > UINT32_MAX / 8 || byte * 8 < b->field_bits) {
		fail(b, -EINVAL);
		return;
	}
	if (byte * 8 > b->field_bits)
		aml_field_reserved(b, byte * 8 - b->field_bits);
}

void aml_store(struct aml_buf *b)
{
	aml_byte(b, AML_STORE_OP);
}

void aml_add(struct aml_buf *b)
{
	aml_byte(b, AML_ADD_OP);
}

void aml_subtract(struct aml_buf *b)
{
	aml_byte(b, AML_SUBTRACT_OP);
}

void aml_increment(struct aml_buf *b)
{
	aml_byte(b, AML_INCREMENT_OP);
}

void aml_decrement(struct aml_buf *b)
{
	aml_byte(b, AML_DECREMENT_OP);
}

void aml_and(struct aml_buf *b)
{
	aml_byte(b, AML_AND_OP);
}

void aml_or(struct aml_buf *b)
{
	aml_byte(b, AML_OR_OP);
}

void aml_shift_left(struct aml_buf *b)
{
	aml_byte(b, AML_SHIFT_LEFT_OP);
}

void aml_shift_right(struct aml_buf *b)
{
	aml_byte(b, AML_SHIFT_RIGHT_OP);
}

void aml_land(struct aml_buf *b)
{
	aml_byte(b, AML_LAND_OP);
}

void aml_lor(struct aml_buf *b)
{
	aml_byte(b, AML_LOR_OP);
}

void aml_lnot(struct aml_buf *b)
{
	aml_byte(b, AML_LNOT_OP);
}

void aml_lequal(struct aml_buf *b)
{
	aml_byte(b, AML_LEQUAL_OP);
}

void aml_lless(struct aml_buf *b)
{
	aml_byte(b, AML_LLESS_OP);
}

void aml_lgreater(struct aml_buf *b)
{
	aml_byte(b, AML_LGREATER_OP);
}

void aml_return(struct aml_buf *b)
{
	aml_byte(b, AML_RETURN_OP);
}

void aml_break(struct aml_buf *b)
{
	aml_byte(b, AML_BREAK_OP);
}

void aml_notify(struct aml_buf *b)
{
	aml_byte(b, AML_NOTIFY_OP);
}

void aml_create_dword_field(struct aml_buf *b)
{
	aml_byte(b, AML_CREATE_DWORD_FIELD_OP);
}

void aml_create_byte_field(struct aml_buf *b)
{
	aml_byte(b, AML_CREATE_BYTE_FIELD_OP);
}

void aml_acquire(struct aml_buf *b, const char *mutex, uint16_t timeout)
{
	ext_op(b, AML_ACQUIRE_OP);
	aml_name(b, mutex);
	aml_word(b, timeout);
}

void aml_release(struct aml_buf *b, const char *mutex)
{
	ext_op(b, AML_RELEASE_OP);
	aml_name(b, mutex);
}

void aml_call(struct aml_buf *b, const char *method)
{
	aml_name(b, method);
}

void aml_restmpl_begin(struct aml_buf *b)
{
	aml_buffer_begin(b);
}

void aml_restmpl_end(struct aml_buf *b)
{
	/* End Tag: small item 0xf, length 1; checksum 0 is always valid. */
	static const uint8_t end_tag[] = { 0x79, 0x00 };

	aml_bytes(b, end_tag, sizeof(end_tag));
	aml_end(b);
}

/* Large resource data type: tag byte, 16-bit length of what follows. */
static void large_item(struct aml_buf *b, uint8_t tag, uint16_t len)
{
	aml_byte(b, tag);
	aml_word(b, len);
}

void aml_memory32_fixed(struct aml_buf *b, uint32_t info, uint32_t base,
			uint32_t len)
{
	large_item(b, 0x86, 9);
	aml_byte(b, (uint8_t)(info & 1));
	aml_dword(b, base);
	aml_dword(b, len);
}

void aml_interrupt(struct aml_buf *b, uint32_t flags, const uint32_t *irqs,
		   unsigned int n)
{
	if (!n || n > 255 || (flags & ~0x1fu)) {
		fail(b, -EINVAL);
		return;
	}
	/* Flags, table length, the table; no ResourceSource. */
	large_item(b, 0x89, (uint16_t)(2 + 4 * n));
	aml_byte(b, (uint8_t)flags);
	aml_byte(b, (uint8_t)n);
	for (unsigned int i = 0; i < n; i++)
		aml_dword(b, irqs[i]);
}

/* Small items: the tag byte holds the item name and the body length. */
static void small_item(struct aml_buf *b, uint8_t name, uint8_t len)
{
	aml_byte(b, (uint8_t)(name << 3 | len));
}

void aml_io(struct aml_buf *b, uint16_t base, uint8_t len)
{
	small_item(b, 0x08, 7);
	aml_byte(b, 1); /* decodes 16 address bits */
	aml_word(b, base);
	aml_word(b, base);
	aml_byte(b, 1); /* alignment */
	aml_byte(b, len);
}

void aml_irq_noflags(struct aml_buf *b, unsigned int irq)
{
	if (irq > 15) {
		fail(b, -EINVAL);
		return;
	}
	small_item(b, 0x04, 2);
	aml_word(b, (uint16_t)(1u << irq));
}
