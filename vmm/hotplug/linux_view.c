// SPDX-License-Identifier: GPL-2.0-only
/*
 * Linux's own word on its CPUs, through the guest agent (docs/design.md
 * §6.6 and §4): which CPUs Linux has online (guest-get-vcpus), and
 * onlining one that Linux left offline (guest-set-vcpus).  Without it the
 * host sees only the wire, and a CPU Linux offlines by itself looks
 * started for ever.
 *
 * Linux numbers its CPUs itself (logical ids, given out as it meets
 * them), so each logical id is matched to its slot once, by the ACPI path
 * of its firmware node: "\_SB_.CPUS.C00A" is slot 10 (the names the DSDT
 * gives, hpregs_build_aml()).  The match is forgotten when the id leaves
 * Linux's list (the CPU was removed) and at a reset.
 *
 * Everything the agent says is checked: an id out of range, a path that
 * names no slot, two ids for one slot make the answer unusable, never a
 * crash; an agent that does not answer costs one timeout, after which
 * queries use what was last known until the periodic check finds the
 * agent again.  A path that could not be read is remembered too, and
 * asked again only after a wait that doubles with each miss; and a
 * whole check has one deadline, however many ids are new: what it did
 * not reach waits for the next check.  The periodic check runs on its
 * own thread (agent_watch.c), so the agent never holds the machine thread.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hotplug_internal.h"
#include "linux_file.h"
#include "log.h"
#include "qga.h"

/* The firmware node's path: "\_SB_.CPUS.Cxxx" and a newline. */
#define LINUX_PATH_MAX 64
/* One check's deadline, for the list and the new ids' paths together. */
#define LINUX_CHECK_MS (3 * LINUX_AGENT_TIMEOUT_MS)
/* A path that could not be read: asked again after 10 s, 20 s ... 10 min. */
#define LINUX_MISS_FIRST_MS 10000u
#define LINUX_MISS_MAX_MS   600000u

bool hotplug_has_agent(const struct hotplug *hp)
{
	return hp->agent != NULL;
}

/* "\_SB_.CPUS.C00A\n" -> 10; -1 for anything else. */
static int path_slot(const char *p, size_t len, unsigned int max)
{
	static const char pre[] = "\\_SB_.CPUS.C";
	char *end;
	long v;

	while (len && (p[len - 1] == '\n' || p[len - 1] == '\0'))
		len--;
	if (len != sizeof(pre) - 1 + 3 || memcmp(p, pre, sizeof(pre) - 1))
		return -1;
	p += sizeof(pre) - 1;
	for (int i = 0; i < 3; i++)
		if (!strchr("0123456789ABCDEF", p[i]) || !p[i])
			return -1;
	v = strtol((char[4]){ p[0], p[1], p[2], 0 }, &end, 16);
	return v >= 0 && (unsigned long)v < max ? (int)v : -1;
}

/* A member of an agent reply as an int in [0, max), or -1. */
static long member_int(struct json_object *o, const char *key, long max)
{
	struct json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	n = json_object_get_int64(v);
	return n >= 0 && n < max ? (long)n : -1;
}

int hp_agent_cap(void *ctx, int want_ms)
{
	struct hotplug *hp = ctx;
	uint64_t now, until = hp->agent_until_ns;

	if (hp->agent_call_ms > want_ms)
		want_ms = hp->agent_call_ms;
	if (!until)
		return want_ms;
	now = hv_now_ns();
	if (now >= until)
		return 1;
	if ((until - now) / 1000000u < (uint64_t)want_ms)
		return (int)((until - now) / 1000000u) + 1;
	return want_ms;
}

/* The check's deadline has passed: what is left waits for the next. */
static bool check_over(const struct hotplug *hp)
{
	return hp->agent_until_ns && hv_now_ns() >= hp->agent_until_ns;
}

/* A miss for @lid: not asked again before its wait, which doubles. */
static void miss(struct hotplug *hp, long lid)
{
	struct hp_linux_miss *m = &hp->linux_miss[lid];

	if (!m->wait_ms)
		m->wait_ms = hp->linux_miss_first_ms ? hp->linux_miss_first_ms
						     : LINUX_MISS_FIRST_MS;
	m->retry_ns = hv_now_ns() + (uint64_t)m->wait_ms * 1000000u;
	if (m->wait_ms < LINUX_MISS_MAX_MS)
		m->wait_ms = m->wait_ms * 2 < LINUX_MISS_MAX_MS
				     ? m->wait_ms * 2
				     : LINUX_MISS_MAX_MS;
}

