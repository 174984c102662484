// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CPUID policy over made-up KVM_GET_SUPPORTED_CPUID tables, one in
 * Intel's shape and one in AMD's, each with host topology values the
 * policy must overwrite.  The last cases decode the result as Linux does,
 * by each of its methods, and check that they name the same package.
 */
#include <stdlib.h>
#include <string.h>

#include <linux/kvm.h>

#include "check.h"
#include "cpuid.h"
#include "msr.h"

#define IDX KVM_CPUID_FLAG_SIGNIFCANT_INDEX

/* "GenuineIntel" and "AuthenticAMD" as EBX, EDX, ECX. */
#define INTEL_EBX 0x756e6547
#define INTEL_EDX 0x49656e69
#define INTEL_ECX 0x6c65746e
#define AMD_EBX	  0x68747541
#define AMD_EDX	  0x69746e65
#define AMD_ECX	  0x444d4163

static const struct kvm_cpuid_entry2 intel_host[] = {
	{ .function = 0,
	  .eax = 0x1f,
	  .ebx = INTEL_EBX,
	  .ecx = INTEL_ECX,
	  .edx = INTEL_EDX },
	/* A host package of 32 threads: EBX[23:16] = 32, HTT set. */
	{ .function = 1,
	  .eax = 0x906ea,
	  .ebx = 0x05200800,
	  .ecx = 0x1dfa3203 | (1U << 26) | (1U << 27) | (1U << 28),
	  .edx = 0x1f8bfbff },
	/* L1d, L1i, L2 shared by 2 threads, L3 by 32, 16 cores. */
	{ .function = 4, .index = 0, .flags = IDX, .eax = 0x3c004121 },
	{ .function = 4, .index = 1, .flags = IDX, .eax = 0x3c004122 },
	{ .function = 4, .index = 2, .flags = IDX, .eax = 0x3c004143 },
	{ .function = 4, .index = 3, .flags = IDX, .eax = 0x3c07c163 },
	{ .function = 4, .index = 4, .flags = IDX, .eax = 0 },
	{ .function = 7,
	  .index = 0,
	  .flags = IDX,
	  .ebx = (1U << 5) | (1U << 16) | 1 },
	{ .function = 0xb,
	  .index = 0,
	  .flags = IDX,
	  .eax = 1,
	  .ebx = 2,
	  .ecx = 0x100,
	  .edx = 7 },
	{ .function = 0xb,
	  .index = 1,
	  .flags = IDX,
	  .eax = 5,
	  .ebx = 32,
	  .ecx = 0x201,
	  .edx = 7 },
	{ .function = 0xd, .index = 0, .flags = IDX, .eax = 7, .ebx = 0x340 },
	{ .function = 0x1f,
	  .index = 0,
	  .flags = IDX,
	  .eax = 1,
	  .ebx = 2,
	  .ecx = 0x100,
	  .edx = 7 },
	{ .function = 0x80000000, .eax = 0x80000008 },
	{ .function = 0x80000001, .ecx = 0x121 },
	{ .function = 0x80000008, .eax = 0x3027, .ecx = 0 },
};

static const struct kvm_cpuid_entry2 amd_host[] = {
	{ .function = 0,
	  .eax = 0xd,
	  .ebx = AMD_EBX,
	  .ecx = AMD_ECX,
	  .edx = AMD_EDX },
	{ .function = 1,
	  .eax = 0xa00f11,
	  .ebx = 0x00020800,
	  .ecx = 0x81202000 | (1U << 26),
	  .edx = 0x178bfbff },
	{ .function = 4, .index = 0, .flags = IDX },
	/* Some KVMs list leaf 0xb as one empty subleaf. */
	{ .function = 0xb, .index = 0, .flags = IDX },
	{ .function = 0x80000000, .eax = 0x80000021 },
	/* TOPOEXT (bit 22) and CmpLegacy (bit 1) */
	{ .function = 0x80000001, .ecx = 0x00400393 },
	/* NC = 1, ApicIdCoreIdSize = 7, PerfTscSize bits kept */
	{ .function = 0x80000008, .eax = 0x3030, .ecx = 0x00037001 },
	{ .function = 0x8000001d, .index = 0, .flags = IDX, .eax = 0x00004121 },
	{ .function = 0x8000001d, .index = 1, .flags = IDX, .eax = 0x00004122 },
	{ .function = 0x8000001d, .index = 2, .flags = IDX, .eax = 0x00004143 },
	{ .function = 0x8000001d, .index = 3, .flags = IDX, .eax = 0x0003c163 },
	{ .function = 0x8000001d, .index = 4, .flags = IDX },
	{ .function = 0x8000001e },
};

