/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hotplug controller: hotvm's per-vCPU host state table
 * (docs/design.md §4), its mirror of the guest's table, and the
 * operations the control API drives.  Every operation is synchronous and returns a
 * negative errno; the caller (the QMP thread) serialises them.
 */
#ifndef HOTVM_HOTPLUG_H
#define HOTVM_HOTPLUG_H

#include <stdbool.h>
#include <stdint.h>

#include "cpuhp.h"
#include "cpuhp_regs.h"
#include "ged.h"
#include "hv_err.h"
#include "vmexit.h"

/* The host table's states; their names, callbacks, flags: host_table.c. */
enum host_state {
	HOST_OFFLINE,
	HOST_PREPARE,
	HOST_VCPU_CREATE,
	HOST_AP_STARTING,
	HOST_DYN_FIRST, /* dynamic range for in-process hooks */
	HOST_DYN_LAST = HOST_DYN_FIRST + 3,
	HOST_ONLINE,
	HOST_NR_STATES,
};

/*
 * The host table itself (host_table.c), read-only: each controller walks a
 * copy of it.  HOST_STATE_NAME() is how the rest of hotvm spells a host
 * state's name; NULL for a free dynamic slot.
 */
extern const struct cpuhp_step hotplug_host_states[HOST_NR_STATES];
#define HOST_STATE_NAME(s) (hotplug_host_states[(s)].name)

#define HOTPLUG_DEFAULT_TIMEOUT_MS 10000

/* How the boot vCPU enters the kernel. */
enum hotplug_boot_mode {
	HOTPLUG_BOOT_PVH,     /* PVH: 32-bit, EBX = hvm_start_info */
	HOTPLUG_BOOT_LINUX64, /* Linux 64-bit boot protocol: RSI = zero page */
};

enum hp_side {
	HP_SIDE_HOST,
	HP_SIDE_GUEST,
};

/*
 * What a hot-add waits for with a guest that does not report its own
 * states (Linux): ACKNOWLEDGED is the guest's _OST for the insert, which
 * Linux sends once its ACPI driver has the CPU, before anything runs on
 * it; STARTED also waits until the guest starts the vCPU (Linux: when
 * user space onlines it).  A reporting guest (the tiny guest) is always
 * waited for until its own table reaches online.
 */
enum hotplug_wait {
	HOTPLUG_WAIT_DEFAULT, /* the VM's --hotplug-wait */
	HOTPLUG_WAIT_ACKNOWLEDGED,
	HOTPLUG_WAIT_STARTED,
};

/*
 * An eject the guest writes for a CPU the host did not ask to remove
 * (Linux: /sys/bus/acpi/devices/.../eject).  ALLOW honours it as QEMU
 * does: the host table walks the CPU down and it is deleted.  DENY keeps
 * the CPU: the register block ignores the eject and presents the CPU to
 * the guest again, so a guest that let it go takes it back.
 */
enum hotplug_guest_eject {
	HOTPLUG_GUEST_EJECT_ALLOW,
	HOTPLUG_GUEST_EJECT_DENY,
};

/* HOTPLUG_WAIT_* for a name, or -EINVAL. */
int hotplug_wait_parse(const char *name);

/*
 * Where the guest is with a CPU as the host observes it, for a guest that
 * does not report its table (and for every guest: the host sees it).
 */
enum hp_stage {
	HP_STAGE_ABSENT,       /* not presented to the guest */
	HP_STAGE_PRESENTED,    /* present; the guest has not answered */
	HP_STAGE_ACKNOWLEDGED, /* _OST(insert, success) */
	HP_STAGE_STARTED,      /* the vCPU left wait-for-INIT/SIPI */
	HP_STAGE_EJECTING,     /* _OST(eject, in progress) */
};

const char *hotplug_stage_name(enum hp_stage st);

/* One callback run (or injected failure) on either side, with its time. */
struct hp_step_time {
	enum hp_side side;
	int state;
	bool up;
	bool rollback;
	bool injected;
	int ret;
	uint64_t ns; /* since the previous step of the same operation */
	/*
	 * A host step: the operation thread's CPU time since the previous
	 * host step (or the operation's start), i.e. the state's own work
	 * without its sleeps (waits for the guest, a thread, a hook).
	 */
	uint64_t own_ns;
};

