// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the device bus, the UART and the debug-exit port, driven the
 * way a guest drives them: through bus_dispatch() with odd widths and
 * addresses too.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "hotvm/abi.h"
#include "acpi_pm.h"
#include "debug_exit.h"
#include "bus.h"
#include "serial.h"
#include "vm.h"

static int nop_calls;

static int nop_io(void *ctx, uint64_t offset, uint64_t *data, unsigned int len,
		  bool is_write)
{
	(void)ctx;
	(void)len;
	nop_calls++;
	if (!is_write)
		*data = 0x5a5a5a5a5a5a5a00ULL | offset;
	return 7;
}

static int reg(struct bus *bus, uint64_t base, uint64_t len)
{
	return bus_register(
		bus,
		&(struct bus_dev){ .base = base, .len = len, .fn = nop_io });
}

static void test_bus(void)
{
	struct bus bus = BUS_INIT_PIO;
	uint8_t d[8] = { 0 };

	CHECK_EQ(reg(&bus, 0x100, 8), 0);
	CHECK_EQ(reg(&bus, 0x104, 2), -EBUSY);
	CHECK_EQ(reg(&bus, 0xfc, 8), -EBUSY);
	CHECK_EQ(reg(&bus, 0x108, 1), 0);
	CHECK_EQ(reg(&bus, 0xffff, 2), -EINVAL);
	CHECK_EQ(reg(&bus, 0x200, 0), -EINVAL);
	CHECK_EQ(bus_register(&bus,
			      &(struct bus_dev){ .base = 0x300, .len = 1 }),
		 -EINVAL);

	/* The device gets the offset and returns the value, little-endian. */
	CHECK_EQ(bus_dispatch(&bus, 0x103, d, 4, false), 7);
	CHECK_EQ(d[0], 0x03);
	CHECK_EQ(d[3], 0x5a);
	/* Nobody home: reads float high, writes vanish. */
	CHECK_EQ(bus_dispatch(&bus, 0x80, d, 4, false), BUS_UNCLAIMED);
	CHECK_EQ(d[0], 0xff);
	CHECK_EQ(d[3], 0xff);
	CHECK_EQ(bus_dispatch(&bus, 0x80, d, 1, true), BUS_UNCLAIMED);
	/* A port belongs to the device at its first byte. */
	CHECK_EQ(bus_dispatch(&bus, 0x107, d, 2, false), 7);
	CHECK_EQ(d[0], 0x07);
	nop_calls = 0;
	CHECK_EQ(bus_dispatch(&bus, 0x100, d, 0, false), BUS_UNCLAIMED);
	CHECK_EQ(bus_dispatch(&bus, 0x100, d, 9, true), BUS_UNCLAIMED);
	CHECK_EQ(nop_calls, 0);

	for (unsigned int i = 0; i < BUS_MAX_DEVS - 2; i++)
		CHECK_EQ(reg(&bus, 0x1000 + i, 1), 0);
	CHECK_EQ(reg(&bus, 0x2000, 1), -ENOSPC);
}

