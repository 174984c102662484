// SPDX-License-Identifier: GPL-2.0-only
/*
 * A Debian 12 image (tools/debian-image.sh) on hotvm, in the nested lab,
 * doing what a user's Debian VM does: the lab's own virtio disk (/dev/vda
 * there, lab.sh --disk) is hotvm's --disk; the image's kernel is the lab's
 * and its initramfs is Debian's initramfs-tools'.  hotvm --agent talks to
 * Debian's own qemu-guest-agent, unchanged, on the virtio-console port
 * org.qemu.guest_agent.0; the test reaches the guest only through that
 * agent (guest-exec, guest-file-read) and the console.
 *
 * One hotvm run, one Debian boot and a reboot:
 *   - boot to multi-user.target (the image's unit hotvm-ready says so);
 *   - two vCPUs hot-added, each onlined by the agent, online 0-2;
 *   - a file written and synced, then systemctl reboot: hotvm resets (not
 *     exits), the guest boots again with both hot-added vCPUs online, and
 *     the file is there;
 *   - both removed by device_del: DEVICE_DELETED each, online 0;
 *   - one added again and ejected from inside (its cpuN/firmware_node/eject
 *     in sysfs): DEVICE_DELETED, hotvm's table and Linux's say it is gone;
 *   - qemu-ga stopped, a hot-add started, and qemu-ga killed once hotvm's
 *     call reached its port; systemd restarts it (Debian's unit:
 *     Restart=always): the hot-add ends in time, and the next works;
 *   - a second file written and synced, then systemctl poweroff: hotvm
 *     exits 0.
 * Then a second hotvm run on the same disk: both files are there, and
 * system_powerdown (the ACPI button; systemd-logind, no acpid) ends it
 * with 0 after systemd's own shutdown.
 *
 * Usage: test-debian LINUX IMAGE: LINUX holds vmlinux (lab.sh
 * --linux-guest), IMAGE initrd.img and kernel-version (the image's);
 * HOTVM is the hotvm binary, DISK the block device (default /dev/vda).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check.h"
#include "lab_linux.h"
#include "vmproc.h"

#define BOOT_MS	 240000
#define OFF_MS	 120000
#define AGENT_MS 60000
#define EVENT_MS 60000
/* A hot-add whose agent is killed must end within this: no hang. */
#define KILLED_MS 60000
/* From a reset to the new kernel's first console line. */
#define AGAIN_MS 60000

static const char sock[] = "/tmp/hotvm-debian-agent.sock";
static struct vmproc v;
static bool up; /* the first run's VM is up for the next case */
static char mark1[64], mark2[64];

static void pause_ms(long ms)
{
	nanosleep(&(struct timespec){ .tv_sec = ms / 1000,
				      .tv_nsec = (ms % 1000) * 1000000 },
		  NULL);
}

/* The image's kernel is the lab's own: its initramfs's modules load. */
static void test_same_kernel(void)
{
	char want[128] = "";
	struct utsname u;
	FILE *f = fopen(lab_path_in(lab_debian_dir, "kernel-version"), "r");

	CHECK(f != NULL);
	if (f) {
		if (!fgets(want, sizeof(want), f))
			want[0] = 0;
		fclose(f);
	}
	want[strcspn(want, "\n")] = 0;
	CHECK_EQ(uname(&u), 0);
	printf("# image kernel %s, lab kernel %s\n", want, u.release);
	CHECK_STREQ(want, u.release);
}

/* The guest's /sys/devices/system/cpu/online is @want. */
static void online_is(const char *want)
{
	char online[128];

	CHECK(lab_guest_line(sock, "/sys/devices/system/cpu/online", online,
			     sizeof(online)));
	printf("# the guest's /sys/devices/system/cpu/online: %s\n", online);
	CHECK_STREQ(online, want);
}

