// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes the report ring's reader and mailbox (vmm/devices/cpuhp_ring.c,
 * through the register block that owns it): a guest that writes anything
 * anywhere in the area, rings any value, and the host's plugs, removals,
 * withdrawals, reads and machine resets in between.
 *
 * The oracle follows the layout of include/hotvm/ring.h, not the code:
 * before each read the harness works out from the area's bytes which
 * entries a reader must hand on (head at most ABI_RING_ENTRIES past the
 * host's tail, seq = index + 1, selector, state word and result in range)
 * and which console bytes, and the callbacks must deliver exactly those,
 * in order, with times that never go back nor pass the read's clock.
 * The host writes only its two indices and the mailbox's bits: every
 * other byte of the area must be as the guest left it, and nothing at
 * all may change while the ring is off.  The area is malloc'd at exactly
 * its size, so ASan catches a read outside it.
 *
 * Input: byte 0 picks max_cpus (1..64), then operations, one opcode byte
 * and its operands each.
 */
#include <errno.h>
#include <stdbool.h>
#include <time.h>

#include "cpuhp_regs.h"
#include "fuzz.h"
#include "hotvm/abi.h"
#include "hotvm/guest_states.h"
#include "hotvm/ring.h"

#define STATE_BITS                                                             \
	(ABI_GUEST_STATE_MASK | ABI_GUEST_STATE_UP |                           \
	 ABI_GUEST_STATE_ROLLBACK | ABI_GUEST_STATE_FAILED |                   \
	 ABI_GUEST_STATE_DONE)

struct want {
	uint32_t sel, value;
	int32_t ret;
};

static struct {
	struct hpregs regs;
	uint8_t *mem, *shadow; /* the area, and what the guest wrote there */
	unsigned int max;
	bool on; /* the model's word on whether the ring is on */
	uint32_t tail, con_tail; /* the model's host indices */
	struct want want[ABI_RING_ENTRIES];
	unsigned int nr_want, got;
	uint8_t con[ABI_RING_CON_SIZE];
	size_t con_want, con_got;
	uint64_t last_at, now;
	bool read; /* predict() ran: the host reads, and writes its indices */
	bool read_con; /* ... and the console's too (an exit's read) */
} h;

static void on_entry(void *ctx, unsigned int cpu, uint32_t value, int ret,
		     uint64_t at_ns)
{
	(void)ctx;
	FUZZ_ASSERT(h.got < h.nr_want);
	FUZZ_ASSERT(cpu == h.want[h.got].sel);
	FUZZ_ASSERT(value == h.want[h.got].value);
	FUZZ_ASSERT(ret == h.want[h.got].ret);
	FUZZ_ASSERT(at_ns >= h.last_at);
	FUZZ_ASSERT(at_ns <= h.now);
	h.last_at = at_ns;
	h.got++;
}

static void on_console(void *ctx, const void *buf, size_t n)
{
	(void)ctx;
	FUZZ_ASSERT(h.con_got + n <= h.con_want);
	FUZZ_ASSERT(!memcmp(buf, h.con + h.con_got, n));
	h.con_got += n;
}

static const struct hpring_ops ops = { .entry = on_entry };

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * What a read must hand on, from the area's bytes and the host's tails:
 * the console only at the guest's exits (@console), never at a query's.
 */
static void predict(bool console)
{
	uint32_t head = rd32(h.mem + offsetof(struct abi_ring_hdr, head));
	uint32_t chead = rd32(h.mem + offsetof(struct abi_ring_hdr, con_head));
	uint32_t n = head - h.tail, cn = chead - h.con_tail;

	h.nr_want = h.got = 0;
	h.con_want = h.con_got = 0;
	if (!h.on)
		return;
	h.read = true;
	for (uint32_t i = 0; n <= ABI_RING_ENTRIES && i < n; i++) {
		const uint8_t *e =
			h.mem + ABI_RING_ENTRY_OFF +
			((h.tail + i) % ABI_RING_ENTRIES) * ABI_RING_ENTRY_SIZE;
		struct abi_ring_entry x;

		memcpy(&x, e, sizeof(x));
		if (x.seq != h.tail + i + 1 || x.sel >= h.max ||
		    (x.value & ~STATE_BITS) ||
		    (x.value & ABI_GUEST_STATE_MASK) >= GUEST_NR_STATES ||
		    x.ret > 0 || x.ret < -4095)
			continue;
		h.want[h.nr_want++] = (struct want){ x.sel, x.value, x.ret };
	}
	h.tail = head;
	h.read_con = console;
	if (!console)
		return;
	for (uint32_t i = 0; cn <= ABI_RING_CON_SIZE && i < cn; i++)
		h.con[h.con_want++] =
			h.mem[ABI_RING_CON_OFF +
			      (h.con_tail + i) % ABI_RING_CON_SIZE];
	h.con_tail = chead;
}

/*
 * After a read: everything delivered, the host's indices are the model's,
 * and no byte but the indices changed (the mailbox is checked apart).
 */
static void after_read(void)
{
	FUZZ_ASSERT(h.got == h.nr_want);
	FUZZ_ASSERT(h.con_got == h.con_want);
	if (h.read) {
		h.read = false;
		memcpy(h.shadow + offsetof(struct abi_ring_hdr, tail), &h.tail,
		       4);
		if (h.read_con)
			memcpy(h.shadow +
				       offsetof(struct abi_ring_hdr, con_tail),
			       &h.con_tail, 4);
	}
}

/* The host writes the area only at its indices and in the mailbox. */
static void check_untouched(void)
{
	FUZZ_ASSERT(!memcmp(h.mem, h.shadow, ABI_RING_INSERT_OFF));
	FUZZ_ASSERT(!memcmp(h.mem + ABI_RING_CON_OFF,
			    h.shadow + ABI_RING_CON_OFF,
			    ABI_RING_SIZE - ABI_RING_CON_OFF));
	if (!h.on)
		FUZZ_ASSERT(!memcmp(h.mem, h.shadow, ABI_RING_SIZE));
}

static void guest_write(struct fuzz_in *in)
{
	size_t off = fuzz_uint(in, 2) % ABI_RING_SIZE, got;
	const uint8_t *p = fuzz_bytes(in, fuzz_u8(in) % 64, &got);

	if (got > ABI_RING_SIZE - off)
		got = ABI_RING_SIZE - off;
	memcpy(h.mem + off, p, got);
	memcpy(h.shadow + off, p, got);
}

/* A whole well-formed entry at the guest's head, as gring_report(). */
static void guest_entry(struct fuzz_in *in)
{
	uint32_t head = rd32(h.mem + offsetof(struct abi_ring_hdr, head));
	struct abi_ring_entry e = {
		.seq = head + 1,
		.sel = fuzz_u8(in) % (h.max + 1),
		.value = (uint32_t)fuzz_uint(in, 2),
		.ret = -(int32_t)fuzz_u8(in),
		.tsc = fuzz_uint(in, 8),
	};
	size_t off = ABI_RING_ENTRY_OFF +
		     (head % ABI_RING_ENTRIES) * ABI_RING_ENTRY_SIZE;

	head++;
	memcpy(h.mem + off, &e, sizeof(e));
	memcpy(h.shadow + off, &e, sizeof(e));
	memcpy(h.mem + offsetof(struct abi_ring_hdr, head), &head, 4);
	memcpy(h.shadow + offsetof(struct abi_ring_hdr, head), &head, 4);
}

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The host's mailbox writes are the mailbox's: the shadow follows. */
static void sync_mailbox(void)
{
	memcpy(h.shadow + ABI_RING_INSERT_OFF, h.mem + ABI_RING_INSERT_OFF,
	       ABI_RING_CON_OFF - ABI_RING_INSERT_OFF);
}

static void doorbell(uint32_t v)
{
	bool was = h.on;
	bool good = rd32(h.mem) == ABI_RING_MAGIC &&
		    rd32(h.mem + 4) == ABI_RING_VERSION;

	if (v == ABI_RING_DB_ENABLE && !was && good) {
		h.on = h.read = h.read_con = true;
		h.tail = rd32(h.mem + offsetof(struct abi_ring_hdr, head));
		h.con_tail =
			rd32(h.mem + offsetof(struct abi_ring_hdr, con_head));
		h.nr_want = h.got = 0;
		h.con_want = h.con_got = 0;
		h.last_at = 0;
	} else if (was && (v == ABI_RING_DB_DRAIN ||
			   (v == ABI_RING_DB_ENABLE && good))) {
		predict(true);
	} else {
		h.nr_want = h.got = 0;
		h.con_want = h.con_got = 0;
	}
	h.now = mono();
	hpregs_ring_doorbell(&h.regs, v, h.now);
	FUZZ_ASSERT(hpring_enabled(&h.regs.ring) == h.on);
	after_read();
	if (h.on)
		sync_mailbox();
}

/* Every bit of the mailbox as the shadow has it, but @sel's own. */
static void check_mailbox_but(unsigned int sel)
{
	static const uint32_t off[] = { ABI_RING_INSERT_OFF,
					ABI_RING_REMOVE_OFF, ABI_RING_FAULT_OFF,
					ABI_RING_TARGET_OFF };

	for (unsigned int b = 0; b < 4; b++) {
		const uint8_t *m = h.mem + off[b], *w = h.shadow + off[b];
		size_t k = sel / 8;

		FUZZ_ASSERT(!memcmp(m, w, k));
		FUZZ_ASSERT((m[k] ^ w[k]) == ((m[k] ^ w[k]) & (1u << sel % 8)));
		FUZZ_ASSERT(!memcmp(m + k + 1, w + k + 1,
				    ABI_RING_MBOX_WORDS * 8 - k - 1));
	}
}

static void host_op(uint8_t op, unsigned int cpu)
{
	switch (op % 6) {
	case 0:
		hpregs_plug(&h.regs, cpu);
		break;
	case 1:
		hpregs_request_unplug(&h.regs, cpu);
		break;
	case 2:
		hpregs_cancel_unplug(&h.regs, cpu);
		break;
	case 3:
		hpregs_withdraw_plug(&h.regs, cpu);
		break;
	case 4:
		hpregs_unplug_force(&h.regs, cpu);
		break;
	case 5:
		hpregs_ring_hint(&h.regs, (enum hpring_box)(op / 6 % 4), cpu);
		break;
	}
	/*
	 * Off, the host writes nothing at all; on, only the bits of the
	 * selector it acted on, and only if that selector exists.
	 */
	check_untouched();
	if (cpu >= h.max)
		FUZZ_ASSERT(!memcmp(h.mem, h.shadow, ABI_RING_SIZE));
	check_mailbox_but(cpu);
	sync_mailbox();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	memset(&h, 0, sizeof(h));
	h.max = fuzz_u8(&in) % 64 + 1;
	h.mem = calloc(1, ABI_RING_SIZE);
	h.shadow = calloc(1, ABI_RING_SIZE);
	FUZZ_ASSERT(h.mem && h.shadow);
	FUZZ_ASSERT(!hpregs_init(&h.regs, &(struct hpregs_config){
						  .max_cpus = h.max,
						  .ring_mem = h.mem,
					  }));
	hpring_attach(&h.regs.ring, &ops, NULL);
	hpring_set_console(&h.regs.ring, on_console, NULL);
	while (fuzz_left(&in)) {
		uint8_t op = fuzz_u8(&in);

		switch (op % 8) {
		case 0:
			guest_write(&in);
			break;
		case 1:
			guest_entry(&in);
			break;
		case 2:
			doorbell((uint32_t)fuzz_uint(&in, 4));
			break;
		case 3: /* the two doorbells that mean something */
			doorbell(op & 8 ? ABI_RING_DB_ENABLE
					: ABI_RING_DB_DRAIN);
			break;
		case 4: /* a query reads it */
			predict(false);
			h.now = UINT64_MAX; /* the reader's own clock */
			hpregs_ring_drain(&h.regs);
			after_read();
			break;
		case 5:
			host_op(fuzz_u8(&in), fuzz_u8(&in) % (h.max + 1));
			break;
		case 6:
			hpring_set_tsc_khz(&h.regs.ring, fuzz_uint(&in, 4));
			break;
		case 7: /* a machine reset */
			hpregs_reset(&h.regs);
			h.on = false;
			break;
		}
		check_untouched();
	}
	hpregs_destroy(&h.regs);
	free(h.mem);
	free(h.shadow);
	return 0;
}
