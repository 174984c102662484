/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The machine's devices: one table (board_devices.c) of descriptor
 * instances (vmm/devices/device.h), which start-up sets up in order and
 * tears down in reverse, and from which the DSDT (in this order) and the
 * FDT (in address order) are built.  A new device is its files in
 * vmm/devices and one row; a second instance of a device is one more row
 * with its own base, interrupt and _UID.
 */
#ifndef HOTVM_BOARD_DEVICES_H
#define HOTVM_BOARD_DEVICES_H

#include <stddef.h>

#include "device.h"

/* dev_env.machine, which the rows' config functions read. */
struct board_config;

#define BOARD_MAX_DEVICES 24

/* The table, start-up order; *n rows. */
const struct dev_instance *board_devices(size_t *n);
/*
 * The table of the machine @c describes: board_devices(), with --agent
 * the guest agent's port (COM2 or a virtio-console) after it, then one
 * virtio-blk row per --disk (board_disk_row()), then one virtio-net row
 * per --net (board_net_row()), then with --vsock its row
 * (board_vsock_row).  Machine thread only.
 */
const struct dev_instance *board_devices_for(const struct board_config *c,
					     size_t *n);

/* --disk @n's row (n < BOARD_MAX_DISKS). */
struct dev_instance board_disk_row(unsigned int n);
/* --net @n's row (n < BOARD_MAX_NETS). */
struct dev_instance board_net_row(unsigned int n);

/*
 * --agent's port (board_agent.c): COM2 or the virtio-console; and the
 * agent behind whichever the board has (NULL: none; board_rows.c).
 */
extern const struct dev_desc board_agent_desc;
extern const struct dev_desc board_agent_vcon_desc;
struct qga;
struct board;
struct qga *board_agent(struct board *b);
/* The agent in a port's state (desc: one of the two above), or NULL. */
struct qga *board_agent_of(const struct dev_desc *desc, void *state);

/*
 * --vsock's row (board_vsock.c).
 */
extern const struct dev_desc board_vsock_desc;
extern const struct dev_instance board_vsock_row;
/* The agent in the vsock row's state (with --agent-channel vsock). */
struct qga *board_vsock_agent_of(void *state);

#endif
