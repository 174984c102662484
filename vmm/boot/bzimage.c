// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Linux bzImage loader, 64-bit boot protocol.  The image is hostile
 * until proven otherwise: a first pass reads every header field hotvm
 * relies on and checks it, with overflow-safe arithmetic, against the file
 * size and guest RAM; only then does a second pass copy anything.  Fields
 * are read with memcpy at their documented offsets (hotvm runs on x86-64
 * only, so the host is little-endian like the header).
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hv_err.h"
#include "hotvm/abi.h"
#include "bzimage.h"
#include "vcpu.h"

#define SECTOR 512ULL

/* Page table entry bits. */
#define PTE_PRESENT (1ULL << 0)
#define PTE_WRITE   (1ULL << 1)
#define PTE_LARGE   (1ULL << 7) /* 2 MiB page in a PD entry */

/* Inside ABI_BOOT64: GDT page, PML4, PDPT, then one PD per GiB. */
#define TABLES_PDPT_PADDR (ABI_BOOT64_PML4_PADDR + 0x1000)
#define TABLES_PD_PADDR	  (TABLES_PDPT_PADDR + 0x1000)
#define TABLES_NR_PD	  4 /* 4 GiB */
#define TABLES_END	  (TABLES_PD_PADDR + TABLES_NR_PD * 0x1000)

static_assert(TABLES_END - ABI_BOOT64_PADDR <= ABI_BOOT64_SIZE,
	      "the boot page tables overflow their area");
static_assert(ABI_BOOT64_PML4_PADDR - ABI_BOOT64_GDT_PADDR >=
		      VCPU_LONG64_GDT_LIMIT + 1,
	      "the GDT overlaps the PML4");

/* Flat 4 GiB descriptors: 64-bit code (L=1, D=0) and read/write data. */
#define GDT_CODE64 0x00af9b000000ffffULL
#define GDT_DATA   0x00cf93000000ffffULL

/* What the checking pass found, for the copying pass. */
struct bz_image {
	const uint8_t *img;
	size_t len;
	unsigned int hdr_end;
	uint64_t pm_off, pm_len; /* the protected-mode kernel in the file */
};

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

bool bzimage_detect(const void *img, size_t len)
{
	const uint8_t *p = img;

	return len >= BZ_HEADER + 4 &&
	       get16(p + BZ_BOOT_FLAG) == BZ_BOOT_FLAG_MAGIC &&
	       get32(p + BZ_HEADER) == BZ_HEADER_MAGIC;
}

/* The setup header: its extent, version and the flags the entry needs. */
static int check_header(struct bz_image *b, struct bzimage_kernel *k,
			struct hv_err *err)
{
	const uint8_t *p = b->img;
	uint8_t loadflags;
	uint16_t xlf;

	if (!bzimage_detect(b->img, b->len))
		return hv_err_set(
			err, -ENOEXEC,
			"not a bzImage (no 0xaa55 at 0x1fe and \"HdrS\" "
			"at 0x202)");
	b->hdr_end = BZ_HEADER + p[BZ_JUMP + 1];
	if (b->hdr_end > b->len)
		return hv_err_set(
			err, -ENOEXEC,
			"truncated: %zu bytes, shorter than its setup "
			"header (0x%x bytes)",
			b->len, b->hdr_end);
	k->version = get16(p + BZ_VERSION);
	if (k->version < BZ_MIN_VERSION)
		return hv_err_set(
			err, -ENOEXEC,
			"boot protocol %u.%02u is older than 2.12 and has "
			"no 64-bit entry",
			k->version >> 8, k->version & 0xff);
	if (b->hdr_end < BZ_HEADER_MIN_END)
		return hv_err_set(
			err, -ENOEXEC,
			"its setup header ends at 0x%x, too short for "
			"boot protocol %u.%02u",
			b->hdr_end, k->version >> 8, k->version & 0xff);
	if (b->hdr_end > BZ_HEADER_MAX_END)
		return hv_err_set(
			err, -ENOEXEC,
			"its setup header runs to 0x%x, past its room in "
			"the zero page (0x%x)",
			b->hdr_end, BZ_HEADER_MAX_END);
	loadflags = p[BZ_LOADFLAGS];
	if (!(loadflags & BZ_LOADED_HIGH))
		return hv_err_set(
			err, -ENOEXEC,
			"a zImage (LOADED_HIGH clear in loadflags), not a "
			"bzImage");
	xlf = get16(p + BZ_XLOADFLAGS);
	if (!(xlf & BZ_XLF_KERNEL_64))
		return hv_err_set(
			err, -ENOEXEC,
			"no 64-bit entry point (XLF_KERNEL_64 clear in "
			"xloadflags 0x%x): a 32-bit kernel",
			xlf);
	return 0;
}