/* hotvm's own count: query-cpus-fast lists @n vCPUs. */
static void hotvm_cpus_are(int n)
{
	struct json_object *r = NULL;
	char err[256];

	CHECK_EQ(vmproc_qmp(&v, "query-cpus-fast", &r, err, sizeof(err), NULL),
		 0);
	printf("# hotvm's query-cpus-fast: %d vCPUs\n",
	       r ? (int)json_object_array_length(r) : -1);
	CHECK(r && (int)json_object_array_length(r) == n);
	json_object_put(r);
}

/* The next event named @name (others are passed over), or NULL. */
static struct json_object *event(const char *name, int ms)
{
	long deadline = lab_now_ms() + ms;
	struct json_object *ev;

	while (lab_now_ms() < deadline &&
	       !qmp_client_next_event(v.c, &ev,
				      (int)(deadline - lab_now_ms()))) {
		const char *n = vmproc_str(ev, "event", NULL);

		if (n && !strcmp(n, name)) {
			printf("# %s\n", json_object_to_json_string_ext(
						 ev, JSON_C_TO_STRING_PLAIN));
			return ev;
		}
		json_object_put(ev);
	}
	printf("# no %s within %d ms\n", name, ms);
	return NULL;
}

/* Drops the events kept so far. */
static void events_drop(void)
{
	struct json_object *ev;

	while (qmp_client_pending_events(v.c) &&
	       !qmp_client_next_event(v.c, &ev, 0))
		json_object_put(ev);
}

/* Hot-adds @cpu, wait: started; true if Debian's agent onlined it. */
static bool hotadd(int cpu)
{
	struct json_object *r = NULL;
	char err[256];
	long t0 = lab_now_ms();
	int ret = vmproc_qmp(&v, "cpu-hotplug", &r, err, sizeof(err),
			     "{\"cpu\": %d, \"state\": \"online\", "
			     "\"wait\": \"started\"}",
			     cpu);
	const char *by = r ? vmproc_str(r, "onlined-by", NULL) : NULL;

	if (ret)
		printf("# cpu-hotplug %d: %s\n", cpu, err);
	CHECK_EQ(ret, 0);
	printf("# cpu-hotplug %d, onlined by %s: %ld ms\n", cpu, by ? by : "-",
	       lab_now_ms() - t0);
	CHECK_STREQ(by, "agent");
	json_object_put(r);
	return !ret && by && !strcmp(by, "agent");
}

/* The console so far (vmproc keeps all of it in v->log) holds @needle. */
static bool console_has(struct vmproc *p, const char *needle)
{
	static char buf[1 << 21];
	FILE *f = fopen(p->log, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return strstr(buf, needle) != NULL;
}

/* Waits up to @ms for @needle in the console's log (read, polled). */
static bool console_wait(struct vmproc *p, const char *needle, int ms)
{
	long deadline = lab_now_ms() + ms;

	for (;;) {
		vmproc_drain(p);
		if (console_has(p, needle))
			return true;
		if (lab_now_ms() >= deadline)
			return false;
		pause_ms(50);
	}
}

/* hotvm with the image's kernel and initramfs, root on --disk. */
static int start(void)
{
	char cmdline[300];
	int ret;

	/* DEBIAN_CMDLINE: more for the kernel's command line. */
	snprintf(cmdline, sizeof(cmdline), "root=/dev/vda console=ttyS0%s%s",
		 getenv("DEBIAN_CMDLINE") ? " " : "",
		 getenv("DEBIAN_CMDLINE") ? getenv("DEBIAN_CMDLINE") : "");
	ret = lab_debian_boot(&v, cmdline, sock, "virtio", NULL);
	if (ret)
		return ret;
	if (!lab_agent_wait(sock, AGENT_MS)) {
		printf("# Debian's qemu-ga never answered\n");
		vmproc_console_tail(&v, 60);
		vmproc_stop(&v);
		return -ETIMEDOUT;
	}
	return 0;
}

/* Writes @text to the guest's @file and syncs it: 0 on success. */
static int write_synced(const char *file, const char *text)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "echo %s > %s && sync %s", text, file, file);
	return lab_guest_sh(sock, cmd, NULL, 0);
}

