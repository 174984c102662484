// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest agent's port as a device of the board's table (device.h):
 * a virtio-console whose one port is `org.qemu.guest_agent.0` (what
 * Debian's qemu-guest-agent unit waits for), or a 16550 (the UART model,
 * described as the console's is; --agent-channel com2), whose host end is
 * the agent protocol (vmm/agent) instead of a file.  A board-level device
 * because it joins two layers: devices' port and the agent above it.  The
 * controller gets the agent from its state (board_agent()).  With
 * --agent it is one more row after board_devices()'s: VCON, the window
 * after the disks', or COM2, the PC's second port (board_devices_for()).  With --agent-socket, other
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

struct qga *board_agent(struct board *b)
{
	struct board_agent *u = board_device_state(b, &board_agent_desc);
	struct board_agent_vcon *v =
		board_device_state(b, &board_agent_vcon_desc);

	return u ? &u->qga : v ? &v->qga : NULL;
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

	if (!c->agent && !c->nr_disks && !c->nr_nets)
		return d;
	for (size_t i = 0; i < *n; i++)
		rows[i] = d[i];
	if (c->agent)
		rows[(*n)++] = c->agent_channel == BOARD_AGENT_COM2
				       ? agent_port
				       : agent_vcon;
	for (unsigned int i = 0; i < c->nr_disks && i < BOARD_MAX_DISKS; i++)
		rows[(*n)++] = board_disk_row(i);
	for (unsigned int i = 0; i < c->nr_nets && i < BOARD_MAX_NETS; i++)
		rows[(*n)++] = board_net_row(i);
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
	g = board_agent(b);
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
