// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hotvm run`: checks the input, builds the machine (VM, RAM, devices,
 * vCPU slots, the control API, then kernel, initrd, FDT, ACPI, start_info
 * and the boot vCPUs), runs it until something asks it to stop, and tears
 * it down again: every thread joined, every fd closed.  Input problems are
 * reported before any KVM resource exists where possible, so they fail
 * fast and leave nothing behind.  A reset walks the same start-up table
 * down to the first step a reset redoes and back up (machine_reset()).
 */
#include <elf.h>
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "acpi.h"
#include "acpi_dump.h"
#include "acpi_pm.h"
#include "fdt_build.h"
#include "hooks.h"
#include "hotplug.h"
#include "hotplug_vmm.h"
#include "hotvm/abi.h"
#include "qmp.h"
#include "qmp_cmds.h"
#include "bzimage.h"
#include "cli.h"
#include "debug_exit.h"
#include "image.h"
#include "bus.h"
#include "log.h"
#include "pvh.h"
#include "run.h"
#include "seccomp_policy.h"
#include "serial.h"
#include "vcpu.h"
#include "vm.h"

#define PAGE_SIZE 4096ULL

struct machine {
	const struct cli_run_opts *opts;
	struct vm vm;
	struct bus io;
	struct bus mmio;
	struct serial serial;
	struct pm pm;
	struct hooks hooks;
	struct hotplug *hp; /* owns every vCPU */
	struct qmp_server *qmp;
	int sig_fd;
	size_t up; /* machine_steps[] set up, from the first */

	struct image kernel, initrd;
	enum hotplug_boot_mode boot_mode;
	struct pvh_kernel k;
	struct bzimage_kernel bz;
	uint64_t low_end; /* end of RAM below 4 GiB */
	uint64_t initrd_gpa, initrd_size;

