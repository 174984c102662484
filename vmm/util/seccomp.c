// SPDX-License-Identifier: GPL-2.0-only
/*
 * Seccomp filters per thread type (vmm/util/seccomp_policy.h), built with
 * libseccomp.  The allow lists come from tracing every test suite with
 * strace -f, one list per thread type, plus what glibc does on a thread's
 * behalf (thread start and exit, malloc).
 *
 * Each filter is compiled to BPF once, in seccomp_setup(), and a thread
 * loads it with one seccomp(2) call: no allocation and no libseccomp state
 * shared between threads that start at the same time, and a thread that
 * has inherited a filter needs only seccomp(2) to add its own.
 *
 * A forbidden call traps (SECCOMP_RET_TRAP): the SIGSYS handler writes one
 * line naming the call and the thread and ends hotvm with the VM-failed
 * status.  It runs under the filter that trapped, so it makes only write
 * and exit_group, which every filter allows, and takes the call's name from
 * a table resolved (seccomp_syscall_resolve_num_arch) before any filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/if_tun.h>
#include <linux/kvm.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hotvm/abi.h"
#include "log.h"
#include "seccomp_policy.h"

/* siginfo's si_code for a seccomp trap; glibc's headers lack it. */
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/* Above every x86-64 system call number today. */
#define SECCOMP_NAMES_MAX 512

/* Lists of system calls, ended by -1. */
#define SC_END (-1)

/* Every filtered thread: glibc's thread start and exit, locks, malloc. */
static const int calls_base[] = {
	SCMP_SYS(brk),
	SCMP_SYS(clock_gettime),
	SCMP_SYS(clock_nanosleep),
	SCMP_SYS(exit),
	SCMP_SYS(exit_group),
	SCMP_SYS(futex),
	SCMP_SYS(getpid),
	SCMP_SYS(getrandom),
	SCMP_SYS(gettid),
	SCMP_SYS(gettimeofday),
	SCMP_SYS(madvise),
	SCMP_SYS(mremap),
	SCMP_SYS(munmap),
	SCMP_SYS(nanosleep),
	SCMP_SYS(restart_syscall),
	SCMP_SYS(rseq),
	SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(rt_sigreturn),
	/* glibc's malloc counts CPUs so when /sys cannot be opened. */
	SCMP_SYS(sched_getaffinity),
	SCMP_SYS(sched_yield),
	SCMP_SYS(set_robust_list),
	SCMP_SYS(write), /* the log, eventfds, the console */
	SC_END,
};

/* The vCPU: KVM_RUN, the start watch's timer, the device models. */
static const int calls_vcpu[] = {
	SCMP_SYS(timer_create),
	SCMP_SYS(timer_delete),
	SCMP_SYS(timer_settime),
	SC_END,
};

/* Waiting on and closing descriptors: main, the I/O and operation threads. */
static const int calls_fds[] = {
	SCMP_SYS(close), SCMP_SYS(poll), SCMP_SYS(ppoll),
	SCMP_SYS(read),	 SC_END,
};

static const int calls_qmp_io[] = {
	SCMP_SYS(accept4),  SCMP_SYS(fcntl),	SCMP_SYS(getsockopt),
	SCMP_SYS(recvfrom), SCMP_SYS(recvmsg),	SCMP_SYS(sendmsg),
	SCMP_SYS(sendto),   SCMP_SYS(shutdown), SC_END,
};

/*
 * A virtio device's thread: its eventfds, and a disk's I/O on the image
 * it was given open (no open, no path): reads and writes at an offset,
 * fdatasync for FLUSH, fallocate for discard and write-zeroes.
 */
static const int calls_virtio[] = {
	SCMP_SYS(fallocate),
	SCMP_SYS(fdatasync),
	SCMP_SYS(pread64),
	SCMP_SYS(preadv),
	SCMP_SYS(pwrite64),
	SCMP_SYS(pwritev),
	SC_END,
};

/*
 * A virtio-net queue's thread: frames read from and written to the tap it
 * was given open (one frame a call, the transmit side gathered).
 */
static const int calls_virtio_net[] = {
	SCMP_SYS(readv),
	SCMP_SYS(writev),
	SC_END,
};

/*
 * virtio-vsock's I/O thread: accepting host clients on its socket,
 * connecting the guest's requests to PATH_<port> (connect, and socket for
 * AF_UNIX only: .socket_family), shutting a socket's write side when the
 * guest will send no more.
 */
static const int calls_vsock[] = {
	SCMP_SYS(accept4),
	SCMP_SYS(connect),
	SCMP_SYS(shutdown),
	SC_END,
};

