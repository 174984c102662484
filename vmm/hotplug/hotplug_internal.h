/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hotplug controller's insides, shared by the files of
 * vmm/hotplug (listed below, with their jobs).
 *
 * Locks, always taken in this order:
 *  - table_lock (recursive): the cpuhp library's; held by the control
 *    thread for a whole walk, including its waits for the guest;
 *  - lock: the guest mirror, the wait conditions and the current report;
 *    the only one a vCPU thread takes (in a register-block callback), so a
 *    guest report is never stuck behind a walk that waits for it.
 * The register block's and the GED's own locks are leaves: their callbacks
 * run after they are dropped.
 */
#ifndef HOTVM_HOTPLUG_INTERNAL_H
#define HOTVM_HOTPLUG_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "clock.h"
#include "cpuhp.h"
#include "cpuhp_regs.h"
#include "ged.h"
#include "hotplug.h"
#include "hotplug_linux.h"
#include "hotplug_many.h"
#include "hotvm/guest_states.h"
#include "linux_file.h"
#include "vcpu.h"

struct hooks;
struct bus;
struct vm;

/* What a waiter is waiting for; set by the guest, cleared by the waiter. */
struct hp_wait_flags {
	bool reached; /* a successful step at or past GUEST_AP_WORK, going up */
	bool done;    /* an operation on this CPU finished (DONE) */
	bool failed;  /* ... with FAILED: the guest rolled back */
	bool ejected; /* the guest wrote eject */
	bool ost_ok;  /* _OST insert (event 1) with status 0 */
	bool ost_fail; /* _OST eject (event 3) with a failure status */
	bool started;  /* the vCPU left wait-for-INIT/SIPI */
	uint32_t ost_status;
};

/* What the host asked the guest to walk (hp_slot.asked). */
#define HP_ASK_UP     0x1u
#define HP_ASK_DOWN   0x2u
#define HP_ASK_TARGET 0x4u

struct hp_slot {
	struct vcpu vcpu; /* fd -1 until the slot's first vcpu:create */
	bool kvm_ready;	  /* fd, run area and CPUID set up: reusable */
	bool prepared;	  /* host:prepare has run */
	bool boot;
	bool online; /* accounted by the online state */
	char id[64];

	/* Under hp->lock (and so is the mirror, hotplug.guest_m). */
	bool guest_walking; /* a STEP came, its DONE has not */
	bool guest_joining; /* presented by this operation: online waits */
	bool guest_broken;
	enum hp_stage stage; /* observed; see hp_set_stage_locked() */
	/*
	 * The host table's view of this CPU as of its last step: what a
	 * query reads while a walk holds table_lock (and waits for a guest).
	 */
	struct cpuhp_cpu host_view;
	bool parked_view;
	int guest_target;   /* pending for command 0x12, or CPUHP_INVALID */
	bool guest_recover; /* ... with ABI_GUEST_TARGET_RECOVER */
	int fault_given;    /* the last fault handed over, to mark injection */
	struct hp_wait_flags w;
	/*
	 * batch.c put this CPU's request to the guest already: its walk's
	 * guest:ap-starting only waits for the answer.  Operation thread.
	 */
	bool batched;
	bool prestaged; /* prestage.c created it ahead (operation thread) */
	/*
	 * Present when the guest boots: the boot CPUs, and after a reset
	 * every CPU the guest had (hotplug_unboot()), walked back up to
	 * coldplug_state by hotplug_boot().  Machine thread only.
	 */
	bool coldplug;
	int coldplug_state;
	bool eject_pending;    /* the guest ejected it unasked: under lock */
	bool reinsert_pending; /* ... and deny kept it: under lock */
	/* hotplug_check() found the sides apart: under lock. */
	bool disagree;
	char disagree_why[128];
	/*
	 * The host asked the guest to walk this CPU (HP_ASK_*: up for an
	 * insert or a CPU present when the guest boots, down for a removal
	 * or a withdrawn insert, either way for a guest-side target): its
	 * reports are believed until the walk's DONE (hotplug_guest.c).  A
	 * DONE ends the walk of its own direction only, so a late DONE of
	 * an up walk does not end the down walk the host asked for since.
	 * Any other report is refused; its state is kept (claimed, claim)
	 * for the agreement check, which flags the guest's word (lied,
	 * lie_why) without refusing the CPU or leaving it out of a count.
	 * Under lock.
	 */
	uint8_t asked;
	bool claimed;
	int claim;
	bool lied;
	char lie_why[128];
	/*
	 * With the guest agent (linux_view.c), under lock: Linux's number
	 * for the CPU (-1 unknown) and whether Linux has it online (-1
	 * unknown, 0, 1).
	 */
	int linux_cpu;
	int8_t linux_online;
	/*
	 * The fault hotvm wrote to Linux's cpuN/hotplug/fail for this CPU
	 * (linux_fault.c), or CPUHP_INVALID: the next removal has Linux
	 * offline it through the agent first.  Under lock.
	 */
	int linux_fail;
	char linux_fail_name[64];
};

