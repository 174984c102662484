// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the bzImage loader on images built in memory: a good one,
 * then one hostile header field at a time.  Every bad image must be refused
 * with a reason and must leave guest RAM untouched; the zero page and the
 * boot page tables are read back field by field.
 */
#include <errno.h>
#include <stdint.h>

#include "hv_err.h"
#include "check.h"
#include "hotvm/abi.h"
#include "bzimage.h"
#include "vcpu.h"

#define RAM_END	    0x800000ULL /* 8 MiB */
#define LOAD_MIN    0x100000ULL
#define PREF	    0x400000ULL
#define INIT_SIZE   0x100000U
#define ALIGN	    0x200000U
#define SECTS	    1
#define PM_OFF	    ((SECTS + 1) * 512)
#define PM_LEN	    0x1000
#define IMG_LEN	    (PM_OFF + PM_LEN)
#define INITRD_MAX  0x6fffffU
#define CMDLINE_MAX 255U
#define ZP_BASE	    0x10000ULL
#define ZP_AREA	    0x10000ULL

static uint8_t ram[RAM_END];
static uint8_t img[0x10000];
static uint8_t area[ZP_AREA];

static void put16(size_t off, uint16_t v)
{
	memcpy(img + off, &v, 2);
}

static void put32(size_t off, uint32_t v)
{
	memcpy(img + off, &v, 4);
}

static void put64(size_t off, uint64_t v)
{
	memcpy(img + off, &v, 8);
}

static uint64_t zp64(size_t off)
{
	uint64_t v;

	memcpy(&v, area + off, 8);
	return v;
}

static uint32_t zp32(size_t off)
{
	uint32_t v;

	memcpy(&v, area + off, 4);
	return v;
}

static uint16_t zp16(size_t off)
{
	uint16_t v;

	memcpy(&v, area + off, 2);
	return v;
}

/* A relocatable protocol 2.15 bzImage, as Debian's kernel has it. */
static void make(void)
{
	memset(img, 0, sizeof(img));
	img[BZ_SETUP_SECTS] = SECTS;
	put32(BZ_SYSSIZE, PM_LEN / 16);
	put16(BZ_BOOT_FLAG, BZ_BOOT_FLAG_MAGIC);
	img[BZ_JUMP] = 0xeb;
	img[BZ_JUMP + 1] = 0x6a; /* header ends at 0x26c */
	memcpy(img + BZ_HEADER, "HdrS", 4);
	put16(BZ_VERSION, 0x020f);
	img[BZ_LOADFLAGS] = BZ_LOADED_HIGH;
	put32(BZ_CODE32_START, 0x100000);
	put32(BZ_INITRD_ADDR_MAX, INITRD_MAX);
	put32(BZ_KERNEL_ALIGNMENT, ALIGN);
	img[BZ_RELOCATABLE_KERNEL] = 1;
	put16(BZ_XLOADFLAGS, BZ_XLF_KERNEL_64);
	put32(BZ_CMDLINE_SIZE, CMDLINE_MAX);
	put64(BZ_SETUP_DATA, 0xdead0000); /* must not reach the zero page */
	put64(BZ_PREF_ADDRESS, PREF);
	put32(BZ_INIT_SIZE, INIT_SIZE);
	for (size_t i = 0; i < PM_LEN; i++)
		img[PM_OFF + i] = (uint8_t)(i * 7 + 1);
}

static int load(size_t len, struct bzimage_kernel *k, char *why)
{
	struct hv_err err = { 0 };
	int ret;

	memset(ram, 0xcc, sizeof(ram));
	ret = bzimage_load(img, len, ram, RAM_END, LOAD_MIN, k, &err);
	snprintf(why, 200, "%.199s", err.msg);
	return ret;
}

static bool ram_untouched(void)
{
	for (size_t i = 0; i < RAM_END; i += 512)
		if (ram[i] != 0xcc)
			return false;
	return true;
}

/* The image must be refused, with a reason naming the problem. */
static void refused_len(size_t len, const char *word)
{
	struct bzimage_kernel k;
	char why[200] = "";

	CHECK_EQ(load(len, &k, why), -ENOEXEC);
	if (!strstr(why, word))
		printf("# reason '%s' does not mention '%s'\n", why, word);
	CHECK(strstr(why, word));
	CHECK(ram_untouched());
}

