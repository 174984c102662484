// SPDX-License-Identifier: GPL-2.0-only
/*
 * A Debian 12 image (tools/debian-image.sh) on hotvm, in the nested lab:
 * the lab's own virtio disk (/dev/vda there, lab.sh --disk) is hotvm's
 * --disk; the image's kernel is the lab's (the same Debian package) and
 * its initramfs is Debian's initramfs-tools', which finds root=/dev/vda
 * through virtio_mmio (ACPI, LNRO0005) and virtio_blk.  systemd boots to
 * multi-user.target, whose unit hotvm-ready says so on the console;
 * system_powerdown presses the ACPI power button, systemd-logind powers
 * the VM off, and hotvm ends with 0.  Before that, with hotvm --agent on
 * its virtio-console port org.qemu.guest_agent.0 (Debian's own
 * qemu-guest-agent unit, unchanged, starts qemu-ga there; the image's
 * COM2 unit is left off: no hotvm.agent=com2), two vCPUs are hot-added,
 * each onlined by the agent (guest-set-vcpus),
 * and the guest's /sys/devices/system/cpu/online, read through the agent
 * (guest-file-read), says 0-2.
 *
 * Usage: test-debian LINUX IMAGE: LINUX holds vmlinux (lab.sh
 * --linux-guest), IMAGE initrd.img and kernel-version (the image's);
 * HOTVM is the hotvm binary, DISK the block device (default /dev/vda).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check.h"
#include "mux_client.h"
#include "lab_linux.h"
#include "vmproc.h"

#define BOOT_MS	 240000
#define OFF_MS	 120000
#define AGENT_MS 60000

static const char *linux_dir, *image_dir, *disk;

/* The image's kernel is the lab's own: its initramfs's modules load. */
static void test_same_kernel(void)
{
	char want[128] = "";
	struct utsname u;
	FILE *f = fopen(lab_path_in(image_dir, "kernel-version"), "r");

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

/* Base64 (RFC 4648) @in decoded into @out, NUL-terminated; its length. */
static size_t unbase64(const char *in, char *out, size_t size)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned int acc = 0, bits = 0;
	size_t n = 0;

	for (; *in && *in != '=' && n + 1 < size; in++) {
		const char *p = strchr(abc, *in);

		if (!p)
			break;
		acc = (acc << 6) | (unsigned int)(p - abc);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[n] = 0;
	return n;
}

/* The guest's file @file, first line, read through the agent's socket. */
static bool agent_read(const char *sock, const char *file, char *out,
		       size_t size)
{
	struct json_object *r, *ret, *b64;
	char req[256];
	long handle = -1;
	bool ok = false;
	int fd = mux_connect(sock);

	out[0] = 0;
	if (fd < 0)
		return false;
	snprintf(req, sizeof(req),
		 "{\"execute\":\"guest-file-open\",\"arguments\":"
		 "{\"path\":\"%s\",\"mode\":\"r\"}}\n",
		 file);
	r = mux_ask(fd, req, AGENT_MS, NULL);
	if (r && json_object_object_get_ex(r, "return", &ret))
		handle = json_object_get_int64(ret);
	json_object_put(r);
	if (handle < 0) {
		close(fd);
		return false;
	}
	snprintf(req, sizeof(req),
		 "{\"execute\":\"guest-file-read\",\"arguments\":"
		 "{\"handle\":%ld,\"count\":256}}\n",
		 handle);
	r = mux_ask(fd, req, AGENT_MS, NULL);
	if (r && json_object_object_get_ex(r, "return", &ret) &&
	    json_object_object_get_ex(ret, "buf-b64", &b64)) {
		unbase64(json_object_get_string(b64), out, size);
		out[strcspn(out, "\n")] = 0;
		ok = true;
	}
	json_object_put(r);
	snprintf(req, sizeof(req),
		 "{\"execute\":\"guest-file-close\",\"arguments\":"
		 "{\"handle\":%ld}}\n",
		 handle);
	json_object_put(mux_ask(fd, req, AGENT_MS, NULL));
	close(fd);
	return ok;
}

/* Hot-adds CPUs 1 and 2; Debian's agent onlines each (wait: started). */
static void hotadd_two(struct vmproc *v, const char *sock)
{
	char err[256], online[128];

	for (int cpu = 1; cpu <= 2; cpu++) {
		struct json_object *r = NULL;
		long t0 = lab_now_ms();
		int ret = vmproc_qmp(v, "cpu-hotplug", &r, err, sizeof(err),
				     "{\"cpu\": %d, \"state\": \"online\", "
				     "\"wait\": \"started\"}",
				     cpu);

		if (ret)
			printf("# cpu-hotplug %d: %s\n", cpu, err);
		CHECK_EQ(ret, 0);
		printf("# cpu-hotplug %d, onlined by %s: %ld ms\n", cpu,
		       r ? vmproc_str(r, "onlined-by", NULL) : "-",
		       lab_now_ms() - t0);
		if (r)
			CHECK_STREQ(vmproc_str(r, "onlined-by", NULL), "agent");
		json_object_put(r);
	}
	CHECK(agent_read(sock, "/sys/devices/system/cpu/online", online,
			 sizeof(online)));
	printf("# the guest's /sys/devices/system/cpu/online: %s\n", online);
	CHECK_STREQ(online, "0-2");
}

/* The console so far (vmproc keeps all of it in v->log) holds @needle. */
static bool console_has(struct vmproc *v, const char *needle)
{
	static char buf[1 << 20];
	FILE *f = fopen(v->log, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return strstr(buf, needle) != NULL;
}

static void test_boot_powerdown(void)
{
	char dspec[300], err[256], sock[] = "/tmp/hotvm-debian-agent.sock";
	const char *extra[] = { "--kernel",
				lab_path_in(linux_dir, "vmlinux"),
				"--initrd",
				lab_path_in(image_dir, "initrd.img"),
				"--memory",
				"512M",
				"--disk",
				dspec,
				"--agent-socket",
				sock,
				"--agent-channel",
				"virtio",
				NULL };
	struct stat st;
	struct vmproc v;
	long t0;
	int ret;

	CHECK(stat(disk, &st) == 0 && S_ISBLK(st.st_mode));
	snprintf(dspec, sizeof(dspec), "path=%s,id=debian", disk);
	t0 = lab_now_ms();
	/* "ready: multi-user.target" from the unit ordered after it. */
	ret = vmproc_start_ms(&v, "boot=1,max=3", "root=/dev/vda console=ttyS0",
			      extra, BOOT_MS);
	if (ret) {
		printf("# did not reach multi-user.target: %s\n",
		       strerror(-ret));
		CHECK(!"boot");
		vmproc_console_tail(&v, 60);
		vmproc_stop(&v);
		return;
	}
	printf("# multi-user.target %ld ms after hotvm started\n",
	       lab_now_ms() - t0);
	hotadd_two(&v, sock);
	/* The ACPI power button: logind, not acpid, powers off. */
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
		TEST(test_boot_powerdown),
	};

	linux_dir = argc > 1 ? argv[1] : "/lab/linux";
	image_dir = argc > 2 ? argv[2] : "/lab/debian";
	disk = getenv("DISK") ? getenv("DISK") : "/dev/vda";
	if (access(lab_path_in(linux_dir, "vmlinux"), R_OK) ||
	    access(lab_path_in(image_dir, "initrd.img"), R_OK)) {
		/* The lab puts them there (tests/lab/debian.sh): not a skip. */
		printf("Bail out! no vmlinux in %s or initrd.img in %s: run "
		       "this under tests/lab/debian.sh\n",
		       linux_dir, image_dir);
		return 1;
	}
	return check_run(cases, sizeof(cases) / sizeof(cases[0]));
}
