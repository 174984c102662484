// SPDX-License-Identifier: GPL-2.0-only
/*
 * --vsock's virtio-vsock as a device of the board's table (device.h):
 * the device (vmm/devices/vsock.c), its MMIO transport and its I/O
 * thread, and with --agent-channel vsock the guest agent on it, a
 * connection hotvm opens to the guest's port where qemu-ga listens
 * (`qemu-ga -m vsock-listen -p CID:PORT`).  A board-level device because
 * the agent joins the devices and agent layers (as board_agent.c's).
 * DSDT device VSCK, LNRO0005 as every virtio-MMIO device.
 */
#include <errno.h>
#include <stdio.h>

#include "board_internal.h"
#include "hotvm/abi.h"
#include "log.h"
#include "qga.h"
#include "virtio_blk.h"
#include "vsock.h"
#include "vm.h"

struct board_vsock {
	struct vsock vs;
	struct virtio_mmio mmio;
	struct qga qga;
	bool agent;
	char hint[96];
};

static int vsock_setup(void *state, const struct dev_instance *d,
		       const struct dev_env *env)
{
	struct board_vsock *a = state;
	const struct board_config *c = d->config(env->machine);
	const struct gmem mem = { .r = env->vm->regions,
				  .nr = env->vm->nr_regions };
	struct serial_host host;
	int ret = vsock_init(&a->vs, &c->vsock);

	if (ret) {
		pr_err("--vsock: %s", strerror(-ret));
		return ret;
	}
	a->agent = c->agent && c->agent_channel == BOARD_AGENT_VSOCK;
	if (a->agent) {
		ret = qga_init(&a->qga, &host);
		if (ret) {
			vsock_destroy(&a->vs);
			return ret;
		}
		vsock_host_attach(&a->vs, c->agent_vsock_port, &host);
		snprintf(a->hint, sizeof(a->hint),
			 "qemu-ga -m vsock-listen -p %llu:%u",
			 (unsigned long long)c->vsock.cid, c->agent_vsock_port);
		qga_attach_port(&a->qga, &(struct qga_port){
						 .send = vsock_host_send,
						 .flush = vsock_host_flush,
						 .ctx = &a->vs,
						 .hint = a->hint,
						 .bulk = true,
					 });
	}
	ret = virtio_mmio_init(&a->mmio, &a->vs.ops, &a->vs, &mem);
	if (!ret) {
		vsock_attach(&a->vs, &a->mmio);
		ret = vsock_io_start(&a->vs);
	}
	if (!ret) {
		ret = virtio_mmio_start(&a->mmio, env->vm, env->mmio, d->base,
					d->irq, d->name);
		if (ret)
			vsock_io_stop(&a->vs);
	}
	if (ret) {
		virtio_mmio_destroy(&a->mmio);
		if (a->agent)
			qga_destroy(&a->qga);
		vsock_destroy(&a->vs);
	}
	return ret;
}

/* The vCPUs have stopped: the device thread, the sockets, the agent. */
static void vsock_teardown(void *state)
{
	struct board_vsock *a = state;

	virtio_mmio_destroy(&a->mmio);
	vsock_io_stop(&a->vs);
	if (a->agent)
		qga_destroy(&a->qga);
	vsock_destroy(&a->vs);
}

/* The VM's reset: every connection closes. */
static void vsock_reset_dev(void *state)
{
	struct board_vsock *a = state;

	virtio_mmio_reset(&a->mmio);
}

static int vsock_aml(struct aml_buf *b, const struct dev_instance *d,
		     const struct dev_table_env *env)
{
	return vblk_desc.aml(b, d,
			     env); /* to the guest, a virtio-MMIO device */
}

const struct dev_desc board_vsock_desc = {
	.name = "virtio-vsock",
	.bus = DEV_BUS_MMIO,
	.size = VIRTIO_MMIO_SIZE,
	.own_window = true,
	.state_size = sizeof(struct board_vsock),
	.setup = vsock_setup,
	.teardown = vsock_teardown,
	.reset = vsock_reset_dev,
	.aml = vsock_aml,
};

/* The whole config: the device and, with --agent-channel vsock, the agent. */
static const void *vsock_config(const void *machine)
{
	return machine;
}

const struct dev_instance board_vsock_row = {
	.desc = &board_vsock_desc,
	.name = "VSCK",
	.base = ABI_VSOCK_MMIO,
	.irq = ABI_VSOCK_IRQ,
	.uid = ABI_VIRTIO_MAX + 1, /* LNRO0005's _UID after VCON's */
	.config = vsock_config,
};

struct qga *board_vsock_agent_of(void *state)
{
	struct board_vsock *a = state;

	return a && a->agent ? &a->qga : NULL;
}
