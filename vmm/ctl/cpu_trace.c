// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm cpu trace`: runs one cpu-hotplug (or reads an earlier reply) and
 * draws where its time went, state by state, host and guest side by side.
 * The timeline is built once, as JSON (cpu_trace.h), and every picture is
 * drawn from that JSON alone, so what --json prints is what was plotted.
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

/* ---- drawing ---- */

static void fmt_us(char *buf, size_t len, int64_t us)
{
	if (us < 1000)
		snprintf(buf, len, "%lldus", (long long)us);
	else if (us < 10000)
		snprintf(buf, len, "%.2fms", us / 1000.0);
	else if (us < 1000000)
		snprintf(buf, len, "%.1fms", us / 1000.0);
	else
		snprintf(buf, len, "%.2fs", us / 1e6);
}

/* An axis label: round numbers, as short as they go. */
static void fmt_tick(char *buf, size_t len, int64_t us)
{
	if (!us)
		snprintf(buf, len, "0");
	else if (us >= 1000000 && !(us % 1000000))
		snprintf(buf, len, "%llds", (long long)(us / 1000000));
	else if (us >= 1000000)
		snprintf(buf, len, "%.1fs", us / 1e6);
	else if (us && !(us % 1000))
		snprintf(buf, len, "%lldms", (long long)(us / 1000));
	else
		fmt_us(buf, len, us);
}

static const char *bar_mark(struct json_object *b)
{
	const char *m = cpu_json_str(M(b, "mark"));

	if (m && !strcmp(m, "failed"))
		return cpu_json_flag(M(b, "injected")) ? "FAILED*" : "FAILED";
	return m ? m : "?";
}

/* Words of s, indented by two, in lines of at most width columns. */
static void print_wrapped(FILE *out, const char *s, int width)
{
	int col = 0;

	while (*s) {
		int len = (int)strcspn(s, " ");

		if (col && col + 1 + len > width) {
			fputc('\n', out);
			col = 0;
		}
		col += fprintf(out, "%s%.*s", col ? " " : "  ", len, s);
		s += len;
		s += strspn(s, " ");
	}
	if (col)
		fputc('\n', out);
}

/* The Linux lane's provenance, one line (or why there is none). */
static void linux_line(struct json_object *l, char *buf, size_t len)
{
	const char *err = cpu_json_str(M(l, "error"));
	char al[32];

	if (err) {
		snprintf(buf, len, "linux: %s", err);
		return;
	}
	fmt_us(al, sizeof(al), cpu_json_num(M(l, "align-us"), 0));
	snprintf(buf, len,
		 "linux: %lld steps from Linux's trace, placed to +-%s; "
		 "%lld unmatched, %lld malformed lines ignored%s",
		 (long long)cpu_json_num(M(l, "steps"), 0), al,
		 (long long)cpu_json_num(M(l, "unmatched"), 0),
		 (long long)cpu_json_num(M(l, "malformed"), 0),
		 cpu_json_flag(M(l, "truncated")) ? ", buffer cut short" : "");
}

static void print_linux(FILE *out, struct json_object *l, int width)
{
	char buf[512];

	if (!l)
		return;
	linux_line(l, buf, sizeof(buf));
	print_wrapped(out, buf, width);
}

static void print_title(FILE *out, struct json_object *t, int width)
{
	char tot[32];
	const char *err = cpu_json_str(M(t, "error"));

	fmt_us(tot, sizeof(tot), cpu_json_num(M(t, "total-us"), 0));
	fprintf(out, "cpu %lld %s: %s in %s, %zu steps (from the %s)\n",
		(long long)cpu_json_num(M(t, "cpu"), -1),
		cpu_json_str(M(t, "operation"))
			? cpu_json_str(M(t, "operation"))
			: "?",
		cpu_json_str(M(t, "result")) ? cpu_json_str(M(t, "result"))
					     : "?",
		tot, json_object_array_length(M(t, "bars")),
		cpu_json_str(M(t, "source")) ? cpu_json_str(M(t, "source"))
					     : "?");
	if (err)
		print_wrapped(out, err, width);
	if (cpu_json_num(M(t, "events-lost"), 0))
		fprintf(out, "  (%lld events were lost: steps are missing)\n",
			(long long)cpu_json_num(M(t, "events-lost"), 0));
	print_linux(out, M(t, "linux"), width);
}

