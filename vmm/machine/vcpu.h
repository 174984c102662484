/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vCPUs: one fd and one thread each.  vCPU 0 is the BSP and starts at the
 * PVH or the Linux 64-bit entry; the others wait inside KVM for the guest's
 * INIT/SIPI.
 */
#ifndef HOTVM_VCPU_H
#define HOTVM_VCPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct bus;
struct kvm_lapic_state;
struct kvm_run;
struct vm;

/* Sent to a vCPU thread to kick it out of KVM_RUN. */
#define VCPU_KICK_SIGNAL SIGUSR1

struct vcpu {
	struct vm *vm;
	const struct bus *io;
	const struct bus *mmio; /* may be NULL: MMIO reads 0 */
	unsigned int id;
	uint32_t apic_id;
	unsigned int max_cpus; /* possible CPUs: one package each (cpuid.c) */
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	/*
	 * A thread to join: running, held or parked.  Atomic: queries read
	 * it (vcpu_is_parked()) while a reset's join clears it.
	 */
	_Atomic bool thread_started;
	/* This vCPU alone must stop (a reset); vm_stopping() stops all. */
	_Atomic bool stop;
	_Atomic int tid; /* the thread's tid while it exists, else 0 */
	/*
	 * Its thread has returned (stopped, or its guest ended the VM).
	 * Not tid == 0: a thread just started has not said its tid yet.
	 */
	_Atomic bool ended;
	_Atomic int held; /* 1: the thread waits outside KVM_RUN (vcpu_hold) */
	/*
	 * Bumped by every hold and release: what a held thread sleeps on,
	 * so that neither is lost however close together they come.
	 */
	_Atomic int hold_seq;
	_Atomic int paused; /* the hold_seq the held thread last saw */
	/*
	 * Removed (vcpu_park()): the thread is held, kept for the next
	 * vcpu_start*() of this vCPU, and runs nothing meanwhile.
	 */
	_Atomic bool parked;

	/*
	 * Set once the guest has started this vCPU (it left KVM's
	 * wait-for-INIT/SIPI state): the host's own view of "the guest runs
	 * it", which needs nothing from the guest.  on_start is called from
	 * the vCPU thread when that is first seen.
	 */
	_Atomic bool started;
	/*
	 * No timer kicks while it waits for its start: the guest says so
	 * itself (the tiny guest's report ring), and each kick would be an
	 * exit to user space (docs/design.md §6.8).  Any exit still shows
	 * the start.  Set before the thread starts.
	 */
	_Atomic bool unwatched;
	void (*on_start)(void *ctx, unsigned int id);
	void *start_ctx;
	struct kvm_lapic_state *lapic0; /* as created: what unpark restores */
};

/* Installs the (empty) kick signal handler; once per process. */
int vcpu_signal_init(void);

/* Creates the KVM vCPU, maps its run area and sets its CPUID. */
int vcpu_create(struct vcpu *vcpu, struct vm *vm, const struct bus *io,
		unsigned int id, unsigned int max_cpus);
/*
 * vcpu_create()'s last step (vcpu_regs.c): the new vCPU's CPUID, boot
 * MSRs and APIC mode, and its LAPIC as created.  0, or -errno, logged.
 */
int vcpu_init_regs(struct vcpu *vcpu);

/*
 * Makes a parked vCPU (fd and thread kept, the thread held) start afresh, as
 * after power-on: its LAPIC as created, the MSRs firmware leaves (KVM's
 * paravirtual ones off, so no old guest's clock page is written to), no
 * pending event, FPU reset.  @bsp: runnable, for an entry the caller sets
 * (vcpu_setup_*()); else it waits for the guest's INIT/SIPI.
 */
int vcpu_unpark(struct vcpu *vcpu, bool bsp);

/* PVH entry state: 32-bit flat protected mode, EBX = start_info. */
int vcpu_setup_pvh(struct vcpu *vcpu, uint64_t entry, uint64_t start_info);

