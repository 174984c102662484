// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command state's life (see vmm/api/qmp_cmds.h): made when the
 * commands are registered, every handler's and event callback's ctx,
 * detached from the controller's events, freed once nothing can call
 * them.  Above every command file: it registers the table and the events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hotplug_linux.h"
#include "qmp.h"
#include "qmp_cmds_internal.h"

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
	/* Linux's trace of an operation is read after its reply. */
	qmp_server_after_ops(s, hotplug_after_reply, hp);
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
