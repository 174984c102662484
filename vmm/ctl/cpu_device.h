/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `hotvm cpu add [CPU]`, `remove CPU|ID`, `list`: QEMU's device commands,
 * so they work against QEMU too.  Each returns 0, 1 (the VMM said no or
 * did not answer: reported) or -EINVAL (bad arguments: the caller says so).
 */
#ifndef HOTVM_CPU_DEVICE_H
#define HOTVM_CPU_DEVICE_H

struct cpu_ctx;

int cpu_device_add(struct cpu_ctx *x);
int cpu_device_remove(struct cpu_ctx *x);
int cpu_device_list(struct cpu_ctx *x);

#endif