	struct pvh_memmap_entry memmap[PVH_MAX_MEMMAP];
	unsigned int nr_memmap;
	uint64_t start_info;
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int check_memory(uint64_t mem)
{
	if (mem < VM_MIN_MEMORY) {
		bool mib = !(mem % (1ULL << 20));

		pr_err("--memory %llu%s: too small; hotvm needs at least %lluM",
		       (unsigned long long)(mib ? mem >> 20 : mem >> 10),
		       mib ? "M" : "K",
		       (unsigned long long)(VM_MIN_MEMORY >> 20));
		return -EINVAL;
	}
	if (mem > VM_MAX_MEMORY) {
		pr_err("--memory: %lluG is more than hotvm supports; give at "
		       "most %lluG",
		       (unsigned long long)(mem >> 30),
		       (unsigned long long)(VM_MAX_MEMORY >> 30));
		return -EINVAL;
	}
	if (mem % PAGE_SIZE) {
		pr_err("--memory %llu: not a multiple of 4K; round it to whole "
		       "pages",
		       (unsigned long long)mem);
		return -EINVAL;
	}
	return 0;
}

/* Both files, read once: a reset loads them again from these copies. */
static int open_kernel(struct machine *m)
{
	int ret;

	if (m->opts->kernel)
		ret = image_read(&m->kernel, "kernel", m->opts->kernel);
	else if ((ret = image_embedded(&m->kernel)))
		pr_err("no --kernel given and this hotvm has no built-in "
		       "guest; give --kernel PATH");
	if (!ret && m->opts->initrd)
		ret = image_read(&m->initrd, "initrd", m->opts->initrd);
	if (ret)
		image_free(&m->kernel);
	return ret;
}

/* A bzImage is never built in: it always has a --kernel name. */
static int load_bzimage(struct machine *m)
{
	char why[200];
	int ret;

	ret = bzimage_load(m->kernel.data, m->kernel.size, m->vm.ram,
			   m->low_end, ABI_KERNEL_PADDR, &m->bz, why,
			   sizeof(why));
	if (ret) {
		pr_err("kernel '%s': %s; %s", m->opts->kernel, why,
		       strstr(why, "RAM") ? "give more --memory"
					  : "give a 64-bit Linux bzImage (boot "
					    "protocol 2.12 or later) or its "
					    "vmlinux (PVH entry)");
		return ret;
	}
	m->boot_mode = HOTPLUG_BOOT_LINUX64;
	m->k = (struct pvh_kernel){
		.entry = m->bz.entry,
		.lo = m->bz.load,
		.hi = m->bz.end,
	};
	return 0;
}

/* By magic: an ELF boots through its PVH note, a bzImage as Linux 64-bit. */
static int load_kernel(struct machine *m)
{
	const char *name = m->opts->kernel ? m->opts->kernel : "(built-in)";
	bool elf = m->kernel.size >= SELFMAG &&
		   !memcmp(m->kernel.data, ELFMAG, SELFMAG);
	char why[200];
	int ret;

	if (!elf && bzimage_detect(m->kernel.data, m->kernel.size))
		return load_bzimage(m);
	if (!elf) {
		pr_err("kernel '%s': not an ELF nor a bzImage (no \\x7fELF at "
		       "0, no 0xaa55 at 0x1fe and \"HdrS\" at 0x202); give a "
		       "vmlinux with a PVH entry note or a 64-bit Linux "
		       "bzImage",
		       name);
		return -ENOEXEC;
	}
	ret = pvh_load_elf(m->kernel.data, m->kernel.size, m->vm.ram,
			   m->low_end, ABI_KERNEL_PADDR, &m->k, why,
			   sizeof(why));
	if (ret)
		pr_err("kernel '%s': %s; give an x86 ELF kernel with a PVH "
		       "entry note (the tiny guest or a vmlinux)%s",
		       name, why,
		       strstr(why, "RAM") ? ", or more --memory" : "");
	return ret;
}

/* The initrd goes as high as it fits below 4 GiB, page-aligned. */
static int load_initrd(struct machine *m)
{
	const char *path = m->opts->initrd;
	const struct image *img = &m->initrd;
	uint64_t lo = align_up(m->k.hi, PAGE_SIZE);
	uint64_t top = m->low_end;

	if (!path)
		return 0;
	/* A bzImage says how high its initrd may go (initrd_addr_max). */
	if (m->boot_mode == HOTPLUG_BOOT_LINUX64 && m->bz.initrd_max < top - 1)
		top = m->bz.initrd_max + 1;
	if (img->size > top || top - img->size < lo) {
		if (top < m->low_end)
			pr_err("initrd '%s': %zu bytes do not fit between the "
			       "kernel and its initrd_addr_max 0x%llx; give a "
			       "smaller initrd",
			       path, img->size,
			       (unsigned long long)m->bz.initrd_max);
		else
			pr_err("initrd '%s': %zu bytes do not fit in guest RAM "
			       "after the kernel; give more --memory",
			       path, img->size);
		return -E2BIG;
	}
	m->initrd_gpa = (top - img->size) & ~(PAGE_SIZE - 1);
	m->initrd_size = img->size;
	memcpy(m->vm.ram + m->initrd_gpa, img->data, img->size);
	return 0;
}

static void add_memmap(struct machine *m, uint64_t addr, uint64_t size,
		       uint32_t type)
{
	m->memmap[m->nr_memmap++] = (struct pvh_memmap_entry){
		.addr = addr,
		.size = size,
		.type = type,
	};
}

static void build_memmap(struct machine *m)
{
	uint64_t high = m->vm.ram_size - m->low_end;

	if (m->boot_mode == HOTPLUG_BOOT_LINUX64) {
		/* The entry's page tables and GDT: Linux must not reuse them. */
		add_memmap(m, 0, ABI_BOOT64_PADDR, PVH_MEMMAP_RAM);
		add_memmap(m, ABI_BOOT64_PADDR, ABI_BOOT64_SIZE,
			   PVH_MEMMAP_RESERVED);
		add_memmap(m, ABI_BOOT64_PADDR + ABI_BOOT64_SIZE,
			   ABI_LOWMEM_END - ABI_BOOT64_PADDR - ABI_BOOT64_SIZE,
			   PVH_MEMMAP_RAM);
	} else {
		add_memmap(m, 0, ABI_LOWMEM_END, PVH_MEMMAP_RAM);
	}
	add_memmap(m, ABI_LOWMEM_END, ABI_ACPI_PADDR - ABI_LOWMEM_END,
		   PVH_MEMMAP_RESERVED);
	add_memmap(m, ABI_ACPI_PADDR, ABI_KERNEL_PADDR - ABI_ACPI_PADDR,
		   PVH_MEMMAP_ACPI);
	add_memmap(m, ABI_KERNEL_PADDR, m->low_end - ABI_KERNEL_PADDR,
		   PVH_MEMMAP_RAM);
	if (high)
		add_memmap(m, VM_HIGH_RAM_GPA, high, PVH_MEMMAP_RAM);
}

/* The Linux 64-bit entry's boot data: its page tables and the zero page. */
static int write_zero_page(struct machine *m)
{
	char why[200];
	int64_t zp;

	if (bzimage_write_boot_tables(m->vm.ram + ABI_BOOT64_PADDR,
				      ABI_BOOT64_SIZE)) {
		pr_err("cannot write the boot page tables: no room at 0x%lx",
		       ABI_BOOT64_PADDR);
		return -EINVAL;
	}
	zp = bzimage_write_zero_page(m->vm.ram + ABI_BOOTDATA_PADDR,
				     ABI_BOOTDATA_PADDR, ABI_BOOTDATA_SIZE,
				     &m->bz,
				     &(struct bzimage_boot_params){
					     .cmdline = m->opts->cmdline,
					     .initrd_paddr = m->initrd_gpa,
					     .initrd_size = m->initrd_size,
					     .memmap = m->memmap,
					     .nr_memmap = m->nr_memmap,
					     .rsdp_paddr = ABI_ACPI_PADDR,
				     },
				     why, sizeof(why));
	if (zp < 0) {
		pr_err("kernel '%s': %s%s", m->opts->kernel, why,
		       zp == -E2BIG ? "; shorten --cmdline" : "");
		return (int)zp;
	}
	m->start_info = (uint64_t)zp;
	return 0;
}

/*
 * Real-mode code at the reset vector: the reset register's value to its
 * port, then halt.  Linux's last way to reboot when it has no firmware to
 * call jumps here.
 */
static void write_reset_vector(struct machine *m)
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

