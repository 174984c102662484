// SPDX-License-Identifier: GPL-2.0-only
/*
 * The parsers of Linux's cpuhp state list and trace lines
 * (vmm/agent/linux_cpuhp.c) on lines as Debian's 6.1 kernel prints
 * them, and on what a broken or hostile guest could print instead: each
 * malformed case must be refused, so a parser that stops checking fails
 * here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "linux_cpuhp.h"

static struct lx_states st;

static int states(const char *text, unsigned int *bad)
{
	return lx_states_parse(text, strlen(text), &st, bad);
}

static void test_states_ok(void)
{
	unsigned int bad = 0;

	CHECK_EQ(states("  0: offline\n  1: threads:prepare\n 84: "
			"x86/cpu:starting\n238: online\n",
			&bad),
		 0);
	CHECK_EQ(st.n, 4);
	CHECK_EQ(st.s[2].num, 84);
	CHECK_STREQ(st.s[2].name, "x86/cpu:starting");
	CHECK_STREQ(lx_states_name(&st, 238), "online");
	CHECK_STREQ(lx_states_name(&st, 0), "offline");
	CHECK(!lx_states_name(&st, 85));
	CHECK_EQ(lx_states_num(&st, "x86/cpu:starting"), 84);
	CHECK_EQ(lx_states_num(&st, "x86/cpu"), -1);
	/* Without a final newline, and a name with a blank inside. */
	CHECK_EQ(states("0: offline\n5: a b", NULL), 0);
	CHECK_EQ(st.n, 2);
}

static void test_states_bad(void)
{
	static const struct {
		const char *text;
		unsigned int line;
	} bad[] = {
		{ "", 1 },			    /* empty */
		{ "0: offline\n\n1: x\n", 2 },	    /* blank line */
		{ "0 offline\n", 1 },		    /* no colon */
		{ "0:offline\n", 1 },		    /* no blank */
		{ "0: \n", 1 },			    /* no name */
		{ "0:  x\n", 1 },		    /* leading blank */
		{ "0: x \n", 1 },		    /* trailing blank */
		{ "-1: x\n", 1 },		    /* negative */
		{ "1024: x\n", 1 },		    /* out of range */
		{ "99999999999999999999: x\n", 1 }, /* overflow */
		{ "1: a\n1: b\n", 2 },		    /* not rising */
		{ "2: a\n1: b\n", 2 },		    /* going back */
		{ "0: a\x01z\n", 1 },		    /* control char */
		{ "0: caf\xc3\xa9\n", 1 },	    /* not ASCII */
		{ "0: x\n1: y\r\n", 2 },	    /* CR */
		{ "0: 0123456789012345678901234567890123456789012345678901"
		  "234567890123\n",
		  1 }, /* 64 bytes: too long */
	};
	unsigned int line;
	char big[LX_STATES_MAX * 8 + 64];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		line = 0;
		st.n = 7;
		CHECK_EQ(states(bad[i].text, &line), -EPROTO);
		CHECK_EQ(st.n, 0);
		if (line != bad[i].line)
			printf("# case %zu: bad line %u, expected %u\n", i,
			       line, bad[i].line);
		CHECK_EQ(line, bad[i].line);
	}
	/* A NUL inside, which strlen() would hide. */
	CHECK_EQ(lx_states_parse("0: a\0b\n", 7, &st, NULL), -EPROTO);
	/* More states than LX_STATES_MAX (numbers stay in range). */
	for (int i = 0; i <= LX_STATES_MAX; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%d: s\n", i);
	CHECK_EQ(lx_states_parse(big, n, &st, &line), -EPROTO);
	CHECK_EQ(line, LX_STATES_MAX + 1);
	/* More text than LX_STATES_TEXT_MAX. */
	CHECK_EQ(lx_states_parse(big, LX_STATES_TEXT_MAX + 1, &st, NULL),
		 -EPROTO);
}

static int line(const char *s, struct lx_event *ev)
{
	return lx_trace_line(s, strlen(s), ev);
}

static void test_trace_ok(void)
{
	struct lx_event ev;

	CHECK_EQ(line("          <idle>-0       [001] d..1.    33.447133: "
		      "cpuhp_enter: cpu: 0001 target: 238 step:  84 "
		      "(x86_pmu_starting_cpu)",
		      &ev),
		 0);
	CHECK_EQ(ev.kind, LX_EV_ENTER);
	CHECK_EQ(ev.cpu, 1);
	CHECK_EQ(ev.target, 238);
	CHECK_EQ(ev.step, 84);
	CHECK_STREQ(ev.fn, "x86_pmu_starting_cpu");
	CHECK_EQ(ev.ns, 33447133000ull);
	CHECK_EQ(line("       cpuhp/1-20      [001] .....    33.447200: "
		      "cpuhp_multi_enter: cpu: 0001 target: 238 step: 150 "
		      "(blk_mq_hctx_notify_online)",
		      &ev),
		 0);
	CHECK_EQ(ev.kind, LX_EV_MULTI);
	CHECK_EQ(ev.step, 150);
	CHECK_EQ(line("          <idle>-0       [001] d..1.    33.447140: "
		      "cpuhp_exit:  cpu: 0001  state:  84 step:  84 ret: 0",
		      &ev),
		 0);
	CHECK_EQ(ev.kind, LX_EV_EXIT);
	CHECK_EQ(ev.state, 84);
	CHECK_EQ(ev.ret, 0);
	CHECK_EQ(line("  sh-93  [000] .....  120.000001: cpuhp_exit:  cpu: "
		      "0002  state:   3 step:   4 ret: -16",
		      &ev),
		 0);
	CHECK_EQ(ev.ret, -16);
	CHECK_EQ(ev.cpu, 2);
	/* A removal: the target below the step. */
	CHECK_EQ(line("  sh-93  [000] .....  5.000000: cpuhp_enter: cpu: 0002 "
		      "target:   0 step: 238 (0xffffffff81000000)",
		      &ev),
		 0);
	CHECK_EQ(ev.target, 0);
	CHECK_EQ(line("  qemu-ga-77 [000] .....  9.500000: tracing_mark_write: "
		      "hotvm-mark 42",
		      &ev),
		 0);
	CHECK_EQ(ev.kind, LX_EV_MARK);
	CHECK_EQ(ev.mark, 42);
	CHECK_EQ(ev.ns, 9500000000ull);
	/* Not an event of these: skipped, not refused. */
	CHECK_EQ(line("# tracer: nop", &ev), 1);
	CHECK_EQ(line("", &ev), 1);
	CHECK_EQ(line("   ", &ev), 1);
	CHECK_EQ(line("  sh-1 [000] ..... 1.000000: sched_switch: x", &ev), 1);
	CHECK_EQ(line("  sh-1 [000] ..... 1.000000: tracing_mark_write: hi",
		      &ev),
		 1);
}

