// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm run`'s options, once: each row gives the spelling, the value's
 * placeholder, the help text, the default and the function that stores the
 * value.  The parser (cli_parse.c) walks this table; --help and README.md's
 * table are rendered from it (cli_usage.c), and a test holds README to it.
 * A new option is one row and, when its value needs checking, one function.
 */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "hooks.h"
#include "hotplug.h"
#include "log.h"
#include "qga_mux.h"
#include "vsock.h"

#define CLI_MAX_NAME 64

#define STR_(x)	  #x
#define STR(x)	  STR_(x)
#define MAX_HOOKS STR(BOARD_MAX_HOOKS)

/* An empty value for an option that needs text: says why, in opt's name. */
static bool empty(const char *opt, const char *v, const char *why)
{
	if (*v)
		return false;
	pr_err("%s: %s", opt, why);
	return true;
}

/* Milliseconds for opt, 1 .. CLI_MAX_MS. */
static int ms_value(const char *opt, const char *v, int *out)
{
	if (cli_parse_ms(v, out)) {
		pr_err("%s '%s': give milliseconds, 1 to %d", opt, v,
		       CLI_MAX_MS);
		return -EINVAL;
	}
	return 0;
}

static int opt_help(struct cli_run_opts *o, const char *v)
{
	(void)v;
	o->help = true;
	return CLI_OPT_STOP;
}

static int opt_kernel(struct cli_run_opts *o, const char *v)
{
	o->board.kernel = v;
	return 0;
}

static int opt_cmdline(struct cli_run_opts *o, const char *v)
{
	o->board.cmdline = v;
	return 0;
}

static int opt_initrd(struct cli_run_opts *o, const char *v)
{
	o->board.initrd = v;
	return 0;
}

static int opt_memory(struct cli_run_opts *o, const char *v)
{
	int ret = cli_parse_memory(v, &o->board.memory);

	if (ret) {
		pr_err("--memory '%s': %s; give a size such as 256M, 2G or "
		       "512 (MiB)",
		       v, ret == -ERANGE ? "out of range" : "not a size");
		return -EINVAL;
	}
	return 0;
}

static int opt_cpus(struct cli_run_opts *o, const char *v)
{
	struct hv_err err = { 0 };

	if (cli_parse_cpus(v, &o->board.cpus, &err)) {
		pr_err("--cpus '%s': %s; use boot=N,max=M with 1 <= N <= M", v,
		       hv_err_msg(&err));
		return -EINVAL;
	}
	return 0;
}

static int opt_serial(struct cli_run_opts *o, const char *v)
{
	if (cli_parse_serial(v, &o->board.serial)) {
		pr_err("--serial '%s': unknown sink; use stdio, file:PATH or "
		       "none",
		       v);
		return -EINVAL;
	}
	return 0;
}

static int opt_api_socket(struct cli_run_opts *o, const char *v)
{
	if (empty("--api-socket", v,
		  "empty path; give the path of the socket to create"))
		return -EINVAL;
	o->board.api_socket = v;
	return 0;
}

static int opt_api_group(struct cli_run_opts *o, const char *v)
{
	if (empty("--api-group", v, "empty name; give a group name or number"))
		return -EINVAL;
	o->board.api_group = v;
	return 0;
}

static int opt_name(struct cli_run_opts *o, const char *v)
{
	if (!*v || strlen(v) > CLI_MAX_NAME) {
		pr_err("--name '%s': give 1 to %d characters", v, CLI_MAX_NAME);
		return -EINVAL;
	}
	o->board.name = v;
	return 0;
}

static int opt_hook(struct cli_run_opts *o, const char *v)
{
	if (o->board.nr_hooks == BOARD_MAX_HOOKS) {
		pr_err("--hook %s: at most %d hooks", v, BOARD_MAX_HOOKS);
		return -EINVAL;
	}
	o->board.hooks[o->board.nr_hooks++] = v;
	return 0;
}

static int opt_hook_timeout(struct cli_run_opts *o, const char *v)
{
	return ms_value("--hook-timeout", v, &o->board.hook_timeout_ms);
}

static int opt_hotplug_timeout(struct cli_run_opts *o, const char *v)
{
	return ms_value("--hotplug-timeout", v, &o->board.hotplug_timeout_ms);
}

