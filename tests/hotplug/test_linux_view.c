// SPDX-License-Identifier: GPL-2.0-only
/*
 * Linux's word through the guest agent (vmm/hotplug/linux_view.c) on the
 * real controller over the fake machine of the API tests, with a fake
 * Linux agent on the real UART: it numbers its CPUs its own way (logical
 * ids are not slots), answers guest-get-vcpus and the firmware-node reads
 * that match ids to slots, and onlines CPUs for guest-set-vcpus.  What is
 * checked: a CPU Linux offlines or onlines by itself changes the announced
 * online set (CPUS_CHANGED) and what query-cpuhp shows; a bad answer
 * (two ids for one slot, an id out of range, a path naming no slot) is
 * refused and changes nothing; an agent that stops answering costs one
 * timeout, after which quick refreshes do not wait for it.
 */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "fake_vm.h"
#include "hotplug.h"
#include "hotplug_linux.h"
#include "hotplug_vmm.h"
#include "hotvm/guest_states.h"
#include "sim_guest.h"
#include "uart_guest.h"

#define MAX	   4
#define T_GUEST_MS 300
/* The lying agent's machine: max=1024, every id listed, 0.7 s a file call. */
#define LIAR_CPUS     1024
#define LIAR_DELAY_MS 700

enum linux_mode {
	LINUX_OK,
	LINUX_DUP,	 /* two logical ids claim one slot */
	LINUX_RANGE,	 /* a logical id past every possible CPU */
	LINUX_BADPATH,	 /* a firmware node that names no slot */
	LINUX_MUTE,	 /* answers nothing */
	LINUX_BADSTATES, /* a state list that is not Linux's format */
	LINUX_LIAR, /* lists LIAR_CPUS CPUs; each file call: a late error */
};

/*
 * The fake Linux's hotplug states (its /sys/devices/system/cpu/hotplug/
 * states): 50 is in the starting section and 0 has no callbacks, so
 * Linux refuses a fault there; 1 and 100 take one.
 */
#define STATES_PATH "/sys/devices/system/cpu/hotplug/states"
static const char fake_states[] = "  0: offline\n  1: threads:prepare\n"
				  " 50: ap:starting\n100: sched:active\n"
				  "200: online\n";
#define H_FW	 1000 /* file handles: + Linux's CPU */
#define H_STATES 2000
#define H_FAIL_R 3000
#define H_FAIL_W 4000

static struct {
	struct uart_guest u;
	pthread_t thread;
	_Atomic bool stop;
	_Atomic int mode;
	pthread_mutex_t lock; /* the fake Linux's CPUs, set by the test */
	int slot_of[MAX];     /* logical id -> slot, -1 not present */
	bool online[MAX];
	char line[4096];
	size_t len;
	/* cpuN/hotplug/fail: only for CPUs present at boot (has_fail) */
	bool has_fail[MAX];
	int fail[MAX];
	char written[MAX][32]; /* what guest-file-write gave, decoded */
	unsigned int file_reads;
	unsigned int tracefs_opens;	/* guest-file-open under tracefs */
	_Atomic unsigned int shutdowns; /* guest-shutdown, mode powerdown */
	_Atomic unsigned int opens;	/* guest-file-open, any */
	_Atomic unsigned int answered;	/* LINUX_LIAR: its late errors */
	_Atomic unsigned char liar_asked[LIAR_CPUS]; /* paths, per id */
} lx;

/* What the events said last: the online set. */
static struct {
	pthread_mutex_t lock;
	char cpulist[64];
	unsigned int count, events;
} seen = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void ev_online(void *ctx, unsigned int cpu, bool online,
		      unsigned int count, const char *cpulist)
{
	(void)ctx;
	(void)cpu;
	(void)online;
	pthread_mutex_lock(&seen.lock);
	snprintf(seen.cpulist, sizeof(seen.cpulist), "%s", cpulist);
	seen.count = count;
	seen.events++;
	pthread_mutex_unlock(&seen.lock);
}

static void say(const char *s)
{
	uart_guest_write(&lx.u, s, strlen(s));
}

static void say_json(struct json_object *ret)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "return", ret);
	say(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	say("\n");
	json_object_put(o);
}

