// SPDX-License-Identifier: GPL-2.0-only
/*
 * PVH ELF loading and hvm_start_info.  The image is hostile until proven
 * otherwise: all header fields are checked, with overflow-safe arithmetic,
 * against the file size and guest RAM in a first pass; only then does a
 * second pass copy anything.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "hv_err.h"
#include "pvh.h"

#define PVH_MAX_PHNUM 256

/* The fields hotvm uses, common to ELF32 and ELF64 program headers. */
struct pvh_phdr {
	uint32_t type;
	uint64_t offset;
	uint64_t paddr;
	uint64_t filesz;
	uint64_t memsz;
};

struct pvh_elf {
	const uint8_t *img;
	size_t len;
	bool is64;
	uint64_t phoff;
	unsigned int phnum;
};

/* [off, off + size) inside [0, len), without overflow. */
static bool in_file(uint64_t off, uint64_t size, uint64_t len)
{
	return off <= len && size <= len - off;
}

/* The fields hotvm uses of the ELF header, common to both classes. */
struct pvh_ehdr {
	uint16_t type;
	uint16_t machine;
	uint16_t phentsize;
	uint64_t phoff;
	unsigned int phnum;
};

/* One class's header or program header to the common fields. */
#define PVH_EHDR(h)                                                            \
	((struct pvh_ehdr){ .type = (h).e_type,                                \
			    .machine = (h).e_machine,                          \
			    .phentsize = (h).e_phentsize,                      \
			    .phoff = (h).e_phoff,                              \
			    .phnum = (h).e_phnum })
#define PVH_PHDR(p)                                                            \
	((struct pvh_phdr){ .type = (p).p_type,                                \
			    .offset = (p).p_offset,                            \
			    .paddr = (p).p_paddr,                              \
			    .filesz = (p).p_filesz,                            \
			    .memsz = (p).p_memsz })

static void get_phdr(const struct pvh_elf *e, unsigned int i,
		     struct pvh_phdr *ph)
{
	const uint8_t *at = e->img + e->phoff;

	if (e->is64) {
		Elf64_Phdr p;

		memcpy(&p, at + (uint64_t)i * sizeof(p), sizeof(p));
		*ph = PVH_PHDR(p);
	} else {
		Elf32_Phdr p;

		memcpy(&p, at + (uint64_t)i * sizeof(p), sizeof(p));
		*ph = PVH_PHDR(p);
	}
}

/* The header's common fields; false if the file is shorter than it. */
static bool get_ehdr(const struct pvh_elf *e, struct pvh_ehdr *eh)
{
	if (e->is64) {
		Elf64_Ehdr h;

		if (e->len < sizeof(h))
			return false;
		memcpy(&h, e->img, sizeof(h));
		*eh = PVH_EHDR(h);
	} else {
		Elf32_Ehdr h;

		if (e->len < sizeof(h))
			return false;
		memcpy(&h, e->img, sizeof(h));
		*eh = PVH_EHDR(h);
	}
	return true;
}

