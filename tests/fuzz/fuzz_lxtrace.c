// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes the parsers of what Linux prints of its cpuhp table
 * (vmm/agent/linux_cpuhp.c), which read guest text: every line of the
 * input as a trace line, and the whole input as a state list.
 *
 * Contracts checked (linux_cpuhp.h): a parsed event has its numbers in
 * range and a printable, terminated callback name; a parsed list is
 * rising, in range, with printable names, and a refused one is empty.
 */
#include <errno.h>

#include "fuzz.h"
#include "linux_cpuhp.h"

static bool printable(const char *s, bool blanks)
{
	size_t n = strnlen(s, LX_NAME_MAX);

	if (!n || n == LX_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < (blanks ? 0x20 : 0x21) || s[i] > 0x7e)
			return false;
	return true;
}

static void check_line(const char *s, size_t len)
{
	struct lx_event ev;
	int rc = lx_trace_line(s, len, &ev);

	FUZZ_ASSERT(rc == 0 || rc == 1 || rc == -EPROTO);
	if (rc || ev.kind == LX_EV_MARK)
		return;
	FUZZ_ASSERT(ev.cpu < LX_CPU_MAX);
	FUZZ_ASSERT(ev.step >= 0 && ev.step < LX_STATE_NUM_MAX);
	if (ev.kind == LX_EV_EXIT)
		FUZZ_ASSERT(ev.state > -LX_STATE_NUM_MAX &&
			    ev.state < LX_STATE_NUM_MAX);
	else
		FUZZ_ASSERT(printable(ev.fn, false));
}

static void check_states(const char *s, size_t len)
{
	static struct lx_states st;
	unsigned int bad = 0;
	int rc = lx_states_parse(s, len, &st, &bad);

	if (rc) {
		FUZZ_ASSERT(rc == -EPROTO && st.n == 0 && bad >= 1);
		return;
	}
	FUZZ_ASSERT(st.n >= 1 && st.n <= LX_STATES_MAX);
	for (unsigned int i = 0; i < st.n; i++) {
		FUZZ_ASSERT(st.s[i].num >= 0 && st.s[i].num < LX_STATE_NUM_MAX);
		FUZZ_ASSERT(!i || st.s[i].num > st.s[i - 1].num);
		FUZZ_ASSERT(printable(st.s[i].name, true));
		FUZZ_ASSERT(lx_states_name(&st, st.s[i].num) == st.s[i].name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;

		check_line(s, (size_t)(e - s));
		s = nl ? nl + 1 : end;
	}
	check_states((const char *)data, size);
	return 0;
}
