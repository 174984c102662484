// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes the bzImage boot path (vmm/boot/bzimage.c): bzimage_detect() and
 * bzimage_load() on a hostile image, then bzimage_write_zero_page() with a
 * command line, an initrd and a memory map of fuzzed sizes.
 *
 * Contracts checked (vmm/boot/bzimage.h): on error nothing is written
 * to guest RAM and err says something; on success the kernel and its
 * init_size lie in [load_min, ram_end), the entry is load + 0x200, the
 * header copy fits its array, and nothing outside [load, end) was touched.
 * The zero page either fails with -E2BIG/-EINVAL and a reason or carries
 * the command line (within cmdline_size), initrd and e820 asked for,
 * inside the area (allocated exactly, for ASan).
 *
 * Input: 3 bytes choose ram_end and load_min, 8 bytes the boot data, the
 * rest is the image.
 */
#include <errno.h>

#include "hv_err.h"
#include "fuzz.h"
#include "table_bytes.h"
#include "bzimage.h"

/* The stand-in loads at 2 MiB (its alignment) and needs 1 MiB there. */
#define RAM_SIZE ((3u << 20) + (64u << 10))

static uint8_t *ram;

static void check_zero_page(const struct bzimage_kernel *k, struct fuzz_in *in)
{
	struct pvh_memmap_entry mm[BZ_ZP_E820_MAX + 2];
	char cmdline[4096];
	struct bzimage_boot_params p = { .cmdline = cmdline, .memmap = mm };
	size_t size = BZ_CMDLINE_OFF + fuzz_uint(in, 2) % 4096;
	size_t clen = fuzz_uint(in, 2) % sizeof(cmdline);
	uint64_t base = (fuzz_uint(in, 1) & 0x7f) << 12;
	struct hv_err err = { 0 };
	uint8_t *area;
	int64_t rc;

	memset(cmdline, 'b', clen);
	cmdline[clen] = 0;
	p.nr_memmap = fuzz_u8(in) % (BZ_ZP_E820_MAX + 2);
	for (unsigned int i = 0; i < p.nr_memmap; i++)
		mm[i] = (struct pvh_memmap_entry){ .addr = (uint64_t)i << 20,
						   .size = 1 << 20,
						   .type = PVH_MEMMAP_RAM };
	p.initrd_paddr = fuzz_uint(in, 1) << 20;
	p.initrd_size = fuzz_uint(in, 1) << 16;
	p.rsdp_paddr = 0xe0000;

	area = malloc(size);
	FUZZ_ASSERT(area);
	rc = bzimage_write_zero_page(area, base, size, k, &p, &err);
	if (rc < 0) {
		FUZZ_ASSERT(rc == -E2BIG || rc == -EINVAL);
		FUZZ_ASSERT(fuzz_why_ok(err.msg, sizeof(err.msg)));
		free(area);
		return;
	}
	FUZZ_ASSERT(rc == (int64_t)base);
	FUZZ_ASSERT(clen <= k->cmdline_max);
	FUZZ_ASSERT(BZ_CMDLINE_OFF + clen < size);
	FUZZ_ASSERT(!strcmp((char *)area + BZ_CMDLINE_OFF, cmdline));
	FUZZ_ASSERT(get32(area + BZ_CMD_LINE_PTR) ==
		    (uint32_t)(base + BZ_CMDLINE_OFF));
	FUZZ_ASSERT(area[BZ_ZP_E820_ENTRIES] == p.nr_memmap);
	FUZZ_ASSERT(get32(area + BZ_RAMDISK_SIZE) == (uint32_t)p.initrd_size);
	if (p.initrd_size)
		FUZZ_ASSERT(p.initrd_paddr + p.initrd_size - 1 <=
			    k->initrd_max);
	free(area);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	static const uint64_t mins[] = { 0x100000, 0, 0x1000, 0x200000 };
	uint8_t mode = fuzz_u8(&in), rsel = fuzz_u8(&in), msel = fuzz_u8(&in);
	struct bzimage_kernel k;
	uint64_t ram_end, load_min;
	struct fuzz_in boot;
	const uint8_t *img;
	struct hv_err err = { 0 };
	size_t len;
	int rc;

	if (!ram) {
		ram = calloc(1, RAM_SIZE);
		FUZZ_ASSERT(ram);
	}
	/* Never past the buffer: rsel << 14 alone reaches 4 MiB - 16 KiB. */
	ram_end = mode & 4 ? (uint64_t)(rsel % ((RAM_SIZE >> 14) + 1)) << 14
			   : RAM_SIZE;
	load_min = mode & 8 ? (uint64_t)msel << 12 : mins[mode & 3];
	boot.p = fuzz_bytes(&in, 8, &boot.n);
	img = fuzz_bytes(&in, fuzz_left(&in), &len);

	(void)bzimage_detect(img, len);
	memset(&k, 0, sizeof(k));
	rc = bzimage_load(img, len, ram, ram_end, load_min, &k, &err);
	if (rc) {
		FUZZ_ASSERT(rc == -ENOEXEC);
		FUZZ_ASSERT(fuzz_why_ok(err.msg, sizeof(err.msg)));
		FUZZ_ASSERT(fuzz_all_zero(ram, RAM_SIZE));
		return 0;
	}
	/* What loaded is a bzImage by the detector's definition too. */
	FUZZ_ASSERT(bzimage_detect(img, len));
	FUZZ_ASSERT(k.version >= BZ_MIN_VERSION);
	FUZZ_ASSERT(k.entry == k.load + BZ_ENTRY64_OFF);
	FUZZ_ASSERT(load_min <= k.load && k.load < k.end && k.end <= ram_end);
	FUZZ_ASSERT(k.hdr_len <= sizeof(k.hdr));
	FUZZ_ASSERT(fuzz_all_zero(ram, k.load));
	FUZZ_ASSERT(fuzz_all_zero(ram + k.end, RAM_SIZE - k.end));
	memset(ram + k.load, 0, k.end - k.load);
	check_zero_page(&k, &boot);
	return 0;
}
