// SPDX-License-Identifier: GPL-2.0-only
/*
 * Linux's own fault injection and Linux's offlining of a CPU before its
 * eject, through the guest agent (docs/design.md §6.6).
 *
 * cpuhp-inject-fault with side "guest" on a Linux guest writes the state
 * to /sys/devices/system/cpu/cpuN/hotplug/fail (N: Linux's logical id of
 * the slot), after checking it against Linux's own state list
 * (lx_states_parse(), vmm/agent/linux_cpuhp.c).  Linux 6.1 creates
 * cpuN/hotplug/ only for the CPUs present at boot: for any other the
 * fault is refused with that reason.
 *
 * The next removal of a CPU with such a fault has Linux offline it through
 * the agent (guest-set-vcpus) before the eject is asked for.  Not through
 * the eject itself: Linux's ACPI eject path offlines a CPU in two passes
 * (acpi_scan_try_to_offline() retries what failed), so a one-shot fault
 * is used up by the first and the second succeeds, and nobody would know.
 * Offlined through the agent, Linux fails at the state, rolls back and
 * says so; the removal fails before anything is asked of the guest, and
 * both tables keep the CPU online.
 *
 * Without a fault, Linux offlines the CPU itself when it handles the
 * eject.  A guest that has not ejected it within a grace time has it
 * offlined through the agent (hp_linux_offline_late()), so that a guest
 * whose eject waits for an offline CPU still gets there.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotplug_internal.h"
#include "linux_cpuhp.h"
#include "linux_file.h"
#include "log.h"
#include "qga.h"

#define LINUX_STATES_PATH "/sys/devices/system/cpu/hotplug/states"

bool hotplug_linux_faults(struct hotplug *hp)
{
	bool r;

	pthread_mutex_lock(&hp->lock);
	r = hp->agent && !hp->guest_ext;
	pthread_mutex_unlock(&hp->lock);
	return r;
}

int hp_lx_states_read(struct hotplug *hp, struct lx_states *ls,
		      struct hv_err *err)
{
	/* One sysfs page: Linux's show() gets PAGE_SIZE bytes. */
	char *buf = malloc(4096);
	unsigned int bad;
	long n;
	int ret;

	if (!buf)
		return hv_err_set(err, -ENOMEM, NULL);
	n = lx_file_read_all(&hp->lxa, LINUX_STATES_PATH, buf, 4096, err);
	ret = n < 0 ? (int)n : lx_states_parse(buf, (size_t)n, ls, &bad);
	free(buf);
	if (ret == -EPROTO && n >= 0)
		hv_err_set(err, ret,
			   "Linux's state list (%s) is unusable at line %u",
			   LINUX_STATES_PATH, bad);
	return ret;
}

static void set_fail(struct hotplug *hp, unsigned int cpu, int num,
		     const char *name)
{
	struct hp_slot *s = &hp->slots[cpu];

	pthread_mutex_lock(&hp->lock);
	s->linux_fail = num;
	snprintf(s->linux_fail_name, sizeof(s->linux_fail_name), "%s",
		 name ? name : "");
	pthread_mutex_unlock(&hp->lock);
}

/* Resolves @state or @name in Linux's list into *st; refusals said. */
static int resolve(struct hotplug *hp, unsigned int cpu, int state,
		   const char *name, struct lx_state *st, struct hp_report *rep)
{
	struct lx_states *ls = malloc(sizeof(*ls));
	struct hv_err *err = rep ? &rep->err : NULL;
	const char *found;
	int ret;

	if (!ls)
		return hv_err_set(err, -ENOMEM, NULL);
	ret = hp_lx_states_read(hp, ls, err);
	if (ret) {
		free(ls);
		return ret;
	}
	if (name)
		state = lx_states_num(ls, name);
	found = state < 0 ? NULL : lx_states_name(ls, state);
	if (found) {
		st->num = state;
		snprintf(st->name, sizeof(st->name), "%s", found);
	} else if (name) {
		ret = hp_refuse(rep, cpu, -EINVAL,
				"Linux has no state '%s' (its list, %s, has "
				"%u states from %d to %d)",
				name, LINUX_STATES_PATH, ls->n, ls->s[0].num,
				ls->s[ls->n - 1].num);
	} else {
		ret = hp_refuse(rep, cpu, -EINVAL,
				"Linux has no state %d (its list, %s, has %u "
				"states from %d to %d)",
				state, LINUX_STATES_PATH, ls->n, ls->s[0].num,
				ls->s[ls->n - 1].num);
	}
	free(ls);
	return ret;
}

