// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stand-in for vmm/qmp_cmds.c (the QMP command set) until it lands:
 * vmm/meson.build builds this file only while qmp_cmds.c does not exist.
 * The server still speaks QMP (greeting, qmp_capabilities), it just knows
 * no commands yet.
 */
#include "vmm_log.h"

struct hotplug;
struct qmp_server;
struct vm;

int qmp_cmds_register(struct qmp_server *s, struct hotplug *hp, struct vm *vm);

int qmp_cmds_register(struct qmp_server *s, struct hotplug *hp, struct vm *vm)
{
	(void)s;
	(void)hp;
	(void)vm;
	pr_err("this hotvm was built without the QMP commands "
	       "(vmm/qmp_cmds.c): the API socket answers nothing useful");
	return 0;
}

void qmp_cmds_unregister(struct hotplug *hp);

void qmp_cmds_unregister(struct hotplug *hp)
{
	(void)hp;
}
