// SPDX-License-Identifier: GPL-2.0-only
/*
 * Randomized model-based test of the cpuhp library.
 *
 * Each seed builds a random state table and a random number of CPUs, then
 * runs thousands of random API calls twice: once against a small reference
 * model written from the contract (docs/design.md §3), once against the
 * library.  After every call the return value, the exact sequence of
 * callback invocations, every CPU's state/target/fail/broken/rollback, every
 * state's installation and the instance lists must agree.
 *
 * Whether a callback fails (and with which error), or calls back into the
 * library, is decided by an oracle: a hash of the seed, the operation
 * number, (cpu, state, direction, instance) and how many times that
 * callback already ran in this operation.  The model and the library each
 * count their own invocations, so they see the same decisions exactly when
 * they call the same callbacks in the same order.
 *
 * The model is deliberately written in a different style from cpuhp/: a walk
 * first computes the list of states it visits, then executes it.
 *
 * Usage: test_model [seed [ops]]; or HOTVM_SEED, HOTVM_OPS, HOTVM_VERBOSE=1
 * (print every operation).  Without a seed a fixed set of seeds runs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpuhp.h"

#define MAX_STATES 16
#define MAX_CPUS   8
#define MAX_NODES  10
#define MAX_TRACE  16384
#define NAME_POOL  8192

#define DEFAULT_SEEDS 40
#define DEFAULT_OPS   5000

/* ---------------------------------------------------------------- RNG */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state += 0x9e3779b97f4a7c15ull;
	return mix64(rng_state);
}

static int rnd_below(int n)
{
	return n > 0 ? (int)(rnd() % (uint64_t)n) : 0;
}

static int rnd_range(int lo, int hi) /* inclusive */
{
	return lo + rnd_below(hi - lo + 1);
}

static bool chance(int pct)
{
	return rnd_below(100) < pct;
}

/* ------------------------------------------------------------- oracle */

static const int oracle_errs[] = { -ENOMEM, -EBUSY, -ETIMEDOUT, -EPERM };

/* The failure plan of the current operation, shared by both sides. */
static struct {
	uint64_t salt;
	int fail_permille;
	int reenter_permille;
} plan;

struct counts {
	unsigned short n[MAX_CPUS][MAX_STATES][2][MAX_NODES + 1];
};

/* Decides one invocation: its result and whether it re-enters (kind 1..4). */
static int oracle(struct counts *c, unsigned int cpu, int state, int dir,
		  int inst, int *reenter)
{
	unsigned int k = c->n[cpu][state][dir][inst + 1]++;
	uint64_t key = ((uint64_t)cpu << 40) ^ ((uint64_t)state << 32) ^
		       ((uint64_t)dir << 24) ^ ((uint64_t)(inst + 1) << 16) ^ k;
	uint64_t h = mix64(plan.salt ^ mix64(key));

	*reenter = (int)((h >> 32) % 1000) < plan.reenter_permille
			   ? (int)((h >> 50) % 4) + 1
			   : 0;
	if ((int)((h & 0xffff) % 1000) < plan.fail_permille)
		return oracle_errs[(h >> 16) % 4];
	return 0;
}

/* ------------------------------------------------------------- traces */

struct call {
	int cpu, state, dir, inst;
	int ap;	   /* CPU run_on_cpu was running on, or -1 */
	int reent; /* result of the re-entrant call, 0 if none */
};

struct trace {
	struct call c[MAX_TRACE];
	int n;
	bool overflow;
};

static void trace_add(struct trace *t, struct call c)
{
	if (t->n < MAX_TRACE)
		t->c[t->n++] = c;
	else
		t->overflow = true;
}

static const char *dir_name(int dir)
{
	return dir ? "up" : "down";
}

static void print_call(const char *tag, int i, const struct call *c)
{
	printf("#   %s[%d] cpu%d state%d %s inst%d ap%d reent%d\n", tag, i,
	       c->cpu, c->state, dir_name(c->dir), c->inst, c->ap, c->reent);
}

/* ------------------------------------------------------- shared config */

static int nr_states, nr_cpus;
static bool use_run_on_cpu, use_lock;
static bool verbose;
static char name_pool[NAME_POOL][16];
static int name_next;

static const char *new_name(void)
{
	char *p = name_pool[name_next++ % NAME_POOL];

	snprintf(p, sizeof(name_pool[0]), "n%d", name_next);
	return p;
}

/* ------------------------------------------------------------ library */

struct tnode {
	struct cpuhp_node node;
	int id;
};

static struct {
	struct cpuhp_machine m;
	struct cpuhp_platform plat;
	struct cpuhp_step steps[MAX_STATES];
	struct cpuhp_cpu cpus[MAX_CPUS];
	struct tnode nodes[MAX_NODES];
	int slot_ids[MAX_STATES];
	struct trace trace;
	struct counts counts;
	int cur_ap;
	int lock_depth;
	int bad_lock;
	int bad_data;
} L;

static void l_lock(void *ctx)
{
	(void)ctx;
	L.lock_depth++;
}

static void l_unlock(void *ctx)
{
	(void)ctx;
	if (L.lock_depth <= 0)
		L.bad_lock++;
	L.lock_depth--;
}

static int l_run_on_cpu(void *ctx, unsigned int cpu, int (*fn)(void *arg),
			void *arg)
{
	int prev = L.cur_ap, ret;

	(void)ctx;
	if (cpu >= (unsigned int)nr_cpus)
		L.bad_data++;
	L.cur_ap = (int)cpu;
	ret = fn(arg);
	L.cur_ap = prev;
	return ret;
}

