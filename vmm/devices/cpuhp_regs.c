// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU-hotplug register block: see vmm/devices/cpuhp_regs.h for the register
 * table.  Every access is decided under r->lock; a callback it triggers is
 * recorded and run after the lock is dropped, so a callback that re-enters
 * (or blocks on the control thread, which may hold its own locks while
 * calling hpregs_plug()) cannot deadlock against a vCPU.
 */
#include <errno.h>
#include <stdlib.h>

#include "clock.h"
#include "cpuhp_regs.h"
#include "hotvm/abi.h"
#include "hotvm/guest_states.h"

_Static_assert(ABI_CPUHP_SIZE == 12, "register block is 12 bytes");

#define GUEST_STATE_VALID                                                      \
	(ABI_GUEST_STATE_MASK | ABI_GUEST_STATE_UP |                           \
	 ABI_GUEST_STATE_ROLLBACK | ABI_GUEST_STATE_FAILED |                   \
	 ABI_GUEST_STATE_DONE)

enum call_kind {
	CALL_NONE,
	CALL_EJECT,
	CALL_EJECT_DENIED,
	CALL_OST,
	CALL_GUEST_STATE,
	CALL_GUEST_FAULT,
	CALL_GUEST_TARGET,
};

/* A callback decided under the lock, run after it. */
struct call {
	enum call_kind kind;
	unsigned int cpu;
	uint32_t a, b;
};

static const char *const ign_names[HPREGS_IGN_NR] = {
	[HPREGS_OK] = "ok",
	[HPREGS_IGN_RESERVED] = "reserved",
	[HPREGS_IGN_WIDTH] = "width",
	[HPREGS_IGN_SELECTOR] = "selector",
	[HPREGS_IGN_COMMAND] = "command",
	[HPREGS_IGN_FLAGS] = "flags",
	[HPREGS_IGN_EJECT] = "eject",
	[HPREGS_IGN_DATA] = "data",
};

const char *hpregs_ign_name(int reason)
{
	if (reason < 0 || reason >= HPREGS_IGN_NR)
		return "?";
	return ign_names[reason];
}

int hpregs_init(struct hpregs *r, const struct hpregs_config *cfg)
{
	unsigned int i;
	int ret;

	if (!cfg || !cfg->max_cpus || cfg->max_cpus > HPREGS_MAX_CPUS)
		return -EINVAL;
	/* Selector 0 is valid from the start, as QEMU initialises it. */
	*r = (struct hpregs){
		.max_cpus = cfg->max_cpus,
		.command = ABI_CPUHP_CMD_NEXT_EVENT,
		.ctx = cfg->ctx,
		.deny_guest_eject = cfg->deny_guest_eject,
	};
	if (cfg->ops)
		r->ops = *cfg->ops;
	r->cpus = calloc(cfg->max_cpus, sizeof(*r->cpus));
	if (!r->cpus)
		return -ENOMEM;
	for (i = 0; i < cfg->max_cpus; i++)
		r->cpus[i].arch_id = cfg->arch_ids ? cfg->arch_ids[i] : i;
	ret = pthread_mutex_init(&r->lock, NULL);
	if (!ret) {
		ret = -hpring_init(&r->ring, cfg->ring_mem, cfg->max_cpus);
		if (ret)
			pthread_mutex_destroy(&r->lock);
	}
	if (ret) {
		free(r->cpus);
		r->cpus = NULL;
		return -ret;
	}
	return 0;
}

void hpregs_destroy(struct hpregs *r)
{
	if (!r->cpus)
		return;
	hpring_destroy(&r->ring);
	pthread_mutex_destroy(&r->lock);
	free(r->cpus);
	r->cpus = NULL;
}

/* --- the ring's mailbox --------------------------------------------------- */

/*
 * A mailbox bit the guest took is its event cleared through the
 * registers (and an insert seen): the record catches up here, under
 * r->lock, before anything reads or changes it.
 */
static void ring_sync_cpu(struct hpregs *r, unsigned int cpu)
{
	struct hpregs_cpu *c = &r->cpus[cpu];

	if (c->inserting && !hpring_test(&r->ring, HPRING_INSERT, cpu)) {
		c->inserting = false;
		c->insert_seen = true;
	}
	if (c->removing && !hpring_test(&r->ring, HPRING_REMOVE, cpu))
		c->removing = false;
}

