// SPDX-License-Identifier: GPL-2.0-only
/*
 * Debian's kernel on hotvm, in the nested lab: the guest whose ACPI
 * drivers (acpi_processor, evged, 8250_pnp) were written elsewhere is the
 * judge of the wire.  Driven over QMP as libvirt would; after every step
 * the guest's own online list (its init prints "online: <cpulist>", see
 * tools/lab/guest/init), hotvm's tables (query-cpuhp) and the QMP events
 * must agree.
 *
 * Usage: test-linux DIR (DIR holds vmlinux, bzImage, initrd.gz and
 * bootlog-checks.txt); HOTVM is the hotvm binary.
 */
#include <errno.h>
#include <json-c/json.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "lab_linux.h"
#include "vmproc.h"

#define WAIT_MS	 30000
#define MAX_CPUS 4
/* The agreement cases' VM: room for fences beyond the first CPUs. */
#define AGREE_CPUS 6
#define HOOK_FILE  "/tmp/agree-hook"
#define VETO_FILE  "/tmp/agree-veto"

static struct vmproc v;
/* CPUs the agreement check flagged and cpuhp-recover put back in line. */
static unsigned int recovered;

/* hotvm run --cpus @cpus with @kernel, and @hook as --hook unless NULL. */
static int boot_with(const char *kernel, const char *cmdline, const char *cpus,
		     const char *hook)
{
	const char *extra[] = { "--kernel",
				lab_linux_path(kernel),
				"--initrd",
				lab_linux_path("initrd.gz"),
				"--memory",
				"512M",
				"--hotplug-timeout",
				"20000",
				hook ? "--hook" : NULL,
				hook,
				NULL };
	int ret = vmproc_start(&v, cpus, cmdline, extra);

	if (ret)
		printf("# %s did not boot: %s\n", kernel, strerror(-ret));
	return ret;
}

static int boot(const char *kernel, const char *cmdline)
{
	return boot_with(kernel, cmdline, "boot=1,max=4", NULL);
}

/* The next event @name about @cpu (any cpu if < 0), skipping others. */
static struct json_object *event(const char *name, int cpu, const char *stage)
{
	for (;;) {
		struct json_object *ev, *d, *x;
		const char *n;
		bool match;

		if (qmp_client_next_event(v.c, &ev, WAIT_MS)) {
			printf("# no %s event for cpu %d\n", name, cpu);
			return NULL;
		}
		n = vmproc_str(ev, "event", NULL);
		match = n && !strcmp(n, name);
		json_object_object_get_ex(ev, "data", &d);
		if (match && cpu >= 0 && !strcmp(name, "CPUHP_STATE"))
			match = json_object_object_get_ex(d, "cpu", &x) &&
				json_object_get_int(x) == cpu &&
				vmproc_str(d, "stage", NULL) &&
				!strcmp(vmproc_str(d, "stage", NULL), stage);
		if (match)
			return ev;
		json_object_put(ev);
	}
}

/* query-cpuhp for @cpu: host state name and observed guest stage. */
static void tables(unsigned int cpu, const char *host, const char *stage)
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
		/* Linux does not speak hotvm's state reports. */
		CHECK(!vmproc_flag(c, "guest", "reports"));
		CHECK(vmproc_str(c, "guest", "name") == NULL);
	}
	json_object_put(r);
}

static void online_is(const char *cpulist)
{
	int ret = vmproc_wait_online(&v, cpulist, WAIT_MS);

	if (ret) {
		printf("# guest online list '%s', expected '%s'\n", v.online,
		       cpulist);
		lab_console_tail(&v);
	}
	CHECK_EQ(ret, 0);
}

static int add(unsigned int cpu, const char *wait)
{
	char err[256] = "", args[160];

	snprintf(args, sizeof(args),
		 "{\"driver\": \"host-x86_64-cpu\", \"id\": \"vcpu%u\", "
		 "\"socket-id\": %u, \"core-id\": 0, \"thread-id\": 0%s%s%s}",
		 cpu, cpu, wait ? ", \"wait\": \"" : "", wait ? wait : "",
		 wait ? "\"" : "");
	if (vmproc_qmp(&v, "device_add", NULL, err, sizeof(err), "%s", args)) {
		printf("# device_add cpu %u: %s\n", cpu, err);
		return -1;
	}
	return 0;
}

static int del(unsigned int cpu, char *err, size_t len)
{
	return vmproc_qmp(&v, "device_del", NULL, err, len,
			  "{\"id\": \"vcpu%u\"}", cpu);
}

