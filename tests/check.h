/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Minimal test harness shared by the host unit tests.  Each test binary
 * registers cases with TEST(), prints TAP, and exits nonzero if any check
 * failed, so meson's tap protocol and plain exit codes both see failures.
 */
#ifndef HOTVM_TESTS_CHECK_H
#define HOTVM_TESTS_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct check_case {
	const char *name;
	void (*fn)(void);
};

extern int check_failures;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("# %s:%d: check failed: %s\n", __FILE__,        \
			       __LINE__, #cond);                               \
			check_failures++;                                      \
		}                                                              \
	} while (0)

#define CHECK_EQ(a, b)                                                         \
	do {                                                                   \
		long long check_a_ = (long long)(a);                           \
		long long check_b_ = (long long)(b);                           \
		if (check_a_ != check_b_) {                                    \
			printf("# %s:%d: %s == %lld, expected %s == %lld\n",   \
			       __FILE__, __LINE__, #a, check_a_, #b,           \
			       check_b_);                                      \
			check_failures++;                                      \
		}                                                              \
	} while (0)

#define CHECK_STREQ(a, b)                                                      \
	do {                                                                   \
		const char *check_a_ = (a), *check_b_ = (b);                   \
		if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_)) {    \
			printf("# %s:%d: \"%s\" != \"%s\"\n", __FILE__,        \
			       __LINE__, check_a_ ? check_a_ : "(null)",       \
			       check_b_ ? check_b_ : "(null)");                \
			check_failures++;                                      \
		}                                                              \
	} while (0)

/* Runs every case, one TAP line each; returns the process exit status. */
int check_run(const struct check_case *cases, size_t n);
/*
 * Runs the cases named in @names (all of them if @nnames is 0), so that a
 * slow suite can be split over several runs; an unknown name fails.
 */
int check_run_named(const struct check_case *cases, size_t n,
		    char *const *names, int nnames);

/*
 * Marks the running case skipped, with @why as its TAP reason: the case
 * returns at once and must have checked nothing.
 */
void check_skip(const char *why);

/*
 * Why this machine's /dev/kvm cannot run a VM test, or NULL when it can;
 * @real_mode: the test needs real mode (a triple fault, a reset) too.
 * tests/kvm_probe.c; kvm-probe is the same for shell tests.
 */
const char *check_kvm_missing(bool real_mode);

#define CHECK_MAIN(...)                                                        \
	int check_failures;                                                    \
	int main(void)                                                         \
	{                                                                      \
		static const struct check_case cases[] = { __VA_ARGS__ };      \
		return check_run(cases, sizeof(cases) / sizeof(cases[0]));     \
	}

#define TEST(fn)                                                               \
	{                                                                      \
#fn, fn                                                        \
	}

#endif
