// SPDX-License-Identifier: GPL-2.0-only
/*
 * Local APIC, in x2APIC mode (MSRs) when the CPU has it, else xAPIC (MMIO
 * at 0xfee00000, mapped uncached by entry.S).  Every access is a VM exit,
 * so the code does the minimum: no read-modify-write where a plain write
 * does, no waiting on the ICR delivery status in x2APIC mode (it has none).
 */
#include "lapic.h"
#include "percpu.h"

#define MSR_APIC_BASE	0x1b
#define APIC_BASE_EXTD	(1u << 10)
#define APIC_BASE_EN	(1u << 11)
#define MSR_X2APIC_BASE 0x800

/* KVM's paravirtual EOI (Documentation/virt/kvm/cpuid.rst and msr.rst). */
#define KVM_CPUID_SIGNATURE 0x40000000
#define KVM_CPUID_FEATURES  0x40000001
#define KVM_FEATURE_PV_EOI  6
#define MSR_KVM_PV_EOI_EN   0x4b564d04
#define KVM_PV_EOI_PENDING  1u

#define APIC_ID	    0x020
#define APIC_TPR    0x080
#define APIC_EOI    0x0b0
#define APIC_SVR    0x0f0
#define APIC_ESR    0x280
#define APIC_ICR    0x300
#define APIC_ICR2   0x310
#define APIC_LVTT   0x320
#define APIC_LVTPC  0x340
#define APIC_LVT0   0x350
#define APIC_LVT1   0x360
#define APIC_LVTERR 0x370
#define APIC_TMICT  0x380
#define APIC_TMCCT  0x390
#define APIC_TDCR   0x3e0

#define APIC_SVR_ENABLE	   (1u << 8)
#define APIC_LVT_MASKED	   (1u << 16)
#define APIC_LVT_PERIODIC  (1u << 17)
#define APIC_ICR_BUSY	   (1u << 12)
#define APIC_DM_FIXED	   0x000
#define APIC_DM_NMI	   0x400
#define APIC_DM_INIT	   0x500
#define APIC_DM_STARTUP	   0x600
#define APIC_LEVEL_ASSERT  (1u << 14)
#define APIC_LEVEL_TRIGGER (1u << 15)

static bool use_x2apic;
static bool use_pv_eoi;

/* "KVMKVMKVM\0\0\0" at 0x40000000, then the feature bit. */
static bool lapic_kvm_pv_eoi(void)
{
	u32 a, b, c, d;

	cpuid(KVM_CPUID_SIGNATURE, 0, &a, &b, &c, &d);
	if (b != 0x4b4d564b || c != 0x564b4d56 || d != 0x4d)
		return false;
	if (a && a < KVM_CPUID_FEATURES)
		return false;
	cpuid(KVM_CPUID_FEATURES, 0, &a, &b, &c, &d);
	return a & (1u << KVM_FEATURE_PV_EOI);
}

void lapic_detect(void)
{
	u32 a, b, c, d;

	cpuid(1, 0, &a, &b, &c, &d);
	use_x2apic = c & (1u << 21);
	use_pv_eoi = (c & (1u << 31)) && lapic_kvm_pv_eoi();
}

bool lapic_pv_eoi(void)
{
	return use_pv_eoi;
}

/*
 * The calling CPU's PV EOI word, in its per-CPU area.  KVM sets it when
 * it injects an interrupt that nothing else waits behind; lapic_eoi()
 * then clears it instead of writing the EOI register, and KVM does the
 * EOI at the CPU's next exit: one exit less per interrupt (the wake-ups
 * and doorbells of every AP state).  Off after INIT and in a new vCPU:
 * each CPU turns it on as its LAPIC comes up.
 */
static void lapic_pv_eoi_on(void)
{
	volatile u32 *w = &this_cpu()->pv_eoi;

	if (!use_pv_eoi)
		return;
	*w = 0;
	wrmsr(MSR_KVM_PV_EOI_EN, (u64)(uintptr_t)w | 1);
}

bool lapic_x2apic(void)
{
	return use_x2apic;
}

static u32 lapic_read(u32 reg)
{
	if (use_x2apic)
		return (u32)rdmsr(MSR_X2APIC_BASE + (reg >> 4));
	return *(volatile u32 *)(LAPIC_MMIO_BASE + reg);
}

static void lapic_write(u32 reg, u32 v)
{
	if (use_x2apic)
		wrmsr(MSR_X2APIC_BASE + (reg >> 4), v);
	else
		*(volatile u32 *)(LAPIC_MMIO_BASE + reg) = v;
}

