// SPDX-License-Identifier: GPL-2.0-only
/*
 * The debug-exit port, as QEMU's isa-debug-exit: any write stops the VM
 * with status (v << 1) | 1, odd so it never looks like hotvm's own (even)
 * statuses.  Reads float.
 */
#include "debug_exit.h"
#include "bus.h"
#include "vm.h"

static int debug_exit_io(void *opaque, uint64_t offset, uint64_t *data,
			 unsigned int len, bool is_write)
{
	struct vm *vm = opaque;
	uint32_t v = (uint32_t)*data;

	(void)offset;
	(void)len;
	if (!is_write) {
		*data = ~0ULL;
		return 0;
	}
	vm_request_stop(vm, debug_exit_status(v),
			"guest wrote 0x%x to the debug-exit port", v);
	return 0;
}

int debug_exit_register(struct bus *bus, struct vm *vm, uint16_t port)
{
	return bus_register(bus, &(struct bus_dev){
					 .name = "debug-exit",
					 .base = port,
					 .len = 1,
					 .fn = debug_exit_io,
					 .ctx = vm,
				 });
}

static int debug_exit_setup(void *state, const struct dev_instance *d,
			    const struct dev_env *env)
{
	(void)state;
	return dev_registered(
		d, debug_exit_register(env->io, env->vm, (uint16_t)d->base));
}

const struct dev_desc debug_exit_desc = {
	.name = "debug-exit",
	.bus = DEV_BUS_IO,
	.size = 1,
	.setup = debug_exit_setup,
};
