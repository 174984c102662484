/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control API's command set (docs/design.md §7): QEMU's CPU-hotplug
 * commands and events, so that tools written for QEMU drive hotvm
 * unchanged, and hotvm's own view of the host and guest state tables.
 *
 * The commands are declared once, with their arguments and the members
 * of their replies, in qc_commands[] (vmm/api/qmp_cmds_table.c;
 * qmp_cmds_table() below), QEMU's first, then hotvm's; the events are
 * QEMU's (DEVICE_DELETED, ACPI_DEVICE_OST, POWERDOWN, SHUTDOWN, RESET)
 * and hotvm's (CPUHP_STATE, CPUS_CHANGED, CPUHP_AGREEMENT).  How the
 * files divide the work: vmm/api/qmp_cmds_internal.h.
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
struct qmp_cmds;
struct qmp_command;
struct qmp_server;
struct vm;

/* The CPU type every slot reports, and device_add's usual driver. */
#define QMP_CMDS_CPU_TYPE "host-x86_64-cpu"

/*
 * Registers every command on s (before qmp_server_start) and installs the
 * controller's event callbacks (hotplug_set_events), which emit the events
 * on s.  *out is the command state, every handler's ctx, until
 * qmp_cmds_unregister().  vm is what `quit` stops (vm_shutdown with status
 * 0) and `system_reset` resets; it may be NULL, and then they only reply.
 * Returns 0 or a negative errno.
 */
int qmp_cmds_register(struct qmp_server *s, struct hotplug *hp, struct vm *vm,
		      struct qmp_cmds **out);

/*
 * A lifecycle event with QEMU's shape, {"guest": bool, "reason": cause}:
 * SHUTDOWN or RESET.  Nothing once detached, or for a NULL qc.
 */
void qmp_cmds_event_cause(struct qmp_cmds *qc, const char *event,
			  enum vm_cause cause);

/*
 * Before qmp_server_stop(): uninstalls the callbacks and waits for any that
 * is running, so that a vCPU thread's late event never reaches a stopped
 * server.  The command state stays: a handler may still be running on a
 * server thread until qmp_server_stop() has joined it.  A NULL qc is fine.
 */
void qmp_cmds_detach(struct qmp_cmds *qc);

/*
 * Frees the command state, detaching first if that was not done.  Only
 * once nothing can call into it: after qmp_server_stop() (no handler runs)
 * and after the threads that raise the controller's events have stopped
 * (the vCPU threads; a callback that took the events before the detach
 * may still be on its way).  A NULL qc is fine.
 */
void qmp_cmds_unregister(struct qmp_cmds *qc);

/*
 * The declared commands (what qmp_cmds_register() registers), for the
 * documentation and the tests that hold README.md, `hotvm cpu --help` and
 * every reply to them.
 */
const struct qmp_command *qmp_cmds_table(size_t *n);

#endif
