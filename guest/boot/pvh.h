/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The PVH boot information (xen/include/public/arch-x86/hvm/start_info.h),
 * and the guest's private copy of what it needs from it.  The loader's
 * structures sit in low memory the guest may reuse (the trampoline page),
 * so pvh_init() copies everything before anything else runs.
 */
#ifndef GUEST_PVH_H
#define GUEST_PVH_H

#include "kernel.h"

#define HVM_START_MAGIC 0x336ec578

struct hvm_start_info {
	u32 magic;
	u32 version;
	u32 flags;
	u32 nr_modules;
	u64 modlist_paddr;
	u64 cmdline_paddr;
	u64 rsdp_paddr;
	u64 memmap_paddr; /* version >= 1 */
	u32 memmap_entries;
	u32 reserved;
};

struct hvm_modlist_entry {
	u64 paddr;
	u64 size;
	u64 cmdline_paddr;
	u64 reserved;
};

struct hvm_memmap_entry {
	u64 addr;
	u64 size;
	u32 type;
	u32 reserved;
};

#define PVH_CMDLINE_MAX 4096
#define PVH_MAX_MODS	16 /* modules scanned for the FDT */

struct boot_info {
	char cmdline[PVH_CMDLINE_MAX];
	u64 rsdp_paddr;
	u64 fdt_paddr; /* the first module with the FDT magic, else 0 */
	u64 fdt_size;
	u64 ram_bytes; /* sum of the E820 RAM entries */
	u32 nr_modules;
};

extern struct boot_info boot_info;

/* Returns 0, or -1 when @paddr does not point at a valid start_info. */
int pvh_init(u64 paddr);

#endif
