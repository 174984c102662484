/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the `hotvm cpu` verbs share (cpu_cmd.c dispatches to them): the
 * options, the connection, and the calls and output helpers, so that every
 * verb reports errors and prints JSON the same way.  Beneath every verb
 * file and above only the client, the printers and cpu_json.h.
 */
#ifndef HOTVM_CPU_VERB_H
#define HOTVM_CPU_VERB_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

struct json_object;
struct qmp_client;
struct qmp_client_error;

struct cpu_opts {
	const char *socket;
	const char *connect, *domain; /* a libvirt domain (libvirt.h) */
	bool libvirt_xml;	      /* list: as libvirt's domain XML */
	bool json;
	bool no_wait;
	bool wide;	  /* states: every column */
	const char *svg;  /* trace: write the picture here */
	const char *from; /* trace: a cpu-hotplug reply ("-": stdin) */
	const char *wait; /* trace add: cpu-hotplug's "wait" */
	int timeout_ms;
	const char *pos[8];
	int npos;
};

struct cpu_ctx {
	struct cpu_opts *o;
	struct qmp_client *c; /* NULL for a verb that needs no VMM */
	FILE *out, *errf;
};

/* Runs a command (args taken over); prints the VMM's error and returns 1. */
int cpu_verb_call(struct cpu_ctx *x, const char *name, struct json_object *args,
		  struct json_object **ret);
/* The client's error e on errf, after whatever out holds; returns 1. */
int cpu_verb_vmm_error(struct cpu_ctx *x, const struct qmp_client_error *e);
/* One line on errf, after whatever out holds: lines never mix. */
void cpu_verb_error(struct cpu_ctx *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* v as one line of JSON. */
void cpu_verb_print_json(struct cpu_ctx *x, struct json_object *v);
/* A verb's success: ret as JSON with --json, else the line what and ret. */
void cpu_verb_done(struct cpu_ctx *x, struct json_object *ret,
		   const char *what);
/* "3" or "cpu3". */
int cpu_verb_parse_cpu(const char *s, long *cpu);

#endif