static void ring_sync_locked(struct hpregs *r)
{
	if (!hpring_enabled(&r->ring))
		return;
	for (unsigned int i = 0; i < r->max_cpus; i++)
		ring_sync_cpu(r, i);
}

/* The ring came on: what is pending already goes into the mailbox. */
static void ring_post_pending(struct hpregs *r)
{
	pthread_mutex_lock(&r->lock);
	for (unsigned int i = 0; i < r->max_cpus; i++) {
		if (r->cpus[i].inserting)
			hpring_post(&r->ring, HPRING_INSERT, i);
		if (r->cpus[i].removing)
			hpring_post(&r->ring, HPRING_REMOVE, i);
	}
	pthread_mutex_unlock(&r->lock);
}

static void ring_forget_cpu(struct hpregs *r, unsigned int cpu)
{
	hpring_clear_test(&r->ring, HPRING_INSERT, cpu);
	hpring_clear_test(&r->ring, HPRING_REMOVE, cpu);
}

void hpregs_ring_drain(struct hpregs *r)
{
	hpring_drain(&r->ring);
}

void hpregs_ring_hint(struct hpregs *r, enum hpring_box box, unsigned int cpu)
{
	if (cpu < r->max_cpus)
		hpring_post(&r->ring, box, cpu);
}

/* --- VMM side ------------------------------------------------------------ */

/*
 * @fn changes CPU @cpu's slot under the lock, once its number is checked
 * and, with @removable, the boot CPU refused (it is not hot-pluggable).
 */
typedef int (*cpu_change_fn)(struct hpregs *r, unsigned int cpu,
			     struct hpregs_cpu *c, bool arg);

static int change_cpu(struct hpregs *r, unsigned int cpu, bool removable,
		      cpu_change_fn fn, bool arg)
{
	int ret;

	if (cpu >= r->max_cpus)
		return -EINVAL;
	if (removable && !guest_cpu_removable(cpu))
		return -EPERM;
	pthread_mutex_lock(&r->lock);
	ret = fn(r, cpu, &r->cpus[cpu], arg);
	pthread_mutex_unlock(&r->lock);
	return ret;
}

static int enable(struct hpregs *r, unsigned int cpu, struct hpregs_cpu *c,
		  bool hotplugged)
{
	if (c->enabled)
		return -EBUSY;
	c->enabled = true;
	c->inserting = hotplugged;
	c->insert_seen = false;
	if (hotplugged)
		hpring_post(&r->ring, HPRING_INSERT, cpu);
	return 0;
}

static int reinsert(struct hpregs *r, unsigned int cpu, struct hpregs_cpu *c,
		    bool unused)
{
	(void)unused;
	if (!c->enabled)
		return -ENODEV;
	c->inserting = true;
	c->insert_seen = false;
	hpring_post(&r->ring, HPRING_INSERT, cpu);
	return 0;
}

int hpregs_reinsert(struct hpregs *r, unsigned int cpu)
{
	return change_cpu(r, cpu, false, reinsert, false);
}

void hpregs_reset(struct hpregs *r)
{
	pthread_mutex_lock(&r->lock);
	for (unsigned int i = 0; i < r->max_cpus; i++)
		r->cpus[i] =
			(struct hpregs_cpu){ .arch_id = r->cpus[i].arch_id };
	r->selector = 0;
	r->command = ABI_CPUHP_CMD_NEXT_EVENT;
	pthread_mutex_unlock(&r->lock);
	/* The guest boots again: its memory is its own until it says. */
	hpring_disable(&r->ring);
}

int hpregs_coldplug(struct hpregs *r, unsigned int cpu)
{
	return change_cpu(r, cpu, false, enable, false);
}

int hpregs_plug(struct hpregs *r, unsigned int cpu)
{
	return change_cpu(r, cpu, false, enable, true);
}

/* The host asks for the CPU back (@on), or takes its request back. */
static int unplug_request(struct hpregs *r, unsigned int cpu,
			  struct hpregs_cpu *c, bool on)
{
	if (on && !c->enabled)
		return -ENODEV;
	if (!on && !c->unplug_requested)
		return -ENOENT;
	c->removing = on;
	c->unplug_requested = on;
	if (on) {
		hpring_post(&r->ring, HPRING_REMOVE, cpu);
	} else {
		c->fw_remove = false;
		hpring_clear_test(&r->ring, HPRING_REMOVE, cpu);
	}
	return 0;
}