#define HP_REPORT_MAX 128

/*
 * What one synchronous operation did, for cpu-hotplug's reply, and why it
 * failed: err holds the reason in the words of the step (or the check
 * before the walk) that knew it, cleared when the operation starts; empty
 * when the failure has no words beyond its errno (an injected fault: the
 * failed step in steps[] says it).
 */
struct hp_report {
	/*
	 * A hot-add that waited for "started" with the guest agent: who
	 * onlined the CPU in Linux, "guest" (Linux by itself, within the
	 * grace time) or "agent" (guest-set-vcpus after it); else NULL.
	 */
	const char *onlined_by;
	/*
	 * A removal with the guest agent: who offlined the CPU in Linux,
	 * "guest" (Linux, for the eject, within the grace time) or "agent"
	 * (guest-set-vcpus); else NULL.
	 */
	const char *offlined_by;
	struct hp_step_time steps[HP_REPORT_MAX];
	unsigned int n; /* steps beyond HP_REPORT_MAX are counted, not kept */
	unsigned int dropped;
	uint64_t total_ns;
	/*
	 * hotvm's own share of total_ns (docs/design.md §14): the operation
	 * thread's CPU time from start to end, plus exit_ns, the time the
	 * vCPU threads spent handling the exits below (exits.handled_ns).
	 */
	uint64_t own_ns;
	/* Every vCPU's exits to user space while it ran (vmexit.h). */
	struct vmexit_counts exits;
	struct hv_err err;
};

/* What one operation was, for the per-kind sums of its own share. */
enum hp_op_kind {
	HP_OP_ADD,     /* a hot-add: device_add, cpu-hotplug add */
	HP_OP_REMOVE,  /* a removal */
	HP_OP_TARGET,  /* a walk to a named state (and a batch's phases) */
	HP_OP_RECOVER, /* cpuhp-recover */
	/* --prestage's refill of its pool after an operation took from it */
	HP_OP_PRESTAGE,
	HP_OP_KINDS,
};

/* "hot-add", "hot-remove", "set-target", "recover", "prestage". */
const char *hotplug_op_kind_name(enum hp_op_kind k);

/* The sums over every operation of one kind since the VM started. */
struct hp_own_stats {
	uint64_t ops;
	uint64_t wall_ns; /* their total_ns */
	uint64_t own_ns;  /* their own_ns, exit_ns included */
	uint64_t exit_ns; /* the exits' handling alone */
	uint64_t exits;	  /* the exits to user space while they ran */
};

/* A snapshot of one vCPU slot. */
struct hp_cpu_view {
	unsigned int cpu;
	uint32_t apic_id;
	bool boot;    /* present from the start; never removable if cpu 0 */
	bool present; /* the guest sees it (register block "enabled") */
	char id[64];  /* QMP device id ("" for boot CPUs) */
	struct cpuhp_cpu host;
	int guest_state;     /* last state the guest reported */
	int guest_fault;     /* pending guest-side fault, or CPUHP_INVALID */
	int guest_target;    /* pending guest-side target, or CPUHP_INVALID */
	bool guest_broken;   /* the guest reported a failed rollback */
	int host_tid;	     /* the vCPU thread's tid, 0 when parked */
	bool parked;	     /* its KVM fd exists, no thread runs it */
	bool guest_reports;  /* the guest speaks hotvm's state extension */
	enum hp_stage stage; /* what the host observed of the guest */
	bool prestaged;	     /* created ahead (--prestage): a free slot */
	/*
	 * The agreement check found the sides apart (hotplug_check()):
	 * operations are refused until cpuhp-recover; why says how.
	 */
	bool disagree;
	char disagree_why[128];
	/*
	 * ... only because the guest's word was false (a report about a
	 * CPU nobody asked it to move, agree.c): flagged, but the CPU is
	 * neither refused nor left out of a count.
	 */
	bool guest_lied;
	/* With the guest agent: Linux's CPU number and online, or -1. */
	int linux_cpu;
	int linux_online;
	/*
	 * ... and where Linux's own cpuhp table has it, as its trace last
	 * said (linux_trace.c), or -1: a state number of Linux's list.
	 */
	int linux_state;
};

