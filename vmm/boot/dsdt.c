// SPDX-License-Identifier: GPL-2.0-only
/*
 * DSDT body: the GED and the CPU hotplug AML (see vmm/boot/dsdt.h for the
 * namespace).  The shape is that of QEMU's "modern CPU hotplug" AML, which
 * Linux's ACPI processor hotplug code is known to drive: the OS learns of a
 * change from Notify(Cxxx, 1) (device check: hot-add) or Notify(Cxxx, 3)
 * (eject request: hot-remove), evaluates _STA and _MAT, and answers through
 * _EJ0 and _OST.  The ASL each block encodes is in the comment above it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dsdt.h"
#include "hotvm/abi.h"

/* ACPI Notify values (ACPI 6.4, table 5.166). */
#define NOTIFY_DEVICE_CHECK  1
#define NOTIFY_EJECT_REQUEST 3

/* The flag fields CPEN..CEJT are bits 0-3 of the flags register. */
_Static_assert(ABI_CPUHP_F_ENABLED == 1 << 0 && ABI_CPUHP_F_INSERT == 1 << 1 &&
		       ABI_CPUHP_F_REMOVE == 1 << 2 &&
		       ABI_CPUHP_F_EJECT == 1 << 3 &&
		       ABI_CPUHP_COMMAND == ABI_CPUHP_FLAGS + 1,
	       "the Field layout below follows hotvm/regs.h");

/* Wait forever: AML's Acquire treats 0xffff as no timeout. */
#define MUTEX_WAIT_FOREVER 0xffff

/* CTFY groups CPUs by 16 so that a notify costs ~n/16 + 16 compares. */
#define CTFY_GROUP_SHIFT 4

#define LAPIC_ENTRY_LEN	 8
#define X2APIC_ENTRY_LEN 16
#define MADT_LAPIC	 0
#define MADT_X2APIC	 9

static void cpu_name(char out[5], unsigned int cpu)
{
	snprintf(out, 5, "C%03X", cpu & 0xfff);
}

static uint32_t apic_id(const struct dsdt_config *cfg, unsigned int cpu)
{
	return cfg->apic_ids ? cfg->apic_ids[cpu] : cpu;
}

/* The xAPIC MADT entry has 8-bit APIC ID and UID fields; 255 is broadcast. */
static int needs_x2apic(uint32_t apic, unsigned int uid)
{
	return apic >= 255 || uid >= 255;
}

/* Store (<int>, <name>) */
static void store_int(struct aml_buf *b, uint64_t v, const char *name)
{
	aml_store(b);
	aml_int(b, v);
	aml_name(b, name);
}

/* Store (ArgN, <name>) */
static void store_arg(struct aml_buf *b, unsigned int arg, const char *name)
{
	aml_store(b);
	aml_arg(b, arg);
	aml_name(b, name);
}

/*
 * OperationRegion (PRST, SystemMemory, ABI_CPUHP_MMIO, ABI_CPUHP_SIZE)
 * Field (PRST, ByteAcc, NoLock, WriteAsZeros) {
 *	Offset (4), CPEN, 1, CINS, 1, CRMV, 1, CEJT, 1, , 4, CCMD, 8
 * }
 * Field (PRST, DWordAcc, NoLock, Preserve) { CSEL, 32, Offset (8), CDAT, 32 }
 *
 * WriteAsZeros: writing one flag bit must not write the others, so that
 * "Store (One, CINS)" clears only the insert event.
 */