int hpregs_request_unplug(struct hpregs *r, unsigned int cpu)
{
	return change_cpu(r, cpu, true, unplug_request, true);
}

int hpregs_cancel_unplug(struct hpregs *r, unsigned int cpu)
{
	return change_cpu(r, cpu, false, unplug_request, false);
}

/* The slot emptied but for what the guest cannot unsay. */
static void forget(struct hpregs_cpu *c)
{
	*c = (struct hpregs_cpu){ .arch_id = c->arch_id,
				  .ost_event = c->ost_event,
				  .ost_status = c->ost_status };
}

static int unplug_force(struct hpregs *r, unsigned int cpu,
			struct hpregs_cpu *c, bool unused)
{
	(void)unused;
	if (!c->enabled)
		return -ENODEV;
	forget(c);
	ring_forget_cpu(r, cpu);
	return 0;
}

int hpregs_unplug_force(struct hpregs *r, unsigned int cpu)
{
	return change_cpu(r, cpu, true, unplug_force, false);
}

static int withdraw_plug(struct hpregs *r, unsigned int cpu,
			 struct hpregs_cpu *c, bool unused)
{
	(void)unused;
	if (!c->enabled)
		return -ENODEV;
	if (c->inserting && !c->insert_seen &&
	    (!hpring_enabled(&r->ring) ||
	     hpring_clear_test(&r->ring, HPRING_INSERT, cpu))) {
		/*
		 * Decided under the lock the guest reads under (or, with the
		 * ring, by taking the mailbox bit before the guest does): it
		 * never saw.
		 */
		forget(c);
		return 0;
	}
	c->inserting = false;
	c->removing = true;
	c->unplug_requested = true;
	hpring_clear_test(&r->ring, HPRING_INSERT, cpu);
	hpring_post(&r->ring, HPRING_REMOVE, cpu);
	return 1;
}

int hpregs_withdraw_plug(struct hpregs *r, unsigned int cpu)
{
	return change_cpu(r, cpu, true, withdraw_plug, false);
}

bool hpregs_is_enabled(struct hpregs *r, unsigned int cpu)
{
	bool ret;

	if (cpu >= r->max_cpus)
		return false;
	pthread_mutex_lock(&r->lock);
	ret = r->cpus[cpu].enabled;
	pthread_mutex_unlock(&r->lock);
	return ret;
}

int hpregs_get_cpu(struct hpregs *r, unsigned int cpu, struct hpregs_cpu *out)
{
	if (cpu >= r->max_cpus)
		return -EINVAL;
	pthread_mutex_lock(&r->lock);
	if (hpring_enabled(&r->ring))
		ring_sync_cpu(r, cpu);
	*out = r->cpus[cpu];
	pthread_mutex_unlock(&r->lock);
	return 0;
}

/* The bus's drops count as accesses ignored, as the device's own do. */
void hpregs_stats(struct hpregs *r, struct hpregs_stats *st)
{
	uint64_t reserved = atomic_load(&r->bus_ign.offset);
	uint64_t width = atomic_load(&r->bus_ign.width);

	pthread_mutex_lock(&r->lock);
	*st = r->stats;
	pthread_mutex_unlock(&r->lock);
	st->ignored[HPREGS_IGN_RESERVED] += reserved;
	st->ignored[HPREGS_IGN_WIDTH] += width;
	st->accesses += reserved + width;
	hpring_stats(&r->ring, &st->ring);
	st->ring_enabled = hpring_enabled(&r->ring);
	/* A doorbell of the wrong width never reached the ring. */
	st->ring.ignored[HPRING_IGN_DOORBELL] +=
		atomic_load(&r->ring_bus_ign.offset) +
		atomic_load(&r->ring_bus_ign.width);
	st->ring.doorbells += atomic_load(&r->ring_bus_ign.offset) +
			      atomic_load(&r->ring_bus_ign.width);
}

/* --- guest side ---------------------------------------------------------- */

