// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-blk with Debian's kernel on hotvm, in the nested lab: Linux's own
 * virtio_mmio finds the disks through ACPI (LNRO0005) and virtio_blk
 * drives them.  The guest's init (hotvm.disk=1, tools/lab/guest/
 * disk-check) lists the disks, writes 1 MiB of random data and a header
 * with its MD5 (each with fsync: FLUSH), reboots, and reads them back.
 * The host holds every step to what it gave: the sizes, read-only flags
 * and serials; the write refused on the read-only disk; the checksum read
 * back after the reboot (the VM's reset of the device) equal to the one
 * written; the image file itself holding the header and the data; a
 * second hotvm refused the same image while the first runs.
 *
 * Usage: test-disk DIR (DIR holds vmlinux and initrd.gz); HOTVM is the
 * hotvm binary.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "lab_linux.h"
#include "vmproc.h"

#define WAIT_MS 180000
#define DISK_MB 16
#define RO_SECS 2048

static struct vmproc v;
static char img[64], ro_img[64];

static bool make(const char *p, off_t bytes)
{
	int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	bool ok = fd >= 0 && !ftruncate(fd, bytes);

	if (fd >= 0)
		close(fd);
	CHECK(ok);
	return ok;
}

static bool line(const char *prefix, char *got, size_t n)
{
	int ret = vmproc_wait_line(&v, prefix, WAIT_MS, got, n);

	if (ret) {
		printf("# no console line '%s'\n", prefix);
		vmproc_console_tail(&v, 40);
	} else {
		printf("# console: %s\n", got);
	}
	CHECK_EQ(ret, 0);
	return !ret;
}

/* Every byte of the file at @p is zero. */
static bool zero_image(const char *p)
{
	unsigned char buf[4096];
	bool zero = true;
	ssize_t n;
	int fd = open(p, O_RDONLY);

	if (fd < 0)
		return false;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			zero = zero && !buf[i];
	close(fd);
	return zero && !n;
}

/* The output of a shell command, first line, trailing newline cut. */
static void sh_line(const char *cmd, char *out, size_t n)
{
	FILE *f = popen(cmd, "r");

	out[0] = 0;
	if (f) {
		if (!fgets(out, (int)n, f))
			out[0] = 0;
		pclose(f);
	}
	out[strcspn(out, "\n")] = 0;
}

/* A second hotvm with the same image: refused at once, status 2. */
static void second_vm_refused(void)
{
	char cmd[1024], out[512];
	int st;

	snprintf(cmd, sizeof(cmd),
		 "'%s' run --kernel '%s' --disk path=%s --serial none "
		 "2>&1 >/dev/null; echo \"status=$?\"",
		 vmproc_hotvm(), lab_linux_path("vmlinux"), img);
	sh_line(cmd, out, sizeof(out));
	printf("# second VM: %s\n", out);
	CHECK(strstr(out, "locked") != NULL);
	snprintf(cmd, sizeof(cmd),
		 "'%s' run --kernel '%s' --disk path=%s --serial none "
		 ">/dev/null 2>&1",
		 vmproc_hotvm(), lab_linux_path("vmlinux"), img);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
}

static void test_write_reboot_read(void)
{
	const char *extra[] = { "--kernel", lab_linux_path("vmlinux"),
				"--initrd", lab_linux_path("initrd.gz"),
				"--memory", "512M",
				"--disk",   NULL,
				"--disk",   NULL,
				NULL };
	char d1[600], d2[600], got[512], wrote[64] = "", read_w[64] = "",
					 read_now[64] = "", want[160],
					 host[160];
	int ret;

	snprintf(img, sizeof(img), "/tmp/hotvm-disk-%d.img", (int)getpid());
	snprintf(ro_img, sizeof(ro_img), "/tmp/hotvm-ro-%d.img", (int)getpid());
	if (!make(img, (off_t)DISK_MB << 20) || !make(ro_img, RO_SECS * 512))
		return;
	snprintf(d1, sizeof(d1), "path=%s,id=hotvm-lab", img);
	snprintf(d2, sizeof(d2), "path=%s,readonly=on,id=hotvm-ro", ro_img);
	extra[7] = d1;
	extra[9] = d2;
	ret = vmproc_start_ms(&v, "boot=1", "console=ttyS0 hotvm.disk=1", extra,
			      WAIT_MS);
	if (ret) {
		printf("# did not boot: %s\n", strerror(-ret));
		CHECK(!"boot");
		vmproc_console_tail(&v, 40);
		vmproc_stop(&v);
		return;
	}
	/* Both disks, with the sizes, flags and serials given. */
	snprintf(want, sizeof(want), "disk: vda size=%d ro=0 serial=hotvm-lab",
		 DISK_MB * 2048);
	if (line("disk: vda ", got, sizeof(got)))
		CHECK_STREQ(got, want);
	snprintf(want, sizeof(want), "disk: vdb size=%d ro=1 serial=hotvm-ro",
		 RO_SECS);
	if (line("disk: vdb ", got, sizeof(got)))
		CHECK_STREQ(got, want);
	if (line("disk: /dev/vdb ", got, sizeof(got)))
		CHECK_STREQ(got, "disk: /dev/vdb refused a write");
	second_vm_refused();
	/* The write, the reboot, the read after it. */
	if (line("disk: wrote ", got, sizeof(got)))
		sscanf(got, "disk: wrote %63s", wrote);
	if (line("disk: read ", got, sizeof(got)))
		sscanf(got, "disk: read %63s %63s", read_w, read_now);
	CHECK_EQ(strlen(wrote), 32);
	CHECK_STREQ(read_w, wrote);
	CHECK_STREQ(read_now, wrote);
	/* The guest powered off: hotvm ends with 0. */
	CHECK_EQ(vmproc_wait_exit(&v, WAIT_MS), 0);
	vmproc_stop(&v);
	/* The image file holds what the guest wrote. */
	snprintf(want, sizeof(want), "head -n 1 %s", img);
	sh_line(want, host, sizeof(host));
	snprintf(want, sizeof(want), "hotvm-disk %s", wrote);
	CHECK_STREQ(host, want);
	snprintf(want, sizeof(want),
		 "dd if=%s bs=65536 skip=1 count=16 2>/dev/null | md5sum", img);
	sh_line(want, host, sizeof(host));
	host[strcspn(host, " ")] = 0;
	CHECK_STREQ(host, wrote);
	/* And the read-only image was not written. */
	CHECK(zero_image(ro_img));
	unlink(img);
	unlink(ro_img);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_write_reboot_read),
	};

	if (lab_linux_init(argc > 1 ? argv[1] : NULL))
		return 1;
	return check_run(cases, sizeof(cases) / sizeof(cases[0]));
}
