/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cpuhp: a CPU-hotplug state machine after Linux's kernel/cpu.c.
 *
 * One ordered table of states per machine, from CPUHP_OFFLINE (0) to the
 * last entry (online).  Bringing a CPU up runs the startup callback of each
 * state above its current one; taking it down runs the teardowns in reverse.
 * A failure rolls the CPU back to where the operation began.  The library is
 * freestanding: storage, locking, cross-CPU calls and logging come from the
 * caller, so the same sources serve the VMM (pthreads) and the tiny guest
 * (spinlocks, IPIs).  The contract is written down in docs/design.md §3.
 */
#ifndef HOTVM_CPUHP_H
#define HOTVM_CPUHP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define CPUHP_OFFLINE 0
#define CPUHP_INVALID (-1)

/* Requests for cpuhp_setup_state*(): allocate a free slot in that range. */
#define CPUHP_PREPARE_DYN (-2)
#define CPUHP_ONLINE_DYN  (-3)

enum cpuhp_step_flags {
	CPUHP_F_CANT_STOP = 1u << 0,   /* not a valid target */
	CPUHP_F_AP = 1u << 1,	       /* callbacks run on the target CPU */
	CPUHP_F_NOFAIL = 1u << 2,      /* starting/dying: must not fail */
	CPUHP_F_KICK = 1u << 3,	       /* parallel bring-up stops here first */
	CPUHP_F_DYN_PREPARE = 1u << 4, /* slot of the prepare dynamic range */
	CPUHP_F_DYN_ONLINE = 1u << 5,  /* slot of the online dynamic range */
};

/* Where a state runs, for introspection; derived from the flags. */
enum cpuhp_section {
	CPUHP_SECTION_PREPARE,	/* on the controlling CPU */
	CPUHP_SECTION_STARTING, /* on the target CPU, must not fail */
	CPUHP_SECTION_ONLINE,	/* on the target CPU */
};

struct cpuhp_machine;

/* Instance of a multi-instance state; embed it in the caller's object. */
struct cpuhp_node {
	struct cpuhp_node *next;
	bool linked;
};

typedef int (*cpuhp_cb_t)(unsigned int cpu, void *data);
typedef int (*cpuhp_multi_cb_t)(unsigned int cpu, struct cpuhp_node *node,
				void *data);

/*
 * One entry of the state table.  The caller owns the array and initialises
 * it with designated initialisers; a slot without a name is free for
 * cpuhp_setup_state().  Only name, startup/teardown (or the _multi pair with
 * multi_instance set), data and flags are meant to be set by the caller.
 */
struct cpuhp_step {
	const char *name;
	cpuhp_cb_t startup;
	cpuhp_cb_t teardown;
	cpuhp_multi_cb_t startup_multi;
	cpuhp_multi_cb_t teardown_multi;
	void *data; /* passed to every callback of this state */
	unsigned int flags;
	bool multi_instance;
	struct cpuhp_node *instances; /* library-owned list */
};

struct cpuhp_machine;
struct cpuhp_node;

/*
 * Library-private: one callback on its way to a CPU, kept per CPU so that
 * a parallel bring-up can have one in flight on every CPU of its batch.
 */
struct cpuhp_call {
	struct cpuhp_machine *m;
	unsigned int cpu;
	int state;
	bool bringup;
	struct cpuhp_node *node;
	bool undo_failed;
	bool in_flight;	    /* started by platform call_start, not yet waited */
	bool lockstep;	    /* walks in a parallel bring-up's lockstep */
	unsigned int index; /* there: its first place in the list of CPUs */
	int ret;	    /* its result there so far (a failure stops it) */
};

/* Per-CPU state; the caller provides the array, the library owns it. */
struct cpuhp_cpu {
	int state;     /* every startup up to and including this one has run */
	int target;    /* where the current (or last) operation was going */
	int fail;      /* one-shot injected failure, or CPUHP_INVALID */
	bool bringup;  /* direction of the current walk */
	bool rollback; /* the current (or last broken) walk is a rollback */
	bool broken;   /* a rollback failed; refused until cleared */
	struct cpuhp_call call; /* library-private */
};

enum cpuhp_log_level {
	CPUHP_LOG_ERR,
	CPUHP_LOG_WARN,
	CPUHP_LOG_INFO,
	CPUHP_LOG_DEBUG,
};

