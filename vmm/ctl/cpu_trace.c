// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm cpu trace`: runs one cpu-hotplug (or reads an earlier reply) and
 * builds the timeline of where its time went, state by state, host and
 * guest side by side, once, as JSON (cpu_trace.h); cpu_trace_draw.c draws
 * every picture from that JSON alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cpu_json.h"
#include "cpu_lanes.h"
#include "cpu_trace.h"
#include "cpu_verb.h"
#include "qmp_client.h"
#include "svg.h"

#define NAME_MAX_LEN 48

/* One notified step (or observed stage), its end on the trace's clock. */
struct step {
	bool guest, stage, up, rollback, injected;
	bool lx;	  /* Linux's own table, through the guest agent */
	int64_t start_us; /* lx: its own start (the others follow on) */
	char name[NAME_MAX_LEN];
	int state; /* -1: a stage */
	int ret;
	int64_t end_us;
};

struct steps {
	struct step *v;
	size_t n, cap;
};

static struct step *steps_add(struct steps *s)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct step *p = realloc(s->v, cap * sizeof(*p));

		if (!p)
			return NULL;
		s->v = p;
		s->cap = cap;
	}
	memset(&s->v[s->n], 0, sizeof(s->v[0]));
	return &s->v[s->n++];
}

#define M(o, k) cpu_json_member((o), (k))