/* Hot-add with Linux's answer: _OST(1, 0), then user space starts it. */
static void add_checked(unsigned int cpu, const char *expect_online)
{
	struct json_object *ev;

	CHECK_EQ(add(cpu, NULL), 0);
	ev = event("ACPI_DEVICE_OST", -1, NULL);
	CHECK(ev != NULL);
	json_object_put(ev);
	ev = event("CPUHP_STATE", (int)cpu, "started");
	CHECK(ev != NULL);
	json_object_put(ev);
	online_is(expect_online);
	tables(cpu, "online", "started");
}

static void remove_checked(unsigned int cpu, const char *expect_online)
{
	struct json_object *ev;
	char err[256];

	CHECK_EQ(del(cpu, err, sizeof(err)), 0);
	ev = event("DEVICE_DELETED", -1, NULL);
	CHECK(ev != NULL);
	if (ev)
		CHECK_STREQ(vmproc_str(ev, "data", "device"),
			    (snprintf(err, sizeof(err), "vcpu%u", cpu), err));
	json_object_put(ev);
	online_is(expect_online);
	tables(cpu, "offline", "absent");
}

/*
 * device_add (or device_del) of CPUs 1 .. MAX_CPUS - 1 sent at once: the
 * server runs the burst as a batch, so Linux's scan finds several inserted
 * (or removal-pending) CPUs in one _EVT.  Every reply must be a success.
 */
static void burst(bool plug)
{
	char err[600];
	int rc = vmproc_burst(&v, plug, MAX_CPUS - 1, "vcpu", true, err,
			      sizeof(err));

	if (rc)
		printf("# %s burst: %s\n", plug ? "device_add" : "device_del",
		       err);
	CHECK_EQ(rc, 0);
}

/* tests/linux/bootlog-checks.txt: "+ regex" must appear, "- regex" not. */
static void bootlog_checks(void)
{
	FILE *f = fopen(lab_linux_path("bootlog-checks.txt"), "r");
	char line[512], cmd[1024];

	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		bool want = line[0] == '+';

		line[strcspn(line, "\n")] = 0;
		if ((line[0] != '+' && line[0] != '-') || line[1] != ' ')
			continue;
		snprintf(cmd, sizeof(cmd), "grep -Eq -- '%s' '%s'", line + 2,
			 v.log);
		if ((system(cmd) == 0) != want) {
			printf("# boot log: '%s' %s\n", line + 2,
			       want ? "missing" : "present");
			check_failures++;
		}
	}
	fclose(f);
}

/*
 * PVH vmlinux: boot, add to max and back, one slot five times, resize,
 * bursts of device_add and device_del.
 */
static void test_pvh_hotplug(void)
{
	char list[16];

	if (boot("vmlinux", "console=ttyS0") < 0) {
		CHECK(!"boot");
		lab_console_tail(&v);
		vmproc_stop(&v);
		return;
	}
	online_is("0");
	bootlog_checks();
	for (unsigned int c = 1; c < MAX_CPUS; c++) {
		snprintf(list, sizeof(list), "0-%u", c);
		add_checked(c, list);
	}
	for (unsigned int c = MAX_CPUS - 1; c > 0; c--) {
		snprintf(list, sizeof(list), c == 1 ? "0" : "0-%u", c - 1);
		remove_checked(c, list);
	}
	for (int i = 0; i < 5; i++) {
		add_checked(2, "0,2");
		remove_checked(2, "0");
	}
	/* "started": the reply comes only once Linux runs the CPU. */
	CHECK_EQ(add(1, "started"), 0);
	tables(1, "online", "started");
	online_is("0-1");
	remove_checked(1, "0");

	CHECK_EQ(vmproc_qmp(&v, "cpu-resize", NULL, NULL, 0, "{\"count\": %d}",
			    MAX_CPUS),
		 0);
	online_is("0-3");
	for (unsigned int c = 1; c < MAX_CPUS; c++)
		tables(c, "online", "started");
	CHECK_EQ(vmproc_qmp(&v, "cpu-resize", NULL, NULL, 0, "{\"count\": 1}"),
		 0);
	online_is("0");
	for (unsigned int c = 1; c < MAX_CPUS; c++)
		tables(c, "offline", "absent");
	burst(true);
	online_is("0-3");
	for (unsigned int c = 1; c < MAX_CPUS; c++)
		tables(c, "online", "started");
	burst(false);
	online_is("0");
	for (unsigned int c = 1; c < MAX_CPUS; c++)
		tables(c, "offline", "absent");
	/* Linux never reports its table: guest-side commands are refused. */
	CHECK(vmproc_qmp(&v, "cpuhp-inject-fault", NULL, NULL, 0,
			 "{\"cpu\": 1, \"side\": \"guest\", \"state\": "
			 "\"ap:online-work\"}") != 0);
	/* Again, now that hot-added CPUs have come and gone. */
	bootlog_checks();
	CHECK_EQ(vmproc_stop(&v), 0);
}

