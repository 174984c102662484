// SPDX-License-Identifier: GPL-2.0-only
/*
 * The clients that hot-plug vCPUs today, replayed against a real hotvm
 * with the tiny guest: each sends what its code sends, framed
 * as it frames it, and checks what its code checks.  The facts come from
 * their sources:
 *
 * libvirt (src/qemu/qemu_monitor_json.c, qemu_monitor.c, qemu_hotplug.c,
 * qemu_domain.c): requests end in "\r\n" with "id": "libvirt-N", and its
 * reader splits only at "\r\n"; vCPU hotplug only if query-commands lists
 * query-hotpluggable-cpus; the "vcpus-count" of every entry must add up
 * to the maximum or it falls back to a legacy mapping; entries sorted by
 * socket, die, cluster, core, thread give vCPU n; a vCPU's alias is the
 * last component of its qom-path when it starts with "vcpu" (else it is
 * not hot-unpluggable); device_add is {"driver": type, "id": "vcpuN"} plus
 * the entry's props exactly as returned; then query-hotpluggable-cpus and
 * query-cpus-fast, matched by qom-path (cut at "/thread"), and every
 * online vCPU must have a thread-id (it pins and cgroups that thread),
 * every offline one none; removal is device_del {"id": alias} and a wait
 * of 5 s for DEVICE_DELETED with that device, else the result "must be
 * manually inspected".
 *
 * Kata Containers (govmm qmp.go, virtcontainers/qemu.go): no request id,
 * "\n" after each; the greeting's QMP.version.qemu decides whether die-id
 * is sent (>= 4.1); it walks query-hotpluggable-cpus in the order given,
 * skips entries with a qom-path, and sends device_add with "id": "cpu-N"
 * (N = how many it hot-plugged so far) and socket-id, die-id, core-id and
 * thread-id as decimal strings; it removes the last one first with
 * device_del and waits for both the reply and DEVICE_DELETED of that id,
 * in either order.
 *
 * LXD / Incus (instance/drivers/qmp/qmp.go, monitor.go, driver_qemu.go):
 * integer request ids from 1, the handshake sent with a "\n" and every
 * later request with none (a stream of JSON objects), replies read at
 * "\n" and dropped unless they carry the id; a 2 s deadline for queries
 * and 2 min for device_add and device_del; at start it reads the vCPU
 * threads from query-cpus-fast and pins each (sched_setaffinity).  The
 * replay counts with query-cpus-fast, adds from the free entries of
 * query-hotpluggable-cpus with integer ids and an id built from the props,
 * and removes the last query-cpus-fast entry by that id.
 *
 * Plus what an orchestrator needs beyond them: a hook directory that pins
 * a vCPU thread at vcpu:create before the guest runs on it, and the
 * CPUS_CHANGED event for every change of the online set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "check.h"
#include "recorded.h"
#include "vmproc.h"

#define MAXCPU 4

static struct json_object *jget(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	if (o && json_object_is_type(o, json_type_object))
		json_object_object_get_ex(o, k, &v);
	return v;
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v = jget(o, k);

	return json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

/* An integer member, as Go's and libvirt's decoders insist; else -1. */
static long long jint(struct json_object *o, const char *k)
{
	struct json_object *v = jget(o, k);

	return json_object_is_type(v, json_type_int) ? json_object_get_int64(v)
						     : -1;
}

/* The name the kernel has for thread @tid of @pid ("" if none). */
static void thread_comm(pid_t pid, int tid, char *out, size_t len)
{
	char path[64];
	FILE *f;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, tid);
	f = fopen(path, "r");
	if (f && fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	if (f)
		fclose(f);
}

/* ---- libvirt ---- */

/* libvirt's per-vCPU record (qemuMonitorCPUInfo), as it fills it. */
struct lv_vcpu {
	bool online;
	char alias[64];
	char qom[128];
	char type[64];
	int tid;
	struct json_object *props; /* as returned, for device_add */
};

static int lv_sort(const void *a, const void *b)
{
	static const char *const keys[] = { "socket-id", "die-id", "cluster-id",
					    "core-id", "thread-id" };
	struct json_object *pa = jget(*(struct json_object *const *)a, "props");
	struct json_object *pb = jget(*(struct json_object *const *)b, "props");

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (jint(pa, keys[i]) != jint(pb, keys[i]))
			return jint(pa, keys[i]) < jint(pb, keys[i]) ? -1 : 1;
	return 0;
}