/*
 * One step of Linux's own table (its cpuhp_enter or cpuhp_multi_enter
 * and the matching cpuhp_exit), read from Linux's trace buffer after an
 * operation, on the host's clock (wall-clock microseconds, as the events'
 * timestamps).
 */
struct hp_linux_step {
	int linux_cpu;
	int state;	  /* the step: a number of Linux's state list */
	const char *name; /* its name in that list, or NULL */
	const char *fn;	  /* the callback's symbol */
	bool up, multi;
	int ret;
	int64_t start_us, end_us;
};

/* What the read of Linux's trace after an operation found. */
struct hp_linux_trace {
	unsigned int steps; /* paired steps reported */
	unsigned int enters, exits;
	unsigned int unmatched; /* an enter without its exit, or the reverse */
	unsigned int malformed; /* lines refused by the parser */
	unsigned int unmapped;	/* steps of a Linux CPU of no known slot */
	bool truncated;		/* the buffer was longer than hotvm reads */
	int64_t align_us;	/* the clocks' alignment: +- this */
	const char *error;	/* why there is no Linux lane, or NULL */
};

/*
 * What the controller tells its user (the QMP layer) as it happens.  Called
 * from the thread that made the change; must not call back into hotplug_*.
 */
struct hp_events {
	void *ctx;
	/*
	 * every transition on either side: n->kind is STEP or DONE; @at_ns
	 * when it happened (CLOCK_MONOTONIC; the guest's own time for what
	 * the report ring carried, else now)
	 */
	void (*state)(void *ctx, enum hp_side side,
		      const struct cpuhp_notice *n, uint64_t at_ns);
	/* the guest's _OST, QEMU's ACPI_DEVICE_OST */
	void (*ost)(void *ctx, unsigned int cpu, const char *id, uint32_t event,
		    uint32_t status);
	/* a hot-removed vCPU is gone: QEMU's DEVICE_DELETED */
	void (*deleted)(void *ctx, unsigned int cpu, const char *id);
	/* the observed stage changed (hp_stage), from any thread */
	void (*stage)(void *ctx, unsigned int cpu, const char *id,
		      enum hp_stage st);
	/*
	 * The set of online vCPUs changed: @cpu went @online (or not),
	 * whatever walk did it (an add, a removal, a resize, a rollback,
	 * a recover); @count of them are online now, @cpulist says which
	 * (Linux's cpulist format, "0-2,5").
	 */
	void (*online)(void *ctx, unsigned int cpu, bool online,
		       unsigned int count, const char *cpulist);
	/* The agreement check found @cpu's sides apart (@why), or not. */
	void (*agreement)(void *ctx, unsigned int cpu, const char *id,
			  bool agree, const char *why);
	/*
	 * A hook failed or timed out (@why) in a walk it cannot veto (a
	 * reset's walks, the guest's own eject), which went on.
	 */
	void (*hook_ignored)(void *ctx, unsigned int cpu, const char *id,
			     const char *state, bool up, const char *why);
	/*
	 * With the guest agent, after an operation (before its reply): each
	 * step Linux's own table walked for slot @cpu, then the summary.
	 */
	void (*linux_step)(void *ctx, unsigned int cpu,
			   const struct hp_linux_step *st);
	void (*linux_trace)(void *ctx, const struct hp_linux_trace *t);
};

struct hotplug;

void hotplug_set_events(struct hotplug *hp, const struct hp_events *ev);

unsigned int hotplug_max_cpus(const struct hotplug *hp);
/* Whether the VM has the guest agent (--agent). */
bool hotplug_has_agent(const struct hotplug *hp);
/*
 * The agent protocol's counters and whether the agent answered last time;
 * -ENODEV without an agent.
 */
struct qga_stats;
int hotplug_agent_stats(struct hotplug *hp, struct qga_stats *st, bool *up);
/*
 * Asks the guest to power off through the agent (guest-shutdown, mode
 * powerdown); 0 once the agent has read the request (it never answers
 * one that works), -ENODEV without an agent, or the agent's error.
 */
