// SPDX-License-Identifier: GPL-2.0-only
/*
 * Dumps a built set of ACPI tables to files.  The walk follows the pointers
 * in the tables rather than acpi_build()'s layout, so what lands in the
 * files is what a guest would find, and a pointer or checksum that a guest
 * would trip over fails the dump.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acpi.h"
#include "acpi_dump.h"
#include "log.h"

/* Offsets from the ACPI 6.3 specification (RSDP: 5.2.5.3, FADT: 5.2.9). */
#define RSDP_REVISION	15
#define RSDP_LENGTH	20
#define RSDP_XSDT	24
#define RSDP_V1_SIZE	20
#define SDT_LENGTH	4
#define FADT_DSDT	40
#define FADT_X_DSDT	140
#define FADT_X_DSDT_END 148

struct table {
	char sig[5];
	size_t off, len;
};

struct walk {
	const uint8_t *buf;
	size_t len;
	uint64_t base;
	struct table t[ACPI_DUMP_MAX_TABLES];
	unsigned int n;
};

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static int add_table(struct walk *w, const char *sig, size_t off, size_t len)
{
	if (w->n == ACPI_DUMP_MAX_TABLES) {
		pr_err("--dump-acpi: more than %d ACPI tables; raise "
		       "ACPI_DUMP_MAX_TABLES",
		       ACPI_DUMP_MAX_TABLES);
		return -EINVAL;
	}
	w->t[w->n] = (struct table){ .off = off, .len = len };
	memcpy(w->t[w->n].sig, sig, 4);
	w->n++;
	return 0;
}

/* The SDT at guest-physical gpa: in the buffer, whole, checksummed. */
static int add_sdt(struct walk *w, uint64_t gpa, const char *from)
{
	size_t off = (size_t)(gpa - w->base);
	char sig[5] = { 0 };
	uint32_t len;

	if (gpa < w->base || gpa - w->base > w->len ||
	    w->len - off < ACPI_HEADER_SIZE) {
		pr_err("--dump-acpi: %s points to 0x%llx, outside the ACPI "
		       "tables at 0x%llx..0x%llx (a bug in hotvm's ACPI "
		       "builder)",
		       from, (unsigned long long)gpa,
		       (unsigned long long)w->base,
		       (unsigned long long)(w->base + w->len));
		return -EINVAL;
	}
	memcpy(sig, w->buf + off, 4);
	len = get32(w->buf + off + SDT_LENGTH);
	if (len < ACPI_HEADER_SIZE || len > w->len - off ||
	    acpi_checksum(w->buf + off, len)) {
		pr_err("--dump-acpi: table '%.4s' at 0x%llx: bad length %u or "
		       "checksum (a bug in hotvm's ACPI builder)",
		       sig, (unsigned long long)gpa, len);
		return -EINVAL;
	}
	return add_table(w, sig, off, len);
}

static int walk_tables(struct walk *w)
{
	const uint8_t *r = w->buf;
	size_t rsdp_len;
	const struct table *x;
	int ret;

	if (w->len < ACPI_RSDP_SIZE || memcmp(r, "RSD PTR ", 8) ||
	    r[RSDP_REVISION] < 2 || acpi_checksum(r, RSDP_V1_SIZE) ||
	    (rsdp_len = get32(r + RSDP_LENGTH)) < ACPI_RSDP_SIZE ||
	    rsdp_len > w->len || acpi_checksum(r, rsdp_len)) {
		pr_err("--dump-acpi: no valid ACPI 2.0 RSDP at 0x%llx (a bug "
		       "in hotvm's ACPI builder)",
		       (unsigned long long)w->base);
		return -EINVAL;
	}
	ret = add_table(w, "RSDP", 0, rsdp_len);
	if (!ret)
		ret = add_sdt(w, get64(r + RSDP_XSDT), "the RSDP");
	if (ret)
		return ret;
	x = &w->t[1];
	for (size_t e = ACPI_HEADER_SIZE; e + 8 <= x->len; e += 8) {
		const uint8_t *f;
		uint64_t dsdt;

		ret = add_sdt(w, get64(w->buf + x->off + e), "the XSDT");
		if (ret)
			return ret;
		if (memcmp(w->t[w->n - 1].sig, "FACP", 4))
			continue;
		/*
		 * X_DSDT wins over the 32-bit DSDT pointer when both are
		 * there.  A hardware-reduced FADT has no FACS to follow.
		 */
		f = w->buf + w->t[w->n - 1].off;
		dsdt = w->t[w->n - 1].len >= FADT_X_DSDT_END
			       ? get64(f + FADT_X_DSDT)
			       : 0;
		if (!dsdt)
			dsdt = get32(f + FADT_DSDT);
		ret = add_sdt(w, dsdt, "the FADT");
		if (ret)
			return ret;
	}
	return 0;
}

/* "dsdt.dat", or "ssdt2.dat" for the second of a repeated signature. */
static void file_name(const struct walk *w, unsigned int i, char *out,
		      size_t size)
{
	unsigned int same = 0, nth = 0;
	char sig[5];

	for (unsigned int j = 0; j < w->n; j++) {
		if (memcmp(w->t[j].sig, w->t[i].sig, 4))
			continue;
		same++;
		if (j <= i)
			nth++;
	}
	for (int k = 0; k < 4; k++)
		sig[k] = (char)tolower((unsigned char)w->t[i].sig[k]);
	sig[4] = 0;
	if (same > 1)
		snprintf(out, size, "%s%u.dat", sig, nth);
	else
		snprintf(out, size, "%s.dat", sig);
}

static int write_file(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int ret = 0;

	if (fd < 0)
		return -errno;
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ret = w < 0 ? -errno : -EIO;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

int acpi_dump_check_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st)) {
		int ret = -errno;

		pr_err("--dump-acpi '%s': %s; %s", dir, strerror(errno),
		       ret == -ENOENT ? "create the directory first"
				      : "give a directory you can write to");
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		pr_err("--dump-acpi '%s': not a directory; give the directory "
		       "the table files should go to",
		       dir);
		return -ENOTDIR;
	}
	if (access(dir, W_OK | X_OK)) {
		int ret = -errno;

		pr_err("--dump-acpi '%s': not writable (%s); give a directory "
		       "you can write to",
		       dir, strerror(errno));
		return ret;
	}
	return 0;
}

int acpi_dump_write(const char *dir, const void *buf, size_t len, uint64_t base)
{
	struct walk w = { .buf = buf, .len = len, .base = base };
	char name[16], path[4096];
	int ret;

	ret = walk_tables(&w);
	for (unsigned int i = 0; !ret && i < w.n; i++) {
		file_name(&w, i, name, sizeof(name));
		if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
		    (int)sizeof(path)) {
			pr_err("--dump-acpi: directory name too long; give a "
			       "shorter path");
			return -ENAMETOOLONG;
		}
		ret = write_file(path, w.buf + w.t[i].off, w.t[i].len);
		if (ret)
			pr_err("--dump-acpi: cannot write '%s': %s; check the "
			       "directory's space and permissions",
			       path, strerror(-ret));
	}
	return ret;
}
