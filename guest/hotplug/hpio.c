// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU-hotplug register block sequences and its two accessors (MMIO,
 * I/O ports): see hpio.h.  Widths are exactly the ones the VMM accepts
 * and QEMU's block documents (hotvm/regs.h): selector and data 4 bytes,
 * flags and command 1 byte, so an accessor needs only those two.
 */
#include "hotvm/abi.h"
#include "hpio.h"

void hpio_invalidate(struct hpio *io)
{
	io->cur_sel = -1;
	io->cur_cmd = -1;
}

static u32 hpio_mmio_read(struct hpio *io, unsigned int off, unsigned int width)
{
	uintptr_t a = (uintptr_t)io->ctx + off;

	if (width == 1)
		return *(volatile u8 *)a;
	return *(volatile u32 *)a;
}

static void hpio_mmio_write(struct hpio *io, unsigned int off,
			    unsigned int width, u32 v)
{
	uintptr_t a = (uintptr_t)io->ctx + off;

	if (width == 1)
		*(volatile u8 *)a = (u8)v;
	else
		*(volatile u32 *)a = v;
}

static u32 hpio_port_read(struct hpio *io, unsigned int off, unsigned int width)
{
	u16 port = (u16)((uintptr_t)io->ctx + off);

	return width == 1 ? inb(port) : inl(port);
}

static void hpio_port_write(struct hpio *io, unsigned int off,
			    unsigned int width, u32 v)
{
	u16 port = (u16)((uintptr_t)io->ctx + off);

	if (width == 1)
		outb(port, (u8)v);
	else
		outl(port, v);
}

/* Either bus: its accessors on @ctx (an address or a port), nothing cached. */
static void hpio_init(struct hpio *io, bool port, uintptr_t ctx,
		      unsigned int nr_sel)
{
	*io = (struct hpio){
		.read = port ? hpio_port_read : hpio_mmio_read,
		.write = port ? hpio_port_write : hpio_mmio_write,
		.ctx = (void *)ctx,
		.nr_sel = nr_sel,
	};
	hpio_invalidate(io);
}

void hpio_init_mmio(struct hpio *io, u64 base, unsigned int nr_sel)
{
	hpio_init(io, false, (uintptr_t)base, nr_sel);
}

void hpio_init_port(struct hpio *io, u16 port, unsigned int nr_sel)
{
	hpio_init(io, true, port, nr_sel);
}

void hpio_lock(struct hpio *io)
{
	spin_lock(&io->lock);
}

void hpio_unlock(struct hpio *io)
{
	spin_unlock(&io->lock);
}

void hpio_select(struct hpio *io, u32 sel)
{
	if (io->cur_sel == (int)sel)
		return;
	io->write(io, ABI_CPUHP_SELECTOR, ABI_CPUHP_SELECTOR_WIDTH, sel);
	io->cur_sel = sel < io->nr_sel ? (int)sel : -1;
}

void hpio_command(struct hpio *io, u8 cmd)
{
	/* Command 0 is an action (it moves the selector), never cached. */
	if (cmd != ABI_CPUHP_CMD_NEXT_EVENT && io->cur_cmd == cmd)
		return;
	io->write(io, ABI_CPUHP_COMMAND, ABI_CPUHP_COMMAND_WIDTH, cmd);
	io->cur_cmd = cmd;
	if (cmd == ABI_CPUHP_CMD_NEXT_EVENT)
		io->cur_sel = -1;
}

u8 hpio_flags(struct hpio *io)
{
	return (u8)io->read(io, ABI_CPUHP_FLAGS, ABI_CPUHP_FLAGS_WIDTH);
}

void hpio_write_flags(struct hpio *io, u8 bits)
{
	io->write(io, ABI_CPUHP_FLAGS, ABI_CPUHP_FLAGS_WIDTH, bits);
}

u32 hpio_data(struct hpio *io)
{
	return io->read(io, ABI_CPUHP_DATA, ABI_CPUHP_DATA_WIDTH);
}

void hpio_write_data(struct hpio *io, u32 v)
{
	io->write(io, ABI_CPUHP_DATA, ABI_CPUHP_DATA_WIDTH, v);
}

