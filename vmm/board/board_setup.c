// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host's side of the machine: the input checks that only the board
 * can make, KVM and the VM, the devices, the vCPU controller and its
 * hooks, the control API, the stop signals and the seccomp filters.
 * Input problems are reported before any KVM resource exists where
 * possible, so they fail fast and leave nothing behind.
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "board_internal.h"
#include "cpuhp_regs.h"
#include "ged.h"
#include "hotvm/abi.h"
#include "hotplug_vmm.h"
#include "log.h"
#include "qmp.h"
#include "qga_mux.h"
#include "qmp_cmds.h"
#include "seccomp_policy.h"
#include "vcpu.h"

static int check_memory(uint64_t mem)
{
	if (mem < VM_MIN_MEMORY) {
		bool mib = !(mem % (1ULL << 20));

		pr_err("--memory %llu%s: too small; hotvm needs at least %lluM",
		       (unsigned long long)(mib ? mem >> 20 : mem >> 10),
		       mib ? "M" : "K",
		       (unsigned long long)(VM_MIN_MEMORY >> 20));
		return -EINVAL;
	}
	if (mem > VM_MAX_MEMORY) {
		pr_err("--memory: %lluG is more than hotvm supports; give at "
		       "most %lluG",
		       (unsigned long long)(mem >> 30),
		       (unsigned long long)(VM_MAX_MEMORY >> 30));
		return -EINVAL;
	}
	if (mem % BOARD_PAGE_SIZE) {
		pr_err("--memory %llu: not a multiple of 4K; round it to whole "
		       "pages",
		       (unsigned long long)mem);
		return -EINVAL;
	}
	return 0;
}

int board_input_memory(struct board *b)
{
	return check_memory(b->cfg->memory);
}

int board_input_cpus(struct board *b)
{
	const struct board_config *o = b->cfg;

	if (o->cpus.max <= b->vm.max_vcpus)
		return 0;
	pr_err("--cpus max=%u: more than this KVM's limit of %u vCPUs; "
	       "give max=%u or less",
	       o->cpus.max, b->vm.max_vcpus, b->vm.max_vcpus);
	return -EINVAL;
}

/* Hooks are checked before anything exists: a typo fails fast. */
int board_setup_hooks(struct board *b)
{
	const struct board_config *o = b->cfg;
	struct hv_err err = { 0 };

	hooks_init(&b->hooks, o->name, o->hook_timeout_ms);
	for (unsigned int i = 0; i < o->nr_hooks; i++) {
		if (hooks_add(&b->hooks, o->hooks[i], &err)) {
			pr_err("%s", hv_err_msg(&err));
			return -EINVAL;
		}
	}
	return 0;
}

/* --api-group: a group name, or a number. */
static int api_group(const char *name, gid_t *gid)
{
	struct group *gr;
	char *end;
	long v;

	errno = 0;
	gr = getgrnam(name);
	if (gr) {
		*gid = gr->gr_gid;
		return 0;
	}
	v = strtol(name, &end, 10);
	if (*name && !*end && v >= 0 && v < (long)(gid_t)-1) {
		*gid = (gid_t)v;
		return 0;
	}
	pr_err("--api-group %s: no such group%s%s; give a group name or "
	       "number",
	       name, errno ? ": " : "", errno ? strerror(errno) : "");
	return -ENOENT;
}

/* The socket is bound before the VM exists, so a bad path fails fast. */
int board_create_qmp(struct board *b)
{
	const char *path = b->cfg->api_socket;
	struct qmp_server_opts qo = { .path = path };
	int ret;

	if (!path) {
		if (b->cfg->api_group)
			pr_err("--api-group needs --api-socket");
		return b->cfg->api_group ? -EINVAL : 0;
	}
	if (b->cfg->api_group) {
		ret = api_group(b->cfg->api_group, &qo.api_gid);
		if (ret)
			return ret;
		qo.api_group = true;
	}
	ret = qmp_server_create(&qo, &b->qmp);
	if (ret)
		pr_err("--api-socket %s: %s; %s", path, strerror(-ret),
		       ret == -EADDRINUSE ? "another VM is listening there, "
					    "give another path"
					  : "give a path in a writable "
					    "directory, not an existing file");
	return ret;
}

void board_free_qmp(struct board *b)
{
	qmp_server_stop(b->qmp); /* never started here: frees, unlinks */
	b->qmp = NULL;
}

int board_register_qmp(struct board *b)
{
	if (!b->qmp || !qmp_cmds_register(b->qmp, b->hp, &b->vm, &b->qmp_cmds))
		return 0;
	pr_err("cannot register the QMP commands");
	return -ENOMEM;
}