static int opt_hotplug_wait(struct cli_run_opts *o, const char *v)
{
	int w = hotplug_wait_parse(v);

	if (w < 0) {
		pr_err("--hotplug-wait '%s': give acknowledged or started", v);
		return -EINVAL;
	}
	o->board.hotplug_wait = (enum hotplug_wait)w;
	return 0;
}

static int opt_prestage(struct cli_run_opts *o, const char *v)
{
	if (cli_parse_count(v, &o->board.prestage)) {
		pr_err("--prestage '%s': give how many free vCPUs to create "
		       "ahead (0 or more)",
		       v);
		return -EINVAL;
	}
	return 0;
}

static int opt_dump_acpi(struct cli_run_opts *o, const char *v)
{
	if (empty("--dump-acpi", v,
		  "empty path; give the directory for the table files"))
		return -EINVAL;
	o->dump_acpi = v;
	return 0;
}

static int opt_seccomp(struct cli_run_opts *o, const char *v)
{
	int p = seccomp_parse_policy(v);

	if (p < 0) {
		pr_err("--seccomp '%s': give on, log or off", v);
		return -EINVAL;
	}
	o->board.seccomp = (enum seccomp_policy)p;
	return 0;
}

static int opt_agent(struct cli_run_opts *o, const char *v)
{
	(void)v;
	o->board.agent = true;
	return 0;
}

/* A decimal port, 0 .. 4294967295. */
static int parse_u32(const char *v, uint32_t *out)
{
	uint64_t n = 0;

	if (!*v)
		return -EINVAL;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -EINVAL;
		n = n * 10 + (uint64_t)(*v - '0');
		if (n > UINT32_MAX)
			return -EINVAL;
	}
	*out = (uint32_t)n;
	return 0;
}

static int opt_agent_channel(struct cli_run_opts *o, const char *v)
{
	if (!strcmp(v, "virtio")) {
		o->board.agent_channel = BOARD_AGENT_VIRTIO;
	} else if (!strcmp(v, "com2")) {
		o->board.agent_channel = BOARD_AGENT_COM2;
	} else if (!strcmp(v, "vsock")) {
		o->board.agent_channel = BOARD_AGENT_VSOCK;
		o->board.agent_vsock_port = CLI_AGENT_VSOCK_PORT;
	} else if (!strncmp(v, "vsock:", 6) &&
		   !parse_u32(v + 6, &o->board.agent_vsock_port)) {
		o->board.agent_channel = BOARD_AGENT_VSOCK;
	} else {
		pr_err("--agent-channel '%s': give virtio, com2, vsock or "
		       "vsock:PORT",
		       v);
		return -EINVAL;
	}
	return 0;
}

static int opt_vsock(struct cli_run_opts *o, const char *v)
{
	struct hv_err err = { 0 };

	if (strlen(v) >= sizeof(o->vsock_text)) {
		pr_err("--vsock: too long; give a shorter path");
		return -EINVAL;
	}
	strcpy(o->vsock_text, v);
	if (vsock_parse(o->vsock_text, &o->board.vsock, &err)) {
		pr_err("--vsock '%s': %s; use cid=N,socket=PATH", v,
		       hv_err_msg(&err));
		return -EINVAL;
	}
	return 0;
}

static int opt_agent_socket(struct cli_run_opts *o, const char *v)
{
	if (empty("--agent-socket", v,
		  "empty path; give the path of the socket to create"))
		return -EINVAL;
	o->board.agent_socket = v;
	o->board.agent = true;
	return 0;
}

static int opt_agent_allow(struct cli_run_opts *o, const char *v)
{
	if (!qga_mux_allow_valid(v)) {
		pr_err("--agent-allow '%s': give command names separated by "
		       "commas, e.g. guest-ping,guest-get-vcpus",
		       v);
		return -EINVAL;
	}
	o->board.agent_allow = v;
	return 0;
}

static int opt_agent_trace(struct cli_run_opts *o, const char *v)
{
	if (strcmp(v, "on") && strcmp(v, "off")) {
		pr_err("--agent-trace '%s': give on or off", v);
		return -EINVAL;
	}
	o->board.agent_trace = !strcmp(v, "on");
	return 0;
}

