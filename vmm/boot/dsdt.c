// SPDX-License-Identifier: GPL-2.0-only
/*
 * DSDT body: \_SB with each device's own AML, in the order of the
 * machine's device table.  See vmm/boot/dsdt.h for the namespace.
 */
#include <errno.h>
#include <string.h>

#include "cpuhp_regs.h"
#include "dsdt.h"

_Static_assert(DSDT_MAX_CPUS == HPREGS_AML_MAX_CPUS, "one CPU limit");

int dsdt_build_aml(struct aml_buf *b, const struct dsdt_config *cfg)
{
	const struct dev_table_env env = {
		.ncpus = cfg->ncpus,
		.apic_ids = cfg->apic_ids,
		.devs = cfg->devs,
		.nr_devs = cfg->nr_devs,
	};
	int ret = 0;

	if (!cfg->ncpus || cfg->ncpus > DSDT_MAX_CPUS)
		return -EINVAL;
	AML_SCOPE(b, "\\_SB") {
		for (size_t i = 0; i < cfg->nr_devs && !ret; i++)
			if (cfg->devs[i].desc->aml)
				ret = cfg->devs[i].desc->aml(b, &cfg->devs[i],
							     &env);
	}
	return ret ? ret : aml_finish(b);
}

long dsdt_build(void *buf, size_t size, const struct dsdt_config *cfg)
{
	struct aml_buf b = { .max = size };
	int err = dsdt_build_aml(&b, cfg);
	long len = (long)b.len;

	if (!err)
		memcpy(buf, b.data, b.len);
	aml_free(&b);
	return err ? err : len;
}