static int col(int64_t us, int64_t total, int w)
{
	int c = total > 0 ? (int)(us * w / total) : 0;

	return c < 0 ? 0 : c >= w ? w - 1 : c;
}

static void text_row(FILE *out, const char *lane, const char *dir,
		     const char *mark, const char *name, const char *time,
		     const char *bar)
{
	fprintf(out, "%-5s %-4s %-8s %-18.18s %7s |%s|\n", lane, dir, mark,
		name, time, bar);
}

/* One text row: its bar filled with @fill over columns [c0, c1]. */
static void text_line(struct lane_walk *lw, const char *dir, const char *mark,
		      struct json_object *o, int c0, int c1, char fill,
		      int64_t us)
{
	char bar[512], time[32];

	memset(bar, ' ', lw->w);
	for (int c = c0; c <= c1 && c < lw->w; c++)
		bar[c] = fill;
	bar[lw->w] = '\0';
	fmt_us(time, sizeof(time), us);
	text_row(lw->out, lw->lane, dir, mark,
		 cpu_json_str(M(o, "name")) ?: "?", time, bar);
}

static void text_mark(struct lane_walk *lw, struct json_object *k, int64_t at)
{
	int c = col(at, lw->total, lw->w);

	text_line(lw, "-", "stage", k, c, c, '^', at);
}

static void text_bar(struct lane_walk *lw, struct json_object *b, int64_t start)
{
	const char *mk = cpu_json_str(M(b, "mark")) ?: "";

	text_line(lw, cpu_json_str(M(b, "direction")) ?: "?", bar_mark(b), b,
		  col(start, lw->total, lw->w),
		  col(cpu_json_num(M(b, "end-us"), 0), lw->total, lw->w),
		  !strcmp(mk, "failed")	    ? 'X'
		  : !strcmp(mk, "rollback") ? '~'
					    : '#',
		  cpu_json_num(M(b, "us"), 0));
}

static void text_lane(FILE *out, struct json_object *t, const char *lane, int w)
{
	lane_walk(t, &(struct lane_walk){ .lane = lane,
					  .out = out,
					  .w = w,
					  .mark = text_mark,
					  .bar = text_bar });
}

void cpu_trace_print_text(FILE *out, struct json_object *t, int width)
{
	int w = width - 49; /* what the columns before the bar take */
	char tot[32], axis[512];

	if (w < 10)
		w = 10;
	if (w > 400)
		w = 400;
	print_title(out, t, width);
	if (!json_object_is_type(M(t, "bars"), json_type_array))
		return;
	fmt_us(tot, sizeof(tot), cpu_json_num(M(t, "total-us"), 0));
	snprintf(axis, sizeof(axis), "0%*s", w - 1, tot);
	text_row(out, "LANE", "DIR", "MARK", "STATE", "TIME", axis);
	text_lane(out, t, "host", w);
	text_lane(out, t, "guest", w);
	text_lane(out, t, "linux", w);
	fputs("(# ok, X failed, ~ rolled back, * an injected fault,\n"
	      " ^ a stage the host saw of the guest)\n",
	      out);
}

/* ---- SVG ---- */

#define SVG_W	   980
#define SVG_LABEL  250 /* x where the plot starts */
#define SVG_PLOT   620
#define SVG_ROW	   16
#define SVG_HEAD   76
#define SVG_LANE_H 22

static const char *bar_fill(struct json_object *b)
{
	const char *mk = cpu_json_str(M(b, "mark")) ?: "";
	const char *kind = cpu_json_str(M(b, "kind")) ?: "";
	const char *dir = cpu_json_str(M(b, "direction")) ?: "";

	if (!strcmp(mk, "failed"))
		return "#d62728";
	if (!strcmp(mk, "rollback"))
		return "#ff9f1c";
	if (!strcmp(kind, "stage"))
		return "#9467bd";
	return strcmp(dir, "up") ? "#2ca089" : "#3b75af";
}

