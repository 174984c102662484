/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One KVM virtual machine: the /dev/kvm and VM fds, guest RAM, the in-kernel
 * irqchip, and the machine-wide stop request that every thread can raise and
 * the main thread waits for.
 */
#ifndef HOTVM_VM_H
#define HOTVM_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmexit.h"

#define VM_MIN_MEMORY (8ULL << 20)
/* RAM above this goes above 4 GiB: the gap holds the IOAPIC and LAPIC. */
#define VM_LOW_RAM_MAX	0xc0000000ULL
#define VM_HIGH_RAM_GPA 0x100000000ULL
#define VM_MAX_MEMORY	(1ULL << 40)
#define VM_MAX_REGIONS	2

struct kvm_cpuid2;
struct kvm_irqchip;
struct kvm_pit_state2;

/*
 * Why the machine stops or resets, as QEMU's QMP events name it
 * (ShutdownCause): vm_cause_name() gives the word, vm_cause_guest()
 * whether the guest asked.
 */
enum vm_cause {
	VM_CAUSE_NONE,
	VM_CAUSE_HOST_ERROR,
	VM_CAUSE_HOST_QMP_QUIT,
	VM_CAUSE_HOST_QMP_SYSTEM_RESET,
	VM_CAUSE_HOST_SIGNAL,
	VM_CAUSE_GUEST_SHUTDOWN,
	VM_CAUSE_GUEST_RESET,
	VM_CAUSE_NR,
};

const char *vm_cause_name(enum vm_cause c);
bool vm_cause_guest(enum vm_cause c);

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

	/*
	 * The in-kernel irqchip (PIC, IOAPIC) and PIT as created: what a
	 * reset puts back (vm_reset_irqchip()).  NULL if not saved.
	 */
	struct kvm_irqchip *irqchip0;
	struct kvm_pit_state2 *pit0;

	/* Stop request: the first one wins, later ones are ignored. */
	atomic_bool stopping;
	pthread_mutex_t stop_lock;
	int stop_status;
	enum vm_cause stop_cause;
	char stop_reason[160];
	/*
	 * eventfd, readable once a stop, a reset or other work for the
	 * main thread is requested (vm_notify()).
	 */
	int stop_efd;
	/* --no-reboot: a reset request stops the machine instead. */
	bool no_reboot;
	_Atomic int reset_cause; /* a pending reset's vm_cause, or NONE */
	/* Every vCPU's exits to user space (vmexit.h). */
	struct vmexit_counters exits;
};

/* Opens /dev/kvm and checks the API.  Prints the reason on failure. */
int vm_kvm_open(struct vm *vm);

/*
 * Creates the VM, its RAM (mem bytes), irqchip and PIT.  max_cpus above 255
 * turns on KVM's 32-bit x2APIC IDs, so that CPUs beyond the xAPIC range can
 * be interrupt destinations.
 */
int vm_create(struct vm *vm, uint64_t mem, unsigned int max_cpus);

int vm_irq_line(struct vm *vm, unsigned int irq, int level);

/*
 * A guest write of @len bytes of value @match at MMIO @addr signals the
 * eventfd @fd in the kernel, with no exit to user space (KVM_IOEVENTFD);
 * any other value still exits.  0 or -errno.  Released with the VM.
 */
int vm_ioeventfd(struct vm *vm, uint64_t addr, unsigned int len, uint64_t match,
		 int fd);
/*
 * Each write to the eventfd @fd pulses @gsi in the in-kernel irqchip (1
 * then 0: an edge), from any thread with no ioctl (KVM_IRQFD).  KVM drops
 * it when the fd is closed.  0 or -errno.
 */
int vm_irqfd(struct vm *vm, unsigned int gsi, int fd);

/*
 * Requests the machine to stop with the given process exit status.  Safe from
 * any thread (not from a signal handler).  Returns true if this was the
 * first request.
 */
bool vm_request_stop(struct vm *vm, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same, saying why (the QMP SHUTDOWN event's reason). */
bool vm_shutdown(struct vm *vm, int status, enum vm_cause cause,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * Asks the main thread to reset the machine (vm_take_reset()); with
 * no_reboot it stops it instead, with @status and the reason.  Any thread.
 */
void vm_request_reset(struct vm *vm, enum vm_cause cause, int status,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The pending reset's cause, cleared; VM_CAUSE_NONE if none. */
enum vm_cause vm_take_reset(struct vm *vm);

/* Wakes the main thread to look at its work (stop_efd). */
void vm_notify(struct vm *vm);

/* Puts the irqchip and PIT back as vm_create() left them. */
int vm_reset_irqchip(struct vm *vm);

static inline bool vm_stopping(struct vm *vm)
{
	return atomic_load_explicit(&vm->stopping, memory_order_acquire);
}

/* Closes every fd and unmaps RAM; safe on a partly created vm. */
void vm_destroy(struct vm *vm);

#endif
