// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes the ACPI builder (vmm/boot/acpi.c acpi_build) and the DSDT's AML
 * (vmm/boot/dsdt.c dsdt_build, dsdt_build_aml) over their whole configuration
 * range: any CPU counts, base address, APIC ids, device addresses, buffer
 * sizes, and allocation failures inside the AML builder.
 *
 * Checked on every success: each table's signature, length and checksum,
 * the RSDP -> XSDT -> FADT/MADT, FADT -> DSDT pointers landing on those
 * tables inside the buffer, one MADT entry per possible CPU with boot CPUs
 * Enabled and the rest Online Capable, one ACPI0007 device per CPU, the
 * DSDT body being one Scope whose PkgLength covers it exactly.  And as
 * contracts: a buffer one byte short is -E2BIG without a byte written past
 * it (buffers are exactly sized, for ASan), the same configuration gives
 * the same bytes, apic_ids of NULL is the same as ids 0..n-1, a failed
 * allocation is -ENOMEM with nothing leaked.
 */
#include <errno.h>
#include <stdbool.h>

#include "acpi.h"
#include "board_devices.h"
#include "dsdt.h"
#include "fuzz.h"
#include "table_bytes.h"

/* The table at guest-physical gpa: inside the buffer, sound, signature. */
static const uint8_t *table(const uint8_t *buf, long len, uint64_t base,
			    uint64_t gpa, const char *sig)
{
	uint64_t off = gpa - base;
	const uint8_t *t;

	FUZZ_ASSERT(gpa >= base && off + ACPI_HEADER_SIZE <= (uint64_t)len);
	t = buf + off;
	FUZZ_ASSERT(!memcmp(t, sig, 4));
	FUZZ_ASSERT(get32(t + 4) >= ACPI_HEADER_SIZE);
	FUZZ_ASSERT(off + get32(t + 4) <= (uint64_t)len);
	FUZZ_ASSERT(sum(t, get32(t + 4)) == 0);
	return t;
}

static void check_madt(const uint8_t *t, const struct acpi_config *cfg)
{
	uint32_t len = get32(t + 4), off = ACPI_HEADER_SIZE + 8;
	unsigned int cpus = 0, ioapics = 0;

	FUZZ_ASSERT(t[8] == ACPI_MADT_REVISION);
	while (off < len) {
		const uint8_t *e = t + off;
		uint32_t id = 0, flags = 0;

		FUZZ_ASSERT(off + 2 <= len && e[1] >= 2 && off + e[1] <= len);
		if (e[0] == ACPI_MADT_IOAPIC) {
			ioapics++;
		} else if (e[0] == ACPI_MADT_LAPIC) {
			FUZZ_ASSERT(e[1] == 8);
			id = e[3];
			flags = get32(e + 4);
		} else if (e[0] == ACPI_MADT_X2APIC) {
			FUZZ_ASSERT(e[1] == 16);
			id = get32(e + 4);
			flags = get32(e + 8);
		} else {
			FUZZ_ASSERT(!"unknown MADT entry");
		}
		if (e[0] != ACPI_MADT_IOAPIC) {
			/* Entries in CPU order; APIC ID of CPU n is n. */
			FUZZ_ASSERT(id == cpus);
			FUZZ_ASSERT(flags ==
				    (cpus < cfg->boot_cpus
					     ? ACPI_MADT_ENABLED
					     : ACPI_MADT_ONLINE_CAPABLE));
			cpus++;
		}
		off += e[1];
	}
	FUZZ_ASSERT(off == len);
	FUZZ_ASSERT(cpus == cfg->max_cpus);
	FUZZ_ASSERT(ioapics == 1);
}

/* ACPI's PkgLength: 1 to 4 bytes, the count in the lead byte's top bits. */
static uint32_t pkglen(const uint8_t *p, size_t room, unsigned int *used)
{
	unsigned int n = p[0] >> 6;
	uint32_t v;

	FUZZ_ASSERT(room > n);
	if (!n) {
		*used = 1;
		return p[0] & 0x3f;
	}
	v = p[0] & 0x0f;
	for (unsigned int i = 1; i <= n; i++)
		v |= (uint32_t)p[i] << (4 + 8 * (i - 1));
	*used = n + 1;
	return v;
}

static unsigned int count(const uint8_t *p, size_t n, const char *s)
{
	const uint8_t *end = p + n, *q;
	size_t sl = strlen(s);
	unsigned int c = 0;

	while ((q = memmem(p, (size_t)(end - p), s, sl))) {
		c++;
		p = q + sl;
	}
	return c;
}

/* The DSDT body: Scope (\_SB) {...} exactly, one processor per CPU. */
static void check_aml(const uint8_t *p, long len, unsigned int ncpus)
{
	unsigned int used;

	FUZZ_ASSERT(len > 2 && p[0] == 0x10); /* ScopeOp */
	FUZZ_ASSERT(pkglen(p + 1, len - 1, &used) == (uint32_t)len - 1);
	FUZZ_ASSERT(count(p, len, "ACPI0007") == ncpus);
}

