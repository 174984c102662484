// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm cpu add|remove|list`: the verbs over QEMU's own device commands
 * (query-hotpluggable-cpus, device_add, device_del, query-cpus-fast), so
 * they drive a QEMU started with -qmp unix:PATH as well as hotvm.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cpu_device.h"
#include "cpu_json.h"
#include "cpu_render.h"
#include "cpu_slots.h"
#include "cpu_verb.h"
#include "libvirt.h"
#include "qmp_client.h"

#define DEFAULT_DRIVER "host-x86_64-cpu"

/* device_add's arguments for slot (NULL: socket-id cpu's defaults). */
static struct json_object *add_args(struct json_object *slot, long cpu,
				    const char *id)
{
	struct json_object *type = cpu_json_member(slot, "type");
	struct json_object *props = cpu_json_member(slot, "props");
	struct json_object *args = json_object_new_object();

	json_object_object_add(
		args, "driver",
		json_object_new_string(cpu_json_str(type) ?: DEFAULT_DRIVER));
	json_object_object_add(args, "id", json_object_new_string(id));
	/* The slot's own props, as QEMU wants them all (die-id, ...). */
	if (json_object_is_type(props, json_type_object)) {
		json_object_object_foreach(props, k, v)
		{
			json_object_object_add(args, k, json_object_get(v));
		}
	}
	if (!cpu_json_member(args, "socket-id"))
		json_object_object_add(args, "socket-id",
				       json_object_new_int64(cpu));
	if (!cpu_json_member(args, "core-id"))
		json_object_object_add(args, "core-id", json_object_new_int(0));
	if (!cpu_json_member(args, "thread-id"))
		json_object_object_add(args, "thread-id",
				       json_object_new_int(0));
	return args;
}

int cpu_device_add(struct cpu_ctx *x)
{
	struct json_object *hp = NULL, *slot = NULL, *args, *ret = NULL;
	struct json_object **slots;
	struct qmp_client_error e;
	char id[32], what[96];
	size_t n = 0;
	long cpu = -1;
	int rc;

	if (x->o->npos > 2)
		return -EINVAL;
	if (x->o->npos == 2 && cpu_verb_parse_cpu(x->o->pos[1], &cpu))
		return -EINVAL;
	rc = qmp_client_execute(x->c, "query-hotpluggable-cpus", NULL, &hp, &e,
				x->o->timeout_ms);
	if (rc && cpu < 0)
		return cpu_verb_vmm_error(x, &e);
	slots = cpu_slots_sorted(hp, &n);
	if (cpu >= 0) {
		slot = cpu_slots_of(slots, n, cpu);
	} else {
		for (size_t i = 0; i < n && !slot; i++)
			if (!cpu_json_member(slots[i], "qom-path") &&
			    cpu_slots_prop(slots[i], "socket-id") >= 0)
				slot = slots[i];
		if (!slot) {
			fprintf(x->errf, "hotvm: error: no free vCPU slot\n");
			free(slots);
			json_object_put(hp);
			return 1;
		}
		cpu = cpu_slots_prop(slot, "socket-id");
	}
	snprintf(id, sizeof(id), "cpu%ld", cpu);
	args = add_args(slot, cpu, id);
	free(slots);
	json_object_put(hp);
	rc = cpu_verb_call(x, "device_add", args, &ret);
	if (!rc) {
		snprintf(what, sizeof(what), "%s: added (socket-id %ld)", id,
			 cpu);
		cpu_verb_done(x, ret, what);
	}
	json_object_put(ret);
	return rc;
}

