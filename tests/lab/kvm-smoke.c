// SPDX-License-Identifier: GPL-2.0-only
/*
 * lab-kvm-smoke: is /dev/kvm a working KVM?  Needs nothing but the kernel.
 *
 * Opens /dev/kvm, checks KVM_GET_API_VERSION == 12, creates a VM with one page
 * of memory and one vCPU, and runs a few real-mode instructions:
 *
 *	add  %bl, %al        ; 2 + 3
 *	add  $'0', %al
 *	out  %al, (%dx)      ; exit KVM_EXIT_IO on port 0x10 (in %dx), '5'
 *	mov  $'\n', %al
 *	out  %al, (%dx)      ; exit KVM_EXIT_IO, '\n'
 *	mov  $N, %cx
 *  1:	out  %al, (%dx)      ; N more exits, timed
 *	loop 1b
 *	hlt                  ; exit KVM_EXIT_HLT (no in-kernel irqchip)
 *
 * and checks every exit.  Prints the time of each step and of one exit, and
 * "kvm-smoke: PASS" with exit status 0, or what went wrong and status 1
 * (77, skipped, when there is no /dev/kvm at all).
 * Built statically (when the toolchain can) for the nested lab's initramfs;
 * runs anywhere that has /dev/kvm.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define GUEST_ADDR	 0x1000
#define PORT		 0x10
#define LOOP_EXITS	 1000
#define WATCHDOG_SECONDS 60
#define STR(x)		 #x
#define XSTR(x)		 STR(x)

/* What the program is doing, for the watchdog. */
static const char *volatile step = "start";

static void put(const char *s)
{
	ssize_t n = write(STDOUT_FILENO, s, strlen(s));

	(void)n;
}

static volatile sig_atomic_t timed_out;

/*
 * SIGALRM: a step hung.  Say which at once (async-signal-safe calls only); a
 * KVM_RUN it interrupts returns EINTR and run() shows the vCPU's registers.
 * If nothing returns within 5 s more, give up.
 */
