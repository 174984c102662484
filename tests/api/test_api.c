// SPDX-License-Identifier: GPL-2.0-only
/*
 * vmm/api/qmp_cmds*.c on the real hotplug controller, host table and cpuhp,
 * with fake vCPUs and a scripted guest (fake_vm.h), through the real QMP
 * server and the client library: every command's reply shape, every
 * argument error, QEMU's request shapes (as libvirt sends them), events
 * with QEMU's fields, cpu-resize's undo.  Failures are injected as a user
 * injects them (cpuhp-inject-fault), or scripted into the guest.  The
 * cases sit by subject in test_api_qemu.c, test_api_guest.c,
 * test_api_cpuhp.c and test_api_clients.c, on api_fixture.c; this is their
 * list, in the order they run.
 */
#include "api_fixture.h"
#include "check.h"

CHECK_MAIN(TEST(test_commands_listed), TEST(test_hotpluggable_shape),
	   TEST(test_device_add_libvirt), TEST(test_device_add_errors),
	   TEST(test_device_del), TEST(test_guest_eject), TEST(test_reset),
	   TEST(test_agreement), TEST(test_late_eject),
	   TEST(test_burst_reasons), TEST(test_status_quit),
	   TEST(test_query_cpuhp), TEST(test_set_target),
	   TEST(test_inject_and_hotplug), TEST(test_guest_not_yet_reporting),
	   TEST(test_events), TEST(test_resize), TEST(test_resize_during_reset),
	   TEST(test_reset_cancels_resize), TEST(test_two_clients),
	   TEST(test_burst), TEST(test_burst_one_write),
	   TEST(test_forged_reports))