/*
 * qemuDomainRefreshVcpuInfo() and qemuDomainValidateVcpuInfo(): the two
 * queries, stitched together by qom-path.  0 if libvirt would accept them.
 */
static int lv_refresh(struct rec *r, struct lv_vcpu *info)
{
	struct json_object *hr = rec_exec(r, "query-hotpluggable-cpus", NULL);
	struct json_object *cr = NULL, *h = rec_return(hr), *c;
	struct json_object *sorted[MAXCPU];
	size_t n = h ? json_object_array_length(h) : 0, total = 0;
	int bad = 0;

	for (int i = 0; i < MAXCPU; i++) {
		json_object_put(info[i].props);
		info[i] = (struct lv_vcpu){ 0 };
	}
	if (!h || n != MAXCPU) {
		printf("# libvirt: %zu hotpluggable entries, want %d\n", n,
		       MAXCPU);
		json_object_put(hr);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		sorted[i] = json_object_array_get_idx(h, i);
		total += (size_t)jint(sorted[i], "vcpus-count");
		/* Without any topology id libvirt refuses the entry. */
		if (!jstr(sorted[i], "type") || !jget(sorted[i], "props") ||
		    jint(jget(sorted[i], "props"), "socket-id") < 0)
			bad++;
	}
	/* Else libvirt falls back to the legacy mapping: no hotplug. */
	CHECK_EQ(total, MAXCPU);
	qsort(sorted, n, sizeof(sorted[0]), lv_sort);
	for (size_t i = 0; i < n; i++) {
		const char *qom = jstr(sorted[i], "qom-path"), *slash;

		info[i].online = qom != NULL;
		snprintf(info[i].type, sizeof(info[i].type), "%s",
			 jstr(sorted[i], "type") ?: "");
		info[i].props = json_object_get(jget(sorted[i], "props"));
		if (qom) {
			snprintf(info[i].qom, sizeof(info[i].qom), "%s", qom);
			slash = strrchr(qom, '/');
			if (slash && !strncmp(slash + 1, "vcpu", 4))
				snprintf(info[i].alias, sizeof(info[i].alias),
					 "%s", slash + 1);
		}
	}
	cr = rec_exec(r, "query-cpus-fast", NULL);
	c = rec_return(cr);
	for (size_t j = 0; c && j < json_object_array_length(c); j++) {
		struct json_object *e = json_object_array_get_idx(c, j);
		char qom[128];
		size_t k;

		snprintf(qom, sizeof(qom), "%s", jstr(e, "qom-path") ?: "");
		if (strstr(qom, "/thread"))
			*strstr(qom, "/thread") = 0;
		for (k = 0; k < n && strcmp(info[k].qom, qom); k++)
			;
		if (k == n) {
			printf("# libvirt: query-cpus-fast entry %s matches no "
			       "hotpluggable entry\n",
			       qom);
			bad++;
			continue;
		}
		info[k].tid = (int)jint(e, "thread-id");
	}
	for (size_t i = 0; i < n; i++)
		if (info[i].online != (info[i].tid > 0)) {
			printf("# libvirt: vCPU %zu online %d with thread id "
			       "%d\n",
			       i, info[i].online, info[i].tid);
			bad++;
		}
	json_object_put(hr);
	json_object_put(cr);
	return c && !bad ? 0 : -1;
}

static bool lists_command(struct json_object *cmds, const char *name)
{
	for (size_t i = 0; cmds && i < json_object_array_length(cmds); i++)
		if (!strcmp(jstr(json_object_array_get_idx(cmds, i), "name")
				    ?: "",
			    name))
			return true;
	return false;
}

