// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm vm powerdown|reset|quit|status`: what a user of virsh or QEMU's
 * monitor does to a whole VM, over the control socket.  Each verb is one
 * QMP command; the table below is the help text too.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "qmp_client.h"
#include "vm_cmd.h"

#define VM_CMD_DEFAULT_TIMEOUT_MS 60000

static const struct vm_verb {
	const char *name, *qmp, *help;
} vm_verbs[] = {
	{ "powerdown", "system_powerdown",
	  "press the ACPI power button (the guest decides)" },
	{ "reset", "system_reset", "reset the VM, as a reset button" },
	{ "quit", "quit", "stop the VM now (hotvm exits 0)" },
	{ "status", "query-status", "prelaunch, running or shutdown" },
};

#define VM_NR_VERBS (sizeof(vm_verbs) / sizeof(vm_verbs[0]))

static void usage(FILE *f)
{
	fputs("Usage: hotvm vm COMMAND --api-socket PATH [--json] "
	      "[--timeout SECONDS]\n\nCommands:\n",
	      f);
	for (size_t i = 0; i < VM_NR_VERBS; i++)
		fprintf(f, "  %-10s %s\n  %-10s QMP: %s\n", vm_verbs[i].name,
			vm_verbs[i].help, "", vm_verbs[i].qmp);
	fputs("\nOptions:\n"
	      "  --api-socket PATH  the VMM's control socket (--api-socket "
	      "of hotvm run)\n"
	      "  --json             print the raw reply\n"
	      "  --timeout SECONDS  wait at most this long for a reply "
	      "(default 60)\n"
	      "  -h, --help         this text\n",
	      f);
}

struct vm_opts {
	const char *socket, *verb;
	bool json, help;
	int timeout_ms;
};

static int parse(int argc, char **argv, struct vm_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *end;
		long s;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			o->help = true;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--api-socket") && i + 1 < argc) {
			o->socket = argv[++i];
		} else if (!strncmp(a, "--api-socket=", 13)) {
			o->socket = a + 13;
		} else if (!strcmp(a, "--timeout") && i + 1 < argc) {
			s = strtol(argv[++i], &end, 10);
			if (*end || s <= 0 || s > 86400)
				return -EINVAL;
			o->timeout_ms = (int)s * 1000;
		} else if (a[0] != '-' && !o->verb) {
			o->verb = a;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

/* The reply as a person reads it; --json: as the VMM sent it. */
static void print_reply(const struct vm_opts *o, const struct vm_verb *v,
			struct json_object *ret, FILE *out)
{
	struct json_object *st;

	if (o->json) {
		fprintf(out, "%s\n",
			json_object_to_json_string_ext(ret,
						       JSON_C_TO_STRING_PLAIN));
	} else if (!strcmp(v->qmp, "query-status") &&
		   json_object_object_get_ex(ret, "status", &st)) {
		fprintf(out, "%s\n", json_object_get_string(st));
	} else {
		fprintf(out, "%s: done\n", v->name);
	}
}

/* With the streams to write to; returns the exit status. */
static int vm_cmd_run(int argc, char **argv, FILE *out, FILE *errf)
{
	struct vm_opts o = { .timeout_ms = VM_CMD_DEFAULT_TIMEOUT_MS };
	const struct vm_verb *v = NULL;
	struct qmp_client_error e = { 0 };
	struct json_object *ret = NULL;
	struct qmp_client *c;
	int rc;

	if (parse(argc, argv, &o)) {
		fprintf(errf, "hotvm: vm: bad option or argument\n");
		usage(errf);
		return 2;
	}
	if (o.help) {
		usage(out);
		return 0;
	}
	for (size_t i = 0; o.verb && i < VM_NR_VERBS; i++)
		if (!strcmp(o.verb, vm_verbs[i].name))
			v = &vm_verbs[i];
	if (!v || !o.socket) {
		if (o.verb && !v)
			fprintf(errf, "hotvm: vm: unknown command '%s'\n",
				o.verb);
		else
			fprintf(errf, "hotvm: vm: %s\n",
				o.verb ? "--api-socket PATH is required"
				       : "which command?");
		usage(errf);
		return 2;
	}
	rc = qmp_client_connect(o.socket, 1, o.timeout_ms, &c, &e);
	if (!rc) {
		rc = qmp_client_execute(c, v->qmp, NULL, &ret, &e,
					o.timeout_ms);
		qmp_client_close(c);
	}
	if (rc) {
		fprintf(errf, "hotvm: vm %s: %s%s%s\n", v->name, e.class,
			*e.class ? ": " : "", e.desc);
		return 1;
	}
	print_reply(&o, v, ret, out);
	json_object_put(ret);
	return 0;
}

int vm_cmd_main(int argc, char **argv)
{
	return vm_cmd_run(argc, argv, stdout, stderr);
}