	memcpy(m->vm.ram + ABI_RESET_VECTOR_PADDR, code, sizeof(code));
}

/*
 * The ACPI tables for buf at ABI_ACPI_PADDR: for a run and --dump-acpi.
 * @present: which CPUs the guest finds at boot (NULL: the boot CPUs).
 */
static long build_acpi(void *buf, const struct cli_cpus *cpus,
		       const bool *present)
{
	long size = acpi_build(buf, ABI_ACPI_MAX,
			       &(struct acpi_config){
				       .base = ABI_ACPI_PADDR,
				       .boot_cpus = cpus->boot,
				       .max_cpus = cpus->max,
				       .present = present,
			       });

	if (size < 0)
		pr_err("--cpus max=%u: cannot build the ACPI tables: %s; use "
		       "fewer --cpus max",
		       cpus->max,
		       size == -E2BIG ? "they do not fit in the ACPI area"
				      : strerror((int)-size));
	return size;
}

static int build_tables(struct machine *m, const bool *present)
{
	const struct cli_cpus *cpus = &m->opts->cpus;
	struct fdt_build_range ram[PVH_MAX_MEMMAP];
	unsigned int nr_ram = 0;
	long fdt_size, acpi_size;
	int64_t si;

	for (unsigned int i = 0; i < m->nr_memmap; i++)
		if (m->memmap[i].type == PVH_MEMMAP_RAM)
			ram[nr_ram++] = (struct fdt_build_range){
				.base = m->memmap[i].addr,
				.size = m->memmap[i].size,
			};
	fdt_size = fdt_build_machine(m->vm.ram + ABI_FDT_PADDR, ABI_FDT_MAX,
				     &(struct fdt_build_config){
					     .ram = ram,
					     .nr_ram = nr_ram,
					     .boot_cpus = cpus->boot,
					     .max_cpus = cpus->max,
					     .present = present,
					     .cmdline = m->opts->cmdline,
				     });
	if (fdt_size < 0) {
		pr_err("cannot build the device tree: %s; use fewer --cpus max "
		       "or a shorter --cmdline",
		       strerror((int)-fdt_size));
		return (int)fdt_size;
	}
	acpi_size = build_acpi(m->vm.ram + ABI_ACPI_PADDR, cpus, present);
	if (acpi_size < 0)
		return (int)acpi_size;
	/* The FDT is built all the same; only PVH hands it over. */
	if (m->boot_mode == HOTPLUG_BOOT_LINUX64)
		return write_zero_page(m);

	/* Linux's PVH entry takes module 0 as its ramdisk: the FDT follows. */
	struct pvh_boot_module mods[PVH_MAX_MODULES];
	unsigned int nr_mods = 0;

	if (m->initrd_size)
		mods[nr_mods++] = (struct pvh_boot_module){
			.paddr = m->initrd_gpa,
			.size = m->initrd_size,
		};
	mods[nr_mods++] = (struct pvh_boot_module){
		.paddr = ABI_FDT_PADDR,
		.size = (uint64_t)fdt_size,
		.cmdline = ABI_FDT_MODULE_CMDLINE,
	};
	si = pvh_write_start_info(m->vm.ram + ABI_BOOTDATA_PADDR,
				  ABI_BOOTDATA_PADDR, ABI_BOOTDATA_SIZE,
				  &(struct pvh_boot_params){
					  .cmdline = m->opts->cmdline,
					  .mods = mods,
					  .nr_mods = nr_mods,
					  .memmap = m->memmap,
					  .nr_memmap = m->nr_memmap,
					  .rsdp_paddr = ABI_ACPI_PADDR,
				  });
	if (si < 0) {
		pr_err("--cmdline: too long; keep it under %lu bytes",
		       ABI_BOOTDATA_SIZE - PVH_BOOT_CMDLINE_OFF);
		return (int)si;
	}
	m->start_info = (uint64_t)si;
	return 0;
}