static int opt_no_reboot(struct cli_run_opts *o, const char *v)
{
	(void)v;
	o->board.no_reboot = true;
	return 0;
}

static int opt_guest_eject(struct cli_run_opts *o, const char *v)
{
	if (strcmp(v, "allow") && strcmp(v, "deny")) {
		pr_err("--guest-eject '%s': give allow or deny", v);
		return -EINVAL;
	}
	o->board.guest_eject = !strcmp(v, "deny") ? HOTPLUG_GUEST_EJECT_DENY
						  : HOTPLUG_GUEST_EJECT_ALLOW;
	return 0;
}

static int opt_disk(struct cli_run_opts *o, const char *v)
{
	unsigned int n = o->board.nr_disks;
	struct hv_err err = { 0 };

	if (n == BOARD_MAX_DISKS) {
		pr_err("--disk %s: at most %d disks", v, BOARD_MAX_DISKS);
		return -EINVAL;
	}
	if (strlen(v) >= CLI_DISK_TEXT) {
		pr_err("--disk: too long; give a shorter path");
		return -EINVAL;
	}
	strcpy(o->disk_text[n], v);
	if (cli_parse_disk(o->disk_text[n], &o->board.disks[n], &err)) {
		pr_err("--disk '%s': %s; use path=FILE|DEVICE[,readonly=on]"
		       "[,id=NAME]",
		       v, hv_err_msg(&err));
		return -EINVAL;
	}
	o->board.nr_disks++;
	return 0;
}

static int opt_net(struct cli_run_opts *o, const char *v)
{
	unsigned int n = o->board.nr_nets;
	struct hv_err err = { 0 };

	if (n == BOARD_MAX_NETS) {
		pr_err("--net %s: at most %d network devices", v,
		       BOARD_MAX_NETS);
		return -EINVAL;
	}
	if (strlen(v) >= CLI_NET_TEXT) {
		pr_err("--net: too long");
		return -EINVAL;
	}
	strcpy(o->net_text[n], v);
	if (cli_parse_net(o->net_text[n], &o->board.nets[n], &err)) {
		pr_err("--net '%s': %s; use tap=NAME[,mac=MAC][,id=NAME]", v,
		       hv_err_msg(&err));
		return -EINVAL;
	}
	o->board.nr_nets++;
	return 0;
}

