/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small AML byte-code builder (ACPI 6.x, section 20 "ACPI Machine Language
 * Specification"): just what hotvm's DSDT needs, each encoder exact.  The
 * calls nest as the ASL they produce does:
 *
 *	AML_METHOD(b, "CEJ0", 1, AML_SERIALIZED) {
 *		aml_emit(b, aml_acquire("CPLK", AML_WAIT_FOREVER));
 *		aml_emit(b, aml_store(aml_arg(0), aml_name("CSEL")));
 *		AML_IF(b, aml_lequal(aml_name("CPEN"), aml_one()))
 *			aml_emit(b, aml_store(aml_one(), aml_name("CEJT")));
 *		aml_emit(b, aml_release("CPLK"));
 *	}
 *
 * Two kinds of objects:
 *  - terms (struct aml_term): expressions, statements and data objects,
 *    built as values from their operands (aml_store(src, dst)), so they
 *    nest in one C expression; each holds at most AML_TERM_MAX bytes.
 *    aml_emit() appends one to the buffer.
 *  - blocks with a PkgLength (Scope, Device, Method, If, Else, While,
 *    Field), which hold any number of terms: AML_SCOPE(b, ...) { body }
 *    and its kin open the block, run the body, and close it; the length
 *    is only known at the end, so closing shifts the body to make room.
 *    Do not leave a block's body with return or goto (the block stays
 *    open, and aml_finish() reports -EINVAL).
 *
 * Errors are sticky: the first one (-ENOMEM, -E2BIG, -EINVAL) is kept, in
 * the term that hit it and then in the buffer it is emitted to; every later
 * call on the buffer is a no-op, and aml_finish() reports it once.  Callers
 * therefore check only at the end.
 */
#ifndef HOTVM_AML_H
#define HOTVM_AML_H

#include <stddef.h>
#include <stdint.h>

#define AML_MAX_DEPTH  16
#define AML_PKGLEN_MAX ((1u << 28) - 1) /* 4-byte PkgLength: 28 bits */
#define AML_MAX_SEGS   255		/* MultiNamePrefix SegCount */
#define AML_TERM_MAX   96		/* bytes in one term */

/* Opcodes (ACPI 6.4, 20.3 "AML Byte Stream Byte Values"). */
enum {
	AML_ZERO_OP = 0x00,
	AML_ONE_OP = 0x01,
	AML_NAME_OP = 0x08,
	AML_BYTE_PREFIX = 0x0a,
	AML_WORD_PREFIX = 0x0b,
	AML_DWORD_PREFIX = 0x0c,
	AML_STRING_PREFIX = 0x0d,
	AML_QWORD_PREFIX = 0x0e,
	AML_SCOPE_OP = 0x10,
	AML_BUFFER_OP = 0x11,
	AML_PACKAGE_OP = 0x12,
	AML_METHOD_OP = 0x14,
	AML_DUAL_NAME_PREFIX = 0x2e,
	AML_MULTI_NAME_PREFIX = 0x2f,
	AML_EXT_OP_PREFIX = 0x5b,
	AML_ROOT_CHAR = 0x5c,
	AML_PARENT_PREFIX = 0x5e,
	AML_LOCAL0_OP = 0x60,
	AML_ARG0_OP = 0x68,
	AML_STORE_OP = 0x70,
	AML_ADD_OP = 0x72,
	AML_SUBTRACT_OP = 0x74,
	AML_INCREMENT_OP = 0x75,
	AML_DECREMENT_OP = 0x76,
	AML_SHIFT_LEFT_OP = 0x79,
	AML_SHIFT_RIGHT_OP = 0x7a,
	AML_AND_OP = 0x7b,
	AML_OR_OP = 0x7d,
	AML_NOTIFY_OP = 0x86,
	AML_CREATE_DWORD_FIELD_OP = 0x8a,
	AML_CREATE_BYTE_FIELD_OP = 0x8c,
	AML_LAND_OP = 0x90,
	AML_LOR_OP = 0x91,
	AML_LNOT_OP = 0x92,
	AML_LEQUAL_OP = 0x93,
	AML_LGREATER_OP = 0x94,
	AML_LLESS_OP = 0x95,
	AML_IF_OP = 0xa0,
	AML_ELSE_OP = 0xa1,
	AML_WHILE_OP = 0xa2,
	AML_RETURN_OP = 0xa4,
	AML_BREAK_OP = 0xa5,
	AML_ONES_OP = 0xff,
};

