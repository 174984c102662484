// SPDX-License-Identifier: GPL-2.0-only
/*
 * vCPU threads.  Each thread loops on KVM_RUN and handles the exits that
 * reach user space; everything else (LAPIC, IOAPIC, PIC, PIT, HLT, INIT and
 * SIPI) stays in the kernel.  A thread stops when the VM is stopping: the
 * main thread sets immediate_exit and sends VCPU_KICK_SIGNAL, so a thread
 * about to enter KVM_RUN and one already inside both come back out.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>
#include <linux/kvm.h>

#include "hotvm/abi.h"
#include "cpuid.h"
#include "bus.h"
#include "log.h"
#include "msr.h"
#include "seccomp_policy.h"
#include "vcpu.h"
#include "vm.h"

/* The vCPU this thread runs, if it is a vCPU thread (vcpu_self_leaving()). */
static __thread struct vcpu *vcpu_self;

static void vcpu_kick_handler(int sig)
{
	(void)sig; /* only here to interrupt KVM_RUN with EINTR */
}

int vcpu_signal_init(void)
{
	struct sigaction sa = { .sa_handler = vcpu_kick_handler };

	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: KVM_RUN must return EINTR to the loop. */
	return sigaction(VCPU_KICK_SIGNAL, &sa, NULL) ? -errno : 0;
}

/*
 * Field by field, not as one struct assignment: a query reads tid and
 * started (atomically, without the controller's locks) at any time.
 */
static void vcpu_reset(struct vcpu *vcpu, struct vm *vm, const struct bus *io,
		       unsigned int id, unsigned int max_cpus)
{
	vcpu->vm = vm;
	vcpu->io = io;
	vcpu->mmio = NULL;
	vcpu->id = id;
	vcpu->apic_id = id;
	vcpu->max_cpus = max_cpus;
	vcpu->fd = -1;
	vcpu->run = NULL;
	vcpu->thread_started = false;
	vcpu->on_start = NULL;
	vcpu->start_ctx = NULL;
	vcpu->lapic0 = NULL;
	atomic_store(&vcpu->stop, false);
	atomic_store(&vcpu->tid, 0);
	atomic_store(&vcpu->ended, false);
	atomic_store(&vcpu->held, 0);
	atomic_store(&vcpu->hold_seq, 0);
	atomic_store(&vcpu->paused, 0);
	atomic_store(&vcpu->parked, false);
	atomic_store(&vcpu->started, false);
}

int vcpu_create(struct vcpu *vcpu, struct vm *vm, const struct bus *io,
		unsigned int id, unsigned int max_cpus)
{
	void *run;
	int ret;

	vcpu_reset(vcpu, vm, io, id, max_cpus);
	/* KVM's vCPU fds are O_CLOEXEC already: hooks inherit none. */
	vcpu->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, (unsigned long)id);
	if (vcpu->fd < 0) {
		ret = -errno;
		pr_err("cannot create vCPU %u: KVM_CREATE_VCPU: %s", id,
		       strerror(errno));
		return ret;
	}
	run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   vcpu->fd, 0);
	if (run == MAP_FAILED) {
		ret = -errno;
		pr_err("cannot map vCPU %u's run area: %s", id,
		       strerror(errno));
		return ret;
	}
	vcpu->run = run;
	return vcpu_init_regs(vcpu);
}

/* Returns false when the VM must stop. */
static bool vcpu_handle_io(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint64_t size = run->io.size, count = run->io.count;
	uint64_t off = run->io.data_offset;
	uint8_t *data = (uint8_t *)run + off;

	/* The data lives in the run area: never trust KVM's numbers blindly. */
	if ((size != 1 && size != 2 && size != 4) || off > vcpu->vm->run_size ||
	    size * count > vcpu->vm->run_size - off) {
		vm_request_stop(vcpu->vm, ABI_STATUS_VMFAIL,
				"vCPU %u: malformed I/O exit (port 0x%x)",
				vcpu->id, run->io.port);
		return false;
	}
	for (uint64_t i = 0; i < count; i++)
		bus_dispatch(vcpu->io, run->io.port, data + i * size,
			     (unsigned int)size,
			     run->io.direction == KVM_EXIT_IO_OUT);
	return true;
}

