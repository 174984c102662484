// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the guest finds in RAM: its kernel (a PVH ELF or a bzImage, read
 * once from the file so a reset loads the same bytes), its initrd, the
 * memory map, the reset vector, the FDT, the ACPI tables and the boot
 * data (start_info or the zero page).  A reset rewrites all of it for the
 * CPUs the guest has then.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hv_err.h"
#include "acpi.h"
#include "acpi_dump.h"
#include "board_internal.h"
#include "fdt_build.h"
#include "hotvm/abi.h"
#include "log.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Both files, read once: a reset loads them again from these copies. */
int board_open_kernel(struct board *b)
{
	int ret;

	if (b->cfg->kernel)
		ret = image_read(&b->kernel, "kernel", b->cfg->kernel);
	else if ((ret = image_embedded(&b->kernel)))
		pr_err("no --kernel given and this hotvm has no built-in "
		       "guest; give --kernel PATH");
	if (!ret && b->cfg->initrd)
		ret = image_read(&b->initrd, "initrd", b->cfg->initrd);
	if (ret)
		image_free(&b->kernel);
	return ret;
}

void board_close_kernel(struct board *b)
{
	image_free(&b->kernel);
	image_free(&b->initrd);
}

/* A bzImage is never built in: it always has a --kernel name. */
static int load_bzimage(struct board *b)
{
	struct hv_err err = { 0 };
	size_t clen;
	int ret;

	ret = bzimage_load(b->kernel.data, b->kernel.size, b->vm.ram,
			   b->low_end, ABI_KERNEL_PADDR, &b->bz, &err);
	if (ret) {
		pr_err("kernel '%s': %s; %s", b->cfg->kernel, hv_err_msg(&err),
		       strstr(err.msg, "RAM")
			       ? "give more --memory"
			       : "give a 64-bit Linux bzImage (boot "
				 "protocol 2.12 or later) or its "
				 "vmlinux (PVH entry)");
		return ret;
	}
	/*
	 * The zero page is written after the devices (tables), so a command
	 * line this kernel cannot take is refused here: no console file.
	 */
	clen = b->cfg->cmdline ? strlen(b->cfg->cmdline) : 0;
	if (clen > b->bz.cmdline_max) {
		pr_err("kernel '%s': --cmdline is %zu bytes, more than the %u "
		       "this kernel takes (cmdline_size); shorten --cmdline",
		       b->cfg->kernel, clen, b->bz.cmdline_max);
		return -E2BIG;
	}
	b->boot_mode = HOTPLUG_BOOT_LINUX64;
	b->k = (struct pvh_kernel){
		.entry = b->bz.entry,
		.lo = b->bz.load,
		.hi = b->bz.end,
	};
	return 0;
}

/* By magic: an ELF boots through its PVH note, a bzImage as Linux 64-bit. */
static int load_kernel(struct board *b)
{
	const char *name = b->cfg->kernel ? b->cfg->kernel : "(built-in)";
	bool elf = b->kernel.size >= SELFMAG &&
		   !memcmp(b->kernel.data, ELFMAG, SELFMAG);
	struct hv_err err = { 0 };
	int ret;

	if (!elf && bzimage_detect(b->kernel.data, b->kernel.size))
		return load_bzimage(b);
	if (!elf) {
		pr_err("kernel '%s': not an ELF nor a bzImage (no \\x7fELF at "
		       "0, no 0xaa55 at 0x1fe and \"HdrS\" at 0x202); give a "
		       "vmlinux with a PVH entry note or a 64-bit Linux "
		       "bzImage",
		       name);
		return -ENOEXEC;
	}
	ret = pvh_load_elf(b->kernel.data, b->kernel.size, b->vm.ram,
			   b->low_end, ABI_KERNEL_PADDR, &b->k, &err);
	if (ret)
		pr_err("kernel '%s': %s; give an x86 ELF kernel with a PVH "
		       "entry note (the tiny guest or a vmlinux)%s",
		       name, hv_err_msg(&err),
		       strstr(err.msg, "RAM") ? ", or more --memory" : "");
	return ret;
}

/* The initrd goes as high as it fits below 4 GiB, page-aligned. */
static int load_initrd(struct board *b)
{
	const char *path = b->cfg->initrd;
	const struct image *img = &b->initrd;
	uint64_t lo = align_up(b->k.hi, BOARD_PAGE_SIZE);
	uint64_t top = b->low_end;

	if (!path)
		return 0;
	/* A bzImage says how high its initrd may go (initrd_addr_max). */
	if (b->boot_mode == HOTPLUG_BOOT_LINUX64 && b->bz.initrd_max < top - 1)
		top = b->bz.initrd_max + 1;
	if (img->size > top || top - img->size < lo) {
		if (top < b->low_end)
			pr_err("initrd '%s': %zu bytes do not fit between the "
			       "kernel and its initrd_addr_max 0x%llx; give a "
			       "smaller initrd",
			       path, img->size,
			       (unsigned long long)b->bz.initrd_max);
		else
			pr_err("initrd '%s': %zu bytes do not fit in guest RAM "
			       "after the kernel; give more --memory",
			       path, img->size);
		return -E2BIG;
	}
	b->initrd_gpa = (top - img->size) & ~(BOARD_PAGE_SIZE - 1);
	b->initrd_size = img->size;
	memcpy(b->vm.ram + b->initrd_gpa, img->data, img->size);
	return 0;
}

