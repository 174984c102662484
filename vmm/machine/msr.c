// SPDX-License-Identifier: GPL-2.0-only
/*
 * Boot MSRs, as firmware would leave them.
 *
 * MTRRs: at reset MTRRdefType is 0, "MTRRs disabled, everything UC".  Linux
 * then skips PAT initialisation too (PAT setup shares the MTRR rendezvous),
 * leaving write-combining unavailable.  Enabled with default type
 * write-back and no variable ranges, all RAM is WB; MMIO stays uncached
 * because Linux maps it UC- through PAT, which wins over an MTRR WB.  Fixed
 * ranges stay off (FE clear): hotvm has no VGA window below 1 MiB to make
 * uncached.
 *
 * IA32_MISC_ENABLE (Intel): firmware sets fast-strings; without it Linux
 * reports "Disabled fast string operations" and drops ERMS.  KVM's reset
 * value also says BTS and PEBS are unavailable, which stays true.
 */
#include <errno.h>
#include <sys/ioctl.h>

#include <linux/kvm.h>

#include "msr.h"

unsigned int msr_boot_list(enum cpuid_vendor vendor,
			   struct kvm_msr_entry out[MSR_BOOT_MAX])
{
	unsigned int n = 0;

	out[n++] = (struct kvm_msr_entry){
		.index = MSR_MTRR_DEF_TYPE,
		.data = MSR_MTRR_DEF_TYPE_E | MSR_MTRR_DEF_TYPE_WB,
	};
	if (vendor == CPUID_VENDOR_INTEL)
		out[n++] = (struct kvm_msr_entry){
			.index = MSR_IA32_MISC_ENABLE,
			.data = MSR_MISC_ENABLE_FAST_STRING |
				MSR_MISC_ENABLE_BTS_UNAVAIL |
				MSR_MISC_ENABLE_PEBS_UNAVAIL,
		};
	return n;
}

int msr_set_boot(int vcpu_fd, enum cpuid_vendor vendor, uint32_t *failed)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[MSR_BOOT_MAX];
	} m = { 0 };
	int ret;

	m.hdr.nmsrs = msr_boot_list(vendor, m.e);
	ret = ioctl(vcpu_fd, KVM_SET_MSRS, &m);
	if (ret < 0)
		return -errno;
	/* KVM stops at the first MSR it refuses and returns how many it set. */
	if ((unsigned int)ret < m.hdr.nmsrs) {
		if (failed)
			*failed = m.e[ret].index;
		return -EINVAL;
	}
	return 0;
}