/*
 * The slot of Linux's CPU @lid, read from the guest; -1 if none (for now:
 * a miss is remembered), -ETIMEDOUT when the agent did not answer in
 * time, -ETIME when the check's deadline came first.
 */
static int find_slot(struct hotplug *hp, long lid, struct hv_err *err)
{
	char path[96], buf[LINUX_PATH_MAX];
	long n;
	int slot;

	if (hp->linux_miss[lid].retry_ns > hv_now_ns())
		return -1;
	if (check_over(hp))
		return -ETIME;
	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%ld/firmware_node/path", lid);
	n = lx_file_read_all(&hp->lxa, path, buf, sizeof(buf), err);
	if (n == -ETIMEDOUT || n == -ECANCELED)
		return check_over(hp) && n == -ETIMEDOUT ? -ETIME : (int)n;
	slot = n < 0 ? -1 : path_slot(buf, (size_t)n, hp->max_cpus);
	if (slot < 0)
		miss(hp, lid);
	else
		hp->linux_miss[lid] = (struct hp_linux_miss){ 0 };
	return slot;
}

/*
 * One entry of guest-get-vcpus: its logical id (in [0, max_cpus): Linux
 * has no more possible CPUs than the firmware lists) and whether online.
 */
static int parse_vcpu(struct hotplug *hp, struct json_object *e, long *lid,
		      bool *online)
{
	struct json_object *v;

	*lid = member_int(e, "logical-id", hp->max_cpus);
	if (*lid < 0 || !json_object_object_get_ex(e, "online", &v) ||
	    !json_object_is_type(v, json_type_boolean))
		return -EPROTO;
	*online = json_object_get_boolean(v);
	return 0;
}

/*
 * The slot an operation waits for Linux to list (hp->linux_expect),
 * matched without reading its firmware node when the answer settles it:
 * Linux has acknowledged the slot (so lists its id), the slot is matched
 * to no id, and exactly one listed id is unmatched, new since the last
 * answer (an id whose node could not be read was listed before): that id
 * is the slot's.  Anything else is left to the firmware node.  Agent
 * lock held.
 */
static void match_expected(struct hotplug *hp, struct json_object *list)
{
	int want = __atomic_load_n(&hp->linux_expect, __ATOMIC_RELAXED) - 1;
	size_t n = json_object_array_length(list);
	unsigned int unmatched = 0;
	long only = -1;

	if (want < 0 || (unsigned int)want >= hp->max_cpus)
		return;
	for (unsigned int l = 0; l < hp->max_cpus; l++)
		if (hp->linux_slot[l] == want + 1)
			return; /* matched already */
	for (size_t i = 0; i < n; i++) {
		long lid;
		bool online;

		if (parse_vcpu(hp, json_object_array_get_idx(list, i), &lid,
			       &online))
			return; /* map_vcpus() says why */
		if (!hp->linux_slot[lid]) {
			unmatched++;
			only = lid;
		}
	}
	if (unmatched != 1 || hp->linux_listed[only])
		return;
	hp->linux_slot[only] = want + 1;
	hp->linux_miss[only] = (struct hp_linux_miss){ 0 };
}

/*
 * Matches every logical id in @list to its slot (reading the ones not
 * known yet) and fills @state[slot] (-1 not listed, 0 offline, 1
 * online) and @lids[slot].  Agent lock held.
 */
static int map_vcpus(struct hotplug *hp, struct json_object *list,
		     int8_t *state, int *lids, struct hv_err *err)
{
	size_t n = json_object_array_length(list);
	bool *seen = calloc(hp->max_cpus, sizeof(*seen));
	int ret = 0;

	if (!seen)
		return -ENOMEM;
	match_expected(hp, list);
	for (unsigned int i = 0; i < hp->max_cpus; i++)
		state[i] = -1, lids[i] = -1;
	for (size_t i = 0; i < n && !ret; i++) {
		long lid;
		bool online;
		int slot;

		ret = parse_vcpu(hp, json_object_array_get_idx(list, i), &lid,
				 &online);
		if (ret || seen[lid]) {
			ret = hv_err_set(err, -EPROTO,
					 "the guest agent's CPU list is bad "
					 "(entry %zu)",
					 i);
			break;
		}
		seen[lid] = true;
		slot = hp->linux_slot[lid] - 1;
		if (slot < 0) {
			slot = find_slot(hp, lid, err);
			if (slot == -ETIMEDOUT || slot == -ECANCELED) {
				ret = slot;
				break;
			}
			if (slot < 0)
				continue; /* not ours to judge (yet) */
			hp->linux_slot[lid] = slot + 1;
		}
		if (lids[slot] >= 0) {
			ret = hv_err_set(err, -EPROTO,
					 "the guest names slot %d twice (Linux "
					 "CPUs %d and %ld)",
					 slot, lids[slot], lid);
			break;
		}
		lids[slot] = (int)lid;
		state[slot] = online;
	}
	/*
	 * An id Linux no longer lists may be another slot next time; after
	 * a bad answer none of the matches is believed.
	 */
	for (unsigned int l = 0; l < hp->max_cpus; l++) {
		if (ret || !seen[l])
			hp->linux_slot[l] = 0;
		if (!seen[l]) /* its miss goes with it */
			hp->linux_miss[l] = (struct hp_linux_miss){ 0 };
		hp->linux_listed[l] = !ret && seen[l];
	}
	free(seen);
	return ret;
}

