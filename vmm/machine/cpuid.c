// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPUID policy.  KVM_GET_SUPPORTED_CPUID is the host's view: its topology
 * fields describe the host (or nothing), and some bits KVM leaves for the
 * VMM to decide.  Every field that says how many CPUs share a package, a
 * core or a cache is rewritten here from one struct cpuid_topology, so
 * that Linux's several topology parsers (leaf 1, leaf 4, leaves 0xb/0x1f,
 * AMD's 0x80000008 and 0x8000001e) all arrive at the same answer.
 */
#include <stdlib.h>
#include <string.h>

#include <linux/kvm.h>

#include "cpuid.h"

#define CPUID_1_EBX_APIC_ID_SHIFT  24
#define CPUID_1_EBX_NLOGICAL_SHIFT 16
#define CPUID_1_ECX_TSC_DEADLINE   (1U << 24)
#define CPUID_1_ECX_XSAVE	   (1U << 26)
#define CPUID_1_ECX_OSXSAVE	   (1U << 27)
#define CPUID_1_ECX_AVX		   (1U << 28)
#define CPUID_1_ECX_HYPERVISOR	   (1U << 31)
#define CPUID_1_EDX_HTT		   (1U << 28)
#define CPUID_7_EBX_AVX2	   (1U << 5)
#define CPUID_7_EBX_AVX512F	   (1U << 16)
#define CPUID_80000001_ECX_CMPLEG  (1U << 1)

/* Leaves 4 and 0x8000001d: cache type and level, sharing count. */
#define CACHE_TYPE(eax)		((eax)&0x1f)
#define CACHE_LEVEL(eax)	(((eax) >> 5) & 0x7)
#define CACHE_SHARING_MASK	(0xfffU << 14)
#define CACHE_SHARING_SHIFT	14
#define CPUID_4_EAX_CORES_MASK	(0x3fU << 26)
#define CPUID_4_EAX_CORES_SHIFT 26

/* Leaves 0xb and 0x1f: level types, and the levels hotvm describes. */
#define TOPO_LEVEL_INVALID 0
#define TOPO_LEVEL_SMT	   1
#define TOPO_LEVEL_CORE	   2
#define TOPO_NR_SUBLEAVES  3 /* SMT, core, the invalid terminator */

/* Leaf 0x80000008 ECX: NC and ApicIdCoreIdSize. */
#define CPUID_80000008_ECX_NC_MASK    0xffU
#define CPUID_80000008_ECX_IDSZ_MASK  (0xfU << 12)
#define CPUID_80000008_ECX_IDSZ_SHIFT 12

static unsigned int bits_for(unsigned int n)
{
	unsigned int b = 0;

	while (b < 31 && (1U << b) < n)
		b++;
	return b;
}

/* The widths of the APIC ID's thread and core fields. */
struct topo_bits {
	unsigned int thread;
	unsigned int core;
	unsigned int package_shift; /* thread + core */
};

static struct topo_bits topo_bits(const struct cpuid_topology *t)
{
	struct topo_bits b = {
		.thread = bits_for(t->threads_per_core),
		.core = bits_for(t->cores_per_package),
	};

	b.package_shift = b.thread + b.core;
	return b;
}

enum cpuid_vendor cpuid_vendor(const struct kvm_cpuid2 *c)
{
	const struct kvm_cpuid_entry2 *e = cpuid_find(c, 0, 0);
	char id[12];

	if (!e)
		return CPUID_VENDOR_OTHER;
	/* The vendor string is EBX, EDX, ECX, in that order. */
	memcpy(id, &e->ebx, 4);
	memcpy(id + 4, &e->edx, 4);
	memcpy(id + 8, &e->ecx, 4);
	if (!memcmp(id, "GenuineIntel", 12))
		return CPUID_VENDOR_INTEL;
	if (!memcmp(id, "AuthenticAMD", 12) || !memcmp(id, "HygonGenuine", 12))
		return CPUID_VENDOR_AMD;
	return CPUID_VENDOR_OTHER;
}

struct kvm_cpuid_entry2 *cpuid_find(const struct kvm_cpuid2 *c,
				    uint32_t function, uint32_t index)
{
	for (unsigned int i = 0; i < c->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == function &&
		    (e->index == index ||
		     !(e->flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX)))
			return (struct kvm_cpuid_entry2 *)e;
	}
	return NULL;
}

static bool is_topology_leaf(uint32_t function)
{
	return function == 0xb || function == 0x1f;
}

/*
 * Leaves 0xb and 0x1f, whole: KVM lists as many subleaves as the host has
 * levels (on some hosts only an empty subleaf 0), and Linux walks them until
 * the invalid level, so each is replaced by exactly SMT, core, terminator.
 */
static void topology_subleaves(struct kvm_cpuid_entry2 *out, uint32_t function,
			       const struct cpuid_vcpu *v)
{
	struct topo_bits b = topo_bits(&v->topo);
	unsigned int threads = v->topo.threads_per_core;

	for (uint32_t i = 0; i < TOPO_NR_SUBLEAVES; i++)
		out[i] = (struct kvm_cpuid_entry2){
			.function = function,
			.index = i,
			.flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX,
			.ecx = i,
			.edx = v->apic_id,
		};
	/* EAX: how far to shift the x2APIC ID to reach the next level. */
	out[0].eax = b.thread;
	out[0].ebx = threads;
	out[0].ecx |= TOPO_LEVEL_SMT << 8;
	out[1].eax = b.package_shift;
	out[1].ebx = threads * v->topo.cores_per_package;
	out[1].ecx |= TOPO_LEVEL_CORE << 8;
	out[2].ecx |= TOPO_LEVEL_INVALID << 8;
}

