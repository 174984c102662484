// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel file under a racing writer: hotvm reads
 * the image once into private memory (image_read()) and the PVH loader
 * checks and copies only that copy.  Another process rewriting, truncating
 * and corrupting the file meanwhile may make a start fail, with a reason,
 * but never crash it (SIGBUS from a truncated mapping) or make it write
 * outside guest RAM (a p_paddr changed between the check and the copy).
 *
 *   test_image_race KERNEL
 *
 * KERNEL is a small PVH ELF (tests/boot/boot-stub); the test works on a
 * copy of it.  Guest RAM here sits between two inaccessible pages, so a
 * write past either end ends the test with SIGSEGV instead of passing
 * unseen.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hv_err.h"
#include "check.h"
#include "image.h"
#include "pvh.h"

#define RAM_END	 0x400000ULL
#define LOAD_MIN 0x100000ULL
#define PAGE	 4096u

static const char *stub_path;
static uint8_t *good, *hostile; /* the stub, and with p_paddr far away */
static size_t len;
static struct pvh_kernel want; /* where the stub loads */
static uint8_t *ram;
static char path[64];

/* Guest RAM with an inaccessible page on either side. */
static uint8_t *guarded_ram(void)
{
	uint8_t *p = mmap(NULL, RAM_END + 2 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	mprotect(p, PAGE, PROT_NONE);
	mprotect(p + PAGE + RAM_END, PAGE, PROT_NONE);
	return p + PAGE;
}

static int load(const uint8_t *img, size_t n, struct pvh_kernel *k, char *why,
		size_t whylen)
{
	struct hv_err err = { 0 };
	int ret = pvh_load_elf(img, n, ram, RAM_END, LOAD_MIN, k, &err);

	snprintf(why, whylen, "%.*s", (int)whylen - 1, err.msg);
	return ret;
}

/*
 * The stub as read here, the reference load, and a hostile twin: bit 62
 * of every program header's p_paddr set, a segment at 0x40000000_00100000
 * that a loader copying from the file after checking it would write to.
 */
static bool setup(void)
{
	struct pvh_kernel k;
	Elf64_Ehdr eh;
	char why[200];
	FILE *f;

	if (good)
		return true;
	f = fopen(stub_path, "rb");
	CHECK(f != NULL);
	if (!f)
		return false;
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	good = malloc(len);
	hostile = malloc(len);
	ram = guarded_ram();
	CHECK(good && hostile && ram && len > sizeof(eh));
	if (!good || !hostile || !ram || len <= sizeof(eh) ||
	    fread(good, 1, len, f) != len) {
		fclose(f);
		return false;
	}
	fclose(f);
	memcpy(hostile, good, len);
	memcpy(&eh, good, sizeof(eh));
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		size_t at = eh.e_phoff + i * sizeof(Elf64_Phdr) +
			    offsetof(Elf64_Phdr, p_paddr) + 7;

		if (at < len)
			hostile[at] |= 0x40;
	}
	CHECK_EQ(load(good, len, &want, why, sizeof(why)), 0);
	CHECK_EQ(load(hostile, len, &k, why, sizeof(why)), -ENOEXEC);
	snprintf(path, sizeof(path), "/tmp/hotvm-image-race.%d", (int)getpid());
	return true;
}

static void write_file(const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, data, n), (ssize_t)n);
	close(fd);
}

/* A start's outcome: loaded where the stub loads, or refused with a why. */
static void check_loaded(int ret, const struct pvh_kernel *k, const char *why)
{
	if (ret) {
		CHECK_EQ(ret, -ENOEXEC);
		CHECK(why[0] != 0);
		return;
	}
	CHECK_EQ(k->entry, want.entry);
	CHECK_EQ(k->lo, want.lo);
	CHECK_EQ(k->hi, want.hi);
}

/*
 * Deterministic: what image_read() returned stays what the file held then,
 * whatever happens to the file afterwards (a mapping of the file would
 * follow a rewrite, and fault after a truncation).
 */
