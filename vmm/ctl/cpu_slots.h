/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The vCPU slots of query-hotpluggable-cpus, as QEMU and hotvm both reply:
 * each slot's topology props, its QOM path when a vCPU is plugged, and the
 * query-cpus-fast entry of that path.  Shared by the verbs that plug and
 * unplug and by the printers that list, so both read a slot alike.
 */
#ifndef HOTVM_CPU_SLOTS_H
#define HOTVM_CPU_SLOTS_H

#include <stddef.h>

struct json_object;

/* Where device_add puts a device with an id: its QOM path's prefix. */
#define CPU_SLOTS_PERIPHERAL "/machine/peripheral/"

/* The slot's integer prop key (socket-id, ...), or -1. */
long long cpu_slots_prop(struct json_object *slot, const char *key);
/*
 * The reply's slots sorted by topology (QEMU lists them highest first), as
 * a new array of borrowed pointers; NULL and *n 0 when there are none.
 */
struct json_object **cpu_slots_sorted(struct json_object *reply, size_t *n);
/* The slot of socket-id cpu, or NULL. */
struct json_object *cpu_slots_of(struct json_object **slots, size_t n,
				 long cpu);
/* The device id of a QOM path under CPU_SLOTS_PERIPHERAL, else NULL. */
const char *cpu_slots_qom_id(struct json_object *qom);
/* The query-cpus-fast entry whose qom-path is qom, or NULL. */
struct json_object *cpu_slots_fast(struct json_object *fast, const char *qom);

#endif
