// SPDX-License-Identifier: GPL-2.0-only
/* The generic half of a device descriptor (device.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "log.h"

int dev_setup(const struct dev_instance *d, const struct dev_env *env,
	      void **state)
{
	void *s = NULL;
	int ret;

	if (d->desc->state_size) {
		s = calloc(1, d->desc->state_size);
		if (!s)
			return -ENOMEM;
	}
	ret = d->desc->setup ? d->desc->setup(s, d, env) : 0;
	if (ret) {
		free(s);
		s = NULL;
	}
	*state = s;
	return ret;
}

void dev_teardown(const struct dev_instance *d, void *state)
{
	if (state && d->desc->teardown)
		d->desc->teardown(state);
	free(state);
}

void dev_reset(const struct dev_instance *d, void *state)
{
	if (state && d->desc->reset)
		d->desc->reset(state);
}

int dev_registered(const struct dev_instance *d, int ret)
{
	if (ret)
		pr_err("cannot put %s (%s) at 0x%llx on its bus: %s",
		       d->name ? d->name : d->desc->name, d->desc->name,
		       (unsigned long long)d->base, strerror(-ret));
	return ret;
}

size_t dev_by_address(const struct dev_instance *devs, size_t n,
		      enum dev_bus bus, const struct dev_instance **out,
		      size_t max)
{
	size_t k = 0;

	/* Insertion sort: a machine has a handful of devices. */
	for (size_t i = 0; i < n && k < max; i++) {
		size_t j = k;

		if (bus != DEV_BUS_NONE && devs[i].desc->bus != bus)
			continue;
		for (; j > 0 && out[j - 1]->base > devs[i].base; j--)
			out[j] = out[j - 1];
		out[j] = &devs[i];
		k++;
	}
	return k;
}