static void add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static void add_int(struct json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

static void add_bool(struct json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

/* A step's common members, from a reply's step or an event's data. */
static void step_fill(struct step *st, struct json_object *d)
{
	const char *name = cpu_json_str(M(d, "name"));

	st->guest = !strcmp(
		cpu_json_str(M(d, "side")) ? cpu_json_str(M(d, "side")) : "",
		"guest");
	st->up = !strcmp(cpu_json_str(M(d, "direction"))
				 ? cpu_json_str(M(d, "direction"))
				 : "",
			 "up");
	st->rollback = cpu_json_flag(M(d, "rollback"));
	st->injected = cpu_json_flag(M(d, "injected"));
	st->ret = (int)cpu_json_num(M(d, "ret"), 0);
	st->state = (int)cpu_json_num(M(d, "state"), -1);
	if (name)
		snprintf(st->name, sizeof(st->name), "%s", name);
	else
		snprintf(st->name, sizeof(st->name), "state %d", st->state);
}

static struct json_object *bar_json(const struct step *st, int64_t start)
{
	struct json_object *b = json_object_new_object();

	add_str(b, "lane", st->lx ? "linux" : st->guest ? "guest" : "host");
	add_str(b, "kind", st->stage ? "stage" : "state");
	add_str(b, "name", st->name);
	if (!st->stage)
		add_int(b, "state", st->state);
	add_str(b, "direction", st->up ? "up" : "down");
	add_bool(b, "rollback", st->rollback);
	add_bool(b, "injected", st->injected);
	add_int(b, "ret", st->ret);
	add_str(b, "mark",
		st->ret	       ? "failed"
		: st->rollback ? "rollback"
			       : "ok");
	add_int(b, "start-us", start);
	add_int(b, "end-us", st->end_us);
	add_int(b, "us", st->end_us - start);
	return b;
}

/* Bars and marks from steps in the order they were notified. */
static struct json_object *timeline(const struct steps *s, const char *source)
{
	struct json_object *t = json_object_new_object();
	struct json_object *bars = json_object_new_array();
	struct json_object *marks = json_object_new_array();
	int64_t host_end = 0, last_end = 0;
	bool guest_states = false;

	for (size_t i = 0; i < s->n; i++)
		guest_states |= s->v[i].guest && !s->v[i].stage;
	for (size_t i = 0; i < s->n; i++) {
		const struct step *st = &s->v[i];
		int64_t start = st->lx	    ? st->start_us
				: st->guest ? last_end
					    : host_end;

		if (st->stage && guest_states) {
			struct json_object *m = json_object_new_object();

			add_str(m, "lane", "guest");
			add_str(m, "name", st->name);
			add_int(m, "at-us", st->end_us);
			json_object_array_add(marks, m);
		} else {
			json_object_array_add(
				bars,
				bar_json(st, start < st->end_us ? start
								: st->end_us));
			if (!st->guest && !st->lx)
				host_end = st->end_us;
		}
		if (st->end_us > last_end)
			last_end = st->end_us;
	}
	add_str(t, "source", source);
	add_int(t, "total-us", last_end);
	json_object_object_add(t, "bars", bars);
	json_object_object_add(t, "marks", marks);
	return t;
}

struct json_object *cpu_trace_from_reply(struct json_object *reply)
{
	struct json_object *r = M(reply, "return") ? M(reply, "return") : reply;
	struct json_object *a = M(r, "steps"), *t;
	struct steps s = { 0 };
	int64_t end = 0;
	size_t n;

	if (!json_object_is_type(a, json_type_array))
		return NULL;
	n = json_object_array_length(a);
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(a, i);
		struct step *st = steps_add(&s);

		if (!st)
			break;
		step_fill(st, d);
		end += cpu_json_num(M(d, "us"), 0);
		st->end_us = end;
	}
	t = timeline(&s, "reply");
	free(s.v);
	add_int(t, "cpu", cpu_json_num(M(r, "cpu"), -1));
	add_str(t, "operation",
		cpu_json_str(M(r, "state")) ? cpu_json_str(M(r, "state"))
					    : "unknown");
	add_str(t, "result", "ok"); /* a failed operation has no steps */
	if (cpu_json_num(M(r, "total-us"), -1) >= 0)
		add_int(t, "total-us", cpu_json_num(M(r, "total-us"), 0));
	if (cpu_json_num(M(r, "steps-dropped"), 0))
		add_int(t, "steps-dropped",
			cpu_json_num(M(r, "steps-dropped"), 0));
	return t;
}

/* {"seconds", "microseconds"} on the trace's clock (from @t0_us), >= 0. */
static int64_t event_us(struct json_object *ts, int64_t t0_us)
{
	int64_t at = cpu_json_num(M(ts, "seconds"), 0) * 1000000 +
		     cpu_json_num(M(ts, "microseconds"), 0) - t0_us;

	return at > 0 ? at : 0;
}

/*
 * What the read of Linux's trace said (CPUHP_LINUX_TRACE): how exact the
 * Linux lane's place is, and why it is missing or short.
 */
static void linux_summary(struct json_object *t, struct json_object *d)
{
	struct json_object *o = json_object_new_object();
	static const char *const keys[] = { "steps",	 "unmatched",
					    "malformed", "unmapped",
					    "truncated", "align-us",
					    "error" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (M(d, keys[i]))
			json_object_object_add(o, keys[i],
					       json_object_get(M(d, keys[i])));
	json_object_object_add(t, "linux", o);
}

struct json_object *cpu_trace_from_events(struct json_object *events, long cpu,
					  int64_t t0_us)
{
	size_t n = json_object_is_type(events, json_type_array)
			   ? json_object_array_length(events)
			   : 0;
	struct steps s = { 0 };
	int64_t lost = 0;
	struct json_object *t, *lxsum = NULL;

	for (size_t i = 0; i < n; i++) {
		struct json_object *ev = json_object_array_get_idx(events, i);
		struct json_object *d = M(ev, "data"), *ts = M(ev, "timestamp");
		const char *name = cpu_json_str(M(ev, "event")), *kind;
		struct step *st;

		if (name && !strcmp(name, "EVENTS_LOST"))
			lost += cpu_json_num(M(d, "count"), 0);
		if (name && !strcmp(name, "CPUHP_LINUX_TRACE"))
			lxsum = d;
		kind = cpu_json_str(M(d, "kind"));
		if (!name || strcmp(name, "CPUHP_STATE") || !kind ||
		    cpu_json_num(M(d, "cpu"), -1) != cpu ||
		    (strcmp(kind, "step") && strcmp(kind, "stage")))
			continue;
		st = steps_add(&s);
		if (!st)
			break;
		step_fill(st, d);
		if (!strcmp(kind, "stage")) {
			st->stage = true;
			st->state = -1;
			snprintf(st->name, sizeof(st->name), "%s",
				 cpu_json_str(M(d, "stage"))
					 ? cpu_json_str(M(d, "stage"))
					 : "?");
		}
		/* Linux's steps carry their own place on the host's clock. */
		st->lx = !strcmp(cpu_json_str(M(d, "side")) ?: "", "linux");
		if (st->lx) {
			st->guest = false;
			st->start_us = event_us(M(d, "start"), t0_us);
			ts = M(d, "end");
		}
		st->end_us = event_us(ts, t0_us);
	}
	t = timeline(&s, "events");
	free(s.v);
	add_int(t, "cpu", cpu);
	if (lost)
		add_int(t, "events-lost", lost);
	if (lxsum)
		linux_summary(t, lxsum);
	return t;
}

/* The members in reading order: what, how it ended, then the bars. */
static struct json_object *in_order(struct json_object *t)
{
	static const char *const keys[] = {
		"cpu",		 "operation", "result", "error",
		"total-us",	 "vmm-us",    "source", "events-lost",
		"steps-dropped", "linux",     "bars",	"marks",
	};
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (M(t, keys[i]))
			json_object_object_add(o, keys[i],
					       json_object_get(M(t, keys[i])));
	json_object_put(t);
	return o;
}

/* ---- the verb ---- */

bool cpu_trace_args_ok(const struct cpu_opts *o)
{
	long cpu;

	if (o->from)
		return o->npos == 1 && !o->wait;
	return o->npos == 3 && (!o->wait || !strcmp(o->pos[1], "add")) &&
	       (!strcmp(o->pos[1], "add") || !strcmp(o->pos[1], "remove")) &&
	       !cpu_verb_parse_cpu(o->pos[2], &cpu);
}

static int term_width(FILE *out)
{
	struct winsize ws;

	if (isatty(fileno(out)) && !ioctl(fileno(out), TIOCGWINSZ, &ws) &&
	    ws.ws_col >= 60)
		return ws.ws_col;
	return 80;
}

static struct json_object *read_reply(struct cpu_ctx *x, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct json_tokener *tok;
	struct json_object *o = NULL;
	char buf[4096];
	size_t n;

	if (!f) {
		cpu_verb_error(x, "cpu trace: %s: %s", path, strerror(errno));
		return NULL;
	}
	tok = json_tokener_new();
	while (tok && !o && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
		o = json_tokener_parse_ex(tok, buf, (int)n);
		if (!o && json_tokener_get_error(tok) != json_tokener_continue)
			break;
	}
	if (!o)
		cpu_verb_error(x, "cpu trace: %s: not a JSON reply", path);
	json_tokener_free(tok);
	if (f != stdin)
		fclose(f);
	return o;
}

static int64_t now_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/*
 * Linux's trace is read after the reply: its steps' events until the
 * CPUHP_LINUX_TRACE that ends them (within LINUX_READ_MS, else without).
 */
#define LINUX_READ_MS 30000

static void linux_trace_events(struct cpu_ctx *x, struct json_object *events)
{
	int64_t end = now_us() + (int64_t)LINUX_READ_MS * 1000;

	for (;;) {
		int64_t left = (end - now_us()) / 1000;
		struct json_object *ev;
		const char *name;

		if (left <= 0 || qmp_client_next_event(x->c, &ev, (int)left)) {
			fprintf(x->errf,
				"cpu trace: Linux's trace did not come "
				"within %d ms; no Linux lane\n",
				LINUX_READ_MS);
			return;
		}
		json_object_array_add(events, ev);
		name = cpu_json_str(M(ev, "event"));
		if (name && !strcmp(name, "CPUHP_LINUX_TRACE"))
			return;
	}
}

/* Runs the operation; its events (kept by the client) make the trace. */
static struct json_object *run_traced(struct cpu_ctx *x, int *failed)
{
	struct json_object *args = json_object_new_object(), *ret = NULL;
	struct json_object *events = json_object_new_array(), *t;
	const char *op = strcmp(x->o->pos[1], "add") ? "offline" : "online";
	struct qmp_client_error e;
	int64_t t0, total;
	size_t n;
	long cpu;
	int rc;

	cpu_verb_parse_cpu(x->o->pos[2], &cpu);
	add_int(args, "cpu", cpu);
	add_str(args, "state", op);
	if (x->o->wait)
		add_str(args, "wait", x->o->wait);
	t0 = now_us();
	rc = qmp_client_execute(x->c, "cpu-hotplug", args, &ret, &e,
				x->o->timeout_ms);
	total = now_us() - t0;
	json_object_put(args);
	if (rc && rc != -EREMOTEIO) {
		cpu_verb_error(x, "error: %s", e.desc);
		json_object_put(events);
		return NULL;
	}
	/*
	 * Only what came before the reply: the operation's own events; and
	 * when Linux's trace is read after it, up to its CPUHP_LINUX_TRACE.
	 */
	n = qmp_client_pending_events(x->c);
	for (size_t i = 0; i < n; i++) {
		struct json_object *ev;

		if (qmp_client_next_event(x->c, &ev, 0))
			break;
		json_object_array_add(events, ev);
	}
	if (cpu_json_flag(M(ret, "linux-trace-pending")))
		linux_trace_events(x, events);
	t = cpu_trace_from_events(events, cpu, t0);
	json_object_put(events);
	add_str(t, "operation", op);
	add_str(t, "result", rc ? "failed" : "ok");
	if (rc)
		add_str(t, "error", e.desc);
	/*
	 * The bars are on the client's clock, from when it sent the
	 * request: the axis spans that; the VMM's own figure (from when its
	 * operation thread took the request) is kept beside it.
	 */
	if (total > cpu_json_num(M(t, "total-us"), 0))
		add_int(t, "total-us", total);
	if (M(ret, "total-us"))
		add_int(t, "vmm-us", cpu_json_num(M(ret, "total-us"), 0));
	json_object_put(ret);
	*failed = rc != 0;
	return t;
}

int cpu_trace_verb(struct cpu_ctx *x)
{
	struct json_object *t = NULL, *reply;
	int failed = 0, rc = 0;

	if (x->o->from) {
		reply = read_reply(x, x->o->from);
		if (!reply)
			return 1;
		/* A saved timeline (trace --json) is drawn again as it is. */
		if (json_object_is_type(M(reply, "bars"), json_type_array))
			t = json_object_get(reply);
		else
			t = cpu_trace_from_reply(reply);
		json_object_put(reply);
		if (!t) {
			cpu_verb_error(x,
				       "cpu trace: %s: no \"steps\" in it "
				       "(a cpu-hotplug reply has them)",
				       x->o->from);
			return 1;
		}
	} else {
		t = run_traced(x, &failed);
		if (!t)
			return 1;
	}
	t = in_order(t);
	if (x->o->svg) {
		FILE *f = fopen(x->o->svg, "w");

		if (f) {
			cpu_trace_write_svg(f, t);
			if (fclose(f))
				f = NULL;
		}
		if (!f) {
			cpu_verb_error(x, "cpu trace: %s: %s", x->o->svg,
				       strerror(errno));
			rc = 1;
		}
	}
	if (x->o->json)
		cpu_verb_print_json(x, t);
	else
		cpu_trace_print_text(x->out, t, term_width(x->out));
	/* Drawn either way; the status says whether the operation worked. */
	if (failed)
		cpu_verb_error(x, "error: %s", cpu_json_str(M(t, "error")));
	json_object_put(t);
	return rc || failed;
}