void lapic_setup(void)
{
	u64 base = rdmsr(MSR_APIC_BASE);

	/* Disabled -> x2APIC directly is an illegal transition: via xAPIC. */
	if (!(base & APIC_BASE_EN)) {
		base |= APIC_BASE_EN;
		wrmsr(MSR_APIC_BASE, base);
	}
	if (use_x2apic && !(base & APIC_BASE_EXTD))
		wrmsr(MSR_APIC_BASE, base | APIC_BASE_EXTD);

	lapic_write(APIC_TPR, 0);
	lapic_write(APIC_SVR, APIC_SVR_ENABLE | 0xff);
	lapic_write(APIC_LVTT, APIC_LVT_MASKED);
	lapic_write(APIC_LVTERR, APIC_LVT_MASKED);
	/*
	 * KVM resets the boot CPU's LINT0 to ExtINT (the 8259's output);
	 * interrupts come through the I/O APIC here, never that way.
	 */
	lapic_write(APIC_LVT0, APIC_LVT_MASKED);
	lapic_pv_eoi_on();
}

/*
 * The mode is the guest's for every CPU, not a hotplug state, and a
 * software-disabled APIC takes it as well: so the AP sets it before it
 * says alive, and its wake-ups are one MSR write each rather than three
 * xAPIC MMIO accesses (the busy poll, ICR2, ICR), each an emulated MMIO
 * exit.  A fresh vCPU is in xAPIC mode, and so is one hotvm re-uses
 * (it resets the APIC base); after an INIT it keeps the mode it had.
 * Disabled -> x2APIC directly is an illegal transition: via xAPIC.
 */
u64 lapic_ap_mode(void)
{
	u64 base = rdmsr(MSR_APIC_BASE);

	if (!(base & APIC_BASE_EN)) {
		base |= APIC_BASE_EN;
		wrmsr(MSR_APIC_BASE, base);
	}
	if (use_x2apic && !(base & APIC_BASE_EXTD)) {
		base |= APIC_BASE_EXTD;
		wrmsr(MSR_APIC_BASE, base);
	}
	return base;
}

/*
 * An AP's LAPIC after INIT is in its power-up state but for its ID and
 * base (Intel SDM vol. 3, "Local APIC State After an INIT Reset"; KVM's
 * kvm_lapic_reset() and QEMU's apic_init_reset() do the same): TPR 0,
 * every LVT masked, the timer stopped, divide by 2, SVR 0xff.  The
 * teardowns below leave what matters of it so again (the timer stopped;
 * the software disable masks every LVT, and nothing but the timer's start
 * unmasks one on an AP), so an AP needs only the software enable
 * (and the PV EOI word): two exits where lapic_setup() makes eight.
 */
void lapic_setup_ap(void)
{
	lapic_write(APIC_SVR, APIC_SVR_ENABLE | 0xff);
	lapic_pv_eoi_on();
}

void lapic_shutdown(void)
{
	lapic_write(APIC_SVR, 0xff);
}

u32 lapic_id(void)
{
	u32 id = lapic_read(APIC_ID);

	return use_x2apic ? id : id >> 24;
}

/*
 * Takes the PV EOI word's pending bit: whether it was set, cleared in one
 * instruction.  KVM clears the bit itself at every exit of this CPU and
 * keeps the interrupt in service, expecting the EOI register then; it
 * sets the bit again at the next entry only if no other interrupt is
 * pending (Documentation/virt/kvm/msr.rst, MSR_KVM_PV_EOI_EN).  A test
 * and a separate store with an exit between them (an interrupt arriving
 * for this CPU) would find the bit set, clear KVM's fresh zero and skip
 * the EOI: the vector stays in service for good and masks every vector
 * of its priority class and below on this CPU, a wake-up, doorbell or
 * timer that never comes again.  One instruction cannot be split by an
 * exit; no other CPU writes the word, so no lock prefix (Linux's
 * kvm_guest_apic_eoi_write() does the same).
 */
static bool lapic_pv_eoi_take(volatile u32 *w)
{
	bool was;

	__asm__ volatile("btrl $0, %0" : "+m"(*w), "=@ccc"(was) : : "memory");
	return was;
}

void lapic_eoi(void)
{
	if (use_pv_eoi && lapic_pv_eoi_take(&this_cpu()->pv_eoi))
		return;
	lapic_write(APIC_EOI, 0);
}