/* The guest's poweroff and reboot, from the power-management device. */
static void machine_poweroff(void *ctx)
{
	vm_shutdown(ctx, 0, VM_CAUSE_GUEST_SHUTDOWN,
		    "the guest powered the machine off");
}

static void machine_reboot(void *ctx)
{
	vm_request_reset(ctx, VM_CAUSE_GUEST_RESET, 0,
			 "the guest reset the machine (--no-reboot)");
}

static const struct pm_ops machine_pm_ops = {
	.poweroff = machine_poweroff,
	.reset = machine_reboot,
};

/* Registration can fail only on a clash: the UART is closed again then. */
static int setup_devices(struct machine *m)
{
	const struct cli_serial *sc = &m->opts->serial;
	int ret;

	ret = serial_open(&m->serial, sc->sink, sc->path, &m->vm, ABI_COM1_IRQ);
	if (ret) {
		pr_err("--serial file:%s: %s; check the directory exists and "
		       "is writable",
		       sc->path, strerror(-ret));
		serial_close(&m->serial);
		return ret;
	}
	ret = serial_register(&m->serial, &m->io, ABI_COM1_PORT);
	if (!ret)
		ret = debug_exit_register(&m->io, &m->vm, ABI_DEBUG_EXIT_PORT);
	pm_init(&m->pm, &machine_pm_ops, &m->vm);
	if (!ret)
		ret = pm_register(&m->pm, &m->io);
	if (ret) {
		pr_err("cannot register the I/O ports: %s", strerror(-ret));
		serial_close(&m->serial);
	}
	return ret;
}

static int create_hotplug(struct machine *m)
{
	const struct cli_run_opts *o = m->opts;

	return hotplug_create(
		&(struct hotplug_config){
			.vm = &m->vm,
			.io = &m->io,
			.mmio = &m->mmio,
			.boot_cpus = o->cpus.boot,
			.max_cpus = o->cpus.max,
			.hooks = &m->hooks,
			.timeout_ms = o->hotplug_timeout_ms,
			.wait = (enum hotplug_wait)o->hotplug_wait,
			.prestage = o->prestage,
			.guest_eject = (enum hotplug_guest_eject)o->guest_eject,
		},
		&m->hp);
}

/* Hooks are checked before anything exists: a typo fails fast. */
static int setup_hooks(struct machine *m)
{
	const struct cli_run_opts *o = m->opts;
	char err[512];

	hooks_init(&m->hooks, o->name, o->hook_timeout_ms);
	for (unsigned int i = 0; i < o->nr_hooks; i++) {
		if (hooks_add(&m->hooks, o->hooks[i], err, sizeof(err))) {
			pr_err("%s", err);
			return -EINVAL;
		}
	}
	return 0;
}