/* A logical id whose firmware path could not be read (linux_view.c). */
struct hp_linux_miss {
	uint64_t retry_ns; /* hv_now_ns() to ask again; 0: no miss */
	uint32_t wait_ms;  /* the wait after the next miss */
};

struct hotplug {
	struct vm *vm;
	const struct bus *io;
	struct bus *mmio;
	unsigned int boot_cpus, max_cpus;
	const struct hooks *hooks;
	int timeout_ms;
	unsigned int prestage; /* free slots kept at vcpu:create */
	enum hotplug_boot_mode boot_mode;
	uint64_t entry, start_info;
	struct hp_slot *slots;

	struct cpuhp_machine m;
	struct cpuhp_step steps[HOST_NR_STATES];
	struct cpuhp_cpu *hcpus;
	struct cpuhp_platform plat;
	pthread_mutex_t table_lock;
	bool booting; /* hotplug_boot(): present CPUs without waiting */
	enum hotplug_wait wait; /* the VM's default, never DEFAULT */

	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	bool stopping;
	/*
	 * Operations, one at a time (hp_op_enter()), under lock: the QMP
	 * operation thread's and the machine's own (boot, reset, a guest's
	 * eject), which may nest on one thread.
	 */
	unsigned int op_depth;
	pthread_t op_owner;
	unsigned int op_waiters; /* threads waiting at the gate */
	bool running;	     /* the guest runs: from hotplug_boot() to unboot */
	bool started;	     /* hotplug_boot() has succeeded once */
	bool tsc_rate_asked; /* KVM_GET_TSC_KHZ for the report ring */
	bool resetting;	     /* every wait for the guest ends with -ECANCELED */
	/*
	 * The guest has acted already (a reset, its own eject): the walk
	 * follows it, so a hook cannot veto and nothing is asked of the guest.
	 * Also set for the boot after a reset: its hooks run but cannot veto
	 * either (a failure is logged and sent as CPUHP_HOOK_IGNORED).
	 */
	bool forced;
	enum hotplug_guest_eject guest_eject;
	bool eject_work; /* some slot's eject_pending is set */
	bool check_work; /* a late guest finished a walk: check again */
	bool guest_ext;	 /* the guest has used command 0x10: it is ours */
	uint64_t refused_reports; /* about CPUs nobody asked to move */
	/*
	 * The mirror of the guest's table (guest_states.h): each CPU's state
	 * is the last one the guest reported, its fail the fault to hand over
	 * with command 0x11; the library's rules judge targets and faults.
	 */
	struct cpuhp_machine guest_m;
	struct cpuhp_step guest_steps[GUEST_NR_STATES];
	struct cpuhp_cpu *guest_cpus;
	struct hp_events ev;
	unsigned int nr_online;

	/* The current operation (one at a time), under lock. */
	bool op_active;
	unsigned int op_cpu;
	int op_timeout_ms;
	enum hotplug_wait op_wait;
	struct hp_report *rep;
	uint64_t op_start_ns, op_last_ns;
	struct vmexit_counts op_exits0; /* the VM's exits when it began */
	/*
	 * Its own share (hp_report.own_ns): the operation thread's CPU
	 * clock, its reading at the start and at the last host step, and
	 * that step's time (CLOCK_MONOTONIC).
	 */
	enum hp_op_kind op_kind;
	bool prestaging; /* hp_prestage_fill() runs: its walks' kind */
	clockid_t op_clk;
	uint64_t op_cpu0_ns, op_cpu_last_ns, op_host_last_ns;
	struct hp_own_stats own[HP_OP_KINDS]; /* every operation's, summed */

	struct ged *ged;     /* the machine's (board_devices.c) */
	struct hpregs *regs; /* likewise; attached to hp_regs_ops */