static const struct cli_opt options[] = {
	{ .name = "--kernel",
	  .arg = "PATH",
	  .help = "ELF kernel with a PVH entry note, or a Linux bzImage "
		  "(64-bit boot protocol)",
	  .def = "the built-in tiny guest",
	  .parse = opt_kernel },
	{ .name = "--cmdline",
	  .arg = "TEXT",
	  .help = "kernel command line",
	  .parse = opt_cmdline },
	{ .name = "--initrd",
	  .arg = "PATH",
	  .help = "initial ramdisk (PVH module 0, or the bzImage's ramdisk)",
	  .parse = opt_initrd },
	{ .name = "--memory",
	  .arg = "SIZE",
	  .help = "guest RAM, e.g. 512M or 2G; no unit means MiB",
	  .def = "256M",
	  .parse = opt_memory },
	{ .name = "--cpus",
	  .arg = "boot=N,max=M",
	  .help = "vCPUs at boot and the most that can be hot-added; max "
		  "defaults to boot",
	  .def = "boot=1",
	  .parse = opt_cpus },
	{ .name = "--serial",
	  .arg = "stdio|file:PATH|none",
	  .help = "where the COM1 console goes",
	  .def = "stdio",
	  .parse = opt_serial },
	{ .name = "--api-socket",
	  .arg = "PATH",
	  .help = "QMP control socket (`hotvm cpu`, QEMU tools); only hotvm's "
		  "own user and root may connect",
	  .parse = opt_api_socket },
	{ .name = "--api-group",
	  .arg = "GROUP",
	  .help = "members of GROUP (a name or a gid) may connect too",
	  .parse = opt_api_group },
	{ .name = "--name",
	  .arg = "NAME",
	  .help = "VM name for hooks and QMP",
	  .def = BOARD_DEFAULT_NAME,
	  .parse = opt_name },
	{ .name = "--hook",
	  .arg = "PATH",
	  .help = "run PATH at every host hotplug state, as `PATH VM CPU STATE "
		  "up|down`; nonzero vetoes (repeatable, up to " MAX_HOOKS
		  "); its environment is only PATH, HOTVM_VM, HOTVM_CPU, "
		  "HOTVM_STATE and HOTVM_DIRECTION; its output (4 KiB a call) "
		  "goes to hotvm's log; what it leaves in its process group "
		  "is killed when it ends",
	  .parse = opt_hook },
	{ .name = "--hook-timeout",
	  .arg = "MS",
	  .help = "kill a hook after MS",
	  .def = STR(HOOKS_DEFAULT_TIMEOUT),
	  .parse = opt_hook_timeout },
	{ .name = "--hotplug-timeout",
	  .arg = "MS",
	  .help = "how long a hot-add or removal waits for the guest",
	  .def = STR(HOTPLUG_DEFAULT_TIMEOUT_MS),
	  .parse = opt_hotplug_timeout },
	{ .name = "--hotplug-wait",
	  .arg = "acknowledged|started",
	  .help = "what a hot-add waits for when the guest does not report "
		  "its own states (Linux): its `_OST`, or also the vCPU "
		  "started by the guest (Linux: once user space onlines it); "
		  "`device_add`'s `\"wait\"` overrides it",
	  .def = "acknowledged",
	  .parse = opt_hotplug_wait },
	{ .name = "--prestage",
	  .arg = "K",
	  .help = "keep K free vCPUs created ahead of demand (fd, run area, "
		  "thread waiting): a hot-add of one pays only the guest's "
		  "part",
	  .def = "0",
	  .parse = opt_prestage },
	{ .name = "--dump-acpi",
	  .arg = "DIR",
	  .help = "write the ACPI tables these options give to DIR "
		  "(`rsdp.dat xsdt.dat facp.dat apic.dat dsdt.dat`, for "
		  "`iasl -d` and `acpiexec`) and exit 0 without booting; "
		  "needs no `/dev/kvm`, so KVM's vCPU limit is not checked",
	  .parse = opt_dump_acpi },
	{ .name = "--seccomp",
	  .arg = "on|log|off",
	  .help = "system-call filters per thread (vCPU, control, main): `on` "
		  "stops the VM with status 4 and names a forbidden call; "
		  "`log` lets it run and the kernel logs it (audit); `off`, "
		  "none. Hooks run outside the filters",
	  .def = "on",
	  .parse = opt_seccomp },
	{ .name = "--agent",
	  .help = "a port for the QEMU guest agent, through which hotvm "
		  "follows Linux's own view of its CPUs, onlines the ones it "
		  "hot-adds, offlines the ones it removes if Linux is slow "
		  "to, and writes guest-side faults to Linux's "
		  "cpuN/hotplug/fail; which port: `--agent-channel`; off: "
		  "the guest sees no agent port",
	  .parse = opt_agent },
	{ .name = "--agent-channel",
	  .arg = "virtio|com2|vsock[:PORT]",
	  .help = "`--agent`'s port: `virtio`, a virtio-console (virtio-MMIO, "
		  "LNRO0005) with one port named org.qemu.guest_agent.0, "
		  "which Debian's qemu-guest-agent unit starts on by itself "
		  "(`qemu-ga -m virtio-serial`); `com2`, a second UART (I/O "
		  "0x2f8, IRQ 3) for guests without virtio (`qemu-ga -m "
		  "isa-serial -p /dev/ttyS1`); `vsock`, a connection through "
		  "`--vsock` to the guest's PORT (default " STR(
			  CLI_AGENT_VSOCK_PORT) ", `qemu-ga -m vsock-listen -p "
						"CID:PORT`, started in the "
						"guest by hand)",
	  .def = "virtio",
	  .parse = opt_agent_channel },
	{ .name = "--agent-socket",
	  .arg = "PATH",
	  .help = "also serve that guest agent to other clients on the unix "
		  "socket PATH, in the agent's own protocol (libvirt's "
		  "agent channel, qemu-ga-client), as a chardev wired to "
		  "the agent would: any command the agent accepts goes "
		  "through (see `--agent-allow`). hotvm checks each line's "
		  "form (QEMU's JSON, one request, no duplicate key, no "
		  "`\\u0000`), not what it asks, and makes it one call of "
		  "its own, its calls first; implies `--agent`; only hotvm's "
		  "own user and root may connect",
	  .parse = opt_agent_socket },
	{ .name = "--agent-allow",
	  .arg = "CMD,CMD...",
	  .help = "with `--agent-socket`: the only agent commands its clients "
		  "may send (e.g. `guest-ping,guest-get-vcpus,guest-set-vcpus`"
		  "); any other is refused with the agent's own error for a "
		  "disabled command, naming `--agent-allow`. `guest-sync` "
		  "and `guest-sync-delimited` are always allowed. Without "
		  "it: everything the agent accepts, as a chardev would",
	  .def = "all",
	  .parse = opt_agent_allow },
	{ .name = "--agent-trace",
	  .arg = "on|off",
	  .help = "with `--agent`: `on` mirrors Linux's own cpuhp states "
		  "around each hotplug operation (its state list, its "
		  "cpuhp trace events read from tracefs through the agent) "
		  "into query-cpuhp, CPUHP_STATE and `hotvm cpu trace`. "
		  "On by default over virtio-console and vsock (eight agent "
		  "calls an operation); off by default over COM2, where every "
		  "byte of those calls is a VM exit (seconds in the nested "
		  "lab)",
	  .def = "on (off with com2)",
	  .parse = opt_agent_trace },
	{ .name = "--no-reboot",
	  .help = "a reset (the guest's reboot or triple fault, "
		  "`system_reset`) ends hotvm instead of resetting the VM: "
		  "status 0, or 4 after a triple fault",
	  .parse = opt_no_reboot },
	{ .name = "--guest-eject",
	  .arg = "allow|deny",
	  .help = "a CPU the guest ejects on its own (Linux's sysfs eject): "
		  "removed, as QEMU does (`allow`), or kept and presented to "
		  "the guest again (`deny`)",
	  .def = "allow",
	  .parse = opt_guest_eject },
	{ .name = "--disk",
	  .arg = "path=FILE|DEVICE[,readonly=on][,id=NAME]",
	  .help = "a virtio-blk disk (virtio-MMIO, found by Linux's "
		  "`virtio_mmio` and `virtio_blk` through ACPI) on a raw "
		  "image or a block device, whole 512-byte sectors, locked "
		  "against other users (a second VM, a second `--disk`); "
		  "`readonly=on` for a file that cannot be written; NAME "
		  "(up to 20 characters) is its serial; repeatable, up to "
		  "8 (no commas in the path)",
	  .parse = opt_disk },
	{ .name = "--net",
	  .arg = "tap=NAME[,mac=MAC][,id=NAME]",
	  .help = "a virtio-net NIC (virtio-MMIO, found by Linux's "
		  "`virtio_mmio` and `virtio_net` through ACPI) on the "
		  "existing tap NAME (`ip tuntap add NAME mode tap`; README "
		  "says how to bridge it), which hotvm opens but never "
		  "configures; MAC given, or made from `--name` (locally "
		  "administered, the same for the same name); NAME (up to "
		  "16 characters) names it in messages. Checksum and TSO "
		  "offloads where the tap takes them (`offload=off` turns "
		  "them off) and mergeable receive buffers "
		  "(`mrg_rxbuf=off`); repeatable, up to 4",
	  .parse = opt_net },
	{ .name = "--vsock",
	  .arg = "cid=N,socket=PATH",
	  .help = "a virtio-vsock device (virtio-MMIO, LNRO0005) whose guest "
		  "CID is N (3 to 4294967294), its host end unix sockets as "
		  "Firecracker's hybrid vsock: a host program connects to "
		  "PATH and sends `CONNECT <port>\\n` (answered `OK "
		  "<hostport>\\n`) to reach the guest's listener on <port>; "
		  "the guest's connections to the host's port P reach the "
		  "unix socket PATH_P",
	  .parse = opt_vsock },
	{ .name = "--help",
	  .alias = "-h",
	  .help = "show this help",
	  .parse = opt_help },
};

const struct cli_opt *cli_run_options(size_t *n)
{
	*n = sizeof(options) / sizeof(options[0]);
	return options;
}