/* Second byte after AML_EXT_OP_PREFIX. */
enum {
	AML_MUTEX_OP = 0x01,
	AML_ACQUIRE_OP = 0x23,
	AML_RELEASE_OP = 0x27,
	AML_OPREGION_OP = 0x80,
	AML_FIELD_OP = 0x81,
	AML_DEVICE_OP = 0x82,
};

/* OperationRegion RegionSpace. */
enum aml_region_space {
	AML_SYSTEM_MEMORY = 0x00,
	AML_SYSTEM_IO = 0x01,
};

/* FieldFlags: AccessType bits 0-3, LockRule bit 4, UpdateRule bits 5-6. */
enum aml_field_access {
	AML_ANY_ACC = 0,
	AML_BYTE_ACC = 1,
	AML_WORD_ACC = 2,
	AML_DWORD_ACC = 3,
	AML_QWORD_ACC = 4,
	AML_BUFFER_ACC = 5,
};

enum aml_field_lock {
	AML_NOLOCK = 0,
	AML_LOCK = 1 << 4,
};

enum aml_field_update {
	AML_PRESERVE = 0 << 5,
	AML_WRITE_AS_ONES = 1 << 5,
	AML_WRITE_AS_ZEROS = 2 << 5,
};

/* MethodFlags SerializeFlag. */
enum aml_method_serialize {
	AML_NOTSERIALIZED = 0,
	AML_SERIALIZED = 1,
};

/* Acquire's timeout that means no timeout. */
#define AML_WAIT_FOREVER 0xffff

/* Extended Interrupt Descriptor flags (ACPI 6.4, 6.4.3.6). */
#define AML_IRQ_CONSUMER   (1u << 0) /* else producer */
#define AML_IRQ_EDGE	   (1u << 1) /* else level */
#define AML_IRQ_ACTIVE_LOW (1u << 2) /* else active high */
#define AML_IRQ_SHARED	   (1u << 3) /* else exclusive */
#define AML_IRQ_WAKE	   (1u << 4)

/* Memory32Fixed information byte. */
#define AML_MEM_READ_WRITE 1u
#define AML_MEM_READ_ONLY  0u

/* One term's encoding; err, if set, is the first error building it. */
struct aml_term {
	int err;
	uint16_t len;
	uint8_t code[AML_TERM_MAX];
};

struct aml_open {
	size_t start; /* first body byte */
	uint8_t kind; /* enum aml_open_kind in aml.c */
};

struct aml_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	/* Growing past this many bytes fails with -E2BIG; 0: no limit. */
	size_t max;
	/* Allocator, realloc() if NULL; tests substitute one that fails. */
	void *(*realloc_fn)(void *ptr, size_t size);
	int err;
	unsigned int depth;
	struct aml_open open[AML_MAX_DEPTH];
	uint32_t field_bits; /* bit offset inside the open Field */
	size_t if_end;	     /* where the last If ended: Else must follow */
};

/* A zeroed struct aml_buf is ready to use; aml_free() releases it. */
void aml_free(struct aml_buf *b);
/* 0 if every call so far succeeded and every block was closed. */
int aml_finish(struct aml_buf *b);

/* Appends a term, or takes its error. */
void aml_emit(struct aml_buf *b, struct aml_term t);
/* Raw bytes (tests, and bodies the builder has no encoder for). */
void aml_bytes(struct aml_buf *b, const void *p, size_t n);

/*
 * PkgLength for a value (the value as stored: for objects it counts the
 * PkgLength bytes themselves, for field units it is a bit count).  Returns
 * the number of bytes (1-4) written to out, or -E2BIG.
 */