int board_load_images(struct board *b)
{
	return load_kernel(b) ?: load_initrd(b);
}

static void add_memmap(struct board *b, uint64_t addr, uint64_t size,
		       uint32_t type)
{
	b->memmap[b->nr_memmap++] = (struct pvh_memmap_entry){
		.addr = addr,
		.size = size,
		.type = type,
	};
}

static void build_memmap(struct board *b)
{
	uint64_t high = b->vm.ram_size - b->low_end;

	if (b->boot_mode == HOTPLUG_BOOT_LINUX64) {
		/* The entry's page tables and GDT: Linux must not reuse them. */
		add_memmap(b, 0, ABI_BOOT64_PADDR, PVH_MEMMAP_RAM);
		add_memmap(b, ABI_BOOT64_PADDR, ABI_BOOT64_SIZE,
			   PVH_MEMMAP_RESERVED);
		add_memmap(b, ABI_BOOT64_PADDR + ABI_BOOT64_SIZE,
			   ABI_LOWMEM_END - ABI_BOOT64_PADDR - ABI_BOOT64_SIZE,
			   PVH_MEMMAP_RAM);
	} else {
		add_memmap(b, 0, ABI_LOWMEM_END, PVH_MEMMAP_RAM);
	}
	add_memmap(b, ABI_LOWMEM_END, ABI_ACPI_PADDR - ABI_LOWMEM_END,
		   PVH_MEMMAP_RESERVED);
	add_memmap(b, ABI_ACPI_PADDR, ABI_KERNEL_PADDR - ABI_ACPI_PADDR,
		   PVH_MEMMAP_ACPI);
	add_memmap(b, ABI_KERNEL_PADDR, b->low_end - ABI_KERNEL_PADDR,
		   PVH_MEMMAP_RAM);
	if (high)
		add_memmap(b, VM_HIGH_RAM_GPA, high, PVH_MEMMAP_RAM);
}

/* The Linux 64-bit entry's boot data: its page tables and the zero page. */
static int write_zero_page(struct board *b)
{
	struct hv_err err = { 0 };
	int64_t zp;

	if (bzimage_write_boot_tables(b->vm.ram + ABI_BOOT64_PADDR,
				      ABI_BOOT64_SIZE)) {
		pr_err("cannot write the boot page tables: no room at 0x%lx",
		       ABI_BOOT64_PADDR);
		return -EINVAL;
	}
	zp = bzimage_write_zero_page(b->vm.ram + ABI_BOOTDATA_PADDR,
				     ABI_BOOTDATA_PADDR, ABI_BOOTDATA_SIZE,
				     &b->bz,
				     &(struct bzimage_boot_params){
					     .cmdline = b->cfg->cmdline,
					     .initrd_paddr = b->initrd_gpa,
					     .initrd_size = b->initrd_size,
					     .memmap = b->memmap,
					     .nr_memmap = b->nr_memmap,
					     .rsdp_paddr = ABI_ACPI_PADDR,
				     },
				     &err);
	if (zp < 0) {
		pr_err("kernel '%s': %s%s", b->cfg->kernel, hv_err_msg(&err),
		       zp == -E2BIG ? "; shorten --cmdline" : "");
		return (int)zp;
	}
	b->start_info = (uint64_t)zp;
	return 0;
}

/*
 * Real-mode code at the reset vector: the reset register's value to its
 * port, then halt.  Linux's last way to reboot when it has no firmware to
 * call jumps here.
 */
static void write_reset_vector(struct board *b)
{
	static const uint8_t code[] = {
		0xb0,
		ABI_PM_RESET_VALUE, /* mov al, value */
		0xba,
		(ABI_PM_PORT + ABI_PM_RESET) & 0xff,
		(ABI_PM_PORT + ABI_PM_RESET) >> 8, /* mov dx, port */
		0xee,				   /* out dx, al */
		0xfa,				   /* cli */
		0xf4,				   /* hlt */
		0xeb,
		0xfd, /* jmp to the hlt */
	};

	memcpy(b->vm.ram + ABI_RESET_VECTOR_PADDR, code, sizeof(code));
}

/*
 * The ACPI tables for buf at ABI_ACPI_PADDR: for a run and --dump-acpi.
 * @present: which CPUs the guest finds at boot (NULL: the boot CPUs).
 */