static void l_log(void *ctx, enum cpuhp_log_level level, const char *fmt,
		  va_list ap)
{
	(void)ctx;
	if (verbose && level <= CPUHP_LOG_WARN) {
		printf("#     log: ");
		vprintf(fmt, ap);
		printf("\n");
	}
}

static int l_reenter(unsigned int cpu, int kind)
{
	unsigned int other = (cpu + 1) % (unsigned int)nr_cpus;

	switch (kind) {
	case 1:
		return cpuhp_cpu_up(&L.m, other, nr_states - 1);
	case 2:
		return cpuhp_set_fail(&L.m, cpu, CPUHP_INVALID);
	case 3:
		return cpuhp_remove_state_cb(&L.m, 1, false);
	default:
		return cpuhp_bringup_cpus(&L.m, &other, 1, nr_states - 1, NULL);
	}
}

static int l_cb(unsigned int cpu, void *data, int dir, int inst)
{
	int state = data ? *(int *)data : -1, re, ret, idx;
	struct call c = { (int)cpu, state, dir, inst, L.cur_ap, 0 };

	if (cpu >= (unsigned int)nr_cpus || state < 0 || state >= nr_states) {
		L.bad_data++;
		return 0;
	}
	ret = oracle(&L.counts, cpu, state, dir, inst, &re);
	idx = L.trace.n;
	trace_add(&L.trace, c);
	if (re) {
		re = l_reenter(cpu, re);
		if (idx < L.trace.n)
			L.trace.c[idx].reent = re;
	}
	return ret;
}

static int l_startup(unsigned int cpu, void *data)
{
	return l_cb(cpu, data, 1, -1);
}

static int l_teardown(unsigned int cpu, void *data)
{
	return l_cb(cpu, data, 0, -1);
}

static int node_id(struct cpuhp_node *node)
{
	struct tnode *t;

	if (!node)
		return -2;
	t = (struct tnode *)((char *)node - offsetof(struct tnode, node));
	if (t < L.nodes || t >= L.nodes + MAX_NODES)
		return -2;
	return t->id;
}

static int l_startup_multi(unsigned int cpu, struct cpuhp_node *node,
			   void *data)
{
	int id = node_id(node);

	if (id < 0) {
		L.bad_data++;
		return 0;
	}
	return l_cb(cpu, data, 1, id);
}

static int l_teardown_multi(unsigned int cpu, struct cpuhp_node *node,
			    void *data)
{
	int id = node_id(node);

	if (id < 0) {
		L.bad_data++;
		return 0;
	}
	return l_cb(cpu, data, 0, id);
}

/* -------------------------------------------------------------- model */

struct mstep {
	const char *name; /* NULL: free slot */
	bool has_up, has_down, multi;
	unsigned int flags;
	int inst[MAX_NODES]; /* node ids, insertion order */
	int ninst;
};

struct mcpu {
	int state, target, fail;
	bool broken, rollback;
};

static struct {
	struct mstep st[MAX_STATES];
	struct mcpu cpu[MAX_CPUS];
	int node_state[MAX_NODES]; /* state a node is linked to, or -1 */
	int kick;
	struct trace trace;
	struct counts counts;
} M;

/* What the runs exercised, so that a vacuous run is noticed. */
static struct {
	long calls, injected, nofail_ignored, reentries, inst_undos;
	long walks_ok, rollbacks_ok, broken_rollback, broken_undo;
	long install_undos, kicks, bringup_fails, ops_ok, ops_err;
} cov;

static int m_call(unsigned int cpu, int s, int dir, int inst)
{
	int re, ret = oracle(&M.counts, cpu, s, dir, inst, &re);
	struct call c = { (int)cpu, s, dir, inst, -1, re ? -EDEADLK : 0 };

	if (use_run_on_cpu && (M.st[s].flags & CPUHP_F_AP))
		c.ap = (int)cpu;
	trace_add(&M.trace, c);
	cov.calls++;
	cov.reentries += re != 0;
	if (ret && (M.st[s].flags & CPUHP_F_NOFAIL)) {
		cov.nofail_ignored++;
		ret = 0;
	}
	return ret;
}

static bool m_has(int s, int dir)
{
	const struct mstep *st = &M.st[s];

	return st->name && (dir ? st->has_up : st->has_down);
}

static bool m_valid_target(int t)
{
	if (t == 0 || t == nr_states - 1)
		return true;
	return t > 0 && t < nr_states && M.st[t].name &&
	       !(M.st[t].flags & CPUHP_F_CANT_STOP);
}

static bool m_injected(unsigned int cpu, int s)
{
	if (M.cpu[cpu].fail != s)
		return false;
	M.cpu[cpu].fail = CPUHP_INVALID;
	cov.injected++;
	return true;
}

/*
 * The state-level callback of @s for @cpu in a CPU walk: every instance of
 * a multi-instance state.  *undo_failed reports a failed instance undo.
 */
static int m_state_cb(unsigned int cpu, int s, int dir, bool *undo_failed)
{
	const struct mstep *st = &M.st[s];
	int k, ret;

	if (m_injected(cpu, s))
		return -EAGAIN;
	if (!st->multi)
		return m_call(cpu, s, dir, -1);
	for (k = 0; k < st->ninst; k++) {
		ret = m_call(cpu, s, dir, st->inst[k]);
		if (!ret)
			continue;
		if (m_has(s, !dir)) {
			cov.inst_undos += k;
			for (int j = 0; j < k; j++)
				if (m_call(cpu, s, !dir, st->inst[j]))
					*undo_failed = true;
		}
		return ret;
	}
	return 0;
}

/* One node (or the single callback) of @s for @cpu, outside a walk. */
static int m_one_cb(unsigned int cpu, int s, int dir, int inst)
{
	if (m_injected(cpu, s))
		return -EAGAIN;
	return m_call(cpu, s, dir, inst);
}

