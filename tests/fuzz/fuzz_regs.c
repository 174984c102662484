// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzes the CPU-hotplug register block (vmm/devices/cpuhp_regs.c) and the GED
 * (vmm/devices/ged.c) together, as a guest and the VMM drive them: guest accesses
 * of any width and offset interleaved with the host's plug, unplug request,
 * cancel, forced unplug and withdrawal of a timed-out plug, and GED raises.
 *
 * The oracle is a reference model written from the register table in
 * vmm/devices/cpuhp_regs.h and the semantics in vmm/devices/ged.h, not from the
 * code: every access's result (accepted or the reason it was ignored, the
 * value read, the callback fired) and every host call's return code is
 * predicted and compared, each touched CPU's record is compared with
 * hpregs_get_cpu(), and the counters of hpregs_stats() and ged_stats() must
 * equal what the harness counted.  In particular the eject callback fires
 * only for a CPU the host asked to remove and has not since cancelled or
 * forced out, never CPU 0.  Callbacks take the block's lock again
 * (hpregs_get_cpu) to prove they run after it was dropped: a deadlock is a
 * libFuzzer timeout.
 *
 * Input: byte 0 picks max_cpus, byte 1 options (arch ids, GED interrupt),
 * then operations, one opcode byte and its operands each.
 */
#include <errno.h>
#include <stdbool.h>

#include "cpuhp_regs.h"
#include "fuzz.h"
#include "ged.h"
#include "hotvm/abi.h"

#define GUEST_STATE_BITS                                                       \
	(ABI_GUEST_STATE_MASK | ABI_GUEST_STATE_UP |                           \
	 ABI_GUEST_STATE_ROLLBACK | ABI_GUEST_STATE_FAILED |                   \
	 ABI_GUEST_STATE_DONE)

/* What the model believes about one CPU: the fields of struct hpregs_cpu. */
struct model_cpu {
	uint64_t arch_id;
	uint32_t ost_event, ost_status;
	bool enabled, inserting, removing, fw_remove, requested;
	bool seen; /* insert_seen: the guest read or cleared the insert */
};

enum cb_kind { CB_NONE, CB_EJECT, CB_OST, CB_STATE, CB_FAULT, CB_TARGET };

struct harness {
	struct hpregs regs;
	struct ged ged;
	unsigned int max;
	struct model_cpu *cpus;
	uint32_t selector;
	uint8_t command;

	/* The callback fired by the access in progress, if any. */
	bool in_access;
	enum cb_kind cb;
	unsigned int cb_cpu;
	uint32_t cb_a, cb_b, cb_ret;
	unsigned int cb_calls;

	bool has_ops; /* without ops, nothing fires and fault/target read 0 */
	struct hpregs_stats want; /* counted by the harness */

	/* GED model and counts. */
	uint32_t ged_pending;
	bool ged_has_irq, irq_fail;
	uint64_t irq_calls;
	struct ged_stats ged_want;
};

/* ---- callbacks: record, check they run unlocked ---- */

static void record(struct harness *h, enum cb_kind kind, unsigned int cpu,
		   uint32_t a, uint32_t b)
{
	struct hpregs_cpu snap;

	FUZZ_ASSERT(h->in_access);
	FUZZ_ASSERT(h->cb == CB_NONE); /* at most one callback per access */
	FUZZ_ASSERT(cpu < h->max);
	/* Takes the lock: hangs if the callback were run under it. */
	FUZZ_ASSERT(hpregs_get_cpu(&h->regs, cpu, &snap) == 0);
	if (kind == CB_EJECT)
		FUZZ_ASSERT(!snap.enabled); /* updated before the callback */
	h->cb = kind;
	h->cb_cpu = cpu;
	h->cb_a = a;
	h->cb_b = b;
	h->cb_calls++;
}

static void cb_eject(void *ctx, unsigned int cpu, bool asked)
{
	record(ctx, CB_EJECT, cpu, asked, 0);
}

static void cb_ost(void *ctx, unsigned int cpu, uint32_t event, uint32_t status)
{
	record(ctx, CB_OST, cpu, event, status);
}

