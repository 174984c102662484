// SPDX-License-Identifier: GPL-2.0-only
/* The KVM VM: fds, guest RAM, in-kernel irqchip, the stop request. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "hotvm/abi.h"
#include "log.h"
#include "vm.h"

static void vm_save_irqchip(struct vm *vm);

/* Where KVM may put its VMX real-mode TSS and identity map: above RAM. */
#define VM_TSS_ADDR	     0xfffbd000UL
#define VM_IDENTITY_MAP_ADDR 0xfffbc000UL

static int get_supported_cpuid(struct vm *vm)
{
	/* Grow until KVM stops answering E2BIG. */
	for (unsigned int nent = 64; nent <= 4096; nent *= 2) {
		struct kvm_cpuid2 *c;

		c = calloc(1, sizeof(*c) + nent * sizeof(c->entries[0]));
		if (!c)
			return -ENOMEM;
		c->nent = nent;
		if (!ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, c)) {
			vm->cpuid = c;
			return 0;
		}
		free(c);
		if (errno != E2BIG)
			return -errno;
	}
	return -E2BIG;
}

int vm_kvm_open(struct vm *vm)
{
	int ret, vcpus, ids;

	*vm = (struct vm){ .kvm_fd = -1, .vm_fd = -1, .stop_efd = -1 };
	pthread_mutex_init(&vm->stop_lock, NULL);
	vm->stop_efd = eventfd(0, EFD_CLOEXEC);
	if (vm->stop_efd < 0) {
		ret = -errno;
		pr_err("cannot create an eventfd: %s", strerror(errno));
		return ret;
	}
	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0) {
		ret = -errno;
		pr_err("cannot open /dev/kvm: %s; load the kvm module and "
		       "check the device's permissions",
		       strerror(errno));
		return ret;
	}
	ret = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (ret != KVM_API_VERSION) {
		pr_err("/dev/kvm speaks KVM API %d, hotvm needs %d; use a "
		       "newer kernel",
		       ret, KVM_API_VERSION);
		return -ENOTSUP;
	}
	vcpus = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	if (vcpus <= 0)
		vcpus = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION,
			      KVM_CAP_NR_VCPUS);
	if (vcpus <= 0)
		vcpus = 4; /* what KVM guarantees without the capability */
	ids = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPU_ID);
	if (ids > 0 && ids < vcpus)
		vcpus = ids;
	vm->max_vcpus = (unsigned int)vcpus;

	ret = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (ret < (int)sizeof(struct kvm_run)) {
		pr_err("/dev/kvm: bad vCPU mmap size %d; this KVM is not "
		       "usable",
		       ret);
		return -ENOTSUP;
	}
	vm->run_size = (size_t)ret;

	ret = get_supported_cpuid(vm);
	if (ret) {
		pr_err("/dev/kvm: KVM_GET_SUPPORTED_CPUID failed: %s",
		       strerror(-ret));
		return ret;
	}
	return 0;
}

static int vm_add_region(struct vm *vm, uint64_t gpa, uint64_t size,
			 uint8_t *hva)
{
	struct kvm_userspace_memory_region r = {
		.slot = vm->nr_regions,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};

	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r))
		return -errno;
	vm->regions[vm->nr_regions++] = (struct vm_region){
		.gpa = gpa,
		.size = size,
		.hva = hva,
	};
	return 0;
}

/*
 * Intel needs the TSS and the identity map below 4 GiB before the first
 * vCPU; AMD ignores them.  NULL, or the ioctl that failed (errno set).
 */
static const char *vm_set_low_areas(struct vm *vm)
{
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, VM_TSS_ADDR))
		return "KVM_SET_TSS_ADDR";
	if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION,
		  KVM_CAP_SET_IDENTITY_MAP_ADDR) > 0) {
		uint64_t addr = VM_IDENTITY_MAP_ADDR;

		if (ioctl(vm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &addr))
			return "KVM_SET_IDENTITY_MAP_ADDR";
	}
	return NULL;
}

/*
 * The in-kernel irqchip (IOAPIC, PICs, local APICs), with KVM's 32-bit
 * x2APIC IDs (and no 0xff broadcast quirk) when APIC IDs pass 255; the
 * PIT where KVM has one.  NULL, or the ioctl that failed (errno set).
 */
