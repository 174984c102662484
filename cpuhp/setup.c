// SPDX-License-Identifier: GPL-2.0-only
/*
 * Installing and removing callbacks and instances at run time, with and
 * without running them on the CPUs already past the state, and the
 * introspection the API and tests read.
 */
#include "internal.h"

static bool cpuhp_is_inner(const struct cpuhp_machine *m, int state)
{
	return state > CPUHP_OFFLINE && state < cpuhp_online_state(m);
}

/* A free slot of the requested dynamic range, or a free static slot. */
static int cpuhp_reserve_state(const struct cpuhp_machine *m, int state)
{
	unsigned int flag;

	if (state == CPUHP_PREPARE_DYN || state == CPUHP_ONLINE_DYN) {
		flag = state == CPUHP_PREPARE_DYN ? CPUHP_F_DYN_PREPARE
						  : CPUHP_F_DYN_ONLINE;
		for (int s = 1; s < cpuhp_online_state(m); s++)
			if ((m->steps[s].flags & flag) && !m->steps[s].name)
				return s;
		return -ENOSPC;
	}
	if (!cpuhp_is_inner(m, state))
		return -EINVAL;
	return m->steps[state].name ? -EBUSY : state;
}

static void cpuhp_uninstall(struct cpuhp_step *step)
{
	step->name = NULL;
	step->startup = NULL;
	step->teardown = NULL;
	step->startup_multi = NULL;
	step->teardown_multi = NULL;
	step->data = NULL;
	step->multi_instance = false;
}

/*
 * Run @state's @bringup callback (for @node alone when not NULL) on every
 * CPU at or above it, in CPU order, below @upto.
 */
static int cpuhp_issue_all(struct cpuhp_machine *m, int state, bool bringup,
			   struct cpuhp_node *node, unsigned int upto,
			   bool rollback, unsigned int *failed)
{
	if (!cpuhp_step_has_cb(&m->steps[state], bringup))
		return 0;
	for (unsigned int cpu = 0; cpu < upto; cpu++) {
		int ret;

		if (m->cpus[cpu].state < state)
			continue;
		ret = cpuhp_invoke(m, cpu, state, bringup, node, rollback);
		if (!ret)
			continue;
		if (failed) {
			*failed = cpu;
			return ret;
		}
		/* Teardown on removal, or undo of an install: must not fail. */
		cpuhp_log(m, CPUHP_LOG_ERR,
			  "cpuhp: CPU %u: %s of %s failed with %d during %s\n",
			  cpu, bringup ? "startup" : "teardown",
			  m->steps[state].name, ret,
			  rollback ? "rollback" : "removal");
		if (rollback)
			cpuhp_mark_broken(m, cpu, state, ret);
	}
	return 0;
}

/* Startup on every CPU at or above @state; undo the done ones on failure. */
static int cpuhp_issue_install(struct cpuhp_machine *m, int state,
			       struct cpuhp_node *node)
{
	unsigned int failed = 0;
	int ret = cpuhp_issue_all(m, state, true, node, m->nr_cpus, false,
				  &failed);

	if (ret)
		cpuhp_issue_all(m, state, false, node, failed, true, NULL);
	return ret;
}

static int cpuhp_setup(struct cpuhp_machine *m, int state, const char *name,
		       bool invoke, const struct cpuhp_step *cbs)
{
	struct cpuhp_step *step;
	int ret, s;

	if (!name)
		return -EINVAL;
	ret = cpuhp_enter(m);
	if (ret)
		return ret;
	s = cpuhp_reserve_state(m, state);
	if (s < 0) {
		cpuhp_leave(m);
		return s;
	}
	step = &m->steps[s];
	step->name = name;
	step->startup = cbs->startup;
	step->teardown = cbs->teardown;
	step->startup_multi = cbs->startup_multi;
	step->teardown_multi = cbs->teardown_multi;
	step->data = cbs->data;
	step->multi_instance = cbs->multi_instance;
	ret = invoke ? cpuhp_issue_install(m, s, NULL) : 0;
	if (ret)
		cpuhp_uninstall(step);
	cpuhp_leave(m);
	if (ret)
		return ret;
	return state == s ? 0 : s;
}

int cpuhp_setup_state_cb(struct cpuhp_machine *m, int state, const char *name,
			 bool invoke, cpuhp_cb_t startup, cpuhp_cb_t teardown,
			 void *data)
{
	const struct cpuhp_step cbs = {
		.startup = startup,
		.teardown = teardown,
		.data = data,
	};

	return cpuhp_setup(m, state, name, invoke, &cbs);
}

int cpuhp_setup_state_multi(struct cpuhp_machine *m, int state,
			    const char *name, cpuhp_multi_cb_t startup,
			    cpuhp_multi_cb_t teardown, void *data)
{
	const struct cpuhp_step cbs = {
		.startup_multi = startup,
		.teardown_multi = teardown,
		.data = data,
		.multi_instance = true,
	};

	/* No instances yet, so there is nothing to invoke. */
	return cpuhp_setup(m, state, name, false, &cbs);
}

