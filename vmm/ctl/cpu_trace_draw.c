// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm cpu trace`'s pictures: the timeline (cpu_trace.h's JSON) drawn
 * as text for a terminal and as SVG, from that JSON alone, so that what
 * --json prints is what was plotted.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cpu_json.h"
#include "cpu_lanes.h"
#include "cpu_trace.h"
#include "svg.h"

#define M(o, k) cpu_json_member((o), (k))

/* ---- text ---- */

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