/* Leaves 4 and 0x8000001d: L1 and L2 are per core, L3 per package. */
static uint32_t cache_sharing(uint32_t eax, const struct topo_bits *b)
{
	unsigned int bits =
		CACHE_LEVEL(eax) >= 3 ? b->package_shift : b->thread;

	return (eax & ~CACHE_SHARING_MASK) |
	       ((((1U << bits) - 1) << CACHE_SHARING_SHIFT) &
		CACHE_SHARING_MASK);
}

static void fix_leaf1(struct kvm_cpuid_entry2 *e, const struct cpuid_vcpu *v)
{
	struct topo_bits b = topo_bits(&v->topo);
	unsigned int per_pkg =
		v->topo.threads_per_core * v->topo.cores_per_package;
	uint32_t ids = 1U << b.package_shift;

	/* Addressable IDs per package: Linux derives the package mask from it. */
	e->ebx = (e->ebx & 0xffff) | ((ids > 0xff ? 0xff : ids) << 16) |
		 ((v->apic_id & 0xff) << CPUID_1_EBX_APIC_ID_SHIFT);
	if (per_pkg > 1)
		e->edx |= CPUID_1_EDX_HTT;
	else
		e->edx &= ~CPUID_1_EDX_HTT;
	/*
	 * The software KVM this project is developed on cannot emulate
	 * xsave, so no XSAVE and nothing that needs it.
	 */
	e->ecx &= ~(CPUID_1_ECX_XSAVE | CPUID_1_ECX_OSXSAVE | CPUID_1_ECX_AVX);
	e->ecx |= CPUID_1_ECX_HYPERVISOR;
	/* KVM never sets this one itself: it depends on the irqchip. */
	if (v->tsc_deadline)
		e->ecx |= CPUID_1_ECX_TSC_DEADLINE;
	else
		e->ecx &= ~CPUID_1_ECX_TSC_DEADLINE;
}

static void fix_entry(struct kvm_cpuid_entry2 *e, enum cpuid_vendor vendor,
		      const struct cpuid_vcpu *v)
{
	struct topo_bits b = topo_bits(&v->topo);
	unsigned int per_pkg =
		v->topo.threads_per_core * v->topo.cores_per_package;
	bool amd = vendor == CPUID_VENDOR_AMD;

	switch (e->function) {
	case 1:
		fix_leaf1(e, v);
		break;
	case 4:
		if (vendor == CPUID_VENDOR_AMD || !CACHE_TYPE(e->eax))
			break;
		e->eax = cache_sharing(e->eax, &b);
		e->eax = (e->eax & ~CPUID_4_EAX_CORES_MASK) |
			 ((((1U << b.core) - 1) << CPUID_4_EAX_CORES_SHIFT) &
			  CPUID_4_EAX_CORES_MASK);
		break;
	case 7:
		if (e->index == 0)
			e->ebx &= ~(CPUID_7_EBX_AVX2 | CPUID_7_EBX_AVX512F);
		break;
	case 0xd: /* no xsave: no xsave state components */
		e->eax = e->ebx = e->ecx = e->edx = 0;
		break;
	case 0x80000001:
		/* AMD: "HTT means cores", set only for multi-core packages. */
		if (amd && per_pkg > 1)
			e->ecx |= CPUID_80000001_ECX_CMPLEG;
		else if (amd)
			e->ecx &= ~CPUID_80000001_ECX_CMPLEG;
		break;
	case 0x80000008:
		if (!amd)
			break;
		e->ecx &= ~(CPUID_80000008_ECX_NC_MASK |
			    CPUID_80000008_ECX_IDSZ_MASK);
		e->ecx |= (per_pkg - 1) & CPUID_80000008_ECX_NC_MASK;
		e->ecx |= b.package_shift << CPUID_80000008_ECX_IDSZ_SHIFT;
		break;
	case 0x8000001d:
		if (amd && CACHE_TYPE(e->eax))
			e->eax = cache_sharing(e->eax, &b);
		break;
	case 0x8000001e:
		if (!amd)
			break;
		e->eax = v->apic_id;
		/* Threads per core - 1, and this core's number in its package. */
		e->ebx = ((v->topo.threads_per_core - 1) & 0xff) << 8 |
			 ((v->apic_id >> b.thread) & ((1U << b.core) - 1) &
			  0xff);
		/* One node per package, numbered as the package. */
		e->ecx = (v->apic_id >> b.package_shift) & 0xff;
		e->edx = 0;
		break;
	}
}

struct kvm_cpuid2 *cpuid_build(const struct kvm_cpuid2 *sup,
			       const struct cpuid_vcpu *v)
{
	enum cpuid_vendor vendor = cpuid_vendor(sup);
	bool has_leaf[2] = {
		cpuid_find(sup, 0xb, 0) != NULL,
		cpuid_find(sup, 0x1f, 0) != NULL,
	};
	size_t cap = sup->nent + 2 * TOPO_NR_SUBLEAVES;
	struct kvm_cpuid2 *c;
	unsigned int n = 0;

	c = calloc(1, sizeof(*c) + cap * sizeof(c->entries[0]));
	if (!c)
		return NULL;
	for (unsigned int i = 0; i < sup->nent; i++) {
		if (is_topology_leaf(sup->entries[i].function))
			continue;
		c->entries[n] = sup->entries[i];
		fix_entry(&c->entries[n], vendor, v);
		n++;
	}
	/* Only the leaves the host has: the guest finds 0x1f by its presence. */
	if (has_leaf[0]) {
		topology_subleaves(&c->entries[n], 0xb, v);
		n += TOPO_NR_SUBLEAVES;
	}
	if (has_leaf[1]) {
		topology_subleaves(&c->entries[n], 0x1f, v);
		n += TOPO_NR_SUBLEAVES;
	}
	c->nent = n;
	return c;
}