static bool known_command(uint64_t cmd)
{
	switch (cmd) {
	case ABI_CPUHP_CMD_NEXT_EVENT:
	case ABI_CPUHP_CMD_OST_EVENT:
	case ABI_CPUHP_CMD_OST_STATUS:
	case ABI_CPUHP_CMD_ARCH_ID:
	case ABI_CPUHP_CMD_GUEST_STATE:
	case ABI_CPUHP_CMD_GUEST_FAULT:
	case ABI_CPUHP_CMD_GUEST_TARGET:
		return true;
	}
	return false;
}

static uint8_t read_flags(const struct hpregs_cpu *c)
{
	return (c->enabled ? ABI_CPUHP_F_ENABLED : 0) |
	       (c->inserting ? ABI_CPUHP_F_INSERT : 0) |
	       (c->removing ? ABI_CPUHP_F_REMOVE : 0) |
	       (c->fw_remove ? ABI_CPUHP_F_FW_REMOVE : 0);
}

/*
 * Command 0: from the selector on, wrapping once, the first CPU with an
 * event becomes selected.  fw_remove counts as an event, as in QEMU, so
 * that firmware handed an eject finds the CPU.
 */
static void scan_next_event(struct hpregs *r)
{
	uint32_t i = r->selector;

	do {
		const struct hpregs_cpu *c = &r->cpus[i];

		if (c->inserting || c->removing || c->fw_remove) {
			r->selector = i;
			return;
		}
		i = i + 1 < r->max_cpus ? i + 1 : 0;
	} while (i != r->selector);
}

static int read_reg(struct hpregs *r, uint64_t offset, uint64_t *val,
		    struct call *call)
{
	struct hpregs_cpu *c = &r->cpus[r->selector];

	switch (offset) {
	case ABI_CPUHP_SELECTOR: /* command data 2 */
		if (r->command == ABI_CPUHP_CMD_NEXT_EVENT)
			*val = 0;
		else if (r->command == ABI_CPUHP_CMD_ARCH_ID)
			*val = c->arch_id >> 32;
		else
			return HPREGS_IGN_DATA;
		return HPREGS_OK;
	case ABI_CPUHP_FLAGS:
		*val = read_flags(c);
		/* From now on a withdrawn hot-add must be asked back. */
		if (c->inserting)
			c->insert_seen = true;
		return HPREGS_OK;
	case ABI_CPUHP_DATA:
		switch (r->command) {
		case ABI_CPUHP_CMD_NEXT_EVENT:
			*val = r->selector;
			return HPREGS_OK;
		case ABI_CPUHP_CMD_ARCH_ID:
			*val = (uint32_t)c->arch_id;
			return HPREGS_OK;
		case ABI_CPUHP_CMD_GUEST_FAULT:
			*call = (struct call){ .kind = CALL_GUEST_FAULT,
					       .cpu = r->selector };
			r->stats.guest_faults++;
			return HPREGS_OK;
		case ABI_CPUHP_CMD_GUEST_TARGET:
			*call = (struct call){ .kind = CALL_GUEST_TARGET,
					       .cpu = r->selector };
			r->stats.guest_targets++;
			return HPREGS_OK;
		}
		return HPREGS_IGN_DATA;
	}
	return HPREGS_IGN_RESERVED; /* unreachable: the bus checked */
}

static int write_flags(struct hpregs *r, uint8_t val, struct call *call)
{
	unsigned int cpu = r->selector;
	struct hpregs_cpu *c = &r->cpus[cpu];

	/* One action per write, the lowest bit first, as QEMU does. */
	if (val & ABI_CPUHP_F_INSERT) {
		if (c->inserting)
			c->insert_seen = true;
		c->inserting = false;
	} else if (val & ABI_CPUHP_F_REMOVE) {
		c->removing = false;
	} else if (val & ABI_CPUHP_F_EJECT) {
		bool asked = c->unplug_requested;

		if (!guest_cpu_removable(cpu) || !c->enabled)
			return HPREGS_IGN_EJECT;
		if (!asked && r->deny_guest_eject) {
			/* Still here: the VMM tells the guest (reinsert). */
			*call = (struct call){ .kind = CALL_EJECT_DENIED,
					       .cpu = cpu };
			r->stats.ejects_denied++;
			return HPREGS_IGN_EJECT;
		}
		*c = (struct hpregs_cpu){ .arch_id = c->arch_id,
					  .ost_event = c->ost_event,
					  .ost_status = c->ost_status };
		ring_forget_cpu(r, cpu);
		*call = (struct call){ .kind = CALL_EJECT,
				       .cpu = cpu,
				       .a = asked };
		r->stats.ejects++;
		r->stats.guest_ejects += !asked;
	} else if (val & ABI_CPUHP_F_FW_REMOVE) {
		if (!guest_cpu_removable(cpu) || !c->enabled)
			return HPREGS_IGN_EJECT;
		c->fw_remove = true;
	} else {
		return HPREGS_IGN_FLAGS;
	}
	return HPREGS_OK;
}