/* After set-up: the signalfd, joins, the socket file, unmapping RAM. */
static const int calls_main[] = {
	SCMP_SYS(fstat), SCMP_SYS(lstat),  SCMP_SYS(newfstatat),
	SCMP_SYS(stat),	 SCMP_SYS(unlink), SC_END,
};

/*
 * The sanitizer runtimes (ASan, UBSan, TSan) make calls of their own from
 * every thread: their allocators, alternate signal stacks, and at exit a
 * leak check that clones a tracer and ptraces the threads.  Allowing all
 * that would be a different filter from the one shipped, and a runtime
 * that meets a refusal at exit spins rather than reports: in those builds
 * the filters are off (docs/security.md says so).
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SECCOMP_SANITIZED 1
#else
#define SECCOMP_SANITIZED 0
#endif

/* KVM ioctls, ended by 0.  A running vCPU and the devices it drives. */
static const unsigned long ioctls_vcpu[] = {
	KVM_RUN,
	KVM_GET_MP_STATE,
	KVM_IRQ_LINE, /* the UART's and GED's interrupts */
	0,
};

/* A disk that is a block device: discard and write-zeroes. */
static const unsigned long ioctls_virtio[] = {
	BLKDISCARD,
	BLKZEROOUT,
	0,
};

/* The tap's offloads, set to what the guest's driver accepted. */
static const unsigned long ioctls_virtio_net[] = {
	TUNSETOFFLOAD,
	0,
};

/* A query asks Linux through the guest agent, whose UART interrupts. */
static const unsigned long ioctls_irq[] = {
	KVM_IRQ_LINE,
	0,
};

/* Creating, configuring and unparking vCPUs (vcpu.c, cpuid.c, msr.c). */
static const unsigned long ioctls_op[] = {
	KVM_CHECK_EXTENSION,
	KVM_CREATE_VCPU,
	KVM_GET_LAPIC,
	KVM_GET_MSRS,
	KVM_GET_REGS,
	KVM_GET_SREGS,
	KVM_GET_SUPPORTED_CPUID,
	KVM_GET_VCPU_MMAP_SIZE,
	KVM_SET_CPUID2,
	KVM_SET_LAPIC,
	KVM_SET_MP_STATE,
	KVM_SET_MSRS,
	KVM_SET_REGS,
	KVM_SET_SREGS,
	/* A reset (vcpu_unpark(), vm_reset_irqchip()). */
	KVM_SET_FPU,
	KVM_SET_VCPU_EVENTS,
	KVM_SET_IRQCHIP,
	KVM_SET_PIT2,
	0,
};

struct seccomp_spec {
	const char *name;
	const int *calls[4];
	const unsigned long *ioctls[2];
	bool threads;	   /* may start threads (which inherit this filter) */
	int socket_family; /* socket(2) of this family only; 0: none */
};

/*
 * The operation thread starts vCPU threads, whose filters stack on its
 * own: it allows everything a vCPU thread does.
 */
static const struct seccomp_spec seccomp_specs[SECCOMP_NR_THREADS] = {
	/*
	 * At the end the main thread stops, joins and closes every vCPU.
	 * Resets and the guest's own ejects run on the machine's work
	 * thread (board_work.c), which loads the operation thread's filter.
	 */
	[SECCOMP_THREAD_MAIN] = {
		.name = "main",
		.calls = { calls_base, calls_fds, calls_main, calls_vcpu },
		.ioctls = { ioctls_vcpu, ioctls_op },
		.threads = true,
	},
	[SECCOMP_THREAD_VCPU] = {
		.name = "vcpu",
		.calls = { calls_base, calls_vcpu },
		.ioctls = { ioctls_vcpu },
	},
	[SECCOMP_THREAD_QMP_IO] = {
		.name = "qmp-io",
		.calls = { calls_base, calls_fds, calls_qmp_io },
	},
	[SECCOMP_THREAD_QMP_QUERY] = {
		.name = "qmp-query",
		.calls = { calls_base },
		.ioctls = { ioctls_irq },
	},
	[SECCOMP_THREAD_QMP_OP] = {
		.name = "qmp-op",
		.calls = { calls_base, calls_fds, calls_vcpu },
		.ioctls = { ioctls_vcpu, ioctls_op },
		.threads = true,
	},
	/* The guest agent's socket serves its clients as QMP's does. */
	[SECCOMP_THREAD_AGENT_IO] = {
		.name = "agent-io",
		.calls = { calls_base, calls_fds, calls_qmp_io },
	},
	/* Its calls to the agent, as a query's. */
	[SECCOMP_THREAD_AGENT_CALL] = {
		.name = "agent-call",
		.calls = { calls_base },
		.ioctls = { ioctls_irq },
	},
	/* The periodic check of Linux's CPUs: the agent's calls, as a query's. */
	[SECCOMP_THREAD_AGENT_CHECK] = {
		.name = "agent-check",
		.calls = { calls_base },
		.ioctls = { ioctls_irq },
	},
	/* A virtio device: no KVM call (its interrupt is an irqfd write). */
	[SECCOMP_THREAD_VIRTIO] = {
		.name = "virtio",
		.calls = { calls_base, calls_fds, calls_virtio },
		.ioctls = { ioctls_virtio },
	},
	/* virtio-net's queues: no KVM call, no file, only the tap. */
	[SECCOMP_THREAD_VIRTIO_NET] = {
		.name = "virtio-net",
		.calls = { calls_base, calls_fds, calls_virtio_net },
		.ioctls = { ioctls_virtio_net },
	},
	/* virtio-vsock's sockets: no KVM call either (vsock_io.c). */
	[SECCOMP_THREAD_VSOCK] = {
		.name = "vsock",
		.calls = { calls_base, calls_fds, calls_vsock },
		.socket_family = AF_UNIX,
	},
};