/* 1, 2 or 5 times a power of ten, about a fifth of the total. */
static int64_t tick_step(int64_t total)
{
	int64_t s = 1;

	while (s * 10 <= total / 5 + 1)
		s *= 10;
	if (s * 5 <= total / 4)
		return s * 5;
	if (s * 2 <= total / 4)
		return s * 2;
	return s;
}

static double xpos(int64_t us, int64_t total)
{
	return SVG_LABEL + (total > 0 ? (double)us * SVG_PLOT / total : 0);
}

static size_t lane_rows(struct json_object *t, const char *lane)
{
	size_t n = 0;
	struct json_object *a[2] = { M(t, "bars"), M(t, "marks") };

	for (int k = 0; k < 2; k++) {
		size_t len = json_object_is_type(a[k], json_type_array)
				     ? json_object_array_length(a[k])
				     : 0;

		for (size_t i = 0; i < len; i++)
			n += lane_has(json_object_array_get_idx(a[k], i), lane);
	}
	return n;
}

static void svg_mark(struct lane_walk *lw, struct json_object *k, int64_t at)
{
	double x = xpos(at, lw->total), y = lw->y;
	char time[32];

	fmt_us(time, sizeof(time), at);
	svg_text(lw->out, SVG_LABEL - 6, y + 12, "end", 11, "stage %s (seen)",
		 cpu_json_str(M(k, "name")) ?: "?");
	svg_line(lw->out, x, y + 1, x, y + SVG_ROW - 1, "#9467bd", 0);
	svg_text(lw->out, x + 4, y + 12, "start", 10, "at %s", time);
	lw->y += SVG_ROW;
}

static void svg_bar(struct lane_walk *lw, struct json_object *b, int64_t start)
{
	FILE *f = lw->out;
	double y = lw->y, x0, x1;
	char time[32], title[256], cls[64];

	x0 = xpos(start, lw->total);
	x1 = xpos(cpu_json_num(M(b, "end-us"), 0), lw->total);
	if (x1 - x0 < 1.5)
		x1 = x0 + 1.5;
	fmt_us(time, sizeof(time), cpu_json_num(M(b, "us"), 0));
	snprintf(title, sizeof(title), "%s %s %s: %s, %s (ret %lld)", lw->lane,
		 cpu_json_str(M(b, "name")) ?: "?",
		 cpu_json_str(M(b, "direction")) ?: "?", bar_mark(b), time,
		 (long long)cpu_json_num(M(b, "ret"), 0));
	svg_text(f, SVG_LABEL - 6, y + 12, "end", 11, "%s %s",
		 strcmp(cpu_json_str(M(b, "direction")) ?: "", "up") ? "\u2193"
								     : "\u2191",
		 cpu_json_str(M(b, "name")) ?: "?");
	snprintf(cls, sizeof(cls), "bar %s",
		 cpu_json_str(M(b, "mark")) ?: "ok");
	svg_rect(f, x0, y + 2, x1 - x0, SVG_ROW - 4, bar_fill(b), cls, title);
	if (strcmp(cpu_json_str(M(b, "mark")) ?: "", "ok"))
		svg_text(f, x1 + 4, y + 12, "start", 10, "%s %s", time,
			 strcmp(bar_mark(b), "FAILED*")
				 ? bar_mark(b)
				 : "FAILED (injected fault)");
	else
		svg_text(f, x1 + 4, y + 12, "start", 10, "%s", time);
	lw->y += SVG_ROW;
}

