/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `hotvm cpu states [CPU]`, `target|inject CPU host|guest STATE`,
 * `resize N`: hotvm's own commands.  Each returns 0, 1 (the VMM said no or
 * did not answer: reported) or -EINVAL (bad arguments: the caller says so).
 */
#ifndef HOTVM_CPU_STATE_H
#define HOTVM_CPU_STATE_H

struct cpu_ctx;

int cpu_state_show(struct cpu_ctx *x);
int cpu_state_target(struct cpu_ctx *x);
int cpu_state_inject(struct cpu_ctx *x);
int cpu_state_resize(struct cpu_ctx *x);

#endif
