/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest command line (from start_info), space-separated tokens:
 *
 *   exit                 after "ready", exit with ABI_EXIT_SUCCESS
 *   selftest             offline and online every AP through the table,
 *                        check the bookkeeping after every operation, exit
 *   fail=STATE@CPU       inject a fault at STATE (name or number) into the
 *                        self-test's offline operation of CPU; may repeat:
 *                        each failed operation is retried with the next one
 *   fail-up=STATE@CPU    the same, into the online operation
 *   trace                print every cpuhp step (implies verbose)
 *   verbose              a line per CPU a hotplug event took up or down
 *                        (each console byte is an exit: off by default)
 *   serial-bringup       bring the boot CPUs up one by one, not in parallel
 *   nofdt                ignore the FDT, use the ACPI MADT
 *   crash, crash-ap      after "ready", take a page fault on the boot CPU
 *                        or on CPU 1: tests the exception path (status 5)
 *   pwrbtn=ACTION        what a press of the power button (the GED's
 *                        power-button event) does: poweroff (default:
 *                        ACPI S5), reboot (the FADT's reset register),
 *                        triple-fault (an exception with no IDT), ignore,
 *                        eject (the highest online AP goes down and is
 *                        ejected unasked, as Linux's sysfs eject)
 *   ignore-hotplug       leave the GED interrupt masked: the host's hotplug
 *                        requests time out (and roll back)
 *   fuzz-regs[=N]        after "ready", N (default 20000) random accesses
 *                        to the GED and register block, between hotplug
 *                        events; then "fuzz: done" and normal service
 */
#ifndef GUEST_CMDLINE_H
#define GUEST_CMDLINE_H

#include "kernel.h"

#define CMDLINE_MAX_FAULTS 128
#define CMDLINE_STATE_MAX  48

struct cmdline_fault {
	char state[CMDLINE_STATE_MAX]; /* as written: resolved by the table */
	unsigned int cpu;
	bool up; /* fail-up= */
	bool used;
};

struct cmdline {
	bool exit;
	bool selftest;
	bool trace;
	bool verbose;
	bool serial_bringup;
	bool nofdt;
	bool crash;
	bool crash_ap;
	enum cmdline_pwrbtn {
		CMDLINE_PWRBTN_POWEROFF,
		CMDLINE_PWRBTN_REBOOT,
		CMDLINE_PWRBTN_TRIPLE_FAULT,
		CMDLINE_PWRBTN_IGNORE,
		CMDLINE_PWRBTN_EJECT,
	} pwrbtn;
	bool ignore_hotplug;
	unsigned int fuzz_regs; /* iterations, 0: off */
	unsigned int nr_faults;
	struct cmdline_fault faults[CMDLINE_MAX_FAULTS];
	unsigned int nr_bad; /* tokens not understood */
};

extern struct cmdline cmdline;

void cmdline_parse(const char *s);

#endif