/* The next ACPI_DEVICE_OST with @source (1 insert, 3 eject): its status. */
static int ost_status(int source)
{
	for (;;) {
		struct json_object *ev = event("ACPI_DEVICE_OST", -1, NULL);
		struct json_object *d, *info, *x;
		int src = -1, st = -1;

		if (!ev)
			return -1;
		if (json_object_object_get_ex(ev, "data", &d) &&
		    json_object_object_get_ex(d, "info", &info)) {
			if (json_object_object_get_ex(info, "source", &x))
				src = json_object_get_int(x);
			if (json_object_object_get_ex(info, "status", &x))
				st = json_object_get_int(x);
		}
		json_object_put(ev);
		if (src == source)
			return st;
	}
}

/*
 * bzImage, and a guest with no onlining rule: hotvm tells acknowledged
 * from started, and a wait for "started" fails and rolls back.
 */
static void test_bzimage_not_started(void)
{
	struct json_object *ev;
	char err[512] = "";

	if (boot("bzImage", "console=ttyS0 hotvm.online=none") < 0) {
		CHECK(!"boot");
		lab_console_tail(&v);
		vmproc_stop(&v);
		return;
	}
	online_is("0");
	CHECK_EQ(add(1, NULL), 0);
	CHECK_EQ(ost_status(1), 0);
	tables(1, "online", "acknowledged");
	CHECK(vmproc_qmp(&v, "cpu-hotplug", NULL, err, sizeof(err),
			 "{\"cpu\": 2, \"state\": \"online\", \"wait\": "
			 "\"started\", \"timeout-ms\": 3000}") != 0);
	printf("# %s\n", err);
	CHECK(strstr(err, "did not start") != NULL);
	CHECK(strstr(err, "rolled back to offline") != NULL);
	tables(2, "offline", "absent");
	tables(1, "online", "acknowledged");
	/* Linux ejects a CPU it never onlined. */
	CHECK_EQ(del(1, err, sizeof(err)), 0);
	ev = event("DEVICE_DELETED", -1, NULL);
	CHECK(ev != NULL);
	json_object_put(ev);
	tables(1, "offline", "absent");
	online_is("0");
	CHECK_EQ(vmproc_stop(&v), 0);
}

/*
 * Ejects disabled in the guest (processor hotplug "enabled" = 0): Linux
 * answers the eject request with _OST(3, 0x80), hotvm fails the removal
 * at once with that answer, and the CPU stays online.
 */
static void test_eject_refused(void)
{
	char err[512] = "";

	if (boot("vmlinux", "console=ttyS0 hotvm.eject=0") < 0) {
		CHECK(!"boot");
		lab_console_tail(&v);
		vmproc_stop(&v);
		return;
	}
	online_is("0");
	add_checked(1, "0-1");
	CHECK(del(1, err, sizeof(err)) != 0);
	printf("# %s\n", err);
	CHECK(strstr(err, "0x80") != NULL);
	CHECK(strstr(err, "rolled back to online") != NULL ||
	      strstr(err, "stays at online") != NULL);
	CHECK_EQ(ost_status(3), 0x80);
	tables(1, "online", "started");
	online_is("0-1");
	CHECK_EQ(vmproc_stop(&v), 0);
}

/*
 * hotvm's side of the agreement: its online slots (a slot is the CPU's
 * APIC ID) as "0 2 5", as the guest's "apicids:" line gives Linux's, and
 * the CPUs its agreement check has flagged, as a mask.
 */
static int host_view(char *ids, size_t len, unsigned int *flagged)
{
	struct json_object *r = NULL;
	size_t n = 0;

	ids[0] = 0;
	*flagged = 0;
	if (vmproc_qmp(&v, "query-cpuhp", &r, NULL, 0, NULL))
		return -1;
	for (unsigned int c = 0; c < AGREE_CPUS; c++) {
		struct json_object *o = vmproc_cpu(r, c), *a;
		const char *host = vmproc_str(o, "host", "name");

		if (host && !strcmp(host, "online"))
			n += (size_t)snprintf(ids + n, len - n,
					      n ? " %u" : "%u", c);
		if (o && json_object_object_get_ex(o, "agree", &a) &&
		    !json_object_get_boolean(a)) {
			printf("# cpu %u flagged: %s\n", c,
			       vmproc_str(o, "disagreement", NULL));
			*flagged |= 1u << c;
		}
	}
	json_object_put(r);
	return 0;
}