/*
 * The Linux 64-bit boot protocol's selectors (__BOOT_CS, __BOOT_DS): the
 * GDT at gdt must hold flat 64-bit code and data descriptors there.
 */
#define VCPU_LONG64_CS	      0x10
#define VCPU_LONG64_DS	      0x18
#define VCPU_LONG64_GDT_LIMIT (VCPU_LONG64_DS + 7)

/*
 * 64-bit entry state: long mode, paging on with the page tables at cr3
 * (which must identity-map at least the kernel, boot_params and the command
 * line), CS and DS/ES/SS as in the GDT at gdt, interrupts off, RSI =
 * boot_params.  No stack: the kernel sets up its own.
 */
int vcpu_setup_long64(struct vcpu *vcpu, uint64_t entry, uint64_t boot_params,
		      uint64_t cr3, uint64_t gdt);

/*
 * Starts the vCPU's thread, named "vcpuN" (what tools that look for a
 * VMM's vCPU threads match), without waiting for it: its tid is set as
 * it starts, a moment later.  A parked vCPU's thread is taken again
 * instead: the same thread and tid, so the first KVM_RUN pays none of
 * KVM's cost for a vCPU whose thread changed (docs/design.md §4).
 */
int vcpu_start(struct vcpu *vcpu);

/*
 * As vcpu_start(), but returns once the thread's tid is known, and the
 * thread waits before its next KVM_RUN until vcpu_release(): whoever
 * places it (affinity, cgroup, scheduler) does so by that tid before the
 * guest can execute a single instruction on it.  vcpu_stop() also ends a
 * held thread; vcpu_park() keeps it held, parked again.
 */
int vcpu_start_held(struct vcpu *vcpu);
void vcpu_release(struct vcpu *vcpu);

/*
 * The vCPU is removed: its thread is held outside KVM_RUN (waiting in
 * futex, which every seccomp policy allows) and kept for the next
 * vcpu_start*(), instead of ended.  A thread that has ended already (a
 * stop, or its guest's triple fault) is joined.
 */
void vcpu_park(struct vcpu *vcpu);

/* The tid of the thread that runs this vCPU: 0 if none, or parked. */
static inline int vcpu_tid(const struct vcpu *vcpu)
{
	return atomic_load(&vcpu->parked) ? 0 : atomic_load(&vcpu->tid);
}

/* Its fd exists but no thread runs it: removed, kept for reuse. */
static inline bool vcpu_is_parked(const struct vcpu *vcpu)
{
	return vcpu->fd >= 0 &&
	       (!vcpu->thread_started || atomic_load(&vcpu->parked));
}

/*
 * Holds a running vCPU's thread outside KVM_RUN, so that another thread
 * may reset the vCPU (vcpu_unpark()) while its thread, its tid and so
 * whatever placed it (hooks) stay; vcpu_resume() lets it run again,
 * watching afresh for the guest to start it.  Returns at once if the
 * thread has ended.
 */
void vcpu_pause(struct vcpu *vcpu);
void vcpu_resume(struct vcpu *vcpu);

/*
 * On a vCPU thread: whether that vCPU has been told to leave KVM_RUN
 * (stopped, paused for a reset, parked, or the VM stopping).  A device
 * model that blocks in a system call on that thread (the console's write)
 * looks at it when the kick interrupts the call, and gives up instead of
 * retrying.  false on any other thread.
 */
bool vcpu_self_leaving(void);

/* Makes the thread leave KVM_RUN and notice vm_stopping(). */
void vcpu_kick(struct vcpu *vcpu);
/*
 * Joins a thread told to stop (its stop flag, or the VM stopping), kicking
 * it again every 10 ms until it has ended.
 */
void vcpu_join(struct vcpu *vcpu);
/*
 * Stops this vCPU's thread alone (kick with its stop flag) and joins it,
 * a parked one too.
 */
void vcpu_stop(struct vcpu *vcpu);
void vcpu_destroy(struct vcpu *vcpu);

#endif