static int write_data(struct hpregs *r, uint32_t val, struct call *call)
{
	unsigned int cpu = r->selector;
	struct hpregs_cpu *c = &r->cpus[cpu];

	switch (r->command) {
	case ABI_CPUHP_CMD_OST_EVENT:
		c->ost_event = val;
		return HPREGS_OK;
	case ABI_CPUHP_CMD_OST_STATUS:
		c->ost_status = val;
		*call = (struct call){ .kind = CALL_OST,
				       .cpu = cpu,
				       .a = c->ost_event,
				       .b = val };
		r->stats.osts++;
		return HPREGS_OK;
	case ABI_CPUHP_CMD_GUEST_STATE:
		if (val & ~GUEST_STATE_VALID)
			return HPREGS_IGN_DATA;
		*call = (struct call){ .kind = CALL_GUEST_STATE,
				       .cpu = cpu,
				       .a = val };
		r->stats.guest_states++;
		return HPREGS_OK;
	}
	return HPREGS_IGN_DATA;
}

static int write_reg(struct hpregs *r, uint64_t offset, uint64_t val,
		     struct call *call)
{
	if (offset == ABI_CPUHP_SELECTOR) {
		/* Stored even when out of range: that is how enumeration ends. */
		r->selector = (uint32_t)val;
		return HPREGS_OK;
	}
	if (r->selector >= r->max_cpus)
		return HPREGS_IGN_SELECTOR;
	switch (offset) {
	case ABI_CPUHP_FLAGS:
		return write_flags(r, (uint8_t)val, call);
	case ABI_CPUHP_COMMAND:
		if (!known_command(val))
			return HPREGS_IGN_COMMAND;
		r->command = (uint8_t)val;
		if (r->command == ABI_CPUHP_CMD_NEXT_EVENT)
			scan_next_event(r);
		return HPREGS_OK;
	case ABI_CPUHP_DATA:
		return write_data(r, (uint32_t)val, call);
	}
	return HPREGS_IGN_RESERVED; /* unreachable: the bus checked */
}

static uint64_t width_mask(unsigned int width)
{
	return width >= 8 ? ~0ULL : (1ULL << (width * 8)) - 1;
}

static void run_call(struct hpregs *r, const struct call *call, uint64_t *val)
{
	const struct hpregs_ops *ops = &r->ops;

	switch (call->kind) {
	case CALL_NONE:
		break;
	case CALL_EJECT:
		if (ops->eject)
			ops->eject(r->ctx, call->cpu, call->a);
		break;
	case CALL_EJECT_DENIED:
		if (ops->eject_denied)
			ops->eject_denied(r->ctx, call->cpu);
		break;
	case CALL_OST:
		if (ops->ost)
			ops->ost(r->ctx, call->cpu, call->a, call->b);
		break;
	case CALL_GUEST_STATE:
		if (ops->guest_state)
			ops->guest_state(r->ctx, call->cpu, call->a);
		break;
	case CALL_GUEST_FAULT:
		*val = ops->guest_fault ? ops->guest_fault(r->ctx, call->cpu)
					: 0;
		break;
	case CALL_GUEST_TARGET:
		*val = ops->guest_target ? ops->guest_target(r->ctx, call->cpu)
					 : 0;
		break;
	}
}

