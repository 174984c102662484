// SPDX-License-Identifier: GPL-2.0-only
/*
 * The rows of the machine a config describes (board_devices.h): the
 * fixed table (board_devices.c), with --agent the agent's port after it
 * (board_agent.c: COM2 or a virtio-console), then one virtio-blk row per
 * --disk, one virtio-net row per --net, and with --vsock its row
 * (board_vsock.c); each row's state once set up, and the agent behind the
 * port (or, with --agent-channel vsock, on the vsock).
 */
#include "board_internal.h"
#include "hotvm/abi.h"

void *board_device_state(struct board *b, const struct dev_desc *desc)
{
	size_t n;
	const struct dev_instance *d = board_devices_for(b->cfg, &n);

	for (size_t i = 0; i < n; i++)
		if (d[i].desc == desc)
			return b->dev_state[i];
	return NULL;
}

struct qga *board_agent(struct board *b)
{
	struct qga *g = board_agent_of(
		&board_agent_desc, board_device_state(b, &board_agent_desc));

	if (!g)
		g = board_agent_of(
			&board_agent_vcon_desc,
			board_device_state(b, &board_agent_vcon_desc));
	return g ? g
		 : board_vsock_agent_of(
			   board_device_state(b, &board_vsock_desc));
}

static const struct dev_instance agent_vcon = {
	.desc = &board_agent_vcon_desc,
	.name = "VCON",
	.base = ABI_VCON_MMIO,
	.irq = ABI_VCON_IRQ,
	.uid = ABI_VIRTIO_MAX, /* LNRO0005's _UID after the disks' */
};

static const struct dev_instance agent_port = {
	.desc = &board_agent_desc,
	.name = "COM2",
	.base = ABI_COM2_PORT,
	.irq = ABI_COM2_IRQ,
	.uid = 1,
};

const struct dev_instance *board_devices_for(const struct board_config *c,
					     size_t *n)
{
	static struct dev_instance rows[BOARD_MAX_DEVICES];
	const struct dev_instance *d = board_devices(n);

	if (!c->agent && !c->nr_disks && !c->nr_nets && !c->vsock.path)
		return d;
	for (size_t i = 0; i < *n; i++)
		rows[i] = d[i];
	/* With --agent-channel vsock the agent is the vsock row's. */
	if (c->agent && c->agent_channel != BOARD_AGENT_VSOCK)
		rows[(*n)++] = c->agent_channel == BOARD_AGENT_COM2
				       ? agent_port
				       : agent_vcon;
	for (unsigned int i = 0; i < c->nr_disks && i < BOARD_MAX_DISKS; i++)
		rows[(*n)++] = board_disk_row(i);
	for (unsigned int i = 0; i < c->nr_nets && i < BOARD_MAX_NETS; i++)
		rows[(*n)++] = board_net_row(i);
	if (c->vsock.path)
		rows[(*n)++] = board_vsock_row;
	return rows;
}