static const char *vm_create_irqchips(struct vm *vm, unsigned int max_cpus)
{
	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0))
		return "KVM_CREATE_IRQCHIP";
	if (max_cpus > 255) {
		struct kvm_enable_cap cap = {
			.cap = KVM_CAP_X2APIC_API,
			.args[0] = KVM_X2APIC_API_USE_32BIT_IDS |
				   KVM_X2APIC_API_DISABLE_BROADCAST_QUIRK,
		};

		if (ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap))
			return "KVM_ENABLE_CAP(KVM_CAP_X2APIC_API)";
	}
	if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_PIT2) > 0) {
		struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };

		if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit))
			return "KVM_CREATE_PIT2";
	}
	return NULL;
}

int vm_create(struct vm *vm, uint64_t mem, unsigned int max_cpus)
{
	uint64_t low = mem < VM_LOW_RAM_MAX ? mem : VM_LOW_RAM_MAX;
	const char *step;
	void *p;
	int ret;

	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		step = "KVM_CREATE_VM";
		goto fail;
	}
	step = vm_set_low_areas(vm);
	if (step)
		goto fail;

	/* Untouched pages cost nothing: the guest's RAM is demand-zero. */
	p = mmap(NULL, mem, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		pr_err("cannot allocate %llu MiB of guest memory: %s; use a "
		       "smaller --memory",
		       (unsigned long long)(mem >> 20), strerror(errno));
		return ret;
	}
	vm->ram = p;
	vm->ram_size = mem;
	ret = vm_add_region(vm, 0, low, vm->ram);
	if (!ret && mem > low)
		ret = vm_add_region(vm, VM_HIGH_RAM_GPA, mem - low,
				    vm->ram + low);
	if (ret) {
		errno = -ret;
		step = "KVM_SET_USER_MEMORY_REGION";
		goto fail;
	}

	step = vm_create_irqchips(vm, max_cpus);
	if (step)
		goto fail;
	vm_save_irqchip(vm);
	return 0;

fail:
	ret = -errno;
	pr_err("cannot create the VM: %s: %s", step, strerror(errno));
	return ret;
}

int vm_irq_line(struct vm *vm, unsigned int irq, int level)
{
	struct kvm_irq_level l = { .irq = irq, .level = level };

	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &l) ? -errno : 0;
}

int vm_ioeventfd(struct vm *vm, uint64_t addr, unsigned int len, uint64_t match,
		 int fd)
{
	struct kvm_ioeventfd e = {
		.datamatch = match,
		.addr = addr,
		.len = len,
		.fd = fd,
		.flags = KVM_IOEVENTFD_FLAG_DATAMATCH,
	};

	return ioctl(vm->vm_fd, KVM_IOEVENTFD, &e) ? -errno : 0;
}

int vm_irqfd(struct vm *vm, unsigned int gsi, int fd)
{
	struct kvm_irqfd f = { .fd = (uint32_t)fd, .gsi = gsi };

	return ioctl(vm->vm_fd, KVM_IRQFD, &f) ? -errno : 0;
}

static const char *const vm_cause_names[VM_CAUSE_NR] = {
	[VM_CAUSE_NONE] = "none",
	[VM_CAUSE_HOST_ERROR] = "host-error",
	[VM_CAUSE_HOST_QMP_QUIT] = "host-qmp-quit",
	[VM_CAUSE_HOST_QMP_SYSTEM_RESET] = "host-qmp-system-reset",
	[VM_CAUSE_HOST_SIGNAL] = "host-signal",
	[VM_CAUSE_GUEST_SHUTDOWN] = "guest-shutdown",
	[VM_CAUSE_GUEST_RESET] = "guest-reset",
};

const char *vm_cause_name(enum vm_cause c)
{
	return c < VM_CAUSE_NR ? vm_cause_names[c] : "none";
}

bool vm_cause_guest(enum vm_cause c)
{
	return c == VM_CAUSE_GUEST_SHUTDOWN || c == VM_CAUSE_GUEST_RESET;
}

void vm_notify(struct vm *vm)
{
	uint64_t one = 1;

	/* Only fails if the counter overflows: the reader drains it. */
	if (write(vm->stop_efd, &one, sizeof(one)) < 0)
		return;
}

static bool vm_vstop(struct vm *vm, int status, enum vm_cause cause,
		     const char *fmt, va_list ap)
{
	bool first;

	pthread_mutex_lock(&vm->stop_lock);
	first = !vm_stopping(vm);
	if (first) {
		vm->stop_status = status;
		vm->stop_cause = cause;
		vsnprintf(vm->stop_reason, sizeof(vm->stop_reason), fmt, ap);
		atomic_store_explicit(&vm->stopping, true,
				      memory_order_release);
	}
	pthread_mutex_unlock(&vm->stop_lock);
	if (first)
		vm_notify(vm);
	return first;
}

