/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * README.md's generated parts: the text between a line starting
 * "<!-- NAME: begin" and the line "<!-- NAME: end -->" is rendered by the
 * code that owns the list (the QMP command table, `hotvm run`'s option
 * table), and a test holds README to it.  The file is named by the
 * environment variable HOTVM_README (check.h's main takes no arguments).
 */
#ifndef HOTVM_TESTS_README_SECTION_H
#define HOTVM_TESTS_README_SECTION_H

#include <stdbool.h>

/*
 * True when README's section NAME is exactly want (whole lines, each
 * ending in a newline).  Otherwise prints the lines that differ and the
 * text to paste as TAP comments, and returns false; with
 * HOTVM_README_UPDATE=1 in the environment it writes want into README
 * instead and returns true.
 */
bool readme_section_check(const char *name, const char *want);

#endif