static void refused(const char *word)
{
	refused_len(IMG_LEN, word);
}

static void test_detect(void)
{
	make();
	CHECK(bzimage_detect(img, IMG_LEN));
	CHECK(!bzimage_detect(img, BZ_HEADER + 3));
	CHECK(!bzimage_detect("\x7f"
			      "ELF",
			      4));
	put16(BZ_BOOT_FLAG, 0);
	CHECK(!bzimage_detect(img, IMG_LEN));
	make();
	memcpy(img + BZ_HEADER, "HdrT", 4);
	CHECK(!bzimage_detect(img, IMG_LEN));
}

static void test_good(void)
{
	struct bzimage_kernel k;
	char why[200] = "";

	make();
	CHECK_EQ(load(IMG_LEN, &k, why), 0);
	CHECK_STREQ(why, "");
	CHECK_EQ(k.load, PREF);
	CHECK_EQ(k.entry, PREF + 0x200);
	CHECK_EQ(k.end, PREF + INIT_SIZE);
	CHECK_EQ(k.initrd_max, INITRD_MAX);
	CHECK_EQ(k.cmdline_max, CMDLINE_MAX);
	CHECK_EQ(k.version, 0x020f);
	CHECK(k.relocatable);
	CHECK_EQ(k.hdr_len, 0x26c - 0x1f1);
	CHECK(!memcmp(ram + PREF, img + PM_OFF, PM_LEN));
	CHECK_EQ(ram[PREF - 1], 0xcc);
	CHECK_EQ(ram[PREF + PM_LEN], 0xcc); /* fresh RAM is zero already */

	/* Larger than init_size: the file's size is the footprint. */
	put32(BZ_INIT_SIZE, 0x100);
	CHECK_EQ(load(IMG_LEN, &k, why), 0);
	CHECK_EQ(k.end, PREF + PM_LEN);

	/* setup_sects 0 means 4. */
	make();
	img[BZ_SETUP_SECTS] = 0;
	put32(BZ_SYSSIZE, 0);
	CHECK_EQ(load(IMG_LEN, &k, why), 0);
	CHECK(!memcmp(ram + PREF, img + 5 * 512, IMG_LEN - 5 * 512));
}

/* A relocatable kernel goes elsewhere when pref_address will not do. */
static void test_relocation(void)
{
	static const uint64_t bad_pref[] = {
		0,		       /* none */
		PREF + 0x1000,	       /* misaligned */
		0x80000,	       /* below the kernel area */
		RAM_END,	       /* beyond RAM */
		RAM_END - ALIGN,       /* init_size would not fit */
		0xffffffffffe00000ULL, /* would overflow */
	};
	struct bzimage_kernel k;
	char why[200];

	for (size_t i = 0; i < sizeof(bad_pref) / sizeof(bad_pref[0]); i++) {
		make();
		put64(BZ_PREF_ADDRESS, bad_pref[i]);
		put32(BZ_INIT_SIZE, 0x300000);
		CHECK_EQ(load(IMG_LEN, &k, why), 0);
		CHECK_EQ(k.load, 0x200000); /* 1 MiB aligned up to 2 MiB */
		CHECK(!memcmp(ram + 0x200000, img + PM_OFF, PM_LEN));
	}
}

/* One that is not relocatable runs at pref_address or nowhere. */
static void test_not_relocatable(void)
{
	struct bzimage_kernel k;
	char why[200];

	make();
	img[BZ_RELOCATABLE_KERNEL] = 0;
	CHECK_EQ(load(IMG_LEN, &k, why), 0);
	CHECK_EQ(k.load, PREF);
	CHECK(!k.relocatable);

	put64(BZ_PREF_ADDRESS, 0x80000);
	refused("not relocatable");
	put64(BZ_PREF_ADDRESS, RAM_END - INIT_SIZE + 0x1000);
	refused("not relocatable and needs 1 MiB at pref_address 0x701000 "
		"(its size or init_size), beyond guest RAM, which ends at 8 "
		"MiB");
	put64(BZ_PREF_ADDRESS, 0xfffffffffff00000ULL);
	refused("not relocatable");

	/* Without pref_address: the traditional 1 MiB. */
	put64(BZ_PREF_ADDRESS, 0);
	CHECK_EQ(load(IMG_LEN, &k, why), 0);
	CHECK_EQ(k.load, BZ_DEFAULT_LOAD);
}

