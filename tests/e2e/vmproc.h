/* SPDX-License-Identifier: GPL-2.0-only */
/* A hotvm process driven by an end-to-end test: console, QMP, /proc. */
#ifndef HOTVM_TESTS_VMPROC_H
#define HOTVM_TESTS_VMPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "qmp_client.h"

/* Generous: this machine's /dev/kvm is a software implementation. */
#define VMPROC_TIMEOUT_MS 60000

struct json_object;

struct vmproc {
	pid_t pid;
	int out_fd; /* the guest console */
	char dir[64];
	char sock[108];
	char log[96]; /* everything the console printed, until vmproc_stop() */
	int log_fd;
	char buf[16384];
	size_t len;
	char online[128]; /* the cpulist of the last "online:" line */
	/* The last "apicids:" line (the Linux lab guest's online APIC IDs). */
	char apicids[128];
	struct qmp_client *c;
	const char *echo; /* E2E_ECHO set: copy the console to stdout */
	int stop_ms;	  /* how long vmproc_stop() waits for the exit */
};

/* $HOTVM, else build/vmm/hotvm. */
const char *vmproc_hotvm(void);

/*
 * The bound on a stop: SIGTERM or quit ends hotvm within it, whatever runs
 *.  1000 ms; $HOTVM_TEST_STOP_MS widens it for the sanitizer
 * builds, whose hotvm runs several times slower in the nested lab.
 */
int vmproc_stop_bound_ms(void);

/* Starts hotvm run with the API on a socket and waits for "ready". */
int vmproc_start(struct vmproc *v, const char *cpus, const char *cmdline,
		 const char *const *extra);
/*
 * The same with its own bound on "ready", for a VM whose boot takes longer
 * than most (hundreds of vCPUs created one by one, under a sanitizer, in
 * the nested lab); vmproc_stop() then waits as long for the exit.
 */
int vmproc_start_ms(struct vmproc *v, const char *cpus, const char *cmdline,
		    const char *const *extra, int ready_ms);
/* quit, wait for exit; returns the exit status (-1 if killed). */
int vmproc_stop(struct vmproc *v);

/* Waits for a console line starting with @prefix: -ETIMEDOUT, or -EPIPE
 * when the console closes first. */
int vmproc_wait_line(struct vmproc *v, const char *prefix, int timeout_ms,
		     char *out, size_t outlen);
/* Waits until the guest's last "online:" line says @cpulist. */
int vmproc_wait_online(struct vmproc *v, const char *cpulist, int timeout_ms);
/* Waits until the guest's last "apicids:" line says @ids ("0 2 5"). */
int vmproc_wait_apicids(struct vmproc *v, const char *ids, int timeout_ms);

/* Reads what the console has now, without waiting (v->online follows). */
void vmproc_drain(struct vmproc *v);

/*
 * Prints the console's last @lines lines as TAP comments: what the guest
 * said before a check failed, which the test's own output cannot show.
 */
void vmproc_console_tail(struct vmproc *v, unsigned int lines);

/*
 * Waits for hotvm to end on its own (a guest poweroff, --no-reboot),
 * reading the console meanwhile.  Returns its exit status, -1 if a signal
 * ended it, -ETIMEDOUT if it still runs.  Once it returned >= -1 the
 * process is gone: vmproc_stop() only cleans up (and returns -1).
 */
int vmproc_wait_exit(struct vmproc *v, int timeout_ms);

/*
 * Runs @cmd with arguments from the printf-style JSON @fmt (NULL: none).
 * Returns 0 with *reply (caller puts it; reply may be NULL), or the
 * client's error with "class: desc" in errdesc.
 */
int vmproc_qmp(struct vmproc *v, const char *cmd, struct json_object **reply,
	       char *errdesc, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/*
 * device_add (plug) or device_del of CPUs 1..n, ids idprefix1.., all sent
 * before the first reply is read (a burst: one batch) when at_once, else
 * each after the reply to the one before.  0 once every reply was a
 * success, else the first failure ("class: desc" in errdesc).
 */
#define VMPROC_BURST_MAX 64
int vmproc_burst(struct vmproc *v, bool plug, unsigned int n,
		 const char *idprefix, bool at_once, char *errdesc,
		 size_t errlen);

/*
 * cpuhp-inject-fault: @cpu's next walk fails at @state of @side ("host"
 * or "guest").  0, or the error (said).
 */
int vmproc_inject(struct vmproc *v, unsigned int cpu, const char *side,
		  const char *state);

int vmproc_fds(struct vmproc *v);
/* Threads of hotvm; waits up to 2 s for @expect (-1: no wait). */
int vmproc_threads(struct vmproc *v, int expect);
/*
 * hotvm's vCPU threads (named "vcpuN"), running or parked; waits up to
 * 2 s for @expect (-1: no wait).  @tid_of, when not NULL, gets the tid of
 * "vcpu<i>" at [i] for i < @max (0 if there is none).
 */
int vmproc_vcpu_threads(struct vmproc *v, int expect, int *tid_of,
			unsigned int max);

/* @cpu's thread-id in query-cpus-fast: 0 if it is not listed, -1 error. */
int vmproc_fast_tid(struct vmproc *v, unsigned int cpu);

/* query-cpuhp helpers. */
struct json_object *vmproc_cpu(struct json_object *cpuhp, unsigned int cpu);
const char *vmproc_str(struct json_object *o, const char *a, const char *b);
bool vmproc_flag(struct json_object *o, const char *a, const char *b);
/*
 * The states of @side's table ("host-states" or "guest-states") a walk up
 * runs, in order: named, after offline, with a startup: what a fault can
 * be injected at.  From hotvm's own table (query-cpuhp), so no test
 * spells the list again.  Up to @max names into @names (copies that live
 * as long as the test); their number, or -1.
 */
int vmproc_states(struct vmproc *v, const char *side, const char **names,
		  int max);

#endif
