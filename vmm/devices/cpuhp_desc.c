// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CPU-hotplug register block as a device (device.h): the model in
 * cpuhp_regs.c on the MMIO bus, and how the guest's firmware tables
 * describe it: the DSDT's processor container with the methods that drive
 * the block, one Device per possible CPU, and the FDT node; from the same
 * constants (hotvm/regs.h) as the model.
 *
 * The shape is that of QEMU's "modern CPU hotplug" AML, which Linux's ACPI
 * processor hotplug code is known to drive: the OS learns of a change from
 * Notify(Cxxx, 1) (device check: hot-add) or Notify(Cxxx, 3) (eject
 * request: hot-remove), evaluates _STA and _MAT, and answers through _EJ0
 * and _OST.
 */
#include <errno.h>
#include <stdio.h>

#include <libfdt.h>

#include "aml.h"
#include "cpuhp_regs.h"
#include "hotvm/regs.h"
#include "hotvm/ring.h"
#include "vm.h"

/* What the AML is built for. */
struct hpregs_aml {
	unsigned int ncpus;	  /* possible CPUs, 1..HPREGS_AML_MAX_CPUS */
	const uint32_t *apic_ids; /* ncpus entries; NULL: CPU n has APIC ID n */
	uint32_t base;		  /* the block's MMIO address */
};

/* ACPI Notify values (ACPI 6.4, table 5.166). */
#define NOTIFY_DEVICE_CHECK  1
#define NOTIFY_EJECT_REQUEST 3

/* CTFY groups CPUs by 16 so that a notify costs ~n/16 + 16 compares. */
#define CTFY_GROUP_SHIFT 4

#define LAPIC_ENTRY_LEN	 8
#define X2APIC_ENTRY_LEN 16
#define MADT_LAPIC	 0
#define MADT_X2APIC	 9

/* The flag fields CPEN..CEJT are bits 0-3 of the flags register. */
_Static_assert(ABI_CPUHP_F_ENABLED == 1 << 0 && ABI_CPUHP_F_INSERT == 1 << 1 &&
		       ABI_CPUHP_F_REMOVE == 1 << 2 &&
		       ABI_CPUHP_F_EJECT == 1 << 3,
	       "the flag fields follow hotvm/regs.h");

static void cpu_name(char out[5], unsigned int cpu)
{
	snprintf(out, 5, "C%03X", cpu & 0xfff);
}

static uint32_t apic_id(const struct hpregs_aml *cfg, unsigned int cpu)
{
	return cfg->apic_ids ? cfg->apic_ids[cpu] : cpu;
}

/* The xAPIC MADT entry has 8-bit APIC ID and UID fields; 255 is broadcast. */
static int needs_x2apic(uint32_t apic, unsigned int uid)
{
	return apic >= 255 || uid >= 255;
}

/*
 * WriteAsZeros: writing one flag bit must not write the others, so that
 * "Store (One, CINS)" clears only the insert event.
 */
static void build_regs(struct aml_buf *b, uint32_t base)
{
	aml_emit(b,
		 aml_opregion("PRST", AML_SYSTEM_MEMORY, base, ABI_CPUHP_SIZE));
	AML_FIELD(b, "PRST", AML_BYTE_ACC, AML_NOLOCK, AML_WRITE_AS_ZEROS) {
		aml_field_offset(b, ABI_CPUHP_FLAGS);
		aml_field_unit(b, "CPEN", 1); /* read: enabled */
		aml_field_unit(b, "CINS", 1); /* insert pending; 1: clear */
		aml_field_unit(b, "CRMV", 1); /* remove pending; 1: clear */
		aml_field_unit(b, "CEJT", 1); /* write 1: eject */
		aml_field_offset(b, ABI_CPUHP_COMMAND);
		aml_field_unit(b, "CCMD", 8 * ABI_CPUHP_COMMAND_WIDTH);
	}
	AML_FIELD(b, "PRST", AML_DWORD_ACC, AML_NOLOCK, AML_PRESERVE) {
		aml_field_offset(b, ABI_CPUHP_SELECTOR);
		aml_field_unit(b, "CSEL", 8 * ABI_CPUHP_SELECTOR_WIDTH);
		aml_field_offset(b, ABI_CPUHP_DATA);
		aml_field_unit(b, "CDAT", 8 * ABI_CPUHP_DATA_WIDTH);
	}
}

