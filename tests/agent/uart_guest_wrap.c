// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interrupt line of a test with nothing but the agent's UART: every
 * vm_irq_line() is the port's (uart_guest.h).
 */
#include "uart_guest.h"

int __wrap_vm_irq_line(struct vm *vm, unsigned int irq, int level);
int __wrap_vm_irq_line(struct vm *vm, unsigned int irq, int level)
{
	return uart_guest_line(vm, irq, level);
}
