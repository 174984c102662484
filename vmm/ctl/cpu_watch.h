/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `hotvm cpu watch`: every possible vCPU's host and guest state, moved by
 * the VMM's events as they arrive (CPUHP_STATE, DEVICE_DELETED,
 * ACPI_DEVICE_OST, EVENTS_LOST; nothing is polled).  On a terminal, a
 * screen redrawn at each event; otherwise one line per event, each a
 * record of the same fields as the --json line for it: time, cpu, side,
 * event, direction, state, result, then what applies (rollback, injected,
 * target, fault, stage, us, source, status, count).  It ends when the VM
 * closes the connection.
 */
#ifndef HOTVM_CPU_WATCH_H
#define HOTVM_CPU_WATCH_H

struct cpu_ctx;

int cpu_watch_verb(struct cpu_ctx *x);

#endif