static void build_regs(struct aml_buf *b, uint32_t base)
{
	aml_opregion(b, "PRST", AML_SYSTEM_MEMORY, base, ABI_CPUHP_SIZE);

	aml_field_begin(b, "PRST", AML_BYTE_ACC, AML_NOLOCK,
			AML_WRITE_AS_ZEROS);
	aml_field_offset(b, ABI_CPUHP_FLAGS);
	aml_field_unit(b, "CPEN", 1); /* read: enabled */
	aml_field_unit(b, "CINS", 1); /* read: insert pending; 1: clear */
	aml_field_unit(b, "CRMV", 1); /* read: remove pending; 1: clear */
	aml_field_unit(b, "CEJT", 1); /* write 1: eject */
	aml_field_offset(b, ABI_CPUHP_COMMAND);
	aml_field_unit(b, "CCMD", 8 * ABI_CPUHP_COMMAND_WIDTH);
	aml_end(b);

	aml_field_begin(b, "PRST", AML_DWORD_ACC, AML_NOLOCK, AML_PRESERVE);
	aml_field_offset(b, ABI_CPUHP_SELECTOR);
	aml_field_unit(b, "CSEL", 8 * ABI_CPUHP_SELECTOR_WIDTH);
	aml_field_offset(b, ABI_CPUHP_DATA);
	aml_field_unit(b, "CDAT", 8 * ABI_CPUHP_DATA_WIDTH);
	aml_end(b);
}

/*
 * Method (CSTA, 1, Serialized) {
 *	Acquire (CPLK, 0xFFFF)
 *	Store (Arg0, CSEL)
 *	Store (Zero, Local0)
 *	If (LEqual (CPEN, One)) { Store (0x0F, Local0) }
 *	Release (CPLK)
 *	Return (Local0)
 * }
 */
static void build_csta(struct aml_buf *b)
{
	aml_method_begin(b, "CSTA", 1, 1);
	aml_acquire(b, "CPLK", MUTEX_WAIT_FOREVER);
	store_arg(b, 0, "CSEL");
	aml_store(b);
	aml_zero(b);
	aml_local(b, 0);
	aml_if_begin(b);
	aml_lequal(b);
	aml_name(b, "CPEN");
	aml_one(b);
	/* present, enabled, shown in the UI, functioning */
	aml_store(b);
	aml_int(b, 0x0f);
	aml_local(b, 0);
	aml_end(b);
	aml_release(b, "CPLK");
	aml_return(b);
	aml_local(b, 0);
	aml_end(b);
}

/*
 * Method (CEJ0, 1, Serialized) {
 *	Acquire (CPLK, 0xFFFF)
 *	Store (Arg0, CSEL)
 *	Store (One, CEJT)
 *	Release (CPLK)
 * }
 */
static void build_cej0(struct aml_buf *b)
{
	aml_method_begin(b, "CEJ0", 1, 1);
	aml_acquire(b, "CPLK", MUTEX_WAIT_FOREVER);
	store_arg(b, 0, "CSEL");
	store_int(b, 1, "CEJT");
	aml_release(b, "CPLK");
	aml_end(b);
}

/*
 * _OST (Arg0 source event, Arg1 status code, Arg2 buffer) of CPU Arg0 here:
 * Method (COST, 4, Serialized) {
 *	Acquire (CPLK, 0xFFFF)
 *	Store (Arg0, CSEL)
 *	Store (1, CCMD)  Store (Arg1, CDAT)	// OST event
 *	Store (2, CCMD)  Store (Arg2, CDAT)	// OST status
 *	Release (CPLK)
 * }
 */
static void build_cost(struct aml_buf *b)
{
	aml_method_begin(b, "COST", 4, 1);
	aml_acquire(b, "CPLK", MUTEX_WAIT_FOREVER);
	store_arg(b, 0, "CSEL");
	store_int(b, ABI_CPUHP_CMD_OST_EVENT, "CCMD");
	store_arg(b, 1, "CDAT");
	store_int(b, ABI_CPUHP_CMD_OST_STATUS, "CCMD");
	store_arg(b, 2, "CDAT");
	aml_release(b, "CPLK");
	aml_end(b);
}

/*
 * Notify needs the device by name, so a CPU index becomes a name by
 * comparison; two levels keep a scan of many CPUs from going quadratic.
 * Method (CTFY, 2) {
 *	ShiftRight (Arg0, 4, Local0)
 *	If (LEqual (Local0, g)) {
 *		If (LEqual (Arg0, i)) { Notify (Cxxx, Arg1) } ...
 *	} ...
 * }
 */