/* QEMU's device_del only starts the removal; the event says it is done. */
static int wait_deleted(struct cpu_ctx *x, const char *id)
{
	for (;;) {
		struct json_object *ev;
		const char *name, *dev;
		int rc = qmp_client_next_event(x->c, &ev, x->o->timeout_ms);

		if (rc) {
			fprintf(x->errf,
				"hotvm: error: %s: no DEVICE_DELETED event: "
				"%s\n",
				id, strerror(-rc));
			return 1;
		}
		name = json_object_get_string(cpu_json_member(ev, "event"));
		/* device_del took an id or a path: the event has both. */
		dev = json_object_get_string(
			cpu_json_member(cpu_json_member(ev, "data"),
					*id == '/' ? "path" : "device"));
		rc = name && dev && !strcmp(name, "DEVICE_DELETED") &&
		     !strcmp(dev, id);
		json_object_put(ev);
		if (rc)
			return 0;
	}
}

/*
 * The id device_del wants for socket-id cpu: the one it was added with, or
 * its QOM path when it has none (a boot or anonymous CPU); "cpuN" when the
 * VMM does not say.
 */
static void slot_id(struct cpu_ctx *x, long cpu, char *id, size_t len)
{
	struct json_object *hp = NULL, **slots, *qom;
	struct qmp_client_error e;
	size_t n = 0;

	snprintf(id, len, "cpu%ld", cpu);
	if (!qmp_client_execute(x->c, "query-hotpluggable-cpus", NULL, &hp, &e,
				x->o->timeout_ms)) {
		slots = cpu_slots_sorted(hp, &n);
		qom = cpu_json_member(cpu_slots_of(slots, n, cpu), "qom-path");
		if (cpu_slots_qom_id(qom))
			snprintf(id, len, "%s", cpu_slots_qom_id(qom));
		else if (cpu_json_str(qom))
			snprintf(id, len, "%s", cpu_json_str(qom));
		free(slots);
	}
	json_object_put(hp);
}

int cpu_device_remove(struct cpu_ctx *x)
{
	struct json_object *args, *ret = NULL;
	char id[128], what[160];
	long cpu;
	int rc;

	if (x->o->npos != 2)
		return -EINVAL;
	snprintf(id, sizeof(id), "%s", x->o->pos[1]);
	/* A bare number names a slot: find the id it was added with. */
	if (x->o->pos[1][0] >= '0' && x->o->pos[1][0] <= '9') {
		if (cpu_verb_parse_cpu(x->o->pos[1], &cpu))
			return -EINVAL;
		slot_id(x, cpu, id, sizeof(id));
	}
	args = json_object_new_object();
	json_object_object_add(args, "id", json_object_new_string(id));
	rc = cpu_verb_call(x, "device_del", args, &ret);
	if (!rc && !x->o->no_wait)
		rc = wait_deleted(x, id);
	if (!rc) {
		snprintf(what, sizeof(what), "%s: removed", id);
		cpu_verb_done(x, ret, what);
	}
	json_object_put(ret);
	return rc;
}

int cpu_device_list(struct cpu_ctx *x)
{
	struct json_object *hp = NULL, *fast = NULL;
	int rc;

	if (x->o->npos != 1)
		return -EINVAL;
	rc = cpu_verb_call(x, "query-hotpluggable-cpus", NULL, &hp);
	if (!rc)
		rc = cpu_verb_call(x, "query-cpus-fast", NULL, &fast);
	if (!rc && x->o->json) {
		struct json_object *both = json_object_new_object();

		json_object_object_add(both, "query-hotpluggable-cpus",
				       json_object_get(hp));
		json_object_object_add(both, "query-cpus-fast",
				       json_object_get(fast));
		cpu_verb_print_json(x, both);
		json_object_put(both);
	} else if (!rc && x->o->libvirt_xml) {
		cli_libvirt_print_xml(x->out, hp, fast);
	} else if (!rc) {
		struct json_object *cpuhp = NULL;
		struct qmp_client_error e;

		cpu_render_list(x->out, hp, fast);
		/* hotvm's own query; another VMM (QEMU) has none: skipped. */
		if (!qmp_client_execute(x->c, "query-cpuhp", NULL, &cpuhp, &e,
					x->o->timeout_ms))
			cpu_render_linux(x->out, cpuhp);
		json_object_put(cpuhp);
	}
	json_object_put(hp);
	json_object_put(fast);
	return rc;
}
