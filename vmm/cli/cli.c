// SPDX-License-Identifier: GPL-2.0-only
/*
 * Option parsing for `hotvm run`.  Hand-rolled rather than getopt_long so
 * the parser is reentrant and unit tests can call it repeatedly.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hotplug.h"
#include "cli.h"
#include "log.h"

#define CLI_MAX_MS   (24 * 3600 * 1000) /* a day: a typo beyond */
#define CLI_MAX_NAME 64

int cli_parse_size(const char *s, uint64_t *out)
{
	unsigned int shift = 0;
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	if (shift) {
		end++;
		if (!strcasecmp(end, "ib") || !strcasecmp(end, "b"))
			end += strlen(end);
	}
	if (*end)
		return -EINVAL;
	if (!v || (shift && v > (UINT64_MAX >> shift)))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

int cli_parse_memory(const char *s, uint64_t *out)
{
	size_t n = s ? strlen(s) : 0;
	uint64_t v;
	int ret;

	ret = cli_parse_size(s, &v);
	if (ret)
		return ret;
	/* cli_parse_size() took it, so a final digit means no unit. */
	if (s[n - 1] >= '0' && s[n - 1] <= '9') {
		if (v > (UINT64_MAX >> 20))
			return -ERANGE;
		v <<= 20;
	}
	*out = v;
	return 0;
}

/* A decimal unsigned int, no sign, no suffix, no junk. */
static int parse_uint(const char *s, size_t len, unsigned int *out)
{
	unsigned long v = 0;

	if (!len || len > 9)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	*out = (unsigned int)v;
	return 0;
}

int cli_parse_cpus(const char *s, struct board_cpus *out, char *why,
		   size_t whylen)
{
	bool have_boot = false, have_max = false;
	unsigned int boot = 1, max = 0;
	const char *p = s;

	if (!s || !*s) {
		snprintf(why, whylen, "empty value");
		return -EINVAL;
	}
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		size_t klen, vlen;
		unsigned int v;

		if (!eq) {
			snprintf(why, whylen, "'%.*s' is not key=value",
				 (int)len, p);
			return -EINVAL;
		}
		klen = (size_t)(eq - p);
		vlen = len - klen - 1;
		if (parse_uint(eq + 1, vlen, &v)) {
			snprintf(why, whylen, "'%.*s' is not a number",
				 (int)vlen, eq + 1);
			return -EINVAL;
		}
		if (klen == 4 && !strncmp(p, "boot", 4) && !have_boot) {
			boot = v;
			have_boot = true;
		} else if (klen == 3 && !strncmp(p, "max", 3) && !have_max) {
			max = v;
			have_max = true;
		} else {
			snprintf(why, whylen, "unknown or repeated key '%.*s'",
				 (int)klen, p);
			return -EINVAL;
		}
		if (!comma)
			break;
		p = comma + 1;
		if (!*p) {
			snprintf(why, whylen, "trailing comma");
			return -EINVAL;
		}
	}
	if (!have_max)
		max = boot;
	if (boot < 1) {
		snprintf(why, whylen, "boot must be at least 1");
		return -EINVAL;
	}
	if (boot > max) {
		snprintf(why, whylen, "boot=%u is greater than max=%u", boot,
			 max);
		return -EINVAL;
	}
	out->boot = boot;
	out->max = max;
	return 0;
}

