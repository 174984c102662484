// SPDX-License-Identifier: GPL-2.0-only
/*
 * Invoking one state's callback for one CPU: fault injection, running on
 * the target CPU for AP states, instance iteration with in-state undo, and
 * the notice that tells the platform what happened.
 */
#include "internal.h"

void cpuhp_log(const struct cpuhp_machine *m, enum cpuhp_log_level level,
	       const char *fmt, ...)
{
	va_list ap;

	if (!m->plat || !m->plat->log)
		return;
	va_start(ap, fmt);
	m->plat->log(m->plat->ctx, level, fmt, ap);
	va_end(ap);
}

int cpuhp_strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

int cpuhp_enter(struct cpuhp_machine *m)
{
	if (m->plat && m->plat->lock)
		m->plat->lock(m->plat->ctx);
	/* Only the lock holder can see this set: the lock is recursive. */
	if (m->in_callback) {
		cpuhp_log(m, CPUHP_LOG_ERR,
			  "cpuhp: re-entered from a callback: refused\n");
		cpuhp_leave(m);
		return -EDEADLK;
	}
	return 0;
}

void cpuhp_leave(struct cpuhp_machine *m)
{
	if (m->plat && m->plat->unlock)
		m->plat->unlock(m->plat->ctx);
}

bool cpuhp_step_has_cb(const struct cpuhp_step *step, bool bringup)
{
	if (!step->name)
		return false;
	if (step->multi_instance)
		return bringup ? step->startup_multi != NULL
			       : step->teardown_multi != NULL;
	return bringup ? step->startup != NULL : step->teardown != NULL;
}

void cpuhp_mark_broken(struct cpuhp_machine *m, unsigned int cpu, int state,
		       int err)
{
	m->cpus[cpu].broken = true;
	cpuhp_log(m, CPUHP_LOG_ERR,
		  "cpuhp: CPU %u: rollback failed at state %d (%s) with %d: "
		  "CPU left at state %d and marked broken\n",
		  cpu, state, m->steps[state].name ? m->steps[state].name : "?",
		  err, m->cpus[cpu].state);
}

/* Undo the instances a failed multi-instance walk had already done. */
static void cpuhp_undo_instances(struct cpuhp_call *c, unsigned int done)
{
	const struct cpuhp_step *step = &c->m->steps[c->state];
	cpuhp_multi_cb_t undo =
		c->bringup ? step->teardown_multi : step->startup_multi;
	struct cpuhp_node *node;

	if (!undo)
		return;
	for (node = step->instances; node && done; node = node->next, done--) {
		int ret = undo(c->cpu, node, step->data);

		if (ret) {
			cpuhp_log(c->m, CPUHP_LOG_ERR,
				  "cpuhp: CPU %u: undo of an instance of %s "
				  "failed with %d\n",
				  c->cpu, step->name, ret);
			c->undo_failed = true;
		}
	}
}

static int cpuhp_call_multi(struct cpuhp_call *c)
{
	const struct cpuhp_step *step = &c->m->steps[c->state];
	cpuhp_multi_cb_t cb =
		c->bringup ? step->startup_multi : step->teardown_multi;
	struct cpuhp_node *node;
	unsigned int done = 0;
	int first = 0;

	if (c->node)
		return cb(c->cpu, c->node, step->data);
	for (node = step->instances; node; node = node->next) {
		int ret = cb(c->cpu, node, step->data);

		if (ret && (step->flags & CPUHP_F_NOFAIL)) {
			/*
			 * The state is passed whatever its instances say (the
			 * caller logs and ignores the error): every instance
			 * must run, none may be undone.
			 */
			if (!first)
				first = ret;
		} else if (ret) {
			cpuhp_undo_instances(c, done);
			return ret;
		}
		done++;
	}
	return first;
}

static int cpuhp_call(void *arg)
{
	struct cpuhp_call *c = arg;
	const struct cpuhp_step *step = &c->m->steps[c->state];

	if (step->multi_instance)
		return cpuhp_call_multi(c);
	return (c->bringup ? step->startup : step->teardown)(c->cpu,
							     step->data);
}

