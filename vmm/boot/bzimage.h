/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Linux x86 boot protocol, 64-bit entry (Documentation/arch/x86/boot.rst
 * in Linux): the bzImage loader, the zero page (struct boot_params) the
 * entry receives in RSI, and the identity page tables and GDT it runs on.
 * The image is untrusted input: every header field is checked against the
 * file size and guest RAM before anything is copied.
 */
#ifndef HOTVM_BZIMAGE_H
#define HOTVM_BZIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hv_err;

#include "pvh.h"

/* Offsets in the image file (and in the zero page) of the fields used. */
#define BZ_SETUP_SECTS	      0x1f1 /* the setup header starts here */
#define BZ_SYSSIZE	      0x1f4
#define BZ_VID_MODE	      0x1fa
#define BZ_BOOT_FLAG	      0x1fe /* 0xaa55 */
#define BZ_JUMP		      0x200 /* byte 0x201: header length - 0x202 */
#define BZ_HEADER	      0x202 /* "HdrS" */
#define BZ_VERSION	      0x206
#define BZ_TYPE_OF_LOADER     0x210
#define BZ_LOADFLAGS	      0x211
#define BZ_CODE32_START	      0x214
#define BZ_RAMDISK_IMAGE      0x218
#define BZ_RAMDISK_SIZE	      0x21c
#define BZ_HEAP_END_PTR	      0x224
#define BZ_CMD_LINE_PTR	      0x228
#define BZ_INITRD_ADDR_MAX    0x22c
#define BZ_KERNEL_ALIGNMENT   0x230
#define BZ_RELOCATABLE_KERNEL 0x234
#define BZ_XLOADFLAGS	      0x236
#define BZ_CMDLINE_SIZE	      0x238
#define BZ_SETUP_DATA	      0x250
#define BZ_PREF_ADDRESS	      0x258
#define BZ_INIT_SIZE	      0x260
#define BZ_HEADER_MIN_END     0x264 /* the 2.12 fields hotvm reads end here */
#define BZ_HEADER_MAX_END     0x290 /* its hole in boot_params ends here */

/* Fields of the zero page outside the setup header. */
#define BZ_ZP_ACPI_RSDP_ADDR	0x070
#define BZ_ZP_EXT_RAMDISK_IMAGE 0x0c0
#define BZ_ZP_EXT_RAMDISK_SIZE	0x0c4
#define BZ_ZP_EXT_CMD_LINE_PTR	0x0c8
#define BZ_ZP_E820_ENTRIES	0x1e8
#define BZ_ZP_E820_TABLE	0x2d0
#define BZ_ZP_E820_ENTRY_SIZE	20
#define BZ_ZP_E820_MAX		128
#define BZ_ZP_SIZE		0x1000

#define BZ_BOOT_FLAG_MAGIC 0xaa55
#define BZ_HEADER_MAGIC	   0x53726448 /* "HdrS" */
#define BZ_MIN_VERSION	   0x020c     /* 2.12: xloadflags, the 64-bit entry */
#define BZ_SETUP_SECTS_MAX 63	      /* the real-mode code is at most 32K */
#define BZ_LOADED_HIGH	   0x01	      /* loadflags: a bzImage, not a zImage */
#define BZ_CAN_USE_HEAP	   0x80
#define BZ_XLF_KERNEL_64   0x01 /* xloadflags: 64-bit entry at load + 0x200 */
#define BZ_ENTRY64_OFF	   0x200
#define BZ_LOADER_UNKNOWN  0xff /* type_of_loader: no assigned id */
#define BZ_DEFAULT_LOAD	   0x100000ULL

/* Where hotvm puts the command line: right after the zero page. */
#define BZ_CMDLINE_OFF BZ_ZP_SIZE

struct bzimage_kernel {
	uint64_t load;	/* guest-physical start of the protected-mode kernel */
	uint64_t entry; /* load + 0x200 */
	uint64_t end;	/* load + the larger of its size and init_size */
	uint64_t initrd_max;  /* the highest byte an initrd may occupy */
	uint32_t cmdline_max; /* longest command line, without its NUL */
	uint16_t version;     /* boot protocol, e.g. 0x020f for 2.15 */
	bool relocatable;
	/* The setup header from 0x1f1, as the zero page receives it. */
	uint8_t hdr[BZ_HEADER_MAX_END - BZ_SETUP_SECTS];
	unsigned int hdr_len;
};

/* Does img start like a bzImage (0xaa55 at 0x1fe and "HdrS" at 0x202)? */
bool bzimage_detect(const void *img, size_t len);

/*
 * Validates the bzImage img[0..len) and copies its protected-mode kernel
 * into ram, which maps guest-physical [0, ram_end).  The kernel and the
 * memory it needs while starting (init_size) must lie in [load_min,
 * ram_end).  On error nothing is written to ram, -ENOEXEC is returned and
 * err (hv_err.h) says what is wrong.
 */
int bzimage_load(const void *img, size_t len, uint8_t *ram, uint64_t ram_end,
		 uint64_t load_min, struct bzimage_kernel *k,
		 struct hv_err *err);

struct bzimage_boot_params {
	const char *cmdline;		       /* may be NULL */
	uint64_t initrd_paddr, initrd_size;    /* size 0: no initrd */
	const struct pvh_memmap_entry *memmap; /* becomes the e820 table */
	unsigned int nr_memmap;
	uint64_t rsdp_paddr;
};

/*
 * Writes the zero page and, at BZ_CMDLINE_OFF after it, the command line
 * into the boot data area (area maps guest-physical base, size bytes).
 * Returns the zero page's guest-physical address (base), or -E2BIG (the
 * command line is longer than the kernel accepts) or -EINVAL (the initrd
 * ends above initrd_addr_max, or the memory map is too long), with err set.
 */
int64_t bzimage_write_zero_page(uint8_t *area, uint64_t base, uint64_t size,
				const struct bzimage_kernel *k,
				const struct bzimage_boot_params *p,
				struct hv_err *err);

/*
 * Writes the GDT (flat 64-bit code at VCPU_LONG64_CS, data at
 * VCPU_LONG64_DS) at ABI_BOOT64_GDT_PADDR and 4-level page tables that
 * identity-map the first 4 GiB with 2 MiB pages, rooted at
 * ABI_BOOT64_PML4_PADDR, into area, which maps ABI_BOOT64_PADDR and is
 * size bytes long.  Returns 0 or -EINVAL when size is too small.
 */
int bzimage_write_boot_tables(uint8_t *area, uint64_t size);

#endif