/* Writes @st to Linux's fail file of its CPU @lid; refusals said. */
static int write_fail(struct hotplug *hp, unsigned int cpu, int lid,
		      const struct lx_state *st, struct hp_report *rep)
{
	struct hv_err why = { 0 };
	char path[96], text[16], probe[16];
	long n;
	int ret;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%d/hotplug/fail", lid);
	/* Read first: where there is no such file, that is the answer. */
	n = lx_file_read_all(&hp->lxa, path, probe, sizeof(probe), &why);
	if (n == -EREMOTEIO)
		return hp_refuse(
			rep, cpu, -EOPNOTSUPP,
			"Linux has no hotplug/fail file for this CPU "
			"(its CPU %d: %s): Linux 6.1 creates it only "
			"for the CPUs present at boot, a hot-added CPU "
			"has none",
			lid, hv_err_msg(&why));
	ret = n < 0 ? (int)n : 0;
	if (!ret) {
		snprintf(text, sizeof(text), "%d\n", st->num);
		ret = lx_file_write_all(&hp->lxa, path, text, strlen(text),
					&why);
	}
	if (ret == -EREMOTEIO)
		return hp_refuse(rep, cpu, -EINVAL,
				 "Linux refused state %d (%s) for its CPU %d "
				 "(%s): Linux takes no fault in its "
				 "starting/dying section, at a state without "
				 "callbacks, or at or below bringup:cpu while "
				 "the CPU is up",
				 st->num, st->name, lid, hv_err_msg(&why));
	if (ret)
		return hp_refuse(rep, cpu, ret, "%s", hv_err_msg(&why));
	return 0;
}

int hotplug_linux_inject(struct hotplug *hp, unsigned int cpu, int state,
			 const char *name, struct hp_report *rep)
{
	struct hv_err *err = rep ? &rep->err : NULL;
	struct lx_state st = { .num = CPUHP_INVALID, .name = "none" };
	int lid, ret;

	if (cpu >= hp->max_cpus)
		return -EINVAL;
	if (!hotplug_linux_faults(hp))
		return hp_refuse(rep, cpu, -EOPNOTSUPP,
				 "Linux's faults need the guest agent "
				 "(hotvm run --agent)");
	lid = hp_linux_id(hp, cpu, err);
	if (lid < 0)
		return lid;
	if ((name || state != CPUHP_INVALID) &&
	    (ret = resolve(hp, cpu, state, name, &st, rep)))
		return ret;
	ret = write_fail(hp, cpu, lid, &st, rep);
	if (ret)
		return ret;
	set_fail(hp, cpu, st.num, st.name);
	if (st.num == CPUHP_INVALID)
		pr_err("CPU %u: Linux's CPU %d has no fault armed now", cpu,
		       lid);
	else
		pr_err("CPU %u: Linux's CPU %d fails next at its state %d "
		       "(%s)",
		       cpu, lid, st.num, st.name);
	return 0;
}

bool hp_linux_fault_armed(struct hotplug *hp, unsigned int cpu)
{
	bool r;

	pthread_mutex_lock(&hp->lock);
	r = hp->slots[cpu].linux_fail != CPUHP_INVALID;
	pthread_mutex_unlock(&hp->lock);
	return r;
}

