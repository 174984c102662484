/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tiny guest's cpuhp table, by number and name, shared with the VMM so
 * that the host can show the guest's table and name the states the guest
 * reports through ABI_CPUHP_CMD_GUEST_STATE.  Freestanding.
 */
#ifndef HOTVM_GUEST_STATES_H
#define HOTVM_GUEST_STATES_H

enum guest_state {
	GUEST_OFFLINE,
	GUEST_PERCPU_PREPARE,
	GUEST_SMPBOOT_PREPARE,
	GUEST_KICK_AP,
	GUEST_BRINGUP_CPU,
	GUEST_AP_LAPIC,
	GUEST_AP_TIMER,
	GUEST_AP_WORK, /* first state after the AP-starting section */
	GUEST_AP_DYN_0,
	GUEST_AP_DYN_1,
	GUEST_ONLINE,
	GUEST_NR_STATES,
};

/* Names as the guest's table gives them; NULL for the free dynamic slots. */
#define GUEST_STATE_NAMES                                                      \
	{                                                                      \
		[GUEST_OFFLINE] = "offline",                                   \
		[GUEST_PERCPU_PREPARE] = "percpu:prepare",                     \
		[GUEST_SMPBOOT_PREPARE] = "smpboot:prepare",                   \
		[GUEST_KICK_AP] = "bringup:kick-ap",                           \
		[GUEST_BRINGUP_CPU] = "bringup:cpu",                           \
		[GUEST_AP_LAPIC] = "ap:starting-lapic",                        \
		[GUEST_AP_TIMER] = "ap:starting-timer",                        \
		[GUEST_AP_WORK] = "ap:online-work", [GUEST_ONLINE] = "online", \
	}

#endif