int hotplug_agent_shutdown(struct hotplug *hp, struct hv_err *err);
int hotplug_cpu_view(struct hotplug *hp, unsigned int cpu,
		     struct hp_cpu_view *v);
/*
 * Linux's own state list, as read through the guest agent once per boot
 * (linux_trace.c): fills @out (may be NULL) and returns how many states,
 * 0 while not read (no agent, not yet, or unusable).
 */
struct lx_states;
unsigned int hotplug_linux_states(struct hotplug *hp, struct lx_states *out);

/* The tables, for introspection: number of states, info, lookup. */
int hotplug_nr_states(const struct hotplug *hp, enum hp_side side);
int hotplug_state_info(struct hotplug *hp, enum hp_side side, int state,
		       struct cpuhp_state_info *info);
/* A state by name or decimal number; -ENOENT if there is none. */
int hotplug_state_lookup(struct hotplug *hp, enum hp_side side,
			 const char *name);

/*
 * Hot-add @cpu: host table to online, which presents it to the guest and
 * waits for the guest.  @id is the QMP device id to remember (may be NULL).
 * @timeout_ms <= 0 means the --hotplug-timeout default; @wait what to wait
 * for with a guest that does not report (HOTPLUG_WAIT_DEFAULT: the VM's).
 * -EEXIST if online already, -EINVAL for a bad slot, -EBUSY if the guest
 * is still walking it, -ETIME if the guest acknowledged the CPU but did not
 * start it in time (rolled back), -ENOTRECOVERABLE if an earlier failed
 * rollback left it broken (see hotplug_cpu_recover()).  A CPU already
 * partly up keeps the id it has when @id is NULL, and any failure leaves
 * the id as it was.  A timed-out add the guest has seen is withdrawn as a
 * removal the guest answers before the vCPU is stopped.
 */
int hotplug_cpu_add(struct hotplug *hp, unsigned int cpu, const char *id,
		    int timeout_ms, enum hotplug_wait wait,
		    struct hp_report *rep);

/*
 * Hot-remove @cpu: host table to offline (eject request, guest offlines and
 * ejects, thread held and fd parked).  -EPERM for cpu 0, -ENODEV if not
 * present, -ETIMEDOUT if the guest did not eject in time (it stays online),
 * -ENOTRECOVERABLE if it is broken.
 */
int hotplug_cpu_remove(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		       struct hp_report *rep);

/*
 * cpuhp-recover: puts @cpu's two sides back in line after a failed
 * rollback left it broken (operations on a broken CPU are refused with
 * -ENOTRECOVERABLE).  A guest-side broken mark is cleared by the guest,
 * which takes the CPU offline; then the host's mark is cleared and the
 * host table walks to online if the guest holds the CPU (its table at
 * online, or for a guest that does not report, its _OST or start seen,
 * and the CPU present), else to offline, ejecting it from the guest if
 * the guest still has it present; a CPU that ends offline loses its id
 * with a DEVICE_DELETED, as after a removal.  *online says where it
 * ended.  Also re-syncs a CPU that is not broken.  -EPERM for cpu 0.
 */
int hotplug_cpu_recover(struct hotplug *hp, unsigned int cpu, int timeout_ms,
			struct hp_report *rep, bool *online);

/*
 * Batches (batch.c), Linux 6.5's parallel bring-up on the host: begin
 * walks every CPU of @cpus to vcpu:create (add) or down to
 * guest:ap-starting (remove), then presents them (asks for their
 * removal) all at once under one GED event; results[i] is each CPU's
 * errno, and the first is returned, errs[i] (errs may be NULL) the
 * reason in the step's words.  The caller then finishes each CPU
 * with results[i] == 0 by hotplug_cpu_add() or hotplug_cpu_remove(),
 * which wait for the guest's answer without asking again; a CPU whose
 * finish failed goes back where it was with hotplug_batch_abandon() (an
 * add to offline, a removal back to online), so every CPU of the batch
 * ends fully done or as it was.
 */
