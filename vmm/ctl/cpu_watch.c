// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm cpu watch` (cpu_watch.h).  The table comes from query-cpuhp once,
 * then from events: a step moves its side's state, a stage replaces the
 * guest's stage, and an operation's "done" says how it ended and how long
 * it took (from its first step).  Targets and injected faults have no
 * events of their own, so the screen asks query-cpuhp again when an
 * operation ends, which is when they change or are used up.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cpu_json.h"
#include "cpu_verb.h"
#include "cpu_watch.h"
#include "qmp_client.h"

#define M(o, k)	 cpu_json_member((o), (k))
#define NAME_LEN 48

struct wside {
	char cur[NAME_LEN], target[NAME_LEN], fail[NAME_LEN];
	int64_t op_t0; /* first step of the operation in progress, or 0 */
	bool op_up;
};

struct wcpu {
	bool present, reports;
	struct wside side[2]; /* host, guest */
	char stage[24];
	char last[112];
	/* With the guest agent: Linux's own view ("cpu1 online ..."). */
	char lx[NAME_LEN + 32];
};

struct watch {
	struct cpu_ctx *x;
	bool tty;
	struct wcpu *cpu;
	size_t n;
	struct json_object *table[2]; /* host-states, guest-states */
	char last_line[200];
};

static void copy(char *dst, size_t len, const char *s)
{
	snprintf(dst, len, "%s", s ? s : "");
}

static struct wcpu *cpu_at(struct watch *w, int64_t cpu)
{
	struct wcpu *p;

	if (cpu < 0 || cpu > 4096)
		return NULL;
	if ((size_t)cpu >= w->n) {
		p = realloc(w->cpu, (cpu + 1) * sizeof(*p));
		if (!p)
			return NULL;
		memset(p + w->n, 0, (cpu + 1 - w->n) * sizeof(*p));
		w->cpu = p;
		w->n = cpu + 1;
	}
	return &w->cpu[cpu];
}

/*
 * Linux's word through the guest agent (query-cpuhp's guest.linux-*):
 * its CPU number, online or offline, and its own table's state.
 */
static void linux_view(struct wcpu *c, struct json_object *g)
{
	const char *st = cpu_json_str(M(g, "linux-state-name"));

	if (!M(g, "linux-cpu")) {
		c->lx[0] = '\0';
		return;
	}
	snprintf(c->lx, sizeof(c->lx), "cpu%lld %s%s%s",
		 (long long)cpu_json_num(M(g, "linux-cpu"), -1),
		 cpu_json_flag(M(g, "linux-online")) ? "online" : "offline",
		 st ? " " : "", st ? st : "");
}

/* query-cpuhp: the state tables and where every vCPU is. */
static int refresh(struct watch *w)
{
	static const char *const sides[] = { "host", "guest" };
	static const char *const tables[] = { "host-states", "guest-states" };
	struct json_object *r = NULL, *cpus;
	size_t n;

	if (cpu_verb_call(w->x, "query-cpuhp", NULL, &r))
		return -EIO;
	for (int s = 0; s < 2; s++) {
		json_object_put(w->table[s]);
		w->table[s] = json_object_get(M(r, tables[s]));
	}
	cpus = M(r, "cpus");
	n = json_object_is_type(cpus, json_type_array)
		    ? json_object_array_length(cpus)
		    : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);
		struct wcpu *c = cpu_at(w, cpu_json_num(M(e, "cpu"), -1));

		if (!c)
			continue;
		c->present = cpu_json_flag(M(e, "present"));
		c->reports = !json_object_is_type(M(M(e, "guest"), "reports"),
						  json_type_boolean) ||
			     cpu_json_flag(M(M(e, "guest"), "reports"));
		copy(c->stage, sizeof(c->stage),
		     cpu_json_str(M(M(e, "guest"), "stage")));
		linux_view(c, M(e, "guest"));
		for (int s = 0; s < 2; s++) {
			struct json_object *o = M(e, sides[s]);

			copy(c->side[s].cur, NAME_LEN,
			     cpu_json_str(M(o, "name")));
			copy(c->side[s].target, NAME_LEN,
			     cpu_json_str(M(o, "target-name")));
			copy(c->side[s].fail, NAME_LEN,
			     cpu_json_str(M(o, "fail-name")));
		}
	}
	json_object_put(r);
	return 0;
}

/* Where a teardown of @state leaves the CPU: the named state below it. */
static const char *below(struct watch *w, int side, int64_t state)
{
	struct json_object *t = w->table[side];

	for (int64_t i = state - 1;
	     json_object_is_type(t, json_type_array) && i >= 0; i--) {
		struct json_object *e = json_object_array_get_idx(t, i);

		if (e && cpu_json_str(M(e, "name")))
			return cpu_json_str(M(e, "name"));
	}
	return "offline";
}

