/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Seccomp filters per thread type.  Each kind of thread (the main thread
 * once the machine is built, every vCPU thread, each control-plane thread)
 * is allowed only the system calls it makes; anything else stops hotvm at
 * once with status 4 and a line naming the call and the thread.
 *
 * The filters are built once, before any thread exists, and each thread
 * loads its own at its start (no TSYNC): a thread inherits its creator's
 * filter, and the filters stack, so a thread type that creates threads
 * (the operation thread starts vCPU threads) allows what they need too.
 *
 * Hooks: a filter is inherited across fork and exec and can never be
 * dropped, so a hook started by a filtered thread would run under that
 * thread's filter.  The threads that run hooks after set-up are the
 * operation threads, QMP's and the machine's work thread (a reset, a
 * guest's own eject), both of type QMP_OP: with --hook they are left
 * unfiltered (hooks run outside the filter, and without no_new_privs);
 * without hooks they are filtered.  The main thread runs hooks only in
 * the first boot's walk, before it loads its filter.
 */
#ifndef HOTVM_SECCOMP_POLICY_H
#define HOTVM_SECCOMP_POLICY_H

#include <stdbool.h>

/* --seccomp; the zero value is the default, filters on. */
enum seccomp_policy {
	SECCOMP_POLICY_ON = 0, /* a forbidden call stops hotvm (status 4) */
	SECCOMP_POLICY_LOG,    /* allowed, and logged by the kernel (audit) */
	SECCOMP_POLICY_OFF,    /* no filter, no no_new_privs */
};

enum seccomp_thread {
	SECCOMP_THREAD_MAIN,	    /* after set-up: waits, then tears down */
	SECCOMP_THREAD_VCPU,	    /* KVM_RUN and the device models */
	SECCOMP_THREAD_QMP_IO,	    /* accepts, reads and writes clients */
	SECCOMP_THREAD_QMP_QUERY,   /* runs the queries */
	SECCOMP_THREAD_QMP_OP,	    /* runs the operations, starts vCPUs */
	SECCOMP_THREAD_AGENT_IO,    /* the agent socket's clients (qga_mux.c) */
	SECCOMP_THREAD_AGENT_CALL,  /* forwards their calls to the agent */
	SECCOMP_THREAD_AGENT_CHECK, /* the periodic check of Linux's CPUs */
	SECCOMP_THREAD_VIRTIO,	    /* a virtio device's queues and backend */
	SECCOMP_THREAD_VIRTIO_NET,  /* a virtio-net queue and its tap */
	SECCOMP_THREAD_VSOCK,	    /* virtio-vsock's host sockets */
	SECCOMP_NR_THREADS,
};

/* "on", "log", "off": the policy, or -EINVAL. */
int seccomp_parse_policy(const char *s);

/*
 * Builds every thread type's filter and installs the SIGSYS reporter.
 * Call from the main thread before it starts any other; @hooks says
 * whether hooks may run after set-up (the operation threads then stay
 * unfiltered).  0, or -errno with a message.  Does nothing for OFF.
 */
int seccomp_setup(enum seccomp_policy p, bool hooks);

/*
 * Loads the filter of @t into the calling thread, with no_new_privs.
 * A no-op before seccomp_setup() or with OFF.  A thread that should be
 * filtered and cannot be does not go on unfiltered: hotvm stops with
 * status 4 and a message (only the kernel running out of memory can
 * cause that; the filters were checked when built).
 */
void seccomp_enter(enum seccomp_thread t);

#endif