/* The states a walk from @from to @to visits, in order (both exclusive of
 * @from's side as the contract says: up runs from+1..to, down from..to+1). */
static int m_path(int from, int to, int *list)
{
	int n = 0;

	if (to > from)
		for (int s = from + 1; s <= to; s++)
			list[n++] = s;
	else
		for (int s = from; s > to; s--)
			list[n++] = s;
	return n;
}

static int m_walk(unsigned int cpu, int target)
{
	struct mcpu *c = &M.cpu[cpu];
	int prev = c->state, dir = target > prev;
	int path[MAX_STATES], back[MAX_STATES], n, nb, ret = 0, i;
	bool undo_failed = false;

	n = m_path(prev, target, path);
	c->rollback = false;
	for (i = 0; i < n; i++) {
		if (!m_has(path[i], dir))
			continue;
		ret = m_state_cb(cpu, path[i], dir, &undo_failed);
		if (ret)
			break;
	}
	if (!ret) {
		c->state = target;
		c->target = target;
		cov.walks_ok++;
		return 0;
	}
	/* failed at path[i] */
	if (undo_failed) {
		/* no state-level rollback: the walk keeps its target */
		c->broken = true;
		c->state = dir ? path[i] - 1 : path[i];
		c->target = target;
		cov.broken_undo++;
		return ret;
	}
	c->target = prev;
	c->rollback = true;
	/* rollback path: everything done before path[i], reversed */
	/* up failed at S: S-1..prev+1; down failed at S: S+1..prev */
	nb = m_path(dir ? path[i] - 1 : path[i], prev, back);
	for (int j = 0; j < nb; j++) {
		int s = back[j];

		if (!m_has(s, !dir))
			continue;
		if (m_state_cb(cpu, s, !dir, &undo_failed)) {
			c->broken = true;
			c->state = dir ? s : s - 1;
			cov.broken_rollback++;
			return ret;
		}
	}
	c->state = prev;
	cov.rollbacks_ok++;
	return ret;
}

enum walk_kind { W_UP, W_DOWN, W_ANY };

static int m_cpu_op(unsigned int cpu, int target, enum walk_kind kind)
{
	struct mcpu *c;

	if (cpu >= (unsigned int)nr_cpus)
		return -EINVAL;
	c = &M.cpu[cpu];
	if (c->broken)
		return -EIO;
	if (!m_valid_target(target))
		return -EINVAL;
	if ((kind == W_UP && target < c->state) ||
	    (kind == W_DOWN && target > c->state))
		return -EINVAL;
	if (target == c->state)
		return 0;
	return m_walk(cpu, target);
}

static int m_bringup(const unsigned int *cpus, int n, int target, int *results)
{
	bool skip[MAX_CPUS + 4] = { false };
	int first = 0, ret;

	if (!m_valid_target(target))
		return -EINVAL;
	if (M.kick >= 0 && target > M.kick) {
		for (int i = 0; i < n; i++) {
			unsigned int c = cpus[i];

			if (c < (unsigned int)nr_cpus &&
			    M.cpu[c].state >= M.kick)
				continue;
			/* the kick walk does not require a named kick slot */
			if (c >= (unsigned int)nr_cpus)
				ret = -EINVAL;
			else if (M.cpu[c].broken)
				ret = -EIO;
			else
				ret = m_walk(c, M.kick);
			cov.kicks++;
			if (!ret)
				continue;
			results[i] = ret;
			skip[i] = true;
			if (!first)
				first = ret;
			if (c < (unsigned int)nr_cpus && !M.cpu[c].broken &&
			    M.cpu[c].state > 0)
				m_cpu_op(c, 0, W_DOWN);
		}
	}
	for (int i = 0; i < n; i++) {
		unsigned int c = cpus[i];

		if (skip[i])
			continue;
		/* a CPU already at or above the target is left alone */
		if (c < (unsigned int)nr_cpus && !M.cpu[c].broken &&
		    M.cpu[c].state >= target)
			ret = 0;
		else
			ret = m_cpu_op(c, target, W_UP);
		results[i] = ret;
		if (!ret)
			continue;
		cov.bringup_fails++;
		if (!first)
			first = ret;
		if (c < (unsigned int)nr_cpus && !M.cpu[c].broken &&
		    M.cpu[c].state > 0)
			m_cpu_op(c, 0, W_DOWN);
	}
	return first;
}

static void m_uninstall(int s)
{
	struct mstep *st = &M.st[s];

	st->name = NULL;
	st->has_up = st->has_down = st->multi = false;
	st->ninst = 0;
}

/* Slot for a setup request, or a negative error. */
static int m_slot(int state)
{
	unsigned int want;

	if (state == CPUHP_PREPARE_DYN || state == CPUHP_ONLINE_DYN) {
		want = state == CPUHP_PREPARE_DYN ? CPUHP_F_DYN_PREPARE
						  : CPUHP_F_DYN_ONLINE;
		for (int s = 0; s < nr_states; s++)
			if ((M.st[s].flags & want) && !M.st[s].name)
				return s;
		return -ENOSPC;
	}
	if (state < 1 || state > nr_states - 2)
		return -EINVAL;
	if (M.st[state].name)
		return -EBUSY;
	return state;
}

