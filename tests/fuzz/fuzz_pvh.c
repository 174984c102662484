// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes the PVH boot path (vmm/boot/pvh.c): pvh_load_elf() on a hostile ELF
 * image, then pvh_write_start_info() with a command line, modules and a
 * memory map of fuzzed sizes.
 *
 * Contracts checked (vmm/boot/pvh.h): on error nothing is written to
 * guest RAM (it stays all zero) and err says something; on success the
 * loaded range lies in [load_min, ram_end) and nothing outside it was
 * touched.  start_info either fails with -E2BIG/-EINVAL or describes
 * exactly what was asked, inside the area (allocated exactly, for ASan).
 *
 * Input: 3 bytes choose ram_end and load_min, 8 bytes the boot data, the
 * rest is the image.
 */
#include <errno.h>

#include "hv_err.h"
#include "fuzz.h"
#include "pvh.h"

#define RAM_SIZE ((2u << 20) + (64u << 10))

static uint8_t *ram;

static void check_load(const uint8_t *img, size_t len, uint64_t ram_end,
		       uint64_t load_min)
{
	struct pvh_kernel k = { 0 };
	struct hv_err err = { 0 };
	int rc = pvh_load_elf(img, len, ram, ram_end, load_min, &k, &err);

	if (rc) {
		FUZZ_ASSERT(rc == -ENOEXEC || rc == -EINVAL || rc == -E2BIG);
		FUZZ_ASSERT(fuzz_why_ok(err.msg, sizeof(err.msg)));
		FUZZ_ASSERT(fuzz_all_zero(ram, RAM_SIZE));
		return;
	}
	FUZZ_ASSERT(load_min <= k.lo && k.lo <= k.hi && k.hi <= ram_end);
	FUZZ_ASSERT(fuzz_all_zero(ram, k.lo));
	FUZZ_ASSERT(fuzz_all_zero(ram + k.hi, RAM_SIZE - k.hi));
	memset(ram + k.lo, 0, k.hi - k.lo);
}

static void check_start_info(struct fuzz_in *in)
{
	struct pvh_boot_module mods[PVH_MAX_MODULES + 1];
	struct pvh_memmap_entry mm[PVH_MAX_MEMMAP + 1];
	char cmdline[0x900], modstr[2][PVH_MODSTR_MAX + 8];
	struct pvh_boot_params p = { .cmdline = cmdline, .mods = mods };
	const struct pvh_start_info *si;
	size_t size = PVH_BOOT_CMDLINE_OFF - 8 + fuzz_uint(in, 2) % 0x900;
	size_t clen = fuzz_uint(in, 2) % sizeof(cmdline);
	uint64_t base = (fuzz_uint(in, 2) & 0xfff) << 12;
	uint8_t n = fuzz_u8(in);
	uint8_t *area;
	int64_t rc;

	memset(cmdline, 'c', clen);
	cmdline[clen] = 0;
	p.nr_mods = n % (PVH_MAX_MODULES + 2);
	p.nr_memmap = (n >> 2) % (PVH_MAX_MEMMAP + 2);
	for (unsigned int i = 0; i < p.nr_mods; i++) {
		size_t ml = i < 2 ? fuzz_u8(in) + 8 * (n >> 7) : 0;

		mods[i] = (struct pvh_boot_module){ .paddr = 0x200000 * i,
						    .size = 4096 };
		if (i < 2 && ml) {
			ml = ml > PVH_MODSTR_MAX + 7 ? PVH_MODSTR_MAX + 7 : ml;
			memset(modstr[i], 'm', ml);
			modstr[i][ml] = 0;
			mods[i].cmdline = modstr[i];
		}
	}
	for (unsigned int i = 0; i < p.nr_memmap; i++)
		mm[i] = (struct pvh_memmap_entry){ .addr = i << 20,
						   .size = 1 << 20,
						   .type = PVH_MEMMAP_RAM };
	p.memmap = mm;
	p.rsdp_paddr = fuzz_uint(in, 1) << 12;

	area = malloc(size);
	FUZZ_ASSERT(area);
	rc = pvh_write_start_info(area, base, size, &p);
	if (rc < 0) {
		FUZZ_ASSERT(rc == -E2BIG || rc == -EINVAL);
		free(area);
		return;
	}
	FUZZ_ASSERT(rc == (int64_t)base);
	si = (const struct pvh_start_info *)area;
	FUZZ_ASSERT(si->magic == PVH_START_MAGIC && si->version == 1);
	FUZZ_ASSERT(si->nr_modules == p.nr_mods);
	FUZZ_ASSERT(si->memmap_entries == p.nr_memmap);
	FUZZ_ASSERT(si->rsdp_paddr == p.rsdp_paddr);
	FUZZ_ASSERT(si->cmdline_paddr >= base &&
		    si->cmdline_paddr - base + clen + 1 <= size);
	FUZZ_ASSERT(!strcmp((const char *)area + (si->cmdline_paddr - base),
			    cmdline));
	for (unsigned int i = 0; i < p.nr_mods; i++) {
		const struct pvh_modlist_entry *m =
			(const void *)(area + (si->modlist_paddr - base) +
				       i * sizeof(*m));

		FUZZ_ASSERT(m->paddr == mods[i].paddr);
		if (mods[i].cmdline)
			FUZZ_ASSERT(!strcmp((const char *)area +
						    (m->cmdline_paddr - base),
					    mods[i].cmdline));
	}
	free(area);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	static const uint64_t mins[] = { 0x100000, 0, 0x1000, 0x200000 };
	uint8_t mode = fuzz_u8(&in), rsel = fuzz_u8(&in), msel = fuzz_u8(&in);
	uint64_t ram_end, load_min;
	struct fuzz_in boot;
	const uint8_t *img;
	size_t len;

	if (!ram) {
		ram = calloc(1, RAM_SIZE);
		FUZZ_ASSERT(ram);
	}
	/* Mostly all of RAM; sometimes less, down to none. */
	ram_end = mode & 4 ? (uint64_t)rsel << 13 : RAM_SIZE;
	load_min = mode & 8 ? (uint64_t)msel << 12 : mins[mode & 3];
	boot.p = fuzz_bytes(&in, 8, &boot.n);
	img = fuzz_bytes(&in, fuzz_left(&in), &len);

	check_load(img, len, ram_end, load_min);
	check_start_info(&boot);
	return 0;
}