static void fmt_time(char *buf, size_t len, struct json_object *ts)
{
	struct timeval tv;
	struct tm tm;
	time_t sec;
	long us;

	if (ts) {
		sec = (time_t)cpu_json_num(M(ts, "seconds"), 0);
		us = (long)cpu_json_num(M(ts, "microseconds"), 0);
	} else {
		gettimeofday(&tv, NULL);
		sec = tv.tv_sec;
		us = tv.tv_usec;
	}
	localtime_r(&sec, &tm);
	snprintf(buf, len, "%02d:%02d:%02d.%06ld", tm.tm_hour, tm.tm_min,
		 tm.tm_sec, us);
}

static int64_t ts_us(struct json_object *ts)
{
	return cpu_json_num(M(ts, "seconds"), 0) * 1000000 +
	       cpu_json_num(M(ts, "microseconds"), 0);
}

static void fmt_us(char *buf, size_t len, int64_t us)
{
	if (us < 1000)
		snprintf(buf, len, "%lldus", (long long)us);
	else if (us < 1000000)
		snprintf(buf, len, "%.1fms", us / 1000.0);
	else
		snprintf(buf, len, "%.2fs", us / 1e6);
}

static void result(char *buf, size_t len, int64_t ret)
{
	const char *name = ret < 0 ? strerrorname_np((int)-ret) : NULL;

	if (!ret)
		snprintf(buf, len, "ok");
	else if (name)
		snprintf(buf, len, "failed:%s", name);
	else
		snprintf(buf, len, "failed:%lld", (long long)ret);
}

/* A record: the fields every line has, in order. */
static struct json_object *record(struct json_object *ts, int64_t cpu,
				  const char *side, const char *event,
				  const char *dir, const char *state,
				  const char *res)
{
	struct json_object *r = json_object_new_object();
	char time[32];

	fmt_time(time, sizeof(time), ts);
	json_object_object_add(r, "time", json_object_new_string(time));
	json_object_object_add(r, "cpu",
			       cpu >= 0 ? json_object_new_int64(cpu) : NULL);
	json_object_object_add(r, "side", json_object_new_string(side));
	json_object_object_add(r, "event", json_object_new_string(event));
	json_object_object_add(r, "direction", json_object_new_string(dir));
	json_object_object_add(r, "state", json_object_new_string(state));
	json_object_object_add(r, "result", json_object_new_string(res));
	return r;
}

/* The text line: the seven fields in columns, then "key value"s. */
static void record_text(char *buf, size_t len, struct json_object *r)
{
	char cpu[16], extra[160] = "";
	size_t n = 0, i = 0;

	snprintf(cpu, sizeof(cpu), "cpu%s",
		 json_object_to_json_string(M(r, "cpu")));
	if (!M(r, "cpu"))
		snprintf(cpu, sizeof(cpu), "-");
	json_object_object_foreach(r, k, v)
	{
		if (i++ < 7 || n >= sizeof(extra))
			continue;
		if (json_object_is_type(v, json_type_boolean)) {
			if (json_object_get_boolean(v))
				n += snprintf(extra + n, sizeof(extra) - n,
					      " %s", k);
		} else
			n += snprintf(extra + n, sizeof(extra) - n, " %s %s", k,
				      json_object_get_string(v));
	}
	snprintf(buf, len, "%s %-6s %-5s %-7s %-4s %-20s %s%s",
		 cpu_json_str(M(r, "time")), cpu, cpu_json_str(M(r, "side")),
		 cpu_json_str(M(r, "event")), cpu_json_str(M(r, "direction")),
		 cpu_json_str(M(r, "state")), cpu_json_str(M(r, "result")),
		 extra);
}

static void emit(struct watch *w, struct json_object *r)
{
	record_text(w->last_line, sizeof(w->last_line), r);
	if (w->x->o->json)
		cpu_verb_print_json(w->x, r);
	else if (!w->tty)
		fprintf(w->x->out, "%s\n", w->last_line);
	fflush(w->x->out);
	json_object_put(r);
}

static void add_str(struct json_object *r, const char *k, const char *v)
{
	if (v && *v)
		json_object_object_add(r, k, json_object_new_string(v));
}

/* The table as it stands, a "now" record per vCPU and side. */
static void snapshot(struct watch *w)
{
	for (size_t i = 0; i < w->n; i++) {
		struct wcpu *c = &w->cpu[i];

		for (int s = 0; s < 2; s++) {
			bool stage = s && !c->reports;
			struct json_object *r =
				record(NULL, (int64_t)i, s ? "guest" : "host",
				       "now", "-",
				       stage		 ? c->stage
				       : *c->side[s].cur ? c->side[s].cur
							 : "-",
				       "ok");

			if (!stage && strcmp(c->side[s].target, c->side[s].cur))
				add_str(r, "target", c->side[s].target);
			add_str(r, "fault", c->side[s].fail);
			if (s)
				add_str(r, "stage", c->stage);
			emit(w, r);
		}
		if (c->lx[0])
			emit(w, record(NULL, (int64_t)i, "linux", "now", "-",
				       c->lx, "ok"));
	}
}

