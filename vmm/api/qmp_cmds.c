// SPDX-License-Identifier: GPL-2.0-only
/*
 * What every command family reads of the command state (see
 * vmm/api/qmp_cmds.h, qmp_cmds_internal.h): what QEMU would show of the
 * vCPUs and the controller does not, their QOM paths, and a copy of the
 * state names the event callbacks read without the controller; and the
 * JSON helpers the replies share.
 */
#include <stdio.h>
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
