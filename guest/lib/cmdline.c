// SPDX-License-Identifier: GPL-2.0-only
/* Parsing the guest command line; see cmdline.h for the tokens. */
#include "cmdline.h"
#include "fuzz.h"
#include "printf.h"

struct cmdline cmdline;

static bool parse_uint(const char *s, size_t n, unsigned int *v)
{
	unsigned int r = 0;

	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || r > 100000)
			return false;
		r = r * 10 + (unsigned int)(s[i] - '0');
	}
	*v = r;
	return true;
}

static bool parse_fault(const char *s, size_t n, bool up)
{
	struct cmdline_fault *f;
	size_t at;

	if (cmdline.nr_faults >= CMDLINE_MAX_FAULTS)
		return false;
	/* The last '@': state names contain ':' but never '@'. */
	for (at = n; at > 0 && s[at - 1] != '@'; at--)
		;
	if (at < 2 || at - 1 >= CMDLINE_STATE_MAX)
		return false;
	f = &cmdline.faults[cmdline.nr_faults];
	if (!parse_uint(s + at, n - at, &f->cpu))
		return false;
	memcpy(f->state, s, at - 1);
	f->state[at - 1] = '\0';
	f->up = up;
	cmdline.nr_faults++;
	return true;
}

static bool token_is(const char *t, size_t n, const char *word)
{
	return strlen(word) == n && !strncmp(t, word, n);
}

static bool token_prefix(const char *t, size_t n, const char *prefix)
{
	size_t l = strlen(prefix);

	return n > l && !strncmp(t, prefix, l);
}

void cmdline_parse(const char *s)
{
	while (*s) {
		const char *t;
		size_t n;
		bool ok = true;

		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		for (t = s; *s && *s != ' ' && *s != '\t' && *s != '\n'; s++)
			;
		n = (size_t)(s - t);
		if (token_is(t, n, "exit"))
			cmdline.exit = true;
		else if (token_is(t, n, "selftest"))
			cmdline.selftest = true;
		else if (token_is(t, n, "trace"))
			cmdline.trace = cmdline.verbose = true;
		else if (token_is(t, n, "verbose"))
			cmdline.verbose = true;
		else if (token_is(t, n, "serial-bringup"))
			cmdline.serial_bringup = true;
		else if (token_is(t, n, "nofdt"))
			cmdline.nofdt = true;
		else if (token_is(t, n, "crash"))
			cmdline.crash = true;
		else if (token_is(t, n, "crash-ap"))
			cmdline.crash_ap = true;
		else if (token_is(t, n, "pwrbtn=poweroff"))
			cmdline.pwrbtn = CMDLINE_PWRBTN_POWEROFF;
		else if (token_is(t, n, "pwrbtn=reboot"))
			cmdline.pwrbtn = CMDLINE_PWRBTN_REBOOT;
		else if (token_is(t, n, "pwrbtn=triple-fault"))
			cmdline.pwrbtn = CMDLINE_PWRBTN_TRIPLE_FAULT;
		else if (token_is(t, n, "pwrbtn=ignore"))
			cmdline.pwrbtn = CMDLINE_PWRBTN_IGNORE;
		else if (token_is(t, n, "pwrbtn=eject"))
			cmdline.pwrbtn = CMDLINE_PWRBTN_EJECT;
		else if (token_is(t, n, "ignore-hotplug"))
			cmdline.ignore_hotplug = true;
		else if (token_is(t, n, "fuzz-regs"))
			cmdline.fuzz_regs = FUZZ_DEFAULT_ITERATIONS;
		else if (token_prefix(t, n, "fuzz-regs="))
			ok = parse_uint(t + 10, n - 10, &cmdline.fuzz_regs);
		else if (token_prefix(t, n, "fail="))
			ok = parse_fault(t + 5, n - 5, false);
		else if (token_prefix(t, n, "fail-up="))
			ok = parse_fault(t + 8, n - 8, true);
		else
			printk("cmdline: ignoring '%.*s'\n", (int)n, t);
		if (!ok) {
			printk("cmdline: bad token '%.*s'\n", (int)n, t);
			cmdline.nr_bad++;
		}
	}
}