/* Every select-then-access sequence runs under CPLK. */
static struct aml_term lock(void)
{
	return aml_acquire("CPLK", AML_WAIT_FOREVER);
}

static struct aml_term select_arg0(void)
{
	return aml_store(aml_arg(0), aml_name("CSEL"));
}

/* _STA of CPU Arg0: present, enabled, shown, functioning if enabled. */
static void build_csta(struct aml_buf *b)
{
	AML_METHOD(b, "CSTA", 1, AML_SERIALIZED) {
		aml_emit(b, lock());
		aml_emit(b, select_arg0());
		aml_emit(b, aml_store(aml_zero(), aml_local(0)));
		AML_IF(b, aml_lequal(aml_name("CPEN"), aml_one())) {
			aml_emit(b, aml_store(aml_int(0x0f), aml_local(0)));
		}
		aml_emit(b, aml_release("CPLK"));
		aml_emit(b, aml_return(aml_local(0)));
	}
}

static void build_cej0(struct aml_buf *b)
{
	AML_METHOD(b, "CEJ0", 1, AML_SERIALIZED) {
		aml_emit(b, lock());
		aml_emit(b, select_arg0());
		aml_emit(b, aml_store(aml_one(), aml_name("CEJT")));
		aml_emit(b, aml_release("CPLK"));
	}
}

/* _OST (Arg1 source event, Arg2 status code) of CPU Arg0, to the VMM. */
static void build_cost(struct aml_buf *b)
{
	AML_METHOD(b, "COST", 4, AML_SERIALIZED) {
		aml_emit(b, lock());
		aml_emit(b, select_arg0());
		aml_emit(b, aml_store(aml_int(ABI_CPUHP_CMD_OST_EVENT),
				      aml_name("CCMD")));
		aml_emit(b, aml_store(aml_arg(1), aml_name("CDAT")));
		aml_emit(b, aml_store(aml_int(ABI_CPUHP_CMD_OST_STATUS),
				      aml_name("CCMD")));
		aml_emit(b, aml_store(aml_arg(2), aml_name("CDAT")));
		aml_emit(b, aml_release("CPLK"));
	}
}

/*
 * Notify (CPU Arg0, Arg1).  Notify needs the device by name, so an index
 * becomes a name by comparison; two levels (group, then CPU) keep a scan
 * of many CPUs from going quadratic.
 */
static void build_ctfy(struct aml_buf *b, unsigned int ncpus)
{
	AML_METHOD(b, "CTFY", 2, AML_NOTSERIALIZED) {
		aml_emit(b,
			 aml_shift_right(aml_arg(0), aml_int(CTFY_GROUP_SHIFT),
					 aml_local(0)));
		for (unsigned int g = 0; g <= (ncpus - 1) >> CTFY_GROUP_SHIFT;
		     g++) {
			unsigned int first = g << CTFY_GROUP_SHIFT;
			unsigned int end = first + (1u << CTFY_GROUP_SHIFT);

			AML_IF(b, aml_lequal(aml_local(0), aml_int(g))) {
				for (unsigned int i = first;
				     i < ncpus && i < end; i++) {
					char name[5];

					cpu_name(name, i);
					AML_IF(b, aml_lequal(aml_arg(0),
							     aml_int(i))) {
						aml_emit(b,
							 aml_notify(
								 aml_name(name),
								 aml_arg(1)));
					}
				}
			}
		}
	}
}

/* One pending event: tell the OS, clear it (writing 1), scan on. */
static void scan_event(struct aml_buf *b, const char *flag, unsigned int code)
{
	AML_IF(b, aml_lequal(aml_name(flag), aml_one())) {
		aml_emit(b, aml_call("CTFY", aml_local(2), aml_int(code)));
		aml_emit(b, aml_store(aml_one(), aml_name(flag)));
		aml_emit(b, aml_store(aml_one(), aml_local(0)));
	}
}