/*
 * After a step that may leave the sides apart: hotvm's online set and
 * Linux's (from /proc/cpuinfo, by APIC ID) must come to the same, or
 * hotvm must have flagged the CPUs, and cpuhp-recover then brings them
 * together.  hotvm follows a late eject on its machine thread, so its
 * view is read again each time the guest's does not match it yet.
 */
static void sides_agree(const char *step)
{
	long tries = WAIT_MS / 2000;
	unsigned int flagged;
	char ids[64];

	for (;;) {
		if (host_view(ids, sizeof(ids), &flagged)) {
			CHECK(!"query-cpuhp failed");
			return;
		}
		for (unsigned int c = 0; c < AGREE_CPUS; c++) {
			char err[256];

			if (!(flagged & (1u << c)))
				continue;
			printf("# %s: cpu %u flagged, cpuhp-recover\n", step,
			       c);
			recovered++;
			if (vmproc_qmp(&v, "cpuhp-recover", NULL, err,
				       sizeof(err), "{\"cpu\": %u}", c))
				printf("# cpuhp-recover %u: %s\n", c, err);
		}
		if (!flagged && !vmproc_wait_apicids(&v, ids, 2000))
			break;
		if (--tries <= 0) {
			printf("# %s: hotvm says online '%s', Linux '%s' "
			       "(online: %s), unflagged\n",
			       step, ids, v.apicids, v.online);
			lab_console_tail(&v);
			CHECK(!"the two sides disagree, unflagged");
			return;
		}
	}
	printf("# %s: both sides say '%s'\n", step, ids);
}

/*
 * Linux's ACPI hotplug work runs in order, one item at a time: once it
 * has answered the insert of @cpu, whatever it was still doing about an
 * earlier request (a late eject) is done.
 */
static void fence(unsigned int cpu)
{
	CHECK_EQ(add(cpu, NULL), 0);
}

/* A normal resize (the long --hotplug-timeout): it must just work. */
static void resize_ok(unsigned int count, const char *ids)
{
	char err[512];

	if (vmproc_qmp(&v, "cpu-resize", NULL, err, sizeof(err),
		       "{\"count\": %u}", count)) {
		printf("# cpu-resize %u: %s\n", count, err);
		CHECK(!"cpu-resize");
	}
	CHECK_EQ(vmproc_wait_apicids(&v, ids, WAIT_MS), 0);
	sides_agree("a normal resize");
}

/*
 * @cmd (@fmt its arguments) with a 1 ms timeout: Linux cannot eject a CPU
 * that fast, so the reply must be the timeout's error.  A reply of
 * success means the timeout was not applied, and the case below would
 * test no timed-out removal at all.
 */
static void op_times_out(const char *cmd, const char *fmt, unsigned int a,
			 unsigned int b)
{
	char err[512];
	struct json_object *r = NULL;

	if (!vmproc_qmp(&v, cmd, &r, err, sizeof(err), fmt, a, b)) {
		printf("# %s did not time out: %s\n", cmd,
		       json_object_to_json_string_ext(r,
						      JSON_C_TO_STRING_PLAIN));
		CHECK(!"a removal in 1 ms did not time out");
	} else {
		printf("# %s: %s\n", cmd, err);
		CHECK(strstr(err, "did not eject it within 1 ms") != NULL);
	}
	json_object_put(r);
}

/*
 * Removals that time out while Linux works on them: a resize from three
 * CPUs to one, then one CPU, each with 1 ms.  Linux may finish the eject
 * after hotvm gave up; hotvm must then follow it (DEVICE_DELETED), so that
 * both sides end on the same set.
 */