/* --api-group: a group name, or a number. */
static int api_group(const char *name, gid_t *gid)
{
	struct group *gr;
	char *end;
	long v;

	errno = 0;
	gr = getgrnam(name);
	if (gr) {
		*gid = gr->gr_gid;
		return 0;
	}
	v = strtol(name, &end, 10);
	if (*name && !*end && v >= 0 && v < (long)(gid_t)-1) {
		*gid = (gid_t)v;
		return 0;
	}
	pr_err("--api-group %s: no such group%s%s; give a group name or "
	       "number",
	       name, errno ? ": " : "", errno ? strerror(errno) : "");
	return -ENOENT;
}

/* The socket is bound before the VM exists, so a bad path fails fast. */
static int create_qmp(struct machine *m)
{
	const char *path = m->opts->api_socket;
	struct qmp_server_opts qo = { .path = path };
	int ret;

	if (!path) {
		if (m->opts->api_group)
			pr_err("--api-group needs --api-socket");
		return m->opts->api_group ? -EINVAL : 0;
	}
	if (m->opts->api_group) {
		ret = api_group(m->opts->api_group, &qo.api_gid);
		if (ret)
			return ret;
		qo.api_group = true;
	}
	ret = qmp_server_create(&qo, &m->qmp);
	if (ret)
		pr_err("--api-socket %s: %s; %s", path, strerror(-ret),
		       ret == -EADDRINUSE ? "another VM is listening there, "
					    "give another path"
					  : "give a path in a writable "
					    "directory, not an existing file");
	return ret;
}

/*
 * The signals that stop the machine as SIGTERM does, with the socket
 * removed and every thread joined: each whose default action would kill the
 * VMM on the spot.  Not the faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGTRAP, SIGABRT, SIGSYS), which must still end it at once, nor the
 * vCPU kick (SIGUSR1), nor the real-time signals, which keep their default.
 */
static const int stop_signals[] = {
	SIGHUP,	 SIGINT,    SIGQUIT, SIGTERM, SIGUSR2,
	SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGPWR,
};

/*
 * The stop signals arrive through a signalfd, so they must be blocked in
 * every thread: block them before any vCPU thread exists.  The kick signal
 * is blocked here too and unblocked by each vCPU thread.
 */
static int setup_signals(struct machine *m)
{
	const size_t nr = sizeof(stop_signals) / sizeof(stop_signals[0]);
	struct sigaction hup;
	sigset_t set;
	int ret;

	ret = vcpu_signal_init();
	if (ret)
		return ret;
	/* A closed console pipe must not kill the VMM mid-run. */
	signal(SIGPIPE, SIG_IGN);
	/*
	 * A SIGHUP ignored by nohup stays ignored and out of the set:
	 * surviving the hangup is what was asked, and a blocked signal is
	 * queued even when ignored.
	 */
	sigaction(SIGHUP, NULL, &hup);
	sigemptyset(&set);
	for (size_t i = 0; i < nr; i++)
		if (stop_signals[i] != SIGHUP || hup.sa_handler != SIG_IGN)
			sigaddset(&set, stop_signals[i]);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/*
	 * An ignored signal never reaches a signalfd, and a shell starts
	 * background jobs with SIGINT and SIGQUIT ignored: take the defaults
	 * back (safe now that all are blocked).
	 */
	for (size_t i = 0; i < nr; i++)
		if (sigismember(&set, stop_signals[i]))
			signal(stop_signals[i], SIG_DFL);
	sigdelset(&set, VCPU_KICK_SIGNAL);
	m->sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	return m->sig_fd < 0 ? -errno : 0;
}

static int input_memory(struct machine *m)
{
	return check_memory(m->opts->memory);
}

static void close_kernel(struct machine *m)
{
	image_free(&m->kernel);
	image_free(&m->initrd);
}

static void free_qmp(struct machine *m)
{
	qmp_server_stop(m->qmp); /* never started here: frees, unlinks */
	m->qmp = NULL;
}

static int start_signals(struct machine *m)
{
	int ret = setup_signals(m);

	if (ret)
		pr_err("cannot set up signal handling: %s", strerror(-ret));
	return ret;
}

static void close_signals(struct machine *m)
{
	close(m->sig_fd);
	m->sig_fd = -1;
}

static int load_seccomp(struct machine *m)
{
	return seccomp_setup(m->opts->seccomp, m->opts->nr_hooks > 0);
}

static int open_kvm(struct machine *m)
{
	int ret = vm_kvm_open(&m->vm);

	m->vm.no_reboot = m->opts->no_reboot;
	return ret;
}

static void destroy_vm(struct machine *m)
{
	vm_destroy(&m->vm);
}