static void test_libvirt(void)
{
	struct lv_vcpu info[MAXCPU] = { 0 };
	struct vmproc v;
	struct rec r;
	struct json_object *rep, *ret;
	char comm[32];
	long long t0;

	CHECK_EQ(vmproc_start(&v, "boot=1,max=4", "", NULL), 0);
	CHECK_EQ(rec_open(&r, v.sock, "libvirt", "libvirt-%u", "\r\n",
			  REC_CRLF_ONLY),
		 0);
	rep = rec_exec(&r, "qmp_capabilities", NULL);
	CHECK(rec_return(rep) != NULL);
	json_object_put(rep);
	rep = rec_exec(&r, "query-commands", NULL);
	ret = rec_return(rep);
	/* QEMU_CAPS_QUERY_HOTPLUGGABLE_CPUS gates the whole path. */
	CHECK(lists_command(ret, "query-hotpluggable-cpus"));
	CHECK(lists_command(ret, "query-cpus-fast"));
	CHECK(lists_command(ret, "device_add"));
	CHECK(lists_command(ret, "device_del"));
	json_object_put(rep);

	CHECK_EQ(lv_refresh(&r, info), 0);
	CHECK(info[0].online);
	CHECK_STREQ(info[0].alias, ""); /* a boot CPU: not unpluggable */
	CHECK(!info[1].online && !info[2].online && !info[3].online);

	/* virsh setvcpus --live 4: one device_add per vCPU, in order. */
	for (int n = 1; n < MAXCPU; n++) {
		struct json_object *args = json_object_new_object();

		json_object_object_add(args, "driver",
				       json_object_new_string(info[n].type));
		snprintf(comm, sizeof(comm), "vcpu%d", n);
		json_object_object_add(args, "id",
				       json_object_new_string(comm));
		json_object_object_foreach(info[n].props, key, val)
			json_object_object_add(args, key, json_object_get(val));
		t0 = rec_now_ms();
		rep = rec_exec(&r, "device_add", args);
		CHECK(rec_return(rep) != NULL);
		printf("# libvirt: device_add %s answered in %lld ms\n", comm,
		       rec_now_ms() - t0);
		json_object_put(rep);
		json_object_put(args);
		CHECK_EQ(lv_refresh(&r, info), 0);
		CHECK(info[n].online);
		CHECK_STREQ(info[n].alias, comm);
		/* The thread libvirt pins is a vCPU thread of this VM. */
		thread_comm(v.pid, info[n].tid, comm, sizeof(comm));
		CHECK_STREQ(comm, info[n].alias);
	}

	/* virsh setvcpus --live 1: device_del, then 5 s for the event. */
	for (int n = MAXCPU - 1; n >= 1; n--) {
		struct json_object *args = json_object_new_object(), *ev;
		char alias[64];
		long long t0 = rec_now_ms(), at = 0;

		snprintf(alias, sizeof(alias), "%s", info[n].alias);
		json_object_object_add(args, "id",
				       json_object_new_string(alias));
		rep = rec_exec(&r, "device_del", args);
		CHECK(rec_return(rep) != NULL);
		json_object_put(rep);
		json_object_put(args);
		ev = rec_event(&r, "DEVICE_DELETED", "device", alias, t0 + 5000,
			       &at);
		CHECK(ev != NULL);
		CHECK(at - t0 <= 5000);
		printf("# libvirt: device_del %s -> DEVICE_DELETED in %lld ms "
		       "(libvirt waits 5000)\n",
		       alias, at - t0);
		json_object_put(ev);
		CHECK_EQ(lv_refresh(&r, info), 0);
		CHECK(!info[n].online);
		CHECK_EQ(info[n].tid, 0);
	}
	for (int i = 0; i < MAXCPU; i++)
		json_object_put(info[i].props);
	rec_close(&r);
	CHECK_EQ(vmproc_stop(&v), 0);
}

/* ---- Kata Containers (govmm) ---- */