/*
 * Drains the insert and remove events, CPU by CPU (command 0 selects the
 * next CPU with events).  Each pass drains both events of one CPU, so
 * ncpus passes see every CPU; the bound keeps a misbehaving register block
 * from hanging the OS's notify thread.  Events raised later come with a
 * new GED interrupt.
 */
static void build_cscn(struct aml_buf *b, unsigned int ncpus)
{
	AML_METHOD(b, "CSCN", 0, AML_SERIALIZED) {
		aml_emit(b, lock());
		/*
		 * The register block ignores commands while the selector is
		 * out of range, and whoever accessed it last may have left it
		 * so.
		 */
		aml_emit(b, aml_store(aml_zero(), aml_name("CSEL")));
		aml_emit(b, aml_store(aml_one(), aml_local(0)));
		aml_emit(b, aml_store(aml_zero(), aml_local(1)));
		AML_WHILE(b,
			  aml_land(aml_local(0),
				   aml_lless(aml_local(1), aml_int(ncpus)))) {
			aml_emit(b, aml_store(aml_zero(), aml_local(0)));
			aml_emit(b, aml_store(aml_int(ABI_CPUHP_CMD_NEXT_EVENT),
					      aml_name("CCMD")));
			aml_emit(b, aml_store(aml_name("CDAT"), aml_local(2)));
			scan_event(b, "CINS", NOTIFY_DEVICE_CHECK);
			scan_event(b, "CRMV", NOTIFY_EJECT_REQUEST);
			aml_emit(b, aml_increment(aml_local(1)));
		}
		aml_emit(b, aml_release("CPLK"));
	}
}

/*
 * _MAT of CPU Arg0 with APIC ID Arg1: the MADT entry, Enabled only while
 * _STA says present, so that Linux takes the APIC ID from it on hot-add.
 * CMTL: the 8-byte Local APIC entry (byte UID at 2, byte ID at 3, flags
 * at 4); CMTX: the 16-byte Local x2APIC entry (ID at 4, flags at 8, UID
 * at 12, all DWords).
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
	AML_METHOD(b, x2apic ? "CMTX" : "CMTL", 2, AML_SERIALIZED) {
		aml_emit(b, aml_name_decl(buf, aml_buffer(entry, len)));
		if (x2apic) {
			aml_emit(b, aml_create_dword_field(aml_name(buf),
							   aml_int(4), id));
			aml_emit(b, aml_create_dword_field(aml_name(buf),
							   aml_int(8), flg));
			aml_emit(b, aml_create_dword_field(aml_name(buf),
							   aml_int(12), uid));
		} else {
			aml_emit(b, aml_create_byte_field(aml_name(buf),
							  aml_int(2), uid));
			aml_emit(b, aml_create_byte_field(aml_name(buf),
							  aml_int(3), id));
			aml_emit(b, aml_create_dword_field(aml_name(buf),
							   aml_int(4), flg));
		}
		aml_emit(b, aml_store(aml_arg(0), aml_name(uid)));
		aml_emit(b, aml_store(aml_arg(1), aml_name(id)));
		aml_emit(b, aml_and(aml_call("CSTA", aml_arg(0)), aml_one(),
				    aml_name(flg)));
		aml_emit(b, aml_return(aml_name(buf)));
	}
}

static void build_cpu(struct aml_buf *b, const struct hpregs_aml *cfg,
		      unsigned int i)
{
	uint32_t apic = apic_id(cfg, i);
	char name[5];

	cpu_name(name, i);
	AML_DEVICE(b, name) {
		aml_emit(b, aml_name_decl("_HID", aml_string("ACPI0007")));
		aml_emit(b, aml_name_decl("_UID", aml_int(i)));
		AML_METHOD(b, "_STA", 0, AML_NOTSERIALIZED) {
			aml_emit(b, aml_return(aml_call("CSTA", aml_int(i))));
		}
		AML_METHOD(b, "_MAT", 0, AML_NOTSERIALIZED) {
			aml_emit(b, aml_return(aml_call(
					    needs_x2apic(apic, i) ? "CMTX"
								  : "CMTL",
					    aml_int(i), aml_int(apic))));
		}
		/* The VMM never ejects the boot CPU; don't offer it. */
		if (i) {
			AML_METHOD(b, "_EJ0", 1, AML_NOTSERIALIZED) {
				aml_emit(b, aml_call("CEJ0", aml_int(i)));
			}
		}
		AML_METHOD(b, "_OST", 3, AML_NOTSERIALIZED) {
			aml_emit(b, aml_call("COST", aml_int(i), aml_arg(0),
					     aml_arg(1), aml_arg(2)));
		}
	}
}