/* Where the protected-mode kernel is in the file, and that it is all there. */
static int check_extent(struct bz_image *b, struct hv_err *err)
{
	const uint8_t *p = b->img;
	unsigned int sects = p[BZ_SETUP_SECTS];
	uint64_t sys = (uint64_t)get32(p + BZ_SYSSIZE) * 16;

	if (!sects)
		sects = 4; /* as old kernels meant it */
	if (sects > BZ_SETUP_SECTS_MAX)
		return hv_err_set(
			err, -ENOEXEC,
			"setup_sects %u is too big: the real-mode part is "
			"at most %u sectors (32K)",
			sects, BZ_SETUP_SECTS_MAX + 1);
	b->pm_off = (sects + 1) * SECTOR;
	if (b->pm_off >= b->len)
		return hv_err_set(
			err, -ENOEXEC,
			"truncated: %zu bytes, but its protected-mode "
			"kernel starts at 0x%llx",
			b->len, (unsigned long long)b->pm_off);
	b->pm_len = b->len - b->pm_off;
	if (sys > b->pm_len)
		return hv_err_set(
			err, -ENOEXEC,
			"truncated: syssize says the protected-mode "
			"kernel has 0x%llx bytes, the file holds 0x%llx",
			(unsigned long long)sys, (unsigned long long)b->pm_len);
	if (b->pm_len <= BZ_ENTRY64_OFF)
		return hv_err_set(
			err, -ENOEXEC,
			"truncated: its protected-mode kernel (0x%llx "
			"bytes) ends before the 64-bit entry at +0x%x",
			(unsigned long long)b->pm_len, BZ_ENTRY64_OFF);
	return 0;
}

/* [addr, addr + size) inside [lo, hi), without overflow. */
static bool fits(uint64_t addr, uint64_t size, uint64_t lo, uint64_t hi)
{
	return addr >= lo && addr <= hi && size <= hi - addr;
}

/* The kernel at k->load needs @need bytes, past the end of RAM. */
static int no_room(const struct bzimage_kernel *k, uint64_t need,
		   uint64_t ram_end, struct hv_err *err)
{
	unsigned long long mib = (need + 0xfffff) >> 20;
	unsigned long long at = k->load, end_mib = ram_end >> 20;

	if (k->relocatable)
		return hv_err_set(err, -ENOEXEC,
				  "the kernel needs %llu MiB from 0x%llx (its "
				  "size or init_size), more than guest RAM, "
				  "which ends at %llu MiB",
				  mib, at, end_mib);
	return hv_err_set(err, -ENOEXEC,
			  "not relocatable and needs %llu MiB at "
			  "pref_address 0x%llx (its size or "
			  "init_size), beyond guest RAM, which ends "
			  "at %llu MiB",
			  mib, at, end_mib);
}

/*
 * A relocatable kernel goes to pref_address when it can, else to the
 * lowest aligned address; one that is not relocatable moves itself to
 * pref_address whatever hotvm does, so it is loaded there or refused.
 * Either way the kernel's run-time footprint (init_size from its start) must
 * fit in RAM.
 */
static int place(const struct bz_image *b, uint64_t ram_end, uint64_t load_min,
		 struct bzimage_kernel *k, struct hv_err *err)
{
	const uint8_t *p = b->img;
	uint64_t pref = get64(p + BZ_PREF_ADDRESS);
	uint64_t init = get32(p + BZ_INIT_SIZE);
	uint64_t align = get32(p + BZ_KERNEL_ALIGNMENT);
	uint64_t need = init > b->pm_len ? init : b->pm_len;

