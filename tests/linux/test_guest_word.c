// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's own word, with Debian's kernel on hotvm in the nested lab:
 * poweroff, reboot and the eject of a CPU asked for from inside the VM
 * reach hotvm as they reach QEMU.  The console has no input, so the host
 * asks through the ACPI power button: QMP system_powerdown, Linux's button
 * driver, busybox acpid, and the guest init's hotvm.pwrbtn=ACTION
 * (tools/lab/guest/init, tools/lab/guest/pwrbtn) does the rest.  After each
 * step the QMP events, hotvm's tables and the guest's own online list
 * ("online: <cpulist>" lines) must agree.  Each case boots its own VM.
 *
 * Usage: test-guest-word DIR (DIR holds vmlinux and initrd.gz); HOTVM is
 * the hotvm binary.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lab_linux.h"
#include "vmproc.h"

#define WAIT_MS 30000

static struct vmproc v;
/* The Linux boot after a reset: as slow as the first. */
static int ready_ms;

/* hotvm run --cpus boot=1,max=4 with the PVH vmlinux, and @opt (or NULL). */
static int boot(const char *cmdline, const char *opt, const char *optval)
{
	const char *more[] = { opt, optval, NULL };

	return lab_linux_boot(&v, "boot=1,max=4", cmdline, more);
}

/* The events this case saw, for a failure's report. */
static char seen[2048];

static void saw(struct json_object *ev)
{
	const char *n = vmproc_str(ev, "event", NULL);
	size_t len = strlen(seen);

	if (n && strcmp(n, "CPUHP_STATE") && len < sizeof(seen) - 64)
		snprintf(seen + len, sizeof(seen) - len, " %s", n);
}

/* The next event @name, skipping others; NULL (and a report) if none. */
static struct json_object *event(const char *name, int timeout_ms)
{
	for (;;) {
		struct json_object *ev;
		const char *n;

		if (qmp_client_next_event(v.c, &ev, timeout_ms)) {
			printf("# no %s event; events so far:%s\n", name, seen);
			return NULL;
		}
		saw(ev);
		n = vmproc_str(ev, "event", NULL);
		if (n && !strcmp(n, name))
			return ev;
		json_object_put(ev);
	}
}

static bool data_bool(struct json_object *ev, const char *key)
{
	struct json_object *d, *x;

	return json_object_object_get_ex(ev, "data", &d) &&
	       json_object_object_get_ex(d, key, &x) &&
	       json_object_get_type(x) == json_type_boolean &&
	       json_object_get_boolean(x);
}

/* An event @name with {"guest": @guest, "reason": @reason}. */
static bool event_is(const char *name, bool guest, const char *reason)
{
	struct json_object *ev = event(name, WAIT_MS);
	bool ok = ev != NULL;

	if (ev) {
		printf("# %s\n", json_object_to_json_string_ext(
					 ev, JSON_C_TO_STRING_PLAIN));
		CHECK_EQ(data_bool(ev, "guest"), guest);
		CHECK_STREQ(vmproc_str(ev, "data", "reason"), reason);
	}
	CHECK(ev != NULL);
	json_object_put(ev);
	return ok;
}

/* Events kept so far, and those the server has sent: none is @name. */
static void no_event(const char *name)
{
	struct json_object *ev;

	while (!qmp_client_next_event(v.c, &ev, 0)) {
		const char *n = vmproc_str(ev, "event", NULL);

		saw(ev);
		if (n && !strcmp(n, name)) {
			printf("# unexpected %s\n",
			       json_object_to_json_string_ext(
				       ev, JSON_C_TO_STRING_PLAIN));
			check_failures++;
		}
		json_object_put(ev);
	}
}

static bool online_is(const char *cpulist)
{
	int ret = vmproc_wait_online(&v, cpulist, WAIT_MS);

	if (ret) {
		printf("# guest online list '%s', expected '%s'\n", v.online,
		       cpulist);
		lab_console_tail(&v);
	}
	CHECK_EQ(ret, 0);
	return !ret;
}

