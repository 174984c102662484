// SPDX-License-Identifier: GPL-2.0-only
#include "check.h"

int check_run(const struct check_case *cases, size_t n)
{
	int failed = 0;

	printf("1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		int before = check_failures;

		cases[i].fn();
		if (check_failures != before)
			failed++;
		printf("%s %zu - %s\n",
		       check_failures != before ? "not ok" : "ok", i + 1,
		       cases[i].name);
	}
	fflush(stdout);
	return failed ? 1 : 0;
}