	/*
	 * The guest agent (NULL: none) and linux_view.c's state, under
	 * agent_lock (taken before hp->lock, never with table_lock wanted
	 * after it): Linux's logical id -> slot + 1 (0 unknown), and whether
	 * the agent answered last time (written under it, read atomically).
	 */
	struct qga *agent;
	/* The same agent for guest files (linux_file.h), with the cap. */
	struct lx_agent lxa;
	pthread_mutex_t agent_lock;
	int *linux_slot;
	/*
	 * A logical id whose slot could not be read (the agent's error, a
	 * path that names no slot): when to try again, and the wait after
	 * the next miss, doubling (linux_view.c).  Under agent_lock.
	 */
	struct hp_linux_miss *linux_miss;
	unsigned int linux_miss_first_ms; /* 0: LINUX_MISS_FIRST_MS */
	/* Under agent_lock: the ids Linux's last usable answer listed. */
	bool *linux_listed;
	/*
	 * The slot + 1 an operation waits for Linux to list, once Linux has
	 * acknowledged it (0: none; atomic): linux_view.c may match it
	 * without reading its firmware node (match_expected()).
	 */
	int linux_expect;
	/*
	 * The whole check's deadline (hv_now_ns(); 0: none), which caps
	 * every agent call made under agent_lock (hp_agent_cap()).
	 */
	uint64_t agent_until_ns;
	/*
	 * agent_lock: each call of the check in progress may take this long
	 * (0: LINUX_AGENT_TIMEOUT_MS); longer while Linux brings a CPU up.
	 */
	int agent_call_ms;
	/*
	 * A reset bumps linux_gen under hp->lock, without waiting for a
	 * check that holds agent_lock; the next holder forgets the matches
	 * (linux_gen_seen, under agent_lock).
	 */
	unsigned int linux_gen, linux_gen_seen;
	/*
	 * Under lock: this single-CPU operation (not a burst's or resize's
	 * part) ended with guest-set-vcpus onlining its CPU, whose answer
	 * was applied as Linux's word: hp_op_exit() need not ask Linux
	 * again.  Cleared by hp_op_begin().
	 */
	bool linux_fresh;
	bool agent_up;
	/* The periodic check's thread (hotplug_agent_watch_start()). */
	pthread_t watch;
	int watch_period_ms;
	bool watching;	 /* the machine thread's */
	bool watch_stop; /* under hp->lock */
	/* Linux's own table through its trace (linux_trace.c); NULL: none. */
	struct lx_trace *lxt;
};

/*
 * The files of the controller, each calling only those listed before it
 * and the agent layer beneath (docs/design.md §2 has the map of both):
 *
 *   slot.c          a slot's bookkeeping: stage, report, reason, waits,
 *                   the online set
 *   linux_view.c    Linux's word on its CPUs through the guest agent
 *   linux_fault.c   Linux's cpuN/hotplug/fail through the agent, and
 *                   Linux's offlining before an eject
 *   linux_trace.c   Linux's own cpuhp table: its state list and trace
 *   hotplug_guest.c the guest's side of the wire and the mirror of its table
 *   hooks.c         running the --hook executables
 *   online_wait.c   the online state's wait for the guest's side
 *   host_table.c    the host table's callbacks
 *   platform.c      the cpuhp library's platform, the copy queries read
 *   devices.c       the register block and ring attached, the power button
 *   agree.c         the agreement check
 *   op.c            the operation frame: the gate (its outermost exit runs
 *                   the check), an operation's begin, end and accounting
 *   cpu_ops.c       the single-CPU operations, inside the gate
 *   prestage.c      the pool of vCPUs created ahead
 *   entry.c         the single-CPU operations' entry points (hotplug.h)
 *   lifecycle.c     create, boot, reset, unboot, shutdown, destroy
 *   guest_eject.c   the guest's own eject, on the machine thread
 *   query.c         the queries
 *   batch.c         the phases of a batch
 *   many.c          whole operations on many CPUs: bursts
 *   resize.c        ... and a resize
 */

/* --- slot.c -------------------------------------------------------------- */

/* A thread's CPU clock (pthread_getcpuclockid()) in ns; 0 if unreadable. */
uint64_t hp_cpu_ns(clockid_t clk);
/* CPU time @cpu_ns spent within @wall_ns, capped at it (slot.c). */
uint64_t hp_own_cap(uint64_t cpu_ns, uint64_t wall_ns);

/* Appends one step to the current report, if it is about @cpu.  Locked. */
void hp_record_locked(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		      const struct cpuhp_notice *n, uint64_t at_ns);

