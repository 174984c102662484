// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interrupt controllers a guest finds at boot and after a reset
 * (vmm/machine/vm.c): both PICs masked, as firmware leaves them, since
 * hotvm has none and Linux on a hardware-reduced ACPI machine never
 * programs the PIC; a line raised before a reset is gone after it.
 * Found with Debian's Linux after systemctl reboot: KVM's PIC open at
 * vector base 0 delivered "unexpected #NM exception" (vector 7) at the
 * kernel's first local_irq_enable() (tests/linux/test_debian.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/kvm.h>

#include "check.h"
#include "vm.h"

static struct kvm_pic_state pic(struct vm *vm, unsigned int id)
{
	struct kvm_irqchip c = { .chip_id = id };

	CHECK_EQ(ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &c), 0);
	return c.chip.pic;
}

static void test_pic_masked(void)
{
	const char *why = check_kvm_missing(false);
	struct vm vm;

	if (why) {
		check_skip(why);
		return;
	}
	CHECK_EQ(vm_kvm_open(&vm), 0);
	CHECK_EQ(vm_create(&vm, 16 << 20, 1), 0);
	/* At boot. */
	CHECK_EQ(pic(&vm, KVM_IRQCHIP_PIC_MASTER).imr, 0xff);
	CHECK_EQ(pic(&vm, KVM_IRQCHIP_PIC_SLAVE).imr, 0xff);
	/* A device's level line up when the reset comes (COM1's, the agent's
	 * virtio-console's). */
	CHECK_EQ(vm_irq_line(&vm, 4, 1), 0);
	CHECK_EQ(vm_irq_line(&vm, 10, 1), 0);
	CHECK(pic(&vm, KVM_IRQCHIP_PIC_MASTER).irr & (1 << 4));
	CHECK(pic(&vm, KVM_IRQCHIP_PIC_SLAVE).irr & (1 << 2));
	CHECK_EQ(vm_irq_line(&vm, 4, 0), 0);
	CHECK_EQ(vm_irq_line(&vm, 10, 0), 0);
	/* After the reset: masked again, nothing pending. */
	CHECK_EQ(vm_reset_irqchip(&vm), 0);
	for (unsigned int id = KVM_IRQCHIP_PIC_MASTER;
	     id <= KVM_IRQCHIP_PIC_SLAVE; id++) {
		struct kvm_pic_state s = pic(&vm, id);

		printf("# PIC %u: imr 0x%02x irr 0x%02x isr 0x%02x base %u\n",
		       id, s.imr, s.irr, s.isr, s.irq_base);
		CHECK_EQ(s.imr, 0xff);
		CHECK_EQ(s.irr, 0);
		CHECK_EQ(s.isr, 0);
	}
	vm_destroy(&vm);
}

CHECK_MAIN(TEST(test_pic_masked))
