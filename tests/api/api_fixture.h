/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The machine and client of the API tests (api_fixture.c), and their
 * cases by subject, for test_api.c's list.
 */
#ifndef HOTVM_TESTS_API_FIXTURE_H
#define HOTVM_TESTS_API_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "fake_vm.h"
#include "hotplug.h"
#include "hotplug_vmm.h"
#include "qmp.h"
#include "qmp_client.h"
#include "qmp_cmds.h"
#include "sim_guest.h"

#define T_MS 5000
/* How long the controller waits for a guest told not to answer. */
#define T_GUEST_MS 300

struct api_test {
	char dir[48], path[96];
	struct qmp_server *s;
	struct qmp_cmds *qc;
	struct fake_vm *fv;
	struct hotplug *hp;
	struct qmp_client *c;
};

extern struct api_test t;

void setup(unsigned int max, unsigned int boot);
struct json_object *get(struct json_object *o, const char *k);
/*
 * Every test ends with the two sides in agreement, as the controller's
 * own check sees them (test_agreement makes them disagree on purpose and
 * recovers).
 */
void check_agreement(void);
void teardown(void);
/* Runs cmd with printf-style JSON arguments; the reply, or NULL. */
struct json_object *ok(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Expects an error of class whose desc contains want. */
void fails(const char *class, const char *want, const char *cmd,
	   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
const char *gs(struct json_object *o, const char *k);
long long gi(struct json_object *o, const char *k);
bool gb(struct json_object *o, const char *k);
bool has(struct json_object *o, const char *k);
/* Exactly these members, no others. */
void keys(struct json_object *o, const char *const *want);
/* The next event called name, skipping others; NULL if none comes. */
struct json_object *event(const char *name);
/* Whether an event @name comes (within event()'s wait); none is kept. */
bool saw_event(const char *name);
void drain_events(void);
struct json_object *cpuhp_cpu(unsigned int cpu);
bool cpu_plugged(unsigned int cpu);
/* The next callback of a host state fails for cpu, as a user injects it. */
void inject_host(unsigned int cpu, const char *state);
/*
 * A late guest's word: the host asks it to bring CPU @cpu up, it does not
 * answer in time (the hot-add fails and is taken back), then it reports
 * the CPU online.  Believed, since the host asked and the walk never
 * ended, but the host does not hold the CPU: the sides disagree.
 */
void late_claim(unsigned int cpu);
/* Sends cmd with JSON args on t.c without waiting; its sequence number. */
long send_req(const char *cmd, const char *args);
/* How many vCPUs query-cpus-fast lists. */
size_t cpus_fast(void);

/* test_api_qemu.c */
void test_commands_listed(void);
void test_hotpluggable_shape(void);
void test_device_add_libvirt(void);
void test_device_add_errors(void);
void test_device_del(void);
void test_status_quit(void);
void test_events(void);

/* test_api_guest.c */
void test_guest_eject(void);
void test_late_eject(void);
void test_reset(void);
void test_agreement(void);
void test_guest_not_yet_reporting(void);
void test_forged_reports(void);

/* test_api_cpuhp.c */
void test_query_cpuhp(void);
void test_set_target(void);
void test_inject_and_hotplug(void);
void test_resize(void);
void test_resize_during_reset(void);
void test_reset_cancels_resize(void);

/* test_api_clients.c */
void test_two_clients(void);
void test_burst(void);
void test_burst_one_write(void);
void test_burst_reasons(void);

#endif
