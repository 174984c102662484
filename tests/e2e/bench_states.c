// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench-states: hot-add request to guest online and removal request to
 * vCPU parked, median and p99 over many cycles, for one CPU at a time, for
 * a batch of 8 (cpu-resize), for 8 device_add/device_del sent at once (a
 * burst, which hotvm runs as one batch) and the same 8 one after another,
 * with the median time of every state on both sides.
 * A benchmark, not a test: it prints figures.  The `states` phase of
 * tools/bench tiny, the benchmarks' one front end.
 *
 *   HOTVM=build/vmm/hotvm build/tests/e2e/bench-states [CYCLES]
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmproc.h"

#define MAX_CYCLES 1000
#define MAX_KEYS   64

struct series {
	double v[MAX_CYCLES];
	unsigned int n;
};

/*
 * Per-state durations, keyed "side state direction", and hotvm's own
 * share of each (a host state's own-us); "op" rows are the whole
 * operation's own-us and own-exit-us.
 */
static struct {
	char key[96];
	struct series s, own;
} keys[MAX_KEYS];
static unsigned int nr_keys;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(struct series *s, double p)
{
	unsigned int i;

	if (!s->n)
		return 0;
	qsort(s->v, s->n, sizeof(s->v[0]), cmp);
	i = (unsigned int)(p * (s->n - 1) + 0.5);
	return s->v[i];
}

static void add(struct series *s, double v)
{
	if (s->n < MAX_CYCLES)
		s->v[s->n++] = v;
}

/* The slot of @side @name @dir, a new one if it has none; MAX_KEYS: full. */
static unsigned int key_of(const char *side, const char *name, const char *dir)
{
	char key[96];
	unsigned int k;

	snprintf(key, sizeof(key), "%-5s %-20s %s", side, name, dir);
	for (k = 0; k < nr_keys && strcmp(keys[k].key, key); k++)
		;
	if (k == nr_keys && nr_keys < MAX_KEYS)
		snprintf(keys[nr_keys++].key, sizeof(key), "%s", key);
	return k;
}

/* @o's member @m into series @s, if it has it. */
static void add_member(struct series *s, struct json_object *o, const char *m)
{
	struct json_object *x;

	if (json_object_object_get_ex(o, m, &x))
		add(s, json_object_get_double(x));
}

static void record_steps(struct json_object *r, bool on)
{
	const char *dir = on ? "up" : "down";
	struct json_object *steps, *st;
	unsigned int k;

	if (!json_object_object_get_ex(r, "steps", &steps))
		return;
	for (size_t i = 0; i < json_object_array_length(steps); i++) {
		st = json_object_array_get_idx(steps, i);
		k = key_of(vmproc_str(st, "side", NULL) ?: "?",
			   vmproc_str(st, "name", NULL) ?: "?",
			   vmproc_str(st, "direction", NULL) ?: "?");
		if (k == MAX_KEYS)
			continue;
		add_member(&keys[k].s, st, "us");
		add_member(&keys[k].own, st, "own-us");
	}
	k = key_of("op", "own-us", dir);
	if (k < MAX_KEYS) {
		add_member(&keys[k].s, r, "own-us");
		add_member(&keys[k].own, r, "own-us");
	}
	k = key_of("op", "own-exit-us", dir);
	if (k < MAX_KEYS) {
		add_member(&keys[k].s, r, "own-exit-us");
		add_member(&keys[k].own, r, "own-exit-us");
	}
}

/* One cpu-hotplug, timed until the guest prints the expected cpulist. */
static int timed(struct vmproc *v, unsigned int cpu, bool on, const char *list,
		 struct series *s)
{
	struct json_object *r = NULL;
	char err[600];
	double t0 = now_us();
	int ret = vmproc_qmp(v, "cpu-hotplug", &r, err, sizeof(err),
			     "{\"cpu\": %u, \"state\": \"%s\"}", cpu,
			     on ? "online" : "offline");

	if (!ret)
		ret = vmproc_wait_online(v, list, VMPROC_TIMEOUT_MS);
	if (ret) {
		fprintf(stderr, "bench-states: cpu %u %s: %s\n", cpu,
			on ? "online" : "offline", err);
		json_object_put(r);
		return ret;
	}
	add(s, (now_us() - t0) / 1e3);
	if (getenv("BENCH_VERBOSE"))
		printf("%s\n", json_object_to_json_string(r));
	record_steps(r, on);
	json_object_put(r);
	return 0;
}