/*
 * A step of Linux's own table (side "linux", read from its trace after
 * the operation): a line of its own, at the time Linux took it.
 */
static void on_linux_step(struct watch *w, struct json_object *d)
{
	int64_t cpu = cpu_json_num(M(d, "cpu"), -1);
	const char *name = cpu_json_str(M(d, "name")) ?: "?";
	struct wcpu *c = cpu_at(w, cpu);
	struct json_object *r;
	char res[32];

	result(res, sizeof(res), cpu_json_num(M(d, "ret"), 0));
	r = record(M(d, "end"), cpu, "linux", "step",
		   cpu_json_str(M(d, "direction")) ?: "-", name, res);
	json_object_object_add(
		r, "linux-cpu",
		json_object_new_int64(cpu_json_num(M(d, "linux-cpu"), -1)));
	json_object_object_add(
		r, "us", json_object_new_int64(cpu_json_num(M(d, "us"), 0)));
	if (c)
		snprintf(c->lx, sizeof(c->lx), "cpu%lld %s",
			 (long long)cpu_json_num(M(d, "linux-cpu"), -1), name);
	emit(w, r);
}

static void on_cpuhp(struct watch *w, struct json_object *ev)
{
	struct json_object *d = M(ev, "data"), *ts = M(ev, "timestamp"), *r;
	const char *kind = cpu_json_str(M(d, "kind")) ?: "?";
	int side = !strcmp(cpu_json_str(M(d, "side")) ?: "", "guest");
	int64_t cpu = cpu_json_num(M(d, "cpu"), -1),
		ret = cpu_json_num(M(d, "ret"), 0);
	const char *dir = cpu_json_str(M(d, "direction")) ?: "-";
	const char *name = cpu_json_str(M(d, "name")) ?: "?";
	struct wcpu *c = cpu_at(w, cpu);
	struct wside *ws = c ? &c->side[side] : NULL;
	char res[32], took[32];

	result(res, sizeof(res), ret);
	if (!strcmp(kind, "stage")) {
		name = cpu_json_str(M(d, "stage")) ?: "?";
		if (c)
			copy(c->stage, sizeof(c->stage), name);
	} else if (!strcmp(kind, "step") && ws) {
		if (!ws->op_t0) {
			ws->op_t0 = ts_us(ts);
			ws->op_up = !strcmp(dir, "up");
			/* Whatever it aims at, not the last one's target. */
			ws->target[0] = '\0';
		}
		if (!ret)
			copy(ws->cur, NAME_LEN,
			     !strcmp(dir, "up")
				     ? name
				     : below(w, side,
					     cpu_json_num(M(d, "state"), 0)));
	}
	r = record(ts, cpu, side ? "guest" : "host", kind, dir, name, res);
	if (!strcmp(kind, "step") || !strcmp(kind, "done")) {
		json_object_object_add(r, "rollback",
				       json_object_new_boolean(cpu_json_flag(
					       M(d, "rollback"))));
		json_object_object_add(r, "injected",
				       json_object_new_boolean(cpu_json_flag(
					       M(d, "injected"))));
	}
	if (!strcmp(kind, "done") && ws) {
		int64_t us = ws->op_t0 ? ts_us(ts) - ws->op_t0 : 0;

		copy(ws->cur, NAME_LEN, name);
		json_object_object_add(r, "us", json_object_new_int64(us));
		if (!side) {
			fmt_us(took, sizeof(took), us);
			snprintf(c->last, sizeof(c->last), "%s %s%s %s",
				 ws->op_t0 && !ws->op_up ? "down" : "up",
				 ret ? res + strlen("failed:") : "ok",
				 cpu_json_flag(M(d, "rollback"))
					 ? " rolled back,"
					 : "",
				 took);
		}
		ws->op_t0 = 0;
	}
	emit(w, r);
}