static double svg_lane(FILE *f, struct json_object *t, const char *lane,
		       double y)
{
	struct lane_walk sw = {
		.lane = lane,
		.out = f,
		.mark = svg_mark,
		.bar = svg_bar,
	};
	size_t rows = lane_rows(t, lane);

	svg_rect(f, 8, y, SVG_W - 16, SVG_LANE_H + rows * SVG_ROW + 4,
		 !strcmp(lane, "host")	  ? "#eef3f9"
		 : !strcmp(lane, "linux") ? "#f7f1fa"
					  : "#f3f7ee",
		 "lane", NULL);
	svg_text(f, 14, y + 15, "start", 13, "%s",
		 !strcmp(lane, "host") ? "host (hotvm's table)"
		 : !strcmp(lane, "linux")
			 ? "linux (Linux's own cpuhp table, from its trace "
			   "through the guest agent)"
			 : "guest (its own table, or what the host saw of it)");
	sw.y = y + SVG_LANE_H;
	lane_walk(t, &sw);
	return sw.y + 10;
}

void cpu_trace_write_svg(FILE *f, struct json_object *t)
{
	size_t lx = lane_rows(t, "linux");
	size_t rows = lane_rows(t, "host") + lane_rows(t, "guest") + lx;
	int64_t total = cpu_json_num(M(t, "total-us"), 0), step;
	int h = SVG_HEAD + (lx ? 3 : 2) * (SVG_LANE_H + 14) +
		(int)rows * SVG_ROW + 40;
	char lxline[512];
	double y = SVG_HEAD, axis_y;
	const char *err = cpu_json_str(M(t, "error"));
	char tot[32], lab[32];

	fmt_us(tot, sizeof(tot), total);
	svg_begin(f, SVG_W, h);
	svg_text(f, 14, 22, "start", 15, "cpu %lld %s: %s in %s",
		 (long long)cpu_json_num(M(t, "cpu"), -1),
		 cpu_json_str(M(t, "operation")) ?: "?",
		 cpu_json_str(M(t, "result")) ?: "?", tot);
	if (err)
		svg_text(f, 14, 40, "start", 11, "%s", err);
	if (M(t, "linux")) {
		linux_line(M(t, "linux"), lxline, sizeof(lxline));
		svg_text(f, 14, err ? 54 : 40, "start", 11, "%s", lxline);
	}
	if (json_object_is_type(M(t, "bars"), json_type_array)) {
		y = svg_lane(f, t, "host", y);
		y = svg_lane(f, t, "guest", y);
		if (lx)
			y = svg_lane(f, t, "linux", y);
	}
	/* The time axis, with a grid line at every tick, over the lanes. */
	axis_y = SVG_HEAD - 12;
	svg_line(f, SVG_LABEL, axis_y, SVG_LABEL + SVG_PLOT, axis_y, "#444", 0);
	step = tick_step(total > 0 ? total : 1);
	for (int64_t us = 0; total > 0 && us <= total; us += step) {
		fmt_tick(lab, sizeof(lab), us);
		svg_line(f, xpos(us, total), axis_y - 4, xpos(us, total),
			 h - 36, "#bbb", 1);
		svg_text(f, xpos(us, total), axis_y - 6, "middle", 10, "%s",
			 lab);
	}
	svg_rect(f, 14, h - 24, 10, 10, "#3b75af", "key", NULL);
	svg_text(f, 28, h - 15, "start", 10, "up");
	svg_rect(f, 60, h - 24, 10, 10, "#2ca089", "key", NULL);
	svg_text(f, 74, h - 15, "start", 10, "down");
	svg_rect(f, 116, h - 24, 10, 10, "#d62728", "key", NULL);
	svg_text(f, 130, h - 15, "start", 10, "failed");
	svg_rect(f, 176, h - 24, 10, 10, "#ff9f1c", "key", NULL);
	svg_text(f, 190, h - 15, "start", 10, "rolled back");
	svg_rect(f, 260, h - 24, 10, 10, "#9467bd", "key", NULL);
	svg_text(f, 274, h - 15, "start", 10,
		 "stage the host observed; a bar ends when the VMM was told "
		 "the state's callback returned");
	svg_end(f);
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
	/* Only what came before the reply: the operation's own events. */
	n = qmp_client_pending_events(x->c);
	for (size_t i = 0; i < n; i++) {
		struct json_object *ev;

		if (qmp_client_next_event(x->c, &ev, 0))
			break;
		json_object_array_add(events, ev);
	}
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