static void test_kata(void)
{
	struct vmproc v;
	struct rec r;
	struct json_object *rep, *h, *qemu;
	char added[2][16];
	int nadded = 0;
	bool die;

	CHECK_EQ(vmproc_start(&v, "boot=1,max=4", "", NULL), 0);
	CHECK_EQ(rec_open(&r, v.sock, "kata", NULL, "\n", REC_ANY_EOL), 0);
	/* govmm's greeting parse: QMP.version.qemu.{major,minor,micro}. */
	qemu = jget(jget(jget(r.greeting, "QMP"), "version"), "qemu");
	CHECK(jint(qemu, "major") >= 0 && jint(qemu, "minor") >= 0 &&
	      jint(qemu, "micro") >= 0);
	die = jint(qemu, "major") > 4 ||
	      (jint(qemu, "major") == 4 && jint(qemu, "minor") >= 1);
	rep = rec_exec(&r, "qmp_capabilities", NULL);
	CHECK(rec_return(rep) != NULL);
	json_object_put(rep);

	/* hotplugAddCPUs(2): in the order returned, free entries only. */
	rep = rec_exec(&r, "query-hotpluggable-cpus", NULL);
	h = rec_return(rep);
	for (size_t i = 0; h && i < json_object_array_length(h) && nadded < 2;
	     i++) {
		struct json_object *e = json_object_array_get_idx(h, i);
		struct json_object *p = jget(e, "props"), *args, *ar;
		char s[16], c[16], t[16];

		if (jstr(e, "qom-path"))
			continue;
		CHECK(jint(e, "vcpus-count") == 1 && jint(p, "socket-id") >= 0);
		snprintf(added[nadded], sizeof(added[0]), "cpu-%d", nadded);
		snprintf(s, sizeof(s), "%lld", jint(p, "socket-id"));
		snprintf(c, sizeof(c), "%lld", jint(p, "core-id"));
		snprintf(t, sizeof(t), "%lld", jint(p, "thread-id"));
		args = json_object_new_object();
		json_object_object_add(args, "driver",
				       json_object_new_string(jstr(e, "type")));
		json_object_object_add(args, "id",
				       json_object_new_string(added[nadded]));
		json_object_object_add(args, "core-id",
				       json_object_new_string(c));
		json_object_object_add(args, "socket-id",
				       json_object_new_string(s));
		json_object_object_add(args, "thread-id",
				       json_object_new_string(t));
		if (die)
			json_object_object_add(args, "die-id",
					       json_object_new_string("0"));
		ar = rec_exec(&r, "device_add", args);
		CHECK(rec_return(ar) != NULL);
		json_object_put(ar);
		json_object_put(args);
		nadded++;
	}
	json_object_put(rep);
	CHECK_EQ(nadded, 2);

	/* Both are there, under the ids Kata gave them. */
	rep = rec_exec(&r, "query-hotpluggable-cpus", NULL);
	h = rec_return(rep);
	for (int k = 0; k < nadded; k++) {
		char want[64];
		bool seen = false;

		snprintf(want, sizeof(want), "/machine/peripheral/%s",
			 added[k]);
		for (size_t i = 0; h && i < json_object_array_length(h); i++)
			seen |= !strcmp(jstr(json_object_array_get_idx(h, i),
					     "qom-path")
						?: "",
					want);
		CHECK(seen);
	}
	json_object_put(rep);

	/* hotplugRemoveCPUs(2): the last one first; reply and event. */
	for (int k = nadded - 1; k >= 0; k--) {
		struct json_object *args = json_object_new_object(), *ev;

		json_object_object_add(args, "id",
				       json_object_new_string(added[k]));
		rep = rec_exec(&r, "device_del", args);
		CHECK(rec_return(rep) != NULL);
		json_object_put(rep);
		json_object_put(args);
		ev = rec_event(&r, "DEVICE_DELETED", "device", added[k],
			       rec_now_ms() + VMPROC_TIMEOUT_MS, NULL);
		CHECK(ev != NULL);
		json_object_put(ev);
	}
	rec_close(&r);
	CHECK_EQ(vmproc_stop(&v), 0);
}

/* ---- LXD / Incus ---- */

/* A query within Incus's 2 s deadline for queries. */
static struct json_object *lxd_query(struct rec *r, const char *cmd)
{
	long long t0 = rec_now_ms();
	struct json_object *rep = rec_exec(r, cmd, NULL);

	CHECK(rec_now_ms() - t0 < 2000);
	return rep;
}

static int lxd_count(struct rec *r, pid_t pid)
{
	struct json_object *rep = lxd_query(r, "query-cpus-fast");
	struct json_object *c = rec_return(rep);
	int n = c ? (int)json_object_array_length(c) : -1;

	/* LXD pins every vCPU by this thread-id. */
	for (int i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(c, i);
		char comm[32], want[32];

		thread_comm(pid, (int)jint(e, "thread-id"), comm, sizeof(comm));
		snprintf(want, sizeof(want), "vcpu%lld", jint(e, "cpu-index"));
		CHECK_STREQ(comm, want);
		CHECK(jint(jget(e, "props"), "socket-id") >= 0);
	}
	json_object_put(rep);
	return n;
}