static void test_boot_hotadd(void)
{
	if (start()) {
		CHECK(!"boot");
		return;
	}
	up = hotadd(1) & hotadd(2);
	online_is("0-2");
	hotvm_cpus_are(3);
	if (!up)
		vmproc_stop(&v);
}

/*
 * What hotvm's threads wait in and what its vCPUs do (KVM's exits, from
 * the lab's tracefs): for a guest that does not come back.
 */
static void why_stuck(void)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "for t in /proc/%d/task/*; do echo \"# $(cat $t/comm) "
		 "$(cat $t/wchan) $(cut -d' ' -f1 $t/syscall) "
		 "utime=$(cut -d' ' -f14 $t/stat)\"; done; "
		 "T=/sys/kernel/tracing; [ -e $T/trace ] || "
		 "mount -t tracefs nodev $T; echo > $T/trace; "
		 "echo 1 > $T/events/kvm/kvm_exit/enable; "
		 "echo 1 > $T/events/kvm/kvm_inj_virq/enable; "
		 "echo 1 > $T/events/kvm/kvm_apic_accept_irq/enable; sleep 2; "
		 "echo 0 > $T/events/kvm/enable; "
		 "echo \"# kvm events in 2 s: $(grep -c . $T/trace)\"; "
		 "grep -v '^#' $T/trace | head -n 40 | sed 's/^/# /'; "
		 "grep -o 'reason [A-Za-z_]* rip 0x[0-9a-f]*' $T/trace | "
		 "sort | uniq -c | sort -rn | head -n 10 | sed 's/^/# /'; "
		 "for t in /proc/%d/task/*; do echo \"# $(cat $t/comm) "
		 "utime=$(cut -d' ' -f14 $t/stat)\"; done",
		 (int)v.pid, (int)v.pid);
	if (system(cmd))
		printf("# (no threads)\n");
}

/* The new kernel's first line within @ms of a reset; else why not. */
static bool kernel_again(int ms)
{
	long end = lab_now_ms() + ms;
	char got[512];

	while (lab_now_ms() < end)
		if (vmproc_wait_line(&v, "", (int)(end - lab_now_ms()), got,
				     sizeof(got)))
			break;
		else if (strstr(got, "Linux version"))
			return true;
	printf("# no 'Linux version' line within %d ms of the reset\n", ms);
	why_stuck();
	return false;
}

/*
 * systemctl reboot: hotvm resets (RESET, guest-reset) and goes on; the
 * hot-added vCPUs stay plugged and boot with the guest as boot CPUs do
 * (design.md §9, as QEMU: its ACPI tables are rebuilt at reset), so Linux
 * brings all three up at boot; the file synced before is there.
 */
static void test_reboot(void)
{
	struct json_object *ev;
	char got[128], line[256];
	long t0;

	if (!up)
		CHECK(!"the VM is up");
	if (!up)
		return;
	snprintf(mark1, sizeof(mark1), "hotvm-mark1-%ld", (long)getpid());
	CHECK_EQ(write_synced("/root/mark1", mark1), 0);
	events_drop();
	t0 = lab_now_ms();
	CHECK_EQ(lab_guest_sh(sock, "systemctl reboot", NULL, 0), 0);
	ev = event("RESET", OFF_MS);
	CHECK(ev != NULL);
	CHECK(ev && vmproc_flag(ev, "data", "guest"));
	CHECK_STREQ(ev ? vmproc_str(ev, "data", "reason") : NULL,
		    "guest-reset");
	json_object_put(ev);
	printf("# RESET %ld ms after systemctl reboot\n", lab_now_ms() - t0);
	if (!kernel_again(AGAIN_MS) ||
	    vmproc_wait_line(&v, "ready: multi-user.target", BOOT_MS, line,
			     sizeof(line)) ||
	    !lab_agent_wait(sock, AGENT_MS)) {
		CHECK(!"booted again");
		vmproc_console_tail(&v, 60);
		up = false;
		vmproc_stop(&v);
		return;
	}
	printf("# multi-user.target again %ld ms after systemctl reboot\n",
	       lab_now_ms() - t0);
	/* systemd's own reboot, through the reset register, not a crash. */
	if (!console_has(&v, "systemd-shutdown[1]: Syncing filesystems") ||
	    !console_has(&v, "reboot: Restarting system")) {
		CHECK(!"systemd's reboot on the console");
		vmproc_console_tail(&v, 60);
	}
	CHECK(kill(v.pid, 0) == 0);
	hotvm_cpus_are(3);
	online_is("0-2");
	CHECK(lab_guest_line(sock, "/root/mark1", got, sizeof(got)));
	CHECK_STREQ(got, mark1);
}

