// SPDX-License-Identifier: GPL-2.0-only
/*
 * What this machine's /dev/kvm cannot run: the one place the host tests
 * decide whether to skip for want of KVM (tests/expected-skips.txt names the
 * skips this allows, and the lab test that runs each instead).
 *
 * A missing or closed /dev/kvm runs nothing.  kvm_pvm (a KVM made of
 * paravirtualised guests, with no VMX or SVM under it) runs hotvm's guests
 * but cannot run real mode beyond a few emulated instructions: a triple
 * fault, or a reset through hotvm's reset-vector stub, ends the VM with
 * "KVM internal error 1 (instruction emulation failed)".
 */
#include <stdbool.h>
#include <unistd.h>

#include "check.h"

static bool module_loaded(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return !access(path, F_OK);
}

const char *check_kvm_missing(bool real_mode)
{
	if (access("/dev/kvm", R_OK | W_OK))
		return "no usable /dev/kvm";
	if (real_mode && module_loaded("kvm_pvm") &&
	    !module_loaded("kvm_intel") && !module_loaded("kvm_amd"))
		return "/dev/kvm is kvm_pvm, which cannot run real mode (a "
		       "triple fault, the reset vector)";
	return NULL;
}