/*
 * Waits under hp->lock (held) until @done(slot) says something (> 0
 * success, < 0 that error) or @timeout_ms pass (-ETIMEDOUT) or the VM
 * stops (-ESHUTDOWN).
 */
int hp_wait_locked(struct hotplug *hp, struct hp_slot *s,
		   int (*done)(const struct hp_slot *s), int timeout_ms);

/*
 * Records what the host observed of the guest and tells the QMP layer:
 * *ev is filled for the caller to call after dropping hp->lock.
 */
void hp_set_stage_locked(struct hotplug *hp, unsigned int cpu, enum hp_stage st,
			 struct hp_events *ev, char *id, size_t idlen);
void hp_stage_notify(const struct hp_events *ev, unsigned int cpu,
		     const char *id, enum hp_stage st);
/* Both, with hp->lock not held: takes it, records, drops it, tells. */
void hp_set_stage(struct hotplug *hp, unsigned int cpu, enum hp_stage st);
/* vCPU thread: the guest started this vCPU (vcpu.on_start). */
void hp_vcpu_started(void *ctx, unsigned int cpu);
/*
 * Marks @cpu as a batch's (asked already, its own walk next), or no longer.
 * Under hp->lock: an agreement check on demand reads it (agree.c), and a
 * batch sets it outside the operation gate.
 */
void hp_set_batched(struct hotplug *hp, unsigned int cpu, bool on);
/*
 * Marks @cpu as one of the prestaged pool's, or no longer.  Under hp->lock:
 * the query thread reads the mark (hotplug_cpu_view()), and the main
 * thread clears it too when it follows the guest's own eject.
 */
void hp_set_prestaged(struct hotplug *hp, unsigned int cpu, bool on);

/*
 * A step of the current operation failed for @cpu: logs it and keeps the
 * reason for the caller (the operation's hp_report.err).  The first one
 * wins: it is the cause, later ones come from the rollback.
 */
