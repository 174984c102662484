// SPDX-License-Identifier: GPL-2.0-only
/*
 * soak: one VM (the tiny guest), thousands of random hot-adds, removals,
 * resizes and host-side injected faults, while other clients query it
 * without pause.  Every SAMPLE cycles the VM is brought back to its boot
 * CPUs and its fds, threads and RSS are sampled: fds and threads must come
 * back exactly (every slot's vCPU thread among them, parked while the slot
 * is empty: a re-add takes it again, never a new one), RSS must stay
 * within a bound of the second sample (the first SAMPLE cycles warm the
 * allocator up), so a run judges RSS only from its third sample on:
 * CYCLES must be at least 2 * SAMPLE, and a shorter run fails rather
 * than pass with the bound unchecked.  The guest's own online list must
 * match hotvm's after every operation, unless hotvm flagged the CPUs
 * apart itself and cpuhp-recover then brings them together.
 *
 *   HOTVM=build/vmm/hotvm soak [CYCLES [CLIENTS]]
 *
 * Prints the samples and the operation counts; exits 1 if a line is not
 * flat or the guest and hotvm disagree, 2 if CYCLES is too few.  A
 * bounded run is a meson test, and one runs in the lab.
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmproc.h"

#define MAX_CPUS     8
#define SAMPLE	     100
#define RSS_SLACK_KB 4096 /* SOAK_RSS_SLACK_KB: a sanitizer's allocator */
#define MAX_CLIENTS  8
#define MAX_SAMPLES  256

static struct vmproc v;
static _Atomic bool stop;
static _Atomic unsigned long queries, query_errors;
/* The clients' connections are part of the baseline: sample after them. */
static pthread_barrier_t connected;

/* The host states a fault can be injected at: hotvm's table says. */
static const char *host_faults[16];
static int nr_host_faults;

static long rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

/* Another orchestrator that only looks: queries as fast as replies come. */
static void *client(void *arg)
{
	static const char *const cmds[] = { "query-cpus-fast",
					    "query-hotpluggable-cpus",
					    "query-cpuhp", "query-status" };
	struct qmp_client_error err;
	struct qmp_client *c;
	unsigned int i = (unsigned int)(uintptr_t)arg;

	if (qmp_client_connect(v.sock, 1, 10000, &c, &err)) {
		printf("# client %u: %s\n", i, err.desc);
		atomic_fetch_add(&query_errors, 1);
		pthread_barrier_wait(&connected);
		return NULL;
	}
	pthread_barrier_wait(&connected);
	while (!atomic_load(&stop)) {
		struct json_object *r = NULL;

		if (qmp_client_execute(c, cmds[i++ % 4], NULL, &r, &err,
				       30000)) {
			printf("# query: %s\n", err.desc);
			atomic_fetch_add(&query_errors, 1);
		}
		json_object_put(r);
		atomic_fetch_add(&queries, 1);
	}
	qmp_client_close(c);
	return NULL;
}

/* What hotvm says is online, as a mask, from query-cpuhp. */
static unsigned int host_online(void)
{
	struct json_object *r = NULL;
	unsigned int mask = 0;

	if (vmproc_qmp(&v, "query-cpuhp", &r, NULL, 0, NULL))
		return ~0u;
	for (unsigned int c = 0; c < MAX_CPUS; c++) {
		const char *n = vmproc_str(vmproc_cpu(r, c), "host", "name");

		if (n && !strcmp(n, "online"))
			mask |= 1u << c;
	}
	json_object_put(r);
	return mask;
}

/*
 * The one way the two sides may be apart: hotvm flagged the CPU itself
 * (query-cpuhp's "agree": false, or a broken mark), as when a removal
 * times out under a slow guest (ASan in a busy lab) and the guest's walk
 * ends after the host's.  Each such CPU is put back with cpuhp-recover,
 * asked again while the guest is still walking it.  Returns how many were
 * flagged, or -1 if the query or a recovery failed.
 */