static int m_setup(int state, const char *name, bool invoke, bool up, bool down)
{
	int s, ret;

	if (!name)
		return -EINVAL;
	s = m_slot(state);
	if (s < 0)
		return s;
	M.st[s].name = name;
	M.st[s].has_up = up;
	M.st[s].has_down = down;
	M.st[s].multi = false;
	if (invoke && up) {
		for (int c = 0; c < nr_cpus; c++) {
			if (M.cpu[c].state < s)
				continue;
			ret = m_one_cb((unsigned int)c, s, 1, -1);
			if (!ret)
				continue;
			cov.install_undos++;
			for (int d = 0; d < c && down; d++)
				if (M.cpu[d].state >= s &&
				    m_one_cb((unsigned int)d, s, 0, -1))
					M.cpu[d].broken = true;
			m_uninstall(s);
			return ret;
		}
	}
	return state < 0 ? s : 0;
}

static int m_setup_multi(int state, const char *name, bool up, bool down)
{
	int s;

	if (!name)
		return -EINVAL;
	s = m_slot(state);
	if (s < 0)
		return s;
	M.st[s].name = name;
	M.st[s].has_up = up;
	M.st[s].has_down = down;
	M.st[s].multi = true;
	M.st[s].ninst = 0;
	return state < 0 ? s : 0;
}

static int m_remove(int s, bool invoke)
{
	if (s < 1 || s > nr_states - 2)
		return -EINVAL;
	if (!M.st[s].name)
		return -ENOENT;
	if (M.st[s].multi && M.st[s].ninst)
		return -EBUSY;
	if (invoke && M.st[s].has_down) {
		bool undo_failed = false;

		/* as a walk would: every instance (consumes an injected fail
		 * even when a multi-instance state has none) */
		for (int c = 0; c < nr_cpus; c++)
			if (M.cpu[c].state >= s)
				m_state_cb((unsigned int)c, s, 0, &undo_failed);
	}
	m_uninstall(s);
	return 0;
}

static int m_inst_check(int s)
{
	if (s < 1 || s > nr_states - 2)
		return -EINVAL;
	if (!M.st[s].name)
		return -ENOENT;
	if (!M.st[s].multi)
		return -EINVAL;
	return 0;
}

static int m_add_instance(int s, int node, bool invoke)
{
	struct mstep *st;
	int ret = m_inst_check(s);

	if (ret)
		return ret;
	st = &M.st[s];
	if (M.node_state[node] >= 0)
		return -EEXIST;
	if (invoke && st->has_up) {
		for (int c = 0; c < nr_cpus; c++) {
			if (M.cpu[c].state < s)
				continue;
			ret = m_one_cb((unsigned int)c, s, 1, node);
			if (!ret)
				continue;
			cov.install_undos++;
			for (int d = 0; d < c && st->has_down; d++)
				if (M.cpu[d].state >= s &&
				    m_one_cb((unsigned int)d, s, 0, node))
					M.cpu[d].broken = true;
			return ret;
		}
	}
	st->inst[st->ninst++] = node;
	M.node_state[node] = s;
	return 0;
}

static int m_remove_instance(int s, int node, bool invoke)
{
	struct mstep *st;
	int ret = m_inst_check(s), k;

	if (ret)
		return ret;
	st = &M.st[s];
	for (k = 0; k < st->ninst && st->inst[k] != node; k++)
		;
	if (k == st->ninst)
		return -ENOENT;
	if (invoke && st->has_down) {
		for (int c = 0; c < nr_cpus; c++)
			if (M.cpu[c].state >= s)
				m_one_cb((unsigned int)c, s, 0, node);
	}
	memmove(&st->inst[k], &st->inst[k + 1],
		sizeof(st->inst[0]) * (size_t)(st->ninst - k - 1));
	st->ninst--;
	M.node_state[node] = -1;
	return 0;
}

static int m_set_fail(unsigned int cpu, int s)
{
	if (cpu >= (unsigned int)nr_cpus)
		return -EINVAL;
	if (s == CPUHP_INVALID) {
		M.cpu[cpu].fail = CPUHP_INVALID;
		return 0;
	}
	if (s < 0 || s >= nr_states)
		return -EINVAL;
	if (M.st[s].flags & CPUHP_F_NOFAIL)
		return -EINVAL;
	if (!m_has(s, 1) && !m_has(s, 0))
		return -EINVAL;
	M.cpu[cpu].fail = s;
	return 0;
}

static int m_clear_broken(unsigned int cpu)
{
	if (cpu >= (unsigned int)nr_cpus)
		return -EINVAL;
	M.cpu[cpu].broken = false;
	return 0;
}

/* ------------------------------------------------------------ the table */