int aml_pkglen_encode(uint8_t out[4], uint32_t value);
/*
 * The PkgLength of an object whose body is len bytes: the value counts its
 * own bytes too.  Returns its length (1-4) in out, or -E2BIG.
 */
int aml_pkglen_for_body(uint8_t out[4], size_t len);

/* --- terms: data objects ------------------------------------------------- */

/*
 * NameString from ASL spelling: optional "\" or "^"..., then NameSegs of 1-4
 * characters separated by '.', short ones padded with '_' as ASL does
 * ("GED" is "GED_").  "\" alone is the root.
 */
struct aml_term aml_name(const char *path);
/* One NameSeg alone, as a field unit names itself: -EINVAL for a path. */
struct aml_term aml_name_seg(const char *seg);
struct aml_term aml_zero(void);
struct aml_term aml_one(void);
struct aml_term aml_ones(void);
/* The shortest encoding: Zero, One, or Byte/Word/DWord/QWord prefix. */
struct aml_term aml_int(uint64_t v);
struct aml_term aml_string(const char *s);
/* Buffer (n) { p[0..n) } */
struct aml_term aml_buffer(const void *p, size_t n);
/* EISAID ("PNP0A05") as the DWORD it compresses to. */
struct aml_term aml_eisaid(const char *id);
int aml_eisaid_value(const char *id, uint32_t *out);
struct aml_term aml_local(unsigned int n); /* Local0-7 */
struct aml_term aml_arg(unsigned int n);   /* Arg0-6 */
/* NullName as an unused Target operand. */
struct aml_term aml_no_target(void);
/* Package () { elems } */
#define AML_PACKAGE(...)                                                       \
	aml_package_n((const struct aml_term[]){ __VA_ARGS__ },                \
		      AML_COUNT(__VA_ARGS__))
struct aml_term aml_package_n(const struct aml_term *elems, unsigned int n);

/* The number of terms in a macro's argument list. */
#define AML_COUNT(...)                                                         \
	(unsigned int)(sizeof((const struct aml_term[]){ __VA_ARGS__ }) /      \
		       sizeof(struct aml_term))

/* --- terms: named objects and statements --------------------------------- */

/* Name (name, value) */
struct aml_term aml_name_decl(const char *name, struct aml_term value);
struct aml_term aml_mutex(const char *name, uint8_t sync_level);
struct aml_term aml_opregion(const char *name, enum aml_region_space space,
			     uint64_t offset, uint64_t len);

struct aml_term aml_store(struct aml_term src, struct aml_term dst);
struct aml_term aml_add(struct aml_term a, struct aml_term b,
			struct aml_term target);
struct aml_term aml_subtract(struct aml_term a, struct aml_term b,
			     struct aml_term target);
struct aml_term aml_and(struct aml_term a, struct aml_term b,
			struct aml_term target);
struct aml_term aml_or(struct aml_term a, struct aml_term b,
		       struct aml_term target);
struct aml_term aml_shift_left(struct aml_term a, struct aml_term count,
			       struct aml_term target);
struct aml_term aml_shift_right(struct aml_term a, struct aml_term count,
				struct aml_term target);
struct aml_term aml_increment(struct aml_term target);
struct aml_term aml_decrement(struct aml_term target);
struct aml_term aml_land(struct aml_term a, struct aml_term b);
struct aml_term aml_lor(struct aml_term a, struct aml_term b);
struct aml_term aml_lnot(struct aml_term a);
struct aml_term aml_lequal(struct aml_term a, struct aml_term b);
struct aml_term aml_lless(struct aml_term a, struct aml_term b);
struct aml_term aml_lgreater(struct aml_term a, struct aml_term b);
struct aml_term aml_return(struct aml_term value);
struct aml_term aml_break(void);
struct aml_term aml_notify(struct aml_term object, struct aml_term value);
/* CreateDWordField / CreateByteField (buffer, index, name) */
struct aml_term aml_create_dword_field(struct aml_term buffer,
				       struct aml_term index, const char *name);
