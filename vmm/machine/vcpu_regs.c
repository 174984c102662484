// SPDX-License-Identifier: GPL-2.0-only
/*
 * A vCPU's architectural state as the host sets it: at creation (its
 * CPUID, boot MSRs, APIC mode, the LAPIC as created), when a parked vCPU
 * starts again, and the entry state of each boot protocol (PVH's 32-bit
 * protected mode, Linux's 64-bit long mode).  The threads that run it are
 * vcpu.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/kvm.h>

#include "cpuid.h"
#include "log.h"
#include "msr.h"
#include "vcpu.h"
#include "vm.h"

#define X86_CR0_PE   (1ULL << 0)
#define X86_CR0_ET   (1ULL << 4)
#define X86_CR0_PG   (1ULL << 31)
#define X86_CR4_PAE  (1ULL << 5)
#define X86_EFER_LME (1ULL << 8)
#define X86_EFER_LMA (1ULL << 10)

/*
 * The policy is cpuid.c's; this is the vCPU's part: which APIC ID, and
 * whether its in-kernel LAPIC has the TSC-deadline mode.
 */
static int vcpu_set_cpuid(struct vcpu *vcpu)
{
	struct cpuid_vcpu v = {
		.apic_id = vcpu->apic_id,
		.topo = CPUID_TOPOLOGY_SOCKETS,
		.tsc_deadline = ioctl(vcpu->vm->kvm_fd, KVM_CHECK_EXTENSION,
				      KVM_CAP_TSC_DEADLINE_TIMER) > 0,
	};
	struct kvm_cpuid2 *c = cpuid_build(vcpu->vm->cpuid, &v);
	int ret = 0;

	if (!c)
		return -ENOMEM;
	if (ioctl(vcpu->fd, KVM_SET_CPUID2, c))
		ret = -errno;
	free(c);
	return ret;
}

#define MSR_IA32_APICBASE 0x1b
#define APICBASE_EXTD	  (1ULL << 10) /* x2APIC mode */
#define APICBASE_EN	  (1ULL << 11)

/*
 * A VM with APIC IDs above 254 (vm.c enables 32-bit x2APIC IDs for it,
 * the MADT gives them x2APIC entries) hands every CPU over in x2APIC
 * mode, as firmware must when some APIC ID does not fit in 8 bits.  A
 * CPU left in xAPIC mode has an 8-bit ID: KVM routes an IPI to APIC ID n
 * to whichever vCPU with ID n mod 256 it meets first, so INIT/SIPI for
 * CPU 1 could start CPU 257 instead, and ID 255 would be the broadcast.
 */
static int vcpu_set_apic_mode(struct vcpu *vcpu)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = { .hdr.nmsrs = 1, .e.index = MSR_IA32_APICBASE };

	if (vcpu->max_cpus <= 255)
		return 0;
	if (ioctl(vcpu->fd, KVM_GET_MSRS, &m) != 1)
		return -EIO;
	m.e.data |= APICBASE_EN | APICBASE_EXTD;
	if (ioctl(vcpu->fd, KVM_SET_MSRS, &m) != 1)
		return -EIO;
	return 0;
}

/* After the CPUID: KVM checks some MSR writes against it. */
static int vcpu_set_msrs(struct vcpu *vcpu)
{
	enum cpuid_vendor vendor = cpuid_vendor(vcpu->vm->cpuid);
	uint32_t failed = 0;
	int ret = msr_set_boot(vcpu->fd, vendor, &failed);

	if (ret) {
		pr_err("cannot set vCPU %u's MSR 0x%x: %s", vcpu->id, failed,
		       strerror(-ret));
		return ret;
	}
	ret = vcpu_set_apic_mode(vcpu);
	if (ret)
		pr_err("cannot put vCPU %u's LAPIC in x2APIC mode (its APIC ID "
		       "needs it with %u possible CPUs)",
		       vcpu->id, vcpu->max_cpus);
	return ret;
}

/*
 * Writes the LAPIC state back unchanged.  KVM routes the guest's IPIs
 * (INIT/SIPI too) through a map of APIC IDs that it rebuilds when a LAPIC
 * changes; a vCPU created after the others have run is not in it until
 * then (seen on this machine's /dev/kvm: a hot-added AP never got its
 * INIT), and KVM_SET_LAPIC rebuilds it.
 */