static void fuzz_acpi_build(struct fuzz_in *in)
{
	struct acpi_config cfg = { 0 };
	uint8_t mode = fuzz_u8(in);
	uint8_t *buf, *again;
	long len, rc;
	size_t size;

	cfg.devs = board_devices(&cfg.nr_devs);
	cfg.base = fuzz_uint(in, 8);
	if (!(mode & 1))
		cfg.base &= 0xfffff000; /* where hotvm puts them: below 4G */
	/* Mostly the DSDT's range and a little past it; rarely anything. */
	/*
	 * Mostly up to past the xAPIC limit of 255; anything at all with
	 * mode & 2 (4096 CPUs take 0.2 s under the sanitizers).
	 */
	cfg.max_cpus = mode & 2	   ? (unsigned int)fuzz_uint(in, 4)
		       : mode & 16 ? (unsigned int)fuzz_uint(in, 2) % 600
				   : 1u + fuzz_u8(in) % 64;
	cfg.boot_cpus = (unsigned int)fuzz_uint(in, 2);
	if (!(mode & 4) && cfg.max_cpus)
		cfg.boot_cpus = 1 + cfg.boot_cpus % cfg.max_cpus;
	/* Room for 4096 CPUs, or a size from the input. */
	size = mode & 8 ? fuzz_uint(in, 3) : 1 << 20;

	/*
	 * buf maps guest-physical [base, base + size): a window that wraps
	 * past 2^64 is no machine's, and acpi_build() does not check for one
	 * (its tables would point below base), so the harness does not ask.
	 */
	if (cfg.base > UINT64_MAX - size)
		cfg.base = UINT64_MAX - size;
	buf = malloc(size ? size : 1);
	FUZZ_ASSERT(buf);
	len = acpi_build(buf, size, &cfg);
	if (len < 0) {
		FUZZ_ASSERT(len == -E2BIG || len == -EINVAL);
		if (!cfg.boot_cpus || cfg.boot_cpus > cfg.max_cpus)
			FUZZ_ASSERT(len == -EINVAL);
		free(buf);
		return;
	}
	FUZZ_ASSERT(cfg.boot_cpus && cfg.boot_cpus <= cfg.max_cpus);
	FUZZ_ASSERT(cfg.max_cpus <= DSDT_MAX_CPUS);
	FUZZ_ASSERT((size_t)len <= size && len >= ACPI_RSDP_SIZE);

	/* RSDP at buf[0], revision 2, both checksums. */
	FUZZ_ASSERT(!memcmp(buf, "RSD PTR ", 8));
	FUZZ_ASSERT(buf[15] == 2 && get32(buf + 20) == ACPI_RSDP_SIZE);
	FUZZ_ASSERT(sum(buf, 20) == 0 && sum(buf, ACPI_RSDP_SIZE) == 0);
	{
		const uint8_t *xsdt =
			table(buf, len, cfg.base, get64(buf + 24), "XSDT");
		const uint8_t *fadt, *madt, *dsdt;

		FUZZ_ASSERT(get32(xsdt + 4) == ACPI_HEADER_SIZE + 16);
		fadt = table(buf, len, cfg.base, get64(xsdt + 36), "FACP");
		madt = table(buf, len, cfg.base, get64(xsdt + 44), "APIC");
		FUZZ_ASSERT(get32(fadt + 4) == ACPI_FADT_SIZE);
		FUZZ_ASSERT(fadt[8] == ACPI_FADT_REVISION &&
			    fadt[131] == ACPI_FADT_MINOR);
		FUZZ_ASSERT(get32(fadt + 112) & ACPI_FADT_HW_REDUCED);
		dsdt = table(buf, len, cfg.base, get64(fadt + 140), "DSDT");
		/* The 32-bit pointer only where it fits, else 0. */
		FUZZ_ASSERT(get32(fadt + 40) ==
			    (get64(fadt + 140) >> 32
				     ? 0
				     : (uint32_t)get64(fadt + 140)));
		FUZZ_ASSERT(dsdt[8] == 2);
		check_madt(madt, &cfg);
		check_aml(dsdt + ACPI_HEADER_SIZE,
			  get32(dsdt + 4) - ACPI_HEADER_SIZE, cfg.max_cpus);
		/* The DSDT is last and the length returned ends it. */
		FUZZ_ASSERT((size_t)(dsdt - buf) + get32(dsdt + 4) ==
			    (size_t)len);
	}

	/* Exactly len bytes is enough and gives the same tables ... */
	again = malloc(len);
	FUZZ_ASSERT(again);
	FUZZ_ASSERT(acpi_build(again, len, &cfg) == len);
	FUZZ_ASSERT(!memcmp(again, buf, len));
	free(again);
	/* ... and any less is -E2BIG, without a write past the end. */
	size = len - 1 - fuzz_u8(in) % len;
	again = malloc(size ? size : 1);
	FUZZ_ASSERT(again);
	rc = acpi_build(again, size, &cfg);
	FUZZ_ASSERT(rc == -E2BIG);
	free(again);
	free(buf);
}

