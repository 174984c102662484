/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The board: one machine composed from every layer beneath it (KVM VM,
 * RAM, devices, the vCPU controller, the control API, the kernel and its
 * tables), built from a config by one start-up table, run until something
 * stops it, reset by walking that table down and up, and torn down again.
 * `hotvm run` is only the argument parser in front of it; anything that
 * fills a board_config can build the same machine.
 */
#ifndef HOTVM_BOARD_H
#define HOTVM_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#include "hotplug.h"
#include "seccomp_policy.h"
#include "serial.h"
#include "virtio_blk.h"
#include "virtio_net.h"
#include "vsock.h"

#define BOARD_DEFAULT_MEMORY (256ULL << 20)
#define BOARD_DEFAULT_NAME   "hotvm"
#define BOARD_MAX_HOOKS	     16 /* = HOOKS_MAX */
#define BOARD_MAX_DISKS	     8	/* = ABI_VIRTIO_MAX */
#define BOARD_MAX_NETS	     4	/* = ABI_NET_MAX */

struct board_cpus {
	unsigned int boot;
	unsigned int max;
};

/*
 * What a machine is made of.  Strings are borrowed for the machine's life.
 * The board's messages name the `hotvm run` option each field comes from,
 * so a config filled in code gets the same words.
 */
struct board_config {
	const char *kernel; /* NULL: the embedded tiny guest */
	const char *cmdline;
	const char *initrd;
	uint64_t memory;
	struct board_cpus cpus;
	struct serial_config serial; /* COM1's sink */
	const char *api_socket;	     /* NULL: no control API */
	const char *api_group;	     /* also let this group's members connect */
	const char *hooks[BOARD_MAX_HOOKS];
	unsigned int nr_hooks;
	int hook_timeout_ms;		/* 0: the hooks' default */
	int hotplug_timeout_ms;		/* 0: HOTPLUG_DEFAULT_TIMEOUT_MS */
	enum hotplug_wait hotplug_wait; /* DEFAULT: acknowledged */
	unsigned int prestage;		/* free vCPUs created ahead */
	const char *name;		/* for hooks and QMP */
	enum seccomp_policy seccomp;	/* 0: on */
	bool no_reboot;			/* a reset ends the VM (status 0) */
	enum hotplug_guest_eject guest_eject; /* 0: allow */
	bool agent; /* a port for the QEMU guest agent, which hotvm asks */
	/* Which port: virtio-console (the default) or COM2 (--agent-channel) */
	enum board_agent_channel {
		BOARD_AGENT_VIRTIO,
		BOARD_AGENT_COM2,
		BOARD_AGENT_VSOCK, /* a connection to qemu-ga's vsock port */
	} agent_channel;
	uint32_t agent_vsock_port; /* --agent-channel vsock:PORT */
	const char *agent_socket;  /* that agent for other clients (--agent) */
	const char *agent_allow;   /* what they may ask; NULL: everything */
	/*
	 * Linux's cpuhp trace through the agent: --agent-trace on (1), off
	 * (0), or by default (-1) off over COM2, where each of its bytes is
	 * a VM exit, and on over the others.
	 */
	int agent_trace;
	struct vblk_config disks[BOARD_MAX_DISKS]; /* --disk, in order */
	unsigned int nr_disks;
	struct vnet_config nets[BOARD_MAX_NETS]; /* --net, in order */
	unsigned int nr_nets;
	struct vsock_config vsock; /* --vsock; path NULL: none */
};

/* The defaults: 256M, one vCPU, the console on stdio, named "hotvm". */
void board_config_init(struct board_config *c);

/*
 * Builds the machine, runs it until it stops, tears it down (every thread
 * joined, every fd closed).  Returns the process exit status: the guest's
 * (v << 1) | 1, 0, ABI_STATUS_USAGE for bad input (said on stderr) or
 * ABI_STATUS_VMFAIL.
 */
int board_run(const struct board_config *c);

/*
 * The ACPI tables c's machine would give its guest, written to dir as
 * acpidump -b names them; needs neither KVM nor a kernel.  Returns the
 * exit status.
 */
int board_dump_acpi(const struct board_config *c, const char *dir);

#endif