static int vcpu_refresh_lapic(struct vcpu *vcpu)
{
	struct kvm_lapic_state st;

	if (ioctl(vcpu->fd, KVM_GET_LAPIC, &st) ||
	    ioctl(vcpu->fd, KVM_SET_LAPIC, &st))
		return -errno;
	/* As created: what vcpu_unpark() gives a vCPU that starts again. */
	vcpu->lapic0 = malloc(sizeof(*vcpu->lapic0));
	if (!vcpu->lapic0)
		return -ENOMEM;
	*vcpu->lapic0 = st;
	return 0;
}

int vcpu_init_regs(struct vcpu *vcpu)
{
	int ret = vcpu_set_cpuid(vcpu);

	if (ret) {
		pr_err("cannot set vCPU %u's CPUID: %s", vcpu->id,
		       strerror(-ret));
		return ret;
	}
	ret = vcpu_set_msrs(vcpu);
	if (ret)
		return ret;
	ret = vcpu_refresh_lapic(vcpu);
	if (ret)
		pr_err("cannot set vCPU %u's LAPIC: %s", vcpu->id,
		       strerror(-ret));
	return ret;
}

#define MSR_IA32_TSC_DEADLINE	0x6e0
#define MSR_IA32_CR_PAT		0x277
#define MSR_KVM_WALL_CLOCK	0x11
#define MSR_KVM_SYSTEM_TIME	0x12
#define MSR_KVM_WALL_CLOCK_NEW	0x4b564d00
#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01
#define MSR_KVM_ASYNC_PF_EN	0x4b564d02
#define MSR_KVM_STEAL_TIME	0x4b564d03
#define MSR_KVM_PV_EOI_EN	0x4b564d04
#define APICBASE_BSP		(1ULL << 8)
#define APIC_DEFAULT_BASE	0xfee00000ULL
#define PAT_POWER_ON		0x0007040600070406ULL

/*
 * MSRs a guest set that must not outlive it: KVM keeps writing an old
 * guest's clock and steal-time pages, wherever they were, until these
 * are off.  KVM refuses the ones its CPUID does not offer, which no guest
 * could have set either: it stops at the first of those and returns how
 * many it set, so the rest go again after it.  One call when KVM takes
 * them all, not one per MSR: this is on every re-add's path.
 */
static void vcpu_reset_msrs(struct vcpu *vcpu, bool bsp)
{
	const struct kvm_msr_entry list[] = {
		{ .index = MSR_IA32_APICBASE,
		  .data = APIC_DEFAULT_BASE | APICBASE_EN |
			  (bsp ? APICBASE_BSP : 0) },
		{ .index = MSR_IA32_TSC_DEADLINE },
		{ .index = MSR_IA32_CR_PAT, .data = PAT_POWER_ON },
		{ .index = MSR_KVM_SYSTEM_TIME },
		{ .index = MSR_KVM_WALL_CLOCK },
		{ .index = MSR_KVM_SYSTEM_TIME_NEW },
		{ .index = MSR_KVM_WALL_CLOCK_NEW },
		{ .index = MSR_KVM_ASYNC_PF_EN },
		{ .index = MSR_KVM_STEAL_TIME },
		{ .index = MSR_KVM_PV_EOI_EN },
	};

	const size_t n = sizeof(list) / sizeof(list[0]);
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[sizeof(list) / sizeof(list[0])];
	} m;

	for (size_t i = 0; i < n;) {
		int set;

		m.hdr = (struct kvm_msrs){ .nmsrs = (uint32_t)(n - i) };
		memcpy(m.e, &list[i], (n - i) * sizeof(list[0]));
		set = ioctl(vcpu->fd, KVM_SET_MSRS, &m);
		/* An error sets none: go on one past it, as a refusal. */
		i += (set > 0 ? (size_t)set : 0) + 1;
	}
}