static int input_cpus(struct machine *m)
{
	const struct cli_run_opts *o = m->opts;

	if (o->cpus.max <= m->vm.max_vcpus)
		return 0;
	pr_err("--cpus max=%u: more than this KVM's limit of %u vCPUs; "
	       "give max=%u or less",
	       o->cpus.max, m->vm.max_vcpus, m->vm.max_vcpus);
	return -EINVAL;
}

static int create_vm(struct machine *m)
{
	int ret = vm_create(&m->vm, m->opts->memory, m->opts->cpus.max);

	if (!ret)
		m->low_end = m->vm.regions[0].size;
	return ret;
}

static int load_images(struct machine *m)
{
	return load_kernel(m) ?: load_initrd(m);
}

/* For the CPUs the guest finds at boot: the boot CPUs, or after a reset
 * every CPU it had. */
static int write_tables(struct machine *m)
{
	unsigned int max = m->opts->cpus.max;
	bool *present = calloc(max, sizeof(*present));
	int ret;

	if (!present) {
		pr_err("out of memory for the firmware tables");
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < max; i++)
		present[i] = hotplug_present_at_boot(m->hp, i);
	m->nr_memmap = 0;
	build_memmap(m);
	write_reset_vector(m);
	ret = build_tables(m, present);
	free(present);
	if (!ret)
		hotplug_set_entry(m->hp, m->boot_mode, m->k.entry,
				  m->start_info);
	return ret;
}

static void close_devices(struct machine *m)
{
	serial_close(&m->serial);
}

static void destroy_hotplug(struct machine *m)
{
	hotplug_destroy(m->hp); /* joins and closes every vCPU */
	m->hp = NULL;
}

static int register_qmp(struct machine *m)
{
	if (!m->qmp || !qmp_cmds_register(m->qmp, m->hp, &m->vm))
		return 0;
	pr_err("cannot register the QMP commands");
	return -ENOMEM;
}

static void unregister_qmp(struct machine *m)
{
	if (m->qmp)
		qmp_cmds_unregister(m->hp);
}

/* The interrupt controllers as at power-on, then the vCPUs. */
static int boot_vcpus(struct machine *m)
{
	int ret = vm_reset_irqchip(&m->vm);

	if (ret && ret != -ENODATA)
		pr_err("cannot reset the interrupt controllers: %s",
		       strerror(-ret));
	else
		ret = hotplug_boot(m->hp);
	if (ret)
		pr_err("the VM failed: the boot vCPUs did not start");
	return ret;
}

static void unboot_vcpus(struct machine *m)
{
	hotplug_unboot(m->hp);
}

/* The server runs across resets, as QEMU's monitor. */
static int start_qmp(struct machine *m)
{
	int ret = m->qmp ? qmp_server_start(m->qmp) : 0;

	if (ret)
		pr_err("the VM failed: the QMP server did not start");
	return ret;
}

/*
 * In this order: detach the callbacks so no late event reaches the
 * server, and join the server's threads (a command running on one fails
 * with -ESHUTDOWN: run_main() stopped the controller first); the command
 * state they used is freed later, by api:commands.  The server removes
 * its socket file.
 */
static void stop_qmp(struct machine *m)
{
	if (!m->qmp)
		return;
	qmp_cmds_detach(m->hp);
	free_qmp(m);
}

/*
 * The machine's start-up, walked forward by machine_build and unwound
 * backward by machine_unwind from the last step that succeeded, as the
 * vCPU tables are.  A step that fails cleans up after itself and says why;
 * .status is the exit status it ends the run with.  A reset walks the
 * steps marked .reset down and up again, the others staying as they are:
 * the vCPUs stopped and reset, the kernel and initrd loaded again, the
 * tables rebuilt for the CPUs the guest has, the vCPUs booted.
 */
struct machine_step {
	const char *name;
	int (*setup)(struct machine *m);
	void (*teardown)(struct machine *m);
	int status;
	bool reset; /* a reset redoes this step */
};