static int parse_header(struct pvh_elf *e, struct hv_err *err)
{
	const uint8_t *id = e->img;
	struct pvh_ehdr h;

	if (e->len < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG))
		return hv_err_set(err, -ENOEXEC, "not an ELF file (bad magic)");
	if (id[EI_CLASS] != ELFCLASS64 && id[EI_CLASS] != ELFCLASS32)
		return hv_err_set(err, -ENOEXEC, "unknown ELF class %u",
				  id[EI_CLASS]);
	e->is64 = id[EI_CLASS] == ELFCLASS64;
	if (id[EI_DATA] != ELFDATA2LSB)
		return hv_err_set(err, -ENOEXEC, "not a little-endian ELF");
	if (id[EI_VERSION] != EV_CURRENT)
		return hv_err_set(err, -ENOEXEC, "unknown ELF version %u",
				  id[EI_VERSION]);

	if (!get_ehdr(e, &h))
		return hv_err_set(err, -ENOEXEC,
				  "truncated: %zu bytes, shorter than the "
				  "ELF header",
				  e->len);
	e->phoff = h.phoff;
	e->phnum = h.phnum;
	if (h.phentsize != (e->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return hv_err_set(err, -ENOEXEC, "bad program header size %u",
				  h.phentsize);
	if (h.type != ET_EXEC)
		return hv_err_set(err, -ENOEXEC,
				  "not an executable ELF (type %u)", h.type);
	if (h.machine != EM_X86_64 && h.machine != EM_386)
		return hv_err_set(err, -ENOEXEC, "not an x86 ELF (machine %u)",
				  h.machine);
	if (!e->phnum || e->phnum > PVH_MAX_PHNUM)
		return hv_err_set(err, -ENOEXEC, "bad program header count %u",
				  e->phnum);
	if (!in_file(e->phoff, (uint64_t)e->phnum * h.phentsize, e->len))
		return hv_err_set(
			err, -ENOEXEC,
			"truncated: program headers end past the end of "
			"the file");
	return 0;
}

/* Walks one PT_NOTE segment for Xen's PHYS32_ENTRY note. */
static int find_entry_note(const struct pvh_elf *e, const struct pvh_phdr *ph,
			   uint64_t *entry, bool *found, struct hv_err *err)
{
	const uint8_t *p = e->img + ph->offset;
	uint64_t off = 0;

	while (off < ph->filesz) {
		Elf32_Nhdr nh; /* same layout for ELF64 */
		uint64_t name_off, desc_off, next;

		if (ph->filesz - off < sizeof(nh))
			return hv_err_set(err, -ENOEXEC,
					  "malformed ELF note header");
		memcpy(&nh, p + off, sizeof(nh));
		name_off = off + sizeof(nh);
		desc_off = name_off + (((uint64_t)nh.n_namesz + 3) & ~3ULL);
		next = desc_off + (((uint64_t)nh.n_descsz + 3) & ~3ULL);
		if (desc_off > ph->filesz || next > ph->filesz)
			return hv_err_set(err, -ENOEXEC,
					  "ELF note runs past its segment");
		if (nh.n_namesz == 4 && !memcmp(p + name_off, "Xen", 4) &&
		    nh.n_type == PVH_XEN_ELFNOTE_PHYS32_ENTRY && !*found) {
			if (nh.n_descsz == 4) {
				uint32_t v;

				memcpy(&v, p + desc_off, 4);
				*entry = v;
			} else if (nh.n_descsz == 8) {
				memcpy(entry, p + desc_off, 8);
			} else {
				return hv_err_set(
					err, -ENOEXEC,
					"PVH entry note has a %u-byte value",
					nh.n_descsz);
			}
			*found = true;
		}
		off = next;
	}
	return 0;
}

/* A PT_LOAD segment with memory: its file data fits it, it fits guest RAM. */
static int check_load(const struct pvh_phdr *ph, unsigned int i,
		      uint64_t ram_end, uint64_t load_min, struct hv_err *err)
{
	if (ph->filesz > ph->memsz)
		return hv_err_set(err, -ENOEXEC,
				  "segment %u has more file data than memory",
				  i);
	if (ph->paddr < load_min || ph->paddr > ram_end ||
	    ph->memsz > ram_end - ph->paddr)
		return hv_err_set(err, -ENOEXEC,
				  "segment %u at 0x%llx-0x%llx does not fit "
				  "in guest RAM 0x%llx-0x%llx",
				  i, (unsigned long long)ph->paddr,
				  (unsigned long long)(ph->paddr + ph->memsz),
				  (unsigned long long)load_min,
				  (unsigned long long)ram_end);
	return 0;
}

/* Whether a PT_LOAD segment holds the entry point. */
static bool entry_loaded(const struct pvh_elf *e, uint64_t entry)
{
	struct pvh_phdr ph;

	for (unsigned int i = 0; i < e->phnum; i++) {
		get_phdr(e, i, &ph);
		if (ph.type == PT_LOAD && entry >= ph.paddr &&
		    entry - ph.paddr < ph.memsz)
			return true;
	}
	return false;
}

static int check_segments(const struct pvh_elf *e, uint64_t ram_end,
			  uint64_t load_min, struct pvh_kernel *k,
			  struct hv_err *err)
{
	bool found = false;
	unsigned int loads = 0;
	struct pvh_phdr ph;
	int ret;

	k->lo = UINT64_MAX;
	k->hi = 0;
	for (unsigned int i = 0; i < e->phnum; i++) {
		get_phdr(e, i, &ph);
		if (ph.type != PT_LOAD && ph.type != PT_NOTE)
			continue;
		if (!in_file(ph.offset, ph.filesz, e->len))
			return hv_err_set(
				err, -ENOEXEC,
				"truncated: segment %u ends past the end "
				"of the file",
				i);
		if (ph.type == PT_NOTE) {
			ret = find_entry_note(e, &ph, &k->entry, &found, err);
			if (ret)
				return ret;
			continue;
		}
		if (!ph.memsz)
			continue;
		ret = check_load(&ph, i, ram_end, load_min, err);
		if (ret)
			return ret;
		loads++;
		if (ph.paddr < k->lo)
			k->lo = ph.paddr;
		if (ph.paddr + ph.memsz > k->hi)
			k->hi = ph.paddr + ph.memsz;
	}
	if (!found)
		return hv_err_set(
			err, -ENOEXEC,
			"no PVH entry note (Xen ELF note PHYS32_ENTRY)");
	if (!loads)
		return hv_err_set(err, -ENOEXEC, "no loadable segment");
	if (!entry_loaded(e, k->entry))
		return hv_err_set(
			err, -ENOEXEC,
			"PVH entry 0x%llx is outside every loaded segment",
			(unsigned long long)k->entry);
	return 0;
}

int pvh_load_elf(const void *img, size_t len, uint8_t *ram, uint64_t ram_end,
		 uint64_t load_min, struct pvh_kernel *k, struct hv_err *err)
{
	struct pvh_elf e = { .img = img, .len = len };
	struct pvh_phdr ph;
	int ret;

	ret = parse_header(&e, err);
	if (ret)
		return ret;
	ret = check_segments(&e, ram_end, load_min, k, err);
	if (ret)
		return ret;

	for (unsigned int i = 0; i < e.phnum; i++) {
		get_phdr(&e, i, &ph);
		if (ph.type != PT_LOAD || !ph.memsz)
			continue;
		memcpy(ram + ph.paddr, e.img + ph.offset, ph.filesz);
		memset(ram + ph.paddr + ph.filesz, 0, ph.memsz - ph.filesz);
	}
	return 0;
}

int64_t pvh_write_start_info(uint8_t *area, uint64_t base, uint64_t size,
			     const struct pvh_boot_params *p)
{
	struct pvh_start_info si = {
		.magic = PVH_START_MAGIC,
		.version = 1,
		.nr_modules = p->nr_mods,
		.rsdp_paddr = p->rsdp_paddr,
		.memmap_entries = p->nr_memmap,
	};
	const char *cmdline = p->cmdline ? p->cmdline : "";
	size_t clen = strlen(cmdline) + 1;

	if (size < PVH_BOOT_CMDLINE_OFF || p->nr_mods > PVH_MAX_MODULES ||
	    p->nr_memmap > PVH_MAX_MEMMAP)
		return -EINVAL;
	if (clen > size - PVH_BOOT_CMDLINE_OFF)
		return -E2BIG;

	memset(area, 0, PVH_BOOT_CMDLINE_OFF);
	if (p->nr_mods)
		si.modlist_paddr = base + PVH_BOOT_MODLIST_OFF;
	for (unsigned int i = 0; i < p->nr_mods; i++) {
		uint64_t str = PVH_BOOT_MODSTR_OFF + i * PVH_MODSTR_MAX;
		struct pvh_modlist_entry m = {
			.paddr = p->mods[i].paddr,
			.size = p->mods[i].size,
		};

		if (p->mods[i].cmdline) {
			size_t n = strlen(p->mods[i].cmdline) + 1;

			if (n > PVH_MODSTR_MAX)
				return -E2BIG;
			memcpy(area + str, p->mods[i].cmdline, n);
			m.cmdline_paddr = base + str;
		}
		memcpy(area + PVH_BOOT_MODLIST_OFF + i * sizeof(m), &m,
		       sizeof(m));
	}
	si.memmap_paddr = base + PVH_BOOT_MEMMAP_OFF;
	memcpy(area + PVH_BOOT_MEMMAP_OFF, p->memmap,
	       p->nr_memmap * sizeof(*p->memmap));
	si.cmdline_paddr = base + PVH_BOOT_CMDLINE_OFF;
	memcpy(area + PVH_BOOT_CMDLINE_OFF, cmdline, clen);
	memcpy(area, &si, sizeof(si));
	return (int64_t)base;
}