static int recover_flagged(void)
{
	struct json_object *r = NULL, *x;
	unsigned int flagged = 0;
	char err[300];
	int n = 0;

	if (vmproc_qmp(&v, "query-cpuhp", &r, NULL, 0, NULL))
		return -1;
	for (unsigned int c = 0; c < MAX_CPUS; c++) {
		struct json_object *o = vmproc_cpu(r, c);

		if ((json_object_object_get_ex(o, "agree", &x) &&
		     !json_object_get_boolean(x)) ||
		    vmproc_flag(o, "host", "broken") ||
		    vmproc_flag(o, "guest", "broken"))
			flagged |= 1u << c;
	}
	json_object_put(r);
	for (unsigned int c = 0; c < MAX_CPUS; c++) {
		int tries = 0;

		if (!(flagged & (1u << c)))
			continue;
		n++;
		/* Each try waits for the guest's walk (timeout-ms). */
		while (vmproc_qmp(&v, "cpuhp-recover", NULL, err, sizeof(err),
				  "{\"cpu\": %u, \"timeout-ms\": 10000}", c)) {
			if (!strstr(err, "try again") || ++tries == 3) {
				printf("# cpuhp-recover %u: %s\n", c, err);
				return -1;
			}
		}
	}
	return n;
}

static void cpulist(unsigned int mask, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int c = 0; c < MAX_CPUS; c++) {
		int e = c;

		if (!(mask & (1u << c)))
			continue;
		while (e + 1 < MAX_CPUS && (mask & (1u << (e + 1))))
			e++;
		n += (size_t)snprintf(buf + n, len - n, n ? ",%d" : "%d", c);
		if (e > c)
			n += (size_t)snprintf(buf + n, len - n, "-%d", e);
		c = e;
	}
}

/* One random operation; counts what it did in ops[]. */
static void one_op(unsigned int mask, unsigned long ops[5])
{
	unsigned int cpu = 1 + (unsigned int)rand() % (MAX_CPUS - 1);
	bool on = mask & (1u << cpu);

	switch (rand() % 5) {
	case 0:
	case 1:
		if (on)
			vmproc_qmp(&v, "device_del", NULL, NULL, 0,
				   "{\"id\": \"s%u\"}", cpu);
		else
			vmproc_qmp(&v, "device_add", NULL, NULL, 0,
				   "{\"driver\": \"host-x86_64-cpu\", "
				   "\"id\": \"s%u\", \"socket-id\": %u}",
				   cpu, cpu);
		ops[on ? 1 : 0]++;
		break;
	case 2:
		vmproc_qmp(&v, "cpu-resize", NULL, NULL, 0, "{\"count\": %d}",
			   1 + rand() % MAX_CPUS);
		ops[2]++;
		break;
	case 3:
		/* A fault on the next add of an offline CPU: it must roll back. */
		if (on)
			break;
		vmproc_qmp(&v, "cpuhp-inject-fault", NULL, NULL, 0,
			   "{\"cpu\": %u, \"side\": \"host\", \"state\": "
			   "\"%s\"}",
			   cpu, host_faults[rand() % nr_host_faults]);
		vmproc_qmp(&v, "cpu-hotplug", NULL, NULL, 0,
			   "{\"cpu\": %u, \"state\": \"online\"}", cpu);
		ops[3]++;
		break;
	default:
		vmproc_qmp(&v, "query-cpuhp", NULL, NULL, 0, NULL);
		ops[4]++;
		break;
	}
}