/*
 * Applies Linux's word on the slot @cpu (@state: -1 not listed, 0
 * offline, 1 online, as its CPU @lid) and says what changed: the stage
 * (started while Linux has it online, acknowledged while offline) and the
 * online set.  False when a reset since @gen voids the answer.
 */
static bool apply_one(struct hotplug *hp, unsigned int cpu, int8_t state,
		      int lid, unsigned int gen)
{
	struct hp_slot *s = &hp->slots[cpu];
	char id[sizeof(s->id)];
	struct hp_events ev = { 0 };
	bool was, now, held;

	pthread_mutex_lock(&hp->lock);
	if (hp->linux_gen != gen) { /* a reset: this answer is void */
		pthread_mutex_unlock(&hp->lock);
		return false;
	}
	held = s->stage == HP_STAGE_ACKNOWLEDGED ||
	       s->stage == HP_STAGE_STARTED;
	was = s->online && s->linux_online != 0;
	s->linux_cpu = lid;
	s->linux_online = state;
	if (state < 0) /* gone from Linux: its fault with it */
		s->linux_fail = CPUHP_INVALID;
	now = s->online && s->linux_online != 0;
	if (held && !hp->guest_ext && state >= 0)
		hp_set_stage_locked(hp, cpu,
				    state ? HP_STAGE_STARTED
					  : HP_STAGE_ACKNOWLEDGED,
				    &ev, id, sizeof(id));
	pthread_mutex_unlock(&hp->lock);
	hp_stage_notify(&ev, cpu, id,
			state ? HP_STAGE_STARTED : HP_STAGE_ACKNOWLEDGED);
	if (was != now) {
		pr_err("CPU %u: Linux (its CPU %d) has it %s", cpu, lid,
		       now ? "online" : "offline");
		hp_online_changed(hp, cpu, now);
	}
	return true;
}

/* Linux's word on every slot the host holds (apply_one()). */
static void apply_vcpus(struct hotplug *hp, const int8_t *state,
			const int *lids, unsigned int gen)
{
	for (unsigned int cpu = 0; cpu < hp->max_cpus; cpu++)
		if (!apply_one(hp, cpu, state[cpu], lids[cpu], gen))
			return;
}

/* Says once when the agent goes away or comes back. */
static void agent_health(struct hotplug *hp, int ret, struct hv_err *err)
{
	bool up = ret != -ETIMEDOUT;

	if (up != hp->agent_up) {
		if (up)
			pr_err("the guest agent answers");
		else
			pr_err("the guest agent does not answer: %s; the "
			       "CPUs' Linux view is as last known",
			       hv_err_msg(err));
	}
	__atomic_store_n(&hp->agent_up, up, __ATOMIC_RELAXED);
}

/*
 * Agent lock held: a reset since the last holder voids every match and
 * miss (hp_linux_forget() does not wait for the lock).  The generation
 * this check's answer belongs to.
 */
static unsigned int linux_sync_gen(struct hotplug *hp)
{
	unsigned int gen;

	pthread_mutex_lock(&hp->lock);
	gen = hp->linux_gen;
	pthread_mutex_unlock(&hp->lock);
	if (gen != hp->linux_gen_seen) {
		memset(hp->linux_slot, 0,
		       hp->max_cpus * sizeof(*hp->linux_slot));
		memset(hp->linux_miss, 0,
		       hp->max_cpus * sizeof(*hp->linux_miss));
		memset(hp->linux_listed, 0,
		       hp->max_cpus * sizeof(*hp->linux_listed));
		hp->linux_gen_seen = gen;
	}
	return gen;
}