static struct kvm_cpuid2 *table(const struct kvm_cpuid_entry2 *e, size_t n)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(*e));

	c->nent = n;
	memcpy(c->entries, e, n * sizeof(*e));
	return c;
}

#define TABLE(a) table(a, sizeof(a) / sizeof(a[0]))

static struct kvm_cpuid2 *build(const struct kvm_cpuid2 *sup, uint32_t apic_id,
				struct cpuid_topology topo, bool tsc_deadline)
{
	struct cpuid_vcpu v = {
		.apic_id = apic_id,
		.topo = topo,
		.tsc_deadline = tsc_deadline,
	};

	return cpuid_build(sup, &v);
}

static const struct kvm_cpuid_entry2 *get(const struct kvm_cpuid2 *c,
					  uint32_t fn, uint32_t idx)
{
	static const struct kvm_cpuid_entry2 none;
	const struct kvm_cpuid_entry2 *e = cpuid_find(c, fn, idx);

	CHECK(e != NULL);
	return e ? e : &none;
}

static unsigned int count_fn(const struct kvm_cpuid2 *c, uint32_t fn)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < c->nent; i++)
		n += c->entries[i].function == fn;
	return n;
}

static void test_vendor(void)
{
	struct kvm_cpuid2 *i = TABLE(intel_host), *a = TABLE(amd_host);
	struct kvm_cpuid_entry2 hygon = { .ebx = 0x6f677948,
					  .edx = 0x6e65476e,
					  .ecx = 0x656e6975 };
	struct kvm_cpuid2 *h = table(&hygon, 1);
	struct kvm_cpuid2 *none = table(&intel_host[1], 1);

	CHECK_EQ(cpuid_vendor(i), CPUID_VENDOR_INTEL);
	CHECK_EQ(cpuid_vendor(a), CPUID_VENDOR_AMD);
	CHECK_EQ(cpuid_vendor(h), CPUID_VENDOR_AMD);
	CHECK_EQ(cpuid_vendor(none), CPUID_VENDOR_OTHER);
	h->entries[0].ecx ^= 1;
	CHECK_EQ(cpuid_vendor(h), CPUID_VENDOR_OTHER);
	free(i);
	free(a);
	free(h);
	free(none);
}

/* The bits that do not depend on the vendor or the topology. */
static void test_leaf1_features(void)
{
	struct kvm_cpuid2 *sup = TABLE(intel_host);
	struct kvm_cpuid2 *on = build(sup, 0, CPUID_TOPOLOGY_SOCKETS, true);
	struct kvm_cpuid2 *off = build(sup, 0, CPUID_TOPOLOGY_SOCKETS, false);
	const struct kvm_cpuid_entry2 *e = get(on, 1, 0);

	CHECK(e->ecx & (1U << 24));    /* TSC deadline */
	CHECK(e->ecx & (1U << 31));    /* hypervisor */
	CHECK(!(e->ecx & (7U << 26))); /* XSAVE, OSXSAVE, AVX */
	CHECK_EQ(e->ecx & 0x00ffffff, sup->entries[1].ecx & 0x00ffffff);
	CHECK_EQ(e->eax, sup->entries[1].eax);
	CHECK(!(get(off, 1, 0)->ecx & (1U << 24)));
	CHECK_EQ(get(on, 7, 0)->ebx, 1); /* AVX2, AVX512F gone */
	CHECK_EQ(get(on, 0xd, 0)->eax, 0);
	CHECK_EQ(get(on, 0xd, 0)->ebx, 0);
	/* The input is the VM's shared table: never written. */
	CHECK_EQ(sup->entries[1].ebx, 0x05200800);
	CHECK_EQ(sup->nent, sizeof(intel_host) / sizeof(intel_host[0]));
	free(sup);
	free(on);
	free(off);
}

/* A pvm-style table with the bit already set: cleared without the cap. */
static void test_tsc_deadline_follows_cap(void)
{
	struct kvm_cpuid2 *sup = TABLE(amd_host);
	struct kvm_cpuid2 *c;

	sup->entries[1].ecx |= 1U << 24;
	c = build(sup, 0, CPUID_TOPOLOGY_SOCKETS, false);
	CHECK(!(get(c, 1, 0)->ecx & (1U << 24)));
	free(c);
	free(sup);
}