static const char *const seccomp_policy_names[] = {
	[SECCOMP_POLICY_ON] = "on",
	[SECCOMP_POLICY_LOG] = "log",
	[SECCOMP_POLICY_OFF] = "off",
};

static struct sock_fprog seccomp_progs[SECCOMP_NR_THREADS];
static char *seccomp_names[SECCOMP_NAMES_MAX];
static bool seccomp_ready;
/* Which filter this thread loaded, for the SIGSYS report. */
static __thread int seccomp_current = -1;

#ifdef HOTVM_SECCOMP_TEST
/*
 * Test builds only (tests/e2e/seccomp-vm.sh): HOTVM_SECCOMP_TRIGGER=THREAD makes
 * that thread type call socket(2), which no filter allows, right after
 * loading its filter.
 */
static int seccomp_trigger = -1;
#endif

int seccomp_parse_policy(const char *s)
{
	for (size_t i = 0;
	     i < sizeof(seccomp_policy_names) / sizeof(seccomp_policy_names[0]);
	     i++)
		if (!strcmp(s, seccomp_policy_names[i]))
			return (int)i;
	return -EINVAL;
}

static const char *seccomp_policy_name(enum seccomp_policy p)
{
	return p <= SECCOMP_POLICY_OFF ? seccomp_policy_names[p] : "?";
}

/* --- the SIGSYS report: async-signal-safe, write and _exit only --------- */

static void seccomp_put(char *buf, size_t *n, size_t cap, const char *s)
{
	while (*s && *n < cap)
		buf[(*n)++] = *s++;
}

static void seccomp_put_num(char *buf, size_t *n, size_t cap, long v)
{
	char d[24];
	int i = 0;

	if (v < 0) {
		seccomp_put(buf, n, cap, "-");
		v = -v;
	}
	do
		d[i++] = (char)('0' + v % 10);
	while ((v /= 10) && i < (int)sizeof(d));
	while (i && *n < cap)
		buf[(*n)++] = d[--i];
}

static void seccomp_sigsys(int sig, siginfo_t *si, void *uc)
{
	int nr = si->si_syscall, t = seccomp_current;
	const char *name =
		nr >= 0 && nr < SECCOMP_NAMES_MAX ? seccomp_names[nr] : NULL;
	char buf[256];
	size_t n = 0;
	ssize_t w;

	(void)sig;
	(void)uc;
	seccomp_put(buf, &n, sizeof(buf), "hotvm: seccomp: the ");
	seccomp_put(buf, &n, sizeof(buf),
		    t >= 0 ? seccomp_specs[t].name : "starting");
	seccomp_put(buf, &n, sizeof(buf), " thread called ");
	if (si->si_code != SYS_SECCOMP) {
		n = 0;
		seccomp_put(buf, &n, sizeof(buf),
			    "hotvm: SIGSYS not from a seccomp filter");
	} else if (si->si_arch != AUDIT_ARCH_X86_64) {
		seccomp_put(buf, &n, sizeof(buf), "a non-x86-64 system call ");
		seccomp_put_num(buf, &n, sizeof(buf), nr);
	} else {
		seccomp_put(buf, &n, sizeof(buf), name ? name : "system call");
		seccomp_put(buf, &n, sizeof(buf), " (");
		seccomp_put_num(buf, &n, sizeof(buf), nr);
		seccomp_put(buf, &n, sizeof(buf), ")");
	}
	seccomp_put(buf, &n, sizeof(buf),
		    ", which its filter forbids; the VM is stopped "
		    "(--seccomp log runs on and logs it)\n");
	w = write(STDERR_FILENO, buf, n);
	(void)w;
	_exit(ABI_STATUS_VMFAIL);
}

