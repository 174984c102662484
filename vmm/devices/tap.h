/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Opening a tap device that the caller made (`ip tuntap add NAME mode
 * tap`), for virtio-net (docs/design.md §6.9): IFF_TAP | IFF_NO_PI |
 * IFF_VNET_HDR, a 12-byte virtio_net_hdr_v1 before each frame, no
 * offloads until the guest's driver takes them.  hotvm never creates or
 * configures a host interface: a name that is not an existing tap is bad
 * input, said with the reason.
 */
#ifndef HOTVM_TAP_H
#define HOTVM_TAP_H

#include <stdbool.h>
#include <stddef.h>

#include "hv_err.h"

/*
 * Opens tap @name (non-blocking, close-on-exec).  Returns the fd, or
 * -errno with the reason in @err: no such interface, not a tap, no
 * permission (/dev/net/tun or the tap's owner), busy (another process
 * has it), a name too long.  *@offload says whether the tap takes
 * checksum and TSO offloads.
 */
int tap_open(const char *name, bool *offload, struct hv_err *err);

#endif