	k->relocatable = p[BZ_RELOCATABLE_KERNEL] != 0;
	if (k->relocatable) {
		if (!align || (align & (align - 1)))
			return hv_err_set(
				err, -ENOEXEC,
				"kernel_alignment 0x%llx is not a power "
				"of two",
				(unsigned long long)align);
		if (pref && !(pref & (align - 1)) &&
		    fits(pref, need, load_min, ram_end))
			k->load = pref;
		else
			k->load = (load_min + align - 1) & ~(align - 1);
	} else {
		k->load = pref ? pref : BZ_DEFAULT_LOAD;
		if (k->load < load_min)
			return hv_err_set(
				err, -ENOEXEC,
				"not relocatable and must run at "
				"pref_address 0x%llx, below hotvm's kernel "
				"area at 0x%llx",
				(unsigned long long)k->load,
				(unsigned long long)load_min);
	}
	if (!fits(k->load, need, load_min, ram_end))
		return no_room(k, need, ram_end, err);
	k->entry = k->load + BZ_ENTRY64_OFF;
	k->end = k->load + need;
	return 0;
}

int bzimage_load(const void *img, size_t len, uint8_t *ram, uint64_t ram_end,
		 uint64_t load_min, struct bzimage_kernel *k,
		 struct hv_err *err)
{
	struct bz_image b = { .img = img, .len = len };
	int ret;

	*k = (struct bzimage_kernel){ 0 };
	ret = check_header(&b, k, err);
	if (!ret)
		ret = check_extent(&b, err);
	if (!ret)
		ret = place(&b, ram_end, load_min, k, err);
	if (ret)
		return ret;
	k->initrd_max = get32(b.img + BZ_INITRD_ADDR_MAX);
	k->cmdline_max = get32(b.img + BZ_CMDLINE_SIZE);
	k->hdr_len = b.hdr_end - BZ_SETUP_SECTS;
	memcpy(k->hdr, b.img + BZ_SETUP_SECTS, k->hdr_len);

	/* Fresh guest RAM is zero: the rest of init_size needs no clearing. */
	memcpy(ram + k->load, b.img + b.pm_off, b.pm_len);
	return 0;
}

static void put_e820(uint8_t *zp, const struct pvh_memmap_entry *m,
		     unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		uint8_t *e = zp + BZ_ZP_E820_TABLE + i * BZ_ZP_E820_ENTRY_SIZE;

		put64(e, m[i].addr);
		put64(e + 8, m[i].size);
		put32(e + 16, m[i].type);
	}
	zp[BZ_ZP_E820_ENTRIES] = (uint8_t)nr;
}

/*
 * Everything the zero page will say, checked before a byte of it is
 * written: room for it and the command line, the command line within the
 * kernel's cmdline_size, the initrd below its initrd_addr_max.
 */
static int check_params(uint64_t size, const struct bzimage_kernel *k,
			const struct bzimage_boot_params *p, size_t clen,
			struct hv_err *err)
{
	if (size <= BZ_CMDLINE_OFF || p->nr_memmap > BZ_ZP_E820_MAX ||
	    k->hdr_len > sizeof(k->hdr)) {
		return hv_err_set(err, -EINVAL, "no room for the zero page");
	}
	if (clen > k->cmdline_max) {
		return hv_err_set(
			err, -E2BIG,
			"--cmdline is %zu bytes, more than the %u this kernel "
			"takes (cmdline_size)",
			clen, k->cmdline_max);
	}
	if (clen >= size - BZ_CMDLINE_OFF) {
		return hv_err_set(
			err, -E2BIG,
			"--cmdline is %zu bytes, more than the %llu hotvm has "
			"room for",
			clen, (unsigned long long)(size - BZ_CMDLINE_OFF - 1));
	}
	if (p->initrd_size &&
	    (p->initrd_paddr > k->initrd_max ||
	     p->initrd_size - 1 > k->initrd_max - p->initrd_paddr)) {
		return hv_err_set(
			err, -EINVAL,
			"the initrd at 0x%llx (%llu bytes) ends above this "
			"kernel's initrd_addr_max 0x%llx",
			(unsigned long long)p->initrd_paddr,
			(unsigned long long)p->initrd_size,
			(unsigned long long)k->initrd_max);
	}
	return 0;
}

