// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the PVH loader on ELF images built in memory: a good one,
 * then one hostile field at a time.  Every bad image must be refused with a
 * reason and must leave guest RAM untouched.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>

#include "hv_err.h"
#include "check.h"
#include "pvh.h"

#define RAM_END	 0x400000ULL
#define LOAD_MIN 0x100000ULL
#define PADDR	 0x100000ULL
#define ENTRY	 0x100010ULL

static uint8_t ram[RAM_END];

struct image {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	Elf32_Nhdr nh;
	char name[4];
	uint32_t desc;
	uint8_t code[64];
};

static void make(struct image *im)
{
	memset(im, 0, sizeof(*im));
	memcpy(im->eh.e_ident, ELFMAG, SELFMAG);
	im->eh.e_ident[EI_CLASS] = ELFCLASS64;
	im->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	im->eh.e_ident[EI_VERSION] = EV_CURRENT;
	im->eh.e_type = ET_EXEC;
	im->eh.e_machine = EM_X86_64;
	im->eh.e_version = EV_CURRENT;
	im->eh.e_phoff = offsetof(struct image, ph);
	im->eh.e_phentsize = sizeof(Elf64_Phdr);
	im->eh.e_phnum = 2;
	im->eh.e_ehsize = sizeof(Elf64_Ehdr);
	im->ph[0] = (Elf64_Phdr){
		.p_type = PT_LOAD,
		.p_offset = offsetof(struct image, code),
		.p_paddr = PADDR,
		.p_filesz = sizeof(im->code),
		.p_memsz = 0x1000,
	};
	im->ph[1] = (Elf64_Phdr){
		.p_type = PT_NOTE,
		.p_offset = offsetof(struct image, nh),
		.p_filesz = sizeof(im->nh) + 4 + 4,
	};
	im->nh = (Elf32_Nhdr){ .n_namesz = 4,
			       .n_descsz = 4,
			       .n_type = PVH_XEN_ELFNOTE_PHYS32_ENTRY };
	memcpy(im->name, "Xen", 4);
	im->desc = ENTRY;
	memset(im->code, 0x90, sizeof(im->code));
}

static int load(const void *img, size_t len, char *why)
{
	struct pvh_kernel k;

	struct hv_err err = { 0 };
	int ret;

	memset(ram, 0xcc, sizeof(ram));
	ret = pvh_load_elf(img, len, ram, RAM_END, LOAD_MIN, &k, &err);
	snprintf(why, 200, "%.199s", err.msg);
	return ret;
}

/* The image must be refused, with a reason naming the problem. */
static void refused(const struct image *im, size_t len, const char *word)
{
	char why[200] = "";

	CHECK_EQ(load(im, len, why), -ENOEXEC);
	if (!strstr(why, word))
		printf("# reason '%s' does not mention '%s'\n", why, word);
	CHECK(strstr(why, word));
	CHECK_EQ(ram[PADDR], 0xcc);
}

static void test_good(void)
{
	struct image im;
	struct pvh_kernel k;
	char why[200];

	make(&im);
	memset(ram, 0xcc, sizeof(ram));
	CHECK_EQ(
		pvh_load_elf(&im, sizeof(im), ram, RAM_END, LOAD_MIN, &k, NULL),
		0);
	CHECK_EQ(k.entry, ENTRY);
	CHECK_EQ(k.lo, PADDR);
	CHECK_EQ(k.hi, PADDR + 0x1000);
	CHECK_EQ(ram[PADDR], 0x90);
	CHECK_EQ(ram[PADDR + sizeof(im.code)], 0); /* bss cleared */
	CHECK_EQ(ram[PADDR + 0x1000], 0xcc);

	/*
	 * A 64-bit note value is accepted too (Linux uses .quad): its high
	 * half overlaps the first code bytes here, zero them.
	 */
	make(&im);
	im.nh.n_descsz = 8;
	im.ph[1].p_filesz += 4;
	memset(im.code, 0, 4);
	CHECK_EQ(load(&im, sizeof(im), why), 0);
}

static void test_not_elf(void)
{
	struct image im;

	make(&im);
	memcpy(im.eh.e_ident, "#!/b", 4);
	refused(&im, sizeof(im), "not an ELF");
	refused(&im, 3, "not an ELF");
	make(&im);
	im.eh.e_ident[EI_CLASS] = 7;
	refused(&im, sizeof(im), "class");
	make(&im);
	im.eh.e_machine = EM_AARCH64;
	refused(&im, sizeof(im), "x86");
	make(&im);
	im.eh.e_type = ET_REL;
	refused(&im, sizeof(im), "executable");
}

static void test_truncated(void)
{
	struct image im;

	make(&im);
	refused(&im, 40, "truncated");
	refused(&im, offsetof(struct image, ph) + 10, "truncated");
	refused(&im, offsetof(struct image, code) + 10, "truncated");
}

