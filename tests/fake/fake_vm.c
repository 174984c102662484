// SPDX-License-Identifier: GPL-2.0-only
/*
 * The API tests' machine (fake_vm.h): what `hotvm run` does to start the
 * controller, minus KVM.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fake_vm.h"
#include "hotplug_vmm.h"
#include "sim_guest.h"

/* The guest's MMIO, as a vCPU's exit would dispatch it. */
/*
 * The scripted guest's MMIO access: what KVM_EXIT_MMIO would bring, so it
 * is counted as one (vmexit.h), then dispatched.
 */
static int guest_mmio(struct fake_vm *fv, uint64_t addr, uint8_t *d,
		      unsigned int width, bool is_write)
{
	vmexit_count(&fv->vm.exits, VMEXIT_MMIO,
		     bus_find(&fv->mmio, addr, width));
	return bus_dispatch(&fv->mmio, addr, d, width, is_write);
}

static uint32_t bus_read(void *ctx, uint64_t addr, unsigned int width)
{
	uint8_t d[8] = { 0 };
	uint32_t v = 0;

	guest_mmio(ctx, addr, d, width, false);
	memcpy(&v, d, width < sizeof(v) ? width : sizeof(v));
	return v;
}

static void bus_write(void *ctx, uint64_t addr, unsigned int width, uint32_t v)
{
	uint8_t d[8] = { 0 };

	memcpy(d, &v, width < sizeof(v) ? width : sizeof(v));
	guest_mmio(ctx, addr, d, width, true);
}

static void bus_sipi(void *ctx, unsigned int cpu)
{
	(void)ctx;
	fake_vcpu_sipi(cpu);
}

/* The GED's edge, as ged_desc's: vm_irq_line() is wrapped (fake_vcpu.c). */
static int ged_pulse(void *ctx)
{
	int ret = vm_irq_line(ctx, ABI_GED_IRQ, 1);

	return ret ? ret : vm_irq_line(ctx, ABI_GED_IRQ, 0);
}

int fake_vm_guest_eject = HOTPLUG_GUEST_EJECT_ALLOW;
unsigned int fake_vm_prestage;
uint8_t *fake_vm_ring;
struct qga *fake_vm_agent;
bool fake_vm_linux_trace;

int fake_vm_guest_boot(struct fake_vm *fv, unsigned int boot)
{
	return sim_guest_boot(fv->max, boot,
			      &(struct sim_guest_bus){
				      .read = bus_read,
				      .write = bus_write,
				      .sipi = bus_sipi,
				      .ctx = fv,
			      });
}

int fake_vm_create(unsigned int max, unsigned int boot, int timeout_ms,
		   struct fake_vm **out)
{
	struct fake_vm *fv = calloc(1, sizeof(*fv));
	int ret;

	if (!fv)
		return -ENOMEM;
	fv->mmio = (struct bus)BUS_INIT_MMIO;
	fv->vm.exits.bus[VMEXIT_SPACE_MMIO] = &fv->mmio;
	pthread_mutex_init(&fv->vm.stop_lock, NULL);
	fv->vm.kvm_fd = fv->vm.vm_fd = -1;
	fv->vm.stop_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ret = fv->vm.stop_efd < 0 ? -errno : 0;
	if (!ret)
		ret = ged_init(&fv->ged, ged_pulse, &fv->vm);
	if (!ret)
		ret = hpregs_init(&fv->regs, &(struct hpregs_config){
						     .max_cpus = max,
						     .ring_mem = fake_vm_ring,
					     });
	if (!ret)
		ret = ged_register(&fv->ged, &fv->mmio, ABI_GED_MMIO);
	if (!ret)
		ret = hpregs_register(&fv->regs, &fv->mmio, ABI_CPUHP_MMIO);
	if (!ret)
		ret = hotplug_create(
			&(struct hotplug_config){
				.vm = &fv->vm,
				.mmio = &fv->mmio,
				.ged = &fv->ged,
				.regs = &fv->regs,
				.boot_cpus = boot,
				.max_cpus = max,
				.timeout_ms = timeout_ms,
				.guest_eject = (enum hotplug_guest_eject)
					fake_vm_guest_eject,
				.prestage = fake_vm_prestage,
				.agent = fake_vm_agent,
				.linux_trace = fake_vm_linux_trace,
			},
			&fv->hp);
	if (!ret)
		ret = hotplug_boot(fv->hp);
	fv->max = max;
	if (!ret)
		ret = fake_vm_guest_boot(fv, boot);
	if (ret) {
		fake_vm_destroy(fv);
		return ret;
	}
	*out = fv;
	return 0;
}

void fake_vm_destroy(struct fake_vm *fv)
{
	if (!fv)
		return;
	sim_guest_stop();
	hotplug_shutdown(fv->hp);
	hotplug_destroy(fv->hp);
	hpregs_destroy(&fv->regs);
	ged_destroy(&fv->ged);
	if (fv->vm.stop_efd >= 0)
		close(fv->vm.stop_efd);
	pthread_mutex_destroy(&fv->vm.stop_lock);
	free(fv);
}