enum cpuhp_notice_kind {
	CPUHP_NOTICE_STEP, /* a callback ran (or was failed by injection) */
	CPUHP_NOTICE_DONE, /* an up/down operation on a CPU finished */
};

struct cpuhp_notice {
	enum cpuhp_notice_kind kind;
	unsigned int cpu;
	int state; /* STEP: the state whose callback ran; DONE: final state */
	bool bringup;  /* STEP: startup (true) or teardown (false) */
	bool rollback; /* STEP: as part of a rollback */
	bool injected; /* STEP: the callback was not called, fault injection */
	int ret;       /* callback result; DONE: the operation's result */
};

/*
 * What the library needs from its environment.  Every hook is optional:
 * without lock the caller serialises; without run_on_cpu AP callbacks run
 * on the calling CPU.  lock must be recursive (re-entry from a callback is
 * detected after taking it and refused with -EDEADLK).
 */
struct cpuhp_platform {
	void (*lock)(void *ctx);
	void (*unlock)(void *ctx);
	int (*run_on_cpu)(void *ctx, unsigned int cpu, int (*fn)(void *arg),
			  void *arg);
	/*
	 * Optional, both or neither: run_on_cpu in two halves, start @fn on
	 * @cpu without waiting (0, or an error: @fn will not run) and wait
	 * for its result.  With them cpuhp_bringup_cpus() runs each AP state
	 * on every CPU of the batch at once; without, CPU after CPU.
	 */
	int (*call_start)(void *ctx, unsigned int cpu, int (*fn)(void *arg),
			  void *arg);
	int (*call_wait)(void *ctx, unsigned int cpu);
	void (*log)(void *ctx, enum cpuhp_log_level level, const char *fmt,
		    va_list ap);
	void (*notify)(void *ctx, const struct cpuhp_notice *notice);
	void *ctx;
};

struct cpuhp_machine {
	const struct cpuhp_platform *plat;
	struct cpuhp_step *steps;
	unsigned int nr_states; /* OFFLINE .. ONLINE, online = nr_states - 1 */
	struct cpuhp_cpu *cpus;
	unsigned int nr_cpus;
	int kick_state; /* CPUHP_INVALID when the table has none */
	bool in_callback;
};

/* Introspection of one state. */
struct cpuhp_state_info {
	int state;
	const char *name; /* NULL for a free slot */
	bool has_startup;
	bool has_teardown;
	bool multi_instance;
	unsigned int flags;
	enum cpuhp_section section;
};

/*
 * Initialise a machine.  steps[0] is OFFLINE and steps[nr_states - 1] the
 * online state; both must be named.  All CPUs start OFFLINE.  Returns 0 or
 * -EINVAL for an inconsistent table (more than one kick state, fewer than
 * two states, a named dynamic slot...).
 */
int cpuhp_init(struct cpuhp_machine *m, const struct cpuhp_platform *plat,
	       struct cpuhp_step *steps, unsigned int nr_states,
	       struct cpuhp_cpu *cpus, unsigned int nr_cpus);

static inline int cpuhp_online_state(const struct cpuhp_machine *m)
{
	return (int)m->nr_states - 1;
}

/*
 * Mark CPU @cpu as already at @state without running callbacks: for the boot
 * CPU, which is online before the table exists.
 */
int cpuhp_set_boot_state(struct cpuhp_machine *m, unsigned int cpu, int state);

/* Walk @cpu up to @target (>= current; equal is a no-op). */
int cpuhp_cpu_up(struct cpuhp_machine *m, unsigned int cpu, int target);
/* Walk @cpu down to @target (<= current; equal is a no-op). */
int cpuhp_cpu_down(struct cpuhp_machine *m, unsigned int cpu, int target);
/* Either direction, as Linux's cpuN/hotplug/target. */
int cpuhp_set_target(struct cpuhp_machine *m, unsigned int cpu, int target);
/* Whether @target may be walked to: offline, online, or a named state
 * without CPUHP_F_CANT_STOP (what cpuhp_set_target() checks first). */
bool cpuhp_target_valid(const struct cpuhp_machine *m, int target);

/*
 * Parallel bring-up: every CPU in @cpus to the kick state first, then each
 * the rest of the way to @target.  With the platform's call_start and
 * call_wait the rest of the way is taken in lockstep, state by state: an
 * AP state is started on every CPU before any is waited for, so the APs
 * run it at the same time (the BP states and the notices still go CPU by
 * CPU, in @cpus order).  A CPU that fails is rolled back and ends OFFLINE
 * (the others go on); its error is stored in @results[i] when @results is
 * not NULL.  Returns 0 when all reached @target, else the first error.
 */