/* query-cpuhp for @cpu: host state name, guest stage and QMP id. */
static void tables(unsigned int cpu, const char *host, const char *stage,
		   const char *id)
{
	struct json_object *r = NULL, *c;

	if (vmproc_qmp(&v, "query-cpuhp", &r, NULL, 0, "{\"cpu\": %u}", cpu)) {
		CHECK(!"query-cpuhp failed");
		return;
	}
	c = vmproc_cpu(r, cpu);
	CHECK(c != NULL);
	if (c) {
		CHECK_STREQ(vmproc_str(c, "host", "name"), host);
		CHECK_STREQ(vmproc_str(c, "guest", "stage"), stage);
		if (id)
			CHECK_STREQ(vmproc_str(c, "id", NULL), id);
	}
	json_object_put(r);
}

/* query-hotpluggable-cpus: does socket @cpu have a qom-path (plugged)? */
static int plugged(unsigned int cpu)
{
	struct json_object *r = NULL;
	int ret = -1;

	if (vmproc_qmp(&v, "query-hotpluggable-cpus", &r, NULL, 0, NULL))
		return -1;
	for (size_t i = 0; i < json_object_array_length(r); i++) {
		struct json_object *e = json_object_array_get_idx(r, i), *p, *s;

		if (json_object_object_get_ex(e, "props", &p) &&
		    json_object_object_get_ex(p, "socket-id", &s) &&
		    json_object_get_int(s) == (int)cpu)
			ret = vmproc_str(e, "qom-path", NULL) != NULL;
	}
	json_object_put(r);
	return ret;
}

static void status_is(const char *status, bool running)
{
	struct json_object *r = NULL;

	CHECK_EQ(vmproc_qmp(&v, "query-status", &r, NULL, 0, NULL), 0);
	if (!r)
		return;
	CHECK_STREQ(vmproc_str(r, "status", NULL), status);
	CHECK_EQ(vmproc_flag(r, "running", NULL), running);
	json_object_put(r);
}

/* Hot-add with Linux's answer (_OST(1, 0)), then user space starts it. */
static bool add(unsigned int cpu, const char *expect_online)
{
	char err[256];
	struct json_object *ev;

	if (vmproc_qmp(&v, "device_add", NULL, err, sizeof(err),
		       "{\"driver\": \"host-x86_64-cpu\", \"id\": \"vcpu%u\", "
		       "\"socket-id\": %u, \"core-id\": 0, \"thread-id\": 0}",
		       cpu, cpu)) {
		printf("# device_add cpu %u: %s\n", cpu, err);
		CHECK(!"device_add");
		return false;
	}
	ev = event("ACPI_DEVICE_OST", WAIT_MS);
	CHECK(ev != NULL);
	json_object_put(ev);
	if (!online_is(expect_online))
		return false;
	tables(cpu, "online", "started", NULL);
	return true;
}

/* QMP system_powerdown: reply {}, then POWERDOWN. */
static bool press(void)
{
	char err[256];
	struct json_object *ev;

	if (vmproc_qmp(&v, "system_powerdown", NULL, err, sizeof(err), NULL)) {
		printf("# system_powerdown: %s\n", err);
		CHECK(!"system_powerdown");
		return false;
	}
	ev = event("POWERDOWN", WAIT_MS);
	CHECK(ev != NULL);
	json_object_put(ev);
	return ev != NULL;
}

/* hotvm has gone with status 0 and taken its socket with it. */
static void exited(void)
{
	int st = vmproc_wait_exit(&v, WAIT_MS);

	if (st)
		lab_console_tail(&v);
	CHECK_EQ(st, 0);
	CHECK(access(v.sock, F_OK) != 0);
}

/*
 * Guest poweroff (ACPI S5), with a hot-added CPU: SHUTDOWN (guest, not
 * the host's), hotvm ends with 0 and removes its socket.
 */
