// SPDX-License-Identifier: GPL-2.0-only
/*
 * The words for hotplug_wait, hp_stage and hp_op_kind, each list once: what the two
 * front ends parse and print (QMP's "wait" and "stage", `hotvm run
 * --hotplug-wait`).  The controller itself works with the enums only.
 */
#include <errno.h>
#include <string.h>

#include "hotplug.h"

const char *const hotplug_wait_words[] = { "acknowledged", "started", NULL };

int hotplug_wait_parse(const char *name)
{
	for (int i = 0; hotplug_wait_words[i]; i++)
		if (!strcmp(name, hotplug_wait_words[i]))
			return HOTPLUG_WAIT_ACKNOWLEDGED + i;
	return -EINVAL;
}

static const char *const stage_names[] = {
	[HP_STAGE_ABSENT] = "absent",
	[HP_STAGE_PRESENTED] = "presented",
	[HP_STAGE_ACKNOWLEDGED] = "acknowledged",
	[HP_STAGE_STARTED] = "started",
	[HP_STAGE_EJECTING] = "ejecting",
};

const char *hotplug_stage_name(enum hp_stage st)
{
	return st <= HP_STAGE_EJECTING ? stage_names[st] : "?";
}

static const char *const op_kind_names[] = {
	[HP_OP_ADD] = "hot-add",       [HP_OP_REMOVE] = "hot-remove",
	[HP_OP_TARGET] = "set-target", [HP_OP_RECOVER] = "recover",
	[HP_OP_PRESTAGE] = "prestage",
};

const char *hotplug_op_kind_name(enum hp_op_kind k)
{
	return k < HP_OP_KINDS ? op_kind_names[k] : "?";
}
