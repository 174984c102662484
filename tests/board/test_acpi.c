// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the ACPI builder: parse the tables back the way an OS
 * does (RSDP -> XSDT -> FADT/MADT, FADT -> DSDT) and check checksums,
 * revisions, flags and one MADT entry per possible CPU.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "acpi.h"
#include "hotvm/abi.h"
#include "board.h"
#include "board_devices.h"
#include "check.h"
#include "table_bytes.h"

#define BASE 0xe0000ULL
#define SIZE 0x20000

static uint8_t buf[SIZE];

/* Host pointer for a table address, or NULL if outside the buffer. */
static const uint8_t *at(uint64_t gpa, long len)
{
	if (gpa < BASE || gpa - BASE + 36 > (uint64_t)len)
		return NULL;
	return buf + (gpa - BASE);
}

static const uint8_t *find(long len, const char *sig)
{
	const uint8_t *xsdt = at(get64(buf + 24), len);

	if (!xsdt)
		return NULL;
	for (uint32_t off = 36; off < get32(xsdt + 4); off += 8) {
		const uint8_t *t = at(get64(xsdt + off), len);

		if (t && !memcmp(t, sig, 4))
			return t;
	}
	return NULL;
}

struct madt_count {
	unsigned int lapic, x2apic, ioapic, enabled, online_capable;
	int bad;
};

static struct madt_count walk_madt(const uint8_t *madt, unsigned int boot)
{
	struct madt_count c = { 0 };
	uint32_t len = get32(madt + 4);

	for (uint32_t off = 44; off < len;) {
		const uint8_t *e = madt + off;
		uint32_t id = 0, flags = 0;

		if (e[1] < 2 || off + e[1] > len) {
			c.bad++;
			break;
		}
		if (e[0] == ACPI_MADT_LAPIC && e[1] == 8) {
			c.lapic++;
			id = e[3];
			flags = get32(e + 4);
			if (e[2] != e[3])
				c.bad++;
		} else if (e[0] == ACPI_MADT_X2APIC && e[1] == 16) {
			c.x2apic++;
			id = get32(e + 4);
			flags = get32(e + 8);
			if (get32(e + 12) != id || id < 255)
				c.bad++;
		} else if (e[0] == ACPI_MADT_IOAPIC && e[1] == 12) {
			c.ioapic++;
			if (get32(e + 4) != ACPI_IOAPIC_ADDR)
				c.bad++;
			off += e[1];
			continue;
		} else {
			c.bad++;
		}
		if (flags == ACPI_MADT_ENABLED && id < boot)
			c.enabled++;
		else if (flags == ACPI_MADT_ONLINE_CAPABLE && id >= boot)
			c.online_capable++;
		else
			c.bad++;
		off += e[1];
	}
	return c;
}