/* What the exit counters call this exit, and whose device it was for. */
static void vcpu_count_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct vmexit_counters *c = &vcpu->vm->exits;

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		vmexit_count(c, VMEXIT_PIO,
			     bus_find(vcpu->io, run->io.port, run->io.size));
		break;
	case KVM_EXIT_MMIO:
		vmexit_count(c, VMEXIT_MMIO,
			     vcpu->mmio && run->mmio.len <= 8
				     ? bus_find(vcpu->mmio, run->mmio.phys_addr,
						run->mmio.len)
				     : BUS_UNCLAIMED);
		break;
	case KVM_EXIT_HLT:
		vmexit_count(c, VMEXIT_HLT, 0);
		break;
	case KVM_EXIT_SHUTDOWN:
		vmexit_count(c, VMEXIT_SHUTDOWN, 0);
		break;
	default:
		vmexit_count(c, VMEXIT_OTHER, 0);
		break;
	}
}

/* Returns false when the VM must stop. */
static bool vcpu_handle_mmio(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;

	/* mmio.len lives in the shared run area: never trust it. */
	if (!run->mmio.len || run->mmio.len > sizeof(run->mmio.data)) {
		vm_request_stop(vcpu->vm, ABI_STATUS_VMFAIL,
				"vCPU %u: malformed MMIO exit (0x%llx)",
				vcpu->id,
				(unsigned long long)run->mmio.phys_addr);
		return false;
	}
	if (vcpu->mmio)
		bus_dispatch(vcpu->mmio, run->mmio.phys_addr, run->mmio.data,
			     run->mmio.len, run->mmio.is_write);
	else if (!run->mmio.is_write)
		memset(run->mmio.data, 0, sizeof(run->mmio.data));
	return true;
}

/*
 * A system event KVM reports for the machine: a poweroff or a reset is
 * the guest's own; anything else stops the VM.  This vCPU runs no more.
 */
static void vcpu_system_event(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct vm *vm = vcpu->vm;

	if (run->system_event.type == KVM_SYSTEM_EVENT_SHUTDOWN) {
		vm_shutdown(vm, 0, VM_CAUSE_GUEST_SHUTDOWN,
			    "the guest powered the machine off");
	} else if (run->system_event.type == KVM_SYSTEM_EVENT_RESET) {
		vm_request_reset(vm, VM_CAUSE_GUEST_RESET, 0,
				 "the guest reset the machine "
				 "(--no-reboot)");
	} else {
		vm_request_stop(vm, ABI_STATUS_VMFAIL,
				"vCPU %u: guest system event %u", vcpu->id,
				run->system_event.type);
	}
}

static bool vcpu_handle_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct vm *vm = vcpu->vm;

	vcpu_count_exit(vcpu);
	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		return vcpu_handle_io(vcpu);
	case KVM_EXIT_MMIO:
		return vcpu_handle_mmio(vcpu);
	case KVM_EXIT_HLT:
	case KVM_EXIT_INTR:
		return true;
	case KVM_EXIT_SHUTDOWN:
		/* A reset, as on real hardware; this vCPU runs no more. */
		vm_request_reset(vm, VM_CAUSE_GUEST_RESET, ABI_STATUS_VMFAIL,
				 "guest shut down on vCPU %u (triple fault)",
				 vcpu->id);
		return false;
	case KVM_EXIT_INTERNAL_ERROR:
		vm_request_stop(vm, ABI_STATUS_VMFAIL,
				"vCPU %u: KVM internal error %u (%s)", vcpu->id,
				run->internal.suberror,
				run->internal.suberror ==
						KVM_INTERNAL_ERROR_EMULATION
					? "instruction emulation failed"
					: "see KVM's documentation");
		return false;
	case KVM_EXIT_FAIL_ENTRY:
		vm_request_stop(
			vm, ABI_STATUS_VMFAIL,
			"vCPU %u: VM entry failed, reason 0x%llx", vcpu->id,
			(unsigned long long)
				run->fail_entry.hardware_entry_failure_reason);
		return false;
	case KVM_EXIT_SYSTEM_EVENT:
		vcpu_system_event(vcpu);
		return false;
	default:
		vm_request_stop(vm, ABI_STATUS_VMFAIL,
				"vCPU %u: unexpected KVM exit %u", vcpu->id,
				run->exit_reason);
		return false;
	}
}

/*
 * Watching for the guest to start an AP.  With the in-kernel LAPIC an AP
 * waits for INIT/SIPI inside KVM_RUN and a started one need never exit to
 * user space, so its thread is kicked by a timer while it waits and looks
 * at its MP state after each return; the interval grows from 1 ms to
 * 64 ms, so a CPU the guest never starts costs a few exits a second, and
 * the timer is gone once the CPU runs.  Only then does the guest execute
 * on this vCPU: until then no device callback runs here, so the signals
 * cannot interrupt anything but KVM_RUN.
 */
