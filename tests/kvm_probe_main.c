// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvm-probe [--real-mode]: check_kvm_missing() for the shell tests.  Prints
 * why /dev/kvm cannot run the test and exits 1, or exits 0 silently.
 */
#include <stdbool.h>
#include <string.h>

#include "check.h"

int check_failures;

int main(int argc, char **argv)
{
	const char *why;

	why = check_kvm_missing(argc > 1 && !strcmp(argv[1], "--real-mode"));
	if (!why)
		return 0;
	printf("%s\n", why);
	return 1;
}
