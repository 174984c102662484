// SPDX-License-Identifier: GPL-2.0-only
/*
 * The names the control API uses for hotplug_wait and hp_stage, apart from
 * the controller so that the API's tests (which fake the controller) share
 * them.
 */
#include <errno.h>
#include <string.h>

#include "hotplug.h"

static const char *const wait_names[] = {
	[HOTPLUG_WAIT_ACKNOWLEDGED] = "acknowledged",
	[HOTPLUG_WAIT_STARTED] = "started",
};

const char *hotplug_wait_name(enum hotplug_wait w)
{
	return w > HOTPLUG_WAIT_DEFAULT && w <= HOTPLUG_WAIT_STARTED
		       ? wait_names[w]
		       : NULL;
}

int hotplug_wait_parse(const char *name)
{
	for (int w = HOTPLUG_WAIT_ACKNOWLEDGED; w <= HOTPLUG_WAIT_STARTED; w++)
		if (!strcmp(name, wait_names[w]))
			return w;
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
