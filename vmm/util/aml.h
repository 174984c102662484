/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small AML byte-code builder (ACPI 6.x, section 20 "ACPI Machine Language
 * Specification"): just what hotvm's DSDT needs, each encoder exact.
 *
 * AML is prefix notation, so most calls emit one opcode and the caller then
 * emits the operands in order, mirroring the ASL:
 *
 *	Store (Arg0, CSEL)  ->  aml_store(b); aml_arg(b, 0); aml_name(b, "CSEL");
 *
 * Objects with a PkgLength (Scope, Device, Method, If, Else, While, Field,
 * Buffer, Package) are opened with aml_*_begin() and closed with aml_end();
 * the length is only known at the end, so aml_end() shifts the body to make
 * room for it.
 *
 * Errors are sticky: the first one (-ENOMEM, -E2BIG, -EINVAL) is kept, every
 * later call is a no-op, and aml_finish() reports it once.  Callers therefore
 * check only at the end.
 */
#ifndef HOTVM_AML_H
#define HOTVM_AML_H

#include <stddef.h>
#include <stdint.h>

#define AML_MAX_DEPTH  16
#define AML_PKGLEN_MAX ((1u << 28) - 1) /* 4-byte PkgLength: 28 bits */
#define AML_MAX_SEGS   255		/* MultiNamePrefix SegCount */

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

/* Extended Interrupt Descriptor flags (ACPI 6.4, 6.4.3.6). */
#define AML_IRQ_CONSUMER   (1u << 0) /* else producer */
#define AML_IRQ_EDGE	   (1u << 1) /* else level */
#define AML_IRQ_ACTIVE_LOW (1u << 2) /* else active high */
#define AML_IRQ_SHARED	   (1u << 3) /* else exclusive */
#define AML_IRQ_WAKE	   (1u << 4)

/* Memory32Fixed information byte. */
#define AML_MEM_READ_WRITE 1u
#define AML_MEM_READ_ONLY  0u

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
/* 0 if every call so far succeeded and every begin has its end. */
int aml_finish(struct aml_buf *b);

/* Raw bytes. */
void aml_byte(struct aml_buf *b, uint8_t v);
void aml_bytes(struct aml_buf *b, const void *p, size_t n);
void aml_word(struct aml_buf *b, uint16_t v);
void aml_dword(struct aml_buf *b, uint32_t v);

/*
 * PkgLength for a value (the value as stored: for objects it counts the
 * PkgLength bytes themselves, for field units it is a bit count).  Returns
 * the number of bytes (1-4) written to out, or -E2BIG.
 */
int aml_pkglen_encode(uint8_t out[4], uint32_t value);

/*
 * NameString from ASL spelling: optional "\" or "^"..., then NameSegs of 1-4
 * characters separated by '.', short ones padded with '_' as ASL does
 * ("GED" is "GED_").  "\" alone is the root.
 */
void aml_name(struct aml_buf *b, const char *path);

/* Data objects. */
void aml_zero(struct aml_buf *b);
void aml_one(struct aml_buf *b);
void aml_ones(struct aml_buf *b);
/* The shortest encoding: Zero, One, or Byte/Word/DWord/QWord prefix. */
void aml_int(struct aml_buf *b, uint64_t v);
void aml_string(struct aml_buf *b, const char *s);
/* Buffer (n) { p[0..n) } */
void aml_buffer(struct aml_buf *b, const void *p, size_t n);
/* EISAID ("PNP0A05") as the DWORD it compresses to. */
void aml_eisaid(struct aml_buf *b, const char *id);
int aml_eisaid_value(const char *id, uint32_t *out);
void aml_local(struct aml_buf *b, unsigned int n); /* Local0-7 */
void aml_arg(struct aml_buf *b, unsigned int n);   /* Arg0-6 */
/* NullName as an unused Target operand. */
void aml_no_target(struct aml_buf *b);

/* Named objects and blocks; close each begin with aml_end(). */
void aml_scope_begin(struct aml_buf *b, const char *name);
void aml_device_begin(struct aml_buf *b, const char *name);
void aml_method_begin(struct aml_buf *b, const char *name, unsigned int nargs,
		      int serialized);
void aml_if_begin(struct aml_buf *b);	 /* then: predicate, body */
void aml_else_begin(struct aml_buf *b);	 /* right after an If's aml_end() */
void aml_while_begin(struct aml_buf *b); /* then: predicate, body */
void aml_package_begin(struct aml_buf *b, uint8_t nelems);
/* Buffer whose size is known only at the end (e.g. several descriptors). */
void aml_buffer_begin(struct aml_buf *b);
void aml_end(struct aml_buf *b);

/* Name (name, <one data object emitted next>) */
void aml_name_decl(struct aml_buf *b, const char *name);
void aml_mutex(struct aml_buf *b, const char *name, uint8_t sync_level);
void aml_opregion(struct aml_buf *b, const char *name,
		  enum aml_region_space space, uint64_t offset, uint64_t len);

/* Field (region, access, lock, update) { ... } */
void aml_field_begin(struct aml_buf *b, const char *region,
		     enum aml_field_access access, enum aml_field_lock lock,
		     enum aml_field_update update);
void aml_field_unit(struct aml_buf *b, const char *seg, uint32_t bits);
void aml_field_reserved(struct aml_buf *b, uint32_t bits);
/* Offset (byte): a reserved entry up to that byte; never backwards. */
void aml_field_offset(struct aml_buf *b, uint32_t byte);
/* Fields close with aml_end() too. */

/* Statements and expressions: opcode only, operands follow. */
void aml_store(struct aml_buf *b);	/* source, target */
void aml_add(struct aml_buf *b);	/* a, b, target */
void aml_subtract(struct aml_buf *b);	/* a, b, target */
void aml_increment(struct aml_buf *b);	/* target */
void aml_decrement(struct aml_buf *b);	/* target */
void aml_and(struct aml_buf *b);	/* a, b, target */
void aml_or(struct aml_buf *b);		/* a, b, target */
void aml_shift_left(struct aml_buf *b); /* a, count, target */
void aml_shift_right(struct aml_buf *b);
void aml_land(struct aml_buf *b); /* a, b */
void aml_lor(struct aml_buf *b);
void aml_lnot(struct aml_buf *b); /* a */
void aml_lequal(struct aml_buf *b);
void aml_lless(struct aml_buf *b);
void aml_lgreater(struct aml_buf *b);
void aml_return(struct aml_buf *b); /* value */
void aml_break(struct aml_buf *b);
void aml_notify(struct aml_buf *b); /* object, value */
/* CreateDWordField / CreateByteField (buffer, index, name) */
void aml_create_dword_field(struct aml_buf *b);
void aml_create_byte_field(struct aml_buf *b);
void aml_acquire(struct aml_buf *b, const char *mutex, uint16_t timeout);
void aml_release(struct aml_buf *b, const char *mutex);
/* A method call is its NameString followed by the arguments. */
void aml_call(struct aml_buf *b, const char *method);

/*
 * ResourceTemplate () { ... }: a Buffer ending with an EndTag (checksum 0,
 * which means "treat as correct").
 */
void aml_restmpl_begin(struct aml_buf *b);
void aml_restmpl_end(struct aml_buf *b);
void aml_memory32_fixed(struct aml_buf *b, uint32_t info, uint32_t base,
			uint32_t len);
/* Interrupt (...) { irqs }: flags from AML_IRQ_*, 1-255 interrupts. */
void aml_interrupt(struct aml_buf *b, uint32_t flags, const uint32_t *irqs,
		   unsigned int n);
/* IO (Decode16, base, base, 1, len): a fixed range of I/O ports. */
void aml_io(struct aml_buf *b, uint16_t base, uint8_t len);
/* IRQNoFlags () { irq }: an ISA IRQ (0-15), edge-triggered, active high. */
void aml_irq_noflags(struct aml_buf *b, unsigned int irq);

#endif