static void check_tables(unsigned int boot, unsigned int max)
{
	struct acpi_config cfg = { .base = BASE,
				   .boot_cpus = boot,
				   .max_cpus = max };
	const uint8_t *fadt, *madt, *dsdt, *xsdt;
	struct madt_count c;
	long len;
	cfg.devs = board_devices(&cfg.nr_devs);

	memset(buf, 0xaa, sizeof(buf));
	len = acpi_build(buf, sizeof(buf), &cfg);
	CHECK(len > 0);
	if (len <= 0)
		return;

	CHECK(!memcmp(buf, "RSD PTR ", 8));
	CHECK_EQ(buf[15], 2);
	CHECK_EQ(sum(buf, 20), 0);
	CHECK_EQ(get32(buf + 20), ACPI_RSDP_SIZE);
	CHECK_EQ(sum(buf, ACPI_RSDP_SIZE), 0);

	xsdt = at(get64(buf + 24), len);
	CHECK(xsdt && !memcmp(xsdt, "XSDT", 4));
	if (!xsdt)
		return;
	CHECK_EQ(sum(xsdt, get32(xsdt + 4)), 0);
	CHECK_EQ(get32(xsdt + 4), 36 + 2 * 8);

	fadt = find(len, "FACP");
	CHECK(fadt);
	if (!fadt)
		return;
	CHECK_EQ(get32(fadt + 4), ACPI_FADT_SIZE);
	CHECK_EQ(sum(fadt, ACPI_FADT_SIZE), 0);
	CHECK_EQ(fadt[8], 6);
	CHECK_EQ(fadt[131], 3);
	CHECK(get32(fadt + 112) & ACPI_FADT_HW_REDUCED);
	CHECK_EQ(get64(fadt + 140), get32(fadt + 40));
	/*
	 * Reset register (flag, GAS in I/O space, value), sleep control
	 * and status: what Linux needs to reboot and power off.
	 */
	CHECK(get32(fadt + 112) & ACPI_FADT_RESET_REG_SUP);
	CHECK_EQ(fadt[116], ACPI_GAS_SYSTEM_IO);
	CHECK_EQ(fadt[117], 8);
	CHECK_EQ(get64(fadt + 120), ABI_PM_PORT + ABI_PM_RESET);
	CHECK_EQ(fadt[128], ABI_PM_RESET_VALUE);
	CHECK_EQ(fadt[244], ACPI_GAS_SYSTEM_IO);
	CHECK_EQ(get64(fadt + 248), ABI_PM_PORT + ABI_PM_SLEEP_CTL);
	CHECK_EQ(fadt[256], ACPI_GAS_SYSTEM_IO);
	CHECK_EQ(get64(fadt + 260), ABI_PM_PORT + ABI_PM_SLEEP_STS);

	dsdt = at(get64(fadt + 140), len);
	CHECK(dsdt && !memcmp(dsdt, "DSDT", 4));
	if (dsdt)
		CHECK_EQ(sum(dsdt, get32(dsdt + 4)), 0);

	madt = find(len, "APIC");
	CHECK(madt);
	if (!madt)
		return;
	CHECK_EQ(madt[8], 5);
	CHECK_EQ(sum(madt, get32(madt + 4)), 0);
	CHECK_EQ(get32(madt + 36), ACPI_LAPIC_ADDR);
	CHECK(madt + get32(madt + 4) <= buf + len);
	c = walk_madt(madt, boot);
	CHECK_EQ(c.bad, 0);
	CHECK_EQ(c.ioapic, 1);
	CHECK_EQ(c.lapic, max < 255 ? max : 255);
	CHECK_EQ(c.x2apic, max > 255 ? max - 255 : 0);
	CHECK_EQ(c.enabled, boot);
	CHECK_EQ(c.online_capable, max - boot);
}

static void test_one_cpu(void)
{
	check_tables(1, 1);
}

static void test_hotplug_slots(void)
{
	check_tables(2, 8);
}

static void test_x2apic(void)
{
	check_tables(4, 300);
	check_tables(255, 1024);
}

/* After a reset: the CPUs the guest had are Enabled, wherever they are. */
static void test_present_set(void)
{
	static const bool present[8] = { true,	false, true,  true,
					 false, false, false, true };
	struct acpi_config cfg = {
		.base = BASE, .boot_cpus = 1, .max_cpus = 8, .present = present
	};
	const uint8_t *madt;
	unsigned int seen = 0;
	long len = acpi_build(buf, sizeof(buf), &cfg);
	cfg.devs = board_devices(&cfg.nr_devs);

	CHECK(len > 0);
	madt = len > 0 ? find(len, "APIC") : NULL;
	CHECK(madt);
	for (uint32_t off = 44; madt && off < get32(madt + 4);
	     off += madt[off + 1]) {
		const uint8_t *e = madt + off;

		if (e[0] != ACPI_MADT_LAPIC || e[3] >= 8)
			continue;
		CHECK_EQ(get32(e + 4), present[e[3]]
					       ? ACPI_MADT_ENABLED
					       : ACPI_MADT_ONLINE_CAPABLE);
		seen++;
	}
	CHECK_EQ(seen, 8);
}

static void test_errors(void)
{
	struct acpi_config cfg = { .base = BASE,
				   .boot_cpus = 1,
				   .max_cpus = 1024 };
	cfg.devs = board_devices(&cfg.nr_devs);

	CHECK_EQ(acpi_build(buf, 200, &cfg), -E2BIG);
	cfg.boot_cpus = 0;
	CHECK_EQ(acpi_build(buf, sizeof(buf), &cfg), -EINVAL);
	cfg.boot_cpus = 5;
	cfg.max_cpus = 4;
	CHECK_EQ(acpi_build(buf, sizeof(buf), &cfg), -EINVAL);
}

