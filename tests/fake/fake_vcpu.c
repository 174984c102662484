// SPDX-License-Identifier: GPL-2.0-only
/*
 * The machine layer's vCPU functions (vmm/machine/vcpu.h) without KVM, for
 * the API tests: linked before the machine library, so its vcpu.o is never
 * pulled.  A vCPU here has no fd and no thread; "running" is a flag and a
 * made-up thread id (1000 + id).  As with KVM, the boot vCPU runs from its
 * start and an AP only once the guest sends it a SIPI (fake_vcpu_sipi(),
 * from the scripted guest's kick).
 *
 * And the GED's interrupt line: vm_irq_line() is wrapped at link time
 * (-Wl,--wrap=vm_irq_line), so the edge reaches the scripted guest.
 */
#include <errno.h>
#include <stdio.h>

#include "fake_vm.h"
#include "hotvm/abi.h"
#include "sim_guest.h"
#include "vcpu.h"
#include "vm.h"

#define FAKE_MAX_VCPUS 1024 /* KVM's limit, and hotvm's */
#define FAKE_TID_BASE  1000

/* Every created vCPU by id: the guest's SIPI finds its target here. */
static struct vcpu *vcpus[FAKE_MAX_VCPUS];
static pthread_mutex_t vcpus_lock = PTHREAD_MUTEX_INITIALIZER;

int vcpu_create(struct vcpu *vcpu, struct vm *vm, const struct bus *io,
		unsigned int id, unsigned int max_cpus)
{
	if (id >= FAKE_MAX_VCPUS)
		return -EINVAL;
	/*
	 * Field by field, as the real vcpu_create(): a query reads tid and
	 * parked atomically at any time, and one struct assignment would
	 * write them plainly under it (ThreadSanitizer's report in
	 * hotplug-ring-controller).
	 */
	vcpu->vm = vm;
	vcpu->io = io;
	vcpu->mmio = NULL;
	vcpu->id = id;
	vcpu->apic_id = id;
	vcpu->max_cpus = max_cpus;
	vcpu->run = NULL;
	vcpu->thread_started = false;
	vcpu->on_start = NULL;
	vcpu->start_ctx = NULL;
	vcpu->lapic0 = NULL;
	atomic_store(&vcpu->stop, false);
	atomic_store(&vcpu->tid, 0);
	atomic_store(&vcpu->ended, false);
	atomic_store(&vcpu->held, 0);
	atomic_store(&vcpu->hold_seq, 0);
	atomic_store(&vcpu->paused, 0);
	atomic_store(&vcpu->parked, false);
	atomic_store(&vcpu->started, false);
	atomic_store(&vcpu->unwatched, false);
	/* Not an open fd: the controller only asks whether it exists. */
	vcpu->fd = FAKE_TID_BASE + (int)id;
	pthread_mutex_lock(&vcpus_lock);
	vcpus[id] = vcpu;
	pthread_mutex_unlock(&vcpus_lock);
	return 0;
}

void vcpu_pause(struct vcpu *vcpu)
{
	(void)vcpu;
}

/* A fresh start: the scripted guest's next SIPI starts it again. */
void vcpu_resume(struct vcpu *vcpu)
{
	atomic_store(&vcpu->started, false);
}

int vcpu_unpark(struct vcpu *vcpu, bool bsp)
{
	(void)vcpu;
	(void)bsp;
	return 0;
}

int vcpu_setup_pvh(struct vcpu *vcpu, uint64_t entry, uint64_t start_info)
{
	(void)vcpu;
	(void)entry;
	(void)start_info;
	return 0;
}

int vcpu_setup_long64(struct vcpu *vcpu, uint64_t entry, uint64_t boot_params,
		      uint64_t cr3, uint64_t gdt)
{
	(void)vcpu;
	(void)entry;
	(void)boot_params;
	(void)cr3;
	(void)gdt;
	return 0;
}

static void mark_started(struct vcpu *vcpu)
{
	if (atomic_exchange(&vcpu->started, true))
		return;
	if (vcpu->on_start)
		vcpu->on_start(vcpu->start_ctx, vcpu->id);
}

/*
 * The thread "exists" (it has a tid) but runs nothing until released; a
 * parked one is taken again, with its tid.
 */
int vcpu_start_held(struct vcpu *vcpu)
{
	if (vcpu->thread_started && atomic_exchange(&vcpu->parked, false)) {
		atomic_store(&vcpu->started, false);
		atomic_store(&vcpu->held, 1);
		return 0;
	}
	atomic_store(&vcpu->stop, false);
	atomic_store(&vcpu->started, false);
	atomic_store(&vcpu->held, 1);
	vcpu->thread_started = true;
	atomic_store(&vcpu->tid, FAKE_TID_BASE + (int)vcpu->id);
	return 0;
}

void vcpu_release(struct vcpu *vcpu)
{
	if (!atomic_exchange(&vcpu->held, 0))
		return;
	/* The boot vCPU runs from the start; an AP waits for its SIPI. */
	if (vcpu->id == 0)
		mark_started(vcpu);
}

int vcpu_start(struct vcpu *vcpu)
{
	int ret = vcpu_start_held(vcpu);

	if (!ret)
		vcpu_release(vcpu);
	return ret;
}

void fake_vcpu_sipi(unsigned int id)
{
	struct vcpu *vcpu;

	pthread_mutex_lock(&vcpus_lock);
	vcpu = id < FAKE_MAX_VCPUS ? vcpus[id] : NULL;
	pthread_mutex_unlock(&vcpus_lock);
	/* A SIPI to a vCPU that is not running is lost, as with KVM. */
	if (vcpu && vcpu_tid(vcpu))
		mark_started(vcpu);
}

void vcpu_kick(struct vcpu *vcpu)
{
	(void)vcpu;
}

/* No thread here runs a vCPU. */
bool vcpu_self_leaving(void)
{
	return false;
}

/* Kept, held: it runs nothing until vcpu_start*() takes it again. */
void vcpu_park(struct vcpu *vcpu)
{
	if (!vcpu->thread_started)
		return;
	atomic_store(&vcpu->held, 1);
	atomic_store(&vcpu->parked, true);
}

void vcpu_join(struct vcpu *vcpu)
{
	vcpu->thread_started = false;
	atomic_store(&vcpu->parked, false);
	atomic_store(&vcpu->tid, 0);
}

void vcpu_stop(struct vcpu *vcpu)
{
	if (!vcpu->thread_started)
		return;
	atomic_store(&vcpu->stop, true);
	vcpu_join(vcpu);
}

void vcpu_destroy(struct vcpu *vcpu)
{
	pthread_mutex_lock(&vcpus_lock);
	if (vcpu->id < FAKE_MAX_VCPUS && vcpus[vcpu->id] == vcpu)
		vcpus[vcpu->id] = NULL;
	pthread_mutex_unlock(&vcpus_lock);
	vcpu->fd = -1;
}

int __wrap_vm_irq_line(struct vm *vm, unsigned int irq, int level);

int (*fake_vm_irq_hook)(struct vm *vm, unsigned int irq, int level);

/* The GED's edge goes to the guest; any other line to the hook, if any. */
int __wrap_vm_irq_line(struct vm *vm, unsigned int irq, int level)
{
	if (irq != ABI_GED_IRQ)
		return fake_vm_irq_hook ? fake_vm_irq_hook(vm, irq, level)
					: -EINVAL;
	if (level)
		sim_guest_interrupt();
	return 0;
}