static void cb_state(void *ctx, unsigned int cpu, uint32_t value)
{
	record(ctx, CB_STATE, cpu, value, 0);
}

static uint32_t answer(struct harness *h)
{
	/* Varies per call, so a value read back is the one returned. */
	h->cb_ret = (h->cb_calls + 1) * 2654435761u;
	return h->cb_ret;
}

static uint32_t cb_fault(void *ctx, unsigned int cpu)
{
	record(ctx, CB_FAULT, cpu, 0, 0);
	return answer(ctx);
}

static uint32_t cb_target(void *ctx, unsigned int cpu)
{
	record(ctx, CB_TARGET, cpu, 0, 0);
	return answer(ctx);
}

static const struct hpregs_ops ops = {
	.eject = cb_eject,
	.ost = cb_ost,
	.guest_state = cb_state,
	.guest_fault = cb_fault,
	.guest_target = cb_target,
};

static int irq(void *ctx)
{
	struct harness *h = ctx;

	h->irq_calls++;
	return h->irq_fail ? -EIO : 0;
}

/* ---- comparisons ---- */

static void compare_cpu(struct harness *h, unsigned int cpu)
{
	const struct model_cpu *m = &h->cpus[cpu];
	struct hpregs_cpu c;

	FUZZ_ASSERT(hpregs_get_cpu(&h->regs, cpu, &c) == 0);
	FUZZ_ASSERT(c.arch_id == m->arch_id);
	FUZZ_ASSERT(c.enabled == m->enabled);
	FUZZ_ASSERT(c.inserting == m->inserting);
	FUZZ_ASSERT(c.removing == m->removing);
	FUZZ_ASSERT(c.fw_remove == m->fw_remove);
	FUZZ_ASSERT(c.unplug_requested == m->requested);
	FUZZ_ASSERT(c.ost_event == m->ost_event);
	FUZZ_ASSERT(c.ost_status == m->ost_status);
	FUZZ_ASSERT(c.insert_seen == m->seen);
	FUZZ_ASSERT(hpregs_is_enabled(&h->regs, cpu) == m->enabled);
	/* Consequences the header states, independent of the model. */
	FUZZ_ASSERT(!c.unplug_requested || c.enabled);
	FUZZ_ASSERT(!c.fw_remove || (c.enabled && cpu != 0));
	FUZZ_ASSERT(!c.unplug_requested || cpu != 0);
}

static void compare_stats(struct harness *h)
{
	struct hpregs_stats st;
	struct ged_stats gs;
	uint64_t ignored = 0;

	hpregs_stats(&h->regs, &st);
	FUZZ_ASSERT(st.accesses == h->want.accesses);
	for (int i = 0; i < HPREGS_IGN_NR; i++) {
		FUZZ_ASSERT(st.ignored[i] == h->want.ignored[i]);
		if (i != HPREGS_OK)
			ignored += st.ignored[i];
	}
	FUZZ_ASSERT(ignored <= st.accesses);
	FUZZ_ASSERT(st.ejects == h->want.ejects);
	FUZZ_ASSERT(st.osts == h->want.osts);
	FUZZ_ASSERT(st.guest_states == h->want.guest_states);
	FUZZ_ASSERT(st.guest_faults == h->want.guest_faults);
	FUZZ_ASSERT(st.guest_targets == h->want.guest_targets);

	ged_stats(&h->ged, &gs);
	FUZZ_ASSERT(gs.reads == h->ged_want.reads);
	FUZZ_ASSERT(gs.raises == h->ged_want.raises);
	FUZZ_ASSERT(gs.irq_errors == h->ged_want.irq_errors);
	FUZZ_ASSERT(gs.ign_write == h->ged_want.ign_write);
	FUZZ_ASSERT(gs.ign_width == h->ged_want.ign_width);
	FUZZ_ASSERT(gs.ign_offset == h->ged_want.ign_offset);
	FUZZ_ASSERT(h->irq_calls == (h->ged_has_irq ? gs.raises : 0));
	FUZZ_ASSERT(ged_pending(&h->ged) == h->ged_pending);
}

/* ---- the model of one guest access (vmm/devices/cpuhp_regs.h's table) ---- */

