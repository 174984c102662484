/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MSRs a vCPU starts with.  KVM resets most MSRs to their architectural
 * power-on values, which on real machines the firmware then changes before
 * any OS runs; hotvm has no firmware, so it makes those changes itself.
 */
#ifndef HOTVM_MSR_H
#define HOTVM_MSR_H

#include <stdint.h>

#include "cpuid.h"

struct kvm_msr_entry;

#define MSR_IA32_MISC_ENABLE 0x1a0
#define MSR_MTRR_DEF_TYPE    0x2ff

#define MSR_MISC_ENABLE_FAST_STRING  (1ULL << 0)
#define MSR_MISC_ENABLE_BTS_UNAVAIL  (1ULL << 11)
#define MSR_MISC_ENABLE_PEBS_UNAVAIL (1ULL << 12)
#define MSR_MTRR_DEF_TYPE_WB	     0x06ULL
#define MSR_MTRR_DEF_TYPE_FE	     (1ULL << 10)
#define MSR_MTRR_DEF_TYPE_E	     (1ULL << 11)

/* Enough room for msr_boot_list()'s output. */
#define MSR_BOOT_MAX 4

/* Fills out with the MSRs a vCPU starts with; returns how many. */
unsigned int msr_boot_list(enum cpuid_vendor vendor,
			   struct kvm_msr_entry out[MSR_BOOT_MAX]);

/*
 * Writes that list to a vCPU (after its CPUID: KVM checks some MSRs against
 * it).  On failure *failed names the MSR KVM refused.
 */
int msr_set_boot(int vcpu_fd, enum cpuid_vendor vendor, uint32_t *failed);

#endif