static void build_table(void)
{
	int np, no, p0, o1, nofail = -1, kick = -1;

	memset(&L, 0, sizeof(L));
	memset(&M, 0, sizeof(M));
	L.cur_ap = -1;
	nr_states = rnd_range(10, MAX_STATES);
	nr_cpus = rnd_range(4, MAX_CPUS);
	use_run_on_cpu = chance(75);
	use_lock = chance(75);
	np = rnd_range(2, 3);
	no = rnd_range(2, 3);
	p0 = rnd_range(1, 2);
	o1 = nr_states - 2 - rnd_below(2); /* last slot of the online range */
	if (chance(70))
		nofail = rnd_range(1, nr_states - 2);

	for (int s = 0; s < nr_states; s++) {
		struct mstep *st = &M.st[s];

		L.slot_ids[s] = s;
		if (s == 0) {
			st->name = "offline";
			continue;
		}
		if (s == nr_states - 1) {
			st->name = "online";
			st->has_up = chance(70);
			st->has_down = chance(70);
			if (chance(50))
				st->flags |= CPUHP_F_AP;
			continue;
		}
		if (s >= p0 && s < p0 + np) {
			st->flags = CPUHP_F_DYN_PREPARE;
			continue;
		}
		if (s > o1 - no && s <= o1) {
			st->flags = CPUHP_F_DYN_ONLINE;
			if (chance(50))
				st->flags |= CPUHP_F_AP;
			continue;
		}
		if (chance(30))
			st->flags |= CPUHP_F_AP;
		if (chance(15))
			st->flags |= CPUHP_F_CANT_STOP;
		if (s == nofail)
			st->flags |= CPUHP_F_NOFAIL;
		if (chance(20))
			continue; /* free static slot */
		st->name = new_name();
		st->multi = chance(20);
		st->has_up = chance(70);
		st->has_down = chance(70);
		if (kick < 0 && !(st->flags & CPUHP_F_CANT_STOP) && chance(25))
			kick = s;
	}
	if (kick >= 0)
		M.st[kick].flags |= CPUHP_F_KICK;
	M.kick = kick;

	for (int s = 0; s < nr_states; s++) {
		struct mstep *st = &M.st[s];
		struct cpuhp_step *ls = &L.steps[s];

		ls->name = st->name;
		ls->flags = st->flags;
		ls->data = &L.slot_ids[s];
		ls->multi_instance = st->multi;
		if (st->multi) {
			ls->startup_multi = st->has_up ? l_startup_multi : NULL;
			ls->teardown_multi =
				st->has_down ? l_teardown_multi : NULL;
		} else {
			ls->startup = st->has_up ? l_startup : NULL;
			ls->teardown = st->has_down ? l_teardown : NULL;
		}
	}
	for (int i = 0; i < MAX_NODES; i++) {
		L.nodes[i].id = i;
		M.node_state[i] = -1;
	}
	for (int c = 0; c < MAX_CPUS; c++) {
		M.cpu[c].fail = CPUHP_INVALID;
		M.cpu[c].target = 0;
	}
	L.plat.lock = use_lock ? l_lock : NULL;
	L.plat.unlock = use_lock ? l_unlock : NULL;
	L.plat.run_on_cpu = use_run_on_cpu ? l_run_on_cpu : NULL;
	L.plat.log = l_log;
}

static void print_table(void)
{
	printf("# table: %d states, %d cpus, run_on_cpu %d, lock %d, kick %d\n",
	       nr_states, nr_cpus, use_run_on_cpu, use_lock, M.kick);
	for (int s = 0; s < nr_states; s++) {
		const struct mstep *st = &M.st[s];

		printf("#   %2d %-8s up%d down%d multi%d flags 0x%02x inst", s,
		       st->name ? st->name : "-", st->has_up, st->has_down,
		       st->multi, st->flags);
		for (int k = 0; k < st->ninst; k++)
			printf(" %d", st->inst[k]);
		printf("\n");
	}
	for (int c = 0; c < nr_cpus; c++)
		printf("#   cpu%d state %d target %d fail %d broken %d "
		       "rollback %d\n",
		       c, M.cpu[c].state, M.cpu[c].target, M.cpu[c].fail,
		       M.cpu[c].broken, M.cpu[c].rollback);
}

/* --------------------------------------------------------- operations */

enum op_kind {
	OP_UP,
	OP_DOWN,
	OP_TARGET,
	OP_BRINGUP,
	OP_SETUP,
	OP_SETUP_MULTI,
	OP_REMOVE,
	OP_ADD_INST,
	OP_REM_INST,
	OP_SET_FAIL,
	OP_CLEAR_BROKEN,
	NR_OPS,
};

static const int op_weight[NR_OPS] = { 20, 20, 12, 8, 8, 5, 7, 10, 7, 10, 3 };

struct op {
	enum op_kind kind;
	unsigned int cpu;
	int state; /* target for walks */
	int node;
	bool invoke, up, down, null_name;
	unsigned int cpus[MAX_CPUS + 2];
	int n;
	const char *name;
};

static void describe(const struct op *op, char *buf, size_t len)
{
	int o;

	switch (op->kind) {
	case OP_UP:
	case OP_DOWN:
	case OP_TARGET:
		snprintf(buf, len, "%s(cpu %u, target %d)",
			 op->kind == OP_UP     ? "cpu_up"
			 : op->kind == OP_DOWN ? "cpu_down"
					       : "set_target",
			 op->cpu, op->state);
		break;
	case OP_BRINGUP:
		o = snprintf(buf, len, "bringup_cpus(target %d, cpus",
			     op->state);
		for (int i = 0; i < op->n && o < (int)len; i++)
			o += snprintf(buf + o, len - (size_t)o, " %u",
				      op->cpus[i]);
		if (o < (int)len)
			snprintf(buf + o, len - (size_t)o, ")");
		break;
	case OP_SETUP:
	case OP_SETUP_MULTI:
		snprintf(buf, len,
			 "setup_state%s(state %d, name %s, invoke %d, "
			 "startup %d, teardown %d)",
			 op->kind == OP_SETUP ? "_cb" : "_multi", op->state,
			 op->null_name ? "NULL" : op->name, op->invoke, op->up,
			 op->down);
		break;
	case OP_REMOVE:
		snprintf(buf, len, "remove_state_cb(state %d, invoke %d)",
			 op->state, op->invoke);
		break;
	case OP_ADD_INST:
	case OP_REM_INST:
		snprintf(buf, len,
			 "%s_instance_cb(state %d, node %d, invoke %d)",
			 op->kind == OP_ADD_INST ? "add" : "remove", op->state,
			 op->node, op->invoke);
		break;
	case OP_SET_FAIL:
		snprintf(buf, len, "set_fail(cpu %u, state %d)", op->cpu,
			 op->state);
		break;
	default:
		snprintf(buf, len, "clear_broken(cpu %u)", op->cpu);
		break;
	}
}