int hotplug_batch_add_begin(struct hotplug *hp, const unsigned int *cpus,
			    unsigned int n, int timeout_ms, int *results,
			    struct hv_err *errs);
int hotplug_batch_remove_begin(struct hotplug *hp, const unsigned int *cpus,
			       unsigned int n, int timeout_ms, int *results,
			       struct hv_err *errs);
void hotplug_batch_abandon(struct hotplug *hp, unsigned int cpu, bool add,
			   int timeout_ms);

/*
 * What the front ends call "plugged" and "counted", decided here once.
 * Plugged: the slot is taken (host table above offline), unless it is
 * only a pre-staged free slot.  Counted: a vCPU the guest really runs as
 * far as the host can tell (host table at online, nothing broken, sides
 * in agreement, a reporting guest has it online too, and with the guest
 * agent Linux does not say it has it offline): what a resize counts and
 * query-cpus-fast lists.
 */
bool hotplug_cpu_plugged(const struct hp_cpu_view *v);
bool hotplug_cpu_counted(const struct hp_cpu_view *v);

/*
 * Whether a hot-add of @cpu with @id (may be NULL) may start: -EINVAL for
 * a bad slot, -EADDRINUSE if another slot has @id, -EEXIST if the slot is
 * taken (plugged, and not merely created ahead of the guest).
 */
int hotplug_add_check(struct hotplug *hp, unsigned int cpu, const char *id);

/*
 * Whole operations on many vCPUs (many.c): a burst of hot-adds or
 * hot-removals as one batch (hotplug_batch_*() above, one GED event for
 * all), and a resize, all or nothing.  The caller names the CPUs and
 * says what to call them; the controller orders the walks, decides who
 * joins the batch, walks back what failed and says, CPU by CPU, what
 * became of each and why.
 */

/* One request of a burst: a slot, the QMP id to give it, what to wait for. */
struct hotplug_req {
	unsigned int cpu;
	const char *id;		/* hot-add only; may be NULL */
	enum hotplug_wait wait; /* hot-add only */
};

enum hotplug_phase {
	HOTPLUG_PHASE_BEGIN,  /* refused by the batch's first phase */
	HOTPLUG_PHASE_FINISH, /* its own walk, after the batch's event */
	HOTPLUG_PHASE_ALONE,  /* run by itself after the batch */
	HOTPLUG_PHASE_UNDO,   /* a failed resize putting it back */
};

/* What became of one CPU. */
struct hotplug_result {
	unsigned int k; /* the request's index (resize: the CPU's step) */
	unsigned int cpu;
	bool add; /* this walk was a hot-add (an undo: the reverse step) */
	enum hotplug_phase phase;
	int rc; /* 0 or -errno */
	/*
	 * The walk's report and reason.  BEGIN: no steps, only the first
	 * phase's reason, or NULL when it gave none.
	 */
	const struct hp_report *rep;
	/*
	 * A batched removal whose own walk failed: it is walked back to
	 * online as soon as done() returns (done() still sees where the
	 * removal left it).  A failed batched add was walked back to
	 * offline before done().
	 */
	bool walk_back;
};

/*
 * The caller's part, called on the thread of the operation, one at a
 * time, in the order the walks end.  Either may be NULL.
 */
struct hotplug_many_ops {
	void *ctx;
	/*
	 * Request @k is about to join the batch (BEGIN) or to run by itself
	 * (ALONE), after the controller's own checks: 0, or an errno that
	 * ends it there (the caller has said why; done() is not called).
	 */
	int (*admit)(void *ctx, unsigned int k, enum hotplug_phase phase);
	/* One CPU's result, as soon as it is known. */
	void (*done)(void *ctx, const struct hotplug_result *r);
};

/*
 * A burst of @n hot-adds (hot-removals) as one batch: every request that
 * passes hotplug_add_check() (a removal: any) and names no CPU or id an
 * earlier one of the batch names joins it; the batch begins, then each
 * CPU finishes on its own, in request order; one that fails goes back
 * where it was and the others still finish.  Then the requests left out
 * run one by one, as they would have had the burst come one at a time.
 * Each request's rc goes to rcs[k] (may be NULL).  Returns how many
 * failed.  @timeout_ms as hotplug_cpu_add().
 */