struct outcome {
	int ign;
	uint64_t val; /* read value, when predictable */
	bool val_from_cb;
	enum cb_kind cb;
	uint32_t cb_a, cb_b;
};

static bool known_command(uint64_t v)
{
	return v == ABI_CPUHP_CMD_NEXT_EVENT || v == ABI_CPUHP_CMD_OST_EVENT ||
	       v == ABI_CPUHP_CMD_OST_STATUS || v == ABI_CPUHP_CMD_ARCH_ID ||
	       v == ABI_CPUHP_CMD_GUEST_STATE ||
	       v == ABI_CPUHP_CMD_GUEST_FAULT ||
	       v == ABI_CPUHP_CMD_GUEST_TARGET;
}

static bool has_event(const struct model_cpu *c)
{
	return c->inserting || c->removing || c->fw_remove;
}

/* Command 0: from the selector, wrapping once, the first CPU with events. */
static void model_scan(struct harness *h)
{
	for (unsigned int k = 0; k < h->max; k++) {
		uint32_t i = (h->selector + k) % h->max;

		if (has_event(&h->cpus[i])) {
			h->selector = i;
			return;
		}
	}
}

static void model_read(struct harness *h, uint64_t off, struct outcome *o)
{
	struct model_cpu *c = &h->cpus[h->selector];

	switch (off) {
	case ABI_CPUHP_SELECTOR:
		if (h->command == ABI_CPUHP_CMD_NEXT_EVENT)
			o->val = 0;
		else if (h->command == ABI_CPUHP_CMD_ARCH_ID)
			o->val = c->arch_id >> 32;
		else
			o->ign = HPREGS_IGN_DATA;
		return;
	case ABI_CPUHP_FLAGS:
		o->val = (c->enabled ? ABI_CPUHP_F_ENABLED : 0) |
			 (c->inserting ? ABI_CPUHP_F_INSERT : 0) |
			 (c->removing ? ABI_CPUHP_F_REMOVE : 0) |
			 (c->fw_remove ? ABI_CPUHP_F_FW_REMOVE : 0);
		c->seen |= c->inserting;
		return;
	case ABI_CPUHP_DATA:
		if (h->command == ABI_CPUHP_CMD_NEXT_EVENT) {
			o->val = h->selector;
		} else if (h->command == ABI_CPUHP_CMD_ARCH_ID) {
			o->val = (uint32_t)c->arch_id;
		} else if (h->command == ABI_CPUHP_CMD_GUEST_FAULT) {
			o->cb = CB_FAULT;
			o->val_from_cb = true;
			h->want.guest_faults++;
		} else if (h->command == ABI_CPUHP_CMD_GUEST_TARGET) {
			o->cb = CB_TARGET;
			o->val_from_cb = true;
			h->want.guest_targets++;
		} else {
			o->ign = HPREGS_IGN_DATA;
		}
		return;
	}
}

static void model_write_flags(struct harness *h, uint8_t v, struct outcome *o)
{
	unsigned int cpu = h->selector;
	struct model_cpu *c = &h->cpus[cpu];

	if (v & ABI_CPUHP_F_INSERT) {
		c->seen |= c->inserting;
		c->inserting = false;
	} else if (v & ABI_CPUHP_F_REMOVE) {
		c->removing = false;
	} else if (v & ABI_CPUHP_F_EJECT) {
		/*
		 * Never the boot CPU nor an absent one; any other goes,
		 * asked for or the guest's own (as QEMU).
		 */
		if (cpu == 0 || !c->enabled) {
			o->ign = HPREGS_IGN_EJECT;
			return;
		}
		o->cb_a = c->requested;
		*c = (struct model_cpu){ .arch_id = c->arch_id,
					 .ost_event = c->ost_event,
					 .ost_status = c->ost_status };
		o->cb = CB_EJECT;
		h->want.ejects++;
	} else if (v & ABI_CPUHP_F_FW_REMOVE) {
		if (cpu == 0 || !c->enabled)
			o->ign = HPREGS_IGN_EJECT;
		else
			c->fw_remove = true;
	} else {
		o->ign = HPREGS_IGN_FLAGS;
	}
}