/*
 * An idempotent call of the Linux view's (guest-get-vcpus, and
 * guest-set-vcpus, which leaves a CPU already as asked alone).  One that
 * the guest's close of the port cut off (-EPIPE: qemu-ga stopped or
 * restarted, as systemd does) is asked once more: that call's bytes wait
 * in the port for the next qemu-ga, within its own deadline.
 */
static int view_call(struct hotplug *hp, const char *cmd,
		     struct json_object *args, struct json_object **ret, int ms,
		     struct hv_err *err)
{
	int rc = qga_call(hp->agent, cmd, args, ret, ms, err);

	if (rc == -EPIPE) {
		pr_err("%s: the guest closed the agent's port during the "
		       "call; asking the agent again",
		       cmd);
		hv_err_clear(err);
		rc = qga_call(hp->agent, cmd, args, ret, ms, err);
	}
	return rc;
}

static int refresh_ms(struct hotplug *hp, bool quick, int call_ms,
		      struct hv_err *err)
{
	struct json_object *list = NULL;
	unsigned int gen;
	int8_t *state;
	int *lids;
	int ret;

	if (!hp->agent)
		return -ENODEV;
	/* A quick one (a query's) never waits: not for another's call. */
	if (!quick)
		pthread_mutex_lock(&hp->agent_lock);
	else if (pthread_mutex_trylock(&hp->agent_lock))
		return -EBUSY;
	if (quick && !__atomic_load_n(&hp->agent_up, __ATOMIC_RELAXED)) {
		pthread_mutex_unlock(&hp->agent_lock);
		return -EAGAIN;
	}
	gen = linux_sync_gen(hp);
	hp->agent_call_ms = call_ms;
	hp->agent_until_ns =
		hv_now_ns() + (uint64_t)LINUX_CHECK_MS *
				      (call_ms / LINUX_AGENT_TIMEOUT_MS) *
				      1000000ull;
	state = malloc(hp->max_cpus * sizeof(*state));
	lids = malloc(hp->max_cpus * sizeof(*lids));
	ret = state && lids ? 0 : -ENOMEM;
	if (!ret)
		ret = view_call(hp, "guest-get-vcpus", NULL, &list, call_ms,
				err);
	if (!ret && !json_object_is_type(list, json_type_array))
		ret = hv_err_set(err, -EPROTO,
				 "the guest agent's CPU list is not a list");
	if (!ret)
		ret = map_vcpus(hp, list, state, lids, err);
	if (!ret)
		apply_vcpus(hp, state, lids, gen);
	hp->agent_until_ns = 0;
	hp->agent_call_ms = 0;
	if (ret != -ECANCELED)
		agent_health(hp, ret, err);
	pthread_mutex_unlock(&hp->agent_lock);
	json_object_put(list);
	free(state);
	free(lids);
	return ret;
}

int hp_linux_refresh(struct hotplug *hp, bool quick, struct hv_err *err)
{
	return refresh_ms(hp, quick, LINUX_AGENT_TIMEOUT_MS, err);
}

int hp_linux_refresh_patient(struct hotplug *hp, struct hv_err *err)
{
	return refresh_ms(hp, false, 5 * LINUX_AGENT_TIMEOUT_MS, err);
}

int hotplug_agent_refresh(struct hotplug *hp, bool quick)
{
	struct hv_err err = { 0 };
	unsigned int ops;

	/*
	 * An operation asks Linux itself (and at its end): the periodic
	 * check stays off the wire meanwhile, so that every agent call
	 * during an operation is the operation's.
	 */
	pthread_mutex_lock(&hp->lock);
	ops = hp->op_depth;
	pthread_mutex_unlock(&hp->lock);
	if (ops)
		return -EBUSY;

	return hp_linux_refresh(hp, quick, &err);
}

void hp_linux_retry_unmatched(struct hotplug *hp)
{
	pthread_mutex_lock(&hp->agent_lock);
	for (unsigned int l = 0; l < hp->max_cpus; l++)
		if (!hp->linux_slot[l])
			hp->linux_miss[l].retry_ns = 0;
	pthread_mutex_unlock(&hp->agent_lock);
}

/* Linux's id for the slot @cpu as last read, or -ENOENT with why. */
static int known_lid(struct hotplug *hp, unsigned int cpu, struct hv_err *err)
{
	int lid;

	pthread_mutex_lock(&hp->lock);
	lid = hp->slots[cpu].linux_cpu;
	pthread_mutex_unlock(&hp->lock);
	if (lid < 0)
		return hv_err_set(err, -ENOENT,
				  "Linux does not list the CPU (not plugged, "
				  "or not matched to its slot yet)");
	return lid;
}