int64_t bzimage_write_zero_page(uint8_t *area, uint64_t base, uint64_t size,
				const struct bzimage_kernel *k,
				const struct bzimage_boot_params *p,
				struct hv_err *err)
{
	const char *cmdline = p->cmdline ? p->cmdline : "";
	size_t clen = strlen(cmdline);
	uint64_t cmd = base + BZ_CMDLINE_OFF;
	uint8_t *zp = area;
	int ret = check_params(size, k, p, clen, err);

	if (ret)
		return ret;
	memset(zp, 0, BZ_ZP_SIZE);
	memcpy(zp + BZ_SETUP_SECTS, k->hdr, k->hdr_len);
	zp[BZ_TYPE_OF_LOADER] = BZ_LOADER_UNKNOWN;
	/*
	 * Only the real-mode setup code, which this entry skips, uses the
	 * heap; say it ends where the command line starts, as in the
	 * protocol's sample layout.
	 */
	zp[BZ_LOADFLAGS] |= BZ_CAN_USE_HEAP;
	put16(zp + BZ_HEAP_END_PTR, BZ_CMDLINE_OFF - 0x200);
	put16(zp + BZ_VID_MODE, 0xffff); /* "normal": no video mode change */
	put32(zp + BZ_CODE32_START, (uint32_t)k->load);
	put32(zp + BZ_CMD_LINE_PTR, (uint32_t)cmd);
	put32(zp + BZ_ZP_EXT_CMD_LINE_PTR, (uint32_t)(cmd >> 32));
	put32(zp + BZ_RAMDISK_IMAGE, (uint32_t)p->initrd_paddr);
	put32(zp + BZ_ZP_EXT_RAMDISK_IMAGE, (uint32_t)(p->initrd_paddr >> 32));
	put32(zp + BZ_RAMDISK_SIZE, (uint32_t)p->initrd_size);
	put32(zp + BZ_ZP_EXT_RAMDISK_SIZE, (uint32_t)(p->initrd_size >> 32));
	/* hotvm passes no setup_data; the image's value means nothing. */
	put64(zp + BZ_SETUP_DATA, 0);
	/* A zero-page field since Linux 5.0 (protocol 2.14); padding before. */
	if (k->version >= 0x020e)
		put64(zp + BZ_ZP_ACPI_RSDP_ADDR, p->rsdp_paddr);
	put_e820(zp, p->memmap, p->nr_memmap);
	memcpy(area + BZ_CMDLINE_OFF, cmdline, clen + 1);
	return (int64_t)base;
}

int bzimage_write_boot_tables(uint8_t *area, uint64_t size)
{
	uint64_t gdt[VCPU_LONG64_GDT_LIMIT / 8 + 1] = {
		[VCPU_LONG64_CS / 8] = GDT_CODE64,
		[VCPU_LONG64_DS / 8] = GDT_DATA,
	};
	uint8_t *pml4 = area + (ABI_BOOT64_PML4_PADDR - ABI_BOOT64_PADDR);
	uint8_t *pdpt = area + (TABLES_PDPT_PADDR - ABI_BOOT64_PADDR);
	uint8_t *pd = area + (TABLES_PD_PADDR - ABI_BOOT64_PADDR);

	if (size < TABLES_END - ABI_BOOT64_PADDR)
		return -EINVAL;
	memset(area, 0, TABLES_END - ABI_BOOT64_PADDR);
	memcpy(area + (ABI_BOOT64_GDT_PADDR - ABI_BOOT64_PADDR), gdt,
	       sizeof(gdt));
	put64(pml4, TABLES_PDPT_PADDR | PTE_PRESENT | PTE_WRITE);
	for (uint64_t i = 0; i < TABLES_NR_PD; i++)
		put64(pdpt + i * 8,
		      (TABLES_PD_PADDR + i * 0x1000) | PTE_PRESENT | PTE_WRITE);
	for (uint64_t i = 0; i < TABLES_NR_PD * 512; i++)
		put64(pd + i * 8,
		      (i << 21) | PTE_PRESENT | PTE_WRITE | PTE_LARGE);
	return 0;
}