static void b64(const char *in, char *out)
{
	static const char d[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvw"
		"xyz0123456789+/";
	size_t n = strlen(in), o = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned int v = (unsigned char)in[i] << 16;

		v |= i + 1 < n ? (unsigned char)in[i + 1] << 8 : 0;
		v |= i + 2 < n ? (unsigned char)in[i + 2] : 0;
		out[o++] = d[(v >> 18) & 63];
		out[o++] = d[(v >> 12) & 63];
		out[o++] = i + 1 < n ? d[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? d[v & 63] : '=';
	}
	out[o] = 0;
}

static void unb64(const char *in, char *out, size_t max)
{
	static const char d[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvw"
		"xyz0123456789+/";
	unsigned int acc = 0, bits = 0;
	size_t o = 0;

	for (; *in && *in != '='; in++) {
		const char *p = strchr(d, *in);

		acc = (acc << 6) | (unsigned int)(p ? p - d : 0);
		bits += 6;
		if (bits >= 8 && o + 1 < max) {
			bits -= 8;
			out[o++] = (char)(acc >> bits);
		}
	}
	out[o] = 0;
}

static void say_error(const char *desc)
{
	char buf[256];

	snprintf(buf, sizeof(buf),
		 "{\"error\": {\"class\": \"GenericError\", \"desc\": "
		 "\"%s\"}}\n",
		 desc);
	say(buf);
}

static struct json_object *read_reply(const char *text)
{
	struct json_object *o = json_object_new_object();
	char enc[256];

	b64(text, enc);
	json_object_object_add(o, "count",
			       json_object_new_int((int)strlen(text)));
	json_object_object_add(o, "buf-b64", json_object_new_string(enc));
	json_object_object_add(o, "eof", json_object_new_boolean(true));
	return o;
}

/* guest-file-open of the files the fake Linux has. */
static void file_open(struct json_object *args)
{
	const char *p =
		json_object_get_string(json_object_object_get(args, "path"));
	struct json_object *m = json_object_object_get(args, "mode");
	bool w = m && json_object_get_string(m)[0] == 'w';
	int l = -1;

	if (strstr(p, "/tracing/"))
		lx.tracefs_opens++;
	if (!strcmp(p, STATES_PATH)) {
		say_json(json_object_new_int(H_STATES));
		return;
	}
	if (sscanf(p, "/sys/devices/system/cpu/cpu%d/", &l) != 1 || l < 0 ||
	    l >= MAX || lx.slot_of[l] < 0)
		l = -1;
	if (l >= 0 && strstr(p, "/hotplug/fail") && lx.has_fail[l])
		say_json(json_object_new_int((w ? H_FAIL_W : H_FAIL_R) + l));
	else if (l >= 0 && strstr(p, "/firmware_node/path"))
		say_json(json_object_new_int(H_FW + l));
	else
		say_error("failed to open file: No such file or directory");
}

/* guest-file-write into cpuN/hotplug/fail's buffer (stdio's, in qemu-ga). */
static void file_write(long h, struct json_object *args)
{
	char *w = lx.written[h - H_FAIL_W], buf[64];

	unb64(json_object_get_string(json_object_object_get(args, "buf-b64")),
	      w, sizeof(lx.written[0]));
	snprintf(buf, sizeof(buf),
		 "{\"return\": {\"count\": %zu, \"eof\": false}}\n", strlen(w));
	say(buf);
}

/* guest-file-flush: where Linux's store of cpuN/hotplug/fail says no. */
static void file_flush(long h)
{
	int l = (int)(h - H_FAIL_W), v;

	if (l < 0 || l >= MAX) {
		say_json(json_object_new_object());
		return;
	}
	v = atoi(lx.written[l]);
	if (v != -1 && v != 1 && v != 100) {
		say_error("failed to flush file: Invalid argument");
		return;
	}
	lx.fail[l] = v;
	say_json(json_object_new_object());
}

static struct json_object *get_vcpus(int mode)
{
	struct json_object *a = json_object_new_array();

	for (int l = 0; l < MAX; l++) {
		struct json_object *e;

		if (lx.slot_of[l] < 0)
			continue;
		e = json_object_new_object();
		json_object_object_add(
			e, "logical-id",
			json_object_new_int(mode == LINUX_RANGE && l == 1 ? 99
									  : l));
		/* Online: not offlined by hand, and up in the guest's table. */
		json_object_object_add(
			e, "online",
			json_object_new_boolean(
				lx.online[l] &&
				sim_guest_state((unsigned int)lx.slot_of[l]) ==
					GUEST_ONLINE));
		json_object_object_add(e, "can-offline",
				       json_object_new_boolean(l != 0));
		json_object_array_add(a, e);
	}
	return a;
}

/* The firmware node's path of Linux's CPU @l, as the DSDT names it. */
static struct json_object *file_read(int l, int mode)
{
	struct json_object *o = json_object_new_object();
	char path[64], enc[96];
	int slot = lx.slot_of[l];

	if (mode == LINUX_DUP && l == 2)
		slot = lx.slot_of[1];
	snprintf(path, sizeof(path), "\\_SB_.CPUS.C%03X\n",
		 mode == LINUX_BADPATH ? 0xfff : slot);
	b64(path, enc);
	lx.file_reads++;
	json_object_object_add(o, "count",
			       json_object_new_int((int)strlen(path)));
	json_object_object_add(o, "buf-b64", json_object_new_string(enc));
	json_object_object_add(o, "eof", json_object_new_boolean(true));
	return o;
}

static void file_read_any(long h, int mode)
{
	char buf[32];

	if (h == H_STATES) {
		say_json(read_reply(mode == LINUX_BADSTATES
					    ? "  0: offline\n  7 oops\n"
					    : fake_states));
	} else if (h >= H_FAIL_R && h < H_FAIL_R + MAX) {
		snprintf(buf, sizeof(buf), "%d\n", lx.fail[h - H_FAIL_R]);
		say_json(read_reply(buf));
	} else {
		say_json(file_read(
			h - H_FW >= 0 && h - H_FW < MAX ? (int)(h - H_FW) : 0,
			mode));
	}
}

static void set_vcpus(struct json_object *args)
{
	struct json_object *v = json_object_object_get(args, "vcpus");
	int n = 0;

	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		int l = json_object_get_int(
			json_object_object_get(e, "logical-id"));
		bool on = json_object_get_boolean(
			json_object_object_get(e, "online"));

		if (l < 0 || l >= MAX || lx.slot_of[l] < 0)
			continue;
		if (!on && lx.fail[l] != -1) {
			/* Linux's one-shot fault: the offline rolls back. */
			lx.fail[l] = -1;
			if (!n) {
				say_error("failed to set CPU offline: Resource "
					  "temporarily unavailable");
				return;
			}
			break;
		}
		lx.online[l] = on;
		/* Writing 1 (0) to cpuN/online starts (stops) the CPU. */
		if (on ? sim_guest_online((unsigned int)lx.slot_of[l])
		       : sim_guest_offline((unsigned int)lx.slot_of[l]))
			continue;
		n++;
	}
	say_json(json_object_new_int(n));
}

/* A check on another thread, and whether it ended within @ms. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	int ret;
} chk = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* LINUX_LIAR: every CPU listed, every file call a late error. */
static void liar(const char *cmd, struct json_object *args)
{
	if (!strcmp(cmd, "guest-get-vcpus")) {
		struct json_object *a = json_object_new_array();

		for (int l = 0; l < LIAR_CPUS; l++) {
			struct json_object *e = json_object_new_object();

			json_object_object_add(e, "logical-id",
					       json_object_new_int(l));
			json_object_object_add(e, "online",
					       json_object_new_boolean(true));
			json_object_array_add(a, e);
		}
		say_json(a);
		return;
	}
	if (!strcmp(cmd, "guest-file-open")) {
		const char *p = json_object_get_string(
			json_object_object_get(args, "path"));
		int l = -1;

		if (sscanf(p, "/sys/devices/system/cpu/cpu%d/", &l) == 1 &&
		    l >= 0 && l < LIAR_CPUS)
			atomic_fetch_add(&lx.liar_asked[l], 1);
		pthread_mutex_lock(&chk.lock);
		atomic_fetch_add(&lx.opens, 1);
		pthread_cond_broadcast(&chk.cond);
		pthread_mutex_unlock(&chk.lock);
	}
	/* A slow agent by design: the host must not wait for it. */
	nanosleep(&(struct timespec){ .tv_nsec = LIAR_DELAY_MS * 1000000L },
		  NULL);
	say_error("failed to open file: Permission denied");
	pthread_mutex_lock(&chk.lock);
	atomic_fetch_add(&lx.answered, 1);
	pthread_cond_broadcast(&chk.cond);
	pthread_mutex_unlock(&chk.lock);
}

static void on_request(const char *cmd, struct json_object *args, int mode)
{
	long h = json_object_get_int64(json_object_object_get(args, "handle"));

	if (mode == LINUX_LIAR) {
		liar(cmd, args);
		return;
	}
	if (!strcmp(cmd, "guest-get-vcpus")) {
		say_json(get_vcpus(mode));
	} else if (!strcmp(cmd, "guest-file-open")) {
		atomic_fetch_add(&lx.opens, 1);
		file_open(args);
	} else if (!strcmp(cmd, "guest-file-read")) {
		file_read_any(h, mode);
	} else if (!strcmp(cmd, "guest-file-write") && h >= H_FAIL_W &&
		   h < H_FAIL_W + MAX) {
		file_write(h, args);
	} else if (!strcmp(cmd, "guest-file-flush")) {
		file_flush(h);
	} else if (!strcmp(cmd, "guest-file-close")) {
		say_json(json_object_new_object());
	} else if (!strcmp(cmd, "guest-set-vcpus")) {
		set_vcpus(args);
	} else if (!strcmp(cmd, "guest-shutdown")) {
		/* It never answers: the guest goes down. */
		if (!strcmp(json_object_get_string(
				    json_object_object_get(args, "mode")),
			    "powerdown"))
			atomic_fetch_add(&lx.shutdowns, 1);
	} else {
		say_error("no");
	}
}

static void on_line(void)
{
	struct json_object *o, *c, *args = NULL;
	int mode = atomic_load(&lx.mode);

	lx.line[lx.len] = 0;
	o = json_tokener_parse(lx.line);
	if (!o || !json_object_object_get_ex(o, "execute", &c) ||
	    mode == LINUX_MUTE) {
		json_object_put(o);
		return;
	}
	json_object_object_get_ex(o, "arguments", &args);
	pthread_mutex_lock(&lx.lock);
	if (!strcmp(json_object_get_string(c), "guest-sync-delimited")) {
		char buf[64];

		snprintf(buf, sizeof(buf), "\xff{\"return\": %lld}\n",
			 (long long)json_object_get_int64(
				 json_object_object_get(args, "id")));
		say(buf);
	} else {
		on_request(json_object_get_string(c), args, mode);
	}
	pthread_mutex_unlock(&lx.lock);
	json_object_put(o);
}

static void *linux_main(void *arg)
{
	struct pollfd p = { .fd = uart_guest_irq_fd(), .events = POLLIN };
	int c;

	(void)arg;
	uart_guest_rx_irq(&lx.u, true);
	while (!atomic_load(&lx.stop)) {
		if (poll(&p, 1, -1) < 0)
			continue;
		uart_guest_irq_ack();
		while ((c = uart_guest_getc(&lx.u)) >= 0) {
			if (c == 0xff) {
				lx.len = 0;
			} else if (c == '\n') {
				on_line();
				lx.len = 0;
			} else if (lx.len < sizeof(lx.line) - 1) {
				lx.line[lx.len++] = (char)c;
			}
		}
	}
	return NULL;
}

static struct fake_vm *fv;

/* @boot boot CPUs of @max; Linux calls slot 0..3 its CPUs 0, 2, 3, 1. */
static void setup_max(unsigned int max, unsigned int boot)
{
	static const int order[MAX] = { 0, 3, 1, 2 };

	memset(&lx.u, 0, sizeof(lx.u));
	atomic_store(&lx.stop, false);
	atomic_store(&lx.mode, LINUX_OK);
	pthread_mutex_init(&lx.lock, NULL);
	for (int l = 0; l < MAX; l++) {
		lx.slot_of[l] = order[l];
		lx.online[l] = true;
		/* Linux 6.1: cpuN/hotplug/ only for CPUs present at boot. */
		lx.has_fail[l] = (unsigned int)order[l] < boot;
		lx.fail[l] = -1;
	}
	lx.file_reads = 0;
	lx.tracefs_opens = 0;
	atomic_store(&lx.opens, 0);
	atomic_store(&lx.answered, 0);
	atomic_store(&lx.shutdowns, 0);
	CHECK_EQ(uart_guest_init(&lx.u), 0);
	fake_vm_irq_hook = uart_guest_line;
	fake_vm_agent = &lx.u.agent;
	CHECK_EQ(pthread_create(&lx.thread, NULL, linux_main, NULL), 0);
	CHECK_EQ(fake_vm_create(max, boot, T_GUEST_MS, &fv), 0);
	hotplug_set_events(fv->hp, &(struct hp_events){ .online = ev_online });
	seen.events = 0;
}

static void setup_boot(unsigned int boot)
{
	setup_max(MAX, boot);
}

static void setup(void)
{
	setup_boot(MAX);
}

static void teardown(void)
{
	fake_vm_destroy(fv);
	fake_vm_agent = NULL;
	atomic_store(&lx.stop, true);
	uart_guest_kick();
	pthread_join(lx.thread, NULL);
	fake_vm_irq_hook = NULL;
	uart_guest_destroy(&lx.u);
	pthread_mutex_destroy(&lx.lock);
	sim_guest_linux(false, false);
	sim_guest_linux_waits_offline(false);
}

/* Linux's CPU @l goes @on by itself (echo 0 > cpuN/online). */
static void linux_set(int l, bool on)
{
	pthread_mutex_lock(&lx.lock);
	lx.online[l] = on;
	pthread_mutex_unlock(&lx.lock);
}

static void check_view(unsigned int cpu, int linux_cpu, int online)
{
	struct hp_cpu_view v;

	CHECK_EQ(hotplug_cpu_view(fv->hp, cpu, &v), 0);
	CHECK_EQ(v.linux_cpu, linux_cpu);
	CHECK_EQ(v.linux_online, online);
}

static void test_follows_linux(void)
{
	setup();
	CHECK(hotplug_has_agent(fv->hp));
	/* Nothing known before the first answer. */
	check_view(1, -1, -1);
	CHECK_EQ(hotplug_agent_refresh(fv->hp, false), 0);
	CHECK_EQ(lx.file_reads, MAX); /* each id matched once */
	check_view(1, 2, 1);
	check_view(3, 1, 1);
	CHECK_EQ(seen.events, 0); /* nothing changed */
	/* Linux offlines its CPU 2, which is slot 1. */
	linux_set(2, false);
	CHECK_EQ(hotplug_agent_refresh(fv->hp, true), 0);
	check_view(1, 2, 0);
	CHECK_EQ(seen.events, 1);
	CHECK_STREQ(seen.cpulist, "0,2-3");
	CHECK_EQ(seen.count, 3);
	{ /* query-cpus-fast and resize leave it out */
		struct hp_cpu_view v;

		CHECK_EQ(hotplug_cpu_view(fv->hp, 1, &v), 0);
		CHECK(!hotplug_cpu_counted(&v));
		CHECK(hotplug_cpu_plugged(&v));
	}
	/* The same answer again: no event; no more file reads. */
	CHECK_EQ(hotplug_agent_refresh(fv->hp, true), 0);
	CHECK_EQ(seen.events, 1);
	CHECK_EQ(lx.file_reads, MAX);
	/* query-cpuhp's check asks too. */
	linux_set(2, true);
	CHECK(hotplug_check(fv->hp) >= 0);
	check_view(1, 2, 1);
	CHECK_EQ(seen.events, 2);
	CHECK_STREQ(seen.cpulist, "0-3");
	CHECK_EQ(hotplug_check(fv->hp), 0); /* the sides still agree */
	teardown();
}

/* A bad answer is refused whole: nothing changes, nothing is believed. */
static void check_refused(enum linux_mode mode)
{
	unsigned int opens;

	setup();
	hotplug_agent_set_miss_wait(fv->hp, 300);
	linux_set(2, false);
	atomic_store(&lx.mode, mode);
	CHECK_EQ(hotplug_agent_refresh(fv->hp, false),
		 mode == LINUX_BADPATH ? 0 : -EPROTO);
	check_view(1, -1, -1);
	CHECK_EQ(seen.events, 0);
	atomic_store(&lx.mode, LINUX_OK);
	opens = atomic_load(&lx.opens);
	CHECK_EQ(hotplug_agent_refresh(fv->hp, false), 0);
	if (mode == LINUX_BADPATH) {
		/* A path that named no slot is not asked again at once... */
		CHECK_EQ(atomic_load(&lx.opens), opens);
		check_view(1, -1, -1);
		CHECK_EQ(seen.events, 0);
		/* ... but after its wait (the time itself is the event). */
		nanosleep(&(struct timespec){ .tv_nsec = 400000000L }, NULL);
		CHECK_EQ(hotplug_agent_refresh(fv->hp, false), 0);
		CHECK_EQ(atomic_load(&lx.opens), opens + MAX);
	}
	check_view(1, 2, 0);
	CHECK_EQ(seen.events, 1);
	teardown();
}

static void test_bad_answers(void)
{
	check_refused(LINUX_DUP);
	check_refused(LINUX_RANGE);
	check_refused(LINUX_BADPATH);
}

/* A silent agent: one timeout, then quick refreshes do not wait. */
static void test_silent_agent(void)
{
	setup();
	CHECK_EQ(hotplug_agent_refresh(fv->hp, false), 0);
	atomic_store(&lx.mode, LINUX_MUTE);
	CHECK_EQ(hotplug_agent_refresh(fv->hp, true), -ETIMEDOUT);
	CHECK_EQ(hotplug_agent_refresh(fv->hp, true), -EAGAIN);
	check_view(1, 2, 1); /* as last known */
	atomic_store(&lx.mode, LINUX_OK);
	CHECK_EQ(hotplug_agent_refresh(fv->hp, false), 0);
	CHECK_EQ(hotplug_agent_refresh(fv->hp, true), 0);
	teardown();
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/*
 * "wait": "started" on a Linux-like guest: without an onlining rule the
 * agent onlines the CPU as soon as Linux acknowledged it (no grace time:
 * this fake agent answers in microseconds, so the add takes well under
 * the 1 s the grace time was), and the report says so; with one, Linux
 * does it itself.
 */
static void test_wait_started(void)
{
	struct hp_report rep;
	struct hp_cpu_view v;
	unsigned int opens;
	uint64_t t0;

	sim_guest_linux(true, false);
	setup_boot(2);
	/*
	 * Linux's CPUs 2 and 3 will be slots 1 and 2 (order above); its CPU
	 * 3 appears with the hot-add, as a real Linux's does.
	 */
	lx.slot_of[3] = -1;
	CHECK_EQ(hotplug_agent_refresh(fv->hp, false), 0);
	lx.slot_of[3] = 2;
	opens = atomic_load(&lx.opens);
	t0 = now_ms();
	CHECK_EQ(hotplug_cpu_add(fv->hp, 2, "c2", 3000, HOTPLUG_WAIT_STARTED,
				 &rep),
		 0);
	printf("# onlined through the agent in %llu ms\n",
	       (unsigned long long)(now_ms() - t0));
	CHECK(now_ms() - t0 < 700);
	if (rep.err.code)
		printf("# %s\n", hv_err_msg(&rep.err));
	CHECK_STREQ(rep.onlined_by, "agent");
	CHECK_EQ(hotplug_cpu_view(fv->hp, 2, &v), 0);
	CHECK_EQ(v.linux_online, 1);
	CHECK_EQ(v.linux_cpu, 3);
	/*
	 * Linux's one new id is the acknowledged slot's: matched without
	 * reading its firmware node (match_expected()).
	 */
	CHECK_EQ(atomic_load(&lx.opens), opens);
	CHECK_EQ(v.stage, HP_STAGE_STARTED);
	CHECK_STREQ(seen.cpulist, "0-2");
	/* Without the agent's help the same add would have timed out. */
	sim_guest_linux(true, true);
	CHECK_EQ(hotplug_cpu_add(fv->hp, 3, "c3", 3000, HOTPLUG_WAIT_STARTED,
				 &rep),
		 0);
	CHECK_STREQ(rep.onlined_by, "guest");
	CHECK_EQ(hotplug_check(fv->hp), 0);
	teardown();
}

/* system_powerdown {"mode": "agent"}: guest-shutdown, done once read. */
static void test_shutdown(void)
{
	struct hv_err err = { 0 };

	setup();
	CHECK_EQ(hotplug_agent_shutdown(fv->hp, &err), 0);
	/* The next call's handshake: the agent has handled the request. */
	CHECK_EQ(hotplug_agent_refresh(fv->hp, false), 0);
	CHECK_EQ(atomic_load(&lx.shutdowns), 1);
	atomic_store(&lx.mode, LINUX_MUTE);
	CHECK_EQ(hotplug_agent_shutdown(fv->hp, &err), -ETIMEDOUT);
	teardown();
	/* No agent: said so. */
	CHECK_EQ(fake_vm_create(MAX, MAX, T_GUEST_MS, &fv), 0);
	hv_err_clear(&err);
	CHECK_EQ(hotplug_agent_shutdown(fv->hp, &err), -ENODEV);
	CHECK(strstr(err.msg, "--agent") != NULL);
	CHECK(!hotplug_has_agent(fv->hp));
	fake_vm_destroy(fv);
}

static int inject(unsigned int cpu, int state, const char *name,
		  struct hp_report *rep)
{
	*rep = (struct hp_report){ 0 };
	return hotplug_linux_inject(fv->hp, cpu, state, name, rep);
}

static void check_err(const struct hp_report *rep, const char *part)
{
	if (!strstr(rep->err.msg, part))
		printf("# '%s' lacks '%s'\n", rep->err.msg, part);
	CHECK(strstr(rep->err.msg, part) != NULL);
}

/*
 * cpuhp-inject-fault on Linux's side: checked against Linux's list,
 * written to cpuN/hotplug/fail, refused where Linux has no such file; the
 * next removal has Linux offline the CPU first, which fails at the fault:
 * the removal fails and both sides keep the CPU online.
 */
static void test_linux_fault(void)
{
	struct hp_report rep;
	struct hp_cpu_view v;

	sim_guest_linux(true, true);
	setup_boot(2); /* slots 0, 1 boot (Linux's CPUs 0 and 2) */
	CHECK_EQ(hotplug_agent_refresh(fv->hp, false), 0);
	CHECK(hotplug_linux_faults(fv->hp));
	CHECK_EQ(inject(1, 999, NULL, &rep), -EINVAL);
	check_err(&rep, "Linux has no state 999");
	CHECK_EQ(inject(1, -1, "nope", &rep), -EINVAL);
	check_err(&rep, "Linux has no state 'nope'");
	CHECK_EQ(inject(1, 50, NULL, &rep), -EINVAL);
	check_err(&rep, "Linux refused state 50 (ap:starting)");
	CHECK_EQ(lx.fail[2], -1);
	atomic_store(&lx.mode, LINUX_BADSTATES);
	CHECK_EQ(inject(1, 100, NULL, &rep), -EPROTO);
	check_err(&rep, "unusable at line 2");
	atomic_store(&lx.mode, LINUX_OK);
	CHECK_EQ(inject(1, -1, "sched:active", &rep), 0);
	CHECK_EQ(lx.fail[2], 100);
	/* A hot-added CPU has no hotplug/fail in Linux 6.1. */
	CHECK_EQ(hotplug_cpu_add(fv->hp, 2, "c2", 3000, HOTPLUG_WAIT_STARTED,
				 &rep),
		 0);
	CHECK_EQ(inject(2, 100, NULL, &rep), -EOPNOTSUPP);
	check_err(&rep, "only for the CPUs present at boot");
	/* The removal hits the fault: Linux rolls back, nothing changes. */
	seen.events = 0;
	CHECK(hotplug_cpu_remove(fv->hp, 1, 3000, &rep) < 0);
	check_err(&rep, "fault injected at its state 100 (sched:active)");
	CHECK_EQ(lx.fail[2], -1);
	CHECK_EQ(hotplug_cpu_view(fv->hp, 1, &v), 0);
	CHECK_EQ(v.host.state, HOST_ONLINE);
	CHECK_EQ(v.linux_online, 1);
	CHECK(hotplug_cpu_counted(&v));
	CHECK_EQ(sim_guest_state(1), GUEST_ONLINE);
	CHECK_EQ(seen.events, 0);
	CHECK_EQ(hotplug_check(fv->hp), 0);
	/* The fault was one-shot: Linux offlines and ejects it itself. */
	rep = (struct hp_report){ 0 };
	CHECK_EQ(hotplug_cpu_remove(fv->hp, 1, 3000, &rep), 0);
	CHECK_STREQ(rep.offlined_by, "guest");
	CHECK_STREQ(seen.cpulist, "0,2");
	/* Cleared: -1 goes to Linux, and nothing is armed. */
	CHECK_EQ(inject(0, 100, NULL, &rep), 0);
	CHECK_EQ(lx.fail[0], 100);
	CHECK_EQ(inject(0, -1, NULL, &rep), 0);
	CHECK_EQ(lx.fail[0], -1);
	teardown();
}

/*
 * A guest whose eject waits for the CPU to be offline: after the grace
 * time the agent offlines it, the eject follows, the report says so.
 */
static void test_offline_by_agent(void)
{
	struct hp_report rep = { 0 };
	struct hp_cpu_view v;

	sim_guest_linux(true, true);
	setup_boot(3);
	CHECK_EQ(hotplug_agent_refresh(fv->hp, false), 0);
	sim_guest_linux_waits_offline(true);
	CHECK_EQ(hotplug_cpu_remove(fv->hp, 2, 5000, &rep), 0);
	if (rep.err.code)
		printf("# %s\n", hv_err_msg(&rep.err));
	CHECK_STREQ(rep.offlined_by, "agent");
	CHECK_EQ(hotplug_cpu_view(fv->hp, 2, &v), 0);
	CHECK_EQ(v.host.state, HOST_OFFLINE);
	CHECK_STREQ(seen.cpulist, "0-1");
	CHECK_EQ(hotplug_check(fv->hp), 0);
	/* Without the agent's help it would have timed out: keep proves it. */
	teardown();
}

/*
 * --agent-trace: on, an operation reads Linux's state list and looks for
 * tracefs through the agent (this fake Linux has none); off, neither.
 */
static void check_trace_calls(bool off)
{
	struct hp_report rep = { 0 };

	fake_vm_linux_trace = !off;
	sim_guest_linux(true, true);
	setup_boot(2);
	fake_vm_linux_trace = false;
	CHECK_EQ(hotplug_agent_refresh(fv->hp, false), 0);
	CHECK_EQ(hotplug_cpu_add(fv->hp, 2, "c2", 3000, HOTPLUG_WAIT_STARTED,
				 &rep),
		 0);
	CHECK_STREQ(seen.cpulist, "0-2");
	/* Off, neither Linux's state list nor its trace is asked for. */
	if (off) {
		CHECK_EQ(lx.tracefs_opens, 0);
		CHECK_EQ(hotplug_linux_states(fv->hp, NULL), 0);
	} else {
		CHECK(lx.tracefs_opens > 0);
		CHECK(hotplug_linux_states(fv->hp, NULL) > 0);
	}
	teardown();
}

static void test_trace_switch(void)
{
	check_trace_calls(false);
	check_trace_calls(true);
}

static void *check_thread(void *arg)
{
	int ret = hotplug_agent_refresh(arg, false);

	pthread_mutex_lock(&chk.lock);
	chk.done = true;
	chk.ret = ret;
	pthread_cond_broadcast(&chk.cond);
	pthread_mutex_unlock(&chk.lock);
	return NULL;
}

static struct timespec deadline_in(int ms)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (long)(ms % 1000) * 1000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	return dl;
}

static bool check_within(pthread_t t, int ms)
{
	struct timespec dl = deadline_in(ms);
	bool done;

	pthread_mutex_lock(&chk.lock);
	while (!chk.done &&
	       pthread_cond_timedwait(&chk.cond, &chk.lock, &dl) != ETIMEDOUT)
		;
	done = chk.done;
	pthread_mutex_unlock(&chk.lock);
	if (!done) {
		/* The old way takes minutes: let it end quickly, then fail. */
		atomic_store(&lx.mode, LINUX_OK);
	}
	pthread_join(t, NULL);
	return done;
}

/*
 * A slow, lying agent at max=1024: it lists every CPU
 * and answers each file call after 0.7 s with an error.  A check has one
 * deadline for the whole check, not one per call (it was 1024 calls of
 * 0.7 s, some 12 minutes); a path that failed is not asked again at the
 * next check; the check's thread stops within 1 s whatever it is doing
 * (SIGTERM), and a reset does not wait for it.
 */
static void test_lying_agent(void)
{
	unsigned int opens, twice;
	pthread_t t;
	uint64_t t0;

	setup_max(LIAR_CPUS, 1);
	for (int l = 0; l < LIAR_CPUS; l++)
		atomic_store(&lx.liar_asked[l], 0);
	atomic_store(&lx.mode, LINUX_LIAR);
	chk.done = false;
	t0 = now_ms();
	CHECK_EQ(pthread_create(&t, NULL, check_thread, fv->hp), 0);
	CHECK(check_within(t, 10000));
	printf("# a whole check: %llu ms, %u paths asked\n",
	       (unsigned long long)(now_ms() - t0), atomic_load(&lx.opens));
	CHECK_EQ(chk.ret, 0);
	opens = atomic_load(&lx.opens);
	CHECK(opens > 0 && opens < 10);
	/*
	 * The ids it reached are remembered as misses: not asked again.  (The
	 * deadline cut the last call short: the fake is still in it, and
	 * the next check would meet it late, so wait for its answer.)
	 */
	{
		struct timespec dl = deadline_in(5000);

		pthread_mutex_lock(&chk.lock);
		while (atomic_load(&lx.answered) < atomic_load(&lx.opens) &&
		       pthread_cond_timedwait(&chk.cond, &chk.lock, &dl) !=
			       ETIMEDOUT)
			;
		pthread_mutex_unlock(&chk.lock);
	}
	chk.done = false;
	CHECK_EQ(pthread_create(&t, NULL, check_thread, fv->hp), 0);
	CHECK(check_within(t, 10000));
	CHECK_EQ(chk.ret, 0);
	CHECK(atomic_load(&lx.opens) > opens);
	/* Only the one whose call the first deadline cut short, at most. */
	twice = 0;
	for (int l = 0; l < LIAR_CPUS; l++)
		twice += atomic_load(&lx.liar_asked[l]) > 1;
	CHECK(twice <= 1);

	/* The periodic check: the machine thread only starts and stops it. */
	atomic_store(&lx.mode, LINUX_LIAR);
	CHECK_EQ(hotplug_agent_watch_start(fv->hp, 10), 0);
	/* Until it is inside a file call (the fake counts the open). */
	{
		struct timespec dl = deadline_in(10000);

		pthread_mutex_lock(&chk.lock);
		opens = atomic_load(&lx.opens);
		while (atomic_load(&lx.opens) == opens &&
		       pthread_cond_timedwait(&chk.cond, &chk.lock, &dl) !=
			       ETIMEDOUT)
			;
		CHECK(atomic_load(&lx.opens) > opens);
		pthread_mutex_unlock(&chk.lock);
	}
	/* A reset meanwhile does not wait for the check. */
	t0 = now_ms();
	hotplug_reset_begin(fv->hp);
	hotplug_unboot(fv->hp);
	printf("# a reset during a check: %llu ms\n",
	       (unsigned long long)(now_ms() - t0));
	CHECK(now_ms() - t0 < 1000);
	/* SIGTERM: the machine stops, the check's thread with it. */
	t0 = now_ms();
	hotplug_shutdown(fv->hp);
	hotplug_agent_watch_stop(fv->hp);
	printf("# the check's thread stopped in %llu ms\n",
	       (unsigned long long)(now_ms() - t0));
	CHECK(now_ms() - t0 < 1000);
	teardown();
}

CHECK_MAIN(TEST(test_follows_linux), TEST(test_bad_answers),
	   TEST(test_silent_agent), TEST(test_wait_started),
	   TEST(test_shutdown), TEST(test_linux_fault),
	   TEST(test_offline_by_agent), TEST(test_trace_switch),
	   TEST(test_lying_agent))