/*
 * --agent: the guest agent's port is one more row, COM2 (PNP0501, _UID
 * One, I/O 0x2f8, IRQ 3) with --agent-channel com2, else VCON; without
 * it the table is board_devices()'s.
 */
static void test_agent_port(void)
{
	static const char com2[] = "COM2\x08_HID\x0c\x41\xd0\x05\x01"
				   "\x08_UID\x01\x08_CRS\x11\x10\x0a\x0d"
				   "\x47\x01\xf8\x02\xf8\x02\x01\x08"
				   "\x22\x08\x00\x79\x00";
	struct acpi_config cfg = { .base = BASE,
				   .boot_cpus = 1,
				   .max_cpus = 2 };
	struct board_config bc;
	size_t n;
	long len;

	board_config_init(&bc);
	CHECK(board_devices_for(&bc, &n) == board_devices(&cfg.nr_devs));
	CHECK_EQ(n, cfg.nr_devs);
	bc.agent = true;
	bc.agent_channel = BOARD_AGENT_COM2;
	cfg.devs = board_devices_for(&bc, &cfg.nr_devs);
	CHECK_EQ(cfg.nr_devs, n + 1);
	len = acpi_build(buf, sizeof(buf), &cfg);
	CHECK(len > 0);
	CHECK(len > 0 && memmem(buf, (size_t)len, com2, sizeof(com2) - 1));
	/* The default channel: a virtio-console, VCON (LNRO0005), no COM2. */
	bc.agent_channel = BOARD_AGENT_VIRTIO;
	cfg.devs = board_devices_for(&bc, &cfg.nr_devs);
	CHECK_EQ(cfg.nr_devs, n + 1);
	len = acpi_build(buf, sizeof(buf), &cfg);
	CHECK(len > 0 &&
	      memmem(buf, (size_t)len, "VCON\x08_HID\x0dLNRO0005", 18));
	CHECK(len > 0 && !memmem(buf, (size_t)len, "COM2", 4));
}

/*
 * --vsock: VSCK, LNRO0005 with its window and IRQ 11 in _CRS, after the
 * other rows; with --agent-channel vsock the agent adds no row of its own.
 */
static void test_vsock(void)
{
	/* _CRS: Memory32Fixed at 0xfeb02e00, 0x200; Interrupt, edge, 11. */
	static const char crs[] = "\x86\x09\x00\x01\x00\x2e\xb0\xfe"
				  "\x00\x02\x00\x00\x89\x06\x00\x03"
				  "\x01\x0b\x00\x00\x00";
	struct acpi_config cfg = { .base = BASE,
				   .boot_cpus = 1,
				   .max_cpus = 2 };
	struct board_config bc;
	size_t n;
	long len;

	board_config_init(&bc);
	board_devices(&n);
	bc.vsock = (struct vsock_config){ .cid = 3, .path = "/v" };
	bc.agent = true;
	bc.agent_channel = BOARD_AGENT_VSOCK;
	cfg.devs = board_devices_for(&bc, &cfg.nr_devs);
	CHECK_EQ(cfg.nr_devs, n + 1);
	len = acpi_build(buf, sizeof(buf), &cfg);
	CHECK(len > 0 &&
	      memmem(buf, (size_t)len, "VSCK\x08_HID\x0dLNRO0005", 18));
	CHECK(len > 0 && memmem(buf, (size_t)len, crs, sizeof(crs) - 1));
	CHECK(len > 0 && !memmem(buf, (size_t)len, "VCON", 4));
}

static void test_checksum(void)
{
	uint8_t t[4] = { 1, 2, 3, 0 };

	t[3] = acpi_checksum(t, 3);
	CHECK_EQ(sum(t, 4), 0);
}

CHECK_MAIN(TEST(test_one_cpu), TEST(test_hotplug_slots), TEST(test_x2apic),
	   TEST(test_present_set), TEST(test_errors), TEST(test_agent_port),
	   TEST(test_vsock), TEST(test_checksum))