int vcpu_unpark(struct vcpu *vcpu, bool bsp)
{
	struct kvm_mp_state mp = { .mp_state =
					   bsp ? KVM_MP_STATE_RUNNABLE
					       : KVM_MP_STATE_UNINITIALIZED };
	struct kvm_vcpu_events events = {
		.flags = KVM_VCPUEVENT_VALID_NMI_PENDING,
	};
	struct kvm_fpu fpu = { .fcw = 0x37f, .mxcsr = 0x1f80 };
	const char *step = "KVM_SET_MP_STATE";
	int ret;

	vcpu_reset_msrs(vcpu, bsp);
	/* The APIC base first: it decides how KVM reads the LAPIC state. */
	ret = vcpu_set_msrs(vcpu);
	if (ret)
		return ret;
	if (vcpu->lapic0 && ioctl(vcpu->fd, KVM_SET_LAPIC, vcpu->lapic0)) {
		step = "KVM_SET_LAPIC";
		goto fail;
	}
	if (ioctl(vcpu->fd, KVM_SET_VCPU_EVENTS, &events)) {
		step = "KVM_SET_VCPU_EVENTS";
		goto fail;
	}
	if (ioctl(vcpu->fd, KVM_SET_FPU, &fpu)) {
		step = "KVM_SET_FPU";
		goto fail;
	}
	if (!ioctl(vcpu->fd, KVM_SET_MP_STATE, &mp))
		return 0;
fail:
	ret = -errno;
	pr_err("cannot reset parked vCPU %u: %s: %s", vcpu->id, step,
	       strerror(errno));
	return ret;
}

/* A flat 4 GiB segment, accessed: code (execute/read, 64-bit with @l) or data. */
static struct kvm_segment flat_segment(uint16_t selector, bool code, bool l)
{
	return (struct kvm_segment){
		.limit = 0xffffffff,
		.selector = selector,
		.type = code ? 0xb : 0x3,
		.present = 1,
		.db = !l, /* must be 0 with l = 1 */
		.s = 1,
		.l = l,
		.g = 1,
	};
}

/* The mode a kernel is entered in: flat segments and control registers. */
struct entry_mode {
	uint16_t cs, ds;
	bool long_mode;
	uint64_t cr0, cr3, cr4, efer;
	uint64_t gdt; /* with long_mode: the GDT, and no IDT */
};

static int enter_flat(struct vcpu *vcpu, const struct entry_mode *m,
		      const struct kvm_regs *regs)
{
	struct kvm_sregs sregs;

	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sregs))
		return -errno;
	sregs.cs = flat_segment(m->cs, true, m->long_mode);
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss =
		flat_segment(m->ds, false, false);
	if (m->long_mode) {
		/* The descriptors the kernel finds if it reloads a selector. */
		sregs.gdt.base = m->gdt;
		sregs.gdt.limit = VCPU_LONG64_GDT_LIMIT;
		/*
		 * No IDT until the kernel loads its own: a fault is a
		 * triple fault.
		 */
		sregs.idt.base = 0;
		sregs.idt.limit = 0;
	}
	sregs.cr0 = m->cr0;
	sregs.cr3 = m->cr3;
	sregs.cr4 = m->cr4;
	sregs.efer = m->efer;
	if (ioctl(vcpu->fd, KVM_SET_SREGS, &sregs) ||
	    ioctl(vcpu->fd, KVM_SET_REGS, regs))
		return -errno;
	return 0;
}

int vcpu_setup_pvh(struct vcpu *vcpu, uint64_t entry, uint64_t start_info)
{
	const struct entry_mode m = {
		.cs = 0x8,
		.ds = 0x10,
		.cr0 = X86_CR0_PE | X86_CR0_ET, /* protected mode, no paging */
	};
	const struct kvm_regs regs = { .rip = entry,
				       .rbx = start_info,
				       .rflags = 0x2 };

	return enter_flat(vcpu, &m, &regs);
}

int vcpu_setup_long64(struct vcpu *vcpu, uint64_t entry, uint64_t boot_params,
		      uint64_t cr3, uint64_t gdt)
{
	const struct entry_mode m = {
		.cs = VCPU_LONG64_CS,
		.ds = VCPU_LONG64_DS,
		.long_mode = true,
		.cr0 = X86_CR0_PE | X86_CR0_ET | X86_CR0_PG,
		.cr3 = cr3,
		.cr4 = X86_CR4_PAE,
		.efer = X86_EFER_LME | X86_EFER_LMA,
		.gdt = gdt,
	};
	const struct kvm_regs regs = {
		.rip = entry,
		.rsi = boot_params,
		.rflags = 0x2, /* IF clear: the protocol wants interrupts off */
	};

	return enter_flat(vcpu, &m, &regs);
}
