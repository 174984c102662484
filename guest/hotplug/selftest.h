/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GUEST_SELFTEST_H
#define GUEST_SELFTEST_H

/*
 * Offline and online every AP through the table, with the command line's
 * faults injected, checking the table's consistency after every operation.
 * Returns the number of failed checks (0: all consistent).
 */
int selftest_run(void);

#endif
