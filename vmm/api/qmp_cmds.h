/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control API's command set (docs/design.md §7): QEMU's CPU-hotplug
 * commands and events, so that tools written for QEMU drive hotvm
 * unchanged, and hotvm's own view of the host and guest state tables.
 *
 * The commands and their arguments are declared once, in qc_commands[]
 * (vmm/api/qmp_cmds.c; qmp_cmds_table() below), QEMU's first, then
 * hotvm's; the events are QEMU's DEVICE_DELETED and ACPI_DEVICE_OST and
 * hotvm's CPUHP_STATE.  Each command's reply is declared in the table
 * too, beside its arguments.
 *
 * Topology as QEMU shows it for -smp sockets=max,cores=1,threads=1: CPU
 * slot n is {socket-id: n, core-id: 0, thread-id: 0} with APIC ID n.
 * Timeouts are "timeout-ms" (integer milliseconds; absent or 0 is the
 * --hotplug-timeout default).
 */
#ifndef HOTVM_QMP_CMDS_H
#define HOTVM_QMP_CMDS_H

#include <stddef.h>

#include "vm.h"

struct hotplug;
struct qmp_command;
struct qmp_server;
struct vm;

/* The CPU type every slot reports, and device_add's usual driver. */
#define QMP_CMDS_CPU_TYPE "host-x86_64-cpu"

/*
 * Registers every command on s (before qmp_server_start) and installs the
 * controller's event callbacks (hotplug_set_events), which emit the events
 * on s.  The command state lives until the next call: hotvm has one VM and
 * one server per process, and the server's handler ctx is not needed.  vm
 * is what `quit` stops (vm_request_stop with status 0); it may be NULL, and
 * then `quit` only replies.  Returns 0 or a negative errno.
 */
int qmp_cmds_register(struct qmp_server *s, struct hotplug *hp, struct vm *vm);

/*
 * Before qmp_server_stop(): uninstalls the callbacks and waits for any that
 * is running, so that a vCPU thread's late event never reaches a stopped
 * server.  The command state stays: a handler may still be running on a
 * server thread until qmp_server_stop() has joined it.  A NULL hp is fine.
 */
/*
 * A lifecycle event with QEMU's shape, {"guest": bool, "reason": cause}:
 * SHUTDOWN or RESET.  Nothing without a registered server.
 */
void qmp_cmds_event_cause(const char *event, enum vm_cause cause);

void qmp_cmds_detach(struct hotplug *hp);

/*
 * After qmp_server_stop() (no handler can run any more): frees the command
 * state, detaching first if that was not done.  A NULL hp is fine.
 */
void qmp_cmds_unregister(struct hotplug *hp);

/*
 * The declared commands (what qmp_cmds_register() registers), for the
 * documentation and the tests that hold README.md and `hotvm cpu --help`
 * to them.
 */
const struct qmp_command *qmp_cmds_table(size_t *n);

#endif