static void check_topology_leaf(const struct kvm_cpuid2 *c, uint32_t fn,
				uint32_t apic_id, uint32_t eax0, uint32_t ebx0,
				uint32_t eax1, uint32_t ebx1)
{
	CHECK_EQ(count_fn(c, fn), 3);
	CHECK_EQ(get(c, fn, 0)->eax, eax0);
	CHECK_EQ(get(c, fn, 0)->ebx, ebx0);
	CHECK_EQ(get(c, fn, 0)->ecx, 0x100);
	CHECK_EQ(get(c, fn, 1)->eax, eax1);
	CHECK_EQ(get(c, fn, 1)->ebx, ebx1);
	CHECK_EQ(get(c, fn, 1)->ecx, 0x201);
	CHECK_EQ(get(c, fn, 2)->ebx, 0);
	CHECK_EQ(get(c, fn, 2)->ecx, 2); /* level type 0: the end */
	for (uint32_t i = 0; i < 3; i++) {
		CHECK_EQ(get(c, fn, i)->edx, apic_id);
		CHECK(get(c, fn, i)->flags & IDX);
	}
}

static void test_intel_sockets(void)
{
	struct kvm_cpuid2 *sup = TABLE(intel_host);
	struct kvm_cpuid2 *c = build(sup, 3, CPUID_TOPOLOGY_SOCKETS, true);
	const struct kvm_cpuid_entry2 *e = get(c, 1, 0);

	CHECK_EQ(e->ebx >> 24, 3);
	CHECK_EQ((e->ebx >> 16) & 0xff, 1);
	CHECK_EQ(e->ebx & 0xffff, 0x0800);
	CHECK(!(e->edx & (1U << 28))); /* HTT */
	for (uint32_t i = 0; i < 4; i++) {
		uint32_t eax = get(c, 4, i)->eax;

		CHECK_EQ(eax >> 26, 0);		  /* cores per package - 1 */
		CHECK_EQ((eax >> 14) & 0xfff, 0); /* sharing the cache - 1 */
		CHECK_EQ(eax & 0x3fff, sup->entries[2 + i].eax & 0x3fff);
	}
	CHECK_EQ(get(c, 4, 4)->eax, 0);
	check_topology_leaf(c, 0xb, 3, 0, 1, 0, 1);
	check_topology_leaf(c, 0x1f, 3, 0, 1, 0, 1);
	/* AMD-only fields stay as the host has them. */
	CHECK_EQ(get(c, 0x80000008, 0)->ecx, 0);
	CHECK_EQ(get(c, 0x80000001, 0)->ecx, 0x121);
	free(c);
	free(sup);
}

/* 0x1f appears only where the host has it: Linux prefers it when present. */
static void test_no_leaf_1f_added(void)
{
	struct kvm_cpuid2 *sup = TABLE(amd_host);
	struct kvm_cpuid2 *c = build(sup, 1, CPUID_TOPOLOGY_SOCKETS, true);

	CHECK_EQ(count_fn(c, 0x1f), 0);
	check_topology_leaf(c, 0xb, 1, 0, 1, 0, 1);
	CHECK_EQ(c->nent, sup->nent - 1 + 3);
	free(c);
	free(sup);
}

static void test_amd_sockets(void)
{
	struct kvm_cpuid2 *sup = TABLE(amd_host);
	struct kvm_cpuid2 *c = build(sup, 2, CPUID_TOPOLOGY_SOCKETS, true);
	const struct kvm_cpuid_entry2 *e = get(c, 1, 0);

	CHECK_EQ(e->ebx >> 24, 2);
	CHECK_EQ((e->ebx >> 16) & 0xff, 1);
	CHECK(!(e->edx & (1U << 28)));
	/* CmpLegacy off, TOPOEXT and the rest kept. */
	CHECK_EQ(get(c, 0x80000001, 0)->ecx, 0x00400391);
	/* NC = 0, ApicIdCoreIdSize = 0; PerfTscSize kept. */
	CHECK_EQ(get(c, 0x80000008, 0)->ecx, 0x00030000);
	CHECK_EQ(get(c, 0x80000008, 0)->eax, 0x3030);
	for (uint32_t i = 0; i < 4; i++) {
		uint32_t eax = get(c, 0x8000001d, i)->eax;

		CHECK_EQ((eax >> 14) & 0xfff, 0);
		CHECK_EQ(eax & 0x3fff, sup->entries[7 + i].eax & 0x3fff);
	}
	e = get(c, 0x8000001e, 0);
	CHECK_EQ(e->eax, 2);
	CHECK_EQ(e->ebx, 0); /* one thread per core, core 0 of its package */
	CHECK_EQ(e->ecx, 2); /* node = package, one node per package */
	check_topology_leaf(c, 0xb, 2, 0, 1, 0, 1);
	free(c);
	free(sup);
}

/* Beyond the 8-bit xAPIC ID: the x2APIC leaves carry all of it. */
static void test_x2apic_id(void)
{
	struct kvm_cpuid2 *sup = TABLE(amd_host);
	struct kvm_cpuid2 *c = build(sup, 300, CPUID_TOPOLOGY_SOCKETS, true);

	CHECK_EQ(get(c, 1, 0)->ebx >> 24, 300 & 0xff);
	CHECK_EQ(get(c, 0xb, 1)->edx, 300);
	CHECK_EQ(get(c, 0x8000001e, 0)->eax, 300);
	free(c);
	free(sup);
}

