// SPDX-License-Identifier: GPL-2.0-only
/*
 * The generated DSDT through ACPICA's own tools: wrapped in an SDT header,
 * `iasl -d` must disassemble it without errors into the devices and methods
 * we meant, and the disassembly must compile again without errors.  ACPICA
 * is the interpreter inside Linux, so this is the closest check of the AML
 * short of booting a guest.
 *
 * Usage: test-dsdt-iasl [IASL]; exits 77 (skipped) when iasl is missing.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "board_devices.h"
#include "check.h"
#include "dsdt.h"

#define SDT_HEADER_SIZE 36

static char iasl[4096];
static char dir[64];

static int find_iasl(int argc, char **argv)
{
	const char *path = getenv("PATH");

	if (argc > 1) {
		snprintf(iasl, sizeof(iasl), "%s", argv[1]);
		return access(iasl, X_OK) ? -ENOENT : 0;
	}
	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(iasl, sizeof(iasl), "%.*s/iasl", (int)n, path);
		if (n && !access(iasl, X_OK))
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The 36-byte SDT header the VMM's acpi.c puts around the body. */
static uint8_t *wrap(const struct aml_buf *b, size_t *len)
{
	uint8_t *t, sum = 0;

	*len = SDT_HEADER_SIZE + b->len;
	t = calloc(1, *len);
	if (!t)
		return NULL;
	memcpy(t, "DSDT", 4);
	put32(t + 4, (uint32_t)*len);
	t[8] = 2; /* 64-bit integers */
	memcpy(t + 10, "HOTVM ", 6);
	memcpy(t + 16, "HOTVMTBL", 8);
	put32(t + 24, 1);
	memcpy(t + 28, "HTVM", 4);
	put32(t + 32, 1);
	memcpy(t + SDT_HEADER_SIZE, b->data, b->len);
	for (size_t i = 0; i < *len; i++)
		sum += t[i];
	t[9] = (uint8_t)(0 - sum);
	return t;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 &&
	    !fseek(f, 0, SEEK_SET) && (s = malloc((size_t)n + 1))) {
		*len = fread(s, 1, (size_t)n, f);
		s[*len] = 0;
	}
	fclose(f);
	return s;
}

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(p, 1, n, f) == n;

	if (f && fclose(f))
		ok = 0;
	return ok ? 0 : -EIO;
}

/* Runs iasl with args in dir; its output goes to dir/log. */
static int run_iasl(const char *args)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s >log 2>&1", dir, iasl,
		 args);
	return system(cmd);
}

static char *read_in_dir(const char *name, size_t *len)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return slurp(path, len);
}

static void show_log(void)
{
	size_t n;
	char *log = read_in_dir("log", &n);

	printf("# iasl said:\n");
	for (char *l = log ? strtok(log, "\n") : NULL; l;
	     l = strtok(NULL, "\n"))
		printf("#   %s\n", l);
	free(log);
}