static void model_write(struct harness *h, uint64_t off, uint64_t val,
			struct outcome *o)
{
	struct model_cpu *c;

	if (off == ABI_CPUHP_SELECTOR) {
		h->selector = (uint32_t)val;
		return;
	}
	if (h->selector >= h->max) {
		o->ign = HPREGS_IGN_SELECTOR;
		return;
	}
	c = &h->cpus[h->selector];
	if (off == ABI_CPUHP_FLAGS) {
		model_write_flags(h, (uint8_t)val, o);
	} else if (off == ABI_CPUHP_COMMAND) {
		if (!known_command(val)) {
			o->ign = HPREGS_IGN_COMMAND;
			return;
		}
		h->command = (uint8_t)val;
		if (h->command == ABI_CPUHP_CMD_NEXT_EVENT)
			model_scan(h);
	} else if (h->command == ABI_CPUHP_CMD_OST_EVENT) {
		c->ost_event = (uint32_t)val;
	} else if (h->command == ABI_CPUHP_CMD_OST_STATUS) {
		c->ost_status = (uint32_t)val;
		o->cb = CB_OST;
		o->cb_a = c->ost_event;
		o->cb_b = (uint32_t)val;
		h->want.osts++;
	} else if (h->command == ABI_CPUHP_CMD_GUEST_STATE &&
		   !(val & ~(uint64_t)GUEST_STATE_BITS)) {
		o->cb = CB_STATE;
		o->cb_a = (uint32_t)val;
		h->want.guest_states++;
	} else {
		o->ign = HPREGS_IGN_DATA;
	}
}

/* Offset, width and direction alone: a register, the wrong width, or none. */
static int model_layout(uint64_t off, unsigned int width, bool is_write)
{
	unsigned int want;

	if (off == ABI_CPUHP_SELECTOR || off == ABI_CPUHP_DATA)
		want = 4;
	else if (off == ABI_CPUHP_FLAGS ||
		 (off == ABI_CPUHP_COMMAND && is_write))
		want = 1;
	else
		return HPREGS_IGN_RESERVED;
	return width == want ? HPREGS_OK : HPREGS_IGN_WIDTH;
}

static void guest_access(struct harness *h, uint64_t off, unsigned int width,
			 bool is_write, uint64_t data)
{
	struct outcome o = { .ign = model_layout(off, width, is_write) };
	uint64_t val = data;
	uint64_t mask = width >= 8 ? ~0ULL : (1ULL << (width * 8)) - 1;
	int ign;

	if (o.ign == HPREGS_OK && is_write)
		model_write(h, off, data & mask, &o);
	else if (o.ign == HPREGS_OK && h->selector >= h->max)
		o.ign = HPREGS_IGN_SELECTOR;
	else if (o.ign == HPREGS_OK)
		model_read(h, off, &o);
	if (o.ign != HPREGS_OK) {
		o.cb = CB_NONE;
		o.val = 0;
		o.val_from_cb = false;
	} else if (!h->has_ops) {
		/* No callback: fault and target reads give 0. */
		o.cb = CB_NONE;
		o.val_from_cb = false;
	}
	h->want.accesses++;
	if (o.ign != HPREGS_OK)
		h->want.ignored[o.ign]++; /* ignored[0] stays 0 */

	h->in_access = true;
	h->cb = CB_NONE;
	ign = hpregs_access(&h->regs, off, width, is_write, &val);
	h->in_access = false;

	FUZZ_ASSERT(ign == o.ign);
	FUZZ_ASSERT(h->cb == o.cb);
	if (o.cb == CB_EJECT || o.cb == CB_OST || o.cb == CB_STATE ||
	    o.cb == CB_FAULT || o.cb == CB_TARGET)
		FUZZ_ASSERT(h->cb_cpu == h->selector);
	if (o.cb == CB_OST || o.cb == CB_STATE || o.cb == CB_EJECT) {
		FUZZ_ASSERT(h->cb_a == o.cb_a);
		FUZZ_ASSERT(o.cb == CB_EJECT || h->cb_b == o.cb_b);
	}
	if (!is_write)
		FUZZ_ASSERT(val == (o.val_from_cb ? h->cb_ret : o.val));
	else
		FUZZ_ASSERT(val == data); /* a write leaves *data alone */
	if (h->selector < h->max)
		compare_cpu(h, h->selector);
}

