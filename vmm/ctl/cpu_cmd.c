// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm cpu VERB`: the options, the verb table and the dispatch.  The
 * verbs themselves live by family: cpu_device.c (QEMU's device commands),
 * cpu_state.c (hotvm's own), cpu_watch.c, cpu_trace.c, and libvirt.c for
 * --connect.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_cmd.h"
#include "cpu_device.h"
#include "cpu_state.h"
#include "cpu_trace.h"
#include "cpu_verb.h"
#include "cpu_watch.h"
#include "libvirt.h"
#include "qmp_client.h"

/*
 * Each verb names the QMP commands it sends ("QMP:" lines), so that a user
 * can do the same from any QMP client; tests/api/test_qmp_cmds.c holds
 * those names to the server's declarations (vmm/api/qmp_cmds_table.c).
 */
static void usage(FILE *f)
{
	fputs("Usage: hotvm cpu COMMAND --api-socket PATH [--json] "
	      "[--timeout SECONDS]\n"
	      "\n"
	      "Commands:\n"
	      "  add [CPU]                 hot-add vCPU CPU (socket-id), or "
	      "the first free slot\n"
	      "                            QMP: query-hotpluggable-cpus, "
	      "device_add\n"
	      "  remove CPU|ID             hot-remove a vCPU (waits for "
	      "DEVICE_DELETED unless --no-wait)\n"
	      "                            QMP: query-hotpluggable-cpus, "
	      "device_del\n"
	      "  list                      possible vCPUs and the present "
	      "ones\n"
	      "                            QMP: query-hotpluggable-cpus, "
	      "query-cpus-fast\n"
	      "  states [CPU]              host and guest hotplug states\n"
	      "                            QMP: query-cpuhp\n"
	      "  target CPU host|guest STATE\n"
	      "                            bring a vCPU to a named state\n"
	      "                            QMP: cpuhp-set-target\n"
	      "  inject CPU host|guest STATE\n"
	      "                            make STATE's next callback fail "
	      "on CPU\n"
	      "                            QMP: cpuhp-inject-fault\n"
	      "  resize N                  add or remove vCPUs until N are "
	      "online\n"
	      "                            QMP: cpu-resize\n"
	      "  watch                     a live view of every vCPU's "
	      "states, from events\n"
	      "                            QMP: query-cpuhp\n"
	      "  trace add|remove CPU      hot-add or remove CPU and draw "
	      "its timeline\n"
	      "                            QMP: cpu-hotplug, query-cpuhp\n"
	      "  trace --from FILE|-       the timeline of an earlier "
	      "cpu-hotplug reply, or\n"
	      "                            one trace --json printed\n"
	      "\n"
	      "Options:\n"
	      "  --api-socket PATH         the VMM's control socket "
	      "(--api-socket of hotvm run)\n"
	      "  --json                    print the raw reply\n"
	      "  --connect URI --domain NAME  list/resize a libvirt domain "
	      "instead\n"
	      "  --libvirt-xml             list as libvirt's <vcpu>/<vcpus> "
	      "XML\n"
	      "  --timeout SECONDS         wait at most this long for a "
	      "reply (default 60)\n"
	      "  --no-wait                 remove: do not wait for "
	      "DEVICE_DELETED\n"
	      "  --wide                    states CPU: every column\n"
	      "  --svg FILE                trace: also draw it as SVG\n"
	      "  --wait STAGE              trace add: reply once the guest "
	      "is acknowledged|started\n"
	      "  -h, --help                this text\n"
	      "\n"
	      "A command that fails prints the server's reason as it gave it "
	      "(for an\n"
	      "operation: which step failed, why, and where the vCPU is now) "
	      "and exits 1.\n",
	      f);
}

static int parse_opts(int argc, char **argv, struct cpu_opts *o, bool *help)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			*help = true;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--no-wait")) {
			o->no_wait = true;
		} else if (!strcmp(a, "--wide")) {
			o->wide = true;
		} else if (!strcmp(a, "--svg") || !strcmp(a, "--from") ||
			   !strcmp(a, "--wait")) {
			if (++i == argc)
				return -EINVAL;
			*(a[2] == 's'	? &o->svg
			  : a[2] == 'f' ? &o->from
					: &o->wait) = argv[i];
		} else if (!strcmp(a, "--libvirt-xml")) {
			o->libvirt_xml = true;
		} else if (!strcmp(a, "--connect") || !strcmp(a, "--domain")) {
			if (++i == argc)
				return -EINVAL;
			*(a[2] == 'c' ? &o->connect : &o->domain) = argv[i];
		} else if (!strcmp(a, "--api-socket") ||
			   !strcmp(a, "--timeout")) {
			if (++i == argc)
				return -EINVAL;
			if (a[2] == 'a') {
				o->socket = argv[i];
			} else {
				char *end;
				long s = strtol(argv[i], &end, 10);

				if (*end || s <= 0 || s > 86400)
					return -EINVAL;
				o->timeout_ms = (int)s * 1000;
			}
		} else if (!strncmp(a, "--api-socket=", 13)) {
			o->socket = a + 13;
		} else if (a[0] == '-' && a[1] &&
			   !(a[1] >= '0' && a[1] <= '9')) {
			return -EINVAL;
		} else if (o->npos <
			   (int)(sizeof(o->pos) / sizeof(o->pos[0]))) {
			o->pos[o->npos++] = a;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

/* What a verb's first argument may be, checked before connecting. */
enum cpu_arg {
	CPU_ARG_CPU,   /* a vCPU: "3" or "cpu3" */
	CPU_ARG_COUNT, /* a number, not "cpuN" */
	CPU_ARG_ANY,   /* a number or any device id */
};

/*
 * Positional counts include the verb.  side: the second argument is host
 * or guest.  args_ok: the verb checks its arguments itself.
 */
static const struct verb {
	const char *name;
	int min, max;
	enum cpu_arg arg;
	bool side;
	bool (*args_ok)(const struct cpu_opts *o);
	int (*fn)(struct cpu_ctx *x);
	bool offline; /* may run without a VMM (trace --from) */
} verbs[] = {
	{ .name = "add", .min = 1, .max = 2, .fn = cpu_device_add },
	{ .name = "remove",
	  .min = 2,
	  .max = 2,
	  .arg = CPU_ARG_ANY,
	  .fn = cpu_device_remove },
	{ .name = "list", .min = 1, .max = 1, .fn = cpu_device_list },
	{ .name = "states", .min = 1, .max = 2, .fn = cpu_state_show },
	{ .name = "target",
	  .min = 4,
	  .max = 4,
	  .side = true,
	  .fn = cpu_state_target },
	{ .name = "inject",
	  .min = 4,
	  .max = 4,
	  .side = true,
	  .fn = cpu_state_inject },
	{ .name = "resize",
	  .min = 2,
	  .max = 2,
	  .arg = CPU_ARG_COUNT,
	  .fn = cpu_state_resize },
	{ .name = "watch", .min = 1, .max = 1, .fn = cpu_watch_verb },
	{ .name = "trace",
	  .min = 1,
	  .max = 3,
	  .args_ok = cpu_trace_args_ok,
	  .fn = cpu_trace_verb,
	  .offline = true },
};

static bool args_ok(const struct verb *v, const struct cpu_opts *o)
{
	long n;

	if (o->npos < v->min || o->npos > v->max)
		return false;
	if (v->arg == CPU_ARG_ANY)
		return true;
	if (v->args_ok)
		return v->args_ok(o);
	if (v->side && strcmp(o->pos[2], "host") && strcmp(o->pos[2], "guest"))
		return false;
	if (v->arg == CPU_ARG_COUNT && !strncmp(o->pos[1], "cpu", 3))
		return false;
	return o->npos < 2 || !cpu_verb_parse_cpu(o->pos[1], &n);
}

int cpu_cmd_run(int argc, char **argv, FILE *out, FILE *errf)
{
	struct cpu_opts o = { .timeout_ms = CPU_CMD_DEFAULT_TIMEOUT_S * 1000 };
	struct cpu_ctx x = { .o = &o, .out = out, .errf = errf };
	struct qmp_client_error e;
	bool help = false;
	size_t v;
	int rc;

	if (parse_opts(argc, argv, &o, &help)) {
		fprintf(errf, "hotvm: cpu: bad option or argument\n");
		usage(errf);
		return 2;
	}
	if (help) {
		usage(out);
		return 0;
	}
	for (v = 0; o.npos && v < sizeof(verbs) / sizeof(verbs[0]); v++)
		if (!strcmp(o.pos[0], verbs[v].name))
			break;
	if (!o.npos || v == sizeof(verbs) / sizeof(verbs[0])) {
		if (o.npos)
			fprintf(errf, "hotvm: cpu: unknown command '%s'\n",
				o.pos[0]);
		usage(errf);
		return 2;
	}
	if (!args_ok(&verbs[v], &o)) {
		fprintf(errf, "hotvm: cpu %s: bad arguments\n", o.pos[0]);
		usage(errf);
		return 2;
	}
	if (o.connect || o.domain)
		return cli_libvirt_run(o.pos[0], o.npos > 1 ? o.pos[1] : NULL,
				       o.connect, o.domain, o.json, out, errf);
	/* trace --from reads an earlier reply: no VMM needed. */
	if (!o.socket && !(verbs[v].offline && o.from)) {
		fprintf(errf, "hotvm: cpu: --api-socket PATH is required\n");
		usage(errf);
		return 2;
	}
	if (o.socket) {
		rc = qmp_client_connect(o.socket, 1, o.timeout_ms, &x.c, &e);
		if (rc)
			return cpu_verb_vmm_error(&x, &e);
	}
	rc = verbs[v].fn(&x);
	if (x.c)
		qmp_client_close(x.c);
	if (rc == -EINVAL) {
		fprintf(errf, "hotvm: cpu %s: bad arguments\n", o.pos[0]);
		usage(errf);
		return 2;
	}
	fflush(out);
	return rc ? 1 : 0;
}

int cpu_cmd_main(int argc, char **argv)
{
	/* Whole lines, so that stderr's never land inside one of stdout's. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cpu_cmd_run(argc, argv, stdout, stderr);
}