static void test_poweroff(void)
{
	seen[0] = 0;
	if (boot("console=ttyS0 hotvm.pwrbtn=poweroff", NULL, NULL))
		return;
	online_is("0");
	status_is("running", true);
	if (add(1, "0-1") && press() &&
	    lab_line(&v, "pwrbtn: poweroff", WAIT_MS) &&
	    event_is("SHUTDOWN", true, "guest-shutdown"))
		exited();
	else
		lab_console_tail(&v);
	vmproc_stop(&v);
}

/* What hotvm says of hot-added vCPUs 1 and 2 after a reset. */
static void after_reset(const char *online)
{
	CHECK_STREQ(v.online, online);
	status_is("running", true);
	for (unsigned int c = 1; c <= 2; c++) {
		char id[16];

		snprintf(id, sizeof(id), "vcpu%u", c);
		tables(c, "online", "started", id);
		CHECK_EQ(plugged(c), 1);
	}
	CHECK_EQ(plugged(3), 0);
}

/* system_reset: RESET (host), and Linux boots again. */
static bool host_reset(void)
{
	char err[256];

	if (vmproc_qmp(&v, "system_reset", NULL, err, sizeof(err), NULL)) {
		printf("# system_reset: %s\n", err);
		CHECK(!"system_reset");
		return false;
	}
	return event_is("RESET", false, "host-qmp-system-reset") &&
	       lab_line(&v, "ready", ready_ms);
}

/*
 * Guest reboot (reboot -f: Linux's own choice of reset path) with CPUs 1
 * and 2 hot-added: RESET (guest), the same kernel boots again with them as
 * boot CPUs, their ids kept; device_del still works.  Then the host's
 * system_reset, and quit.  A guest whose reboot never reaches hotvm is
 * reset from the host, so that the rest is still checked.
 */
static void test_reboot(void)
{
	struct json_object *ev;
	char err[256];
	bool guest_reset;

	seen[0] = 0;
	if (boot("console=ttyS0 hotvm.pwrbtn=reboot", NULL, NULL))
		return;
	online_is("0");
	if (!add(1, "0-1") || !add(2, "0-2") || !press() ||
	    !lab_line(&v, "pwrbtn: reboot", WAIT_MS)) {
		lab_console_tail(&v);
		vmproc_stop(&v);
		return;
	}
	guest_reset = event_is("RESET", true, "guest-reset");
	if (!guest_reset) {
		lab_console_tail(&v);
		printf("# the guest's reboot did not reach hotvm: system_reset "
		       "instead, to check the rest\n");
	}
	if (guest_reset ? !lab_line(&v, "ready", ready_ms) : !host_reset()) {
		lab_console_tail(&v);
		vmproc_stop(&v);
		return;
	}
	/* The init prints the online list just before "ready". */
	after_reset("0-2");
	CHECK_EQ(vmproc_qmp(&v, "device_del", NULL, err, sizeof(err),
			    "{\"id\": \"vcpu2\"}"),
		 0);
	ev = event("DEVICE_DELETED", WAIT_MS);
	CHECK(ev != NULL);
	if (ev)
		CHECK_STREQ(vmproc_str(ev, "data", "device"), "vcpu2");
	json_object_put(ev);
	online_is("0-1");
	tables(2, "offline", "absent", NULL);

	/* The host's reset. */
	if (!host_reset()) {
		lab_console_tail(&v);
		vmproc_stop(&v);
		return;
	}
	CHECK_STREQ(v.online, "0-1");
	status_is("running", true);
	tables(1, "online", "started", "vcpu1");
	CHECK_EQ(plugged(2), 0);

	/* quit: SHUTDOWN (host), exit 0. */
	CHECK_EQ(vmproc_qmp(&v, "quit", NULL, err, sizeof(err), NULL), 0);
	event_is("SHUTDOWN", false, "host-qmp-quit");
	exited();
	vmproc_stop(&v);
}

