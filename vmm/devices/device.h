/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How a device declares itself (docs/design.md §2, §6.1).  Each device
 * file holds one struct dev_desc: its name, its bus and the size of its
 * register window, how to set an instance up and tear it down, and how the
 * guest's firmware tables describe it (AML, FDT node).  A machine is a
 * table of struct dev_instance rows, each a descriptor at a base address
 * with its interrupt and _UID (vmm/board/board_devices.c): start-up, the
 * DSDT and the FDT iterate that one table.  A second UART is one more row.
 */
#ifndef HOTVM_DEVICE_H
#define HOTVM_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct aml_buf;
struct bus;
struct vm;

enum dev_bus {
	DEV_BUS_NONE, /* described to the guest only (motherboard resources) */
	DEV_BUS_IO,
	DEV_BUS_MMIO,
};

struct dev_desc;

/* One device of a machine: a row of the board's table. */
struct dev_instance {
	const struct dev_desc *desc;
	const char *name; /* the ACPI device name, four characters */
	uint64_t base;	  /* I/O port or MMIO address of its registers */
	unsigned int irq; /* its GSI; 0: none */
	unsigned int uid; /* ACPI _UID: which instance of this device */
	/*
	 * This instance's settings (a UART's sink), picked from the
	 * machine's configuration (the board passes its struct
	 * board_config); NULL: none.
	 */
	const void *(*config)(const void *machine);
};

/* What setup gets of the machine. */
struct dev_env {
	struct vm *vm;
	struct bus *io;
	struct bus *mmio;
	unsigned int max_cpus;
	const void *machine; /* handed to dev_instance.config */
	const char *vm_name; /* --name: what a generated MAC follows */
};

/* What the table builders give the AML and FDT callbacks. */
struct dev_table_env {
	unsigned int ncpus;	  /* possible CPUs */
	const uint32_t *apic_ids; /* ncpus entries; NULL: CPU n has APIC ID n */
	const struct dev_instance *devs; /* the whole table */
	size_t nr_devs;
};

struct dev_desc {
	const char *name; /* "serial", "ged": for messages */
	enum dev_bus bus;
	uint64_t size; /* bytes (ports) of its register window */
	/*
	 * Its own _CRS claims its window (a virtio device's does), so the
	 * motherboard resources leave it out.
	 */
	bool own_window;
	size_t state_size; /* what setup gets to fill, zeroed; 0: nothing */
	/* Sets up the instance in state and puts it on its bus: 0 or -errno. */
	int (*setup)(void *state, const struct dev_instance *d,
		     const struct dev_env *env);
	void (*teardown)(void *state); /* NULL: nothing to undo */
	/*
	 * The VM's reset, with every vCPU stopped: back to power-on, every
	 * request in flight completed or cancelled.  NULL: nothing to do.
	 */
	void (*reset)(void *state);
	/* Its DSDT part, inside Scope (\_SB): 0 or -errno.  NULL: none. */
	int (*aml)(struct aml_buf *b, const struct dev_instance *d,
		   const struct dev_table_env *env);
	/* Its FDT node: 0 or a negative FDT_ERR_* code.  NULL: none. */
	int (*fdt)(void *fdt, const struct dev_instance *d);
};

/*
 * Allocates d's state and sets it up; *state is NULL for a stateless
 * device.  Returns 0 or -errno (nothing left allocated).
 */
int dev_setup(const struct dev_instance *d, const struct dev_env *env,
	      void **state);
/* Tears d down and frees its state (NULL: nothing was set up). */
void dev_teardown(const struct dev_instance *d, void *state);

/* The VM's reset of d (desc->reset), if it has state and a reset. */
void dev_reset(const struct dev_instance *d, void *state);

/*
 * For setup functions: says on stderr that d could not be put on its bus
 * (a clash with another row) when ret is nonzero.  Returns ret.
 */
int dev_registered(const struct dev_instance *d, int ret);

/*
 * The rows of devs on bus (DEV_BUS_NONE: any) in ascending address order,
 * as a device tree lists its nodes; at most max.  Returns how many.
 */
size_t dev_by_address(const struct dev_instance *devs, size_t n,
		      enum dev_bus bus, const struct dev_instance **out,
		      size_t max);

#endif