static unsigned int pick_cpu(void)
{
	if (chance(3))
		return (unsigned int)(nr_cpus + rnd_below(3));
	return (unsigned int)rnd_below(nr_cpus);
}

static int pick_target(void)
{
	int valid[MAX_STATES], n = 0;

	for (int s = 0; s < nr_states; s++)
		if (m_valid_target(s))
			valid[n++] = s;
	if (chance(85))
		return valid[rnd_below(n)];
	return rnd_range(-3, nr_states + 1);
}

/* A state matching @pred most of the time, any number otherwise. */
static int pick_state(bool (*pred)(int s), int pct)
{
	int list[MAX_STATES], n = 0;

	for (int s = 0; s < nr_states; s++)
		if (pred(s))
			list[n++] = s;
	if (n && chance(pct))
		return list[rnd_below(n)];
	return rnd_range(-1, nr_states);
}

static bool is_free(int s)
{
	return s > 0 && s < nr_states - 1 && !M.st[s].name;
}

static bool is_installed(int s)
{
	return s > 0 && s < nr_states - 1 && M.st[s].name;
}

static bool is_multi(int s)
{
	return is_installed(s) && M.st[s].multi;
}

static bool has_cb(int s)
{
	return m_has(s, 0) || m_has(s, 1);
}

static void gen_op(struct op *op)
{
	int total = 0, r, k;
	bool any_broken = false;

	memset(op, 0, sizeof(*op));
	for (int c = 0; c < nr_cpus; c++)
		any_broken |= M.cpu[c].broken;
	for (k = 0; k < NR_OPS; k++)
		total += op_weight[k];
	r = rnd_below(total);
	for (k = 0; r >= op_weight[k]; k++)
		r -= op_weight[k];
	op->kind = (enum op_kind)k;
	if (any_broken && chance(15))
		op->kind = OP_CLEAR_BROKEN;

	op->invoke = chance(70);
	op->up = chance(75);
	op->down = chance(75);
	switch (op->kind) {
	case OP_UP:
	case OP_DOWN:
	case OP_TARGET:
		op->cpu = pick_cpu();
		op->state = pick_target();
		break;
	case OP_BRINGUP: {
		unsigned int perm[MAX_CPUS];

		for (int c = 0; c < nr_cpus; c++)
			perm[c] = (unsigned int)c;
		for (int c = nr_cpus - 1; c > 0; c--) {
			int j = rnd_below(c + 1);
			unsigned int t = perm[c];

			perm[c] = perm[j];
			perm[j] = t;
		}
		op->n = rnd_range(0, nr_cpus);
		memcpy(op->cpus, perm, sizeof(perm[0]) * (size_t)op->n);
		if (chance(5))
			op->cpus[op->n++] = (unsigned int)nr_cpus;
		op->state = chance(60) ? nr_states - 1 : pick_target();
		break;
	}
	case OP_SETUP:
	case OP_SETUP_MULTI:
		r = rnd_below(100);
		op->state = r < 35   ? CPUHP_PREPARE_DYN
			    : r < 60 ? CPUHP_ONLINE_DYN
				     : pick_state(is_free, 60);
		op->null_name = chance(3);
		op->name = op->null_name ? NULL : new_name();
		break;
	case OP_REMOVE:
		op->state = pick_state(is_installed, 85);
		break;
	case OP_ADD_INST:
	case OP_REM_INST:
		op->state = pick_state(is_multi, 85);
		op->node = rnd_below(MAX_NODES);
		if (op->kind == OP_REM_INST && op->state >= 0 &&
		    op->state < nr_states && M.st[op->state].ninst &&
		    chance(75))
			op->node =
				M.st[op->state]
					.inst[rnd_below(M.st[op->state].ninst)];
		break;
	case OP_SET_FAIL:
		op->cpu = pick_cpu();
		r = rnd_below(100);
		op->state = r < 15   ? CPUHP_INVALID
			    : r < 85 ? pick_state(has_cb, 80)
				     : rnd_range(-3, nr_states + 2);
		break;
	default:
		op->cpu = pick_cpu();
		if (chance(80)) {
			for (int c = 0; c < nr_cpus; c++)
				if (M.cpu[c].broken)
					op->cpu = (unsigned int)c;
		}
		break;
	}
}

static int model_op(const struct op *op, int *results)
{
	switch (op->kind) {
	case OP_UP:
		return m_cpu_op(op->cpu, op->state, W_UP);
	case OP_DOWN:
		return m_cpu_op(op->cpu, op->state, W_DOWN);
	case OP_TARGET:
		return m_cpu_op(op->cpu, op->state, W_ANY);
	case OP_BRINGUP:
		return m_bringup(op->cpus, op->n, op->state, results);
	case OP_SETUP:
		return m_setup(op->state, op->name, op->invoke, op->up,
			       op->down);
	case OP_SETUP_MULTI:
		return m_setup_multi(op->state, op->name, op->up, op->down);
	case OP_REMOVE:
		return m_remove(op->state, op->invoke);
	case OP_ADD_INST:
		return m_add_instance(op->state, op->node, op->invoke);
	case OP_REM_INST:
		return m_remove_instance(op->state, op->node, op->invoke);
	case OP_SET_FAIL:
		return m_set_fail(op->cpu, op->state);
	default:
		return m_clear_broken(op->cpu);
	}
}

/* The data pointer the library should pass: the slot the model expects. */
static void *data_for(int slot)
{
	return &L.slot_ids[slot >= 0 && slot < nr_states ? slot : 0];
}

