// SPDX-License-Identifier: GPL-2.0-only
/* Copy what the guest needs out of the PVH start_info. */
#include "dt.h"
#include "pvh.h"

struct boot_info boot_info;

int pvh_init(u64 paddr)
{
	const struct hvm_start_info *si = (void *)(uintptr_t)paddr;

	if (!paddr || si->magic != HVM_START_MAGIC)
		return -1;

	if (si->cmdline_paddr) {
		const char *s = (const char *)(uintptr_t)si->cmdline_paddr;
		size_t n = 0;

		while (n < PVH_CMDLINE_MAX - 1 && s[n]) {
			boot_info.cmdline[n] = s[n];
			n++;
		}
		boot_info.cmdline[n] = '\0';
	}
	boot_info.rsdp_paddr = si->rsdp_paddr;
	boot_info.nr_modules = si->nr_modules;

	/*
	 * The FDT follows the initrd when there is one (Linux takes module 0
	 * as its ramdisk): recognise it by its magic, not by position.
	 */
	if (si->nr_modules && si->modlist_paddr) {
		const struct hvm_modlist_entry *mod =
			(void *)(uintptr_t)si->modlist_paddr;

		for (u32 i = 0; i < si->nr_modules && i < PVH_MAX_MODS; i++) {
			if (!mod[i].paddr || mod[i].size < 4 ||
			    dt_check((const void *)(uintptr_t)mod[i].paddr,
				     mod[i].size))
				continue;
			boot_info.fdt_paddr = mod[i].paddr;
			boot_info.fdt_size = mod[i].size;
			break;
		}
	}

	if (si->version >= 1 && si->memmap_paddr) {
		const struct hvm_memmap_entry *e =
			(void *)(uintptr_t)si->memmap_paddr;

		for (u32 i = 0; i < si->memmap_entries; i++)
			if (e[i].type == 1)
				boot_info.ram_bytes += e[i].size;
	}
	return 0;
}