static void test_malformed(void)
{
	make();
	put16(BZ_BOOT_FLAG, 0x1234);
	refused("not a bzImage");

	/* Truncated: inside the setup header, no protected-mode part, no
	 * 64-bit entry, and less than syssize says. */
	make();
	refused_len(0x210, "truncated");
	refused_len(PM_OFF, "truncated");
	put32(BZ_SYSSIZE, 0);
	refused_len(PM_OFF + 0x200, "truncated");
	make();
	refused_len(IMG_LEN - 16, "truncated");

	make();
	img[BZ_SETUP_SECTS] = 64;
	refused("setup_sects 64 is too big");
	make();
	img[BZ_SETUP_SECTS] = 255;
	refused("setup_sects 255 is too big");

	make();
	put16(BZ_VERSION, 0x020b);
	refused("older than 2.12");
	make();
	put16(BZ_VERSION, 0x0100);
	refused("older than 2.12");

	make();
	img[BZ_JUMP + 1] = 0x20; /* header ends before init_size */
	refused("too short");
	make();
	img[BZ_JUMP + 1] = 0x90; /* header runs into edd_mbr_sig_buffer */
	refused("past its room");

	make();
	img[BZ_LOADFLAGS] = 0;
	refused("zImage");

	make();
	put16(BZ_XLOADFLAGS, 0x2);
	refused("XLF_KERNEL_64");

	make();
	put32(BZ_INIT_SIZE, 0x10000000);
	refused("the kernel needs 256 MiB from 0x200000 (its size or "
		"init_size), more than guest RAM, which ends at 8 MiB");
	make();
	put32(BZ_INIT_SIZE, 0xffffffff);
	refused("RAM");

	make();
	put32(BZ_KERNEL_ALIGNMENT, 0x300000);
	refused("power of two");
	make();
	put32(BZ_KERNEL_ALIGNMENT, 0);
	refused("power of two");
}

static const struct pvh_memmap_entry memmap[] = {
	{ .addr = 0, .size = 0x60000, .type = PVH_MEMMAP_RAM },
	{ .addr = 0x60000, .size = 0x8000, .type = PVH_MEMMAP_RESERVED },
	{ .addr = 0xe0000, .size = 0x20000, .type = PVH_MEMMAP_ACPI },
	{ .addr = 0x100000,
	  .size = RAM_END - 0x100000,
	  .type = PVH_MEMMAP_RAM },
};

static int64_t zero_page(const struct bzimage_kernel *k, const char *cmdline,
			 uint64_t initrd, uint64_t initrd_size, char *why)
{
	struct hv_err err = { 0 };
	int64_t ret;

	memset(area, 0xcc, sizeof(area));
	ret = bzimage_write_zero_page(area, ZP_BASE, ZP_AREA, k,
				      &(struct bzimage_boot_params){
					      .cmdline = cmdline,
					      .initrd_paddr = initrd,
					      .initrd_size = initrd_size,
					      .memmap = memmap,
					      .nr_memmap = 4,
					      .rsdp_paddr = ABI_ACPI_PADDR,
				      },
				      &err);
	snprintf(why, 200, "%.199s", err.msg);
	return ret;
}