static void test_timed_out_removal(void)
{
	recovered = 0;
	if (boot_with("vmlinux", "console=ttyS0", "boot=1,max=6", NULL)) {
		CHECK(!"boot");
		lab_console_tail(&v);
		vmproc_stop(&v);
		return;
	}
	CHECK_EQ(vmproc_wait_apicids(&v, "0", WAIT_MS), 0);
	add_checked(1, "0-1");
	add_checked(2, "0-2");
	op_times_out("cpu-resize", "{\"count\": %u, \"timeout-ms\": %u}", 1, 1);
	fence(3);
	sides_agree("cpu-resize 3 -> 1 in 1 ms");
	op_times_out(
		"cpu-hotplug",
		"{\"cpu\": %u, \"state\": \"offline\", \"timeout-ms\": %u}", 3,
		1);
	fence(4);
	sides_agree("cpu-hotplug 3 offline in 1 ms");
	/* Nothing is left stuck: the slots come and go as usual. */
	resize_ok(1, "0");
	resize_ok(6, "0 1 2 3 4 5");
	printf("# %u recovered by cpuhp-recover\n", recovered);
	CHECK_EQ(vmproc_stop(&v), 0);
}

/*
 * device_del of CPUs 1..3 sent at once (one batch), with @veto ("cpu
 * state direction") vetoed by the hook: that CPU's reply names the hook,
 * the others are deleted.
 */
static void vetoed_burst(const char *veto, unsigned int vetoed)
{
	struct qmp_client_error err = { 0 };
	long seq[4];
	FILE *f = fopen(VETO_FILE, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "%s\n", veto);
	fclose(f);
	for (unsigned int c = 1; c <= 3; c++) {
		struct json_object *a = json_object_new_object();
		char id[16];

		snprintf(id, sizeof(id), "vcpu%u", c);
		json_object_object_add(a, "id", json_object_new_string(id));
		seq[c] = qmp_client_send(v.c, "device_del", a, &err);
		json_object_put(a);
		CHECK(seq[c] > 0);
	}
	for (unsigned int c = 1; c <= 3; c++) {
		int rc = seq[c] > 0 ? qmp_client_wait(v.c, "device_del", seq[c],
						      NULL, &err, WAIT_MS)
				    : -1;

		printf("# device_del vcpu%u: %s%s\n", c, rc ? "" : "ok",
		       rc ? err.desc : "");
		if (c == vetoed)
			CHECK(rc && strstr(err.desc, "hook") != NULL);
		else
			CHECK_EQ(rc, 0);
	}
	unlink(VETO_FILE);
}

/*
 * A hook vetoes one CPU's removal inside a burst, after the batch has
 * asked the guest to eject them all (guest:ap-starting down), and before
 * (online down).  Linux may already have let the CPU go; hotvm must end
 * on Linux's set, or say which CPU needs recovery.
 */
static void test_vetoed_burst_removal(void)
{
	FILE *f = fopen(HOOK_FILE, "w");

	recovered = 0;
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "#!/bin/sh\n"
		   "[ \"$HOTVM_CPU $HOTVM_STATE $HOTVM_DIRECTION\" = "
		   "\"$(cat " VETO_FILE " 2>/dev/null)\" ] || exit 0\n"
		   "echo \"hook: no to $HOTVM_STATE $HOTVM_DIRECTION\" >&2\n"
		   "exit 3\n");
	fclose(f);
	chmod(HOOK_FILE, 0755);
	unlink(VETO_FILE);
	if (boot_with("vmlinux", "console=ttyS0", "boot=1,max=6", HOOK_FILE)) {
		CHECK(!"boot");
		lab_console_tail(&v);
		vmproc_stop(&v);
		return;
	}
	CHECK_EQ(vmproc_wait_apicids(&v, "0", WAIT_MS), 0);
	burst(true);
	CHECK_EQ(vmproc_wait_apicids(&v, "0 1 2 3", WAIT_MS), 0);
	vetoed_burst("2 guest:ap-starting down", 2);
	fence(4);
	sides_agree("burst removal, vetoed at guest:ap-starting down");

	resize_ok(1, "0");
	burst(true);
	CHECK_EQ(vmproc_wait_apicids(&v, "0 1 2 3", WAIT_MS), 0);
	vetoed_burst("3 online down", 3);
	fence(4);
	sides_agree("burst removal, vetoed at online down");
	resize_ok(1, "0");
	printf("# %u recovered by cpuhp-recover\n", recovered);
	CHECK_EQ(vmproc_stop(&v), 0);
	unlink(HOOK_FILE);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_pvh_hotplug),		 TEST(test_bzimage_not_started),
		TEST(test_eject_refused),	 TEST(test_timed_out_removal),
		TEST(test_vetoed_burst_removal),
	};

	if (lab_linux_init(argc > 1 ? argv[1] : NULL))
		return 1;
	return check_run_named(cases, sizeof(cases) / sizeof(cases[0]),
			       argv + 2, argc > 2 ? argc - 2 : 0);
}