/* ---- host requests (vmm/devices/cpuhp_regs.h's return codes) ---- */

enum host_op {
	H_COLDPLUG,
	H_PLUG,
	H_REQUEST,
	H_CANCEL,
	H_FORCE,
	H_WITHDRAW,
	H_NR
};

static void host_call(struct harness *h, enum host_op op, unsigned int cpu)
{
	struct model_cpu *c = cpu < h->max ? &h->cpus[cpu] : NULL;
	int want = 0, got = 0;

	switch (op) {
	case H_COLDPLUG:
	case H_PLUG:
		if (!c)
			want = -EINVAL;
		else if (c->enabled)
			want = -EBUSY;
		else
			*c = (struct model_cpu){ .arch_id = c->arch_id,
						 .ost_event = c->ost_event,
						 .ost_status = c->ost_status,
						 .enabled = true,
						 .inserting = op == H_PLUG };
		got = op == H_PLUG ? hpregs_plug(&h->regs, cpu)
				   : hpregs_coldplug(&h->regs, cpu);
		break;
	case H_REQUEST:
		if (!c)
			want = -EINVAL;
		else if (cpu == 0)
			want = -EPERM;
		else if (!c->enabled)
			want = -ENODEV;
		else
			c->removing = c->requested = true;
		got = hpregs_request_unplug(&h->regs, cpu);
		break;
	case H_CANCEL:
		if (!c)
			want = -EINVAL;
		else if (!c->requested)
			want = -ENOENT;
		else
			c->requested = c->removing = c->fw_remove = false;
		got = hpregs_cancel_unplug(&h->regs, cpu);
		break;
	case H_FORCE:
		if (!c)
			want = -EINVAL;
		else if (cpu == 0)
			want = -EPERM;
		else if (!c->enabled)
			want = -ENODEV;
		else
			*c = (struct model_cpu){ .arch_id = c->arch_id,
						 .ost_event = c->ost_event,
						 .ost_status = c->ost_status };
		got = hpregs_unplug_force(&h->regs, cpu);
		break;
	case H_WITHDRAW:
		/* Undone if the guest never looked, else asked back. */
		if (!c) {
			want = -EINVAL;
		} else if (cpu == 0) {
			want = -EPERM;
		} else if (!c->enabled) {
			want = -ENODEV;
		} else if (c->inserting && !c->seen) {
			*c = (struct model_cpu){ .arch_id = c->arch_id,
						 .ost_event = c->ost_event,
						 .ost_status = c->ost_status };
		} else {
			c->inserting = false;
			c->removing = c->requested = true;
			want = 1;
		}
		got = hpregs_withdraw_plug(&h->regs, cpu);
		break;
	case H_NR:
		return;
	}
	FUZZ_ASSERT(got == want);
	if (c)
		compare_cpu(h, cpu);
}

/* ---- GED (vmm/devices/ged.h) ---- */

static void ged_guest(struct harness *h, uint64_t off, unsigned int width,
		      bool is_write, uint64_t data)
{
	uint64_t val = data;
	bool ok = ged_access(&h->ged, off, width, is_write, &val);

	if (off != 0) {
		h->ged_want.ign_offset++;
	} else if (width != 4) {
		h->ged_want.ign_width++;
	} else if (is_write) {
		h->ged_want.ign_write++;
	} else {
		/* Read and clear: exactly what was raised since the last read. */
		FUZZ_ASSERT(ok);
		FUZZ_ASSERT(val == h->ged_pending);
		h->ged_pending = 0;
		h->ged_want.reads++;
		return;
	}
	FUZZ_ASSERT(!ok);
	FUZZ_ASSERT(val == (is_write ? data : 0));
}

static void ged_host(struct harness *h, uint32_t bits)
{
	int want = 0, got;

	if (!bits) {
		want = -EINVAL;
	} else {
		h->ged_pending |=
			bits; /* stays pending even if the irq fails */
		h->ged_want.raises++;
		if (h->ged_has_irq && h->irq_fail) {
			want = -EIO;
			h->ged_want.irq_errors++;
		}
	}
	got = ged_raise(&h->ged, bits);
	FUZZ_ASSERT(got == want);
}

