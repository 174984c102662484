// SPDX-License-Identifier: GPL-2.0-only
/*
 * Linux's own cpuhp table, mirrored through the guest agent
 * (docs/design.md §6.7).  Once per boot hotvm reads Linux's state list
 * and enables Linux's cpuhp trace events (events/cpuhp/enable:
 * cpuhp_enter, cpuhp_multi_enter and cpuhp_exit), which stay on; before
 * each operation it writes its mark (three calls), and after the
 * operation's reply it reads the buffer and empties it for the next
 * window (five calls, the buffer in one read over virtio-console).  The
 * read is off the operation's path: hp_lx_trace_end() only leaves the
 * window pending, and hp_lx_trace_settle() reads it once the reply is out
 * (the operation thread's next thing, qmp_server's after-work), or when
 * the next window opens, whichever comes first; whoever needs what it
 * finds (query-cpuhp's linux-state, `hotvm cpu trace`'s lane) waits for
 * it (hp_lx_trace_wait(), CPUHP_LINUX_TRACE).  No guest file stays open
 * between calls' groups: tracefs can be unmounted between operations.  A
 * window with none of Linux's steps has the events enabled again at its
 * read.  Each enter is paired with its exit into one step of the CPU's
 * "linux" lane, named from the state list.
 *
 * Clocks: Linux stamps its trace with its own clock.  Before the
 * operation hotvm writes a numbered mark to trace_marker and notes the
 * host's wall clock just before the write was sent and just after it was
 * answered: Linux stamped the mark between the two, so the midpoint maps
 * Linux's clock onto the host's to within half that interval (align-us,
 * reported with every trace).  The drift between the two clocks over one
 * operation (seconds) is far below that.
 *
 * tracefs must be mounted in the guest (/sys/kernel/tracing, or
 * /sys/kernel/debug/tracing under debugfs): distributions do it
 * (systemd's sys-kernel-tracing.mount), the lab's init does it.  hotvm
 * mounts nothing in the guest; without tracefs it says so once per boot
 * and goes on without the Linux lane.
 *
 * None of this runs inside the operation gate: the agent calls happen
 * before hp_op_enter() and after hp_op_exit(), on the operation's thread,
 * under agent_lock only; a failed call ends the window there (one
 * timeout at most, never one per call).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "hotplug_internal.h"
#include "linux_cpuhp.h"
#include "linux_file.h"
#include "log.h"
#include "qga.h"

/* The most of the trace buffer read after one operation. */
#define LX_TRACE_TEXT_MAX (512u << 10)
/*
 * One read's share: through a UART the agent sends it as base64, one VM
 * exit a byte (measured in the nested lab: a call of 100 bytes each way
 * takes about 50 ms), so one read stays well inside its deadline
 * (vmm/agent/linux_file.c) and a slow one costs little when it fails.
 * Through virtio-console the bytes cost no exit: the whole trace of an
 * operation (some 13 KiB for a Linux 6.1 hot-add) comes in one call.
 */
#define LX_TRACE_CHUNK	    (2u << 10)
#define LX_TRACE_CHUNK_BULK (128u << 10)

static const char *const lx_tracefs_dirs[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing",
};

struct lx_trace {
	pthread_mutex_t lock; /* the fields a query reads; a leaf */
	struct lx_states states;
	bool states_read;  /* this boot's list is in states (or unusable) */
	int dir;	   /* index into lx_tracefs_dirs, -1 not found yet */
	bool no_tracefs;   /* none this boot: said once */
	bool no_lane_said; /* and in a trace, once */
	bool events_on;	   /* the cpuhp events enabled this boot */
	int *cpu_state;	   /* per slot: Linux's last state, -1 */

	/*
	 * The window: open from begin until its read; pending from the
	 * operation's end until then (under lock too, for the waiters).
	 */
	bool active;
	bool pending;
	pthread_cond_t read; /* broadcast when a pending read is done */
	uint64_t mark;
	int64_t mark_t0_us, mark_t1_us; /* host wall clock around the mark */
	int *slot_begin;		/* Linux id -> slot + 1 at begin */
	char *text;			/* the trace as read */
};

static int64_t wall_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

