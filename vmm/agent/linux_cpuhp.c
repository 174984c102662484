// SPDX-License-Identifier: GPL-2.0-only
/*
 * Strict parsers for what Linux prints of its cpuhp table (linux_cpuhp.h).
 * The formats are Linux's own: kernel/cpu.c's states_show() ("%3d: %s\n")
 * and include/trace/events/cpuhp.h's TP_printk()s, behind the trace
 * buffer's usual "task-pid [cpu] flags secs.usecs: event: " prefix.
 * Nothing is taken on trust: numbers are bounded before they are used,
 * names must be printable and short, and a line that is almost right is
 * refused, not repaired.
 */
#include <errno.h>
#include <string.h>

#include "linux_cpuhp.h"

/* Reads a decimal of at most @digits digits below @max; false if none. */
static bool take_uint(const char **p, const char *end, unsigned int digits,
		      uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;
	unsigned int k = 0;

	while (s < end && *s >= '0' && *s <= '9') {
		if (++k > digits)
			return false;
		n = n * 10 + (uint64_t)(*s++ - '0');
	}
	if (!k || n >= max)
		return false;
	*p = s;
	*v = n;
	return true;
}

/* A signed decimal in (-max, max). */
static bool take_int(const char **p, const char *end, unsigned int digits,
		     int max, int *v)
{
	bool neg = *p < end && **p == '-';
	uint64_t n;

	if (neg)
		(*p)++;
	if (!take_uint(p, end, digits, (uint64_t)max, &n))
		return false;
	*v = neg ? -(int)n : (int)n;
	return true;
}

/* One or more blanks (Linux pads its numbers with %3d). */
static bool take_blanks(const char **p, const char *end)
{
	const char *s = *p;

	while (s < end && *s == ' ')
		s++;
	if (s == *p)
		return false;
	*p = s;
	return true;
}

static void skip_blanks(const char **p, const char *end)
{
	while (*p < end && **p == ' ')
		(*p)++;
}

static bool take_word(const char **p, const char *end, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(end - *p) < n || memcmp(*p, w, n))
		return false;
	*p += n;
	return true;
}

/* Copies [s, e) as a name: printable ASCII, 1..LX_NAME_MAX-1 bytes. */
static bool take_name(const char *s, const char *e, bool blanks, char *out)
{
	size_t n = (size_t)(e - s);

	if (!n || n >= LX_NAME_MAX || s[0] == ' ' || e[-1] == ' ')
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < (blanks ? 0x20 : 0x21) || s[i] > 0x7e)
			return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

/* "%3d: %s": the state's number and name. */
static bool state_line(const char *s, const char *e, struct lx_state *st)
{
	uint64_t num;

	skip_blanks(&s, e);
	if (!take_uint(&s, e, 4, LX_STATE_NUM_MAX, &num) ||
	    !take_word(&s, e, ": "))
		return false;
	st->num = (int)num;
	return take_name(s, e, true, st->name);
}

int lx_states_parse(const char *text, size_t len, struct lx_states *out,
		    unsigned int *bad_line)
{
	const char *s = text, *end = text + len;
	unsigned int line = 0;

	out->n = 0;
	if (len > LX_STATES_TEXT_MAX)
		goto bad;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;
		struct lx_state *st;

		line++;
		if (out->n == LX_STATES_MAX || memchr(s, '\0', (size_t)(e - s)))
			goto bad;
		st = &out->s[out->n];
		if (!state_line(s, e, st) ||
		    (out->n && st->num <= out->s[out->n - 1].num))
			goto bad;
		out->n++;
		s = nl ? nl + 1 : end;
	}
	if (out->n)
		return 0;
	line = 1; /* an empty list is no list */
bad:
	out->n = 0;
	if (bad_line)
		*bad_line = line;
	return -EPROTO;
}

int lx_states_num(const struct lx_states *st, const char *name)
{
	for (unsigned int i = 0; i < st->n; i++)
		if (!strcmp(st->s[i].name, name))
			return st->s[i].num;
	return -1;
}

