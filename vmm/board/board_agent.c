// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest agent's port as a device of the board's table (device.h):
 * a virtio-console whose one port is `org.qemu.guest_agent.0` (what
 * Debian's qemu-guest-agent unit waits for), or a 16550 (the UART model,
 * described as the console's is; --agent-channel com2), whose host end is
 * the agent protocol (vmm/agent) instead of a file.  A board-level device
 * because it joins two layers: devices' port and the agent above it.
 * With --agent it is one more row after board_devices()'s (board_rows.c);
 * the controller, --agent-socket (qga_mux.h) and the periodic check of
 * Linux's CPUs (board_setup.c) get the agent behind it (board_agent()).
 */

#include "board_internal.h"
#include "hotvm/abi.h"
#include "qga.h"
#include "serial.h"
#include "virtio_blk.h"
#include "virtio_console.h"
#include "vm.h"

struct board_agent {
	struct serial port;
	struct qga qga;
};

static int agent_setup(void *state, const struct dev_instance *d,
		       const struct dev_env *env)
{
	struct board_agent *a = state;
	struct serial_host host;
	int ret = qga_init(&a->qga, &host);

	if (ret)
		return ret;
	serial_open_callback(&a->port, &host, env->vm, d->irq);
	ret = dev_registered(
		d, serial_register(&a->port, env->io, (uint16_t)d->base));
	if (ret) {
		serial_close(&a->port);
		qga_destroy(&a->qga);
		return ret;
	}
	qga_attach(&a->qga, &a->port);
	return 0;
}

/* After the vCPUs have stopped: their port accesses call into the agent. */
static void agent_teardown(void *state)
{
	struct board_agent *a = state;

	serial_close(&a->port);
	qga_destroy(&a->qga);
}

static int agent_aml(struct aml_buf *b, const struct dev_instance *d,
		     const struct dev_table_env *env)
{
	return serial_desc.aml(b, d, env); /* to the guest, a 16550 */
}

const struct dev_desc board_agent_desc = {
	.name = "agent",
	.bus = DEV_BUS_IO,
	.size = SERIAL_PORTS,
	.state_size = sizeof(struct board_agent),
	.setup = agent_setup,
	.teardown = agent_teardown,
	.aml = agent_aml,
};

/* The port named so that the guest's udev starts its qemu-ga on it. */
#define AGENT_PORT_NAME "org.qemu.guest_agent.0"

struct board_agent_vcon {
	struct vcon con;
	struct virtio_mmio mmio;
	struct qga qga;
};

static int agent_vcon_setup(void *state, const struct dev_instance *d,
			    const struct dev_env *env)
{
	struct board_agent_vcon *a = state;
	const struct gmem mem = { .r = env->vm->regions,
				  .nr = env->vm->nr_regions };
	struct serial_host host;
	int ret = qga_init(&a->qga, &host);

	if (ret)
		return ret;
	ret = vcon_init(&a->con, AGENT_PORT_NAME, &host);
	if (!ret)
		ret = virtio_mmio_init(&a->mmio, &a->con.ops, &a->con, &mem);
	if (ret) {
		qga_destroy(&a->qga);
		return ret;
	}
	vcon_attach(&a->con, &a->mmio);
	qga_attach_port(&a->qga,
			&(struct qga_port){
				.send = vcon_send,
				.flush = vcon_flush,
				.ctx = &a->con,
				.hint = "qemu-ga -m virtio-serial -p "
					"/dev/virtio-ports/" AGENT_PORT_NAME,
				.bulk = true,
			});
	ret = virtio_mmio_start(&a->mmio, env->vm, env->mmio, d->base, d->irq,
				d->name);
	if (ret) {
		virtio_mmio_destroy(&a->mmio);
		vcon_destroy(&a->con);
		qga_destroy(&a->qga);
	}
	return ret;
}

/* The vCPUs have stopped: the device thread, then the agent. */
static void agent_vcon_teardown(void *state)
{
	struct board_agent_vcon *a = state;

	virtio_mmio_destroy(&a->mmio);
	vcon_destroy(&a->con);
	qga_destroy(&a->qga);
}

/* The VM's reset: what the guest was not given is dropped. */
static void agent_vcon_reset(void *state)
{
	struct board_agent_vcon *a = state;

	virtio_mmio_reset(&a->mmio);
}

static int agent_vcon_aml(struct aml_buf *b, const struct dev_instance *d,
			  const struct dev_table_env *env)
{
	return vblk_desc.aml(b, d,
			     env); /* to the guest, a virtio-MMIO device */
}

const struct dev_desc board_agent_vcon_desc = {
	.name = "agent-virtio",
	.bus = DEV_BUS_MMIO,
	.size = VIRTIO_MMIO_SIZE,
	.own_window = true,
	.state_size = sizeof(struct board_agent_vcon),
	.setup = agent_vcon_setup,
	.teardown = agent_vcon_teardown,
	.reset = agent_vcon_reset,
	.aml = agent_vcon_aml,
};

struct qga *board_agent_of(const struct dev_desc *desc, void *state)
{
	if (!state)
		return NULL;
	if (desc == &board_agent_desc)
		return &((struct board_agent *)state)->qga;
	if (desc == &board_agent_vcon_desc)
		return &((struct board_agent_vcon *)state)->qga;
	return NULL;
}