/* Declared registers: only their width and direction reach the device. */
static void test_bus_regs(void)
{
	static const struct bus_reg regs[] = {
		{ .offset = 0, .width = 4, .dir = BUS_RW },
		{ .offset = 4, .width = 1, .dir = BUS_W },
	};
	static const struct bus_reg bad[] = {
		{ .offset = 6, .width = 4, .dir = BUS_RW },
	};
	struct bus_ignored ign = { 0 };
	struct bus bus = BUS_INIT_MMIO;
	struct bus_dev dev = { .base = 0xfeb00000,
			       .len = 8,
			       .regs = regs,
			       .nr_regs = 2,
			       .ignored = &ign,
			       .fn = nop_io };
	uint8_t d[8];

	CHECK_EQ(bus_register(&bus, &dev), 0);
	dev.base = 0x1000;
	dev.regs = bad;
	dev.nr_regs = 1;
	CHECK_EQ(bus_register(&bus, &dev), -EINVAL); /* past the window */

	nop_calls = 0;
	memset(d, 0xee, sizeof(d));
	CHECK_EQ(bus_dispatch(&bus, 0xfeb00000, d, 4, false), 7);
	CHECK_EQ(d[0], 0x00);
	CHECK_EQ(d[1], 0x5a);
	CHECK_EQ(d[4], 0xee); /* only len bytes written */
	CHECK_EQ(bus_dispatch(&bus, 0xfeb00004, d, 1, true), 7);
	CHECK_EQ(nop_calls, 2);

	CHECK_EQ(bus_dispatch(&bus, 0xfeb00000, d, 2, false), BUS_IGN_WIDTH);
	CHECK_EQ(d[0], 0); /* MMIO floats low */
	CHECK_EQ(bus_dispatch(&bus, 0xfeb00000, d, 8, true), BUS_IGN_WIDTH);
	CHECK_EQ(bus_dispatch(&bus, 0xfeb00004, d, 1, false), BUS_IGN_OFFSET);
	CHECK_EQ(bus_dispatch(&bus, 0xfeb00002, d, 1, true), BUS_IGN_OFFSET);
	CHECK_EQ(bus_dispatch(&bus, 0xfeb00004, d, 4, true), BUS_IGN_WIDTH);
	/* MMIO straddling a window's end is nobody's, and not counted. */
	CHECK_EQ(bus_dispatch(&bus, 0xfeb00006, d, 4, false), BUS_UNCLAIMED);
	CHECK_EQ(nop_calls, 2);
	CHECK_EQ(atomic_load(&ign.width), 3);
	CHECK_EQ(atomic_load(&ign.offset), 2);
}

static uint8_t rd(struct bus *bus, unsigned int reg)
{
	uint8_t v = 0;

	bus_dispatch(bus, ABI_COM1_PORT + reg, &v, 1, false);
	return v;
}

static void wr(struct bus *bus, unsigned int reg, uint8_t v)
{
	bus_dispatch(bus, ABI_COM1_PORT + reg, &v, 1, true);
}

static void test_serial(void)
{
	char path[] = "/tmp/hotvm-serial-XXXXXX";
	struct bus bus = BUS_INIT_PIO;
	struct serial s;
	char got[16] = { 0 };
	uint8_t wide[4];
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK_EQ(serial_open(&s, SERIAL_SINK_FILE, path, NULL, 4), 0);
	CHECK_EQ(serial_register(&s, &bus, ABI_COM1_PORT), 0);

	CHECK_EQ(rd(&bus, 5) & 0x60, 0x60); /* THR empty, TEMT */
	wr(&bus, 0, 'h');
	wr(&bus, 0, 'i');

	/* DLAB: the divisor latch shadows THR and IER. */
	wr(&bus, 3, 0x83);
	wr(&bus, 0, 0x01);
	wr(&bus, 1, 0x00);
	CHECK_EQ(rd(&bus, 0), 0x01);
	wr(&bus, 3, 0x03);
	CHECK_EQ(rd(&bus, 3), 0x03);

	wr(&bus, 7, 0xa5);
	CHECK_EQ(rd(&bus, 7), 0xa5);

	/* THR-empty interrupt: pending after enabling, cleared by IIR. */
	CHECK_EQ(rd(&bus, 2) & 0x0f, 0x01);
	wr(&bus, 1, 0x02);
	CHECK_EQ(rd(&bus, 2) & 0x0f, 0x02);
	CHECK_EQ(rd(&bus, 2) & 0x0f, 0x01);

	/* Loopback: output suppressed. */
	wr(&bus, 4, 0x10);
	wr(&bus, 0, 'X');
	wr(&bus, 4, 0x00);
	wr(&bus, 0, '!');

	/* A 32-bit read touches the register's byte, the rest floats. */
	bus_dispatch(&bus, ABI_COM1_PORT + 5, wide, 4, false);
	CHECK_EQ(wide[0] & 0x60, 0x60);
	CHECK_EQ(wide[1], 0xff);

	serial_close(&s);
	CHECK_EQ(read(fd, got, sizeof(got) - 1), 3);
	CHECK_STREQ(got, "hi!");
	close(fd);
	unlink(path);

	CHECK_EQ(serial_open(&s, SERIAL_SINK_FILE, "/nonexistent/dir/x", NULL,
			     4),
		 -ENOENT);
	serial_close(&s);
}

static unsigned int rx_drained;
static char rx_out[8];
static size_t rx_out_len;

static void rx_host_out(void *ctx, uint8_t c)
{
	(void)ctx;
	if (rx_out_len < sizeof(rx_out))
		rx_out[rx_out_len++] = (char)c;
}