void hp_fail(struct hotplug *hp, unsigned int cpu, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * An operation refused before it walks: logged as hp_fail() logs, and the
 * reason for the caller in @rep (may be NULL).  Returns @code.
 */
int hp_refuse(struct hp_report *rep, unsigned int cpu, int code,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * @cpu's online mark changed (the online state's accounting): tells the
 * QMP layer the new online set.  Without hp->lock held.
 */
void hp_online_changed(struct hotplug *hp, unsigned int cpu, bool online);

/* --- linux_view.c -------------------------------------------------------- */

/*
 * Asks Linux (guest-get-vcpus) which CPUs it has online and follows it:
 * stages, the online set, with their events.  @quick: not when the agent
 * did not answer last time (-EAGAIN), nor while another call runs
 * (-EBUSY): a query must not wait for a missing or busy agent.  -ENODEV
 * without an agent.
 */
int hp_linux_refresh(struct hotplug *hp, bool quick, struct hv_err *err);
/*
 * The same with five times the time for each call: right after Linux has
 * acknowledged a CPU it may be busy onlining it (a udev rule), and its
 * agent slow to answer over COM2, where each byte is a VM exit.
 */
int hp_linux_refresh_patient(struct hotplug *hp, struct hv_err *err);
/*
 * The ids Linux lists that are not matched to a slot yet are asked again
 * at the next refresh, their misses' waits notwithstanding: a CPU Linux
 * has just acknowledged may list before its firmware node can be read.
 */
void hp_linux_retry_unmatched(struct hotplug *hp);
/* Asks Linux, then its logical id for @cpu, or -ENOENT (said) if none. */
int hp_linux_id(struct hotplug *hp, unsigned int cpu, struct hv_err *err);
/* Has Linux online or offline @cpu (guest-set-vcpus), then refreshes. */
int hp_linux_set_online(struct hotplug *hp, unsigned int cpu, bool online,
			struct hv_err *err);
/* The same with the logical id Linux gave last (a refresh just asked). */
int hp_linux_set_known(struct hotplug *hp, unsigned int cpu, bool online,
		       struct hv_err *err);
/* A reset: Linux's numbers and word are void.  Never waits for a check. */
void hp_linux_forget(struct hotplug *hp);
/*
 * An agent call's timeout under agent_lock: @want_ms, capped by what is
 * left of the check's deadline (at least 1 ms: the call then fails).
 * @hp is the controller: hp->lxa's cap_ms, for the guest's files.
 */
int hp_agent_cap(void *hp, int want_ms);

/* --- linux_fault.c ------------------------------------------------------- */

/* Whether hotvm wrote a fault to Linux's cpuN/hotplug/fail for @cpu. */
bool hp_linux_fault_armed(struct hotplug *hp, unsigned int cpu);
/*
 * The removal's first step (the online state's teardown): a CPU with a
 * fault in Linux is offlined through the agent before any eject is asked
 * for.  0 (no fault, or offlined, or the agent is away: the eject goes
 * on), or Linux's refusal (said with hp_fail()): the CPU stays.
 */
int hp_linux_offline_first(struct hotplug *hp, unsigned int cpu);
/*
 * Linux has not ejected @cpu within its grace time: if it still lists it
 * online, it is offlined through the agent.  0, or the agent's error
 * with Linux still having it online (@why says it).
 */
int hp_linux_offline_late(struct hotplug *hp, unsigned int cpu,
			  struct hv_err *why);
/* The current operation's report says who offlined @cpu in Linux. */
void hp_linux_offlined_by(struct hotplug *hp, unsigned int cpu, const char *by);
/*
 * Linux's state list (/sys/devices/system/cpu/hotplug/states), read
 * through the agent and checked whole: 0, or -errno with @err saying why
 * (-EPROTO: not the "N: name" lines Linux prints).
 */
int hp_lx_states_read(struct hotplug *hp, struct lx_states *ls,
		      struct hv_err *err);
/* --- linux_trace.c ------------------------------------------------------- */

/* With the agent: the trace's state (NULL without one); -ENOMEM. */
int hp_lx_trace_init(struct hotplug *hp);
void hp_lx_trace_destroy(struct hotplug *hp);
/*
 * Around a whole operation, outside the operation gate: begin reads the
 * last window if still pending, then enables Linux's cpuhp trace events
 * (reading its state list first, once per boot), writes the window's
 * mark and returns whether this call opened the window (not when one is
 * open already, on this or another thread, nor without an answering
 * agent); end, given that, leaves the window pending: its read, the
 * report of Linux's steps and the emptying of the buffer are
 * hp_lx_trace_settle()'s, after the operation's reply.
 */
bool hp_lx_trace_begin(struct hotplug *hp);
void hp_lx_trace_end(struct hotplug *hp, bool begun);
/*
 * What every window needs, done ahead when the agent first answers (the
 * periodic check's thread): Linux's state list, tracefs found (its
 * buffer emptied), the events enabled.  Skipped while the agent is busy
 * or a window is open; begin does what is still missing.
 */
void hp_lx_trace_prepare(struct hotplug *hp);
/* Reads a pending window (agent_lock); nothing if none.  Any thread. */
void hp_lx_trace_settle(struct hotplug *hp);
/* Whether a window waits for its read. */
bool hp_lx_trace_pending(struct hotplug *hp);
/* Waits up to @timeout_ms for a pending window's read (by another thread). */
void hp_lx_trace_wait(struct hotplug *hp, int timeout_ms);
/* A reset: a new boot's list, tracefs and states are found again. */
void hp_lx_trace_forget(struct hotplug *hp);
/* Linux's last known state of slot @cpu, or -1.  Any thread. */
int hp_lx_trace_state(struct hotplug *hp, unsigned int cpu);

/* --- hotplug_guest.c ----------------------------------------------------- */

extern const struct hpregs_ops hp_regs_ops;
/* The report ring's (cpuhp_ring.h): the same reports, with their time. */
extern const struct hpring_ops hp_ring_ops;
/* The mirror of the guest's table, every CPU offline but the boot CPU. */
int hp_guest_mirror_init(struct hotplug *hp);
/*
 * A reset: the mirror as at boot, and what the guest told us forgotten;
 * the CPUs present at boot are the guest's to bring up (asked).  Locked.
 */
void hp_guest_mirror_reset(struct hotplug *hp);
/* The mirror's view of @cpu: reported state, fault to hand over.  Locked. */
int hp_guest_state_locked(struct hotplug *hp, unsigned int cpu);
int hp_guest_fault_locked(struct hotplug *hp, unsigned int cpu);
/* What an _OST status for an eject means, for error messages. */
const char *hp_ost_status_name(uint32_t status);

/* --- online_wait.c ------------------------------------------------------ */

/*
 * Waits until the guest's side has hot-added @cpu online (its report, or
 * Linux's word through the agent; its start only when the caller asked):
 * 0, or the error, said with hp_fail().
 */
int hp_wait_online(struct hotplug *hp, unsigned int cpu);

/* --- host_table.c -------------------------------------------------------- */

void hp_host_table_init(struct hotplug *hp);

/* --- platform.c --------------------------------------------------------- */

/* The library's platform for the host table (hp->plat). */
void hp_platform_init(struct hotplug *hp);
/* A fresh copy of @cpu's host table entry for queries (host_view). */
void hp_snap_host(struct hotplug *hp, unsigned int cpu);
/* @cpu's state in the host table, as the last walk left it. */
int hp_host_state(struct hotplug *hp, unsigned int cpu);

/* --- devices.c ---------------------------------------------------------- */

/* The register block's and the ring's callbacks: the controller's. */
int hp_devices_attach(struct hotplug *hp);
void hp_devices_detach(struct hotplug *hp);

/* --- agree.c ------------------------------------------------------------- */

/*
 * The agreement check over every vCPU (hotplug_check()): marks and
 * announces what it finds apart, and has the machine thread follow the
 * guest's own ejects.  The gate's outermost exit runs it.
 */
void hp_agree_check(struct hotplug *hp);
/*
 * A walk left @cpu where nobody can vouch for it: marked as needing
 * cpuhp-recover, as the agreement check marks it, with its event.
 */
void hp_mark_disagree(struct hotplug *hp, unsigned int cpu, const char *fmt,
		      ...) __attribute__((format(printf, 3, 4)));

/* --- op.c ---------------------------------------------------------------- */

/*
 * Enters an operation: waits until no other thread's operation runs and,
 * unless @machine (the machine's own: boot, unboot, a guest's eject), the
 * guest runs.  Nests on one thread.  -ESHUTDOWN once the VM stops.
 */
int hp_op_enter(struct hotplug *hp, bool machine);
/*
 * Enters only if no operation runs and the guest runs, without waiting;
 * with @work (a flag under hp->lock), only if it is set, which clears
 * it, and not once the VM stops.  Whether it entered.
 */
bool hp_op_try_enter(struct hotplug *hp, bool *work);
/* Leaves it; the outermost exit runs the agreement check. */
void hp_op_exit(struct hotplug *hp);

/* A new operation: no reason left from the one before in @rep. */
void hp_op_err_clear(struct hp_report *rep);
/* Whether the VM is stopping (hotplug_shutdown()). */
bool hp_stopping(struct hotplug *hp);
/*
 * -ENOTRECOVERABLE (said in @rep) for a CPU a failed rollback left
 * broken or the agreement check marked, until cpuhp-recover.
 */
int hp_op_check_broken(struct hotplug *hp, unsigned int cpu,
		       struct hp_report *rep);
/*
 * Begins a walk of @cpu inside the gate: waits a moment for a late
 * guest still walking it, then starts the report (@rep, may be NULL),
 * the clocks and the exits' count of an operation of @kind.
 */
int hp_op_begin(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		struct hp_report *rep, enum hp_op_kind kind);
/* Ends it: @ret is what the walk returned; accounts its time. */
void hp_op_end(struct hotplug *hp, int ret);

/* --- cpu_ops.c ----------------------------------------------------------- */

/* The single-CPU operations of hotplug.h, inside the gate. */
int hp_cpu_add(struct hotplug *hp, unsigned int cpu, const char *id,
	       int timeout_ms, enum hotplug_wait wait, struct hp_report *rep);
int hp_cpu_remove(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		  struct hp_report *rep);
int hp_set_target(struct hotplug *hp, unsigned int cpu, enum hp_side side,
		  int state, int timeout_ms, struct hp_report *rep);
int hp_cpu_recover(struct hotplug *hp, unsigned int cpu, int timeout_ms,
		   struct hp_report *rep, bool *online);
/* The end of a removal: the id goes, with QEMU's DEVICE_DELETED. */
void hp_deleted(struct hotplug *hp, unsigned int cpu);
/*
 * One CPU down to offline, whatever a hook says (a reset, the guest's own
 * eject); false if it would not.
 */
bool hp_force_down(struct hotplug *hp, unsigned int cpu);

/* --- prestage.c ---------------------------------------------------------- */

/* Tops the pool of pre-staged free slots up to hp->prestage. */
void hp_prestage_fill(struct hotplug *hp);
/* A hot-add took @cpu: if it was the pool's, it leaves it, refilled. */
void hp_prestage_took(struct hotplug *hp, unsigned int cpu);

#endif