#define VCPU_WATCH_FIRST_NS 1000000L
#define VCPU_WATCH_MAX_NS   64000000L

struct vcpu_watch {
	timer_t timer;
	bool armed;
	long next_ns;
};

/*
 * Periodic, so that a tick that lands while the thread is outside KVM_RUN
 * (and so interrupts nothing) is followed by another.
 */
static void watch_arm(struct vcpu_watch *w)
{
	struct timespec t = { .tv_sec = w->next_ns / 1000000000L,
			      .tv_nsec = w->next_ns % 1000000000L };
	struct itimerspec it = { .it_value = t, .it_interval = t };

	timer_settime(w->timer, 0, &it, NULL);
	if (w->next_ns < VCPU_WATCH_MAX_NS)
		w->next_ns *= 2;
}

static void watch_start(struct vcpu *vcpu, struct vcpu_watch *w)
{
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = VCPU_KICK_SIGNAL,
	};

	/* glibc 2.36 names the field only by its union member. */
	sev._sigev_un._tid = atomic_load(&vcpu->tid);
	w->armed = false;
	w->next_ns = VCPU_WATCH_FIRST_NS;
	if (atomic_load(&vcpu->started) || atomic_load(&vcpu->unwatched))
		return;
	if (timer_create(CLOCK_MONOTONIC, &sev, &w->timer)) {
		/* Without it, any exit still shows the start, only later. */
		pr_err("vCPU %u: cannot watch for its start: %s", vcpu->id,
		       strerror(errno));
		return;
	}
	w->armed = true;
	watch_arm(w);
}

static void watch_stop(struct vcpu_watch *w)
{
	if (w->armed)
		timer_delete(w->timer);
	w->armed = false;
}

/* After each return from KVM_RUN while the guest has not started it. */
static void watch_check(struct vcpu *vcpu, struct vcpu_watch *w, bool timer)
{
	struct kvm_mp_state mp;

	if (atomic_load(&vcpu->started) ||
	    ioctl(vcpu->fd, KVM_GET_MP_STATE, &mp))
		return;
	if (mp.mp_state == KVM_MP_STATE_UNINITIALIZED ||
	    mp.mp_state == KVM_MP_STATE_INIT_RECEIVED ||
	    mp.mp_state == KVM_MP_STATE_SIPI_RECEIVED) {
		if (timer && w->armed)
			watch_arm(w);
		return;
	}
	watch_stop(w);
	atomic_store(&vcpu->started, true);
	if (vcpu->on_start)
		vcpu->on_start(vcpu->start_ctx, vcpu->id);
}

