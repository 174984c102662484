// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the port bus, the UART and the debug-exit port, driven the
 * way a guest drives them: through ioport_dispatch() with odd widths and
 * addresses too.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "hotvm/abi.h"
#include "debug_exit.h"
#include "ioport.h"
#include "serial.h"
#include "vm.h"

static void nop_io(void *opaque, uint16_t port, bool is_write, uint8_t *data,
		   unsigned int size)
{
	(void)opaque;
	(void)port;
	(void)is_write;
	memset(data, 0x5a, size);
}

static void test_bus(void)
{
	struct ioport_bus bus = { 0 };
	uint8_t d[4] = { 0 };

	CHECK_EQ(ioport_register(&bus, 0x100, 8, nop_io, NULL), 0);
	CHECK_EQ(ioport_register(&bus, 0x104, 2, nop_io, NULL), -EBUSY);
	CHECK_EQ(ioport_register(&bus, 0xfc, 8, nop_io, NULL), -EBUSY);
	CHECK_EQ(ioport_register(&bus, 0x108, 1, nop_io, NULL), 0);
	CHECK_EQ(ioport_register(&bus, 0xffff, 2, nop_io, NULL), -EINVAL);
	CHECK_EQ(ioport_register(&bus, 0x200, 0, nop_io, NULL), -EINVAL);

	ioport_dispatch(&bus, 0x107, false, d, 4);
	CHECK_EQ(d[3], 0x5a);
	/* Nobody home: reads float high, writes vanish. */
	ioport_dispatch(&bus, 0x80, false, d, 4);
	CHECK_EQ(d[0], 0xff);
	CHECK_EQ(d[3], 0xff);
	ioport_dispatch(&bus, 0x80, true, d, 1);

	for (unsigned int i = 0; i < IOPORT_MAX_RANGES - 2; i++)
		CHECK_EQ(ioport_register(&bus, 0x1000 + i, 1, nop_io, NULL), 0);
	CHECK_EQ(ioport_register(&bus, 0x2000, 1, nop_io, NULL), -ENOSPC);
}

static uint8_t rd(struct ioport_bus *bus, unsigned int reg)
{
	uint8_t v = 0;

	ioport_dispatch(bus, ABI_COM1_PORT + reg, false, &v, 1);
	return v;
}

static void wr(struct ioport_bus *bus, unsigned int reg, uint8_t v)
{
	ioport_dispatch(bus, ABI_COM1_PORT + reg, true, &v, 1);
}

static void test_serial(void)
{
	char path[] = "/tmp/hotvm-serial-XXXXXX";
	struct ioport_bus bus = { 0 };
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
	ioport_dispatch(&bus, ABI_COM1_PORT + 5, false, wide, 4);
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

static void test_debug_exit(void)
{
	struct ioport_bus bus = { 0 };
	struct vm vm = { .stop_efd = -1 };
	uint32_t v = ABI_EXIT_PANIC;

	CHECK_EQ(debug_exit_status(ABI_EXIT_SUCCESS), 1);
	CHECK_EQ(debug_exit_status(ABI_EXIT_FAILURE), 3);
	CHECK_EQ(debug_exit_status(ABI_EXIT_PANIC), 5);
	CHECK_EQ(debug_exit_status(0xff), 0xff);

	pthread_mutex_init(&vm.stop_lock, NULL);
	CHECK_EQ(debug_exit_register(&bus, &vm, ABI_DEBUG_EXIT_PORT), 0);
	ioport_dispatch(&bus, ABI_DEBUG_EXIT_PORT, true, (uint8_t *)&v, 4);
	CHECK(vm_stopping(&vm));
	CHECK_EQ(vm.stop_status, 5);
	/* The first stop wins. */
	v = 0;
	ioport_dispatch(&bus, ABI_DEBUG_EXIT_PORT, true, (uint8_t *)&v, 1);
	CHECK_EQ(vm.stop_status, 5);
	pthread_mutex_destroy(&vm.stop_lock);
}

CHECK_MAIN(TEST(test_bus), TEST(test_serial), TEST(test_debug_exit))