/* --- building the filters ----------------------------------------------- */

static int seccomp_add(scmp_filter_ctx ctx, uint32_t action, int nr,
		       unsigned int nargs, const struct scmp_arg_cmp *args)
{
	int ret = seccomp_rule_add_array(ctx, action, nr, nargs, args);

	/* A call this kernel's headers lack cannot be made: skip it. */
	return ret == -EDOM || ret == -EFAULT ? 0 : ret;
}

static int seccomp_add_list(scmp_filter_ctx ctx, const int *calls)
{
	int ret = 0;

	for (; !ret && *calls != SC_END; calls++)
		ret = seccomp_add(ctx, SCMP_ACT_ALLOW, *calls, 0, NULL);
	return ret;
}

static int seccomp_add_ioctls(scmp_filter_ctx ctx, const unsigned long *req)
{
	int ret = 0;

	/* The request is an int to the kernel: compare its low 32 bits. */
	for (; !ret && *req; req++)
		ret = seccomp_add(
			ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
			&SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, *req));
	return ret;
}

/*
 * pthread_create() and loading the new thread's filter.  glibc tries
 * clone3 first, whose flags a filter cannot see (they are in memory):
 * ENOSYS sends it to clone, allowed only with CLONE_THREAD, so a filtered
 * thread can start threads but never a process.
 */
static int seccomp_add_threads(scmp_filter_ctx ctx)
{
	int ret;

	ret = seccomp_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0,
			  NULL);
	if (!ret)
		ret = seccomp_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				  &SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD,
					   CLONE_THREAD));
	if (!ret)
		ret = seccomp_add(
			ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
			&SCMP_A0(SCMP_CMP_EQ, PR_SET_NO_NEW_PRIVS, 0));
	/* A new vCPU thread names itself ("vcpuN") before its filter. */
	if (!ret)
		ret = seccomp_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				  &SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME, 0));
	if (!ret)
		ret = seccomp_add(
			ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 1,
			&SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER, 0));
	/* Thread stacks: glibc asks for the stack size limit. */
	if (!ret)
		ret = seccomp_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1,
				  &SCMP_A2(SCMP_CMP_EQ, 0, 0));
	return ret;
}

/* What every filter has besides its lists. */
static int seccomp_add_common(scmp_filter_ctx ctx, uint32_t deny,
			      uint32_t fallback)
{
	int ret;

	/* Memory, never executable: no code is loaded after start-up. */
	ret = seccomp_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
			  &SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (!ret)
		ret = seccomp_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				  &SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	/* Signals to hotvm's own threads only: the vCPU kick, abort(). */
	if (!ret)
		ret = seccomp_add(
			ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
			&SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid(), 0));
	/*
	 * No files: glibc's malloc opens /proc/sys/vm/overcommit_memory and
	 * /sys/devices/system/cpu/online lazily in whichever thread needs
	 * them first, and manages without; refused, not fatal.  (libseccomp
	 * takes no rule whose action is the default, as in log mode.)
	 */
	if (!ret && deny != fallback)
		ret = seccomp_add(ctx, deny, SCMP_SYS(open), 0, NULL);
	if (!ret && deny != fallback)
		ret = seccomp_add(ctx, deny, SCMP_SYS(openat), 0, NULL);
	return ret;
}

/* Compiles @ctx to BPF in memory (libseccomp 2.5 exports to an fd only). */
static int seccomp_export(scmp_filter_ctx ctx, struct sock_fprog *prog)
{
	int fd = memfd_create("hotvm-seccomp", MFD_CLOEXEC);
	struct stat st;
	void *buf = NULL;
	int ret;

	if (fd < 0)
		return -errno;
	ret = seccomp_export_bpf(ctx, fd);
	if (!ret && fstat(fd, &st))
		ret = -errno;
	if (!ret && (!st.st_size || st.st_size % sizeof(struct sock_filter)))
		ret = -EINVAL;
	if (!ret && !(buf = malloc((size_t)st.st_size)))
		ret = -ENOMEM;
	if (!ret && pread(fd, buf, (size_t)st.st_size, 0) != st.st_size)
		ret = -EIO;
	close(fd);
	if (ret) {
		free(buf);
		return ret;
	}
	*prog = (struct sock_fprog){
		.len = (unsigned short)(st.st_size /
					sizeof(struct sock_filter)),
		.filter = buf,
	};
	return 0;
}

