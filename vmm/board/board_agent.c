// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest agent's port as a device of the board's table (device.h):
 * a 16550 (the UART model, described as the console's is) whose host end
 * is the agent protocol (vmm/agent) instead of a file.  A board-level
 * device because it joins two layers: devices' UART and the agent above
 * it.  The controller gets the agent from its state (board_agent_qga()).
 * With --agent it is one more row after board_devices()'s: COM2, the PC's
 * second port (board_devices_for()).
 */
#include "board.h"
#include "board_devices.h"
#include "hotvm/abi.h"
#include "qga.h"
#include "serial.h"

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

struct qga *board_agent_qga(void *state)
{
	return state ? &((struct board_agent *)state)->qga : NULL;
}

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
	static struct dev_instance with_agent[BOARD_MAX_DEVICES];
	const struct dev_instance *d = board_devices(n);

	if (!c->agent || *n >= BOARD_MAX_DEVICES)
		return d;
	for (size_t i = 0; i < *n; i++)
		with_agent[i] = d[i];
	with_agent[(*n)++] = agent_port;
	return with_agent;
}
