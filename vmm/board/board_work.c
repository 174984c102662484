// SPDX-License-Identifier: GPL-2.0-only
/*
 * The machine's own work, off the main thread: resets and the host's part
 * of what the guest did on its own (hotplug_guest_work()).  Both walk
 * vCPU tables, so both may wait on the guest's vCPUs and on hooks; the
 * main thread only reads the stop signals and the machine's events and
 * wakes this thread, so that SIGTERM and `quit` are acted on at once
 * whatever a reset or an eject is waiting for.  The thread is
 * the machine's operation thread: it enters the operation gate as the QMP
 * operation thread does, and hotplug_shutdown() cancels its hooks as it
 * cancels an operation's.
 */
#include <errno.h>
#include <string.h>

#include "board_internal.h"
#include "log.h"
#include "seccomp_policy.h"

static void *board_work_thread(void *arg)
{
	struct board *b = arg;

	seccomp_enter(SECCOMP_THREAD_QMP_OP);
	pthread_mutex_lock(&b->work_lock);
	for (;;) {
		enum vm_cause reset;

		while (!b->work_pending && !b->work_quit)
			pthread_cond_wait(&b->work_cond, &b->work_lock);
		if (b->work_quit)
			break;
		b->work_pending = false;
		pthread_mutex_unlock(&b->work_lock);
		reset = vm_take_reset(&b->vm);
		if (reset != VM_CAUSE_NONE && !vm_stopping(&b->vm))
			b->work_reset(b, reset);
		hotplug_guest_work(b->hp);
		pthread_mutex_lock(&b->work_lock);
	}
	pthread_mutex_unlock(&b->work_lock);
	return NULL;
}

int board_start_work(struct board *b,
		     void (*reset)(struct board *b, enum vm_cause cause))
{
	int ret;

	b->work_reset = reset;
	pthread_mutex_init(&b->work_lock, NULL);
	pthread_cond_init(&b->work_cond, NULL);
	b->work_pending = b->work_quit = false;
	ret = pthread_create(&b->work_thread, NULL, board_work_thread, b);
	if (ret) {
		pr_err("cannot start the machine's work thread: %s",
		       strerror(ret));
		pthread_cond_destroy(&b->work_cond);
		pthread_mutex_destroy(&b->work_lock);
		return -ret;
	}
	pthread_setname_np(b->work_thread, "machine");
	b->work_started = true;
	return 0;
}

void board_kick_work(struct board *b)
{
	if (!b->work_started)
		return;
	pthread_mutex_lock(&b->work_lock);
	b->work_pending = true;
	pthread_cond_signal(&b->work_cond);
	pthread_mutex_unlock(&b->work_lock);
}

/*
 * After hotplug_shutdown(): a reset or an eject in progress has its hooks
 * cancelled and its waits ended, and a reset sets nothing up again once
 * the VM is stopping, so the join is short.
 */
void board_stop_work(struct board *b)
{
	if (!b->work_started)
		return;
	pthread_mutex_lock(&b->work_lock);
	b->work_quit = true;
	pthread_cond_signal(&b->work_cond);
	pthread_mutex_unlock(&b->work_lock);
	pthread_join(b->work_thread, NULL);
	pthread_cond_destroy(&b->work_cond);
	pthread_mutex_destroy(&b->work_lock);
	b->work_started = false;
}