static void test_private_copy(void)
{
	struct pvh_kernel k;
	struct image img;
	char why[200];
	int fd;

	if (!setup())
		return;
	write_file(good, len);
	CHECK_EQ(image_read(&img, "kernel", path), 0);
	CHECK_EQ(img.size, len);

	/* In place: truncated, then the hostile image written over it. */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, 16), 0);
	CHECK_EQ(pwrite(fd, hostile, len, 0), (ssize_t)len);
	close(fd);

	CHECK(!memcmp(img.data, good, len));
	check_loaded(load(img.data, img.size, &k, why, sizeof(why)), &k, why);
	CHECK_EQ(load(img.data, img.size, &k, why, sizeof(why)), 0);
	image_free(&img);
	unlink(path);
}

/*
 * The writer, until killed: truncates the file and writes it again a
 * piece at a time (an in-place copy), truncates it to a random length,
 * writes the hostile image over it; and most of the time writes it whole
 * in place, so that some starts find it whole.
 */
static void writer(void)
{
	unsigned int seed = (unsigned int)getpid();

	for (;;) {
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		size_t at = 0;

		if (fd < 0)
			_exit(1);
		switch (rand_r(&seed) % 16) {
		case 0: /* an in-place copy: truncated, then written */
			if (ftruncate(fd, 0))
				_exit(1);
			while (at < len) {
				size_t n = len - at < 1024 ? len - at : 1024;

				if (pwrite(fd, good + at, n, (off_t)at) < 0)
					_exit(1);
				at += n;
			}
			break;
		case 1:
			if (ftruncate(fd, (off_t)(rand_r(&seed) % len)))
				_exit(1);
			break;
		case 2:
			if (pwrite(fd, hostile, len, 0) < 0)
				_exit(1);
			break;
		default: /* whole again, rewritten in place */
			if (pwrite(fd, good, len, 0) < 0)
				_exit(1);
			break;
		}
		close(fd);
	}
}

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * Starts under a racing writer, for two seconds: each one reads the image
 * or says why not, then loads it or refuses it with a reason.  Never a
 * signal, never a write outside guest RAM.
 */
static void test_racing_writer(void)
{
	unsigned long loaded = 0, unread = 0, refused = 0;
	long end = now_ms() + 2000;
	int err_fd, null_fd, status;
	pid_t pid;

	if (!setup())
		return;
	write_file(good, len);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		writer();
	/* The loaders' reasons would be thousands of lines: count them. */
	fflush(stderr);
	err_fd = dup(STDERR_FILENO);
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(err_fd >= 0 && null_fd >= 0);
	dup2(null_fd, STDERR_FILENO);
	close(null_fd);
	while (now_ms() < end) {
		struct pvh_kernel k;
		struct image img;
		char why[200];
		int ret = image_read(&img, "kernel", path);

		if (ret) {
			/* Shrank meanwhile, or found empty. */
			if (ret != -ENODATA && ret != -EINVAL)
				printf("# image_read: %d\n", ret);
			CHECK(ret == -ENODATA || ret == -EINVAL);
			unread++;
			continue;
		}
		ret = load(img.data, img.size, &k, why, sizeof(why));
		check_loaded(ret, &k, why);
		if (ret)
			refused++;
		else
			loaded++;
		image_free(&img);
	}
	fflush(stderr);
	dup2(err_fd, STDERR_FILENO);
	close(err_fd);
	kill(pid, SIGKILL);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	/* The writer ran until killed: it really raced. */
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	printf("# %lu starts: %lu loaded, %lu refused by the loader, %lu "
	       "not read (the file shrank or was empty)\n",
	       loaded + refused + unread, loaded, refused, unread);
	CHECK(loaded + refused + unread > 0);
	unlink(path);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_private_copy),
		TEST(test_racing_writer),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s KERNEL\n", argv[0]);
		return 2;
	}
	stub_path = argv[1];
	return check_run(cases, sizeof(cases) / sizeof(cases[0]));
}
