// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-CPU areas (percpu.h), beneath every file that reads them: the
 * LAPIC's, SMP's and the hotplug drivers'.
 */
#include "percpu.h"

struct percpu percpu[GUEST_MAX_CPUS];
