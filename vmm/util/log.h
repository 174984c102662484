/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Diagnostics for the VMM.  Messages follow "hotvm: <what is wrong>: <why>;
 * <what to do>" and go to stderr, so stdout stays the guest's console.
 */
#ifndef HOTVM_LOG_H
#define HOTVM_LOG_H

#include <stdio.h>

#define pr_err(fmt, ...) fprintf(stderr, "hotvm: " fmt "\n", ##__VA_ARGS__)

#endif