static void test_zero_page(void)
{
	struct bzimage_kernel k;
	char why[200] = "";

	make();
	CHECK_EQ(load(IMG_LEN, &k, why), 0);
	CHECK_EQ(zero_page(&k, "console=ttyS0", 0x6ff000, 0x1000, why),
		 ZP_BASE);
	CHECK_STREQ(why, "");

	/* The setup header, from the image, with the loader's fields. */
	CHECK(!memcmp(area + BZ_HEADER, "HdrS", 4));
	CHECK_EQ(area[BZ_SETUP_SECTS], SECTS);
	CHECK_EQ(zp16(BZ_VERSION), 0x020f);
	CHECK_EQ(zp64(BZ_PREF_ADDRESS), PREF);
	CHECK_EQ(zp32(BZ_INIT_SIZE), INIT_SIZE);
	CHECK_EQ(area[BZ_TYPE_OF_LOADER], 0xff);
	CHECK_EQ(area[BZ_LOADFLAGS], BZ_LOADED_HIGH | BZ_CAN_USE_HEAP);
	CHECK_EQ(zp16(BZ_VID_MODE), 0xffff);
	CHECK_EQ(zp32(BZ_CODE32_START), PREF);
	CHECK_EQ(zp32(BZ_CMD_LINE_PTR), ZP_BASE + BZ_CMDLINE_OFF);
	CHECK_EQ(zp32(BZ_ZP_EXT_CMD_LINE_PTR), 0);
	CHECK_STREQ((char *)area + BZ_CMDLINE_OFF, "console=ttyS0");
	CHECK_EQ(zp32(BZ_RAMDISK_IMAGE), 0x6ff000);
	CHECK_EQ(zp32(BZ_RAMDISK_SIZE), 0x1000);
	CHECK_EQ(zp32(BZ_ZP_EXT_RAMDISK_IMAGE), 0);
	CHECK_EQ(zp32(BZ_ZP_EXT_RAMDISK_SIZE), 0);
	CHECK_EQ(zp64(BZ_SETUP_DATA), 0);
	CHECK_EQ(zp64(BZ_ZP_ACPI_RSDP_ADDR), ABI_ACPI_PADDR);
	/* Everything else is zero: the sentinel, past the header, ... */
	CHECK_EQ(area[0x1ef], 0);
	CHECK_EQ(area[0], 0);
	for (size_t i = 0x26c; i < BZ_HEADER_MAX_END; i++)
		CHECK_EQ(area[i], 0);

	/* The e820 table: 20-byte entries from the memory map. */
	CHECK_EQ(area[BZ_ZP_E820_ENTRIES], 4);
	for (size_t i = 0; i < 4; i++) {
		size_t e = BZ_ZP_E820_TABLE + i * BZ_ZP_E820_ENTRY_SIZE;

		CHECK_EQ(zp64(e), memmap[i].addr);
		CHECK_EQ(zp64(e + 8), memmap[i].size);
		CHECK_EQ(zp32(e + 16), memmap[i].type);
	}
	CHECK_EQ(zp32(BZ_ZP_E820_TABLE + 4 * BZ_ZP_E820_ENTRY_SIZE), 0);

	/* No command line, no initrd. */
	CHECK_EQ(zero_page(&k, NULL, 0, 0, why), ZP_BASE);
	CHECK_STREQ((char *)area + BZ_CMDLINE_OFF, "");
	CHECK_EQ(zp32(BZ_RAMDISK_IMAGE), 0);
	CHECK_EQ(zp32(BZ_RAMDISK_SIZE), 0);

	/* acpi_rsdp_addr is padding before protocol 2.14. */
	put16(BZ_VERSION, 0x020d);
	CHECK_EQ(load(IMG_LEN, &k, why), 0);
	CHECK_EQ(zero_page(&k, "", 0, 0, why), ZP_BASE);
	CHECK_EQ(zp64(BZ_ZP_ACPI_RSDP_ADDR), 0);
}

