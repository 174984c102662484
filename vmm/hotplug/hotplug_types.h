/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hotplug controller's words, which its APIs share (hotplug.h, the
 * operations on one vCPU and the queries; hotplug_many.h, on many;
 * hotplug_linux.h, Linux's word through the guest agent; hotplug_vmm.h,
 * the life cycle): the host table's states, the sides, what a hot-add
 * waits for, a guest's eject, the stages the host observes, an
 * operation's report and kind, a vCPU slot's view, and the events the
 * controller sends (docs/design.md §4, §8).
 */
#ifndef HOTVM_HOTPLUG_TYPES_H
#define HOTVM_HOTPLUG_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "cpuhp.h"
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

/*
 * The words for HOTPLUG_WAIT_ACKNOWLEDGED and STARTED, in order, NULL-ended
 * (QMP's "wait" values); HOTPLUG_WAIT_* for a name, or -EINVAL.
 */
extern const char *const hotplug_wait_words[];
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
	/*
	 * Linux's trace of this operation is read after its reply (the
	 * guest agent's --agent-trace): CPUHP_LINUX_TRACE says when.
	 */
	bool linux_trace_pending;
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

/* Linux's steps and trace, with the guest agent (hotplug_linux.h). */
struct hp_linux_step;
struct hp_linux_trace;

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

#endif
