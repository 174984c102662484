// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm run`'s parser: each argument is looked up in the option table
 * (cli_options.c) and its value handed to that row's function.  Hand-rolled
 * rather than getopt_long so that it is reentrant and unit tests can call it
 * repeatedly.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "log.h"

/*
 * The row whose name or alias argument a spells, before any "=value";
 * *eq is set to the '=' or NULL.
 */
static const struct cli_opt *find_opt(const char *a, const char **eq)
{
	size_t n, len;
	const struct cli_opt *t = cli_run_options(&n);

	*eq = strchr(a, '=');
	len = *eq ? (size_t)(*eq - a) : strlen(a);
	for (size_t i = 0; i < n; i++) {
		if (strlen(t[i].name) == len && !strncmp(a, t[i].name, len))
			return &t[i];
		if (t[i].alias && strlen(t[i].alias) == len &&
		    !strncmp(a, t[i].alias, len))
			return &t[i];
	}
	return NULL;
}

int cli_parse_run(int argc, char **argv, struct cli_run_opts *o)
{
	*o = (struct cli_run_opts){ 0 };
	board_config_init(&o->board);
	for (int i = 1; i < argc; i++) {
		const char *eq, *v = NULL;
		const struct cli_opt *opt = find_opt(argv[i], &eq);
		int ret;

		/* An option that takes no value takes no "=value" either. */
		if (!opt || (eq && !opt->arg)) {
			pr_err("unknown argument '%s'; see 'hotvm run --help'",
			       argv[i]);
			return -EINVAL;
		}
		if (eq) {
			v = eq + 1;
		} else if (opt->arg) {
			if (i + 1 >= argc) {
				pr_err("option %s needs a value; see 'hotvm "
				       "run --help'",
				       opt->name);
				return -EINVAL;
			}
			v = argv[++i];
		}
		ret = opt->parse(o, v);
		if (ret == CLI_OPT_STOP)
			return 0;
		if (ret)
			return -EINVAL;
	}
	return 0;
}