int cli_parse_ms(const char *s, int *out)
{
	unsigned int v;

	if (!s || parse_uint(s, strlen(s), &v) || !v || v > CLI_MAX_MS)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

int cli_parse_serial(const char *s, struct board_serial *out)
{
	if (!strcmp(s, "stdio")) {
		*out = (struct board_serial){ .sink = SERIAL_SINK_STDIO };
	} else if (!strcmp(s, "none")) {
		*out = (struct board_serial){ .sink = SERIAL_SINK_NONE };
	} else if (!strncmp(s, "file:", 5) && s[5]) {
		*out = (struct board_serial){ .sink = SERIAL_SINK_FILE,
					      .path = s + 5 };
	} else {
		return -EINVAL;
	}
	return 0;
}

void cli_run_usage(FILE *f)
{
	fputs("Usage: hotvm run [options]\n"
	      "\n"
	      "Boot a virtual machine on /dev/kvm.\n"
	      "\n"
	      "Options:\n"
	      "  --kernel PATH        ELF kernel with a PVH entry note, or a "
	      "Linux\n"
	      "                       bzImage (64-bit boot protocol)\n"
	      "                       (default: the built-in tiny guest)\n"
	      "  --cmdline TEXT       kernel command line\n"
	      "  --initrd PATH        initial ramdisk (PVH module 0, or the "
	      "bzImage's\n"
	      "                       ramdisk)\n"
	      "  --memory SIZE        guest RAM, e.g. 512M or 2G; no unit "
	      "means MiB\n"
	      "                       (default 256M)\n"
	      "  --cpus boot=N,max=M  vCPUs at boot and the most that can be\n"
	      "                       hot-added (max defaults to boot)\n"
	      "  --serial stdio|file:PATH|none\n"
	      "                       where the COM1 console goes (default "
	      "stdio)\n"
	      "  --api-socket PATH    QMP control socket (hotvm cpu, QEMU "
	      "tools); only\n"
	      "                       hotvm's own user and root may connect\n"
	      "  --api-group GROUP    members of GROUP (a name or a gid) may "
	      "connect too\n"
	      "  --name NAME          VM name for hooks and QMP (default "
	      "hotvm)\n"
	      "  --hook PATH          run PATH at every host hotplug state, "
	      "as\n"
	      "                       PATH VM CPU STATE up|down; nonzero "
	      "vetoes\n"
	      "                       (repeatable, up to 16); its environment "
	      "is only\n"
	      "                       PATH, HOTVM_VM, HOTVM_CPU, HOTVM_STATE "
	      "and\n"
	      "                       HOTVM_DIRECTION; its output (4 KiB a "
	      "call) goes\n"
	      "                       to hotvm's log; what it leaves in its "
	      "process\n"
	      "                       group is killed when it ends\n"
	      "  --hook-timeout MS    kill a hook after MS (default 10000)\n"
	      "  --hotplug-timeout MS how long a hot-add or removal waits for "
	      "the\n"
	      "                       guest (default 10000)\n"
	      "  --hotplug-wait acknowledged|started\n"
	      "                       what a hot-add waits for when the guest "
	      "does not\n"
	      "                       report its own states (Linux): its _OST "
	      "(default),\n"
	      "                       or also the vCPU started by the guest "
	      "(Linux: once\n"
	      "                       user space onlines it); device_add's "
	      "\"wait\"\n"
	      "                       overrides it\n"
	      "  --prestage K         keep K free vCPUs created ahead of "
	      "demand (fd,\n"
	      "                       run area, thread waiting): a hot-add "
	      "of one pays\n"
	      "                       only the guest's part (default 0)\n"
	      "  --dump-acpi DIR      write the ACPI tables these options "
	      "give\n"
	      "                       to DIR (rsdp.dat xsdt.dat facp.dat "
	      "apic.dat\n"
	      "                       dsdt.dat, for iasl -d and acpiexec) "
	      "and exit\n"
	      "                       0 without booting; needs no /dev/kvm, "
	      "so\n"
	      "                       KVM's vCPU limit is not checked\n"
	      "  --seccomp on|log|off system-call filters per thread (vCPU, "
	      "control,\n"
	      "                       main): on (default) stops the VM with "
	      "status 4\n"
	      "                       and names a forbidden call; log lets "
	      "it run\n"
	      "                       and the kernel logs it (audit); off, "
	      "none.\n"
	      "                       Hooks run outside the filters\n"
	      "  --no-reboot          a reset (the guest's reboot or triple "
	      "fault,\n"
	      "                       system_reset) ends hotvm instead of "
	      "resetting\n"
	      "                       the VM: status 0, or 4 after a triple "
	      "fault\n"
	      "  --guest-eject allow|deny\n"
	      "                       a CPU the guest ejects on its own "
	      "(Linux's\n"
	      "                       sysfs eject): removed, as QEMU does "
	      "(allow,\n"
	      "                       default), or kept and presented to "
	      "the guest\n"
	      "                       again (deny)\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "Exit status: (v << 1) | 1 when the guest writes v to port "
	      "0x501;\n"
	      "0 after SIGINT/SIGTERM, quit or the guest's poweroff; 2 for "
	      "bad\n"
	      "input; 4 when the VM failed.\n",
	      f);
}

/*
 * "--name value" or "--name=value": returns 1 and sets *v on a match, 0 when
 * argv[*i] is another option, -1 when the value is missing.  Advances *i past
 * what it consumed.
 */
static int opt_value(int argc, char **argv, int *i, const char *name,
		     const char **v)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n))
		return 0;
	if (a[n] == '=') {
		*v = a + n + 1;
		return 1;
	}
	if (a[n])
		return 0;
	if (*i + 1 >= argc) {
		pr_err("option %s needs a value; see 'hotvm run --help'", name);
		return -1;
	}
	*v = argv[++*i];
	return 1;
}

