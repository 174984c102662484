// SPDX-License-Identifier: GPL-2.0-only
/*
 * hotvm's machine, device by device (board_devices.h).  The order is the
 * DSDT's: the processor container first, the power button last.  Addresses
 * and interrupts the tiny guest must find are the VMM-guest contract's
 * (hotvm/abi.h, hotvm/regs.h; docs/design.md §6.1); a device Linux finds
 * only through the DSDT may keep its own in its row.
 */
#include "acpi_pm.h"
#include "board.h"
#include "board_devices.h"
#include "cpuhp_regs.h"
#include "debug_exit.h"
#include "ged.h"
#include "hotvm/abi.h"
#include "hotvm/regs.h"
#include "mres.h"
#include "serial.h"
#include "virtio_blk.h"
#include "virtio_net.h"

/* COM1's sink: --serial. */
static const void *com1_config(const void *machine)
{
	const struct board_config *c = machine;

	return &c->serial;
}

static const struct dev_instance devices[] = {
	{ .desc = &hpregs_desc, .name = "CPUS", .base = ABI_CPUHP_MMIO },
	{ .desc = &ged_desc,
	  .name = "GED_",
	  .base = ABI_GED_MMIO,
	  .irq = ABI_GED_IRQ },
	{ .desc = &serial_desc,
	  .name = "COM1",
	  .base = ABI_COM1_PORT,
	  .irq = ABI_COM1_IRQ,
	  .uid = 0,
	  .config = com1_config },
	{ .desc = &mres_desc, .name = "MRES" },
	{ .desc = &pm_desc, .name = "PWRB", .base = ABI_PM_PORT },
	{ .desc = &debug_exit_desc,
	  .name = "DBGX",
	  .base = ABI_DEBUG_EXIT_PORT },
};

/* --disk N's settings: one function a row, as config takes no index. */
#define DISK_CONFIG(n)                                                         \
	static const void *disk##n##_config(const void *machine)               \
	{                                                                      \
		const struct board_config *c = machine;                        \
                                                                               \
		return &c->disks[n];                                           \
	}
DISK_CONFIG(0)
DISK_CONFIG(1)
DISK_CONFIG(2)
DISK_CONFIG(3)
DISK_CONFIG(4)
DISK_CONFIG(5)
DISK_CONFIG(6)
DISK_CONFIG(7)

static const void *(*const disk_config[])(const void *) = {
	disk0_config, disk1_config, disk2_config, disk3_config,
	disk4_config, disk5_config, disk6_config, disk7_config,
};

_Static_assert(sizeof(disk_config) / sizeof(disk_config[0]) == BOARD_MAX_DISKS,
	       "a config function per disk");
_Static_assert(BOARD_MAX_DISKS == ABI_VIRTIO_MAX, "a window per disk");
_Static_assert(ABI_VIRTIO_MMIO_SIZE == VIRTIO_MMIO_SIZE, "one window size");

/*
 * --disk N: virtio-blk's row, the Nth virtio-MMIO window and GSI, DSDT
 * device VDnn with _UID N.
 */
struct dev_instance board_disk_row(unsigned int n)
{
	static const char names[BOARD_MAX_DISKS][5] = {
		"VD00", "VD01", "VD02", "VD03", "VD04", "VD05", "VD06", "VD07",
	};

	return (struct dev_instance){
		.desc = &vblk_desc,
		.name = names[n],
		.base = ABI_VIRTIO_MMIO + n * ABI_VIRTIO_MMIO_SIZE,
		.irq = ABI_VIRTIO_IRQ + n,
		.uid = n,
		.config = disk_config[n],
	};
}

/* --net N's settings. */
#define NET_CONFIG(n)                                                          \
	static const void *net##n##_config(const void *machine)                \
	{                                                                      \
		const struct board_config *c = machine;                        \
                                                                               \
		return &c->nets[n];                                            \
	}
NET_CONFIG(0)
NET_CONFIG(1)
NET_CONFIG(2)
NET_CONFIG(3)

static const void *(*const net_config[])(const void *) = {
	net0_config,
	net1_config,
	net2_config,
	net3_config,
};

_Static_assert(sizeof(net_config) / sizeof(net_config[0]) == BOARD_MAX_NETS,
	       "a config function per NIC");
_Static_assert(BOARD_MAX_NETS == ABI_NET_MAX, "a window per NIC");

/*
 * --net N: virtio-net's row, the Nth window from ABI_NET_MMIO and the Nth
 * of ABI_NET_IRQS, DSDT device NETn with _UID ABI_NET_UID + N.
 */
struct dev_instance board_net_row(unsigned int n)
{
	static const char names[BOARD_MAX_NETS][5] = {
		"NET0",
		"NET1",
		"NET2",
		"NET3",
	};
	static const unsigned int irqs[BOARD_MAX_NETS] = ABI_NET_IRQS;

	return (struct dev_instance){
		.desc = &vnet_desc,
		.name = names[n],
		.base = ABI_NET_MMIO + n * ABI_VIRTIO_MMIO_SIZE,
		.irq = irqs[n],
		.uid = ABI_NET_UID + n,
		.config = net_config[n],
	};
}

/* The agent's port, the disks, the NICs, the vsock. */
_Static_assert(sizeof(devices) / sizeof(devices[0]) + 1 + BOARD_MAX_DISKS +
			       BOARD_MAX_NETS + 1 <=
		       BOARD_MAX_DEVICES,
	       "board.dev_state[] holds every row");

const struct dev_instance *board_devices(size_t *n)
{
	*n = sizeof(devices) / sizeof(devices[0]);
	return devices;
}
