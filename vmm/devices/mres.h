/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The motherboard resources (PNP0C02, \_SB.MRES): a device with no
 * registers that claims, in the DSDT, every MMIO window of the machine's
 * table, in address order.  The GED's _CRS may hold only its interrupt, so
 * its window and the register block's are claimed here, keeping the OS from
 * placing anything over them.
 */
#ifndef HOTVM_MRES_H
#define HOTVM_MRES_H

#include "device.h"

#define MRES_MAX_WINDOWS 16

extern const struct dev_desc mres_desc;

#endif