/* --no-reboot: the guest's reboot ends hotvm, as QEMU's -no-reboot. */
static void test_reboot_no_reboot(void)
{
	seen[0] = 0;
	if (boot("console=ttyS0 hotvm.pwrbtn=reboot", "--no-reboot", NULL))
		return;
	online_is("0");
	if (add(1, "0-1") && press() &&
	    lab_line(&v, "pwrbtn: reboot", WAIT_MS) &&
	    event_is("SHUTDOWN", true, "guest-reset"))
		exited();
	else
		lab_console_tail(&v);
	vmproc_stop(&v);
}

/* No hotvm.pwrbtn: busybox acpid's own mapping powers off. */
static void test_acpid_default(void)
{
	seen[0] = 0;
	if (boot("console=ttyS0", NULL, NULL))
		return;
	online_is("0");
	if (press() && lab_line(&v, "pwrbtn: poweroff", WAIT_MS) &&
	    event_is("SHUTDOWN", true, "guest-shutdown"))
		exited();
	else
		lab_console_tail(&v);
	vmproc_stop(&v);
}

/*
 * The console after the guest's "pwrbtn: eject" line, line by line: until
 * an "online: @drop" line (the CPU offlined for the eject) and, unless
 * @back is NULL, an "online: @back" line after it (the CPU back).  Lines
 * that name the eject or a CPU are printed, for the record; the first
 * that holds @text (unless NULL) goes to @found.
 */
static bool eject_lines(const char *drop, const char *back, const char *text,
			char *found, size_t len)
{
	bool dropped = false, ok = false;
	char l[512];

	if (found)
		found[0] = 0;
	while (!ok && !vmproc_wait_line(&v, "", WAIT_MS, l, sizeof(l))) {
		const char *on = strncmp(l, "online: ", 8) ? NULL : l + 8;

		if (on || strstr(l, "ject") || strstr(l, "CPU") ||
		    strstr(l, "cpu") || strstr(l, "ACPI"))
			printf("# console: %s\n", l);
		if (text && found && !found[0] && strstr(l, text))
			snprintf(found, len, "%s", l);
		if (on && !strcmp(on, drop))
			dropped = true;
		ok = dropped && (!back || (on && !strcmp(on, back)));
	}
	if (!ok) {
		printf("# the guest's online list never went to '%s'%s%s\n",
		       drop, back ? " and back to " : "", back ? back : "");
		lab_console_tail(&v);
	}
	CHECK(ok);
	return ok;
}

/*
 * The ACPI_DEVICE_OST events of a guest-initiated eject (in progress,
 * 0x84, then done: source 0x103, ACPI_OST_EC_OSPM_EJECT, status 0) and the
 * DEVICE_DELETED/CPUS_CHANGED that allow brings, until @deleted says which
 * are due.
 */
static void eject_events(bool deleted)
{
	bool ost_busy = false, ost_done = false, del = false, changed = false;

	while (!(ost_busy && ost_done && (!deleted || (del && changed)))) {
		struct json_object *ev, *info, *x;
		const char *n;

		if (qmp_client_next_event(v.c, &ev, WAIT_MS)) {
			printf("# eject events: _OST(0x103, 0x84) %s, "
			       "_OST(0x103, 0) %s, DEVICE_DELETED %s, "
			       "CPUS_CHANGED %s; events:%s\n",
			       ost_busy ? "seen" : "missing",
			       ost_done ? "seen" : "missing",
			       del ? "seen" : "missing",
			       changed ? "seen" : "missing", seen);
			check_failures++;
			return;
		}
		saw(ev);
		n = vmproc_str(ev, "event", NULL);
		if (n && !strcmp(n, "ACPI_DEVICE_OST") &&
		    json_object_object_get_ex(ev, "data", &x) &&
		    json_object_object_get_ex(x, "info", &info)) {
			int src = -1, st = -1;

			printf("# %s\n", json_object_to_json_string_ext(
						 ev, JSON_C_TO_STRING_PLAIN));
			if (json_object_object_get_ex(info, "source", &x))
				src = json_object_get_int(x);
			if (json_object_object_get_ex(info, "status", &x))
				st = json_object_get_int(x);
			/* Linux 6.1 says 0x84 with source 3 (QEMU's record). */
			ost_busy |= (src == 3 || src == 0x103) && st == 0x84;
			ost_done |= src == 0x103 && st == 0;
		} else if (n && !strcmp(n, "DEVICE_DELETED")) {
			printf("# %s\n", json_object_to_json_string_ext(
						 ev, JSON_C_TO_STRING_PLAIN));
			CHECK(deleted);
			CHECK_STREQ(vmproc_str(ev, "data", "device"), "vcpu2");
			CHECK(vmproc_str(ev, "data", "path") != NULL);
			del = true;
		} else if (n && !strcmp(n, "CPUS_CHANGED")) {
			changed = true;
		}
		json_object_put(ev);
	}
}