/* The server may be gone already (board_stop_qmp()): the state is not. */
void board_unregister_qmp(struct board *b)
{
	qmp_cmds_unregister(b->qmp_cmds);
	b->qmp_cmds = NULL;
}

/* The server runs across resets, as QEMU's monitor. */
int board_start_qmp(struct board *b)
{
	int ret = b->qmp ? qmp_server_start(b->qmp) : 0;

	if (ret)
		pr_err("the VM failed: the QMP server did not start");
	return ret;
}

/*
 * In this order: detach the callbacks so no late event reaches the
 * server, and join the server's threads (a command running on one fails
 * with -ESHUTDOWN: board_run() stopped the controller first); the command
 * state they used is freed later, by api:commands.  The server removes
 * its socket file.
 */
void board_stop_qmp(struct board *b)
{
	if (!b->qmp)
		return;
	qmp_cmds_detach(b->qmp_cmds);
	board_free_qmp(b);
}

/*
 * The signals that stop the machine as SIGTERM does, with the socket
 * removed and every thread joined: each whose default action would kill the
 * VMM on the spot.  Not the faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGTRAP, SIGABRT, SIGSYS), which must still end it at once, nor the
 * vCPU kick (SIGUSR1), nor the real-time signals, which keep their default.
 */
static const int stop_signals[] = {
	SIGHUP,	 SIGINT,    SIGQUIT, SIGTERM, SIGUSR2,
	SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGPWR,
};

/*
 * The stop signals arrive through a signalfd, so they must be blocked in
 * every thread: block them before any vCPU thread exists.  The kick signal
 * is blocked here too and unblocked by each vCPU thread.
 */
static int setup_signals(struct board *b)
{
	const size_t nr = sizeof(stop_signals) / sizeof(stop_signals[0]);
	struct sigaction hup;
	sigset_t set;
	int ret;

	ret = vcpu_signal_init();
	if (ret)
		return ret;
	/* A closed console pipe must not kill the VMM mid-run. */
	signal(SIGPIPE, SIG_IGN);
	/*
	 * A SIGHUP ignored by nohup stays ignored and out of the set:
	 * surviving the hangup is what was asked, and a blocked signal is
	 * queued even when ignored.
	 */
	sigaction(SIGHUP, NULL, &hup);
	sigemptyset(&set);
	for (size_t i = 0; i < nr; i++)
		if (stop_signals[i] != SIGHUP || hup.sa_handler != SIG_IGN)
			sigaddset(&set, stop_signals[i]);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/*
	 * An ignored signal never reaches a signalfd, and a shell starts
	 * background jobs with SIGINT and SIGQUIT ignored: take the defaults
	 * back (safe now that all are blocked).
	 */
	for (size_t i = 0; i < nr; i++)
		if (sigismember(&set, stop_signals[i]))
			signal(stop_signals[i], SIG_DFL);
	sigdelset(&set, VCPU_KICK_SIGNAL);
	b->sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	return b->sig_fd < 0 ? -errno : 0;
}

int board_start_signals(struct board *b)
{
	int ret = setup_signals(b);

	if (ret)
		pr_err("cannot set up signal handling: %s", strerror(-ret));
	return ret;
}

void board_close_signals(struct board *b)
{
	close(b->sig_fd);
	b->sig_fd = -1;
}

int board_load_seccomp(struct board *b)
{
	return seccomp_setup(b->cfg->seccomp, b->cfg->nr_hooks > 0);
}

int board_open_kvm(struct board *b)
{
	int ret = vm_kvm_open(&b->vm);

	b->vm.no_reboot = b->cfg->no_reboot;
	return ret;
}

void board_destroy_vm(struct board *b)
{
	vm_destroy(&b->vm);
}

int board_create_vm(struct board *b)
{
	int ret = vm_create(&b->vm, b->cfg->memory, b->cfg->cpus.max);

	if (!ret)
		b->low_end = b->vm.regions[0].size;
	return ret;
}

/* Every row of the device table, in order; on a failure, back out. */
int board_setup_devices(struct board *b)
{
	const struct dev_env env = {
		.vm = &b->vm,
		.io = &b->io,
		.mmio = &b->mmio,
		.max_cpus = b->cfg->cpus.max,
		.machine = b->cfg,
		.vm_name = b->cfg->name,
	};
	size_t n;
	const struct dev_instance *d = board_devices_for(b->cfg, &n);

	if (b->cfg->agent && b->cfg->agent_channel == BOARD_AGENT_VSOCK &&
	    !b->cfg->vsock.path) {
		pr_err("--agent-channel vsock needs --vsock cid=N,socket=PATH");
		return -EINVAL;
	}
	/* The exit counters name the device each exit reached. */
	b->vm.exits.bus[VMEXIT_SPACE_PIO] = &b->io;
	b->vm.exits.bus[VMEXIT_SPACE_MMIO] = &b->mmio;
	for (size_t i = 0; i < n; i++) {
		int ret = dev_setup(&d[i], &env, &b->dev_state[i]);

		if (ret) {
			while (i-- > 0)
				dev_teardown(&d[i], b->dev_state[i]);
			memset(b->dev_state, 0, sizeof(b->dev_state));
			return ret;
		}
	}
	return 0;
}

