// SPDX-License-Identifier: GPL-2.0-only
/*
 * The machine's start-up table and its life: built by walking the table
 * up, run until something asks it to stop, reset by walking the .reset
 * steps down and up again, torn down by walking it all the way down:
 * every thread joined, every fd closed.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "board_internal.h"
#include "hotvm/abi.h"
#include "log.h"
#include "qmp_cmds.h"
#include "seccomp_policy.h"

/*
 * The machine's start-up, walked forward by board_build and unwound
 * backward by board_unwind from the last step that succeeded, as the
 * vCPU tables are.  A step that fails cleans up after itself and says why;
 * .status is the exit status it ends the run with.  A reset walks the
 * steps marked .reset down and up again, the others staying as they are:
 * the vCPUs stopped and reset, the kernel and initrd loaded again, the
 * tables rebuilt for the CPUs the guest has, the vCPUs booted.
 */
static void board_reset(struct board *b, enum vm_cause cause);
static int board_start_machine_work(struct board *b);

struct board_step {
	const char *name;
	int (*setup)(struct board *b);
	void (*teardown)(struct board *b);
	int status;
	bool reset; /* a reset redoes this step */
};

static const struct board_step board_steps[] = {
	/* Input first, before any KVM resource: a typo fails fast. */
	{ .name = "input:memory",
	  .setup = board_input_memory,
	  .status = ABI_STATUS_USAGE },
	{ .name = "input:hooks",
	  .setup = board_setup_hooks,
	  .status = ABI_STATUS_USAGE },
	{ .name = "kernel:open",
	  .setup = board_open_kernel,
	  .teardown = board_close_kernel,
	  .status = ABI_STATUS_USAGE },
	/* The socket is bound early, so a bad path fails fast too. */
	{ .name = "api:bind",
	  .setup = board_create_qmp,
	  .teardown = board_free_qmp,
	  .status = ABI_STATUS_USAGE },
	/* Before any thread: the stop signals must be blocked in all. */
	{ .name = "signals",
	  .setup = board_start_signals,
	  .teardown = board_close_signals,
	  .status = ABI_STATUS_VMFAIL },
	/* Before any thread: each loads its own filter as it starts. */
	{ .name = "seccomp",
	  .setup = board_load_seccomp,
	  .status = ABI_STATUS_VMFAIL },
	/* Its teardown releases the whole VM, which is one object. */
	{ .name = "kvm:open",
	  .setup = board_open_kvm,
	  .teardown = board_destroy_vm,
	  .status = ABI_STATUS_VMFAIL },
	/* Only an open /dev/kvm knows its vCPU limit. */
	{ .name = "input:cpus",
	  .setup = board_input_cpus,
	  .status = ABI_STATUS_USAGE },
	{ .name = "vm:create",
	  .setup = board_create_vm,
	  .status = ABI_STATUS_VMFAIL },
	/*
	 * A reset redoes this step, the tables and the boot (.reset).  Before
	 * the devices: a kernel that does not load leaves no console file.
	 */
	{ .name = "kernel:load",
	  .setup = board_load_images,
	  .status = ABI_STATUS_USAGE,
	  .reset = true },
	{ .name = "devices",
	  .setup = board_setup_devices,
	  .teardown = board_close_devices,
	  .status = ABI_STATUS_USAGE },
	/* The vCPU slots, none created yet; destroying joins every one. */
	{ .name = "hotplug",
	  .setup = board_create_hotplug,
	  .teardown = board_destroy_hotplug,
	  .status = ABI_STATUS_VMFAIL },
	{ .name = "api:commands",
	  .setup = board_register_qmp,
	  .teardown = board_unregister_qmp,
	  .status = ABI_STATUS_VMFAIL },
	/* After the loaders: the memory map and start_info need their ends. */
	{ .name = "tables",
	  .setup = board_write_tables,
	  .status = ABI_STATUS_USAGE,
	  .reset = true },
	{ .name = "vcpus:boot",
	  .setup = board_boot_vcpus,
	  .teardown = board_unboot_vcpus,
	  .status = ABI_STATUS_VMFAIL,
	  .reset = true },
	/*
	 * After the devices (the agent's port), before the guest runs: a
	 * client may connect as soon as hotvm is up, as to QEMU's chardev.
	 */
	{ .name = "agent:socket",
	  .setup = board_start_agent_socket,
	  .teardown = board_stop_agent_socket,
	  .status = ABI_STATUS_USAGE },
	/* Linux's CPUs through the agent: never on the machine thread. */
	{ .name = "agent:watch",
	  .setup = board_start_agent_watch,
	  .teardown = board_stop_agent_watch,
	  .status = ABI_STATUS_VMFAIL },
	/*
	 * Last up, first down: a client finds the guest running, as QEMU's
	 * monitor does; a reset leaves the server and its clients be.
	 */
	{ .name = "api:start",
	  .setup = board_start_qmp,
	  .teardown = board_stop_qmp,
	  .status = ABI_STATUS_VMFAIL },
	/*
	 * Resets and the guest's own ejects run on their own thread, so the
	 * main thread never waits on the guest or a hook; joined first, after
	 * hotplug_shutdown() has ended whatever it waited for.
	 */
	{ .name = "machine:work",
	  .setup = board_start_machine_work,
	  .teardown = board_stop_work,
	  .status = ABI_STATUS_VMFAIL },
};