static int seccomp_build(enum seccomp_thread t, enum seccomp_policy p,
			 struct sock_fprog *prog)
{
	const struct seccomp_spec *s = &seccomp_specs[t];
	uint32_t deny = p == SECCOMP_POLICY_LOG ? SCMP_ACT_LOG : SCMP_ACT_TRAP;
	uint32_t refuse =
		p == SECCOMP_POLICY_LOG ? SCMP_ACT_LOG : SCMP_ACT_ERRNO(EACCES);
	scmp_filter_ctx ctx = seccomp_init(deny);
	int ret = 0;

	if (!ctx)
		return -ENOMEM;
	/* hotvm sets no_new_privs itself, per thread (seccomp_enter). */
	ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (!ret)
		ret = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, deny);
	for (size_t i = 0; !ret && i < 4 && s->calls[i]; i++)
		ret = seccomp_add_list(ctx, s->calls[i]);
	for (size_t i = 0; !ret && i < 2 && s->ioctls[i]; i++)
		ret = seccomp_add_ioctls(ctx, s->ioctls[i]);
	if (!ret && s->socket_family)
		ret = seccomp_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				  &SCMP_A0(SCMP_CMP_EQ,
					   (scmp_datum_t)s->socket_family, 0));
	if (!ret && s->threads)
		ret = seccomp_add_threads(ctx);
	if (!ret)
		ret = seccomp_add_common(ctx, refuse, deny);
	if (!ret)
		ret = seccomp_export(ctx, prog);
	seccomp_release(ctx);
	return ret;
}

/* SECCOMP_RET_TRAP and _LOG must exist in this kernel: fail at start. */
static int seccomp_check_kernel(enum seccomp_policy p)
{
	uint32_t action =
		p == SECCOMP_POLICY_LOG ? SECCOMP_RET_LOG : SECCOMP_RET_TRAP;

	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action)) {
		pr_err("--seccomp %s: this kernel cannot filter system calls "
		       "(%s); give --seccomp off",
		       seccomp_policy_name(p), strerror(errno));
		return -errno;
	}
	return 0;
}

int seccomp_setup(enum seccomp_policy p, bool hooks)
{
	struct sigaction sa = {
		.sa_sigaction = seccomp_sigsys,
		.sa_flags = SA_SIGINFO,
	};
	int ret;

	if (p == SECCOMP_POLICY_OFF || seccomp_ready || SECCOMP_SANITIZED)
		return 0;
	ret = seccomp_check_kernel(p);
	if (ret)
		return ret;
	for (int nr = 0; nr < SECCOMP_NAMES_MAX; nr++)
		seccomp_names[nr] =
			seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	for (int t = 0; t < SECCOMP_NR_THREADS; t++) {
		/* The hooks' threads: see seccomp_policy.h. */
		if (t == SECCOMP_THREAD_QMP_OP && hooks)
			continue;
		ret = seccomp_build((enum seccomp_thread)t, p,
				    &seccomp_progs[t]);
		if (ret) {
			pr_err("--seccomp %s: cannot build the %s thread's "
			       "filter: %s",
			       seccomp_policy_name(p), seccomp_specs[t].name,
			       strerror(-ret));
			return ret;
		}
	}
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL)) {
		pr_err("--seccomp: cannot install the SIGSYS handler: %s",
		       strerror(errno));
		return -errno;
	}
#ifdef HOTVM_SECCOMP_TEST
	const char *trig = getenv("HOTVM_SECCOMP_TRIGGER");

	for (int t = 0; trig && t < SECCOMP_NR_THREADS; t++)
		if (!strcmp(trig, seccomp_specs[t].name))
			seccomp_trigger = t;
#endif
	seccomp_ready = true;
	return 0;
}

void seccomp_enter(enum seccomp_thread t)
{
	const struct sock_fprog *prog;

	if (!seccomp_ready || t >= SECCOMP_NR_THREADS)
		return;
	prog = &seccomp_progs[t];
	if (!prog->len) /* the operation thread when hooks are given */
		return;
	seccomp_current = (int)t;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog)) {
		pr_err("seccomp: cannot load the %s thread's filter: %s; the "
		       "VM is stopped rather than run unfiltered",
		       seccomp_specs[t].name, strerror(errno));
		_exit(ABI_STATUS_VMFAIL);
	}
#ifdef HOTVM_SECCOMP_TEST
	if (seccomp_trigger == (int)t) {
		long fd = syscall(SYS_socket, AF_INET, SOCK_DGRAM, 0);

		if (fd >= 0) /* --seccomp log lets it through */
			close((int)fd);
	}
#endif
}