static const struct machine_step machine_steps[] = {
	/* Input first, before any KVM resource: a typo fails fast. */
	{ .name = "input:memory",
	  .setup = input_memory,
	  .status = ABI_STATUS_USAGE },
	{ .name = "input:hooks",
	  .setup = setup_hooks,
	  .status = ABI_STATUS_USAGE },
	{ .name = "kernel:open",
	  .setup = open_kernel,
	  .teardown = close_kernel,
	  .status = ABI_STATUS_USAGE },
	/* The socket is bound early, so a bad path fails fast too. */
	{ .name = "api:bind",
	  .setup = create_qmp,
	  .teardown = free_qmp,
	  .status = ABI_STATUS_USAGE },
	/* Before any thread: the stop signals must be blocked in all. */
	{ .name = "signals",
	  .setup = start_signals,
	  .teardown = close_signals,
	  .status = ABI_STATUS_VMFAIL },
	/* Before any thread: each loads its own filter as it starts. */
	{ .name = "seccomp",
	  .setup = load_seccomp,
	  .status = ABI_STATUS_VMFAIL },
	/* Its teardown releases the whole VM, which is one object. */
	{ .name = "kvm:open",
	  .setup = open_kvm,
	  .teardown = destroy_vm,
	  .status = ABI_STATUS_VMFAIL },
	/* Only an open /dev/kvm knows its vCPU limit. */
	{ .name = "input:cpus",
	  .setup = input_cpus,
	  .status = ABI_STATUS_USAGE },
	{ .name = "vm:create",
	  .setup = create_vm,
	  .status = ABI_STATUS_VMFAIL },
	/*
	 * A reset redoes this step, the tables and the boot (.reset).  Before
	 * the devices: a kernel that does not load leaves no console file.
	 */
	{ .name = "kernel:load",
	  .setup = load_images,
	  .status = ABI_STATUS_USAGE,
	  .reset = true },
	{ .name = "devices",
	  .setup = setup_devices,
	  .teardown = close_devices,
	  .status = ABI_STATUS_USAGE },
	/* The vCPU slots, none created yet; destroying joins every one. */
	{ .name = "hotplug",
	  .setup = create_hotplug,
	  .teardown = destroy_hotplug,
	  .status = ABI_STATUS_VMFAIL },
	{ .name = "api:commands",
	  .setup = register_qmp,
	  .teardown = unregister_qmp,
	  .status = ABI_STATUS_VMFAIL },
	/* After the loaders: the memory map and start_info need their ends. */
	{ .name = "tables",
	  .setup = write_tables,
	  .status = ABI_STATUS_USAGE,
	  .reset = true },
	{ .name = "vcpus:boot",
	  .setup = boot_vcpus,
	  .teardown = unboot_vcpus,
	  .status = ABI_STATUS_VMFAIL,
	  .reset = true },
	/*
	 * Last up, first down: a client finds the guest running, as QEMU's
	 * monitor does; a reset leaves the server and its clients be.
	 */
	{ .name = "api:start",
	  .setup = start_qmp,
	  .teardown = stop_qmp,
	  .status = ABI_STATUS_VMFAIL },
};

#define MACHINE_STEPS (sizeof(machine_steps) / sizeof(machine_steps[0]))

/* Unwinds the steps that are up down to @to, last first. */
static void machine_unwind(struct machine *m, size_t to)
{
	while (m->up > to) {
		const struct machine_step *st = &machine_steps[--m->up];

		if (st->teardown)
			st->teardown(m);
	}
}

/* Walks the steps from m->up to the end; 0, or the failing step's. */
static const struct machine_step *machine_walk_up(struct machine *m)
{
	for (; m->up < MACHINE_STEPS; m->up++) {
		const struct machine_step *st = &machine_steps[m->up];

		if (st->setup(m))
			return st;
	}
	return NULL;
}

/*
 * Everything before the guest runs alone.  Returns -1 with every step up,
 * or the failing step's exit status with the machine already unwound.
 */
static int machine_build(struct machine *m)
{
	const struct machine_step *st = machine_walk_up(m);

	if (!st)
		return -1;
	/* Bad input was explained by the step itself. */
	if (st->status != ABI_STATUS_USAGE)
		pr_err("start-up failed at %s", st->name);
	machine_unwind(m, 0);
	return st->status;
}

/*
 * A reset, as QEMU's: the RESET event, then the .reset steps down and up
 * again.  The operation in progress, if any, ends first
 * (hotplug_reset_begin()); the QMP server and its clients stay.  A step
 * that fails now stops the VM (the final unwind copes with a step down
 * twice).
 */