static void rx_host_drained(void *ctx)
{
	(void)ctx;
	rx_drained++;
}

/* The receive side: the ring, LSR DR, IIR's priority, FCR's clear. */
static void test_serial_rx(void)
{
	static char big[SERIAL_RX_SIZE + 10];
	struct bus bus = BUS_INIT_PIO;
	struct serial s;

	serial_open_callback(
		&s,
		&(struct serial_host){ .out = rx_host_out,
				       .drained = rx_host_drained },
		NULL, 3);
	CHECK_EQ(serial_register(&s, &bus, ABI_COM1_PORT), 0);
	wr(&bus, 0, 'o');
	CHECK_EQ(rx_out_len, 1);
	CHECK_EQ(rx_out[0], 'o');

	CHECK_EQ(rd(&bus, 5) & 0x01, 0); /* no data */
	CHECK_EQ(rd(&bus, 0), 0);
	CHECK_EQ(serial_receive(&s, "ab", 2), 2);
	CHECK_EQ(rd(&bus, 5) & 0x01, 0x01);
	/* Data waiting outranks THR empty in IIR, and only with IER RDI. */
	wr(&bus, 1, 0x02);
	CHECK_EQ(rd(&bus, 2) & 0x0f, 0x02);
	wr(&bus, 1, 0x03);
	CHECK_EQ(rd(&bus, 2) & 0x0f, 0x04);
	CHECK_EQ(rd(&bus, 0), 'a');
	CHECK_EQ(rx_drained, 0);
	CHECK_EQ(rd(&bus, 0), 'b');
	CHECK_EQ(rx_drained, 1); /* the ring went empty */
	CHECK_EQ(rd(&bus, 5) & 0x01, 0);
	CHECK_EQ(rd(&bus, 2) & 0x0f, 0x01); /* THR empty was read above */

	/* A full ring takes what fits and says so. */
	CHECK_EQ(serial_receive(&s, big, sizeof(big)), SERIAL_RX_SIZE);
	CHECK_EQ(serial_receive(&s, "x", 1), 0);
	/* Linux clears the receive FIFO as it opens the port. */
	wr(&bus, 2, 0x07);
	CHECK_EQ(rd(&bus, 5) & 0x01, 0);
	CHECK_EQ(rx_drained, 2);
	CHECK_EQ(rd(&bus, 2) & 0xc0, 0xc0); /* the FIFO stays enabled */
	CHECK_EQ(serial_receive(&s, "xy", 2), 2);
	serial_rx_flush(&s);
	CHECK_EQ(rd(&bus, 5) & 0x01, 0);
	serial_close(&s);
}

/* The VM's reset: power-on registers, no stale input, the host told. */
static void test_serial_reset(void)
{
	struct bus bus = BUS_INIT_PIO;
	struct serial s;

	rx_drained = 0;
	serial_open_callback(
		&s,
		&(struct serial_host){ .out = rx_host_out,
				       .drained = rx_host_drained },
		NULL, 3);
	CHECK_EQ(serial_register(&s, &bus, ABI_COM1_PORT), 0);
	wr(&bus, 3, 0x03); /* 8N1 */
	wr(&bus, 4, 0x0b); /* DTR, RTS, OUT2 */
	wr(&bus, 2, 0x01); /* FIFO on */
	wr(&bus, 1, 0x01); /* RDI */
	wr(&bus, 7, 0x5a);
	CHECK_EQ(serial_receive(&s, "ab", 2), 2);
	serial_reset(&s);
	CHECK_EQ(rx_drained, 1);
	CHECK_EQ(rd(&bus, 1), 0);
	CHECK_EQ(rd(&bus, 3), 0);
	CHECK_EQ(rd(&bus, 4), 0);
	CHECK_EQ(rd(&bus, 2), 0x01);	 /* no interrupt, FIFOs off */
	CHECK_EQ(rd(&bus, 5) & 0x01, 0); /* the bytes are gone */
	CHECK_EQ(rd(&bus, 7), 0x5a);
	/* An empty ring tells the host nothing. */
	serial_reset(&s);
	CHECK_EQ(rx_drained, 1);
	/* And the port works as at power-on. */
	wr(&bus, 1, 0x01);
	CHECK_EQ(serial_receive(&s, "c", 1), 1);
	CHECK_EQ(rd(&bus, 2) & 0x0f, 0x04);
	CHECK_EQ(rd(&bus, 0), 'c');
	serial_close(&s);
}