#define BOARD_STEPS (sizeof(board_steps) / sizeof(board_steps[0]))

/* Unwinds the steps that are up down to @to, last first. */
static void board_unwind(struct board *b, size_t to)
{
	while (b->up > to) {
		const struct board_step *st = &board_steps[--b->up];

		if (st->teardown)
			st->teardown(b);
	}
}

/* Walks the steps from b->up to the end; 0, or the failing step's. */
static const struct board_step *board_walk_up(struct board *b)
{
	for (; b->up < BOARD_STEPS; b->up++) {
		const struct board_step *st = &board_steps[b->up];

		if (st->setup(b))
			return st;
	}
	return NULL;
}

/*
 * Everything before the guest runs alone.  Returns -1 with every step up,
 * or the failing step's exit status with the machine already unwound.
 */
static int board_build(struct board *b)
{
	const struct board_step *st = board_walk_up(b);

	if (!st)
		return -1;
	/* Bad input was explained by the step itself. */
	if (st->status != ABI_STATUS_USAGE)
		pr_err("start-up failed at %s", st->name);
	board_unwind(b, 0);
	return st->status;
}

/*
 * A reset, as QEMU's: the RESET event, then the .reset steps down and up
 * again, on the machine's work thread (board_work.c).  The operation in
 * progress, if any, ends first (hotplug_reset_begin()); the QMP server
 * and its clients stay.  A step that fails now stops the VM, and a VM
 * told to stop meanwhile is not set up again (the final unwind copes with
 * a step down twice).
 */
static void board_reset(struct board *b, enum vm_cause cause)
{
	pr_err("resetting the VM (%s)", vm_cause_name(cause));
	qmp_cmds_event_cause(b->qmp_cmds, "RESET", cause);
	hotplug_reset_begin(b->hp);
	for (size_t i = BOARD_STEPS; i-- > 0;)
		if (board_steps[i].reset && board_steps[i].teardown)
			board_steps[i].teardown(b);
	/* Every vCPU is stopped: the devices back to power-on. */
	board_reset_devices(b);
	for (size_t i = 0; i < BOARD_STEPS; i++) {
		const struct board_step *st = &board_steps[i];

		if (vm_stopping(&b->vm))
			return;
		if (st->reset && st->setup(b)) {
			vm_request_stop(&b->vm, ABI_STATUS_VMFAIL,
					"the reset failed at %s", st->name);
			return;
		}
	}
}

/* The work thread runs resets with board_reset(), which walks the table. */
static int board_start_machine_work(struct board *b)
{
	return board_start_work(b, board_reset);
}

/*
 * Runs the machine until a vCPU, a signal or the API stops it.  Resets
 * and ejects the guest did on its own are the work thread's, woken here
 * (board_work.c); the periodic check of Linux's CPUs has its own thread.
 */
static void board_loop(struct board *b)
{
	struct pollfd fds[2] = {
		{ .fd = b->vm.stop_efd, .events = POLLIN },
		{ .fd = b->sig_fd, .events = POLLIN },
	};

	while (!vm_stopping(&b->vm)) {
		struct signalfd_siginfo si;
		uint64_t v;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			vm_request_stop(&b->vm, ABI_STATUS_VMFAIL,
					"poll failed: %s", strerror(errno));
			break;
		}
		if ((fds[0].revents & POLLIN) &&
		    read(b->vm.stop_efd, &v, sizeof(v)) < 0 && errno != EINTR)
			vm_request_stop(&b->vm, ABI_STATUS_VMFAIL,
					"cannot read the machine's events: %s",
					strerror(errno));
		if ((fds[1].revents & POLLIN) &&
		    read(b->sig_fd, &si, sizeof(si)) == sizeof(si))
			vm_shutdown(&b->vm, ABI_STATUS_SIGNAL,
				    VM_CAUSE_HOST_SIGNAL, "stopped by %s",
				    strsignal((int)si.ssi_signo));
		if (vm_stopping(&b->vm))
			break;
		board_kick_work(b);
	}
}

void board_config_init(struct board_config *c)
{
	*c = (struct board_config){
		.memory = BOARD_DEFAULT_MEMORY,
		.cpus = { .boot = 1, .max = 1 },
		.serial = { .sink = SERIAL_SINK_STDIO, .option = "--serial" },
		.name = BOARD_DEFAULT_NAME,
		.agent_trace = -1,
	};
}

int board_run(const struct board_config *c)
{
	struct board b = {
		.cfg = c,
		.vm = { .kvm_fd = -1, .vm_fd = -1, .stop_efd = -1 },
		.io = BUS_INIT_PIO,
		.mmio = BUS_INIT_MMIO,
		.sig_fd = -1,
	};
	int status = board_build(&b);

	if (status >= 0)
		return status;

	seccomp_enter(SECCOMP_THREAD_MAIN);
	board_loop(&b);
	status = b.vm.stop_status;
	if (status == ABI_STATUS_VMFAIL)
		pr_err("the VM failed: %s", b.vm.stop_reason);
	else if (vm_cause_guest(b.vm.stop_cause))
		pr_err("%s", b.vm.stop_reason);
	/* Every wait for the guest ends, new operations are refused. */
	qmp_cmds_event_cause(b.qmp_cmds, "SHUTDOWN", b.vm.stop_cause);
	hotplug_shutdown(b.hp);
	board_unwind(&b, 0);
	return status;
}