static void cpuhp_notify_step(struct cpuhp_machine *m, unsigned int cpu,
			      int state, bool bringup, bool rollback,
			      bool injected, int ret)
{
	struct cpuhp_notice n = {
		.kind = CPUHP_NOTICE_STEP,
		.cpu = cpu,
		.state = state,
		.bringup = bringup,
		.rollback = rollback,
		.injected = injected,
		.ret = ret,
	};

	if (m->plat && m->plat->notify)
		m->plat->notify(m->plat->ctx, &n);
}

/* An injected failure: the callback is not called. */
static bool cpuhp_injected(struct cpuhp_machine *m, unsigned int cpu, int state,
			   bool bringup, bool rollback)
{
	struct cpuhp_cpu *st = &m->cpus[cpu];

	if (st->fail != state)
		return false;
	st->fail = CPUHP_INVALID;
	cpuhp_notify_step(m, cpu, state, bringup, rollback, true, -EAGAIN);
	return true;
}

/* After the callback @c ran with @ret: its notice and what ret means. */
static int cpuhp_invoke_end(struct cpuhp_call *c, bool rollback, int ret)
{
	struct cpuhp_machine *m = c->m;
	const struct cpuhp_step *step = &m->steps[c->state];
	unsigned int cpu = c->cpu;
	int state = c->state;
	bool bringup = c->bringup;

	cpuhp_notify_step(m, cpu, state, bringup, rollback, false, ret);
	if (c->undo_failed)
		cpuhp_mark_broken(m, cpu, state, ret);
	if (ret && (step->flags & CPUHP_F_NOFAIL)) {
		/* As Linux: a starting/dying step cannot be undone; go on. */
		cpuhp_log(m, CPUHP_LOG_ERR,
			  "cpuhp: CPU %u: no-fail state %d (%s) %s failed "
			  "with %d: ignored\n",
			  cpu, state, step->name,
			  bringup ? "startup" : "teardown", ret);
		return 0;
	}
	return ret;
}

int cpuhp_invoke(struct cpuhp_machine *m, unsigned int cpu, int state,
		 bool bringup, struct cpuhp_node *node, bool rollback)
{
	const struct cpuhp_step *step = &m->steps[state];
	struct cpuhp_call c = {
		.m = m,
		.cpu = cpu,
		.state = state,
		.bringup = bringup,
		.node = node,
	};
	int ret;

	if (cpuhp_injected(m, cpu, state, bringup, rollback))
		return -EAGAIN;

	m->in_callback = true;
	if ((step->flags & CPUHP_F_AP) && m->plat && m->plat->run_on_cpu)
		ret = m->plat->run_on_cpu(m->plat->ctx, cpu, cpuhp_call, &c);
	else
		ret = cpuhp_call(&c);
	m->in_callback = false;
	return cpuhp_invoke_end(&c, rollback, ret);
}

bool cpuhp_can_start(const struct cpuhp_machine *m)
{
	return m->plat && m->plat->call_start && m->plat->call_wait;
}

int cpuhp_invoke_start(struct cpuhp_machine *m, unsigned int cpu, int state)
{
	const struct cpuhp_step *step = &m->steps[state];
	struct cpuhp_call *c = &m->cpus[cpu].call;
	int ret;

	if (!(step->flags & CPUHP_F_AP) || !cpuhp_can_start(m))
		return cpuhp_invoke(m, cpu, state, true, NULL, false);
	if (cpuhp_injected(m, cpu, state, true, false))
		return -EAGAIN;
	c->m = m;
	c->cpu = cpu;
	c->state = state;
	c->bringup = true;
	c->node = NULL;
	c->undo_failed = false;
	/* Cleared by the caller once every call of the state is back. */
	m->in_callback = true;
	ret = m->plat->call_start(m->plat->ctx, cpu, cpuhp_call, c);
	if (ret)
		return cpuhp_invoke_end(c, false, ret);
	c->in_flight = true;
	return 0;
}

int cpuhp_invoke_wait(struct cpuhp_machine *m, unsigned int cpu)
{
	struct cpuhp_call *c = &m->cpus[cpu].call;

	if (!c->in_flight)
		return 0;
	c->in_flight = false;
	return cpuhp_invoke_end(c, false,
				m->plat->call_wait(m->plat->ctx, cpu));
}
