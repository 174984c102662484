// SPDX-License-Identifier: GPL-2.0-only
/*
 * The debug-exit port, as QEMU's isa-debug-exit: any write stops the VM
 * with status (v << 1) | 1, odd so it never looks like hotvm's own (even)
 * statuses.  Reads float.
 */
#include <string.h>

#include "debug_exit.h"
#include "ioport.h"
#include "vm.h"

static void debug_exit_io(void *opaque, uint16_t port, bool is_write,
			  uint8_t *data, unsigned int size)
{
	struct vm *vm = opaque;
	uint32_t v = 0;

	(void)port;
	if (!is_write) {
		memset(data, 0xff, size);
		return;
	}
	memcpy(&v, data, size);
	vm_request_stop(vm, debug_exit_status(v),
			"guest wrote 0x%x to the debug-exit port", v);
}

int debug_exit_register(struct ioport_bus *bus, struct vm *vm, uint16_t port)
{
	return ioport_register(bus, port, 1, debug_exit_io, vm);
}