/* realloc that fails once the budget is spent, as the tests' does. */
static int alloc_budget;

static void *failing_realloc(void *p, size_t n)
{
	if (alloc_budget-- <= 0)
		return NULL;
	return realloc(p, n);
}

static void fuzz_dsdt(struct fuzz_in *in)
{
	uint8_t mode = fuzz_u8(in);
	struct dsdt_config cfg = { 0 };
	struct dev_instance devs[BOARD_MAX_DEVICES];
	uint32_t *ids = NULL;
	uint8_t *buf, *small;
	long len, rc;
	size_t size;

	cfg.ncpus = mode & 16  ? (unsigned int)fuzz_uint(in, 2)
		    : mode & 1 ? (unsigned int)fuzz_uint(in, 2) % 600
			       : 1u + fuzz_u8(in) % 32;
	cfg.devs = board_devices(&cfg.nr_devs);
	if (mode & 2) {
		/* The GED and the register block anywhere. */
		uint32_t ged = (uint32_t)fuzz_uint(in, 4);
		uint32_t irq = (uint32_t)fuzz_uint(in, 4);
		uint32_t cpuhp = (uint32_t)fuzz_uint(in, 4);

		for (size_t i = 0; i < cfg.nr_devs; i++) {
			devs[i] = cfg.devs[i];
			if (!strcmp(devs[i].name, "GED_")) {
				devs[i].base = ged;
				devs[i].irq = irq;
			} else if (!strcmp(devs[i].name, "CPUS")) {
				devs[i].base = cpuhp;
			}
		}
		cfg.devs = devs;
	}
	if ((mode & 4) && cfg.ncpus && cfg.ncpus <= DSDT_MAX_CPUS) {
		ids = malloc(cfg.ncpus * sizeof(*ids));
		FUZZ_ASSERT(ids);
		for (unsigned int i = 0; i < cfg.ncpus; i++)
			ids[i] = mode & 8 ? (uint32_t)fuzz_uint(in, 4) : i;
		cfg.apic_ids = ids;
	}

	size = 1 << 20;
	buf = malloc(size);
	FUZZ_ASSERT(buf);
	len = dsdt_build(buf, size, &cfg);
	if (len < 0) {
		FUZZ_ASSERT(len == -EINVAL);
		FUZZ_ASSERT(!cfg.ncpus || cfg.ncpus > DSDT_MAX_CPUS);
		goto out;
	}
	FUZZ_ASSERT(cfg.ncpus && cfg.ncpus <= DSDT_MAX_CPUS);
	check_aml(buf, len, cfg.ncpus);

	if (ids && !(mode & 8)) {
		/* Ids 0..n-1 spelled out are what NULL means. */
		struct dsdt_config plain = cfg;
		uint8_t *b2 = malloc(len);

		plain.apic_ids = NULL;
		FUZZ_ASSERT(b2);
		FUZZ_ASSERT(dsdt_build(b2, len, &plain) == len);
		FUZZ_ASSERT(!memcmp(b2, buf, len));
		free(b2);
	}
	/* One byte short, or less: -E2BIG, nothing written past size. */
	size = len - 1 - fuzz_u8(in) % len;
	small = malloc(size ? size : 1);
	FUZZ_ASSERT(small);
	rc = dsdt_build(small, size, &cfg);
	FUZZ_ASSERT(rc == -E2BIG);
	free(small);

	/* Allocation failure part-way through: -ENOMEM, no leak (ASan). */
	{
		struct aml_buf b = { .realloc_fn = failing_realloc };

		alloc_budget = fuzz_u8(in) % 24;
		rc = dsdt_build_aml(&b, &cfg);
		FUZZ_ASSERT(rc == 0 || rc == -ENOMEM);
		if (!rc) {
			FUZZ_ASSERT(b.len == (size_t)len);
			FUZZ_ASSERT(!memcmp(b.data, buf, len));
		}
		aml_free(&b);
	}
out:
	free(ids);
	free(buf);
}

/*
 * The UART model comes along with its descriptor (serial.c asks whether
 * its vCPU must leave when a write is interrupted); no vCPU runs here.
 */
bool vcpu_self_leaving(void);
bool vcpu_self_leaving(void)
{
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	if (fuzz_u8(&in) & 1)
		fuzz_dsdt(&in);
	else
		fuzz_acpi_build(&in);
	return 0;
}
