/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The libvirt bridge of `hotvm cpu`: `resize N` and `list` against a
 * libvirt-managed domain (--connect URI --domain NAME) through the
 * libvirt API, with the output of the same verbs against a hotvm VM; and
 * hotvm's own vCPU state as libvirt's domain XML (--libvirt-xml), which
 * needs no libvirt at all.  Without libvirt-dev at build time (meson
 * option -Dlibvirt) the --connect verbs say so and fail.
 */
#ifndef HOTVM_LIBVIRT_H
#define HOTVM_LIBVIRT_H

#include <stdbool.h>
#include <stdio.h>

struct json_object;

/*
 * `hotvm cpu VERB [ARG] --connect URI --domain NAME`: VERB is "list" or
 * "resize" (ARG the count).  Returns the exit status (0, 1: libvirt said
 * no, 2: usage).
 */
int cli_libvirt_run(const char *verb, const char *arg, const char *uri,
		    const char *domain, bool json, FILE *out, FILE *errf);

/*
 * libvirt's <vcpu placement='static' current='N'>MAX</vcpu> and
 * <vcpus><vcpu id enabled hotpluggable order/>...</vcpus> for the vCPUs
 * that query-hotpluggable-cpus and query-cpus-fast describe (QEMU's or
 * hotvm's): online ones enabled, in cpu-index order; CPU 0 and CPUs
 * without a device id (boot CPUs) not hotpluggable, as libvirt sees them.
 */
void cli_libvirt_print_xml(FILE *out, struct json_object *hotpluggable,
			   struct json_object *cpus_fast);

#endif
