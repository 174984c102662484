/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPUID policy: what each vCPU sees, computed from KVM_GET_SUPPORTED_CPUID.
 * A pure function of its inputs, so that the unit tests can feed it made-up
 * Intel and AMD tables; vcpu.c hands the result to KVM_SET_CPUID2.
 */
#ifndef HOTVM_CPUID_H
#define HOTVM_CPUID_H

#include <stdbool.h>
#include <stdint.h>

struct kvm_cpuid2;

enum cpuid_vendor {
	CPUID_VENDOR_OTHER,
	CPUID_VENDOR_INTEL,
	CPUID_VENDOR_AMD, /* and Hygon, which follows AMD's leaves */
};

/*
 * The machine's shape.  APIC IDs are laid out as the topology leaves say:
 * thread in the low bits, then core, then package, each field as wide as
 * its count rounded up to a power of two.
 */
struct cpuid_topology {
	unsigned int threads_per_core;
	unsigned int cores_per_package;
};

/*
 * hotvm's shape: every possible CPU is a package of one core and one
 * thread.  query-hotpluggable-cpus reports socket-id = CPU index (core-id
 * and thread-id 0), as QEMU does with -smp sockets=N for hot-add by
 * socket-id; the APIC ID (= CPU index) then decodes to that same socket.
 */
#define CPUID_TOPOLOGY_SOCKETS                                                 \
	((struct cpuid_topology){ .threads_per_core = 1,                       \
				  .cores_per_package = 1 })

struct cpuid_vcpu {
	uint32_t apic_id;
	struct cpuid_topology topo;
	/* KVM_CAP_TSC_DEADLINE_TIMER: the in-kernel LAPIC implements it. */
	bool tsc_deadline;
};

enum cpuid_vendor cpuid_vendor(const struct kvm_cpuid2 *c);

/*
 * Builds vCPU v's table from sup (KVM_GET_SUPPORTED_CPUID).  Returns a
 * malloc'd table for KVM_SET_CPUID2, or NULL when out of memory.
 */
struct kvm_cpuid2 *cpuid_build(const struct kvm_cpuid2 *sup,
			       const struct cpuid_vcpu *v);

/* The entry for function.index in c, or NULL. */
struct kvm_cpuid_entry2 *cpuid_find(const struct kvm_cpuid2 *c,
				    uint32_t function, uint32_t index);

#endif