int cli_parse_run(int argc, char **argv, struct cli_run_opts *o)
{
	char why[128];
	const char *v;

	*o = (struct cli_run_opts){ 0 };
	board_config_init(&o->board);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int m, ret;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			o->help = true;
			return 0;
		}
		if (!strcmp(a, "--no-reboot")) {
			o->board.no_reboot = true;
			continue;
		}
		if ((m = opt_value(argc, argv, &i, "--kernel", &v))) {
			o->board.kernel = v;
		} else if ((m = opt_value(argc, argv, &i, "--cmdline", &v))) {
			o->board.cmdline = v;
		} else if ((m = opt_value(argc, argv, &i, "--initrd", &v))) {
			o->board.initrd = v;
		} else if ((m = opt_value(argc, argv, &i, "--memory", &v))) {
			if (m < 0)
				return -EINVAL;
			ret = cli_parse_memory(v, &o->board.memory);
			if (ret) {
				pr_err("--memory '%s': %s; give a size such as "
				       "256M, 2G or 512 (MiB)",
				       v,
				       ret == -ERANGE ? "out of range"
						      : "not a size");
				return -EINVAL;
			}
		} else if ((m = opt_value(argc, argv, &i, "--cpus", &v))) {
			if (m < 0)
				return -EINVAL;
			if (cli_parse_cpus(v, &o->board.cpus, why,
					   sizeof(why))) {
				pr_err("--cpus '%s': %s; use boot=N,max=M with "
				       "1 <= N <= M",
				       v, why);
				return -EINVAL;
			}
		} else if ((m = opt_value(argc, argv, &i, "--serial", &v))) {
			if (m < 0)
				return -EINVAL;
			if (cli_parse_serial(v, &o->board.serial)) {
				pr_err("--serial '%s': unknown sink; use "
				       "stdio, file:PATH or none",
				       v);
				return -EINVAL;
			}
		} else if ((m = opt_value(argc, argv, &i, "--api-socket",
					  &v))) {
			if (m > 0 && !*v) {
				pr_err("--api-socket: empty path; give the "
				       "path of the socket to create");
				return -EINVAL;
			}
			o->board.api_socket = v;
		} else if ((m = opt_value(argc, argv, &i, "--api-group", &v))) {
			if (m < 0)
				return -EINVAL;
			if (!*v) {
				pr_err("--api-group: empty name; give a group "
				       "name or number");
				return -EINVAL;
			}
			o->board.api_group = v;
		} else if ((m = opt_value(argc, argv, &i, "--name", &v))) {
			if (m > 0 && (!*v || strlen(v) > CLI_MAX_NAME)) {
				pr_err("--name '%s': give 1 to %d characters",
				       v, CLI_MAX_NAME);
				return -EINVAL;
			}
			o->board.name = v;
		} else if ((m = opt_value(argc, argv, &i, "--hook", &v))) {
			if (m > 0 && o->board.nr_hooks == BOARD_MAX_HOOKS) {
				pr_err("--hook %s: at most %d hooks", v,
				       BOARD_MAX_HOOKS);
				return -EINVAL;
			}
			if (m > 0)
				o->board.hooks[o->board.nr_hooks++] = v;
		} else if ((m = opt_value(argc, argv, &i, "--hook-timeout",
					  &v))) {
			if (m > 0 &&
			    cli_parse_ms(v, &o->board.hook_timeout_ms)) {
				pr_err("--hook-timeout '%s': give "
				       "milliseconds, "
				       "1 to %d",
				       v, CLI_MAX_MS);
				return -EINVAL;
			}
		} else if ((m = opt_value(argc, argv, &i, "--hotplug-timeout",
					  &v))) {
			if (m > 0 &&
			    cli_parse_ms(v, &o->board.hotplug_timeout_ms)) {
				pr_err("--hotplug-timeout '%s': give "
				       "milliseconds, 1 to %d",
				       v, CLI_MAX_MS);
				return -EINVAL;
			}
		} else if ((m = opt_value(argc, argv, &i, "--hotplug-wait",
					  &v))) {
			if (m > 0 && (ret = hotplug_wait_parse(v)) < 0) {
				pr_err("--hotplug-wait '%s': give acknowledged "
				       "or started",
				       v);
				return -EINVAL;
			}
			if (m > 0)
				o->board.hotplug_wait = (enum hotplug_wait)ret;
		} else if ((m = opt_value(argc, argv, &i, "--prestage", &v))) {
			if (m > 0 &&
			    parse_uint(v, strlen(v), &o->board.prestage)) {
				pr_err("--prestage '%s': give how many free "
				       "vCPUs to create ahead (0 or more)",
				       v);
				return -EINVAL;
			}
		} else if ((m = opt_value(argc, argv, &i, "--dump-acpi", &v))) {
			if (m > 0 && !*v) {
				pr_err("--dump-acpi: empty path; give the "
				       "directory for the table files");
				return -EINVAL;
			}
			o->dump_acpi = v;
		} else if ((m = opt_value(argc, argv, &i, "--guest-eject",
					  &v))) {
			if (m > 0 && strcmp(v, "allow") && strcmp(v, "deny")) {
				pr_err("--guest-eject '%s': give allow or deny",
				       v);
				return -EINVAL;
			}
			if (m > 0)
				o->board.guest_eject =
					!strcmp(v, "deny")
						? HOTPLUG_GUEST_EJECT_DENY
						: HOTPLUG_GUEST_EJECT_ALLOW;
		} else if ((m = opt_value(argc, argv, &i, "--seccomp", &v))) {
			if (m > 0 && (ret = seccomp_parse_policy(v)) < 0) {
				pr_err("--seccomp '%s': give on, log or off",
				       v);
				return -EINVAL;
			}
			if (m > 0)
				o->board.seccomp = (enum seccomp_policy)ret;
		} else {
			pr_err("unknown argument '%s'; see 'hotvm run --help'",
			       a);
			return -EINVAL;
		}
		if (m < 0)
			return -EINVAL;
	}
	return 0;
}