void board_close_devices(struct board *b)
{
	size_t n;
	const struct dev_instance *d = board_devices_for(b->cfg, &n);

	for (size_t i = n; i-- > 0;) {
		dev_teardown(&d[i], b->dev_state[i]);
		b->dev_state[i] = NULL;
	}
}

void board_reset_devices(struct board *b)
{
	size_t n;
	const struct dev_instance *d = board_devices_for(b->cfg, &n);

	for (size_t i = 0; i < n; i++)
		dev_reset(&d[i], b->dev_state[i]);
}

int board_create_hotplug(struct board *b)
{
	const struct board_config *o = b->cfg;
	struct hpregs *regs = board_device_state(b, &hpregs_desc);
	struct serial *com1 = board_device_state(b, &serial_desc);

	/* The report ring's console lines are COM1's (docs/design.md §6.8). */
	if (regs && com1)
		hpring_set_console(&regs->ring, serial_emit, com1);

	return hotplug_create(
		&(struct hotplug_config){
			.vm = &b->vm,
			.io = &b->io,
			.mmio = &b->mmio,
			.ged = board_device_state(b, &ged_desc),
			.regs = board_device_state(b, &hpregs_desc),
			.boot_cpus = o->cpus.boot,
			.max_cpus = o->cpus.max,
			.hooks = &b->hooks,
			.timeout_ms = o->hotplug_timeout_ms,
			.wait = (enum hotplug_wait)o->hotplug_wait,
			.prestage = o->prestage,
			.guest_eject = (enum hotplug_guest_eject)o->guest_eject,
			.agent = board_agent(b),
			.linux_trace =
				o->agent_trace < 0
					? o->agent_channel != BOARD_AGENT_COM2
					: o->agent_trace,
		},
		&b->hp);
}

void board_destroy_hotplug(struct board *b)
{
	hotplug_destroy(b->hp); /* joins and closes every vCPU */
	b->hp = NULL;
}

/* The interrupt controllers as at power-on, then the vCPUs. */
int board_boot_vcpus(struct board *b)
{
	int ret = vm_reset_irqchip(&b->vm);

	if (ret && ret != -ENODATA)
		pr_err("cannot reset the interrupt controllers: %s",
		       strerror(-ret));
	else
		ret = hotplug_boot(b->hp);
	if (ret)
		pr_err("the VM failed: the boot vCPUs did not start");
	return ret;
}

void board_unboot_vcpus(struct board *b)
{
	hotplug_unboot(b->hp);
}

/*
 * --agent-socket: bound and served from before the guest runs to the
 * end.  A bad path is bad input (status 2), said with the option's name.
 */
int board_start_agent_socket(struct board *b)
{
	const char *path = b->cfg->agent_socket;
	struct qga *g;
	int ret;

	if (!path) {
		if (b->cfg->agent_allow) {
			pr_err("--agent-allow needs --agent-socket");
			return -EINVAL;
		}
		return 0;
	}
	g = board_agent(b);
	if (!g) {
		pr_err("--agent-socket needs --agent");
		return -EINVAL;
	}
	ret = qga_mux_create(g, path, b->cfg->agent_allow, &b->agent_mux);
	if (ret) {
		pr_err("--agent-socket %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = qga_mux_start(b->agent_mux);
	if (ret) {
		pr_err("--agent-socket: cannot start its threads: %s",
		       strerror(-ret));
		board_stop_agent_socket(b);
	}
	return ret;
}

/* Before the agent's port goes (devices): the socket's threads call it. */
void board_stop_agent_socket(struct board *b)
{
	qga_mux_stop(b->agent_mux);
	b->agent_mux = NULL;
}

/* With --agent: how often Linux's own view of its CPUs is asked for. */
#define BOARD_AGENT_PERIOD_MS 2000

int board_start_agent_watch(struct board *b)
{
	int ret = hotplug_agent_watch_start(b->hp, BOARD_AGENT_PERIOD_MS);

	if (ret)
		pr_err("cannot start the guest agent's check: %s",
		       strerror(-ret));
	return ret;
}

/* Before the vCPUs and the agent's port go: it calls into both. */
void board_stop_agent_watch(struct board *b)
{
	hotplug_agent_watch_stop(b->hp);
}