/* Select, command @cmd (after command 1 with @prime), read data. */
static u32 read_after(struct hpio *io, u32 sel, bool prime, u8 cmd)
{
	u32 v;

	hpio_lock(io);
	hpio_select(io, sel);
	if (prime) {
		io->cur_cmd = -1; /* always prime: see hpio.h */
		hpio_command(io, ABI_CPUHP_CMD_OST_EVENT);
	}
	hpio_command(io, cmd);
	v = hpio_data(io);
	hpio_unlock(io);
	return v;
}

u32 hpio_arch_id(struct hpio *io, u32 sel)
{
	return read_after(io, sel, false, ABI_CPUHP_CMD_ARCH_ID);
}

u32 hpio_ext_read(struct hpio *io, u32 sel, u8 cmd)
{
	return read_after(io, sel, true, cmd);
}

void hpio_report(struct hpio *io, u32 sel, u32 value)
{
	hpio_lock(io);
	hpio_select(io, sel);
	if (io->cur_cmd != ABI_CPUHP_CMD_GUEST_STATE) {
		hpio_command(io, ABI_CPUHP_CMD_ARCH_ID);
		hpio_command(io, ABI_CPUHP_CMD_GUEST_STATE);
	}
	hpio_write_data(io, value);
	hpio_unlock(io);
}

void hpio_eject(struct hpio *io, u32 sel)
{
	hpio_lock(io);
	hpio_select(io, sel);
	hpio_write_flags(io, ABI_CPUHP_F_EJECT);
	hpio_unlock(io);
}

void hpio_ost(struct hpio *io, u32 sel, u32 event, u32 status)
{
	hpio_lock(io);
	hpio_select(io, sel);
	hpio_command(io, ABI_CPUHP_CMD_OST_EVENT);
	hpio_write_data(io, event);
	hpio_command(io, ABI_CPUHP_CMD_OST_STATUS);
	hpio_write_data(io, status);
	hpio_unlock(io);
}

u8 hpio_read_flags(struct hpio *io, u32 sel)
{
	u8 f;

	hpio_lock(io);
	hpio_select(io, sel);
	f = hpio_flags(io);
	hpio_unlock(io);
	return f;
}

unsigned int hpio_scan(struct hpio *io, u32 *ins, unsigned int *nr_ins, u32 *rm,
		       unsigned int *nr_rm, unsigned int max)
{
	unsigned int rounds = 0;
	u32 start = 0;

	*nr_ins = *nr_rm = 0;
	hpio_lock(io);
	while (rounds < io->nr_sel && start < io->nr_sel) {
		u32 sel;
		u8 f;

		rounds++;
		io->cur_sel = -1; /* command 0 scans from what we write here */
		hpio_select(io, start);
		hpio_command(io, ABI_CPUHP_CMD_NEXT_EVENT);
		sel = hpio_data(io);
		if (sel < start || sel >= io->nr_sel)
			break; /* wrapped around, or a block gone mad */
		io->cur_sel = (int)sel;
		f = hpio_flags(io);
		if (f & ABI_CPUHP_F_INSERT) {
			hpio_write_flags(io, ABI_CPUHP_F_INSERT);
			if (*nr_ins < max)
				ins[(*nr_ins)++] = sel;
		} else if (f & ABI_CPUHP_F_REMOVE) {
			hpio_write_flags(io, ABI_CPUHP_F_REMOVE);
			if (*nr_rm < max)
				rm[(*nr_rm)++] = sel;
		} else if (sel == start) {
			break; /* nothing found: the selector did not move */
		}
		start = sel + 1;
	}
	hpio_unlock(io);
	return rounds;
}

u32 hpio_report_value(const struct cpuhp_notice *n)
{
	u32 v = 0;
	int state = n->state;

	if (n->kind == CPUHP_NOTICE_DONE) {
		v |= ABI_GUEST_STATE_DONE;
	} else if (n->bringup) {
		if (n->ret)
			state--; /* startup of S failed: still below S */
	} else if (!n->ret) {
		state--; /* teardown of S done: now S - 1 */
	}
	if (n->bringup)
		v |= ABI_GUEST_STATE_UP;
	if (n->rollback)
		v |= ABI_GUEST_STATE_ROLLBACK;
	if (n->ret)
		v |= ABI_GUEST_STATE_FAILED;
	return v | ((u32)state & ABI_GUEST_STATE_MASK);
}
