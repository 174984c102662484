/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inside the board: the machine object and the start-up steps that
 * board.c's table walks.  board_load.c holds the steps that put the guest
 * in RAM (kernel, initrd, memory map, FDT, ACPI, boot data), board_setup.c
 * those that set up the host side (input checks, KVM, devices, vCPU slots,
 * the control API, signals, seccomp).  Each step that fails cleans up
 * after itself and says why on stderr.
 */
#ifndef HOTVM_BOARD_INTERNAL_H
#define HOTVM_BOARD_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "board_devices.h"
#include "bus.h"
#include "bzimage.h"
#include "hooks.h"
#include "hotplug_vmm.h"
#include "image.h"
#include "pvh.h"
#include "vm.h"

#define BOARD_PAGE_SIZE 4096ULL

struct qga_mux;
struct qmp_cmds;
struct qmp_server;

struct board {
	const struct board_config *cfg;
	struct vm vm;
	struct bus io;
	struct bus mmio;
	void *dev_state[BOARD_MAX_DEVICES]; /* board_devices()'s, by row */
	struct hooks hooks;
	struct hotplug *hp; /* owns every vCPU */
	struct qmp_server *qmp;
	struct qmp_cmds *qmp_cmds; /* the commands' state on qmp */
	struct qga_mux *agent_mux; /* --agent-socket */
	int sig_fd;
	size_t up; /* board_steps[] set up, from the first */

	/* The machine's work thread (board_work.c): resets, guest ejects. */
	pthread_t work_thread;
	bool work_started;
	pthread_mutex_t work_lock;
	pthread_cond_t work_cond;
	bool work_pending, work_quit; /* under work_lock */
	void (*work_reset)(struct board *b, enum vm_cause cause);

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

/* board_load.c: the guest's side of RAM. */
int board_open_kernel(struct board *b);
void board_close_kernel(struct board *b);
int board_load_images(struct board *b);
int board_write_tables(struct board *b);

/* board_setup.c: the host's side. */
int board_input_memory(struct board *b);
int board_input_cpus(struct board *b);
int board_setup_hooks(struct board *b);
int board_create_qmp(struct board *b);
void board_free_qmp(struct board *b);
int board_register_qmp(struct board *b);
void board_unregister_qmp(struct board *b);
int board_start_qmp(struct board *b);
void board_stop_qmp(struct board *b);
int board_start_signals(struct board *b);
void board_close_signals(struct board *b);
int board_load_seccomp(struct board *b);
int board_open_kvm(struct board *b);
void board_destroy_vm(struct board *b);
int board_create_vm(struct board *b);
int board_setup_devices(struct board *b);
void board_close_devices(struct board *b);
/* The VM's reset of every device (dev_reset()), its vCPUs stopped. */
void board_reset_devices(struct board *b);
int board_create_hotplug(struct board *b);
void board_destroy_hotplug(struct board *b);
int board_boot_vcpus(struct board *b);
void board_unboot_vcpus(struct board *b);

/*
 * board_work.c: the thread that runs resets (@reset: board.c's walk of
 * the .reset steps, which start this thread) and the guest's own ejects.
 */
int board_start_work(struct board *b,
		     void (*reset)(struct board *b, enum vm_cause cause));
void board_kick_work(struct board *b);
void board_stop_work(struct board *b);

/* board_rows.c: the state of the first row of desc (NULL: none set up). */
void *board_device_state(struct board *b, const struct dev_desc *desc);

/* board_setup.c: --agent-socket, the guest agent for other clients. */
int board_start_agent_socket(struct board *b);
void board_stop_agent_socket(struct board *b);
/* With --agent: the periodic check of Linux's CPUs, on its own thread. */
int board_start_agent_watch(struct board *b);
void board_stop_agent_watch(struct board *b);

#endif