int main(int argc, char **argv)
{
	static const char *const extra[] = { "--hotplug-timeout", "10000",
					     NULL };
	unsigned int cycles = argc > 1 ? (unsigned int)atoi(argv[1]) : 2000;
	unsigned int nclients = argc > 2 ? (unsigned int)atoi(argv[2]) : 3;
	int fds[MAX_SAMPLES], threads[MAX_SAMPLES], vcpus[MAX_SAMPLES];
	long rss[MAX_SAMPLES];
	unsigned int nsamples = 0, disagree = 0, recovered = 0;
	unsigned long ops[5] = { 0 };
	pthread_t tids[MAX_CLIENTS];
	bool flat = true;
	char want[64];
	const char *slack_env = getenv("SOAK_RSS_SLACK_KB");
	long slack = slack_env ? atol(slack_env) : RSS_SLACK_KB;

	if (nclients > MAX_CLIENTS)
		nclients = MAX_CLIENTS;
	if (cycles < 2 * SAMPLE) {
		printf("soak: %u cycles take %u samples: the RSS bound needs "
		       "three (at least %u cycles)\n",
		       cycles, cycles / SAMPLE + 1, 2 * SAMPLE);
		return 2;
	}
	if (access("/dev/kvm", R_OK | W_OK)) {
		printf("soak: skipped: /dev/kvm is absent (tests/lab runs it "
		       "in the nested lab)\n");
		return 77; /* meson's "skipped" */
	}
	srand(12345);
	if (vmproc_start(&v, "boot=1,max=8", "", extra)) {
		printf("soak: the VM did not start\n");
		return 2;
	}
	nr_host_faults = vmproc_states(&v, "host-states", host_faults, 16);
	if (nr_host_faults <= 0) {
		printf("soak: query-cpuhp gave no host states\n");
		vmproc_stop(&v);
		return 2;
	}
	/*
	 * Create every slot's vCPU once: its parked fd and thread are part
	 * of the baseline.
	 */
	vmproc_qmp(&v, "cpu-resize", NULL, NULL, 0, "{\"count\": %d}",
		   MAX_CPUS);
	vmproc_qmp(&v, "cpu-resize", NULL, NULL, 0, "{\"count\": 1}");
	pthread_barrier_init(&connected, NULL, nclients + 1);
	for (unsigned int i = 0; i < nclients; i++)
		pthread_create(&tids[i], NULL, client, (void *)(uintptr_t)i);
	pthread_barrier_wait(&connected);

	for (unsigned int n = 0; n <= cycles; n++) {
		unsigned int mask = host_online();

		cpulist(mask, want, sizeof(want));
		if (mask == ~0u || vmproc_wait_online(&v, want, 30000)) {
			int rec = recover_flagged();

			if (rec > 0) {
				printf("# cycle %u: hotvm says %s, the guest "
				       "%s, and flagged %d CPU(s): recovered\n",
				       n, want, v.online, rec);
				recovered += (unsigned int)rec;
				mask = host_online();
				cpulist(mask, want, sizeof(want));
			}
			if (rec <= 0 || mask == ~0u ||
			    vmproc_wait_online(&v, want, 30000)) {
				printf("# cycle %u: hotvm says %s, the guest "
				       "%s\n",
				       n, want, v.online);
				disagree++;
			}
		}
		if (n % SAMPLE == 0 && nsamples < MAX_SAMPLES) {
			vmproc_qmp(&v, "cpu-resize", NULL, NULL, 0,
				   "{\"count\": 1}");
			vmproc_wait_online(&v, "0", 30000);
			fds[nsamples] = vmproc_fds(&v);
			threads[nsamples] =
				vmproc_threads(&v, nsamples ? threads[0] : -1);
			vcpus[nsamples] =
				vmproc_vcpu_threads(&v, MAX_CPUS, NULL, 0);
			rss[nsamples] = rss_kb(v.pid);
			printf("sample %4u: fds %d threads %d (vCPU %d) rss "
			       "%ld "
			       "KiB\n",
			       n, fds[nsamples], threads[nsamples],
			       vcpus[nsamples], rss[nsamples]);
			fflush(stdout);
			nsamples++;
			continue;
		}
		one_op(mask, ops);
	}
	atomic_store(&stop, true);
	for (unsigned int i = 0; i < nclients; i++)
		pthread_join(tids[i], NULL);

	for (unsigned int i = 1; i < nsamples; i++) {
		if (fds[i] != fds[0] || threads[i] != threads[0])
			flat = false;
		if (i > 1 && rss[i] > rss[1] + slack) {
			printf("# sample %u: rss %ld KiB, over %ld + %ld\n", i,
			       rss[i], rss[1], slack);
			flat = false;
		}
	}
	/* One thread per slot, running or parked: 1 running, 7 parked. */
	for (unsigned int i = 0; i < nsamples; i++)
		if (vcpus[i] != MAX_CPUS)
			flat = false;
	printf("soak: %u cycles: %lu adds, %lu removals, %lu resizes, %lu "
	       "injected faults, %lu queries; %lu queries from %u other "
	       "clients (%lu failed)\n",
	       cycles, ops[0], ops[1], ops[2], ops[3], ops[4],
	       atomic_load(&queries), nclients, atomic_load(&query_errors));
	printf("soak: fds %d -> %d, threads %d -> %d, rss %ld -> %ld KiB; "
	       "%u disagreements (%u CPUs hotvm flagged itself, recovered); "
	       "%s\n",
	       fds[0], fds[nsamples - 1], threads[0], threads[nsamples - 1],
	       rss[0], rss[nsamples - 1], disagree, recovered,
	       flat ? "flat" : "NOT FLAT");
	if (vmproc_stop(&v) != 0) {
		printf("soak: hotvm did not exit cleanly\n");
		return 1;
	}
	return flat && !disagree && !atomic_load(&query_errors) ? 0 : 1;
}