static void test_trace_bad(void)
{
	static const char *const bad[] = {
		/* timestamps */
		"  x-1 [001] ..... 33.44713: cpuhp_exit:  cpu: 0001  state:  "
		"1 step:   1 ret: 0",
		"  x-1 [001] ..... 33: cpuhp_exit:  cpu: 0001  state:   1 "
		"step:   1 ret: 0",
		"  x-1 [001] ..... .447133: cpuhp_exit:  cpu: 0001  state:   1 "
		"step:   1 ret: 0",
		"  x-1 [001] ..... 3a.447133: cpuhp_exit:  cpu: 0001  state:  "
		" 1 step:   1 ret: 0",
		"cpuhp_exit:  cpu: 0001  state:   1 step:   1 ret: 0",
		/* numbers out of range or missing */
		"  x-1 [001] ..... 1.000000: cpuhp_exit:  cpu: 8192  state:   "
		"1 step:   1 ret: 0",
		"  x-1 [001] ..... 1.000000: cpuhp_exit:  cpu: 0001  state: "
		"1024 step:   1 ret: 0",
		"  x-1 [001] ..... 1.000000: cpuhp_exit:  cpu: 0001  state:   "
		"1 step:  -1 ret: 0",
		"  x-1 [001] ..... 1.000000: cpuhp_exit:  cpu: 0001  state:   "
		"1 step:   1 ret: 99999999999",
		"  x-1 [001] ..... 1.000000: cpuhp_exit:  cpu: 0001  state:   "
		"1 step:   1 ret: ",
		"  x-1 [001] ..... 1.000000: cpuhp_exit:  cpu: 0001  state:   "
		"1 step:   1",
		"  x-1 [001] ..... 1.000000: cpuhp_exit:  cpu:  state:   1 "
		"step:   1 ret: 0",
		/* trailing or changed words */
		"  x-1 [001] ..... 1.000000: cpuhp_exit:  cpu: 0001  state:   "
		"1 step:   1 ret: 0 extra",
		"  x-1 [001] ..... 1.000000: cpuhp_exit:  cpu: 0001  stat:   "
		"1 step:   1 ret: 0",
		"  x-1 [001] ..... 1.000000: cpuhp_enter: cpu: 0001 target: "
		"238 step:   1 (a b)",
		"  x-1 [001] ..... 1.000000: cpuhp_enter: cpu: 0001 target: "
		"238 step:   1 ()",
		"  x-1 [001] ..... 1.000000: cpuhp_enter: cpu: 0001 target: "
		"238 step:   1 (fn",
		"  x-1 [001] ..... 1.000000: cpuhp_enter: cpu: 0001 target: "
		"238 step:   1 (fn) x",
		"  x-1 [001] ..... 1.000000: cpuhp_enter: cpu: 0001 target: "
		"238 step:   1 (\x01)",
		"  x-1 [001] ..... 1.000000: cpuhp_enter: cpu: 0001 target: "
		"238 step:   1 (f\xc3\xa9)",
		"  x-1 [001] ..... 1.000000: cpuhp_enter: cpu: 0001 target: "
		"238 step:   1 (0123456789012345678901234567890123456789012345"
		"678901234567890123)",
		"  x-1 [001] ..... 1.000000: cpuhp_multi_enter: cpu: 0001 "
		"target: 238 step:",
		"  x-1 [001] ..... 1.000000: tracing_mark_write: hotvm-mark x",
		"  x-1 [001] ..... 1.000000: tracing_mark_write: hotvm-mark "
		"99999999999999999999",
	};
	struct lx_event ev;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = line(bad[i], &ev);

		if (rc != -EPROTO)
			printf("# case %zu: %d\n", i, rc);
		CHECK_EQ(rc, -EPROTO);
	}
	/* A NUL in the line. */
	CHECK_EQ(lx_trace_line("  x-1 [001] ..... 1.000000: cpuhp_exit:  cpu: "
			       "0001  state:   1 step:   1 ret: 0\0",
			       77, &ev),
		 -EPROTO);
}

int check_failures;

CHECK_MAIN(TEST(test_states_ok), TEST(test_states_bad), TEST(test_trace_ok),
	   TEST(test_trace_bad))