static void test_hostile_headers(void)
{
	struct image im;

	make(&im);
	im.eh.e_phoff = UINT64_MAX - 8;
	refused(&im, sizeof(im), "truncated");
	make(&im);
	im.eh.e_phnum = 0;
	refused(&im, sizeof(im), "count");
	make(&im);
	im.eh.e_phentsize = 12;
	refused(&im, sizeof(im), "header size");
	make(&im);
	im.ph[0].p_offset = UINT64_MAX - 4;
	refused(&im, sizeof(im), "truncated");
	make(&im);
	im.ph[0].p_filesz = 0x2000;
	refused(&im, sizeof(im), "truncated");
	make(&im);
	im.ph[0].p_memsz = 4;
	refused(&im, sizeof(im), "more file data");
}

static void test_outside_ram(void)
{
	struct image im;

	make(&im);
	im.ph[0].p_paddr = RAM_END - 0x800;
	refused(&im, sizeof(im), "guest RAM");
	make(&im);
	im.ph[0].p_paddr = 0x1000; /* below the kernel area */
	refused(&im, sizeof(im), "guest RAM");
	make(&im);
	im.ph[0].p_memsz = UINT64_MAX;
	refused(&im, sizeof(im), "guest RAM");
	make(&im);
	im.ph[0].p_paddr = UINT64_MAX - 0x10;
	refused(&im, sizeof(im), "guest RAM");
}

static void test_notes(void)
{
	struct image im;

	make(&im);
	im.ph[1].p_type = PT_NULL;
	refused(&im, sizeof(im), "no PVH entry note");
	make(&im);
	memcpy(im.name, "Xyz", 4);
	refused(&im, sizeof(im), "no PVH entry note");
	make(&im);
	im.nh.n_descsz = 2;
	refused(&im, sizeof(im), "byte value");
	make(&im);
	im.nh.n_namesz = 0xfffffff0;
	refused(&im, sizeof(im), "note");
	make(&im);
	im.nh.n_descsz = 0xffffffff;
	refused(&im, sizeof(im), "note");
	make(&im);
	im.ph[1].p_filesz = 5;
	refused(&im, sizeof(im), "note");
	make(&im);
	im.desc = 0x300000; /* in RAM but not in the image */
	refused(&im, sizeof(im), "outside every loaded segment");
}

static void test_start_info(void)
{
	static uint8_t area[0x10000];
	const struct pvh_boot_module mods[2] = {
		{ .paddr = 0x20000, .size = 0x1000, .cmdline = "hotvm-fdt" },
		{ .paddr = 0x800000, .size = 0x2000 },
	};
	const struct pvh_memmap_entry mm[2] = {
		{ .addr = 0, .size = 0xa0000, .type = PVH_MEMMAP_RAM },
		{ .addr = 0x100000, .size = 0x100000, .type = PVH_MEMMAP_RAM },
	};
	struct pvh_boot_params p = {
		.cmdline = "exit",
		.mods = mods,
		.nr_mods = 2,
		.memmap = mm,
		.nr_memmap = 2,
		.rsdp_paddr = 0xe0000,
	};
	const uint64_t base = 0x10000;
	struct pvh_start_info si;
	struct pvh_modlist_entry m;
	static char longline[0x10000];

	CHECK_EQ(sizeof(si), 56);
	CHECK_EQ(sizeof(m), 32);
	CHECK_EQ(sizeof(struct pvh_memmap_entry), 24);
	CHECK_EQ(pvh_write_start_info(area, base, sizeof(area), &p), base);
	memcpy(&si, area, sizeof(si));
	CHECK_EQ(si.magic, PVH_START_MAGIC);
	CHECK_EQ(si.version, 1);
	CHECK_EQ(si.nr_modules, 2);
	CHECK_EQ(si.rsdp_paddr, 0xe0000);
	CHECK_EQ(si.memmap_entries, 2);
	CHECK_STREQ((char *)area + (si.cmdline_paddr - base), "exit");
	memcpy(&m, area + (si.modlist_paddr - base), sizeof(m));
	CHECK_EQ(m.paddr, 0x20000);
	CHECK_EQ(m.size, 0x1000);
	CHECK_STREQ((char *)area + (m.cmdline_paddr - base), "hotvm-fdt");
	memcpy(&m, area + (si.modlist_paddr - base) + sizeof(m), sizeof(m));
	CHECK_EQ(m.paddr, 0x800000);
	CHECK_EQ(m.cmdline_paddr, 0);
	CHECK(!memcmp(area + (si.memmap_paddr - base), mm, sizeof(mm)));

	memset(longline, 'x', sizeof(longline) - 1);
	p.cmdline = longline;
	CHECK_EQ(pvh_write_start_info(area, base, sizeof(area), &p), -E2BIG);
}

CHECK_MAIN(TEST(test_good), TEST(test_not_elf), TEST(test_truncated),
	   TEST(test_hostile_headers), TEST(test_outside_ram), TEST(test_notes),
	   TEST(test_start_info))
