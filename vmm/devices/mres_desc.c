// SPDX-License-Identifier: GPL-2.0-only
/* The motherboard resources device (mres.h): a description only. */
#include "aml.h"
#include "mres.h"

static int mres_aml(struct aml_buf *b, const struct dev_instance *d,
		    const struct dev_table_env *env)
{
	const struct dev_instance *win[MRES_MAX_WINDOWS];
	size_t n = dev_by_address(env->devs, env->nr_devs, DEV_BUS_MMIO, win,
				  MRES_MAX_WINDOWS);
	struct aml_term crs[MRES_MAX_WINDOWS];
	unsigned int k = 0;

	AML_DEVICE(b, d->name) {
		aml_emit(b, aml_name_decl("_HID", aml_eisaid("PNP0C02")));
		aml_emit(b, aml_name_decl("_UID", aml_int(d->uid)));
		/* A device whose _CRS has its window claims it itself. */
		for (size_t i = 0; i < n; i++)
			if (!win[i]->desc->own_window)
				crs[k++] = aml_memory32_fixed(
					AML_MEM_READ_WRITE,
					(uint32_t)win[i]->base,
					(uint32_t)win[i]->desc->size);
		aml_emit(b, aml_name_decl("_CRS", aml_resources_n(crs, k)));
	}
	return 0;
}

const struct dev_desc mres_desc = {
	.name = "motherboard-resources",
	.bus = DEV_BUS_NONE,
	.aml = mres_aml,
};