/* device_del of @cpu by its QOM path; waits for its DEVICE_DELETED. */
static bool remove_cpu(int cpu)
{
	struct json_object *r = NULL, *ev;
	char err[256], qom[128] = "";
	long t0 = lab_now_ms();
	bool ok;

	if (!vmproc_qmp(&v, "query-cpus-fast", &r, err, sizeof(err), NULL))
		for (size_t i = 0; r && i < json_object_array_length(r); i++) {
			struct json_object *c = json_object_array_get_idx(r, i);
			struct json_object *x;

			if (json_object_object_get_ex(c, "cpu-index", &x) &&
			    json_object_get_int(x) == cpu)
				snprintf(qom, sizeof(qom), "%s",
					 vmproc_str(c, "qom-path", NULL));
		}
	json_object_put(r);
	CHECK(qom[0] != 0);
	events_drop();
	ok = !vmproc_qmp(&v, "device_del", NULL, err, sizeof(err),
			 "{\"id\": \"%s\"}", qom);
	if (!ok)
		printf("# device_del %s: %s\n", qom, err);
	CHECK(ok);
	ev = event("DEVICE_DELETED", EVENT_MS);
	CHECK(ev != NULL);
	CHECK_STREQ(ev ? vmproc_str(ev, "data", "path") : NULL, qom);
	ok = ok && ev;
	json_object_put(ev);
	printf("# device_del %s: %ld ms\n", qom, lab_now_ms() - t0);
	return ok;
}

/* Both removed by device_del: DEVICE_DELETED each, Linux back at 0. */
static void test_device_del(void)
{
	if (!up)
		CHECK(!"the VM is up");
	if (!up)
		return;
	CHECK(remove_cpu(2));
	CHECK(remove_cpu(1));
	online_is("0");
	hotvm_cpus_are(1);
}

/*
 * The guest ejects a hot-added CPU itself, as a user would: Linux offers
 * /sys/devices/system/cpu/cpuN/firmware_node/eject (firmware_node is the
 * CPU's ACPI0007 device, which has _EJ0).  hotvm honours it (the default,
 * --guest-eject allow): DEVICE_DELETED, and both tables say it is gone.
 */
static void test_sysfs_eject(void)
{
	struct json_object *ev;
	char out[512];

	if (!up)
		CHECK(!"the VM is up");
	if (!up)
		return;
	if (!hotadd(1))
		return;
	online_is("0-1");
	CHECK_EQ(lab_guest_sh(sock,
			      "readlink -f /sys/devices/system/cpu/cpu1/"
			      "firmware_node; ls /sys/devices/system/cpu/cpu1/"
			      "firmware_node/",
			      out, sizeof(out)),
		 0);
	for (char *p = strtok(out, "\n"); p; p = strtok(NULL, "\n"))
		printf("# guest: %s\n", p);
	events_drop();
	CHECK_EQ(lab_guest_sh(sock,
			      "echo 1 > /sys/devices/system/cpu/cpu1/"
			      "firmware_node/eject",
			      NULL, 0),
		 0);
	ev = event("DEVICE_DELETED", EVENT_MS);
	CHECK(ev != NULL);
	json_object_put(ev);
	hotvm_cpus_are(1);
	online_is("0");
	/* Linux has let it go whole: no cpu1 left in sysfs. */
	CHECK_EQ(lab_guest_sh(sock, "test ! -e /sys/devices/system/cpu/cpu1",
			      NULL, 0),
		 0);
}