bool vm_request_stop(struct vm *vm, int status, const char *fmt, ...)
{
	va_list ap;
	bool first;

	va_start(ap, fmt);
	first = vm_vstop(vm, status,
			 status == ABI_STATUS_VMFAIL ? VM_CAUSE_HOST_ERROR
						     : VM_CAUSE_NONE,
			 fmt, ap);
	va_end(ap);
	return first;
}

bool vm_shutdown(struct vm *vm, int status, enum vm_cause cause,
		 const char *fmt, ...)
{
	va_list ap;
	bool first;

	va_start(ap, fmt);
	first = vm_vstop(vm, status, cause, fmt, ap);
	va_end(ap);
	return first;
}

void vm_request_reset(struct vm *vm, enum vm_cause cause, int status,
		      const char *fmt, ...)
{
	int none = VM_CAUSE_NONE;
	va_list ap;

	if (vm->no_reboot) {
		va_start(ap, fmt);
		vm_vstop(vm, status, cause, fmt, ap);
		va_end(ap);
		return;
	}
	/* One reset at a time: a second request while one is pending is it. */
	if (atomic_compare_exchange_strong(&vm->reset_cause, &none, (int)cause))
		vm_notify(vm);
}

enum vm_cause vm_take_reset(struct vm *vm)
{
	return (enum vm_cause)atomic_exchange(&vm->reset_cause, VM_CAUSE_NONE);
}

/*
 * The state the guest finds at boot and after a reset: PIC and IOAPIC
 * with every line masked, the PIT idle.  KVM creates the IOAPIC masked
 * but the PIC open (IMR 0, vector base 0), and the LAPIC's LINT0 in
 * ExtINT mode: a PIC input raised before Linux masks LINT0 (a device's
 * level line still up from before a reset) came in as a low vector, an
 * exception (Debian's Linux after systemctl reboot: "unexpected #NM
 * exception" at its first local_irq_enable()).  hotvm has no firmware to
 * mask the PIC, and Linux on a hardware-reduced ACPI machine never
 * touches it, so it is masked here, as firmware leaves it.
 */
static void vm_save_irqchip(struct vm *vm)
{
	vm->irqchip0 = calloc(3, sizeof(*vm->irqchip0));
	if (!vm->irqchip0)
		return;
	for (unsigned int i = 0; i < 3; i++) {
		vm->irqchip0[i].chip_id = i;
		if (ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &vm->irqchip0[i])) {
			free(vm->irqchip0);
			vm->irqchip0 = NULL;
			return;
		}
		if (i == KVM_IRQCHIP_PIC_MASTER || i == KVM_IRQCHIP_PIC_SLAVE) {
			vm->irqchip0[i].chip.pic.imr = 0xff;
			if (ioctl(vm->vm_fd, KVM_SET_IRQCHIP, &vm->irqchip0[i]))
				pr_err("cannot mask the PIC: %s",
				       strerror(errno));
		}
	}
	vm->pit0 = calloc(1, sizeof(*vm->pit0));
	if (vm->pit0 && ioctl(vm->vm_fd, KVM_GET_PIT2, vm->pit0)) {
		free(vm->pit0);
		vm->pit0 = NULL;
	}
}

int vm_reset_irqchip(struct vm *vm)
{
	if (!vm->irqchip0)
		return -ENODATA;
	for (unsigned int i = 0; i < 3; i++)
		if (ioctl(vm->vm_fd, KVM_SET_IRQCHIP, &vm->irqchip0[i]))
			return -errno;
	if (vm->pit0 && ioctl(vm->vm_fd, KVM_SET_PIT2, vm->pit0))
		return -errno;
	return 0;
}

void vm_destroy(struct vm *vm)
{
	if (vm->ram)
		munmap(vm->ram, vm->ram_size);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	if (vm->stop_efd >= 0)
		close(vm->stop_efd);
	free(vm->cpuid);
	free(vm->irqchip0);
	free(vm->pit0);
	pthread_mutex_destroy(&vm->stop_lock);
	*vm = (struct vm){ .kvm_fd = -1, .vm_fd = -1, .stop_efd = -1 };
}