static int lib_op(const struct op *op, int slot, int *results)
{
	struct cpuhp_machine *m = &L.m;

	switch (op->kind) {
	case OP_UP:
		return cpuhp_cpu_up(m, op->cpu, op->state);
	case OP_DOWN:
		return cpuhp_cpu_down(m, op->cpu, op->state);
	case OP_TARGET:
		return cpuhp_set_target(m, op->cpu, op->state);
	case OP_BRINGUP:
		return cpuhp_bringup_cpus(m, op->cpus, (unsigned int)op->n,
					  op->state, results);
	case OP_SETUP:
		return cpuhp_setup_state_cb(m, op->state, op->name, op->invoke,
					    op->up ? l_startup : NULL,
					    op->down ? l_teardown : NULL,
					    data_for(slot));
	case OP_SETUP_MULTI:
		return cpuhp_setup_state_multi(
			m, op->state, op->name, op->up ? l_startup_multi : NULL,
			op->down ? l_teardown_multi : NULL, data_for(slot));
	case OP_REMOVE:
		return cpuhp_remove_state_cb(m, op->state, op->invoke);
	case OP_ADD_INST:
		return cpuhp_state_add_instance_cb(
			m, op->state, &L.nodes[op->node].node, op->invoke);
	case OP_REM_INST:
		return cpuhp_state_remove_instance_cb(
			m, op->state, &L.nodes[op->node].node, op->invoke);
	case OP_SET_FAIL:
		return cpuhp_set_fail(m, op->cpu, op->state);
	default:
		return cpuhp_clear_broken(m, op->cpu);
	}
}

/* ------------------------------------------------------------ compare */

static int mismatches;