/*
 * The guest agent killed while a hot-add waits on it.  In the guest, a
 * unit of its own (systemd-run, outside qemu-ga's cgroup, started by a
 * guest-exec whose status nobody asks: the agent it stops is not waited
 * on) stops qemu-ga (SIGSTOP: the port stays open, nothing is read),
 * waits for Linux's cpu1 and then up to 1 s for more of hotvm's bytes to
 * reach the port (bytes_received in virtio_console's debugfs file for
 * org.qemu.guest_agent.0: hotvm may have asked before the killer saw
 * cpu1), and kills it: systemctl kill -s KILL, as a crash.  Its port
 * closes (PORT_OPEN 0), which ends hotvm's call in flight at once
 * (port-closed); hotvm asks again, and Debian's unit restarts qemu-ga
 * (Restart=always, RestartSec=0), which answers.  The hot-add must end
 * within its bound with the CPU online through the new agent, and the
 * next operation must work.
 */
static void test_agent_killed(void)
{
	static const char killer[] =
		"systemd-run --unit=hotvm-killmid --collect /bin/sh -c '"
		"d=$(grep -l \"^name: org.qemu.guest_agent.0\" "
		"/sys/kernel/debug/virtio-ports/*) || exit 1; "
		"rx() { sed -n \"s/^bytes_received: //p\" $d; }; "
		"pid=$(systemctl show -P MainPID qemu-guest-agent); "
		"systemctl kill -s STOP qemu-guest-agent; "
		"echo \"<2>killmid: qemu-ga $pid stopped\" >/dev/kmsg; "
		"i=0; while [ ! -e /sys/devices/system/cpu/cpu1 ] && "
		"[ $i -lt 6000 ]; do sleep 0.02; i=$((i+1)); done; "
		"r=$(rx); t=$(($(date +%s%N) + 1000000000)); "
		"while [ $(rx) = $r ] && [ $(date +%s%N) -lt $t ]; do "
		"sleep 0.02; done; "
		"systemctl kill -s KILL qemu-guest-agent; "
		"echo \"<2>killmid: qemu-ga $pid killed, rx $r -> $(rx)\" "
		">/dev/kmsg'";
	struct json_object *r = NULL;
	char err[512], out[256];
	long t0, closed;
	int ret;

	if (!up)
		CHECK(!"the VM is up");
	if (!up)
		return;
	CHECK_EQ(lab_guest_sh(sock,
			      "systemctl show -P NRestarts qemu-guest-agent",
			      out, sizeof(out)),
		 0);
	printf("# qemu-guest-agent NRestarts before: %s", out);
	closed = lab_agent_stat(&v, "port-closed");
	CHECK(lab_guest_exec(sock, "/bin/sh", killer, false) > 0);
	/* qemu-ga stopped before the hot-add asks it (the console says). */
	CHECK(console_wait(&v, "killmid: qemu-ga", AGENT_MS));
	t0 = lab_now_ms();
	ret = vmproc_qmp(&v, "cpu-hotplug", &r, err, sizeof(err),
			 "{\"cpu\": 1, \"state\": \"online\", "
			 "\"wait\": \"started\"}");
	printf("# cpu-hotplug 1 with qemu-ga killed under it: %s in %ld "
	       "ms%s%s\n",
	       ret ? "error" : "ok", lab_now_ms() - t0, ret ? ": " : "",
	       ret ? err : "");
	CHECK_EQ(ret, 0);
	if (!ret)
		CHECK_STREQ(vmproc_str(r, "onlined-by", NULL), "agent");
	json_object_put(r);
	CHECK(lab_now_ms() - t0 < KILLED_MS);
	/* The kill closed the port under a call of the hot-add's. */
	printf("# port-closed %ld -> %ld\n", closed,
	       lab_agent_stat(&v, "port-closed"));
	CHECK(closed >= 0 && lab_agent_stat(&v, "port-closed") > closed);
	/* The killer says so after the kill: the console is read for it. */
	if (!console_wait(&v, "killed, rx", 10000)) {
		CHECK(!"the killer's kill on the console");
		vmproc_console_tail(&v, 40);
	}
	/* systemd brought it back: the agent answers, restarted once. */
	if (!lab_agent_wait(sock, AGENT_MS)) {
		CHECK(!"the agent answers again");
		vmproc_console_tail(&v, 40);
	}
	CHECK_EQ(lab_guest_sh(sock,
			      "systemctl show -P NRestarts qemu-guest-agent",
			      out, sizeof(out)),
		 0);
	printf("# qemu-guest-agent NRestarts after: %s", out);
	CHECK_EQ(atoi(out), 1);
	/* The next operation works through the new agent. */
	if (ret) {
		CHECK(strstr(err, "agent") != NULL);
		hotadd(1);
	}
	online_is("0-1");
	CHECK(remove_cpu(1));
	online_is("0");
}