static int build_cpus(struct aml_buf *b, const struct hpregs_aml *cfg)
{
	if (!cfg->ncpus || cfg->ncpus > HPREGS_AML_MAX_CPUS)
		return -EINVAL;
	AML_DEVICE(b, "CPUS") {
		/* A processor container, also a generic one. */
		aml_emit(b, aml_name_decl("_HID", aml_string("ACPI0010")));
		aml_emit(b, aml_name_decl("_CID", aml_eisaid("PNP0A05")));
		build_regs(b, cfg->base);
		aml_emit(b, aml_mutex("CPLK", 0));
		build_csta(b);
		build_cej0(b);
		build_cost(b);
		build_ctfy(b, cfg->ncpus);
		build_cscn(b, cfg->ncpus);
		build_cmat(b, 0);
		build_cmat(b, 1);
		for (unsigned int i = 0; i < cfg->ncpus; i++)
			build_cpu(b, cfg, i);
	}
	return 0;
}

static int hpregs_aml(struct aml_buf *b, const struct dev_instance *d,
		      const struct dev_table_env *env)
{
	return build_cpus(b, &(struct hpregs_aml){
				     .ncpus = env->ncpus,
				     .apic_ids = env->apic_ids,
				     .base = (uint32_t)d->base,
			     });
}

/* The node the tiny guest looks for. */
static int hpregs_fdt(void *fdt, const struct dev_instance *d)
{
	const fdt64_t reg[] = { cpu_to_fdt64(d->base),
				cpu_to_fdt64(ABI_CPUHP_SIZE) };
	const fdt64_t ring[] = { cpu_to_fdt64(ABI_RING_PADDR),
				 cpu_to_fdt64(ABI_RING_SIZE) };
	char name[32];
	int ret;

	snprintf(name, sizeof(name), "cpuhp@%llx", (unsigned long long)d->base);
	ret = fdt_begin_node(fdt, name);
	if (!ret)
		ret = fdt_property_string(fdt, "compatible",
					  "hotvm,cpuhp-regs");
	if (!ret)
		ret = fdt_property(fdt, "reg", reg, sizeof(reg));
	/* The tiny guest's report ring (hotvm/ring.h): QEMU has none. */
	if (!ret)
		ret = fdt_property(fdt, ABI_RING_FDT_PROP, ring, sizeof(ring));
	if (!ret)
		ret = fdt_property_u32(fdt, ABI_RING_FDT_DOORBELL,
				       ABI_RING_DOORBELL_PORT);
	if (!ret)
		ret = fdt_end_node(fdt);
	return ret;
}

/* The controller attaches its callbacks later (hpregs_attach()). */
static int hpregs_setup(void *state, const struct dev_instance *d,
			const struct dev_env *env)
{
	struct vm *vm = env->vm;
	bool ring =
		vm && vm->ram && vm->ram_size >= ABI_RING_PADDR + ABI_RING_SIZE;
	int ret = hpregs_init(
		state,
		&(struct hpregs_config){
			.max_cpus = env->max_cpus,
			.ring_mem = ring ? vm->ram + ABI_RING_PADDR : NULL,
		});

	if (ret)
		return ret;
	ret = dev_registered(d, hpregs_register(state, env->mmio, d->base));
	if (!ret && env->io)
		ret = dev_registered(d,
				     hpregs_register_doorbell(state, env->io));
	if (ret)
		hpregs_destroy(state);
	return ret;
}

static void hpregs_teardown(void *state)
{
	hpregs_destroy(state);
}

const struct dev_desc hpregs_desc = {
	.name = "cpuhp-regs",
	.bus = DEV_BUS_MMIO,
	.size = ABI_CPUHP_SIZE,
	.state_size = sizeof(struct hpregs),
	.setup = hpregs_setup,
	.teardown = hpregs_teardown,
	.aml = hpregs_aml,
	.fdt = hpregs_fdt,
};