static void cleanup(void)
{
	static const char *const names[] = { "dsdt.aml", "dsdt.dsl", "re.aml",
					     "log" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
}

#define DSL_HAS(dsl, s)                                                        \
	do {                                                                   \
		if (!strstr(dsl, s)) {                                         \
			printf("# disassembly lacks: %s\n", s);                \
			check_failures++;                                      \
		}                                                              \
	} while (0)

static void round_trip(unsigned int ncpus)
{
	struct dsdt_config cfg = { .ncpus = ncpus };
	struct aml_buf b = { 0 };
	char *dsl = NULL, *log = NULL, *re = NULL, want[128];
	uint8_t *table = NULL;
	size_t len, n, relen;
	int rc;

	cfg.devs = board_devices(&cfg.nr_devs);
	CHECK_EQ(dsdt_build_aml(&b, &cfg), 0);
	table = wrap(&b, &len);
	CHECK(table &&
	      !write_file(strcat(strcpy(want, dir), "/dsdt.aml"), table, len));

	rc = run_iasl("-d dsdt.aml");
	log = read_in_dir("log", &n);
	CHECK_EQ(rc, 0);
	/* Warnings are fine in a disassembly; errors are not. */
	CHECK(log && !strstr(log, "Error") && !strstr(log, "error"));
	if (rc || !log || strstr(log, "rror"))
		show_log();
	free(log);

	dsl = read_in_dir("dsdt.dsl", &n);
	CHECK(dsl != NULL);
	if (!dsl)
		goto out;
	DSL_HAS(dsl, "Scope (\\_SB)");
	DSL_HAS(dsl, "Device (CPUS)");
	DSL_HAS(dsl, "Name (_HID, \"ACPI0010\"");
	DSL_HAS(dsl, "Name (_CID, EisaId (\"PNP0A05\")");
	DSL_HAS(dsl, "OperationRegion (PRST, SystemMemory, 0xFEB00100, 0x0C)");
	DSL_HAS(dsl, "Field (PRST, ByteAcc, NoLock, WriteAsZeros)");
	DSL_HAS(dsl, "Field (PRST, DWordAcc, NoLock, Preserve)");
	DSL_HAS(dsl, "Mutex (CPLK, 0x00)");
	DSL_HAS(dsl, "Method (CSTA, 1, Serialized)");
	DSL_HAS(dsl, "Method (CEJ0, 1, Serialized)");
	DSL_HAS(dsl, "Method (COST, 4, Serialized)");
	DSL_HAS(dsl, "Method (CTFY, 2, NotSerialized)");
	DSL_HAS(dsl, "Method (CSCN, 0, Serialized)");
	DSL_HAS(dsl, "Method (CMTL, 2, Serialized)");
	DSL_HAS(dsl, "Method (CMTX, 2, Serialized)");
	DSL_HAS(dsl, "Device (C000)");
	DSL_HAS(dsl, "Name (_HID, \"ACPI0007\"");
	DSL_HAS(dsl, "Method (_MAT, 0, NotSerialized)");
	DSL_HAS(dsl, "Method (_OST, 3, NotSerialized)");
	DSL_HAS(dsl, "Notify (C000, Arg1)");
	DSL_HAS(dsl, "Device (GED)");
	DSL_HAS(dsl, "Name (_HID, \"ACPI0013\"");
	DSL_HAS(dsl, "Memory32Fixed (ReadWrite,");
	DSL_HAS(dsl, "0xFEB00000,");
	DSL_HAS(dsl,
		"Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive");
	DSL_HAS(dsl, "0x00000005,");
	DSL_HAS(dsl, "Method (_EVT, 1, Serialized)");
	DSL_HAS(dsl, "\\_SB.CPUS.CSCN ()");
	snprintf(want, sizeof(want), "Device (C%03X)", ncpus - 1);
	DSL_HAS(dsl, want);
	if (ncpus > 1)
		DSL_HAS(dsl, "Method (_EJ0, 1, NotSerialized)");
	if (ncpus > 255)
		DSL_HAS(dsl, "CMTX (0xFF, 0xFF)");

	/*
	 * What ACPICA disassembled must compile again without errors, and
	 * with iasl's optimisations off (-oa) into exactly our AML: so the
	 * disassembly above is all there is, with nothing misparsed.
	 */
	rc = run_iasl("-oa -p re dsdt.dsl");
	log = read_in_dir("log", &n);
	CHECK_EQ(rc, 0);
	CHECK(log && strstr(log, " 0 Errors"));
	if (rc || !log || !strstr(log, " 0 Errors"))
		show_log();
	free(log);
	re = read_in_dir("re.aml", &relen);
	CHECK(re && relen > SDT_HEADER_SIZE);
	if (re && relen > SDT_HEADER_SIZE) {
		printf("# %u CPUs: %zu bytes of AML, recompiled %zu\n", ncpus,
		       b.len, relen - SDT_HEADER_SIZE);
		CHECK_EQ(relen - SDT_HEADER_SIZE, b.len);
		CHECK(relen - SDT_HEADER_SIZE == b.len &&
		      !memcmp(re + SDT_HEADER_SIZE, b.data, b.len));
	}
out:
	free(re);
	free(dsl);
	free(table);
	aml_free(&b);
	cleanup();
}

static void test_round_trip_1(void)
{
	round_trip(1);
}

static void test_round_trip_8(void)
{
	round_trip(8);
}

static void test_round_trip_300(void)
{
	round_trip(300);
}

static void test_round_trip_1024(void)
{
	round_trip(1024);
}

int check_failures;

int main(int argc, char **argv)
{
	static const struct check_case cases[] = {
		TEST(test_round_trip_1),
		TEST(test_round_trip_8),
		TEST(test_round_trip_300),
		TEST(test_round_trip_1024),
	};
	int rc;

	if (find_iasl(argc, argv)) {
		printf("1..0 # SKIP iasl (Debian acpica-tools) not found\n");
		return 77;
	}
	snprintf(dir, sizeof(dir), "/tmp/hotvm-dsdt-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	rc = check_run(cases, sizeof(cases) / sizeof(cases[0]));
	rmdir(dir);
	return rc;
}
