/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the `hotvm cpu` verbs share (cpu_cmd.c dispatches, cpu_watch.c and
 * cpu_trace.c hold the larger ones): the options, the connection, and the
 * reply helpers of cpu_cmd.c, so that every verb reports errors and prints
 * JSON the same way.
 */
#ifndef HOTVM_CPU_VERB_H
#define HOTVM_CPU_VERB_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

struct json_object;
struct qmp_client;

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
/* One line on errf, after whatever out holds: lines never mix. */
void cpu_verb_error(struct cpu_ctx *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* v as one line of JSON. */
void cpu_verb_print_json(struct cpu_ctx *x, struct json_object *v);
/* "3" or "cpu3". */
int cpu_verb_parse_cpu(const char *s, long *cpu);
/* o's member key, NULL when o is not an object or lacks it. */
struct json_object *cpu_verb_member(struct json_object *o, const char *key);
/* A scalar as table text ("-" for none). */
const char *cpu_verb_cell(struct json_object *o, char *buf, size_t len);
/* o as an integer, a true boolean, a string; dflt, false, NULL if not. */
int64_t cpu_verb_num(struct json_object *o, int64_t dflt);
bool cpu_verb_flag(struct json_object *o);
const char *cpu_verb_str(struct json_object *o);

#endif