static void test_lxd(void)
{
	struct vmproc v;
	struct rec r;
	struct json_object *rep, *h;
	long long t0;
	int count;

	CHECK_EQ(vmproc_start(&v, "boot=1,max=4", "", NULL), 0);
	CHECK_EQ(rec_open(&r, v.sock, "lxd", "%u#", "\n", REC_ANY_EOL), 0);
	rep = rec_exec(&r, "qmp_capabilities", NULL);
	CHECK(rec_return(rep) != NULL);
	json_object_put(rep);
	/* After the handshake, no line end: a QMP server parses a stream. */
	r.eol = "";
	count = lxd_count(&r, v.pid);
	CHECK_EQ(count, 1);

	/* up to 3 */
	rep = lxd_query(&r, "query-hotpluggable-cpus");
	h = rec_return(rep);
	for (size_t i = 0; h && i < json_object_array_length(h) && count < 3;
	     i++) {
		struct json_object *e = json_object_array_get_idx(h, i);
		struct json_object *p = jget(e, "props"), *args, *ar;
		char id[64];

		if (jstr(e, "qom-path"))
			continue;
		snprintf(id, sizeof(id), "cpu%lld%lld%lld",
			 jint(p, "socket-id"), jint(p, "core-id"),
			 jint(p, "thread-id"));
		args = json_object_new_object();
		json_object_object_add(args, "id", json_object_new_string(id));
		json_object_object_add(args, "driver",
				       json_object_new_string(jstr(e, "type")));
		json_object_object_add(
			args, "core-id",
			json_object_new_int64(jint(p, "core-id")));
		json_object_object_add(
			args, "socket-id",
			json_object_new_int64(jint(p, "socket-id")));
		json_object_object_add(
			args, "thread-id",
			json_object_new_int64(jint(p, "thread-id")));
		t0 = rec_now_ms();
		ar = rec_exec(&r, "device_add", args);
		CHECK(rec_now_ms() - t0 < 120000); /* Incus gives up then */
		CHECK(rec_return(ar) != NULL);
		json_object_put(ar);
		json_object_put(args);
		count++;
	}
	json_object_put(rep);
	CHECK_EQ(lxd_count(&r, v.pid), 3);

	/* down to 1: the last query-cpus-fast entry, by its props. */
	while (count > 1) {
		struct json_object *cr = lxd_query(&r, "query-cpus-fast");
		struct json_object *c = rec_return(cr), *last, *p, *args, *ar;
		char id[64];

		if (!c || !json_object_array_length(c)) {
			json_object_put(cr);
			CHECK(!"query-cpus-fast answered");
			break;
		}
		last = json_object_array_get_idx(
			c, json_object_array_length(c) - 1);
		p = jget(last, "props");
		snprintf(id, sizeof(id), "cpu%lld%lld%lld",
			 jint(p, "socket-id"), jint(p, "core-id"),
			 jint(p, "thread-id"));
		args = json_object_new_object();
		json_object_object_add(args, "id", json_object_new_string(id));
		t0 = rec_now_ms();
		ar = rec_exec(&r, "device_del", args);
		CHECK(rec_now_ms() - t0 < 120000);
		CHECK(rec_return(ar) != NULL);
		json_object_put(ar);
		json_object_put(args);
		json_object_put(cr);
		count--;
		CHECK_EQ(lxd_count(&r, v.pid), count);
	}
	rec_close(&r);
	CHECK_EQ(vmproc_stop(&v), 0);
}

/* ---- hooks that place a vCPU ---- */

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(path, mode);
}

/*
 * Two hooks in a directory, run in name order at vcpu:create: the first
 * pins the new vCPU thread to host CPU 0 by its tid, the second records
 * what it sees of the thread at that moment: its name, its affinity and
 * the system call it waits in (not KVM_RUN: the guest has not run on it).
 * Removed and added again, the vCPU comes back on the same thread (parked
 * meanwhile), held again while the hooks run.
 */
