/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One KVM virtual machine: the /dev/kvm and VM fds, guest RAM, the in-kernel
 * irqchip, and the machine-wide stop request that every thread can raise and
 * the main thread waits for.
 */
#ifndef HOTVM_VMM_VM_H
#define HOTVM_VMM_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VM_MIN_MEMORY (8ULL << 20)
/* RAM above this goes above 4 GiB: the gap holds the IOAPIC and LAPIC. */
#define VM_LOW_RAM_MAX	0xc0000000ULL
#define VM_HIGH_RAM_GPA 0x100000000ULL
#define VM_MAX_MEMORY	(1ULL << 40)
#define VM_MAX_REGIONS	2

struct kvm_cpuid2;

struct vm_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *hva;
};

struct vm {
	int kvm_fd;
	int vm_fd;
	size_t run_size;	/* mmap size of each vCPU's kvm_run */
	unsigned int max_vcpus; /* min of KVM's vCPU count and id limits */

	uint8_t *ram;
	uint64_t ram_size;
	struct vm_region regions[VM_MAX_REGIONS];
	unsigned int nr_regions;

	struct kvm_cpuid2 *cpuid; /* KVM_GET_SUPPORTED_CPUID */

	/* Stop request: the first one wins, later ones are ignored. */
	atomic_bool stopping;
	pthread_mutex_t stop_lock;
	int stop_status;
	char stop_reason[160];
	int stop_efd; /* eventfd, readable once a stop is requested */
};

/* Opens /dev/kvm and checks the API.  Prints the reason on failure. */
int vm_kvm_open(struct vm *vm);

/*
 * Creates the VM, its RAM (mem bytes), irqchip and PIT.  max_cpus above 255
 * turns on KVM's 32-bit x2APIC IDs, so that CPUs beyond the xAPIC range can
 * be interrupt destinations.
 */
int vm_create(struct vm *vm, uint64_t mem, unsigned int max_cpus);

/* Host pointer for [gpa, gpa + len) if it lies inside one RAM region. */
void *vm_gpa(const struct vm *vm, uint64_t gpa, uint64_t len);

int vm_irq_line(struct vm *vm, unsigned int irq, int level);

/*
 * Requests the machine to stop with the given process exit status.  Safe from
 * any thread (not from a signal handler).  Returns true if this was the
 * first request.
 */
bool vm_request_stop(struct vm *vm, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline bool vm_stopping(struct vm *vm)
{
	return atomic_load_explicit(&vm->stopping, memory_order_acquire);
}

/* Closes every fd and unmaps RAM; safe on a partly created vm. */
void vm_destroy(struct vm *vm);

#endif
