// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command state (see vmm/api/qmp_cmds.h, qmp_cmds_internal.h): made
 * when the commands are registered, every handler's and event callback's
 * ctx, freed once nothing can call them.  It keeps what QEMU would show
 * of the vCPUs and the controller does not: their QOM paths, and a copy
 * of the state names the event callbacks read without the controller.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "qmp.h"
#include "qmp_cmds_internal.h"
#include "vm.h"

const char *const qc_side_names[] = {
	[HP_SIDE_HOST] = "host",
	[HP_SIDE_GUEST] = "guest",
};

void qc_add_int(struct json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

void qc_add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

void qc_add_bool(struct json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

const char *qc_err_text(int rc)
{
	return strerror(rc < 0 ? -rc : rc);
}

int qc_view(struct qmp_cmds *qc, unsigned int cpu, struct hp_cpu_view *v)
{
	int rc = hotplug_cpu_view(qc->hp, cpu, v);

	if (rc)
		memset(v, 0, sizeof(*v));
	v->cpu = cpu;
	return rc;
}

struct json_object *qc_cpu_props(unsigned int cpu)
{
	struct json_object *p = json_object_new_object();

	qc_add_int(p, "socket-id", cpu);
	qc_add_int(p, "core-id", 0);
	qc_add_int(p, "thread-id", 0);
	return p;
}

/* ---- state names ---- */

void qc_names_refresh(struct qmp_cmds *qc)
{
	for (int side = HP_SIDE_HOST; side <= HP_SIDE_GUEST; side++) {
		struct qc_names *nm = &qc->names[side];

		for (int i = 0; i < nm->n; i++) {
			struct cpuhp_state_info info;
			char name[QC_NAME_MAX] = "";

			if (!hotplug_state_info(qc->hp, side, i, &info) &&
			    info.name)
				snprintf(name, sizeof(name), "%s", info.name);
			pthread_mutex_lock(&qc->lock);
			memcpy(nm->name[i], name, sizeof(name));
			pthread_mutex_unlock(&qc->lock);
		}
	}
}

const char *qc_name_locked(struct qmp_cmds *qc, enum hp_side side, int state)
{
	const struct qc_names *nm = &qc->names[side];

	if (state < 0 || state >= nm->n || !nm->name[state][0])
		return NULL;
	return nm->name[state];
}

const char *qc_state_name(struct qmp_cmds *qc, enum hp_side side, int state,
			  char *buf, size_t len)
{
	const char *n;

	pthread_mutex_lock(&qc->lock);
	n = qc_name_locked(qc, side, state);
	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%d", state);
	pthread_mutex_unlock(&qc->lock);
	return buf;
}

struct json_object *qc_name_or_null(struct qmp_cmds *qc, enum hp_side side,
				    int state)
{
	struct json_object *o = NULL;
	const char *n;

	pthread_mutex_lock(&qc->lock);
	n = qc_name_locked(qc, side, state);
	if (n)
		o = json_object_new_string(n);
	pthread_mutex_unlock(&qc->lock);
	return o;
}

/* ---- QOM paths ---- */

const char *qc_qom_path(struct qmp_cmds *qc, const struct hp_cpu_view *v,
			char *buf, size_t len)
{
	struct qc_slot *sl = &qc->slots[v->cpu];
	bool plugged = hotplug_cpu_plugged(v);

	buf[0] = '\0';
	pthread_mutex_lock(&qc->lock);
	if (!plugged) {
		if (sl->kind != QC_PATH_UNATTACHED || !v->boot)
			sl->kind = QC_PATH_NONE;
	} else if (v->id[0]) {
		sl->kind = QC_PATH_PERIPHERAL;
		snprintf(sl->id, sizeof(sl->id), "%s", v->id);
	} else if (sl->kind == QC_PATH_NONE || sl->kind == QC_PATH_PERIPHERAL) {
		sl->kind = QC_PATH_ANON;
		sl->anon = qc->next_anon++;
	}
	if (plugged) {
		if (sl->kind == QC_PATH_UNATTACHED)
			snprintf(buf, len, QC_UNATTACHED, v->cpu);
		else if (sl->kind == QC_PATH_PERIPHERAL)
			snprintf(buf, len, QC_PERIPHERAL, sl->id);
		else
			snprintf(buf, len, QC_PERIPHERAL_ANON, sl->anon);
	}
	pthread_mutex_unlock(&qc->lock);
	return buf;
}

void qc_mark_added(struct qmp_cmds *qc, unsigned int cpu, const char *id)
{
	pthread_mutex_lock(&qc->lock);
	qc->slots[cpu] = (struct qc_slot){ .kind = QC_PATH_NONE };
	if (!id)
		qc->slots[cpu] = (struct qc_slot){ .kind = QC_PATH_ANON,
						   .anon = qc->next_anon++ };
	pthread_mutex_unlock(&qc->lock);
}

/* ---- life ---- */

static void qc_free(struct qmp_cmds *qc)
{
	pthread_mutex_destroy(&qc->lock);
	free(qc->slots);
	free(qc->names[HP_SIDE_HOST].name);
	free(qc->names[HP_SIDE_GUEST].name);
	free(qc);
}

/* The state for hp: its slots' QOM paths and room for its state names. */
static struct qmp_cmds *qc_new(struct qmp_server *s, struct hotplug *hp,
			       struct vm *vm)
{
	struct qmp_cmds *qc = calloc(1, sizeof(*qc));
	unsigned int max = hotplug_max_cpus(hp);

	if (!qc)
		return NULL;
	*qc = (struct qmp_cmds){ .s = s, .hp = hp, .vm = vm, .max = max };
	pthread_mutex_init(&qc->lock, NULL);
	qc->slots = calloc(max, sizeof(*qc->slots));
	for (int side = HP_SIDE_HOST; side <= HP_SIDE_GUEST; side++) {
		struct qc_names *nm = &qc->names[side];

		nm->n = hotplug_nr_states(hp, side);
		nm->name = calloc(nm->n, sizeof(*nm->name));
		if (!nm->name)
			goto fail;
	}
	if (!qc->slots)
		goto fail;
	for (unsigned int cpu = 0; cpu < max; cpu++) {
		struct hp_cpu_view v;

		if (!hotplug_cpu_view(hp, cpu, &v) && v.boot)
			qc->slots[cpu].kind = QC_PATH_UNATTACHED;
	}
	return qc;
fail:
	qc_free(qc);
	return NULL;
}

int qmp_cmds_register(struct qmp_server *s, struct hotplug *hp, struct vm *vm,
		      struct qmp_cmds **out)
{
	size_t n;
	const struct qmp_command *table = qmp_cmds_table(&n);
	struct qmp_cmds *qc;
	struct hp_events ev;
	int rc;

	if (!hotplug_max_cpus(hp) || hotplug_nr_states(hp, HP_SIDE_HOST) <= 0 ||
	    hotplug_nr_states(hp, HP_SIDE_GUEST) <= 0)
		return -EINVAL;
	qc = qc_new(s, hp, vm);
	if (!qc)
		return -ENOMEM;
	rc = qmp_server_register(s, table, n, qc);
	if (rc) {
		qc_free(qc);
		return rc;
	}
	qc_names_refresh(qc);
	ev = qc_events(qc);
	hotplug_set_events(hp, &ev);
	*out = qc;
	return 0;
}

void qmp_cmds_detach(struct qmp_cmds *qc)
{
	/* Once: the controller may be gone by the time the state is freed. */
	if (!qc || qc->detached)
		return;
	qc->detached = true;
	hotplug_set_events(qc->hp, NULL);
	/* A callback that copied the old events before finishes first. */
	pthread_mutex_lock(&qc->lock);
	qc->s = NULL;
	pthread_mutex_unlock(&qc->lock);
}

void qmp_cmds_unregister(struct qmp_cmds *qc)
{
	if (!qc)
		return;
	qmp_cmds_detach(qc);
	qc_free(qc);
}