/* ---- the input ---- */

static unsigned int pick_max(uint8_t b, int *init_rc)
{
	*init_rc = 0;
	switch (b) {
	case 0xff:
		*init_rc = -EINVAL;
		return 0;
	case 0xfe:
		*init_rc = -EINVAL;
		return HPREGS_MAX_CPUS + 1;
	case 0xfd:
		return HPREGS_MAX_CPUS;
	case 0xfc:
		return 257;
	}
	return 1 + b % 16;
}

/* Mostly the offsets that matter; sometimes any 64-bit offset at all. */
static uint64_t pick_offset(struct fuzz_in *in, unsigned int span)
{
	uint8_t b = fuzz_u8(in);

	return b & 0x80 ? fuzz_uint(in, 8) : b % span;
}

static unsigned int pick_width(struct fuzz_in *in)
{
	uint8_t b = fuzz_u8(in);

	return b < 0xf0 ? b % 9 : (unsigned int)fuzz_uint(in, 4);
}

static void run(struct harness *h, struct fuzz_in *in)
{
	while (fuzz_left(in)) {
		uint8_t op = fuzz_u8(in);
		uint64_t off, data;
		unsigned int width, cpu;
		bool wr;

		switch (op % 8) {
		case 0:
		case 1: /* guest access to the register block: the common case */
			off = pick_offset(in, 16);
			width = pick_width(in);
			wr = op & 0x10;
			data = fuzz_uint(in, op & 0x20 ? 8 : 4);
			guest_access(h, off, width, wr, data);
			break;
		case 2:
		case 3: /* a host request; CPUs past max too */
			cpu = (unsigned int)fuzz_uint(in, 2) % (h->max + 2);
			host_call(h, (enum host_op)((op >> 3) % H_NR), cpu);
			break;
		case 4: /* guest access to the GED */
			off = pick_offset(in, 8);
			width = pick_width(in);
			wr = op & 0x10;
			data = fuzz_uint(in, 4);
			ged_guest(h, off, width, wr, data);
			break;
		case 5:
			ged_host(h, (uint32_t)fuzz_uint(in, op & 0x10 ? 4 : 1));
			break;
		case 6:
			h->irq_fail = op & 0x10;
			break;
		case 7:
			compare_stats(h);
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct harness h = { 0 };
	uint64_t *ids = NULL;
	uint8_t opts;
	int want_rc, rc;

	h.max = pick_max(fuzz_u8(&in), &want_rc);
	opts = fuzz_u8(&in);
	if (h.max) {
		h.cpus = calloc(h.max, sizeof(*h.cpus));
		ids = calloc(h.max, sizeof(*ids));
		FUZZ_ASSERT(h.cpus && ids);
	}
	for (unsigned int i = 0; i < h.max; i++) {
		/* Arch ids with high bits, so command data 2 is exercised. */
		ids[i] = opts & 1 ? i | (uint64_t)(i * 7 + 1) << 32 : i;
		h.cpus[i].arch_id = ids[i];
	}
	h.command = ABI_CPUHP_CMD_NEXT_EVENT;
	h.has_ops = !(opts & 2);
	rc = hpregs_init(&h.regs, &(struct hpregs_config){
					  .max_cpus = h.max,
					  .arch_ids = opts & 1 ? ids : NULL,
					  .ops = opts & 2 ? NULL : &ops,
					  .ctx = &h });
	free(ids);
	FUZZ_ASSERT(rc == want_rc);
	if (rc) {
		free(h.cpus);
		return 0;
	}
	h.ged_has_irq = !(opts & 4);
	FUZZ_ASSERT(ged_init(&h.ged, h.ged_has_irq ? irq : NULL, &h) == 0);

	run(&h, &in);

	compare_stats(&h);
	for (unsigned int i = 0; i < h.max; i++)
		compare_cpu(&h, i);
	ged_destroy(&h.ged);
	hpregs_destroy(&h.regs);
	free(h.cpus);
	return 0;
}
