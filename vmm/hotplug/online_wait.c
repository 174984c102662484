// SPDX-License-Identifier: GPL-2.0-only
/*
 * The online state's wait (docs/design.md §4): a hot-added CPU is online
 * once the guest's side has it, by the guest's own report, by Linux's
 * online list through the guest agent (which onlines it when Linux does
 * not), or, when the caller asked, by the guest starting its vCPU.
 */
#include <errno.h>

#include "hotplug_internal.h"
#include "log.h"

static int guest_finished(const struct hp_slot *s)
{
	if (s->w.failed)
		return -EIO;
	return s->w.done;
}

static int guest_started(const struct hp_slot *s)
{
	return s->w.started;
}

/* A pause that only the VM's stop or reset ends early. */
static int pause_only(const struct hp_slot *s)
{
	(void)s;
	return 0;
}

/*
 * Asks Linux until it lists @cpu under a logical id (matched to the slot
 * by its firmware node, or as the one new id, linux_view.c's
 * match_expected()), pausing 5, 10 ... 160 ms between asks; 0, or the
 * error.  Linux has acknowledged @cpu.
 */
static int linux_lists(struct hotplug *hp, unsigned int cpu, uint64_t t0,
		       struct hv_err *why)
{
	struct hp_slot *s = &hp->slots[cpu];
	int pause = 5, ret;

	for (;;) {
		__atomic_store_n(&hp->linux_expect, (int)cpu + 1,
				 __ATOMIC_RELAXED);
		ret = hp_linux_refresh_patient(hp, why);
		__atomic_store_n(&hp->linux_expect, 0, __ATOMIC_RELAXED);
		pthread_mutex_lock(&hp->lock);
		if (ret || s->linux_cpu >= 0) {
			pthread_mutex_unlock(&hp->lock);
			return ret;
		}
		if (hv_now_ns() - t0 >= hp->op_timeout_ms * 1000000ull) {
			pthread_mutex_unlock(&hp->lock);
			return hv_err_set(why, -ENOENT,
					  "Linux does not list the CPU (or its "
					  "firmware node cannot be read)");
		}
		ret = hp_wait_locked(hp, s, pause_only, pause);
		pthread_mutex_unlock(&hp->lock);
		if (ret != -ETIMEDOUT)
			return ret; /* the VM stops, or a reset */
		hp_linux_retry_unmatched(hp);
		pause = pause < 160 ? pause * 2 : pause;
	}
}

/*
 * With the guest agent, "started" is Linux's word: the CPU is in Linux's
 * online list.  Linux has acknowledged the CPU (_OST after its ACPI
 * driver registered it: cpuN/online exists), so the agent is asked at
 * once, with no grace time: a CPU Linux (a udev rule, RHEL's) has online
 * already is the guest's; else the agent onlines it (guest-set-vcpus).
 * A rule that onlines it meanwhile races the agent harmlessly (Linux's
 * online of an online CPU succeeds), and the report names the agent.
 * Returns 0, a wait's error, or 1 when the agent failed and the caller
 * should wait as without it (@why says why).
 */
static int wait_linux_online(struct hotplug *hp, unsigned int cpu, int *left_ms,
			     struct hv_err *why)
{
	struct hp_slot *s = &hp->slots[cpu];
	uint64_t t0 = hv_now_ns();
	int ret = linux_lists(hp, cpu, t0, why);

	pthread_mutex_lock(&hp->lock);
	if (!ret && s->linux_online == 1) {
		if (hp->rep && hp->op_cpu == cpu)
			hp->rep->onlined_by = "guest";
		pthread_mutex_unlock(&hp->lock);
		return 0;
	}
	pthread_mutex_unlock(&hp->lock);
	if (ret == -ECANCELED || ret == -ESHUTDOWN || ret == -EINTR)
		return ret; /* the VM stops, or a reset */
	if (!ret)
		ret = hp_linux_set_known(hp, cpu, true, why);
	*left_ms = hp->op_timeout_ms - (int)((hv_now_ns() - t0) / 1000000u);
	if (ret)
		return 1;
	pthread_mutex_lock(&hp->lock);
	if (hp->rep && hp->op_cpu == cpu)
		hp->rep->onlined_by = "agent";
	ret = s->linux_online == 1 ? 0 : 1;
	pthread_mutex_unlock(&hp->lock);
	if (ret)
		hv_err_set(why, -EIO,
			   "the agent onlined it, but Linux does not list it "
			   "online");
	return ret;
}

/*
 * A guest that does not report: wait for it to start the vCPU only when
 * the caller asked for that; Linux leaves it to user space, which may
 * never do it.  With the guest agent, Linux says when it is online, and
 * the agent onlines it if Linux does not.
 */
static int wait_guest_started(struct hotplug *hp, unsigned int cpu)
{
	struct hp_slot *s = &hp->slots[cpu];
	struct hv_err why = { 0 };
	int left = hp->op_timeout_ms;
	int ret = 0;

	if (hp->op_wait != HOTPLUG_WAIT_STARTED)
		return 0;
	if (hp->agent) {
		ret = wait_linux_online(hp, cpu, &left, &why);
		if (ret <= 0)
			return ret;
		pr_err("CPU %u: the guest agent could not online it (%s); "
		       "waiting for Linux to",
		       cpu, hv_err_msg(&why));
	}
	pthread_mutex_lock(&hp->lock);
	ret = hp_wait_locked(hp, s, guest_started, left > 0 ? left : 1);
	pthread_mutex_unlock(&hp->lock);
	if (ret == -ETIMEDOUT && hv_err_is_set(&why)) {
		hp_fail(hp, cpu,
			"the guest acknowledged it but did not start it "
			"within %d ms, and the guest agent could not online "
			"it: %s",
			hp->op_timeout_ms, hv_err_msg(&why));
		return -ETIME;
	}
	if (ret == -ETIMEDOUT) {
		hp_fail(hp, cpu,
			"the guest acknowledged it but did not start it "
			"within %d ms (a Linux guest starts a hot-added CPU "
			"only when user space writes 1 to "
			"/sys/devices/system/cpu/cpu%u/online, e.g. from a "
			"udev rule; or wait for 'acknowledged' only)",
			hp->op_timeout_ms, cpu);
		return -ETIME;
	}
	return ret < 0 ? ret : 0;
}

/*
 * A guest that reports its table finishes its own walk after the host's
 * guest:ap-starting: wait for that, so that a guest failing in its later
 * states fails the hot-add, and both tables end at online together.
 */
int hp_wait_online(struct hotplug *hp, unsigned int cpu)
{
	struct hp_slot *s = &hp->slots[cpu];
	bool reports;
	int ret = 0;

	/* Only when this operation presented it: else the guest has it. */
	if (!s->guest_joining)
		return 0;
	s->guest_joining = false;
	pthread_mutex_lock(&hp->lock);
	reports = hp->guest_ext; /* set by a vCPU thread */
	if (reports)
		ret = hp_wait_locked(hp, s, guest_finished, hp->op_timeout_ms);
	pthread_mutex_unlock(&hp->lock);
	if (!reports)
		return wait_guest_started(hp, cpu);
	if (ret == -ETIMEDOUT)
		hp_fail(hp, cpu,
			"the guest did not finish onlining it within %d ms",
			hp->op_timeout_ms);
	else if (ret == -EIO)
		hp_fail(hp, cpu,
			"the guest failed to online it; see the guest's "
			"console");
	return ret < 0 ? ret : 0;
}
