/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The machine the API tests run the real hotplug controller on: the
 * controller (vmm/hotplug), its host table and cpuhp, the real GED and
 * register block on an MMIO bus, fake vCPUs (fake_vcpu.c) and the scripted
 * guest (sim_guest.h) answering the register block.  No /dev/kvm.
 */
#ifndef HOTVM_TESTS_FAKE_VM_H
#define HOTVM_TESTS_FAKE_VM_H

#include "bus.h"
#include "cpuhp_regs.h"
#include "ged.h"
#include "vm.h"

struct hotplug;
struct qga;

struct fake_vm {
	struct vm vm; /* no KVM: only its stop request is real */
	struct bus mmio;
	struct ged ged; /* as the board sets them up (board_devices.c) */
	struct hpregs regs;
	struct hotplug *hp;
	unsigned int max;
};

/*
 * CPUs 0 .. @boot - 1 are booted, on both sides, of @max; every wait for
 * the guest gives up after @timeout_ms (a guest told not to answer).
 */
int fake_vm_create(unsigned int max, unsigned int boot, int timeout_ms,
		   struct fake_vm **out);
void fake_vm_destroy(struct fake_vm *fv);
/*
 * The scripted guest boots (again, after a reset's hotplug_boot()), with
 * CPUs 0 .. @boot - 1 present: it reports its boot CPU, brings the APs up.
 */
int fake_vm_guest_boot(struct fake_vm *fv, unsigned int boot);

/* --guest-eject of the next fake_vm_create(); ALLOW by default. */
extern int fake_vm_guest_eject;
/* --prestage of the next fake_vm_create(); 0 by default. */
extern unsigned int fake_vm_prestage;
/*
 * Set before fake_vm_create(): ABI_RING_SIZE bytes that stand for the
 * report ring's guest memory (hotvm/ring.h); NULL: the block has no ring.
 */
extern uint8_t *fake_vm_ring;
/* The guest agent of the next fake_vm_create(); none by default. */
extern struct qga *fake_vm_agent;
/* --agent-trace on for the next fake_vm_create(); off by default. */
extern bool fake_vm_linux_trace;
/* Where interrupt lines other than the GED's go (a test's UART). */
extern int (*fake_vm_irq_hook)(struct vm *vm, unsigned int irq, int level);

/* The scripted guest's SIPI to AP @id (fake_vcpu.c). */
void fake_vcpu_sipi(unsigned int id);

#endif
