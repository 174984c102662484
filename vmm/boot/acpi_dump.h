/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `hotvm run --dump-acpi DIR`: the ACPI tables acpi_build() made, one binary
 * file per table, named as ACPICA's `acpidump -b` names them (rsdp.dat,
 * xsdt.dat, facp.dat, apic.dat, dsdt.dat; a repeated signature gets a
 * number: ssdt1.dat, ssdt2.dat), so that `iasl -d` and `acpiexec` take them
 * as they take a real machine's.
 */
#ifndef HOTVM_ACPI_DUMP_H
#define HOTVM_ACPI_DUMP_H

#include <stddef.h>
#include <stdint.h>

/* At most this many tables (RSDP included) in one dump. */
#define ACPI_DUMP_MAX_TABLES 32

/*
 * Checks that dir is an existing, writable directory.  Prints what is wrong
 * and returns -ENOENT, -ENOTDIR or -EACCES (or another negative errno).
 */
int acpi_dump_check_dir(const char *dir);

/*
 * Writes the tables in buf[0..len), whose first byte is guest-physical
 * address base and holds the RSDP, into dir.  The tables are found as a
 * guest finds them, RSDP -> XSDT -> each table, FADT -> DSDT, and each
 * length and checksum is checked on the way, so a broken pointer shows as
 * an error instead of a wrong dump.  Prints what went wrong; returns 0,
 * -EINVAL for broken tables, or the negative errno of a failed write.
 */
int acpi_dump_write(const char *dir, const void *buf, size_t len,
		    uint64_t base);

#endif