/* Another shape, to show the fields move together: 4 cores x 2 threads. */
static void test_cores_and_threads(void)
{
	struct cpuid_topology t = { .threads_per_core = 2,
				    .cores_per_package = 4 };
	struct kvm_cpuid2 *si = TABLE(intel_host), *sa = TABLE(amd_host);
	/* APIC ID 13 = package 1, core 2, thread 1 */
	struct kvm_cpuid2 *i = build(si, 13, t, true),
			  *a = build(sa, 13, t, true);

	CHECK_EQ((get(i, 1, 0)->ebx >> 16) & 0xff, 8);
	CHECK(get(i, 1, 0)->edx & (1U << 28));
	CHECK_EQ(get(i, 4, 0)->eax >> 26, 3);
	CHECK_EQ((get(i, 4, 0)->eax >> 14) & 0xfff, 1); /* L1: the core's */
	CHECK_EQ((get(i, 4, 2)->eax >> 14) & 0xfff, 1); /* L2 too */
	CHECK_EQ((get(i, 4, 3)->eax >> 14) & 0xfff, 7); /* L3: the package's */
	check_topology_leaf(i, 0xb, 13, 1, 2, 3, 8);
	CHECK(get(a, 0x80000001, 0)->ecx & (1U << 1));
	CHECK_EQ(get(a, 0x80000008, 0)->ecx & 0xf0ff, 0x3007);
	CHECK_EQ(get(a, 0x8000001e, 0)->ebx, 0x102);
	CHECK_EQ(get(a, 0x8000001e, 0)->ecx, 1);
	free(i);
	free(a);
	free(si);
	free(sa);
}

static unsigned int count_order(unsigned int n)
{
	unsigned int b = 0;

	while ((1U << b) < n)
		b++;
	return b;
}

/*
 * Linux's ways to find a CPU's package, each from its own leaves: leaf 1
 * (detect_ht), leaf 0xb (detect_extended_topology) and, on AMD, 0x80000008
 * (amd_detect_cmp).  All must give the socket QMP reports: the CPU index.
 */
static void test_linux_decodes_socket_per_cpu(void)
{
	const unsigned int max = 8;

	for (int vendor = 0; vendor < 2; vendor++) {
		struct kvm_cpuid2 *sup =
			vendor ? TABLE(amd_host) : TABLE(intel_host);

		for (uint32_t id = 0; id < max; id++) {
			struct kvm_cpuid2 *c =
				build(sup, id, CPUID_TOPOLOGY_SOCKETS, true);
			const struct kvm_cpuid_entry2 *l1 = get(c, 1, 0);
			unsigned int siblings = (l1->ebx >> 16) & 0xff;
			unsigned int ht_pkg =
				l1->edx & (1U << 28)
					? (l1->ebx >> 24) >>
						  count_order(siblings)
					: l1->ebx >> 24;
			unsigned int x2_pkg =
				get(c, 0xb, 1)->edx >> get(c, 0xb, 1)->eax;

			CHECK_EQ(ht_pkg, id);
			CHECK_EQ(x2_pkg, id);
			if (vendor) {
				uint32_t ecx = get(c, 0x80000008, 0)->ecx;
				unsigned int bits = (ecx >> 12) & 0xf;

				if (!bits)
					bits = count_order((ecx & 0xff) + 1);
				CHECK_EQ(id >> bits, id);
			}
			free(c);
		}
		free(sup);
	}
}

static void test_boot_msrs(void)
{
	struct kvm_msr_entry e[MSR_BOOT_MAX];

	CHECK_EQ(msr_boot_list(CPUID_VENDOR_AMD, e), 1);
	CHECK_EQ(e[0].index, 0x2ff);
	CHECK_EQ(e[0].data, 0x806); /* E, default type WB; FE clear */
	CHECK_EQ(msr_boot_list(CPUID_VENDOR_INTEL, e), 2);
	CHECK_EQ(e[0].index, 0x2ff);
	CHECK_EQ(e[1].index, 0x1a0);
	CHECK(e[1].data & 1); /* fast strings */
}

CHECK_MAIN(TEST(test_vendor), TEST(test_leaf1_features),
	   TEST(test_tsc_deadline_follows_cap), TEST(test_intel_sockets),
	   TEST(test_no_leaf_1f_added), TEST(test_amd_sockets),
	   TEST(test_x2apic_id), TEST(test_cores_and_threads),
	   TEST(test_linux_decodes_socket_per_cpu), TEST(test_boot_msrs))