static int resize(struct vmproc *v, unsigned int count, const char *list,
		  struct series *s)
{
	char err[600];
	double t0 = now_us();
	int ret = vmproc_qmp(v, "cpu-resize", NULL, err, sizeof(err),
			     "{\"count\": %u}", count);

	if (!ret)
		ret = vmproc_wait_online(v, list, VMPROC_TIMEOUT_MS);
	if (ret)
		fprintf(stderr, "bench-states: resize to %u: %s\n", count, err);
	else
		add(s, (now_us() - t0) / 1e3);
	return ret;
}

/*
 * device_add (or device_del) of CPUs 1..n, sent at once (one burst) or
 * each after the reply to the one before; the time until the guest's
 * online line says @list.
 */
static int burst(struct vmproc *v, unsigned int n, bool plug, bool at_once,
		 const char *list, struct series *s)
{
	char err[600];
	double t0 = now_us();
	int ret = vmproc_burst(v, plug, n, "b", at_once, err, sizeof(err));

	if (!ret)
		ret = vmproc_wait_online(v, list, VMPROC_TIMEOUT_MS);
	if (ret)
		fprintf(stderr, "bench-states: %s burst: %s\n",
			plug ? "device_add" : "device_del", err);
	else
		add(s, (now_us() - t0) / 1e3);
	return ret;
}

static void row(const char *what, struct series *s)
{
	unsigned int n = s->n;

	printf("%-34s %5u %10.2f %10.2f\n", what, n, pct(s, 0.5), pct(s, 0.99));
}

static void state_row(struct series *s, struct series *own, const char *what)
{
	char o[32] = "-";

	if (own->n)
		snprintf(o, sizeof(o), "%.0f", pct(own, 0.5));
	printf("%-34s %5u %10.2f %10.2f %10s\n", what, s->n, pct(s, 0.5),
	       pct(s, 0.99), o);
}

int main(int argc, char **argv)
{
	unsigned int cycles = argc > 1 ? (unsigned int)atoi(argv[1]) : 20;
	struct series add1 = { 0 }, del1 = { 0 }, add8 = { 0 }, del8 = { 0 };
	struct series badd = { 0 }, bdel = { 0 }, sadd = { 0 }, sdel = { 0 };
	struct vmproc v;

	if (cycles < 1 || cycles > MAX_CYCLES) {
		fprintf(stderr, "usage: bench-states [CYCLES 1..%d]\n",
			MAX_CYCLES);
		return 2;
	}
	if (vmproc_start(&v, "boot=1,max=9", "", NULL)) {
		fprintf(stderr, "bench-states: cannot start %s\n",
			vmproc_hotvm());
		vmproc_stop(&v);
		return 1;
	}
	for (unsigned int i = 0; i < cycles; i++)
		if (timed(&v, 1, true, "0-1", &add1) ||
		    timed(&v, 1, false, "0", &del1))
			break;
	for (unsigned int i = 0; i < (cycles + 3) / 4; i++)
		if (resize(&v, 9, "0-8", &add8) || resize(&v, 1, "0", &del8))
			break;
	for (unsigned int i = 0; i < (cycles + 3) / 4; i++)
		if (burst(&v, 8, true, true, "0-8", &badd) ||
		    burst(&v, 8, false, true, "0", &bdel) ||
		    burst(&v, 8, true, false, "0-8", &sadd) ||
		    burst(&v, 8, false, false, "0", &sdel))
			break;
	vmproc_stop(&v);

	printf("# hotvm %s, tiny guest, boot=1 max=9; ms from request to "
	       "the guest's online line\n",
	       vmproc_hotvm());
	printf("%-34s %5s %10s %10s\n", "operation", "n", "median_ms",
	       "p99_ms");
	row("hot-add 1 vCPU", &add1);
	row("hot-remove 1 vCPU (to parked)", &del1);
	row("hot-add 8 vCPUs (cpu-resize 1->9)", &add8);
	row("hot-remove 8 vCPUs (9->1)", &del8);
	row("8 device_add at once (one batch)", &badd);
	row("8 device_del at once (one batch)", &bdel);
	row("8 device_add one after another", &sadd);
	row("8 device_del one after another", &sdel);
	printf("\n# per state, single-CPU cycles (us); own_us: hotvm's own "
	       "share, median (op: the whole operation's)\n");
	printf("%-34s %5s %10s %10s %10s\n", "side state direction", "n",
	       "median_us", "p99_us", "own_us");
	for (unsigned int k = 0; k < nr_keys; k++)
		state_row(&keys[k].s, &keys[k].own, keys[k].key);
	return add1.n == cycles && del1.n == cycles ? 0 : 1;
}