static void test_debug_exit(void)
{
	struct bus bus = BUS_INIT_PIO;
	struct vm vm = { .stop_efd = -1 };
	uint32_t v = ABI_EXIT_PANIC;

	CHECK_EQ(debug_exit_status(ABI_EXIT_SUCCESS), 1);
	CHECK_EQ(debug_exit_status(ABI_EXIT_FAILURE), 3);
	CHECK_EQ(debug_exit_status(ABI_EXIT_PANIC), 5);
	CHECK_EQ(debug_exit_status(0xff), 0xff);

	pthread_mutex_init(&vm.stop_lock, NULL);
	CHECK_EQ(debug_exit_register(&bus, &vm, ABI_DEBUG_EXIT_PORT), 0);
	bus_dispatch(&bus, ABI_DEBUG_EXIT_PORT, (uint8_t *)&v, 4, true);
	CHECK(vm_stopping(&vm));
	CHECK_EQ(vm.stop_status, 5);
	/* The first stop wins. */
	v = 0;
	bus_dispatch(&bus, ABI_DEBUG_EXIT_PORT, (uint8_t *)&v, 1, true);
	CHECK_EQ(vm.stop_status, 5);
	pthread_mutex_destroy(&vm.stop_lock);
}

static int pm_offs, pm_resets;

static void pm_off(void *ctx)
{
	CHECK(ctx == &pm_offs);
	pm_offs++;
}

static void pm_reset(void *ctx)
{
	CHECK(ctx == &pm_offs);
	pm_resets++;
}

static uint8_t pm_io(struct bus *bus, uint16_t off, uint8_t v, unsigned int len,
		     bool write)
{
	uint8_t data[4] = { v, 0, 0, 0 };

	bus_dispatch(bus, ABI_PM_PORT + off, data, len, write);
	return data[0];
}

/*
 * Linux's poweroff: WAK_STS cleared, then SLP_TYP S5 with SLP_EN; its
 * reboot: the reset value.  Anything else does nothing.
 */
static void test_pm(void)
{
	static const struct pm_ops ops = { .poweroff = pm_off,
					   .reset = pm_reset };
	uint8_t s5 = ABI_PM_SLP_TYP_S5 << ABI_PM_SLP_TYP_SHIFT;
	struct bus bus = BUS_INIT_PIO;
	struct pm pm;

	pm_init(&pm, &ops, &pm_offs);
	CHECK_EQ(pm_register(&pm, &bus, ABI_PM_PORT), 0);
	CHECK_EQ(pm_io(&bus, ABI_PM_SLEEP_STS, 0xff, 1, false), 0);
	pm_io(&bus, ABI_PM_SLEEP_STS, 0x80, 1, true);
	pm_io(&bus, ABI_PM_SLEEP_CTL, s5, 1, true); /* no SLP_EN yet */
	pm_io(&bus, ABI_PM_SLEEP_CTL, ABI_PM_SLP_EN | (3 << 2), 1, true);
	pm_io(&bus, ABI_PM_SLEEP_CTL, ABI_PM_SLP_EN | s5, 2, true); /* width */
	pm_io(&bus, ABI_PM_RESET, 0x06, 1, true);
	CHECK_EQ(pm_offs + pm_resets, 0);
	CHECK_EQ(atomic_load(&pm.stats.ignored), 2);
	CHECK_EQ(atomic_load(&pm.bus_ign.width), 1);
	pm_io(&bus, ABI_PM_SLEEP_CTL, ABI_PM_SLP_EN | s5, 1, true);
	CHECK_EQ(pm_offs, 1);
	pm_io(&bus, ABI_PM_RESET, ABI_PM_RESET_VALUE, 1, true);
	CHECK_EQ(pm_resets, 1);
	/* Nothing to read but the status; the reset register is write-only. */
	CHECK_EQ(pm_io(&bus, ABI_PM_RESET, 0, 1, false), 0xff);
}

CHECK_MAIN(TEST(test_bus), TEST(test_bus_regs), TEST(test_serial),
	   TEST(test_serial_rx), TEST(test_serial_reset), TEST(test_debug_exit),
	   TEST(test_pm))