static long build_acpi(void *buf, const struct board_config *c,
		       const bool *present)
{
	const struct board_cpus *cpus = &c->cpus;
	struct acpi_config cfg = {
		.base = ABI_ACPI_PADDR,
		.boot_cpus = cpus->boot,
		.max_cpus = cpus->max,
		.present = present,
	};
	long size;

	cfg.devs = board_devices_for(c, &cfg.nr_devs);
	size = acpi_build(buf, ABI_ACPI_MAX, &cfg);

	if (size < 0)
		pr_err("--cpus max=%u: cannot build the ACPI tables: %s; use "
		       "fewer --cpus max",
		       cpus->max,
		       size == -E2BIG ? "they do not fit in the ACPI area"
				      : strerror((int)-size));
	return size;
}

/*
 * PVH's hvm_start_info with its modules (the initrd, then the FDT of
 * @fdt_size bytes at ABI_FDT_PADDR), memory map, command line and RSDP.
 */
static int write_start_info(struct board *b, long fdt_size)
{
	struct pvh_boot_module mods[PVH_MAX_MODULES];
	unsigned int nr_mods = 0;
	int64_t si;

	/* Linux's PVH entry takes module 0 as its ramdisk: the FDT follows. */
	if (b->initrd_size)
		mods[nr_mods++] = (struct pvh_boot_module){
			.paddr = b->initrd_gpa,
			.size = b->initrd_size,
		};
	mods[nr_mods++] = (struct pvh_boot_module){
		.paddr = ABI_FDT_PADDR,
		.size = (uint64_t)fdt_size,
		.cmdline = ABI_FDT_MODULE_CMDLINE,
	};
	si = pvh_write_start_info(b->vm.ram + ABI_BOOTDATA_PADDR,
				  ABI_BOOTDATA_PADDR, ABI_BOOTDATA_SIZE,
				  &(struct pvh_boot_params){
					  .cmdline = b->cfg->cmdline,
					  .mods = mods,
					  .nr_mods = nr_mods,
					  .memmap = b->memmap,
					  .nr_memmap = b->nr_memmap,
					  .rsdp_paddr = ABI_ACPI_PADDR,
				  });
	if (si < 0) {
		pr_err("--cmdline: too long; keep it under %lu bytes",
		       ABI_BOOTDATA_SIZE - PVH_BOOT_CMDLINE_OFF);
		return (int)si;
	}
	b->start_info = (uint64_t)si;
	return 0;
}

static int build_tables(struct board *b, const bool *present)
{
	const struct board_cpus *cpus = &b->cfg->cpus;
	struct fdt_build_range ram[PVH_MAX_MEMMAP];
	struct fdt_build_config fdt = {
		.ram = ram,
		.boot_cpus = cpus->boot,
		.max_cpus = cpus->max,
		.present = present,
		.cmdline = b->cfg->cmdline,
	};
	long fdt_size, acpi_size;

	for (unsigned int i = 0; i < b->nr_memmap; i++)
		if (b->memmap[i].type == PVH_MEMMAP_RAM)
			ram[fdt.nr_ram++] = (struct fdt_build_range){
				.base = b->memmap[i].addr,
				.size = b->memmap[i].size,
			};
	fdt.devs = board_devices_for(b->cfg, &fdt.nr_devs);
	fdt_size =
		fdt_build_machine(b->vm.ram + ABI_FDT_PADDR, ABI_FDT_MAX, &fdt);
	if (fdt_size < 0) {
		pr_err("cannot build the device tree: %s; use fewer --cpus max "
		       "or a shorter --cmdline",
		       strerror((int)-fdt_size));
		return (int)fdt_size;
	}
	acpi_size = build_acpi(b->vm.ram + ABI_ACPI_PADDR, b->cfg, present);
	if (acpi_size < 0)
		return (int)acpi_size;
	/* The FDT is built all the same; only PVH hands it over. */
	if (b->boot_mode == HOTPLUG_BOOT_LINUX64)
		return write_zero_page(b);

	return write_start_info(b, fdt_size);
}

/* For the CPUs the guest finds at boot: the boot CPUs, or after a reset
 * every CPU it had. */
int board_write_tables(struct board *b)
{
	unsigned int max = b->cfg->cpus.max;
	bool *present = calloc(max, sizeof(*present));
	int ret;

	if (!present) {
		pr_err("out of memory for the firmware tables");
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < max; i++)
		present[i] = hotplug_present_at_boot(b->hp, i);
	b->nr_memmap = 0;
	build_memmap(b);
	write_reset_vector(b);
	ret = build_tables(b, present);
	free(present);
	if (!ret)
		hotplug_set_entry(b->hp, b->boot_mode, b->k.entry,
				  b->start_info);
	return ret;
}

int board_dump_acpi(const struct board_config *c, const char *dir)
{
	void *buf;
	long size;
	int ret;

	if (acpi_dump_check_dir(dir))
		return ABI_STATUS_USAGE;
	buf = malloc(ABI_ACPI_MAX);
	if (!buf) {
		pr_err("--dump-acpi: out of memory");
		return ABI_STATUS_VMFAIL;
	}
	size = build_acpi(buf, c, NULL);
	ret = size < 0
		      ? (int)size
		      : acpi_dump_write(dir, buf, (size_t)size, ABI_ACPI_PADDR);
	free(buf);
	return ret ? ABI_STATUS_USAGE : 0;
}