void lapic_timer_start(u8 vector, u32 count)
{
	/* Divide by 2, INIT's: an AP's divider is never written. */
	lapic_write(APIC_LVTT, APIC_LVT_PERIODIC | vector);
	lapic_write(APIC_TMICT, count);
}

void lapic_timer_oneshot(u8 vector)
{
	lapic_write(APIC_TDCR, 0xa); /* divide by 128: LAPIC_TIMER_NS */
	lapic_write(APIC_LVTT, vector);
}

void lapic_timer_arm(u32 count)
{
	lapic_write(APIC_TMICT, count);
}

/*
 * A zero initial count stops the timer in either mode (Intel SDM vol. 3,
 * "APIC Timer"): LVTT keeps its vector, and lapic_timer_start() writes
 * it again anyway; the AP's LAPIC teardown then masks every LVT.
 */
void lapic_timer_stop(void)
{
	lapic_write(APIC_TMICT, 0);
}

void lapic_calib_start(u32 count)
{
	lapic_write(APIC_TDCR, 0xb); /* divide by 1 */
	lapic_write(APIC_LVTT, APIC_LVT_MASKED);
	lapic_write(APIC_TMICT, count);
}

u32 lapic_calib_count(void)
{
	return lapic_read(APIC_TMCCT);
}

void lapic_calib_stop(void)
{
	lapic_write(APIC_TMICT, 0);
}

static void lapic_icr_mode(bool x2apic, u32 apic_id, u32 low)
{
	volatile u32 *mmio = (volatile u32 *)LAPIC_MMIO_BASE;

	if (x2apic) {
		wrmsr(MSR_X2APIC_BASE + (APIC_ICR >> 4),
		      ((u64)apic_id << 32) | low);
		return;
	}
	while (mmio[APIC_ICR / 4] & APIC_ICR_BUSY)
		cpu_relax();
	mmio[APIC_ICR2 / 4] = apic_id << 24;
	mmio[APIC_ICR / 4] = low;
}

static void lapic_icr(u32 apic_id, u32 low)
{
	lapic_icr_mode(use_x2apic, apic_id, low);
}

void lapic_send_ipi(u32 apic_id, u8 vector)
{
	lapic_icr(apic_id, APIC_DM_FIXED | vector);
}

/* Accepted even by a software-disabled APIC, like INIT and SIPI. */
void lapic_send_nmi(u32 apic_id)
{
	lapic_icr(apic_id, APIC_DM_NMI);
}

/*
 * The mode is @base's, the one lapic_ap_mode() left as the AP started
 * (KVM's kvm_lapic_reset() leaves the base alone on an INIT).  A
 * software-disabled APIC still sends IPIs (Intel SDM vol. 3, "Local APIC
 * State After It Has Been Software Disabled"); a hardware-disabled one
 * cannot, or one moved away from the address entry.S maps uncached.
 */
bool lapic_send_ipi_early(u64 base, u32 apic_id, u8 vector)
{
	if (!(base & APIC_BASE_EN))
		return false;
	if (!(base & APIC_BASE_EXTD) &&
	    (base & ~0xfffull) != (u64)LAPIC_MMIO_BASE)
		return false;
	lapic_icr_mode(base & APIC_BASE_EXTD, apic_id, APIC_DM_FIXED | vector);
	return true;
}

void lapic_send_init(u32 apic_id)
{
	lapic_icr(apic_id,
		  APIC_DM_INIT | APIC_LEVEL_TRIGGER | APIC_LEVEL_ASSERT);
	/*
	 * The level de-assert older xAPICs want; x2APIC mode has no such
	 * message (Intel SDM vol. 3, "Interrupt Command Register (ICR)" in
	 * x2APIC mode) and KVM drops it: one exit saved per kick and reset.
	 */
	if (!use_x2apic)
		lapic_icr(apic_id, APIC_DM_INIT | APIC_LEVEL_TRIGGER);
}

void lapic_send_sipi(u32 apic_id, u8 page)
{
	lapic_icr(apic_id, APIC_DM_STARTUP | page);
}

bool cpu_apicid_leaf_b(void)
{
	u32 a, b, c, d;

	cpuid(0, 0, &a, &b, &c, &d);
	if (a < 0xb)
		return false;
	cpuid(0xb, 0, &a, &b, &c, &d);
	return b != 0;
}

u32 cpu_apic_id(void)
{
	u32 a, b, c, d;

	if (cpu_apicid_leaf_b()) {
		cpuid(0xb, 0, &a, &b, &c, &d);
		return d;
	}
	cpuid(1, 0, &a, &b, &c, &d);
	return b >> 24;
}