static void on_event(struct watch *w, struct json_object *ev)
{
	const char *name = cpu_json_str(M(ev, "event")) ?: "?";
	struct json_object *d = M(ev, "data"), *ts = M(ev, "timestamp");
	struct json_object *info = M(d, "info");
	char buf[64];

	if (!strcmp(name, "CPUHP_STATE") &&
	    !strcmp(cpu_json_str(M(d, "side")) ?: "", "linux")) {
		on_linux_step(w, d);
		return;
	}
	if (!strcmp(name, "CPUHP_STATE")) {
		on_cpuhp(w, ev);
		return;
	}
	if (!strcmp(name, "DEVICE_DELETED")) {
		const char *dev = cpu_json_str(M(d, "device"))
					  ?: cpu_json_str(M(d, "path"));

		emit(w, record(ts, -1, "host", "deleted", "down", dev ?: "?",
			       "ok"));
	} else if (!strcmp(name, "ACPI_DEVICE_OST")) {
		const char *slot = cpu_json_str(M(info, "slot"));
		struct json_object *r =
			record(ts, slot ? strtol(slot, NULL, 10) : -1, "guest",
			       "ost", "-", "_OST", "ok");

		snprintf(buf, sizeof(buf), "0x%llx",
			 (long long)cpu_json_num(M(info, "source"), 0));
		add_str(r, "source", buf);
		snprintf(buf, sizeof(buf), "0x%llx",
			 (long long)cpu_json_num(M(info, "status"), 0));
		add_str(r, "status", buf);
		emit(w, r);
	} else if (!strcmp(name, "EVENTS_LOST")) {
		struct json_object *r =
			record(ts, -1, "host", "lost", "-", "-", "ok");

		json_object_object_add(
			r, "count",
			json_object_new_int64(cpu_json_num(M(d, "count"), 0)));
		emit(w, r);
	}
}

static bool ends_operation(struct json_object *ev)
{
	const char *name = cpu_json_str(M(ev, "event")) ?: "";
	struct json_object *d = M(ev, "data");

	if (!strcmp(name, "CPUHP_STATE"))
		return !strcmp(cpu_json_str(M(d, "kind")) ?: "", "done") &&
		       !strcmp(cpu_json_str(M(d, "side")) ?: "", "host");
	return !strcmp(name, "EVENTS_LOST") || !strcmp(name, "DEVICE_DELETED");
}

/* ---- the screen ---- */

static void cell(char *buf, size_t len, const struct wcpu *c, int side)
{
	const struct wside *s = &c->side[side];
	int n;

	if (side && !c->reports) {
		snprintf(buf, len, "stage %s%s%s", c->stage,
			 c->lx[0] ? ", linux " : "", c->lx);
		return;
	}
	n = snprintf(buf, len, "%s", *s->cur ? s->cur : "-");
	if (*s->target && strcmp(s->target, s->cur) && n < (int)len)
		n += snprintf(buf + n, len - n, " >%s", s->target);
	if (*s->fail && n < (int)len)
		snprintf(buf + n, len - n, " !%s", s->fail);
}

static void draw(struct watch *w)
{
	FILE *out = w->x->out;
	struct winsize ws;
	int cols = 80, cw;
	char h[128], g[128], now[32];

	if (!ioctl(fileno(out), TIOCGWINSZ, &ws) && ws.ws_col >= 60)
		cols = ws.ws_col;
	cw = (cols - 4 - 32) / 2; /* what LAST OPERATION leaves */
	if (cw > 60)
		cw = 60;
	fmt_time(now, sizeof(now), NULL);
	fprintf(out, "\033[H\033[2Jhotvm cpu watch %.40s  %s  (Ctrl-C quits)\n",
		w->x->o->socket, now);
	fprintf(out, "%-3s %-*s %-*s %s\n", "CPU", cw, "HOST", cw, "GUEST",
		"LAST OPERATION");
	for (size_t i = 0; i < w->n; i++) {
		const struct wcpu *c = &w->cpu[i];

		cell(h, sizeof(h), c, 0);
		cell(g, sizeof(g), c, 1);
		fprintf(out, "%3zu %-*.*s %-*.*s %.30s\n", i, cw, cw, h, cw, cw,
			g, *c->last ? c->last : "-");
	}
	fputs("\n(>STATE target, !STATE fault injected there)\n", out);
	fprintf(out, "%.*s\n", cols, w->last_line);
	fflush(out);
}

int cpu_watch_verb(struct cpu_ctx *x)
{
	struct watch w = { .x = x };
	int rc;

	w.tty = !x->o->json && isatty(fileno(x->out));
	if (refresh(&w))
		return 1;
	if (w.tty)
		draw(&w);
	else
		snapshot(&w);
	for (;;) {
		struct json_object *ev;

		rc = qmp_client_next_event(x->c, &ev, -1);
		if (rc)
			break;
		on_event(&w, ev);
		if (w.tty) {
			if (ends_operation(ev))
				refresh(&w);
			draw(&w);
		}
		json_object_put(ev);
	}
	json_object_put(w.table[0]);
	json_object_put(w.table[1]);
	free(w.cpu);
	if (rc == -ECONNRESET) {
		cpu_verb_error(x, "cpu watch: the VM closed the connection");
		return 0;
	}
	cpu_verb_error(x, "cpu watch: %s", strerror(-rc));
	return 1;
}
