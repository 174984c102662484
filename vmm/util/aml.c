// SPDX-License-Identifier: GPL-2.0-only
/*
 * The AML buffer and its blocks: bytes and terms emitted, Scope, Device,
 * Method, If/Else, While and Field opened in place and given their PkgLength
 * when they close (ACPI 6.4 section 20.2).  See vmm/util/aml.h for the
 * calling convention; the terms themselves are built in aml_term.c.
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
	k = aml_pkglen_for_body(prefix, body);
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
	if (!in_field(b))
		return;
	aml_emit(b, aml_name_seg(seg));
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