/*
 * The guest ejects a hot-added CPU itself (sysfs eject), and hotvm allows
 * it: DEVICE_DELETED, the slot is free, and device_add of the same id
 * brings the CPU back.  CPUs 1 and 2 both: Linux numbers a hot-added CPU
 * with the lowest free number, so socket 2 is Linux's cpu2 only after 1.
 */
static void test_guest_eject(void)
{
	seen[0] = 0;
	if (boot("console=ttyS0 hotvm.pwrbtn=eject:2", NULL, NULL))
		return;
	online_is("0");
	if (!add(1, "0-1") || !add(2, "0-2") || !press() ||
	    !lab_line(&v, "pwrbtn: eject cpu2", WAIT_MS)) {
		lab_console_tail(&v);
		vmproc_stop(&v);
		return;
	}
	eject_lines("0-1", NULL, NULL, NULL, 0);
	eject_events(true);
	tables(2, "offline", "absent", NULL);
	tables(1, "online", "started", "vcpu1");
	CHECK_EQ(plugged(2), 0);
	/* The slot is free: the same id again. */
	add(2, "0-2");
	CHECK_EQ(plugged(2), 1);
	CHECK_EQ(vmproc_stop(&v), 0);
}

/*
 * --guest-eject deny: hotvm keeps the CPU (its _STA stays 0xF) and tells
 * the guest it is there again; Linux, having let it go, adds it back and
 * the init onlines it.  No DEVICE_DELETED.
 */
static void test_guest_eject_denied(void)
{
	char l[512];

	seen[0] = 0;
	if (boot("console=ttyS0 hotvm.pwrbtn=eject:2", "--guest-eject", "deny"))
		return;
	online_is("0");
	if (!add(1, "0-1") || !add(2, "0-2") || !press() ||
	    !lab_line(&v, "pwrbtn: eject cpu2", WAIT_MS)) {
		lab_console_tail(&v);
		vmproc_stop(&v);
		return;
	}
	/* Offlined for the eject, then back; what did Linux say? */
	eject_lines("0-1", "0-2", "Eject incomplete", l, sizeof(l));
	printf("# Linux: %s\n", l[0] ? l : "(no 'Eject incomplete' line)");
	CHECK(l[0] != 0);
	eject_events(false);
	tables(2, "online", "started", "vcpu2");
	CHECK_EQ(plugged(2), 1);
	/* Every event sent before this reply has been read. */
	status_is("running", true);
	no_event("DEVICE_DELETED");
	CHECK_EQ(vmproc_stop(&v), 0);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_poweroff),	     TEST(test_reboot),
		TEST(test_reboot_no_reboot), TEST(test_acpid_default),
		TEST(test_guest_eject),	     TEST(test_guest_eject_denied),
	};
	const char *r;

	if (lab_linux_init(argc > 1 ? argv[1] : NULL))
		return 1;
	r = getenv("VMPROC_READY_MS");
	ready_ms = r && atoi(r) > 0 ? atoi(r) : 180000;
	/*
	 * Names after DIR run only those cases: each lab boot runs a few
	 * Linux boots, so that a lab that freezes under TCG (now and then,
	 * whatever the guest) costs one short retry, not the whole suite.
	 */
	return check_run_named(cases, sizeof(cases) / sizeof(cases[0]),
			       argv + 2, argc > 2 ? argc - 2 : 0);
}