int hp_linux_id(struct hotplug *hp, unsigned int cpu, struct hv_err *err)
{
	int ret = hp_linux_refresh(hp, false, err);

	return ret ? ret : known_lid(hp, cpu, err);
}

/*
 * guest-set-vcpus for Linux's CPU @lid (the slot @cpu).  Its answer (1:
 * Linux's write to cpuN/online returned, so Linux has it as asked) is
 * applied to the slot as a refresh would: no second round trip to read
 * back what Linux just said.  The end of an operation that onlined its
 * CPU so does not ask Linux again either (hp->linux_fresh); after an
 * offline it does (the eject that follows changes Linux's list).
 */
static int set_lid(struct hotplug *hp, unsigned int cpu, int lid, bool online,
		   struct hv_err *err)
{
	struct json_object *a, *e, *r = NULL;
	unsigned int gen;
	int ret;

	pthread_mutex_lock(&hp->lock);
	gen = hp->linux_gen;
	pthread_mutex_unlock(&hp->lock);
	e = json_object_new_object();
	json_object_object_add(e, "logical-id", json_object_new_int(lid));
	json_object_object_add(e, "online", json_object_new_boolean(online));
	a = json_object_new_object();
	json_object_object_add(a, "vcpus", json_object_new_array());
	json_object_array_add(json_object_object_get(a, "vcpus"), e);
	ret = view_call(hp, "guest-set-vcpus", a, &r,
			LINUX_AGENT_TIMEOUT_MS * 5, err);
	json_object_put(a);
	/* It answers with how many of the list it changed: 1. */
	if (!ret && !(json_object_is_type(r, json_type_int) &&
		      json_object_get_int64(r) == 1))
		ret = hv_err_set(err, -EIO,
				 "Linux did not %s its CPU %d (the agent "
				 "changed none)",
				 online ? "online" : "offline", lid);
	json_object_put(r);
	if (!ret && !apply_one(hp, cpu, online ? 1 : 0, lid, gen))
		ret = hp_linux_refresh(hp, false, err); /* a reset meanwhile */
	else if (!ret && online) {
		pthread_mutex_lock(&hp->lock);
		hp->linux_fresh = hp->op_depth == 1; /* hp_op_exit() */
		pthread_mutex_unlock(&hp->lock);
	}
	return ret;
}

int hp_linux_set_online(struct hotplug *hp, unsigned int cpu, bool online,
			struct hv_err *err)
{
	int lid = hp_linux_id(hp, cpu, err);

	return lid < 0 ? lid : set_lid(hp, cpu, lid, online, err);
}

int hp_linux_set_known(struct hotplug *hp, unsigned int cpu, bool online,
		       struct hv_err *err)
{
	int lid = known_lid(hp, cpu, err);

	return lid < 0 ? lid : set_lid(hp, cpu, lid, online, err);
}

int hotplug_agent_shutdown(struct hotplug *hp, struct hv_err *err)
{
	struct json_object *a;
	int ret;

	if (!hp->agent)
		return hv_err_set(err, -ENODEV,
				  "this VM has no guest agent (hotvm run "
				  "--agent)");
	a = json_object_new_object();
	json_object_object_add(a, "mode", json_object_new_string("powerdown"));
	ret = qga_send(hp->agent, "guest-shutdown", a, LINUX_AGENT_TIMEOUT_MS,
		       err);
	json_object_put(a);
	return ret;
}

int hotplug_agent_stats(struct hotplug *hp, struct qga_stats *st, bool *up)
{
	if (!hp->agent)
		return -ENODEV;
	qga_get_stats(hp->agent, st);
	*up = __atomic_load_n(&hp->agent_up, __ATOMIC_RELAXED);
	return 0;
}

void hp_linux_forget(struct hotplug *hp)
{
	if (!hp->agent)
		return;
	/* Not agent_lock: a check in flight must not hold the reset. */
	pthread_mutex_lock(&hp->lock);
	hp->linux_gen++;
	for (unsigned int i = 0; i < hp->max_cpus; i++) {
		hp->slots[i].linux_cpu = -1;
		hp->slots[i].linux_online = -1;
		hp->slots[i].linux_fail = CPUHP_INVALID;
	}
	pthread_mutex_unlock(&hp->lock);
}

void hotplug_agent_set_miss_wait(struct hotplug *hp, unsigned int first_ms)
{
	pthread_mutex_lock(&hp->agent_lock);
	hp->linux_miss_first_ms = first_ms;
	pthread_mutex_unlock(&hp->agent_lock);
}