static void build_ctfy(struct aml_buf *b, unsigned int ncpus)
{
	aml_method_begin(b, "CTFY", 2, 0);
	aml_shift_right(b);
	aml_arg(b, 0);
	aml_int(b, CTFY_GROUP_SHIFT);
	aml_local(b, 0);
	for (unsigned int g = 0; g <= (ncpus - 1) >> CTFY_GROUP_SHIFT; g++) {
		unsigned int first = g << CTFY_GROUP_SHIFT;

		aml_if_begin(b);
		aml_lequal(b);
		aml_local(b, 0);
		aml_int(b, g);
		for (unsigned int i = first;
		     i < ncpus && i < first + (1u << CTFY_GROUP_SHIFT); i++) {
			char name[5];

			cpu_name(name, i);
			aml_if_begin(b);
			aml_lequal(b);
			aml_arg(b, 0);
			aml_int(b, i);
			aml_notify(b);
			aml_name(b, name);
			aml_arg(b, 1);
			aml_end(b);
		}
		aml_end(b);
	}
	aml_end(b);
}

/* If (LEqual (<flag>, One)) { CTFY (Local2, code)  Store (One, <flag>) ... } */
static void scan_event(struct aml_buf *b, const char *flag, unsigned int code)
{
	aml_if_begin(b);
	aml_lequal(b);
	aml_name(b, flag);
	aml_one(b);
	aml_call(b, "CTFY");
	aml_local(b, 2);
	aml_int(b, code);
	store_int(b, 1, flag); /* writing 1 clears the event */
	aml_store(b);
	aml_one(b);
	aml_local(b, 0);
	aml_end(b);
}

/*
 * Method (CSCN, 0, Serialized) {
 *	Acquire (CPLK, 0xFFFF)
 *	Store (Zero, CSEL)	// a valid start: commands need one
 *	Store (One, Local0)
 *	Store (Zero, Local1)
 *	While (LAnd (Local0, LLess (Local1, ncpus))) {
 *		Store (Zero, Local0)
 *		Store (Zero, CCMD)	// select the next CPU with events
 *		Store (CDAT, Local2)	// its index
 *		If (LEqual (CINS, One)) { CTFY (Local2, 1) Store (One, CINS)
 *					  Store (One, Local0) }
 *		If (LEqual (CRMV, One)) { CTFY (Local2, 3) Store (One, CRMV)
 *					  Store (One, Local0) }
 *		Increment (Local1)
 *	}
 *	Release (CPLK)
 * }
 *
 * Each pass drains both events of one CPU, so ncpus passes see every CPU;
 * the bound keeps a misbehaving register block from hanging the OS's
 * notify thread.  Events raised later come with a new GED interrupt.
 */
static void build_cscn(struct aml_buf *b, unsigned int ncpus)
{
	aml_method_begin(b, "CSCN", 0, 1);
	aml_acquire(b, "CPLK", MUTEX_WAIT_FOREVER);
	/*
	 * The register block ignores commands while the selector is out of
	 * range, and whoever accessed it last may have left it so.
	 */
	store_int(b, 0, "CSEL");
	aml_store(b);
	aml_one(b);
	aml_local(b, 0);
	aml_store(b);
	aml_zero(b);
	aml_local(b, 1);

	aml_while_begin(b);
	aml_land(b);
	aml_local(b, 0);
	aml_lless(b);
	aml_local(b, 1);
	aml_int(b, ncpus);

	aml_store(b);
	aml_zero(b);
	aml_local(b, 0);
	store_int(b, ABI_CPUHP_CMD_NEXT_EVENT, "CCMD");
	aml_store(b);
	aml_name(b, "CDAT");
	aml_local(b, 2);
	scan_event(b, "CINS", NOTIFY_DEVICE_CHECK);
	scan_event(b, "CRMV", NOTIFY_EJECT_REQUEST);
	aml_increment(b);
	aml_local(b, 1);
	aml_end(b);

	aml_release(b, "CPLK");
	aml_end(b);
}