static void test_hook_pins_vcpu(void)
{
	char dir[] = "/tmp/hotvm-place-XXXXXX", d[128], path[160], rec[160];
	char script[1024], line[512], comm[32], want[160];
	const char *extra[3];
	struct vmproc v;
	FILE *f;
	int tid = 0, apic = -1, pid = 0, nr = -1, lines = 0, tids[3] = { 0 };
	char name[32] = "", cpus[32] = "", qom[128] = "";

	CHECK(mkdtemp(dir) != NULL);
	snprintf(d, sizeof(d), "%s/hooks.d", dir);
	CHECK_EQ(mkdir(d, 0755), 0);
	snprintf(rec, sizeof(rec), "%s/seen", dir);
	snprintf(path, sizeof(path), "%s/10-pin", d);
	write_file(path,
		   "#!/bin/sh\n"
		   "[ \"$HOTVM_STATE $HOTVM_DIRECTION\" = \"vcpu:create up\" ] "
		   "|| exit 0\n"
		   "exec taskset -p -c 0 \"$HOTVM_THREAD_ID\" >/dev/null\n",
		   0755);
	snprintf(path, sizeof(path), "%s/20-record", d);
	snprintf(script, sizeof(script),
		 "#!/bin/sh\n"
		 "[ \"$HOTVM_STATE $HOTVM_DIRECTION\" = \"vcpu:create up\" ] "
		 "|| exit 0\n"
		 "t=/proc/$HOTVM_PID/task/$HOTVM_THREAD_ID\n"
		 "read -r name < $t/comm\n"
		 "read -r nr rest < $t/syscall\n"
		 "cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "
		 "$t/status)\n"
		 "echo \"$HOTVM_CPU $HOTVM_THREAD_ID $HOTVM_APIC_ID $HOTVM_PID "
		 "$name $nr $cpus ${HOTVM_QOM_PATH:--}\" >> %s\n",
		 rec);
	write_file(path, script, 0755);
	/* Not a hook: skipped, as libvirt skips what it cannot run. */
	snprintf(path, sizeof(path), "%s/30-readme", d);
	write_file(path, "not a hook\n", 0644);

	extra[0] = "--hook";
	extra[1] = d;
	extra[2] = NULL;
	CHECK_EQ(vmproc_start(&v, "boot=1,max=2", "", extra), 0);
	CHECK_EQ(vmproc_qmp(&v, "device_add", NULL, NULL, 0,
			    "{\"driver\": \"host-x86_64-cpu\", \"id\": "
			    "\"vcpu1\", \"socket-id\": 1}"),
		 0);
	CHECK_EQ(vmproc_wait_online(&v, "0-1", VMPROC_TIMEOUT_MS), 0);
	CHECK_EQ(vmproc_qmp(&v, "device_del", NULL, NULL, 0,
			    "{\"id\": \"vcpu1\"}"),
		 0);
	CHECK_EQ(vmproc_wait_online(&v, "0", VMPROC_TIMEOUT_MS), 0);
	CHECK_EQ(vmproc_qmp(&v, "device_add", NULL, NULL, 0,
			    "{\"driver\": \"host-x86_64-cpu\", \"id\": "
			    "\"vcpu1\", \"socket-id\": 1}"),
		 0);
	CHECK_EQ(vmproc_wait_online(&v, "0-1", VMPROC_TIMEOUT_MS), 0);

	f = fopen(rec, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		int cpu = -1;

		if (sscanf(line, "%d %d %d %d %31s %d %31s %127s", &cpu, &tid,
			   &apic, &pid, name, &nr, cpus, qom) != 8) {
			printf("# bad record: %s", line);
			CHECK(0);
			continue;
		}
		if (lines < 3)
			tids[lines] = tid;
		lines++;
		snprintf(want, sizeof(want), "vcpu%d", cpu);
		CHECK_STREQ(name, want);
		CHECK_EQ(apic, cpu);
		CHECK_EQ(pid, v.pid);
		/* Pinned by 10-pin before 20-record ran: name order. */
		CHECK_STREQ(cpus, "0");
		/* Waiting in futex (202), not in ioctl KVM_RUN (16). */
		CHECK_EQ(nr, 202);
		if (cpu == 0)
			CHECK_STREQ(qom, "/machine/unattached/device[0]");
		else
			CHECK_STREQ(qom, "/machine/peripheral/vcpu1");
	}
	if (f)
		fclose(f);
	/* The boot CPU's walk, the hot-add, the add again. */
	CHECK_EQ(lines, 3);
	CHECK(tids[1] > 0);
	CHECK_EQ(tids[2], tids[1]);
	CHECK_EQ(vmproc_fast_tid(&v, 1), tids[1]);
	/* And the thread the guest now runs on stayed where it was put. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)v.pid,
		 tid);
	f = fopen(path, "r");
	cpus[0] = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cpus_allowed_list:", 18))
			sscanf(line + 18, "%31s", cpus);
	if (f)
		fclose(f);
	CHECK_STREQ(cpus, "0");
	thread_comm(v.pid, tid, comm, sizeof(comm));
	CHECK_STREQ(comm, "vcpu1");
	CHECK_EQ(vmproc_stop(&v), 0);
	snprintf(script, sizeof(script), "rm -rf '%s'", dir);
	CHECK_EQ(system(script), 0);
}

/* ---- CPUS_CHANGED ---- */

static void expect_online(struct rec *r, unsigned int cpu, bool online,
			  int count, const char *list)
{
	struct json_object *ev =
		rec_event(r, "CPUS_CHANGED", NULL, NULL,
			  rec_now_ms() + VMPROC_TIMEOUT_MS, NULL);
	struct json_object *d = jget(ev, "data");

	CHECK(ev != NULL);
	CHECK_EQ(jint(d, "cpu"), cpu);
	CHECK(json_object_get_boolean(jget(d, "online")) == online);
	CHECK_EQ(jint(d, "count"), count);
	CHECK_STREQ(jstr(d, "cpulist"), list);
	json_object_put(ev);
}

static void test_online_set_events(void)
{
	struct vmproc v;
	struct rec r;
	char err[256];

	CHECK_EQ(vmproc_start(&v, "boot=1,max=4", "", NULL), 0);
	CHECK_EQ(rec_open(&r, v.sock, "watcher", NULL, "\n", REC_ANY_EOL), 0);
	json_object_put(rec_exec(&r, "qmp_capabilities", NULL));

	/* QMP device_add and device_del. */
	CHECK_EQ(vmproc_qmp(&v, "device_add", NULL, err, sizeof(err),
			    "{\"driver\": \"host-x86_64-cpu\", \"id\": "
			    "\"c2\", \"socket-id\": 2}"),
		 0);
	expect_online(&r, 2, true, 2, "0,2");
	/* cpu-resize: one event per vCPU it changes. */
	CHECK_EQ(vmproc_qmp(&v, "cpu-resize", NULL, err, sizeof(err),
			    "{\"count\": 4}"),
		 0);
	expect_online(&r, 1, true, 3, "0-2");
	expect_online(&r, 3, true, 4, "0-3");
	CHECK_EQ(vmproc_qmp(&v, "device_del", NULL, err, sizeof(err),
			    "{\"id\": \"c2\"}"),
		 0);
	expect_online(&r, 2, false, 3, "0-1,3");
	/*
	 * A removal that fails below online rolls back up through it: the
	 * set shrinks and grows back, and both are told.
	 */
	CHECK_EQ(vmproc_qmp(&v, "cpuhp-inject-fault", NULL, err, sizeof(err),
			    "{\"cpu\": 3, \"side\": \"host\", \"state\": "
			    "\"guest:ap-starting\"}"),
		 0);
	CHECK(vmproc_qmp(&v, "cpu-resize", NULL, err, sizeof(err),
			 "{\"count\": 2}") != 0);
	expect_online(&r, 3, false, 2, "0-1");
	expect_online(&r, 3, true, 3, "0-1,3");
	rec_close(&r);
	CHECK_EQ(vmproc_stop(&v), 0);
}

int check_failures;

int main(void)
{
	static const struct check_case cases[] = {
		TEST(test_libvirt),
		TEST(test_kata),
		TEST(test_lxd),
		TEST(test_hook_pins_vcpu),
		TEST(test_online_set_events),
	};

	if (access("/dev/kvm", R_OK | W_OK)) {
		printf("1..0 # SKIP /dev/kvm is absent\n");
		return 0;
	}
	return check_run(cases, sizeof(cases) / sizeof(cases[0]));
}
