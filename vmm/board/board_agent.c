// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest agent's port as a device of the board's table (device.h):
 * a 16550 (the UART model, described as the console's is) whose host end
 * is the agent protocol (vmm/agent) instead of a file.  A board-level
 * device because it joins two layers: devices' UART and the agent above
 * it.  The controller gets the agent from its state (board_agent_qga()).
 * With --agent it is one more row after board_devices()'s: COM2, the PC's
 * second port (board_devices_for()).  With --agent-socket, other
 * clients reach the same agent through hotvm (qga_mux.h).  And the
 * periodic check of Linux's CPUs through it runs on a thread of its own,
 * so that a slow or lying agent never holds the machine thread.
 */
#include <errno.h>
#include <string.h>

#include "board_internal.h"
#include "hotplug_vmm.h"
#include "hotvm/abi.h"
#include "log.h"
#include "qga.h"
#include "qga_mux.h"
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
	static struct dev_instance rows[BOARD_MAX_DEVICES];
	const struct dev_instance *d = board_devices(n);

	if (!c->agent && !c->nr_disks)
		return d;
	for (size_t i = 0; i < *n; i++)
		rows[i] = d[i];
	if (c->agent)
		rows[(*n)++] = agent_port;
	for (unsigned int i = 0; i < c->nr_disks && i < BOARD_MAX_DISKS; i++)
		rows[(*n)++] = board_disk_row(i);
	return rows;
}

/*
 * --agent-socket: bound and served from before the guest runs to the
 * end.  A bad path is bad input (status 2), said with the option's name.
 */
int board_start_agent_socket(struct board *b)
{
	const char *path = b->cfg->agent_socket;
	struct qga *g;
	int ret;

	if (!path) {
		if (b->cfg->agent_allow) {
			pr_err("--agent-allow needs --agent-socket");
			return -EINVAL;
		}
		return 0;
	}
	g = board_agent_qga(board_device_state(b, &board_agent_desc));
	if (!g) {
		pr_err("--agent-socket needs --agent");
		return -EINVAL;
	}
	ret = qga_mux_create(g, path, b->cfg->agent_allow, &b->agent_mux);
	if (ret) {
		pr_err("--agent-socket %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = qga_mux_start(b->agent_mux);
	if (ret) {
		pr_err("--agent-socket: cannot start its threads: %s",
		       strerror(-ret));
		board_stop_agent_socket(b);
	}
	return ret;
}

/* Before the agent's port goes (devices): the socket's threads call it. */
void board_stop_agent_socket(struct board *b)
{
	qga_mux_stop(b->agent_mux);
	b->agent_mux = NULL;
}

/* With --agent: how often Linux's own view of its CPUs is asked for. */
#define BOARD_AGENT_PERIOD_MS 2000

int board_start_agent_watch(struct board *b)
{
	int ret = hotplug_agent_watch_start(b->hp, BOARD_AGENT_PERIOD_MS);

	if (ret)
		pr_err("cannot start the guest agent's check: %s",
		       strerror(-ret));
	return ret;
}

/* Before the vCPUs and the agent's port go: it calls into both. */
void board_stop_agent_watch(struct board *b)
{
	hotplug_agent_watch_stop(b->hp);
}