int hp_lx_trace_init(struct hotplug *hp)
{
	struct lx_trace *t;

	if (!hp->agent)
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cpu_state = malloc(hp->max_cpus * sizeof(*t->cpu_state));
	t->slot_begin = calloc(hp->max_cpus, sizeof(*t->slot_begin));
	t->text = malloc(LX_TRACE_TEXT_MAX);
	if (!t->cpu_state || !t->slot_begin || !t->text) {
		free(t->cpu_state);
		free(t->slot_begin);
		free(t->text);
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->read, NULL);
	t->dir = -1;
	for (unsigned int i = 0; i < hp->max_cpus; i++)
		t->cpu_state[i] = -1;
	hp->lxt = t;
	return 0;
}

void hp_lx_trace_destroy(struct hotplug *hp)
{
	struct lx_trace *t = hp->lxt;

	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->read);
	free(t->cpu_state);
	free(t->slot_begin);
	free(t->text);
	free(t);
	hp->lxt = NULL;
}

void hp_lx_trace_forget(struct hotplug *hp)
{
	struct lx_trace *t = hp->lxt;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->states.n = 0;
	t->states_read = false;
	t->dir = -1;
	t->no_tracefs = false;
	t->no_lane_said = false;
	t->events_on = false;
	for (unsigned int i = 0; i < hp->max_cpus; i++)
		t->cpu_state[i] = -1;
	pthread_mutex_unlock(&t->lock);
}

int hp_lx_trace_state(struct hotplug *hp, unsigned int cpu)
{
	struct lx_trace *t = hp->lxt;
	int st;

	if (!t || cpu >= hp->max_cpus)
		return -1;
	pthread_mutex_lock(&t->lock);
	st = t->cpu_state[cpu];
	pthread_mutex_unlock(&t->lock);
	return st;
}