static int cpuhp_installed(const struct cpuhp_machine *m, int state)
{
	if (!cpuhp_is_inner(m, state))
		return -EINVAL;
	return m->steps[state].name ? 0 : -ENOENT;
}

int cpuhp_remove_state_cb(struct cpuhp_machine *m, int state, bool invoke)
{
	int ret = cpuhp_enter(m);

	if (ret)
		return ret;
	ret = cpuhp_installed(m, state);
	if (!ret && m->steps[state].instances) {
		cpuhp_log(m, CPUHP_LOG_ERR,
			  "cpuhp: state %d (%s) still has instances: not "
			  "removed\n",
			  state, m->steps[state].name);
		ret = -EBUSY;
	}
	if (!ret) {
		if (invoke)
			cpuhp_issue_all(m, state, false, NULL, m->nr_cpus,
					false, NULL);
		cpuhp_uninstall(&m->steps[state]);
	}
	cpuhp_leave(m);
	return ret;
}

static int cpuhp_multi_state(const struct cpuhp_machine *m, int state)
{
	int ret = cpuhp_installed(m, state);

	if (ret)
		return ret;
	return m->steps[state].multi_instance ? 0 : -EINVAL;
}

int cpuhp_state_add_instance_cb(struct cpuhp_machine *m, int state,
				struct cpuhp_node *node, bool invoke)
{
	struct cpuhp_node **tail;
	int ret = cpuhp_enter(m);

	if (ret)
		return ret;
	ret = node ? cpuhp_multi_state(m, state) : -EINVAL;
	if (!ret && node->linked)
		ret = -EEXIST;
	if (!ret && invoke)
		ret = cpuhp_issue_install(m, state, node);
	if (!ret) {
		/* Insertion order is the order instances are walked in. */
		for (tail = &m->steps[state].instances; *tail;
		     tail = &(*tail)->next)
			;
		node->next = NULL;
		node->linked = true;
		*tail = node;
	}
	cpuhp_leave(m);
	return ret;
}

int cpuhp_state_remove_instance_cb(struct cpuhp_machine *m, int state,
				   struct cpuhp_node *node, bool invoke)
{
	struct cpuhp_node **pp = NULL;
	int ret = cpuhp_enter(m);

	if (ret)
		return ret;
	ret = cpuhp_multi_state(m, state);
	if (!ret) {
		for (pp = &m->steps[state].instances; *pp && *pp != node;
		     pp = &(*pp)->next)
			;
		if (!*pp)
			ret = -ENOENT;
	}
	if (!ret) {
		if (invoke)
			cpuhp_issue_all(m, state, false, node, m->nr_cpus,
					false, NULL);
		*pp = node->next;
		node->next = NULL;
		node->linked = false;
	}
	cpuhp_leave(m);
	return ret;
}

static enum cpuhp_section cpuhp_step_section(const struct cpuhp_step *step)
{
	if (!(step->flags & CPUHP_F_AP))
		return CPUHP_SECTION_PREPARE;
	return step->flags & CPUHP_F_NOFAIL ? CPUHP_SECTION_STARTING
					    : CPUHP_SECTION_ONLINE;
}

const char *cpuhp_section_name(enum cpuhp_section section)
{
	switch (section) {
	case CPUHP_SECTION_PREPARE:
		return "prepare";
	case CPUHP_SECTION_STARTING:
		return "starting";
	case CPUHP_SECTION_ONLINE:
		return "online";
	}
	return "?";
}

int cpuhp_state_info(const struct cpuhp_machine *m, int state,
		     struct cpuhp_state_info *info)
{
	const struct cpuhp_step *step;

	if (state < 0 || state >= (int)m->nr_states)
		return -EINVAL;
	step = &m->steps[state];
	*info = (struct cpuhp_state_info){
		.state = state,
		.name = step->name,
		.has_startup = cpuhp_step_has_cb(step, true),
		.has_teardown = cpuhp_step_has_cb(step, false),
		.multi_instance = step->multi_instance,
		.flags = step->flags,
		.section = cpuhp_step_section(step),
	};
	return 0;
}

int cpuhp_cpu_info(const struct cpuhp_machine *m, unsigned int cpu,
		   struct cpuhp_cpu *info)
{
	if (cpu >= m->nr_cpus)
		return -EINVAL;
	*info = m->cpus[cpu];
	return 0;
}

int cpuhp_state_by_name(const struct cpuhp_machine *m, const char *name)
{
	for (unsigned int s = 0; s < m->nr_states; s++)
		if (m->steps[s].name && !cpuhp_strcmp(m->steps[s].name, name))
			return (int)s;
	return -ENOENT;
}