static void test_zero_page_refused(void)
{
	char longer[CMDLINE_MAX + 2];
	struct bzimage_kernel k;
	char why[200];

	make();
	CHECK_EQ(load(IMG_LEN, &k, why), 0);

	/* cmdline_size counts the characters without the NUL. */
	memset(longer, 'x', sizeof(longer));
	longer[CMDLINE_MAX] = '\0';
	CHECK_EQ(zero_page(&k, longer, 0, 0, why), ZP_BASE);
	longer[CMDLINE_MAX] = 'x';
	longer[CMDLINE_MAX + 1] = '\0';
	why[0] = '\0';
	CHECK_EQ(zero_page(&k, longer, 0, 0, why), -E2BIG);
	CHECK(strstr(why, "cmdline_size"));

	/* The initrd's last byte may be initrd_addr_max, not one more. */
	CHECK_EQ(zero_page(&k, "", INITRD_MAX + 1 - 0x1000, 0x1000, why),
		 ZP_BASE);
	why[0] = '\0';
	CHECK_EQ(zero_page(&k, "", INITRD_MAX + 2 - 0x1000, 0x1000, why),
		 -EINVAL);
	CHECK(strstr(why, "initrd_addr_max"));
	CHECK_EQ(zero_page(&k, "", 0x700000, 0x1000, why), -EINVAL);
	CHECK_EQ(zero_page(&k, "", UINT64_MAX - 10, 100, why), -EINVAL);
	CHECK_EQ(zero_page(&k, "", 0x1000, UINT64_MAX, why), -EINVAL);

	/* No room in the area, or a memory map e820 cannot hold. */
	CHECK_EQ(bzimage_write_zero_page(area, ZP_BASE, BZ_CMDLINE_OFF, &k,
					 &(struct bzimage_boot_params){ 0 },
					 NULL),
		 -EINVAL);
	CHECK_EQ(bzimage_write_zero_page(area, ZP_BASE, BZ_CMDLINE_OFF + 4, &k,
					 &(struct bzimage_boot_params){
						 .cmdline = "four",
					 },
					 NULL),
		 -E2BIG);
	CHECK_EQ(
		bzimage_write_zero_page(area, ZP_BASE, ZP_AREA, &k,
					&(struct bzimage_boot_params){
						.memmap = memmap,
						.nr_memmap = BZ_ZP_E820_MAX + 1,
					},
					NULL),
		-EINVAL);
}

static void test_boot_tables(void)
{
	static uint8_t t[ABI_BOOT64_SIZE];
	uint8_t *gdt = t + (ABI_BOOT64_GDT_PADDR - ABI_BOOT64_PADDR);
	uint8_t *pml4 = t + (ABI_BOOT64_PML4_PADDR - ABI_BOOT64_PADDR);
	uint64_t pdpt_pa, pd_pa, v;

	memset(t, 0xcc, sizeof(t));
	CHECK_EQ(bzimage_write_boot_tables(t, 0x1000), -EINVAL);
	CHECK_EQ(t[0], 0xcc);
	CHECK_EQ(bzimage_write_boot_tables(t, sizeof(t)), 0);

	memcpy(&v, gdt + VCPU_LONG64_CS, 8);
	CHECK_EQ(v, 0x00af9b000000ffffULL); /* 64-bit code, flat */
	memcpy(&v, gdt + VCPU_LONG64_DS, 8);
	CHECK_EQ(v, 0x00cf93000000ffffULL); /* data, flat 4 GiB */
	memcpy(&v, gdt, 8);
	CHECK_EQ(v, 0);

	/* PML4[0] -> PDPT, PDPT[0..3] -> PDs, 2048 x 2 MiB identity. */
	memcpy(&v, pml4, 8);
	CHECK_EQ(v & 0xfff, 0x3);
	pdpt_pa = v & ~0xfffULL;
	CHECK(pdpt_pa >= ABI_BOOT64_PADDR &&
	      pdpt_pa < ABI_BOOT64_PADDR + ABI_BOOT64_SIZE);
	memcpy(&v, pml4 + 8, 8);
	CHECK_EQ(v, 0);
	for (uint64_t g = 0; g < 4; g++) {
		const uint8_t *pdpt = t + (pdpt_pa - ABI_BOOT64_PADDR);

		memcpy(&v, pdpt + g * 8, 8);
		CHECK_EQ(v & 0xfff, 0x3);
		pd_pa = v & ~0xfffULL;
		CHECK(pd_pa >= ABI_BOOT64_PADDR &&
		      pd_pa + 0x1000 <= ABI_BOOT64_PADDR + ABI_BOOT64_SIZE);
		for (uint64_t i = 0; i < 512; i++) {
			memcpy(&v, t + (pd_pa - ABI_BOOT64_PADDR) + i * 8, 8);
			if (v != (((g * 512 + i) << 21) | 0x83)) {
				CHECK_EQ(v, ((g * 512 + i) << 21) | 0x83);
				return;
			}
		}
	}
}

CHECK_MAIN(TEST(test_detect), TEST(test_good), TEST(test_relocation),
	   TEST(test_not_relocatable), TEST(test_malformed),
	   TEST(test_zero_page), TEST(test_zero_page_refused),
	   TEST(test_boot_tables))
