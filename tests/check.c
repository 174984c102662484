// SPDX-License-Identifier: GPL-2.0-only
#include "check.h"

static const char *skip_why;

void check_skip(const char *why)
{
	skip_why = why;
}

int check_run(const struct check_case *cases, size_t n)
{
	int failed = 0;

	printf("1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		int before = check_failures;

		skip_why = NULL;
		cases[i].fn();
		if (check_failures != before)
			failed++;
		/* A failed check is a failure, skipped or not. */
		if (check_failures != before)
			skip_why = NULL;
		printf("%s %zu - %s%s%s\n",
		       check_failures != before ? "not ok" : "ok", i + 1,
		       cases[i].name, skip_why ? " # SKIP " : "",
		       skip_why ? skip_why : "");
	}
	fflush(stdout);
	return failed ? 1 : 0;
}

int check_run_named(const struct check_case *cases, size_t n,
		    char *const *names, int nnames)
{
	struct check_case *only;
	size_t k = 0;
	int ret;

	if (nnames <= 0)
		return check_run(cases, n);
	only = calloc((size_t)nnames, sizeof(*only));
	if (!only)
		return 1;
	for (int a = 0; a < nnames; a++) {
		size_t i = 0;

		while (i < n && strcmp(names[a], cases[i].name))
			i++;
		if (i == n) {
			printf("Bail out! no case named %s\n", names[a]);
			free(only);
			return 1;
		}
		only[k++] = cases[i];
	}
	ret = check_run(only, k);
	free(only);
	return ret;
}