void hp_linux_offlined_by(struct hotplug *hp, unsigned int cpu, const char *by)
{
	pthread_mutex_lock(&hp->lock);
	if (hp->rep && hp->op_cpu == cpu)
		hp->rep->offlined_by = by;
	pthread_mutex_unlock(&hp->lock);
}

/*
 * Whether Linux lists @cpu online, asked now: 1, 0, -1 not listed (gone),
 * -2 no answer.
 */
static int linux_online_now(struct hotplug *hp, unsigned int cpu)
{
	int on = -2;

	if (!hp_linux_refresh(hp, false, NULL)) {
		pthread_mutex_lock(&hp->lock);
		on = hp->slots[cpu].linux_online;
		pthread_mutex_unlock(&hp->lock);
	}
	return on;
}

/* Whether Linux's fail file for @cpu reads @state still. */
static bool fail_still(struct hotplug *hp, unsigned int cpu, int state)
{
	char path[96], buf[16];
	int lid;
	long n;

	pthread_mutex_lock(&hp->lock);
	lid = hp->slots[cpu].linux_cpu;
	pthread_mutex_unlock(&hp->lock);
	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%d/hotplug/fail", lid);
	n = lid < 0 ? -1
		    : lx_file_read_all(&hp->lxa, path, buf, sizeof(buf) - 1,
				       NULL);
	if (n < 0)
		return false;
	buf[n] = 0;
	return atoi(buf) == state;
}

int hp_linux_offline_first(struct hotplug *hp, unsigned int cpu)
{
	struct hv_err why = { 0 };
	char name[sizeof(hp->slots[0].linux_fail_name)];
	int fail, ret;

	if (hp->forced || !hotplug_linux_faults(hp))
		return 0;
	pthread_mutex_lock(&hp->lock);
	fail = hp->slots[cpu].linux_fail;
	memcpy(name, hp->slots[cpu].linux_fail_name, sizeof(name));
	pthread_mutex_unlock(&hp->lock);
	if (fail == CPUHP_INVALID)
		return 0;
	ret = hp_linux_set_online(hp, cpu, false, &why);
	if (!ret) {
		/* Not hit going down (a state with no teardown): still armed. */
		hp_linux_offlined_by(hp, cpu, "agent");
		return 0;
	}
	if (ret == -ETIMEDOUT || linux_online_now(hp, cpu) != 1) {
		/* No agent, or Linux let it go anyway: the eject decides. */
		pr_err("CPU %u: offlining it through the guest agent first "
		       "failed (%s); the eject goes on",
		       cpu, hv_err_msg(&why));
		return 0;
	}
	if (fail_still(hp, cpu, fail)) {
		hp_fail(hp, cpu,
			"Linux refused to offline it (%s); the fault injected "
			"at its state %d (%s) is still armed",
			hv_err_msg(&why), fail, name);
		return -EBUSY;
	}
	set_fail(hp, cpu, CPUHP_INVALID, NULL);
	hp_fail(hp, cpu,
		"Linux refused to offline it: its offline failed at the "
		"fault injected at its state %d (%s) and Linux rolled back, "
		"so it keeps the CPU online (%s)",
		fail, name, hv_err_msg(&why));
	return -EAGAIN;
}

int hp_linux_offline_late(struct hotplug *hp, unsigned int cpu,
			  struct hv_err *why)
{
	int ret;

	int on = linux_online_now(hp, cpu);

	/* Linux let it go by itself, but later; no answer: the eject decides. */
	if (on != 1) {
		if (on != -2)
			hp_linux_offlined_by(hp, cpu, "guest");
		return 0;
	}
	pr_err("CPU %u: Linux has not let it go yet: offlining it through "
	       "the guest agent",
	       cpu);
	ret = hp_linux_set_online(hp, cpu, false, why);
	if (!ret) {
		hp_linux_offlined_by(hp, cpu, "agent");
		return 0;
	}
	/* Its own eject may have taken it meanwhile: Linux's word decides. */
	return linux_online_now(hp, cpu) == 1 ? ret : 0;
}