/* systemctl poweroff: hotvm ends with 0, systemd's own power-off. */
static void test_systemctl_poweroff(void)
{
	long t0;
	int ret;

	if (!up)
		CHECK(!"the VM is up");
	if (!up)
		return;
	snprintf(mark2, sizeof(mark2), "hotvm-mark2-%ld", (long)getpid());
	CHECK_EQ(write_synced("/root/mark2", mark2), 0);
	t0 = lab_now_ms();
	CHECK_EQ(lab_guest_sh(sock, "systemctl poweroff", NULL, 0), 0);
	ret = vmproc_wait_exit(&v, OFF_MS);
	printf("# hotvm ended (%d) %ld ms after systemctl poweroff\n", ret,
	       lab_now_ms() - t0);
	CHECK_EQ(ret, 0);
	if (!console_has(&v, "systemd-shutdown[1]: Syncing filesystems") ||
	    !console_has(&v, "reboot: Power down")) {
		CHECK(!"systemd's power-off on the console");
		vmproc_console_tail(&v, 60);
	}
	vmproc_stop(&v);
	up = false;
}

/*
 * A second hotvm on the same disk: what the first run synced is there.
 * Then the ACPI power button: systemd-logind, not acpid, powers off.
 */
static void test_second_run_powerdown(void)
{
	char err[256], got[128];
	long t0;
	int ret;

	if (start()) {
		CHECK(!"boot");
		return;
	}
	CHECK(lab_guest_line(sock, "/root/mark1", got, sizeof(got)));
	CHECK_STREQ(got, mark1);
	CHECK(lab_guest_line(sock, "/root/mark2", got, sizeof(got)));
	CHECK_STREQ(got, mark2);
	hotvm_cpus_are(1);
	online_is("0");
	t0 = lab_now_ms();
	ret = vmproc_qmp(&v, "system_powerdown", NULL, err, sizeof(err), NULL);
	if (ret)
		printf("# system_powerdown: %s\n", err);
	CHECK_EQ(ret, 0);
	ret = vmproc_wait_exit(&v, OFF_MS);
	printf("# hotvm ended (%d) %ld ms after system_powerdown\n", ret,
	       lab_now_ms() - t0);
	CHECK_EQ(ret, 0);
	/* A power-off, systemd's own: not a crash, a reset or a halt. */
	if (!console_has(&v, "systemd-shutdown[1]: Syncing filesystems") ||
	    !console_has(&v, "reboot: Power down")) {
		CHECK(!"systemd's power-off on the console");
		vmproc_console_tail(&v, 60);
	}
	vmproc_stop(&v);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_same_kernel),
		TEST(test_boot_hotadd),
		TEST(test_reboot),
		TEST(test_device_del),
		TEST(test_sysfs_eject),
		TEST(test_agent_killed),
		TEST(test_systemctl_poweroff),
		TEST(test_second_run_powerdown),
	};

	if (lab_debian_init(argc, argv))
		return 1;
	/* Further arguments: the cases to run (all by default). */
	if (argc > 3)
		return check_run_named(cases, sizeof(cases) / sizeof(cases[0]),
				       argv + 3, argc - 3);
	return check_run(cases, sizeof(cases) / sizeof(cases[0]));
}
