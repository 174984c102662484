/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PVH boot: the ELF loader (entry from the XEN_ELFNOTE_PHYS32_ENTRY note)
 * and the hvm_start_info the entry receives in EBX.  The image is untrusted
 * input: every field is checked against the file size and guest RAM before
 * anything is copied.
 */
#ifndef HOTVM_PVH_H
#define HOTVM_PVH_H

#include <stddef.h>
#include <stdint.h>

struct hv_err;

#define PVH_XEN_ELFNOTE_PHYS32_ENTRY 18
#define PVH_START_MAGIC		     0x336ec578U

/* Layout from Xen's public/arch-x86/hvm/start_info.h (version 1). */
struct pvh_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;
	uint32_t memmap_entries;
	uint32_t reserved;
};

struct pvh_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
};

/* E820 types. */
#define PVH_MEMMAP_RAM	    1
#define PVH_MEMMAP_RESERVED 2
#define PVH_MEMMAP_ACPI	    3

struct pvh_memmap_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint32_t reserved;
};

struct pvh_kernel {
	uint64_t entry;
	uint64_t lo; /* lowest loaded guest-physical address */
	uint64_t hi; /* end of the highest loaded segment */
};

/*
 * Validates the ELF image img[0..len) and loads its PT_LOAD segments into
 * ram, which maps guest-physical [0, ram_end).  Segments must lie in
 * [load_min, ram_end).  On error nothing is written to ram, -ENOEXEC
 * (or -EINVAL, -E2BIG) is returned and err (hv_err.h) says what is wrong.
 */
int pvh_load_elf(const void *img, size_t len, uint8_t *ram, uint64_t ram_end,
		 uint64_t load_min, struct pvh_kernel *k, struct hv_err *err);

#define PVH_MAX_MODULES 2
#define PVH_MAX_MEMMAP	8

struct pvh_boot_module {
	uint64_t paddr;
	uint64_t size;
	const char *cmdline; /* may be NULL; at most PVH_MODSTR_MAX - 1 bytes */
};

struct pvh_boot_params {
	const char *cmdline;
	const struct pvh_boot_module *mods;
	unsigned int nr_mods;
	const struct pvh_memmap_entry *memmap;
	unsigned int nr_memmap;
	uint64_t rsdp_paddr;
};

/*
 * Writes start_info, modlist, memmap and cmdline into the boot data area
 * (area maps guest-physical base, size bytes).  Returns the start_info
 * guest-physical address (base) or -E2BIG / -EINVAL.
 */
int64_t pvh_write_start_info(uint8_t *area, uint64_t base, uint64_t size,
			     const struct pvh_boot_params *p);

/* Offsets inside the boot data area. */
#define PVH_BOOT_MODLIST_OFF 0x100
#define PVH_BOOT_MEMMAP_OFF  0x200
#define PVH_BOOT_MODSTR_OFF  0x400 /* module cmdline strings */
#define PVH_MODSTR_MAX	     0x100
#define PVH_BOOT_CMDLINE_OFF 0x800

#endif