static void vcpu_futex_wake(_Atomic int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Watches afresh for the guest to start it (the boot CPU runs at once). */
static void watch_begin(struct vcpu *vcpu, struct vcpu_watch *w)
{
	watch_stop(w);
	watch_check(vcpu, w, false);
	watch_start(vcpu, w);
}

/*
 * Held (vcpu_start_held(), vcpu_pause(), vcpu_park()): waits outside
 * KVM_RUN until released or stopped, with no timer kicking it.  Each
 * round reads hold_seq before held, says which hold_seq it saw (the
 * pauser waits for its own), and sleeps only while hold_seq is still
 * that: a hold or release that comes meanwhile has bumped it.
 */
static void vcpu_hold(struct vcpu *vcpu, struct vcpu_watch *w)
{
	watch_stop(w);
	for (;;) {
		int seq = atomic_load(&vcpu->hold_seq);

		if (!atomic_load(&vcpu->held) || atomic_load(&vcpu->stop))
			break;
		if (atomic_load(&vcpu->paused) != seq) {
			atomic_store(&vcpu->paused, seq);
			vcpu_futex_wake(&vcpu->paused);
		}
		syscall(SYS_futex, &vcpu->hold_seq, FUTEX_WAIT_PRIVATE, seq,
			NULL, NULL, 0);
	}
	__atomic_store_n(&vcpu->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
}

/*
 * One return from KVM_RUN (@ret, @err its errno): handled; false when the
 * thread must stop.  Its time is the exit's handling, counted by the
 * caller (vmexit_time()).
 */
static bool vcpu_after_run(struct vcpu *vcpu, struct vcpu_watch *w, int ret,
			   int err)
{
	if (!atomic_load(&vcpu->started))
		watch_check(vcpu, w, ret < 0 && err == EINTR);
	if (ret >= 0)
		return vcpu_handle_exit(vcpu);
	/*
	 * EINTR: kicked (or a stray signal).  EAGAIN: an AP received INIT
	 * and must simply run again.
	 */
	if (err == EINTR || err == EAGAIN) {
		/* A return to user space all the same. */
		vmexit_count(&vcpu->vm->exits, VMEXIT_OTHER, 0);
		return true;
	}
	vm_request_stop(vcpu->vm, ABI_STATUS_VMFAIL,
			"vCPU %u: KVM_RUN failed: %s", vcpu->id, strerror(err));
	return false;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *vcpu = arg;
	struct vcpu_watch w = { 0 }; /* watch_check() may stop it first */
	bool fresh = true;
	char name[16];
	sigset_t kick;

	/* Before the filter: naming oneself is a prctl it does not allow. */
	snprintf(name, sizeof(name), "vcpu%u", vcpu->id);
	pthread_setname_np(pthread_self(), name);
	seccomp_enter(SECCOMP_THREAD_VCPU);
	sigemptyset(&kick);
	sigaddset(&kick, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &kick, NULL);
	vcpu_self = vcpu;
	atomic_store(&vcpu->tid, (int)syscall(SYS_gettid));
	vcpu_futex_wake(&vcpu->tid);

	while (!vm_stopping(vcpu->vm) && !atomic_load(&vcpu->stop)) {
		uint64_t t0;
		bool more;
		int ret, err;

		/* Held (placed, paused or parked): look at the flags again. */
		if (atomic_load(&vcpu->held)) {
			vcpu_hold(vcpu, &w);
			fresh = true;
			continue;
		}
		if (fresh)
			watch_begin(vcpu, &w);
		fresh = false;
		ret = ioctl(vcpu->fd, KVM_RUN, 0);
		err = errno;
		t0 = vmexit_clock(&vcpu->vm->exits);
		more = vcpu_after_run(vcpu, &w, ret, err);
		vmexit_time(&vcpu->vm->exits, t0);
		if (!more)
			break;
	}
	watch_stop(&w);
	atomic_store(&vcpu->tid, 0);
	atomic_store(&vcpu->ended, true);
	vcpu_futex_wake(&vcpu->paused); /* a pauser waits for nothing more */
	vcpu_futex_wake(&vcpu->tid);	/* nor does vcpu_start_held() */
	return NULL;
}

/*
 * A parked thread serves the vCPU again, still held: the one that last
 * ran it, so KVM sees no new thread (docs/design.md §4).
 */
static bool vcpu_unpark_thread(struct vcpu *vcpu)
{
	if (!vcpu->thread_started || !atomic_load(&vcpu->parked))
		return false;
	atomic_store(&vcpu->started, false);
	atomic_store(&vcpu->parked, false);
	return true;
}

static int vcpu_spawn(struct vcpu *vcpu, int held)
{
	int ret;

	if (vcpu_unpark_thread(vcpu)) {
		if (!held)
			vcpu_release(vcpu);
		return 0;
	}
	/* A vCPU started again after a reset carries the last stop's marks. */
	atomic_store(&vcpu->stop, false);
	atomic_store(&vcpu->started, false);
	atomic_store(&vcpu->tid, 0);
	atomic_store(&vcpu->ended, false);
	atomic_store(&vcpu->held, held);
	atomic_store(&vcpu->paused, 0);
	__atomic_store_n(&vcpu->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
	ret = pthread_create(&vcpu->thread, NULL, vcpu_thread, vcpu);

	if (ret) {
		pr_err("cannot start vCPU %u's thread: %s", vcpu->id,
		       strerror(ret));
		return -ret;
	}
	vcpu->thread_started = true;
	return 0;
}

int vcpu_start_held(struct vcpu *vcpu)
{
	const struct timespec tick = { .tv_nsec = 10000000 };
	int ret = vcpu_spawn(vcpu, 1);

	/*
	 * Its tid is what a caller places it by: wait until it is known.  A
	 * thread that finds the VM stopping ends at once, even held, and
	 * sets its tid back to 0: so until it ended, too, and with a tick,
	 * since its last word may come before this wait begins.
	 */
	while (!ret && !atomic_load(&vcpu->tid) && !atomic_load(&vcpu->ended))
		syscall(SYS_futex, &vcpu->tid, FUTEX_WAIT_PRIVATE, 0, &tick,
			NULL, 0);
	return ret;
}

void vcpu_release(struct vcpu *vcpu)
{
	atomic_store(&vcpu->held, 0);
	atomic_fetch_add(&vcpu->hold_seq, 1);
	vcpu_futex_wake(&vcpu->hold_seq);
}

/* Nobody to place it: no hold, and no waiting for the thread to say its id. */
int vcpu_start(struct vcpu *vcpu)
{
	return vcpu_spawn(vcpu, 0);
}

/*
 * held before hold_seq: a held thread that reads the new hold_seq reads
 * held = 1 after it, so its answer with this hold_seq means it is held
 * now, not in a hold that a release has ended.
 */
void vcpu_pause(struct vcpu *vcpu)
{
	const struct timespec tick = { .tv_nsec = 10000000 };
	int seq, seen;

	if (!vcpu->thread_started)
		return;
	atomic_store(&vcpu->held, 1);
	seq = atomic_fetch_add(&vcpu->hold_seq, 1) + 1;
	vcpu_futex_wake(&vcpu->hold_seq); /* one held already answers again */
	__atomic_store_n(&vcpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
	/*
	 * A thread that ended (its guest stopped it) never answers; one
	 * that has not yet said its tid (vcpu_start() does not wait for it)
	 * will, once it sees held.  Kicked again at each tick: a kick that
	 * came just before the thread entered a blocking call (the console's
	 * write to a full pipe) interrupted nothing.
	 */
	while ((seen = atomic_load(&vcpu->paused)) != seq &&
	       !atomic_load(&vcpu->ended)) {
		syscall(SYS_futex, &vcpu->paused, FUTEX_WAIT_PRIVATE, seen,
			&tick, NULL, 0);
		if (atomic_load(&vcpu->paused) != seq)
			pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
	}
}

void vcpu_resume(struct vcpu *vcpu)
{
	atomic_store(&vcpu->started, false);
	vcpu_release(vcpu);
}

void vcpu_park(struct vcpu *vcpu)
{
	if (!vcpu->thread_started)
		return;
	vcpu_pause(vcpu);
	if (atomic_load(&vcpu->ended)) {
		vcpu_join(vcpu); /* it ended: the next start makes a new one */
		return;
	}
	atomic_store(&vcpu->parked, true);
}

void vcpu_kick(struct vcpu *vcpu)
{
	if (!vcpu->thread_started)
		return;
	/* A held thread that must stop goes on to see it. */
	if (atomic_load(&vcpu->stop))
		vcpu_release(vcpu);
	/* Seen by a KVM_RUN that has not started yet ... */
	__atomic_store_n(&vcpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	/* ... and this interrupts one that is already inside. */
	pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
}

bool vcpu_self_leaving(void)
{
	struct vcpu *v = vcpu_self;

	return v && (vm_stopping(v->vm) || atomic_load(&v->stop) ||
		     atomic_load(&v->held));
}

/*
 * Until the thread has ended, kicking it again at each tick: a kick that
 * came just before it entered a blocking call (the console's write to a
 * full pipe) interrupted nothing, and the next one will.
 */
static void vcpu_wait_ended(struct vcpu *vcpu)
{
	const struct timespec tick = { .tv_nsec = 10000000 };
	int tid;

	while (!atomic_load(&vcpu->ended)) {
		tid = atomic_load(&vcpu->tid);
		if (atomic_load(&vcpu->ended))
			break;
		syscall(SYS_futex, &vcpu->tid, FUTEX_WAIT_PRIVATE, tid, &tick,
			NULL, 0);
		if (!atomic_load(&vcpu->ended))
			pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
	}
}

void vcpu_join(struct vcpu *vcpu)
{
	if (!vcpu->thread_started)
		return;
	vcpu_wait_ended(vcpu);
	pthread_join(vcpu->thread, NULL);
	vcpu->thread_started = false;
	atomic_store(&vcpu->parked, false);
}

void vcpu_stop(struct vcpu *vcpu)
{
	if (!vcpu->thread_started)
		return;
	/* The flag first: a thread woken by the kick must see it. */
	atomic_store(&vcpu->stop, true);
	vcpu_kick(vcpu);
	vcpu_join(vcpu);
}

void vcpu_destroy(struct vcpu *vcpu)
{
	if (vcpu->run)
		munmap(vcpu->run, vcpu->vm->run_size);
	if (vcpu->fd >= 0)
		close(vcpu->fd);
	free(vcpu->lapic0);
	vcpu->lapic0 = NULL;
	vcpu->run = NULL;
	vcpu->fd = -1;
}