static void machine_reset(struct machine *m, enum vm_cause cause)
{
	pr_err("resetting the VM (%s)", vm_cause_name(cause));
	qmp_cmds_event_cause("RESET", cause);
	hotplug_reset_begin(m->hp);
	for (size_t i = MACHINE_STEPS; i-- > 0;)
		if (machine_steps[i].reset && machine_steps[i].teardown)
			machine_steps[i].teardown(m);
	for (size_t i = 0; i < MACHINE_STEPS; i++) {
		const struct machine_step *st = &machine_steps[i];

		if (st->reset && st->setup(m)) {
			vm_request_stop(&m->vm, ABI_STATUS_VMFAIL,
					"the reset failed at %s", st->name);
			return;
		}
	}
}

/*
 * Runs the machine until a vCPU, a signal or the API stops it, doing the
 * main thread's share of what the guest asks meanwhile: resets, and ejects
 * the guest did on its own.
 */
static void machine_run(struct machine *m)
{
	struct pollfd fds[2] = {
		{ .fd = m->vm.stop_efd, .events = POLLIN },
		{ .fd = m->sig_fd, .events = POLLIN },
	};

	while (!vm_stopping(&m->vm)) {
		struct signalfd_siginfo si;
		enum vm_cause reset;
		uint64_t v;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			vm_request_stop(&m->vm, ABI_STATUS_VMFAIL,
					"poll failed: %s", strerror(errno));
			break;
		}
		if ((fds[0].revents & POLLIN) &&
		    read(m->vm.stop_efd, &v, sizeof(v)) < 0 && errno != EINTR)
			vm_request_stop(&m->vm, ABI_STATUS_VMFAIL,
					"cannot read the machine's events: %s",
					strerror(errno));
		if ((fds[1].revents & POLLIN) &&
		    read(m->sig_fd, &si, sizeof(si)) == sizeof(si))
			vm_shutdown(&m->vm, ABI_STATUS_SIGNAL,
				    VM_CAUSE_HOST_SIGNAL, "stopped by %s",
				    strsignal((int)si.ssi_signo));
		if (vm_stopping(&m->vm))
			break;
		reset = vm_take_reset(&m->vm);
		if (reset != VM_CAUSE_NONE)
			machine_reset(m, reset);
		hotplug_guest_work(m->hp);
	}
}

/*
 * --dump-acpi: the tables a run with these options would give its guest,
 * built into a plain buffer, so neither KVM nor a kernel is needed.
 */
static int dump_acpi(const struct cli_run_opts *o)
{
	void *buf;
	long size;
	int ret;

	if (acpi_dump_check_dir(o->dump_acpi))
		return ABI_STATUS_USAGE;
	buf = malloc(ABI_ACPI_MAX);
	if (!buf) {
		pr_err("--dump-acpi: out of memory");
		return ABI_STATUS_VMFAIL;
	}
	size = build_acpi(buf, &o->cpus, NULL);
	ret = size < 0 ? (int)size
		       : acpi_dump_write(o->dump_acpi, buf, (size_t)size,
					 ABI_ACPI_PADDR);
	free(buf);
	return ret ? ABI_STATUS_USAGE : 0;
}

int run_main(int argc, char **argv)
{
	struct cli_run_opts opts;
	struct machine m = {
		.opts = &opts,
		.vm = { .kvm_fd = -1, .vm_fd = -1, .stop_efd = -1 },
		.io = BUS_INIT_PIO,
		.mmio = BUS_INIT_MMIO,
		.sig_fd = -1,
	};
	int status;

	if (cli_parse_run(argc, argv, &opts))
		return ABI_STATUS_USAGE;
	if (opts.help) {
		cli_run_usage(stdout);
		return 0;
	}
	if (opts.dump_acpi)
		return dump_acpi(&opts);
	status = machine_build(&m);
	if (status >= 0)
		return status;

	seccomp_enter(SECCOMP_THREAD_MAIN);
	machine_run(&m);
	status = m.vm.stop_status;
	if (status == ABI_STATUS_VMFAIL)
		pr_err("the VM failed: %s", m.vm.stop_reason);
	else if (vm_cause_guest(m.vm.stop_cause))
		pr_err("%s", m.vm.stop_reason);
	/* Every wait for the guest ends, new operations are refused. */
	qmp_cmds_event_cause("SHUTDOWN", m.vm.stop_cause);
	hotplug_shutdown(m.hp);
	machine_unwind(&m, 0);
	return status;
}