/* CreateXField (<buffer>, <index>, <name>) */
static void create_field(struct aml_buf *b, int dword, const char *buffer,
			 unsigned int index, const char *name)
{
	if (dword)
		aml_create_dword_field(b);
	else
		aml_create_byte_field(b);
	aml_name(b, buffer);
	aml_int(b, index);
	aml_name(b, name);
}

/*
 * _MAT of CPU Arg0 with APIC ID Arg1: the MADT entry, Enabled only while
 * _STA says present, so that Linux takes the APIC ID from it on hot-add.
 * Method (CMTL, 2, Serialized) {
 *	Name (LAPI, Buffer (8) { 0x00, 0x08, 0, 0, 0, 0, 0, 0 })
 *	CreateByteField (LAPI, 2, LUID)
 *	CreateByteField (LAPI, 3, LAID)
 *	CreateDWordField (LAPI, 4, LFLG)
 *	Store (Arg0, LUID)
 *	Store (Arg1, LAID)
 *	And (CSTA (Arg0), One, LFLG)
 *	Return (LAPI)
 * }
 * CMTX is the same with the 16-byte Local x2APIC entry (type 9): X2AP,
 * XAID (DWord at 4), XFLG (DWord at 8), XUID (DWord at 12).
 */
static void build_cmat(struct aml_buf *b, int x2apic)
{
	uint8_t entry[X2APIC_ENTRY_LEN] = { 0 };
	const char *buf = x2apic ? "X2AP" : "LAPI";
	const char *uid = x2apic ? "XUID" : "LUID";
	const char *id = x2apic ? "XAID" : "LAID";
	const char *flg = x2apic ? "XFLG" : "LFLG";
	size_t len = x2apic ? X2APIC_ENTRY_LEN : LAPIC_ENTRY_LEN;

	entry[0] = x2apic ? MADT_X2APIC : MADT_LAPIC;
	entry[1] = (uint8_t)len;

	aml_method_begin(b, x2apic ? "CMTX" : "CMTL", 2, 1);
	aml_name_decl(b, buf);
	aml_buffer(b, entry, len);
	if (x2apic) {
		create_field(b, 1, buf, 4, id);
		create_field(b, 1, buf, 8, flg);
		create_field(b, 1, buf, 12, uid);
	} else {
		create_field(b, 0, buf, 2, uid);
		create_field(b, 0, buf, 3, id);
		create_field(b, 1, buf, 4, flg);
	}
	store_arg(b, 0, uid);
	store_arg(b, 1, id);
	aml_and(b);
	aml_call(b, "CSTA");
	aml_arg(b, 0);
	aml_one(b);
	aml_name(b, flg);
	aml_return(b);
	aml_name(b, buf);
	aml_end(b);
}

/*
 * Device (Cxxx) {
 *	Name (_HID, "ACPI0007")
 *	Name (_UID, i)
 *	Method (_STA) { Return (CSTA (i)) }
 *	Method (_MAT) { Return (CMTL (i, apic)) }	// or CMTX
 *	Method (_EJ0, 1) { CEJ0 (i) }			// not on the boot CPU
 *	Method (_OST, 3) { COST (i, Arg0, Arg1, Arg2) }
 * }
 */