static void watchdog(int sig)
{
	(void)sig;
	if (timed_out)
		_exit(1);
	timed_out = 1;
	put("kvm-smoke: FAIL: stuck for " XSTR(WATCHDOG_SECONDS) " s in ");
	put(step);
	put("\n");
	alarm(5);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;
	int err = errno;

	va_start(ap, fmt);
	fputs("kvm-smoke: FAIL: ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	if (err)
		printf(" (errno %d: %s)", err, strerror(err));
	putchar('\n');
	exit(1);
}

static const char *exit_name(uint32_t reason)
{
	switch (reason) {
	case KVM_EXIT_IO:
		return "IO";
	case KVM_EXIT_HLT:
		return "HLT";
	case KVM_EXIT_MMIO:
		return "MMIO";
	case KVM_EXIT_SHUTDOWN:
		return "SHUTDOWN";
	case KVM_EXIT_FAIL_ENTRY:
		return "FAIL_ENTRY";
	case KVM_EXIT_INTERNAL_ERROR:
		return "INTERNAL_ERROR";
	default:
		return "other";
	}
}

static void run(int vcpu)
{
	struct kvm_regs regs;

	errno = 0;
	while (ioctl(vcpu, KVM_RUN, 0) < 0) {
		if (errno == EINTR && timed_out) {
			if (ioctl(vcpu, KVM_GET_REGS, &regs) == 0)
				printf("kvm-smoke: vCPU at rip %#llx, "
				       "rax %#llx, rcx %#llx\n",
				       (unsigned long long)regs.rip,
				       (unsigned long long)regs.rax,
				       (unsigned long long)regs.rcx);
			errno = 0;
			fail("watchdog: KVM_RUN did not exit");
		}
		if (errno != EINTR && errno != EAGAIN)
			fail("KVM_RUN");
	}
}

static void expect_out(int vcpu, struct kvm_run *r, char want)
{
	run(vcpu);
	errno = 0;
	if (r->exit_reason != KVM_EXIT_IO)
		fail("exit reason %u (%s), want KVM_EXIT_IO", r->exit_reason,
		     exit_name(r->exit_reason));
	if (r->io.direction != KVM_EXIT_IO_OUT || r->io.port != PORT ||
	    r->io.size != 1 || r->io.count != 1)
		fail("IO exit dir %u port %#x size %u count %u, "
		     "want out %#x size 1 count 1",
		     r->io.direction, r->io.port, r->io.size, r->io.count,
		     PORT);
	char got = *((char *)r + r->io.data_offset);
	if (got != want)
		fail("out byte %#x, want %#x", (unsigned char)got,
		     (unsigned char)want);
}

int main(void)
{
	/* clang-format off */
	static const uint8_t code[] = {
		0x00, 0xd8,             /* add %bl, %al */
		0x04, '0',              /* add $'0', %al */
		0xee,                   /* out %al, (%dx) */
		0xb0, '\n',             /* mov $'\n', %al */
		0xee,                   /* out %al, (%dx) */
		0xb9, LOOP_EXITS & 0xff, LOOP_EXITS >> 8, /* mov $N, %cx */
		0xee,                   /* 1: out %al, (%dx) */
		0xe2, 0xfd,             /* loop 1b */
		0xf4,                   /* hlt */
	};
	/* clang-format on */
	double t0, t1, t2, t3, t4;
	int kvm, vm, vcpu, n;
	long mmap_size;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, watchdog);
	alarm(WATCHDOG_SECONDS);
	t0 = now();
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0 && errno == ENOENT) {
		printf("kvm-smoke: SKIP: no /dev/kvm\n");
		return 77; /* meson's "skipped" */
	}
	if (kvm < 0)
		fail("open /dev/kvm");
	n = ioctl(kvm, KVM_GET_API_VERSION, 0);
	if (n != KVM_API_VERSION)
		fail("KVM_GET_API_VERSION = %d, want %d", n, KVM_API_VERSION);
	if (ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_USER_MEMORY) <= 0)
		fail("no KVM_CAP_USER_MEMORY");
	printf("kvm-smoke: API version %d, max vCPUs %d\n", n,
	       ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS));

	step = "KVM_CREATE_VM";
	vm = ioctl(kvm, KVM_CREATE_VM, 0UL);
	if (vm < 0)
		fail("KVM_CREATE_VM");
	uint8_t *mem = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		fail("mmap guest memory");
	memcpy(mem, code, sizeof(code));
	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.guest_phys_addr = GUEST_ADDR,
		.memory_size = 0x1000,
		.userspace_addr = (uintptr_t)mem,
	};
	step = "KVM_SET_USER_MEMORY_REGION";
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		fail("KVM_SET_USER_MEMORY_REGION");
	t1 = now();

	step = "KVM_CREATE_VCPU";
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0UL);
	if (vcpu < 0)
		fail("KVM_CREATE_VCPU");
	t2 = now();
	mmap_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (mmap_size < (long)sizeof(struct kvm_run))
		fail("KVM_GET_VCPU_MMAP_SIZE = %ld", mmap_size);
	struct kvm_run *r = mmap(NULL, (size_t)mmap_size,
				 PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (r == MAP_FAILED)
		fail("mmap kvm_run");

	struct kvm_sregs sregs;

	step = "setting registers";
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		fail("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0)
		fail("KVM_SET_SREGS");
	struct kvm_regs regs = {
		.rip = GUEST_ADDR,
		.rax = 2,
		.rbx = 3,
		.rdx = PORT,
		.rflags = 0x2,
	};
	if (ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		fail("KVM_SET_REGS");

	step = "KVM_RUN to the first exit";
	expect_out(vcpu, r, '5');
	expect_out(vcpu, r, '\n');
	t3 = now();
	step = "KVM_RUN in the exit loop";
	for (n = 0; n < LOOP_EXITS; n++)
		expect_out(vcpu, r, '\n');
	t4 = now();
	step = "KVM_RUN to hlt";
	run(vcpu);
	errno = 0;
	if (r->exit_reason != KVM_EXIT_HLT)
		fail("exit reason %u (%s), want KVM_EXIT_HLT", r->exit_reason,
		     exit_name(r->exit_reason));
	if (ioctl(vcpu, KVM_GET_REGS, &regs) < 0)
		fail("KVM_GET_REGS");
	if (regs.rip != GUEST_ADDR + sizeof(code) || (regs.rcx & 0xffff) != 0)
		fail("after hlt rip %#llx cx %#llx, want rip %#lx cx 0",
		     (unsigned long long)regs.rip, (unsigned long long)regs.rcx,
		     (unsigned long)(GUEST_ADDR + sizeof(code)));

	printf("kvm-smoke: guest said 2+3=5 through port %#x and halted\n",
	       PORT);
	printf("kvm-smoke: times: open+create VM %.1f ms, "
	       "KVM_CREATE_VCPU %.2f ms, first run to 2 exits %.2f ms, "
	       "%d IO exits %.1f ms (%.1f us each)\n",
	       (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, LOOP_EXITS,
	       (t4 - t3) * 1e3, (t4 - t3) * 1e6 / LOOP_EXITS);
	printf("kvm-smoke: PASS\n");
	return 0;
}