static void mismatch(const char *fmt, ...)
{
	va_list ap;

	printf("#   MISMATCH: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	mismatches++;
}

static void compare_traces(void)
{
	int n = M.trace.n > L.trace.n ? M.trace.n : L.trace.n, first = -1;

	if (M.trace.overflow || L.trace.overflow)
		mismatch("trace overflow");
	for (int i = 0; i < n && first < 0; i++) {
		if (i >= M.trace.n || i >= L.trace.n ||
		    memcmp(&M.trace.c[i], &L.trace.c[i], sizeof(struct call)))
			first = i;
	}
	if (first < 0)
		return;
	mismatch("callback trace differs at call %d (model %d calls, "
		 "library %d calls)",
		 first, M.trace.n, L.trace.n);
	for (int i = first > 3 ? first - 3 : 0; i < n && i < first + 8; i++) {
		if (i < M.trace.n)
			print_call("model", i, &M.trace.c[i]);
		if (i < L.trace.n)
			print_call("lib  ", i, &L.trace.c[i]);
	}
}

static void compare_state(void)
{
	for (int c = 0; c < nr_cpus; c++) {
		const struct mcpu *e = &M.cpu[c];
		struct cpuhp_cpu got;
		int ret = cpuhp_cpu_info(&L.m, (unsigned int)c, &got);

		if (ret) {
			mismatch("cpu_info(%d) = %d", c, ret);
			continue;
		}
		if (got.state != e->state || got.target != e->target ||
		    got.fail != e->fail || got.broken != e->broken ||
		    got.rollback != e->rollback)
			mismatch("cpu%d: library state %d target %d fail %d "
				 "broken %d rollback %d, model state %d target "
				 "%d fail %d broken %d rollback %d",
				 c, got.state, got.target, got.fail, got.broken,
				 got.rollback, e->state, e->target, e->fail,
				 e->broken, e->rollback);
	}
	for (int s = 0; s < nr_states; s++) {
		const struct mstep *e = &M.st[s];
		const struct cpuhp_step *ls = &L.steps[s];
		struct cpuhp_state_info info;
		const struct cpuhp_node *node;
		int ids[MAX_NODES + 1], n = 0, ret;

		ret = cpuhp_state_info(&L.m, s, &info);
		if (ret) {
			mismatch("state_info(%d) = %d", s, ret);
			continue;
		}
		if (info.name != e->name || ls->name != e->name ||
		    info.flags != e->flags ||
		    (e->name && (info.has_startup != e->has_up ||
				 info.has_teardown != e->has_down ||
				 info.multi_instance != e->multi)))
			mismatch("state %d: library name %s up %d down %d "
				 "multi %d flags 0x%x, model name %s up %d "
				 "down %d multi %d flags 0x%x",
				 s, info.name ? info.name : "-",
				 info.has_startup, info.has_teardown,
				 info.multi_instance, info.flags,
				 e->name ? e->name : "-", e->has_up,
				 e->has_down, e->multi, e->flags);
		if (e->name) {
			ret = cpuhp_state_by_name(&L.m, e->name);
			if (ret != s)
				mismatch("state_by_name(%s) = %d, expected %d",
					 e->name, ret, s);
		}
		for (node = ls->instances; node && n <= MAX_NODES;
		     node = node->next)
			ids[n++] = node_id((struct cpuhp_node *)node);
		if (n != e->ninst ||
		    memcmp(ids, e->inst, sizeof(int) * (size_t)n)) {
			mismatch("state %d: instance lists differ (library "
				 "%d nodes, model %d)",
				 s, n, e->ninst);
		}
	}
	for (int i = 0; i < MAX_NODES; i++)
		if (L.nodes[i].node.linked != (M.node_state[i] >= 0))
			mismatch("node %d: linked %d, model state %d", i,
				 L.nodes[i].node.linked, M.node_state[i]);
	if (L.lock_depth || L.bad_lock)
		mismatch("lock depth %d after the operation (%d bad unlocks)",
			 L.lock_depth, L.bad_lock);
	if (L.bad_data)
		mismatch("%d callbacks got a bad cpu, data or node",
			 L.bad_data);
	if (L.m.in_callback)
		mismatch("in_callback still set");
}

/* One seed; returns the number of the failing step or -1. */
static int run_seed(uint64_t seed, int nr_ops)
{
	char desc[256];
	int ret;

	rng_state = seed;
	name_next = 0;
	build_table();
	ret = cpuhp_init(&L.m, &L.plat, L.steps, (unsigned int)nr_states,
			 L.cpus, (unsigned int)nr_cpus);
	if (ret) {
		printf("# seed %llu: cpuhp_init = %d\n",
		       (unsigned long long)seed, ret);
		print_table();
		return 0;
	}
	if (chance(50)) {
		ret = cpuhp_set_boot_state(&L.m, 0, nr_states - 1);
		M.cpu[0].state = M.cpu[0].target = nr_states - 1;
		if (ret)
			printf("# seed %llu: set_boot_state = %d\n",
			       (unsigned long long)seed, ret);
	}
	mismatches = 0;
	compare_state();
	if (mismatches) {
		printf("# seed %llu: initial state differs\n",
		       (unsigned long long)seed);
		print_table();
		return 0;
	}
	if (verbose)
		print_table();

	for (int step = 1; step <= nr_ops; step++) {
		struct op op;
		int mres[MAX_CPUS + 2], lres[MAX_CPUS + 2], mret, lret, slot;

		gen_op(&op);
		for (int i = 0; i < MAX_CPUS + 2; i++)
			mres[i] = lres[i] = 12345;
		plan.salt = rnd();
		plan.fail_permille =
			(const int[]){ 0, 0, 20, 80, 200, 400 }[rnd_below(6)];
		plan.reenter_permille = chance(10) ? 150 : 0;
		describe(&op, desc, sizeof(desc));
		if (verbose)
			printf("# step %d: %s [fail %d/1000, reenter "
			       "%d/1000]\n",
			       step, desc, plan.fail_permille,
			       plan.reenter_permille);

		/* the slot a setup should take: its callbacks' data */
		slot = m_slot(op.state);
		M.trace.n = 0;
		memset(&M.counts, 0, sizeof(M.counts));
		mret = model_op(&op, mres);
		if (mret < 0)
			cov.ops_err++;
		else
			cov.ops_ok++;

		L.trace.n = 0;
		memset(&L.counts, 0, sizeof(L.counts));
		lret = lib_op(&op, slot, lres);

		mismatches = 0;
		if (mret != lret)
			mismatch("return value: library %d, model %d", lret,
				 mret);
		if (op.kind == OP_BRINGUP)
			for (int i = 0; i < op.n; i++)
				if (mres[i] != lres[i])
					mismatch("results[%d] (cpu %u): "
						 "library %d, model %d",
						 i, op.cpus[i], lres[i],
						 mres[i]);
		compare_traces();
		compare_state();
		if (mismatches) {
			printf("# seed %llu step %d: %s [fail %d/1000, "
			       "reenter %d/1000]\n",
			       (unsigned long long)seed, step, desc,
			       plan.fail_permille, plan.reenter_permille);
			printf("# model after the step:\n");
			print_table();
			printf("# replay: HOTVM_SEED=%llu HOTVM_VERBOSE=1 "
			       "HOTVM_OPS=%d\n",
			       (unsigned long long)seed, step);
			return step;
		}
	}
	return -1;
}

static uint64_t opt_seed;
static bool have_seed;
static int opt_ops = DEFAULT_OPS;

static void report_coverage(bool require)
{
	const struct {
		const char *what;
		long n;
	} c[] = {
		{ "operations ok", cov.ops_ok },
		{ "operations refused/failed", cov.ops_err },
		{ "callbacks", cov.calls },
		{ "injected failures", cov.injected },
		{ "no-fail errors ignored", cov.nofail_ignored },
		{ "re-entrant calls", cov.reentries },
		{ "instance undos", cov.inst_undos },
		{ "walks ok", cov.walks_ok },
		{ "rollbacks ok", cov.rollbacks_ok },
		{ "broken by rollback", cov.broken_rollback },
		{ "broken by instance undo", cov.broken_undo },
		{ "install/add undos", cov.install_undos },
		{ "kick walks", cov.kicks },
		{ "bring-up failures", cov.bringup_fails },
	};

	printf("# coverage:");
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		printf("%s %s %ld", i ? "," : "", c[i].what, c[i].n);
	printf("\n");
	for (size_t i = 0; require && i < sizeof(c) / sizeof(c[0]); i++) {
		if (!c[i].n) {
			printf("# the default run never exercised: %s\n",
			       c[i].what);
			check_failures++;
		}
	}
}

static void test_model_random(void)
{
	int nseeds = have_seed ? 1 : DEFAULT_SEEDS;

	for (int i = 0; i < nseeds; i++) {
		uint64_t seed = have_seed ? opt_seed : (uint64_t)i + 1;
		int step;

		printf("# seed %llu, %d operations\n", (unsigned long long)seed,
		       opt_ops);
		fflush(stdout);
		step = run_seed(seed, opt_ops);
		if (step >= 0) {
			printf("# FAILED: seed %llu at step %d\n",
			       (unsigned long long)seed, step);
			check_failures++;
		}
	}
	report_coverage(!have_seed && opt_ops == DEFAULT_OPS);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_model_random),
	};
	const char *env;

	env = argc > 1 ? argv[1] : getenv("HOTVM_SEED");
	if (env && *env) {
		opt_seed = strtoull(env, NULL, 0);
		have_seed = true;
	}
	env = argc > 2 ? argv[2] : getenv("HOTVM_OPS");
	if (env && *env)
		opt_ops = atoi(env);
	env = getenv("HOTVM_VERBOSE");
	verbose = env && *env && *env != '0';
	return check_run(cases, sizeof(cases) / sizeof(cases[0]));
}
