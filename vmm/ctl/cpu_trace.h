/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `hotvm cpu trace`: the timeline of one hotplug operation, host and guest
 * on two lanes of one time axis, drawn as a text waterfall and as SVG.
 *
 * The timeline is itself JSON (what --json prints, and what both pictures
 * are drawn from): {"cpu", "operation", "result", "error"?, "total-us"
 * (the time axis: from the request to the reply, on the client's clock),
 * "vmm-us"? (the VMM's own figure), "source": "events"|"reply",
 * "events-lost"?, "bars": [{"lane":
 * "host"|"guest", "kind": "state"|"stage", "name", "state"?, "direction",
 * "rollback", "injected", "ret", "mark": "ok"|"failed"|"rollback",
 * "start-us", "end-us", "us"}...], "marks": [{"lane", "name", "at-us"}...]}.
 * A state's bar ends when the VMM notified it (its callback returned) and
 * starts where the step before it on that lane ended (host), or where the
 * last thing either side did ended (guest: its work starts when the host
 * hands over).  Stages are what the host observed of the guest: bars for a
 * guest that does not report its own table (Linux), marks otherwise.
 */
#ifndef HOTVM_CPU_TRACE_H
#define HOTVM_CPU_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;
struct cpu_ctx;
struct cpu_opts;

/*
 * The verb: trace add|remove CPU, or trace --from FILE|- (a cpu-hotplug
 * reply, or a timeline that trace --json printed, drawn again).
 */
int cpu_trace_verb(struct cpu_ctx *x);
bool cpu_trace_args_ok(const struct cpu_opts *o);

/* From a cpu-hotplug reply (or {"return": reply}); NULL if it has no steps. */
struct json_object *cpu_trace_from_reply(struct json_object *reply);
/*
 * From the CPUHP_STATE events of @cpu in the array @events, times relative
 * to t0_us (the events' wall clock, in microseconds).
 */
struct json_object *cpu_trace_from_events(struct json_object *events, long cpu,
					  int64_t t0_us);

/* Draw a timeline: width columns of text, or an SVG document. */
void cpu_trace_print_text(FILE *out, struct json_object *trace, int width);
void cpu_trace_write_svg(FILE *out, struct json_object *trace);

#endif