int hotplug_add_many(struct hotplug *hp, const struct hotplug_req *reqs,
		     unsigned int n, int timeout_ms,
		     const struct hotplug_many_ops *ops, int *rcs);
int hotplug_remove_many(struct hotplug *hp, const struct hotplug_req *reqs,
			unsigned int n, int timeout_ms,
			const struct hotplug_many_ops *ops, int *rcs);

/* One step of a resize: @cpu hot-added, or hot-removed. */
struct hotplug_step {
	unsigned int cpu;
	bool added;
};

struct hotplug_resize_result {
	unsigned int count; /* counted vCPUs when the resize ended */
	/* The caller's, hotplug_max_cpus() long: the steps, in order. */
	struct hotplug_step *steps;
	unsigned int n;		  /* steps done (on failure: and undone) */
	unsigned int undo_failed; /* of those, how many stayed done */
};

/*
 * Resize to @count vCPUs the host table holds online (the host's count,
 * never the guest's word): hot-adds the lowest free slots, or hot-removes
 * the highest such CPUs but the boot CPU, as one batch.  All or nothing: when a CPU fails (its rc is
 * returned, its done() is the first with an error), or fewer than @count
 * can be reached (-ENOSPC), every step done is undone, newest first,
 * each with a done() of phase UNDO.  0 on success.
 */
int hotplug_resize(struct hotplug *hp, unsigned int count, int timeout_ms,
		   const struct hotplug_many_ops *ops,
		   struct hotplug_resize_result *res);

/*
 * QMP's system_powerdown: a press of the ACPI power button (the GED's
 * ABI_GED_EVT_PWRBTN); the guest decides what it does.  0 or -errno.
 */
int hotplug_power_button(struct hotplug *hp);

/* Whether the guest has been started once (query-status's "prelaunch"). */
bool hotplug_started(struct hotplug *hp);

/*
 * The agreement check (docs: the two tables never disagree): for every
 * vCPU, the host table, the register block (what the guest is shown),
 * the guest's last report (a reporting guest) and the online set the
 * events announced must say the same.  It runs when every operation
 * ends and on demand (query-cpuhp); a CPU the guest ejected by itself is
 * followed (hotplug_guest_work()), anything else marks the CPU as needing
 * cpuhp-recover, with an event.  Returns how many CPUs disagree, or
 * -EBUSY while an operation runs (its end checks).
 */
int hotplug_check(struct hotplug *hp);

/* Linux's cpuN/hotplug/target, on either side. */
int hotplug_set_target(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		       int state, int timeout_ms, struct hp_report *rep);

/* Each operation kind's sums of time, own share and exits. */
void hotplug_own_stats(struct hotplug *hp,
		       struct hp_own_stats out[HP_OP_KINDS]);

/*
 * What the guest did to the GED and the register block, with every access
 * they ignored by reason: a hostile or confused guest shows up here.
 */
void hotplug_device_stats(struct hotplug *hp, struct hpregs_stats *regs,
			  struct ged_stats *ged);

/*
 * Linux's cpuN/hotplug/fail, on either side.  A guest-side fault is handed
 * to the guest with its next operation on that CPU.  A refusal's reason
 * goes to @rep (may be NULL).
 */
int hotplug_inject(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		   int state, struct hp_report *rep);

/*
 * Whether guest-side faults are Linux's own (the guest agent, and a guest
 * that does not report a table of its own): hotplug_linux_inject().
 */
bool hotplug_linux_faults(struct hotplug *hp);
/*
 * Linux's cpuN/hotplug/fail for @cpu, through the agent: @state is Linux's
 * number, or @name (if not NULL) its name, both checked against Linux's
 * list; CPUHP_INVALID without a name clears it.  The next removal of
 * @cpu has Linux offline it first and fails if Linux refuses.  A refusal's
 * reason goes to @rep (may be NULL): no such state, no fail file for the
 * CPU (hot-added), Linux's own no.
 */
int hotplug_linux_inject(struct hotplug *hp, unsigned int cpu, int state,
			 const char *name, struct hp_report *rep);

#endif
