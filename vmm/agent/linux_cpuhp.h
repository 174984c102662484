/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Linux's own cpuhp table as Linux prints it, parsed strictly: the state
 * list (/sys/devices/system/cpu/hotplug/states, lines "N: name") and the
 * lines of the trace buffer for the cpuhp:cpuhp_enter, cpuhp_exit and
 * cpuhp_multi_enter events and hotvm's own trace_marker lines
 * (docs/design.md §6.7).  Both come from the guest: every size, count,
 * number and name is bounded, and anything else is refused, never
 * guessed at.  No agent, no locks: the callers fetch the text.
 */
#ifndef HOTVM_LINUX_CPUHP_H
#define HOTVM_LINUX_CPUHP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most text either file may have: Linux 6.1's list is about 2 KiB. */
#define LX_STATES_TEXT_MAX (64u << 10)
/* States (Linux 6.1 lists 66; CPUHP_ONLINE is below 300). */
#define LX_STATES_MAX 512
/* A state's number is below this; Linux's enum is far smaller. */
#define LX_STATE_NUM_MAX 1024
/* A state's or a callback's name, with its NUL. */
#define LX_NAME_MAX 64
/* Linux CPU numbers in a trace line. */
#define LX_CPU_MAX 8192

struct lx_state {
	int num;
	char name[LX_NAME_MAX];
};

struct lx_states {
	unsigned int n;
	struct lx_state s[LX_STATES_MAX];
};

/*
 * Parses the state list: every line "N: name", numbers strictly rising
 * in [0, LX_STATE_NUM_MAX), names of printable ASCII without leading or
 * trailing blanks, 1..LX_NAME_MAX-1 long, at most LX_STATES_MAX lines and
 * LX_STATES_TEXT_MAX bytes.  Returns 0, or -EPROTO with @out->n = 0 and
 * the first bad line's number (from 1) in *bad_line (may be NULL).
 */
int lx_states_parse(const char *text, size_t len, struct lx_states *out,
		    unsigned int *bad_line);
/* The name of state @num, or NULL if the list has none. */
const char *lx_states_name(const struct lx_states *st, int num);
/* The number of the state called @name, or -1 if the list has none. */
int lx_states_num(const struct lx_states *st, const char *name);

enum lx_event_kind {
	LX_EV_ENTER, /* cpuhp_enter: a state's single callback starts */
	LX_EV_MULTI, /* cpuhp_multi_enter: one instance's callback */
	LX_EV_EXIT,  /* cpuhp_exit: the callback returned */
	LX_EV_MARK,  /* tracing_mark_write: "hotvm-mark N" */
};

/* One line of the trace buffer. */
struct lx_event {
	enum lx_event_kind kind;
	uint64_t ns;	      /* the trace clock's time */
	unsigned int cpu;     /* the CPU being walked (enter/exit) */
	int target;	      /* enter: where the walk goes */
	int state;	      /* exit: where the CPU is */
	int step;	      /* enter/exit: the state whose callback ran */
	int ret;	      /* exit */
	char fn[LX_NAME_MAX]; /* enter: the callback's symbol */
	uint64_t mark;	      /* mark: its number */
};

/*
 * Parses one line (without its newline) of the trace buffer in Linux's
 * default format ("task-pid [cpu] flags secs.usecs: event: fields").
 * Returns 0 with @ev filled, 1 for a line that is not an event (the
 * header's "#" lines, blank, or another event than these), or -EPROTO for
 * one of these events whose fields are not exactly as Linux prints them.
 */
int lx_trace_line(const char *line, size_t len, struct lx_event *ev);

#endif