struct aml_term aml_create_byte_field(struct aml_term buffer,
				      struct aml_term index, const char *name);
struct aml_term aml_acquire(const char *mutex, uint16_t timeout);
struct aml_term aml_release(const char *mutex);
/* method (args...): 1-7 arguments; aml_call0 for none. */
#define aml_call(method, ...)                                                  \
	aml_call_n(method, (const struct aml_term[]){ __VA_ARGS__ },           \
		   AML_COUNT(__VA_ARGS__))
struct aml_term aml_call_n(const char *method, const struct aml_term *args,
			   unsigned int n);
struct aml_term aml_call0(const char *method);

/* --- terms: resource templates ------------------------------------------- */

/*
 * ResourceTemplate () { descriptors }: a Buffer ending with an EndTag
 * (checksum 0, which means "treat as correct").
 */
#define AML_RESOURCES(...)                                                     \
	aml_resources_n((const struct aml_term[]){ __VA_ARGS__ },              \
			AML_COUNT(__VA_ARGS__))
struct aml_term aml_resources_n(const struct aml_term *descs, unsigned int n);
struct aml_term aml_memory32_fixed(uint32_t info, uint32_t base, uint32_t len);
/* Interrupt (...) { irqs }: flags from AML_IRQ_*, 1-255 interrupts. */
struct aml_term aml_interrupt(uint32_t flags, const uint32_t *irqs,
			      unsigned int n);
/* IO (Decode16, base, base, 1, len): a fixed range of I/O ports. */
struct aml_term aml_io(uint16_t base, uint8_t len);
/* IRQNoFlags () { irq }: an ISA IRQ (0-15), edge-triggered, active high. */
struct aml_term aml_irq_noflags(unsigned int irq);

/* --- blocks -------------------------------------------------------------- */

void aml_scope_begin(struct aml_buf *b, const char *name);
void aml_device_begin(struct aml_buf *b, const char *name);
void aml_method_begin(struct aml_buf *b, const char *name, unsigned int nargs,
		      enum aml_method_serialize serialized);
void aml_if_begin(struct aml_buf *b, struct aml_term predicate);
void aml_else_begin(struct aml_buf *b); /* right after an If's end */
void aml_while_begin(struct aml_buf *b, struct aml_term predicate);
/* Field (region, access, lock, update) { units } */
void aml_field_begin(struct aml_buf *b, const char *region,
		     enum aml_field_access access, enum aml_field_lock lock,
		     enum aml_field_update update);
void aml_end(struct aml_buf *b);

/* Field elements, inside a Field block. */
void aml_field_unit(struct aml_buf *b, const char *seg, uint32_t bits);
void aml_field_reserved(struct aml_buf *b, uint32_t bits);
/* Offset (byte): a reserved entry up to that byte; never backwards. */
void aml_field_offset(struct aml_buf *b, uint32_t byte);

/* A block around the statement or { compound } that follows. */
#define AML_BLOCK(b, begin)                                                    \
	for (int aml_once_ = ((begin), 1); aml_once_; aml_once_ = 0, aml_end(b))
#define AML_SCOPE(b, name)  AML_BLOCK(b, aml_scope_begin(b, name))
#define AML_DEVICE(b, name) AML_BLOCK(b, aml_device_begin(b, name))
#define AML_METHOD(b, name, nargs, serialized)                                 \
	AML_BLOCK(b, aml_method_begin(b, name, nargs, serialized))
#define AML_IF(b, predicate)	AML_BLOCK(b, aml_if_begin(b, predicate))
#define AML_ELSE(b)		AML_BLOCK(b, aml_else_begin(b))
#define AML_WHILE(b, predicate) AML_BLOCK(b, aml_while_begin(b, predicate))
#define AML_FIELD(b, region, access, lock, update)                             \
	AML_BLOCK(b, aml_field_begin(b, region, access, lock, update))

#endif