const char *lx_states_name(const struct lx_states *st, int num)
{
	unsigned int lo = 0, hi = st->n;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (st->s[mid].num == num)
			return st->s[mid].name;
		if (st->s[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* "cpu: %04u target: %3d step: %3d (%ps)": both enter events. */
static bool enter_fields(const char *s, const char *e, struct lx_event *ev)
{
	uint64_t cpu;

	if (!take_word(&s, e, "cpu: ") ||
	    !take_uint(&s, e, 5, LX_CPU_MAX, &cpu) ||
	    !take_word(&s, e, " target:") || !take_blanks(&s, e) ||
	    !take_int(&s, e, 4, LX_STATE_NUM_MAX, &ev->target) ||
	    !take_word(&s, e, " step:") || !take_blanks(&s, e) ||
	    !take_int(&s, e, 4, LX_STATE_NUM_MAX, &ev->step) || ev->step < 0 ||
	    !take_word(&s, e, " (") || e - s < 2 || e[-1] != ')')
		return false;
	ev->cpu = (unsigned int)cpu;
	return take_name(s, e - 1, false, ev->fn);
}

/* " cpu: %04u  state: %3d step: %3d ret: %d". */
static bool exit_fields(const char *s, const char *e, struct lx_event *ev)
{
	uint64_t cpu;

	if (!take_word(&s, e, " cpu: ") ||
	    !take_uint(&s, e, 5, LX_CPU_MAX, &cpu) ||
	    !take_word(&s, e, "  state:") || !take_blanks(&s, e) ||
	    !take_int(&s, e, 4, LX_STATE_NUM_MAX, &ev->state) ||
	    !take_word(&s, e, " step:") || !take_blanks(&s, e) ||
	    !take_int(&s, e, 4, LX_STATE_NUM_MAX, &ev->step) || ev->step < 0 ||
	    !take_word(&s, e, " ret: ") ||
	    !take_int(&s, e, 10, 1 << 30, &ev->ret) || s != e)
		return false;
	ev->cpu = (unsigned int)cpu;
	return true;
}

/*
 * "hotvm-mark N": the marks hotvm writes to align the clocks (0); another
 * writer's mark is not ours (1).
 */
static int mark_fields(const char *s, const char *e, struct lx_event *ev)
{
	while (e > s && e[-1] == ' ')
		e--; /* trace_marker keeps what was written */
	if (!take_word(&s, e, "hotvm-mark "))
		return 1;
	return take_uint(&s, e, 19, UINT64_MAX, &ev->mark) && s == e ? 0
								     : -EPROTO;
}

static const struct {
	const char *name;
	enum lx_event_kind kind;
} lx_events[] = {
	{ ": cpuhp_enter: ", LX_EV_ENTER },
	{ ": cpuhp_multi_enter: ", LX_EV_MULTI },
	{ ": cpuhp_exit: ", LX_EV_EXIT },
	{ ": tracing_mark_write: ", LX_EV_MARK },
};

/*
 * " secs.usecs" ending at @e: the trace clock (the default "local",
 * nanoseconds printed as seconds with six decimals).
 */
static bool stamp_before(const char *line, const char *e, uint64_t *ns)
{
	const char *s = e;
	uint64_t sec, usec;

	while (s > line && s[-1] != ' ')
		s--;
	if (s == line || e - s < 8 || e[-7] != '.')
		return false;
	if (!take_uint(&s, e - 7, 12, UINT64_MAX / 1000000000ull, &sec) ||
	    s != e - 7)
		return false;
	s++;
	if (!take_uint(&s, e, 6, 1000000, &usec) || s != e)
		return false;
	*ns = sec * 1000000000ull + usec * 1000;
	return true;
}

/* Where the event's name begins, after a valid timestamp; else NULL. */
static const char *find_event(const char *line, const char *end,
			      const char *name)
{
	size_t n = strlen(name);

	for (const char *p = line; (size_t)(end - p) >= n; p++) {
		p = memchr(p, name[0], (size_t)(end - p) - n + 1);
		if (!p)
			return NULL;
		if (!memcmp(p, name, n))
			return p;
	}
	return NULL;
}

int lx_trace_line(const char *line, size_t len, struct lx_event *ev)
{
	const char *end = line + len, *s = line;

	*ev = (struct lx_event){ 0 };
	skip_blanks(&s, end);
	if (s == end || *s == '#')
		return 1;
	if (memchr(line, '\0', len))
		return -EPROTO;
	for (size_t i = 0; i < sizeof(lx_events) / sizeof(lx_events[0]); i++) {
		const char *p = find_event(line, end, lx_events[i].name);
		const char *f;
		bool ok;

		if (!p)
			continue;
		ev->kind = lx_events[i].kind;
		if (!stamp_before(line, p, &ev->ns))
			return -EPROTO;
		f = p + strlen(lx_events[i].name);
		if (ev->kind == LX_EV_EXIT)
			ok = exit_fields(f, end, ev);
		else if (ev->kind == LX_EV_MARK)
			return mark_fields(f, end, ev);
		else
			ok = enter_fields(f, end, ev);
		return ok ? 0 : -EPROTO;
	}
	/* One of ours without the buffer's prefix is broken, not foreign. */
	return find_event(line, end, "cpuhp_") ? -EPROTO : 1;
}