static void build_cpu(struct aml_buf *b, const struct dsdt_config *cfg,
		      unsigned int i)
{
	uint32_t apic = apic_id(cfg, i);
	char name[5];

	cpu_name(name, i);
	aml_device_begin(b, name);
	aml_name_decl(b, "_HID");
	aml_string(b, "ACPI0007");
	aml_name_decl(b, "_UID");
	aml_int(b, i);

	aml_method_begin(b, "_STA", 0, 0);
	aml_return(b);
	aml_call(b, "CSTA");
	aml_int(b, i);
	aml_end(b);

	aml_method_begin(b, "_MAT", 0, 0);
	aml_return(b);
	aml_call(b, needs_x2apic(apic, i) ? "CMTX" : "CMTL");
	aml_int(b, i);
	aml_int(b, apic);
	aml_end(b);

	/* The VMM never ejects the boot CPU; don't offer it to the OS. */
	if (i) {
		aml_method_begin(b, "_EJ0", 1, 0);
		aml_call(b, "CEJ0");
		aml_int(b, i);
		aml_end(b);
	}

	aml_method_begin(b, "_OST", 3, 0);
	aml_call(b, "COST");
	aml_int(b, i);
	aml_arg(b, 0);
	aml_arg(b, 1);
	aml_arg(b, 2);
	aml_end(b);
	aml_end(b);
}

/*
 * Device (CPUS) {
 *	Name (_HID, "ACPI0010")
 *	Name (_CID, EISAID ("PNP0A05"))
 *	<register block>  Mutex (CPLK, 0)  <methods>  <CPU devices>
 * }
 */
static void build_cpus(struct aml_buf *b, const struct dsdt_config *cfg)
{
	aml_device_begin(b, "CPUS");
	aml_name_decl(b, "_HID");
	aml_string(b, "ACPI0010"); /* processor container */
	aml_name_decl(b, "_CID");
	aml_eisaid(b, "PNP0A05"); /* generic container */
	build_regs(b, cfg->cpuhp_mmio ? cfg->cpuhp_mmio : ABI_CPUHP_MMIO);
	aml_mutex(b, "CPLK", 0);
	build_csta(b);
	build_cej0(b);
	build_cost(b);
	build_ctfy(b, cfg->ncpus);
	build_cscn(b, cfg->ncpus);
	build_cmat(b, 0);
	build_cmat(b, 1);
	for (unsigned int i = 0; i < cfg->ncpus; i++)
		build_cpu(b, cfg, i);
	aml_end(b);
}

/*
 * Device (GED_) {
 *	Name (_HID, "ACPI0013")
 *	Name (_UID, Zero)
 *	Name (_CRS, ResourceTemplate () {
 *		Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive)
 *			{ ABI_GED_IRQ }
 *	})
 *	OperationRegion (EREG, SystemMemory, ABI_GED_MMIO, ABI_GED_SIZE)
 *	Field (EREG, DWordAcc, NoLock, WriteAsZeros) { ESEL, 32 }
 *	Method (_EVT, 1, Serialized) {
 *		Store (ESEL, Local0)	// reading clears the pending events
 *		If (And (Local0, ABI_GED_EVT_CPU)) { \_SB.CPUS.CSCN () }
 *	}
 * }
 * Linux's evged calls _EVT with the GSI; one interrupt, so Arg0 is unused.
 */
static void build_ged(struct aml_buf *b, const struct dsdt_config *cfg)
{
	uint32_t base = cfg->ged_mmio ? cfg->ged_mmio : ABI_GED_MMIO;
	uint32_t irq = cfg->ged_irq ? cfg->ged_irq : ABI_GED_IRQ;

	aml_device_begin(b, "GED_");
	aml_name_decl(b, "_HID");
	aml_string(b, "ACPI0013");
	aml_name_decl(b, "_UID");
	aml_zero(b);
	/* Linux's evged rejects any resource but interrupts here. */
	aml_name_decl(b, "_CRS");
	aml_restmpl_begin(b);
	aml_interrupt(b, AML_IRQ_CONSUMER | AML_IRQ_EDGE, &irq, 1);
	aml_restmpl_end(b);

	aml_opregion(b, "EREG", AML_SYSTEM_MEMORY, base, ABI_GED_SIZE);
	aml_field_begin(b, "EREG", AML_DWORD_ACC, AML_NOLOCK,
			AML_WRITE_AS_ZEROS);
	aml_field_offset(b, ABI_GED_EVENT);
	aml_field_unit(b, "ESEL", 8 * ABI_GED_EVENT_WIDTH);
	aml_end(b);

	aml_method_begin(b, "_EVT", 1, 1);
	aml_store(b);
	aml_name(b, "ESEL");
	aml_local(b, 0);
	aml_if_begin(b);
	aml_and(b);
	aml_local(b, 0);
	aml_int(b, ABI_GED_EVT_CPU);
	aml_no_target(b);
	aml_call(b, "\\_SB.CPUS.CSCN");
	aml_end(b);
	aml_end(b);
	aml_end(b);
}