int cpuhp_bringup_cpus(struct cpuhp_machine *m, const unsigned int *cpus,
		       unsigned int n, int target, int *results);

/*
 * Install callbacks on @state, or on a free slot of a dynamic range when
 * @state is CPUHP_PREPARE_DYN or CPUHP_ONLINE_DYN.  With @invoke, startup
 * runs for every CPU whose state is >= the state, in CPU order; if one fails
 * the CPUs already done get the teardown, the state is uninstalled and the
 * error returned.  Returns the state number for a dynamic request, else 0.
 */
int cpuhp_setup_state_cb(struct cpuhp_machine *m, int state, const char *name,
			 bool invoke, cpuhp_cb_t startup, cpuhp_cb_t teardown,
			 void *data);
int cpuhp_setup_state_multi(struct cpuhp_machine *m, int state,
			    const char *name, cpuhp_multi_cb_t startup,
			    cpuhp_multi_cb_t teardown, void *data);

static inline int cpuhp_setup_state(struct cpuhp_machine *m, int state,
				    const char *name, cpuhp_cb_t startup,
				    cpuhp_cb_t teardown, void *data)
{
	return cpuhp_setup_state_cb(m, state, name, true, startup, teardown,
				    data);
}

static inline int cpuhp_setup_state_nocalls(struct cpuhp_machine *m, int state,
					    const char *name,
					    cpuhp_cb_t startup,
					    cpuhp_cb_t teardown, void *data)
{
	return cpuhp_setup_state_cb(m, state, name, false, startup, teardown,
				    data);
}

/*
 * Uninstall @state.  With @invoke, teardown runs on every CPU whose state is
 * >= the state; it must not fail, a failure is logged as an error.  A
 * multi-instance state with instances left is refused with -EBUSY.
 */
int cpuhp_remove_state_cb(struct cpuhp_machine *m, int state, bool invoke);

static inline int cpuhp_remove_state(struct cpuhp_machine *m, int state)
{
	return cpuhp_remove_state_cb(m, state, true);
}

static inline int cpuhp_remove_state_nocalls(struct cpuhp_machine *m, int state)
{
	return cpuhp_remove_state_cb(m, state, false);
}

/*
 * Add @node to a multi-instance state.  With @invoke, its startup runs on
 * every CPU at or above the state; on a failure the CPUs already done get
 * its teardown and the node is not added.
 */
int cpuhp_state_add_instance_cb(struct cpuhp_machine *m, int state,
				struct cpuhp_node *node, bool invoke);
int cpuhp_state_remove_instance_cb(struct cpuhp_machine *m, int state,
				   struct cpuhp_node *node, bool invoke);

static inline int cpuhp_state_add_instance(struct cpuhp_machine *m, int state,
					   struct cpuhp_node *node)
{
	return cpuhp_state_add_instance_cb(m, state, node, true);
}

static inline int cpuhp_state_add_instance_nocalls(struct cpuhp_machine *m,
						   int state,
						   struct cpuhp_node *node)
{
	return cpuhp_state_add_instance_cb(m, state, node, false);
}

static inline int cpuhp_state_remove_instance(struct cpuhp_machine *m,
					      int state,
					      struct cpuhp_node *node)
{
	return cpuhp_state_remove_instance_cb(m, state, node, true);
}

/*
 * One-shot fault injection, as Linux's cpuN/hotplug/fail: the next time a
 * callback of @state would run for @cpu, in either direction, it returns
 * -EAGAIN without being called.  CPUHP_INVALID clears.  -EINVAL for no-fail
 * states and for states without callbacks.
 */
int cpuhp_set_fail(struct cpuhp_machine *m, unsigned int cpu, int state);

/* Clear the broken mark after an operator has dealt with the CPU. */
int cpuhp_clear_broken(struct cpuhp_machine *m, unsigned int cpu);

/* Introspection. */
int cpuhp_state_info(const struct cpuhp_machine *m, int state,
		     struct cpuhp_state_info *info);
int cpuhp_cpu_info(const struct cpuhp_machine *m, unsigned int cpu,
		   struct cpuhp_cpu *info);
/* The state called @name, or -ENOENT. */
int cpuhp_state_by_name(const struct cpuhp_machine *m, const char *name);
const char *cpuhp_section_name(enum cpuhp_section section);

#endif