unsigned int hotplug_linux_states(struct hotplug *hp, struct lx_states *out)
{
	struct lx_trace *t = hp->lxt;
	unsigned int n;

	if (!t)
		return 0;
	pthread_mutex_lock(&t->lock);
	n = t->states.n;
	if (out) {
		out->n = n;
		memcpy(out->s, t->states.s, n * sizeof(out->s[0]));
	}
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* Reads the open file @h to its end into t->text; its length or -errno. */
static long read_all(struct hotplug *hp, long h, bool *truncated,
		     struct hv_err *err)
{
	struct lx_trace *t = hp->lxt;
	size_t chunk =
		hp->agent->port.bulk ? LX_TRACE_CHUNK_BULK : LX_TRACE_CHUNK;
	size_t len = 0;
	bool eof = false;

	*truncated = false;
	while (!eof) {
		size_t want = LX_TRACE_TEXT_MAX - len;
		long n;

		if (!want) {
			*truncated = true;
			break;
		}
		if (want > chunk)
			want = chunk;
		n = lx_file_read(&hp->lxa, h, t->text + len, want, &eof, err);
		if (n < 0)
			return n;
		if (!n)
			break;
		len += (size_t)n;
	}
	return (long)len;
}

/* Linux's state list, once per boot; agent_lock held. */
static int read_states(struct hotplug *hp, struct hv_err *err)
{
	struct lx_trace *t = hp->lxt;
	struct lx_states *parsed = malloc(sizeof(*parsed));
	int ret;

	if (!parsed)
		return hv_err_set(err, -ENOMEM, NULL);
	ret = hp_lx_states_read(hp, parsed, err);
	if (ret == -ETIMEDOUT) {
		free(parsed);
		return ret;
	}
	if (ret)
		pr_err("Linux's cpuhp state list is unusable (%s): no Linux "
		       "lane this boot",
		       hv_err_msg(err));
	pthread_mutex_lock(&t->lock);
	t->states.n = 0;
	if (!ret) {
		t->states.n = parsed->n;
		memcpy(t->states.s, parsed->s,
		       parsed->n * sizeof(parsed->s[0]));
	}
	t->states_read = true;
	pthread_mutex_unlock(&t->lock);
	free(parsed);
	return 0;
}

static void dir_path(struct lx_trace *t, const char *file, char *buf,
		     size_t len)
{
	snprintf(buf, len, "%s/%s", lx_tracefs_dirs[t->dir], file);
}

/*
 * Empties the trace buffer (opening "trace" for writing truncates it),
 * finding tracefs the first time.  -ENOENT: no tracefs (said once).
 */
static int clear_trace(struct hotplug *hp, struct hv_err *err)
{
	struct lx_trace *t = hp->lxt;
	char path[96];

	for (int d = t->dir < 0 ? 0 : t->dir; d < 2; d++) {
		long h;

		snprintf(path, sizeof(path), "%s/trace", lx_tracefs_dirs[d]);
		h = lx_file_open(&hp->lxa, path, "w", err);
		if (h == -ETIMEDOUT)
			return (int)h;
		if (h >= 0) {
			lx_file_close(&hp->lxa, h);
			t->dir = d;
			return 0;
		}
	}
	/* Gone since it was found (unmounted): looked for again. */
	t->dir = -1;
	if (!t->no_tracefs) {
		pr_err("Linux's tracefs is not mounted in the guest (neither "
		       "/sys/kernel/tracing nor /sys/kernel/debug/tracing): no "
		       "Linux lane in traces (mount -t tracefs nodev "
		       "/sys/kernel/tracing)");
		t->no_tracefs = true;
	}
	return -ENOENT;
}

static int set_events(struct hotplug *hp, bool on, struct hv_err *err)
{
	char path[96];

	dir_path(hp->lxt, "events/cpuhp/enable", path, sizeof(path));
	return lx_file_write_all(&hp->lxa, path, on ? "1" : "0", 1, err);
}

/*
 * The numbered mark, with the host's clock around the close: qemu-ga's
 * writes are buffered (stdio), so Linux gets the mark, and stamps it,
 * when the agent closes the file.
 */
static int write_mark(struct hotplug *hp, struct hv_err *err)
{
	struct lx_trace *t = hp->lxt;
	char path[96], text[48];
	long h;
	int ret;

	dir_path(t, "trace_marker", path, sizeof(path));
	h = lx_file_open(&hp->lxa, path, "w", err);
	if (h < 0)
		return (int)h;
	snprintf(text, sizeof(text), "hotvm-mark %llu",
		 (unsigned long long)++t->mark);
	ret = lx_file_write(&hp->lxa, h, text, strlen(text), err);
	lx_file_close(&hp->lxa, h);
	t->mark_t1_us = wall_us();
	/* From the close's send, after the handshake (qga.h). */
	t->mark_t0_us = qga_last_sent_us(hp->agent);
	return ret;
}

/* The agent did not answer, or the VM stops or resets: no retry. */
static bool agent_gone(int ret)
{
	return ret == -ETIMEDOUT || ret == -ECANCELED || ret == -EPIPE;
}

/*
 * The window's start; agent_lock held.  0, or the window stays shut.  The
 * buffer was emptied when the last window was read (the first time, or
 * after tracefs went away, here while finding it); so the start is the
 * mark alone.  A mark that cannot be written (tracefs unmounted since)
 * has tracefs looked for again, which says once that it is gone.
 */
static int begin_locked(struct hotplug *hp, struct hv_err *err)
{
	struct lx_trace *t = hp->lxt;
	int ret = 0;

	if (!t->states_read)
		ret = read_states(hp, err);
	if (ret || !t->states.n || t->no_tracefs)
		return ret ? ret : -ENOENT;
	if (t->dir < 0)
		ret = clear_trace(hp, err);
	if (!ret && !t->events_on)
		ret = set_events(hp, true, err);
	if (!ret)
		t->events_on = true;
	if (!ret)
		ret = write_mark(hp, err);
	if (ret && !agent_gone(ret) && !t->no_tracefs) {
		hv_err_clear(err);
		t->dir = -1;
		ret = clear_trace(hp, err);
		if (!ret)
			ret = write_mark(hp, err);
	}
	if (!ret)
		memcpy(t->slot_begin, hp->linux_slot,
		       hp->max_cpus * sizeof(*t->slot_begin));
	return ret;
}

/* Says in the trace, once a boot, why it has no Linux lane. */
static void say_no_lane(struct hotplug *hp, const char *why)
{
	struct hp_linux_trace sum = { .error = why };
	struct hp_events ev;

	pthread_mutex_lock(&hp->lock);
	ev = hp->ev;
	pthread_mutex_unlock(&hp->lock);
	if (ev.linux_trace)
		ev.linux_trace(ev.ctx, &sum);
}

void hp_lx_trace_prepare(struct hotplug *hp)
{
	struct lx_trace *t = hp->lxt;
	struct hv_err err = { 0 };
	int ret = 0;

	if (!t || pthread_mutex_trylock(&hp->agent_lock))
		return;
	if (t->active || t->no_tracefs ||
	    (t->states_read && t->dir >= 0 && t->events_on)) {
		pthread_mutex_unlock(&hp->agent_lock);
		return;
	}
	if (!t->states_read)
		ret = read_states(hp, &err);
	if (!ret && t->states.n && t->dir < 0)
		ret = clear_trace(hp, &err);
	if (!ret && t->states.n && !t->events_on)
		t->events_on = !set_events(hp, true, &err);
	pthread_mutex_unlock(&hp->agent_lock);
}

bool hp_lx_trace_begin(struct hotplug *hp)
{
	struct lx_trace *t = hp->lxt;
	struct hv_err err = { 0 };
	bool said;
	int ret;

	if (!t)
		return false;
	hp_lx_trace_settle(hp); /* the last window's read, if not done yet */
	if (!__atomic_load_n(&hp->agent_up, __ATOMIC_RELAXED))
		return false;
	pthread_mutex_lock(&hp->agent_lock);
	/* Open already (a nested call, or another thread's operation). */
	if (t->active) {
		pthread_mutex_unlock(&hp->agent_lock);
		return false;
	}
	ret = begin_locked(hp, &err);
	if (!ret)
		t->active = true;
	said = t->no_tracefs && !t->no_lane_said;
	if (said)
		t->no_lane_said = true;
	pthread_mutex_unlock(&hp->agent_lock);
	if (said)
		say_no_lane(hp, "Linux's tracefs is not mounted in the guest "
				"(/sys/kernel/tracing): no Linux lane");
	else if (ret && ret != -ENOENT)
		pr_err("no Linux lane for this operation: %s",
		       hv_err_msg(&err));
	return !ret;
}

/* The slot of Linux CPU @lid: as after the operation, else as before. */
static int lid_slot(struct hotplug *hp, const int *slot_end, unsigned int lid)
{
	if (lid >= hp->max_cpus)
		return -1;
	if (slot_end[lid])
		return slot_end[lid] - 1;
	return hp->lxt->slot_begin[lid] - 1;
}

/*
 * Enters wait on a stack: a BP state's callback can wait for the AP's own
 * states (bringup_cpu() for the AP's starting ones, takedown_cpu() for
 * its dying ones), so an exit closes the newest enter of its CPU and step.
 */
#define LX_NEST_MAX 8
/* Steps kept from one operation's trace (a resize of many CPUs: more). */
#define LX_PAIRS_MAX 8192

struct lx_pair {
	struct lx_event in, out;
	size_t seq; /* the order of the exits */
};

struct lx_pairing {
	struct hotplug *hp;
	struct hp_events ev;
	const int *slot_end;
	uint64_t mark_ns;
	bool have_mark;
	struct hp_linux_trace sum;
	struct lx_event open[LX_NEST_MAX]; /* enters waiting for their exit */
	unsigned int nopen;
	struct lx_pair *pairs;
	size_t npairs, cap;
};

/* Linux's clock (ns) on the host's wall clock (us). */
static int64_t host_us(const struct lx_pairing *p, uint64_t ns)
{
	const struct lx_trace *t = p->hp->lxt;
	int64_t mid = (t->mark_t0_us + t->mark_t1_us) / 2;

	return mid + ((int64_t)ns - (int64_t)p->mark_ns) / 1000;
}

static void report_step(struct lx_pairing *p, const struct lx_pair *q)
{
	struct lx_trace *t = p->hp->lxt;
	const struct lx_event *e = &q->in, *x = &q->out;
	int slot = lid_slot(p->hp, p->slot_end, e->cpu);
	struct hp_linux_step st = {
		.linux_cpu = (int)e->cpu,
		.state = e->step,
		.name = lx_states_name(&t->states, e->step),
		.fn = e->fn,
		.up = e->step <= e->target,
		.multi = e->kind == LX_EV_MULTI,
		.ret = x->ret,
		.start_us = host_us(p, e->ns),
		.end_us = host_us(p, x->ns),
	};

	if (slot < 0) {
		p->sum.unmapped++;
		return;
	}
	p->sum.steps++;
	/*
	 * Where the CPU is: a step that worked heads for the walk's target
	 * (the states after the last callback have none: Linux is there once
	 * it returns); one that failed leaves it where its exit says.
	 */
	pthread_mutex_lock(&t->lock);
	t->cpu_state[slot] = x->ret ? x->state : e->target;
	pthread_mutex_unlock(&t->lock);
	if (p->ev.linux_step)
		p->ev.linux_step(p->ev.ctx, (unsigned int)slot, &st);
}

static void keep_pair(struct lx_pairing *p, const struct lx_event *in,
		      const struct lx_event *out)
{
	if (p->npairs == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct lx_pair *n;

		if (cap > LX_PAIRS_MAX ||
		    !(n = realloc(p->pairs, cap * sizeof(*n)))) {
			p->sum.truncated = true;
			return;
		}
		p->pairs = n;
		p->cap = cap;
	}
	p->pairs[p->npairs] =
		(struct lx_pair){ .in = *in, .out = *out, .seq = p->npairs };
	p->npairs++;
}

/* An exit: closes the newest open enter of its CPU and step. */
static void close_enter(struct lx_pairing *p, const struct lx_event *x)
{
	for (unsigned int i = p->nopen; i-- > 0;) {
		if (p->open[i].cpu != x->cpu || p->open[i].step != x->step)
			continue;
		/* Enters opened after it and never closed: unmatched. */
		p->sum.unmatched += p->nopen - i - 1;
		if (p->have_mark)
			keep_pair(p, &p->open[i], x);
		p->nopen = i;
		return;
	}
	p->sum.unmatched++;
}

/* One event, in the buffer's order (Linux merges its CPUs' by time). */
static void pair_event(struct lx_pairing *p, const struct lx_event *e)
{
	switch (e->kind) {
	case LX_EV_MARK:
		if (e->mark == p->hp->lxt->mark) {
			p->mark_ns = e->ns;
			p->have_mark = true;
		}
		return;
	case LX_EV_ENTER:
	case LX_EV_MULTI:
		p->sum.enters++;
		if (p->nopen == LX_NEST_MAX) {
			p->sum.unmatched++; /* the oldest gives way */
			memmove(p->open, p->open + 1,
				(LX_NEST_MAX - 1) * sizeof(p->open[0]));
			p->nopen--;
		}
		p->open[p->nopen++] = *e;
		return;
	case LX_EV_EXIT:
		p->sum.exits++;
		close_enter(p, e);
		return;
	}
}

/*
 * Steps in the order they began (a nesting one before those inside it);
 * the trace's microseconds tie often: then in the order they ended.
 */
static bool pair_before(const struct lx_pair *x, const struct lx_pair *y)
{
	if (x->in.ns != y->in.ns)
		return x->in.ns < y->in.ns;
	return x->seq < y->seq;
}

/*
 * An insertion sort: the pairs come nearly in order (by their ends), so
 * it is about linear; and glibc's qsort() may call sysinfo() to size its
 * buffer, which the operation thread's seccomp filter forbids (seen: the
 * VM stopped after a traced removal on the Debian image).
 */
static void sort_pairs(struct lx_pair *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct lx_pair x = a[i];
		size_t j = i;

		for (; j > 0 && pair_before(&x, &a[j - 1]); j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* Every line of t->text; steps before the mark cannot be placed. */
static void pair_all(struct lx_pairing *p, size_t len)
{
	const char *s = p->hp->lxt->text, *end = s + len;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;
		struct lx_event ev;
		int ret = lx_trace_line(s, (size_t)(e - s), &ev);

		if (ret < 0)
			p->sum.malformed++;
		else if (!ret)
			pair_event(p, &ev);
		s = nl ? nl + 1 : end;
	}
	p->sum.unmatched += p->nopen;
	sort_pairs(p->pairs, p->npairs);
	for (size_t i = 0; i < p->npairs; i++)
		report_step(p, &p->pairs[i]);
	free(p->pairs);
	p->pairs = NULL;
}

/*
 * Reads the buffer, then empties it for the next window (opening "trace"
 * for writing truncates it), each file closed before the next call's
 * group; agent_lock held.  The events stay on; between windows only a
 * hot-plug of Linux's own (a CPU offlined by hand) adds to the buffer.
 */
static long end_locked(struct hotplug *hp, bool *truncated, int *slot_end,
		       struct hv_err *err)
{
	struct lx_trace *t = hp->lxt;
	char path[96];
	long h, n;

	dir_path(t, "trace", path, sizeof(path));
	h = lx_file_open(&hp->lxa, path, "r", err);
	if (h < 0)
		return h;
	n = read_all(hp, h, truncated, err);
	lx_file_close(&hp->lxa, h);
	memcpy(slot_end, hp->linux_slot, hp->max_cpus * sizeof(*slot_end));
	if (n >= 0) {
		h = lx_file_open(&hp->lxa, path, "w", err);
		if (h >= 0)
			lx_file_close(&hp->lxa, h);
		else /* the next window looks for tracefs again */
			t->dir = -1;
		hv_err_clear(err);
	}
	return n;
}

void hp_lx_trace_end(struct hotplug *hp, bool begun)
{
	struct lx_trace *t = hp->lxt;

	if (!begun)
		return;
	/* Read after the reply (hp_lx_trace_settle()). */
	pthread_mutex_lock(&t->lock);
	t->pending = true;
	pthread_mutex_unlock(&t->lock);
}

/* The window's read is done (or dropped): wakes hp_lx_trace_wait(). */
static void window_closed(struct lx_trace *t)
{
	t->active = false;
	pthread_mutex_lock(&t->lock);
	t->pending = false;
	pthread_cond_broadcast(&t->read);
	pthread_mutex_unlock(&t->lock);
}

bool hp_lx_trace_pending(struct hotplug *hp)
{
	struct lx_trace *t = hp->lxt;
	bool pending;

	if (!t)
		return false;
	pthread_mutex_lock(&t->lock);
	pending = t->pending;
	pthread_mutex_unlock(&t->lock);
	return pending;
}

void hp_lx_trace_wait(struct hotplug *hp, int timeout_ms)
{
	struct lx_trace *t = hp->lxt;
	struct timespec dl = hv_deadline(timeout_ms);

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	while (t->pending &&
	       pthread_cond_timedwait(&t->read, &t->lock, &dl) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&t->lock);
}

/*
 * The pending window's read, pairing and report; agent_lock held, the
 * window still pending (window_closed() is the caller's).
 */
static void settle_locked(struct hotplug *hp)
{
	struct lx_trace *t = hp->lxt;
	struct hv_err err = { 0 };
	struct lx_pairing p = { .hp = hp };
	int *slot_end;
	long n = -ENOMEM;

	/*
	 * A hot-added CPU's Linux number is known once the operation's end
	 * has asked Linux (hp_op_exit()); a removed one's was known before.
	 */
	slot_end = calloc(hp->max_cpus, sizeof(*slot_end));
	pthread_mutex_lock(&hp->lock);
	p.ev = hp->ev;
	pthread_mutex_unlock(&hp->lock);
	if (t->dir < 0) /* a reset since the window opened */
		n = -ECANCELED;
	else if (slot_end)
		n = end_locked(hp, &p.sum.truncated, slot_end, &err);
	p.slot_end = slot_end;
	p.sum.align_us = (t->mark_t1_us - t->mark_t0_us + 1) / 2;
	if (n >= 0)
		pair_all(&p, (size_t)n);
	if (n < 0) {
		hv_err_set(&err, (int)n, NULL);
		hv_err_prepend(&err, "reading Linux's trace: ");
		p.sum.error = hv_err_msg(&err);
	} else if (!p.have_mark)
		p.sum.error = "hotvm's mark is not in Linux's trace buffer "
			      "(cleared or overwritten): its steps cannot be "
			      "placed on the host's clock";
	/*
	 * None of Linux's steps: the events may be off (a guest's doing):
	 * enabled again now, off the next operation's path.
	 */
	if (!p.sum.steps && n >= 0) {
		struct hv_err e2 = { 0 };

		t->events_on = !set_events(hp, true, &e2);
	} else if (!p.sum.steps) {
		t->events_on = false;
	}
	if (p.sum.malformed)
		pr_err("Linux's trace: %u malformed lines ignored",
		       p.sum.malformed);
	if (p.ev.linux_trace)
		p.ev.linux_trace(p.ev.ctx, &p.sum);
	free(slot_end);
}

void hp_lx_trace_settle(struct hotplug *hp)
{
	bool stopping;

	if (!hp_lx_trace_pending(hp))
		return;
	/*
	 * agent_lock to the end: the text, the mark and its times are the
	 * window's until it is closed (another thread's operation may open
	 * the next one as soon as it is).
	 */
	pthread_mutex_lock(&hp->agent_lock);
	if (!hp_lx_trace_pending(hp)) { /* another thread read it */
		pthread_mutex_unlock(&hp->agent_lock);
		return;
	}
	/* No call into a guest that is going away. */
	pthread_mutex_lock(&hp->lock);
	stopping = hp->stopping;
	pthread_mutex_unlock(&hp->lock);
	if (!stopping)
		settle_locked(hp);
	window_closed(hp->lxt);
	pthread_mutex_unlock(&hp->agent_lock);
}