/*
 * Device (COM1) {
 *	Name (_HID, EISAID ("PNP0501"))
 *	Name (_UID, Zero)
 *	Name (_CRS, ResourceTemplate () {
 *		IO (Decode16, ABI_COM1_PORT, ABI_COM1_PORT, 1, 8)
 *		IRQNoFlags () { ABI_COM1_IRQ }
 *	})
 * }
 * With a hardware-reduced FADT Linux assumes no legacy devices: only a
 * namespace device gives the UART its interrupt, without which user space
 * output on ttyS0 never drains.
 */
static void build_com1(struct aml_buf *b)
{
	aml_device_begin(b, "COM1");
	aml_name_decl(b, "_HID");
	aml_eisaid(b, "PNP0501");
	aml_name_decl(b, "_UID");
	aml_zero(b);
	aml_name_decl(b, "_CRS");
	aml_restmpl_begin(b);
	aml_io(b, ABI_COM1_PORT, 8);
	aml_irq_noflags(b, ABI_COM1_IRQ);
	aml_restmpl_end(b);
	aml_end(b);
}

/*
 * Device (MRES) {
 *	Name (_HID, EISAID ("PNP0C02"))
 *	Name (_UID, Zero)
 *	Name (_CRS, ResourceTemplate () {
 *		Memory32Fixed (ReadWrite, ged, ABI_GED_SIZE)
 *		Memory32Fixed (ReadWrite, cpuhp, ABI_CPUHP_SIZE)
 *	})
 * }
 * The GED's _CRS may hold only its interrupt, so its window and the
 * register block's are claimed here, keeping the OS from placing anything
 * over them.
 */
static void build_mres(struct aml_buf *b, const struct dsdt_config *cfg)
{
	aml_device_begin(b, "MRES");
	aml_name_decl(b, "_HID");
	aml_eisaid(b, "PNP0C02");
	aml_name_decl(b, "_UID");
	aml_zero(b);
	aml_name_decl(b, "_CRS");
	aml_restmpl_begin(b);
	aml_memory32_fixed(b, AML_MEM_READ_WRITE,
			   cfg->ged_mmio ? cfg->ged_mmio : ABI_GED_MMIO,
			   ABI_GED_SIZE);
	aml_memory32_fixed(b, AML_MEM_READ_WRITE,
			   cfg->cpuhp_mmio ? cfg->cpuhp_mmio : ABI_CPUHP_MMIO,
			   ABI_CPUHP_SIZE);
	aml_restmpl_end(b);
	aml_end(b);
}

int dsdt_build_aml(struct aml_buf *b, const struct dsdt_config *cfg)
{
	if (!cfg->ncpus || cfg->ncpus > DSDT_MAX_CPUS)
		return -EINVAL;

	/* Scope (\_SB) { CPUS, GED_, COM1, MRES } */
	aml_scope_begin(b, "\\_SB");
	build_cpus(b, cfg);
	build_ged(b, cfg);
	build_com1(b);
	build_mres(b, cfg);
	aml_end(b);
	return aml_finish(b);
}

long dsdt_build(void *buf, size_t size, const struct dsdt_config *cfg)
{
	struct aml_buf b = { .max = size };
	int err = dsdt_build_aml(&b, cfg);
	long len = (long)b.len;

	if (!err)
		memcpy(buf, b.data, b.len);
	aml_free(&b);
	return err ? err : len;
}