/* The bus has checked offset, width and direction against hpregs_layout. */
static int hpregs_trap(void *ctx, uint64_t offset, uint64_t *data,
		       unsigned int width, bool is_write)
{
	struct hpregs *r = ctx;
	struct call call = { .kind = CALL_NONE };
	uint64_t val = is_write ? *data & width_mask(width) : 0;
	int ign;

	/* An exit anyway: what the ring holds comes first (an eject's DONE). */
	hpring_drain_exit(&r->ring);
	pthread_mutex_lock(&r->lock);
	ring_sync_locked(r);
	r->stats.accesses++;
	if (is_write)
		ign = write_reg(r, offset, val, &call);
	else if (r->selector >= r->max_cpus)
		ign = HPREGS_IGN_SELECTOR;
	else
		ign = read_reg(r, offset, &val, &call);
	if (ign != HPREGS_OK) {
		r->stats.ignored[ign]++;
		val = 0;
	}
	pthread_mutex_unlock(&r->lock);

	run_call(r, &call, &val);
	if (!is_write)
		*data = val;
	return ign;
}

static const struct bus_reg hpregs_layout[] = {
	{ ABI_CPUHP_SELECTOR, ABI_CPUHP_SELECTOR_WIDTH, BUS_RW },
	{ ABI_CPUHP_FLAGS, ABI_CPUHP_FLAGS_WIDTH, BUS_RW },
	{ ABI_CPUHP_COMMAND, ABI_CPUHP_COMMAND_WIDTH, BUS_W },
	{ ABI_CPUHP_DATA, ABI_CPUHP_DATA_WIDTH, BUS_RW },
};

static struct bus_dev hpregs_dev(struct hpregs *r)
{
	return (struct bus_dev){
		.base = ABI_CPUHP_MMIO,
		.len = ABI_CPUHP_SIZE,
		.regs = hpregs_layout,
		.nr_regs = sizeof(hpregs_layout) / sizeof(hpregs_layout[0]),
		.name = "cpuhp-regs",
		.ignored = &r->bus_ign,
		.fn = hpregs_trap,
		.ctx = r,
	};
}

void hpregs_attach(struct hpregs *r, const struct hpregs_ops *ops, void *ctx,
		   bool deny_guest_eject)
{
	pthread_mutex_lock(&r->lock);
	r->ops = ops ? *ops : (struct hpregs_ops){ 0 };
	r->ctx = ctx;
	r->deny_guest_eject = deny_guest_eject;
	pthread_mutex_unlock(&r->lock);
}

int hpregs_register(struct hpregs *r, struct bus *mmio, uint64_t base)
{
	struct bus_dev dev = hpregs_dev(r);

	dev.base = base;
	return bus_register(mmio, &dev);
}

int hpregs_ring_doorbell(struct hpregs *r, uint32_t value, uint64_t now_ns)
{
	int ret = hpring_doorbell(&r->ring, value, now_ns);

	if (ret == 1)
		ring_post_pending(r);
	return ret;
}

/* The doorbell: 0, or why it was ignored (1, counted by the ring). */
static int ring_doorbell(void *ctx, uint64_t offset, uint64_t *data,
			 unsigned int width, bool is_write)
{
	(void)offset;
	(void)width;
	(void)is_write;
	return hpregs_ring_doorbell(ctx, (uint32_t)*data, hv_now_ns()) < 0;
}

static const struct bus_reg ring_layout[] = {
	{ 0, ABI_RING_DOORBELL_WIDTH, BUS_W },
};

int hpregs_register_doorbell(struct hpregs *r, struct bus *io)
{
	if (!r->ring.mem)
		return 0;
	return bus_register(io, &(struct bus_dev){
					.base = ABI_RING_DOORBELL_PORT,
					.len = ABI_RING_DOORBELL_WIDTH,
					.regs = ring_layout,
					.nr_regs = 1,
					.name = "cpuhp-ring",
					.ignored = &r->ring_bus_ign,
					.fn = ring_doorbell,
					.ctx = r,
				});
}

int hpregs_access(struct hpregs *r, uint64_t offset, unsigned int width,
		  bool is_write, uint64_t *data)
{
	struct bus_dev dev = hpregs_dev(r);
	uint64_t v = is_write ? *data : 0;
	int ret = bus_dev_access(&dev, offset, &v, width, is_write);

	if (ret == BUS_IGN_OFFSET)
		ret = HPREGS_IGN_RESERVED;
	else if (ret == BUS_IGN_WIDTH)
		ret = HPREGS_IGN_WIDTH;
	if (!is_write)
		*data = ret ? 0 : v;
	return ret;
}
