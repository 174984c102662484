// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU-hotplug register block.  The sequences are the ones QEMU's generated
 * AML performs (CSCN, _EJ0, _OST, _STA, the documented detection and
 * enumeration loops), then hotvm's extension commands, every offset and
 * width, and a hostile run: two "vCPUs" issuing random accesses while a
 * control thread plugs and unplugs, checked against invariants and the
 * per-reason counters.  HOTVM_SEED=n replays the random part.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"
#include "cpuhp_regs.h"
#include "hotvm/abi.h"

#define NR_CPUS 8
#define MAX_LOG 64

struct log_ost {
	unsigned int cpu;
	uint32_t event, status;
};

static struct {
	unsigned int ejected[MAX_LOG], nr_ejects;
	bool asked[MAX_LOG];
	unsigned int denied[MAX_LOG], nr_denied;
	struct log_ost ost[MAX_LOG];
	unsigned int nr_ost;
	unsigned int gs_cpu[MAX_LOG];
	uint32_t gs_val[MAX_LOG];
	unsigned int nr_gs;
	uint32_t fault[NR_CPUS];  /* returned once by guest_fault, then 0 */
	uint32_t target[NR_CPUS]; /* returned once by guest_target, then 0 */
	bool reenter;		  /* eject callback re-enters hpregs */
} rec;

static struct hpregs r;

static void on_eject(void *ctx, unsigned int cpu, bool asked)
{
	CHECK(ctx == &rec);
	if (rec.reenter)
		CHECK(!hpregs_is_enabled(&r, cpu)); /* no deadlock, and done */
	if (rec.nr_ejects < MAX_LOG) {
		rec.asked[rec.nr_ejects] = asked;
		rec.ejected[rec.nr_ejects++] = cpu;
	}
}

static void on_eject_denied(void *ctx, unsigned int cpu)
{
	CHECK(ctx == &rec);
	CHECK(hpregs_is_enabled(&r, cpu)); /* still there */
	if (rec.nr_denied < MAX_LOG)
		rec.denied[rec.nr_denied++] = cpu;
}

static void on_ost(void *ctx, unsigned int cpu, uint32_t event, uint32_t status)
{
	(void)ctx;
	if (rec.nr_ost < MAX_LOG)
		rec.ost[rec.nr_ost++] = (struct log_ost){ .cpu = cpu,
							  .event = event,
							  .status = status };
}

static void on_guest_state(void *ctx, unsigned int cpu, uint32_t value)
{
	(void)ctx;
	if (rec.nr_gs < MAX_LOG) {
		rec.gs_cpu[rec.nr_gs] = cpu;
		rec.gs_val[rec.nr_gs++] = value;
	}
}

static uint32_t on_guest_fault(void *ctx, unsigned int cpu)
{
	uint32_t f;

	(void)ctx;
	f = rec.fault[cpu];
	rec.fault[cpu] = 0;
	return f;
}

static uint32_t on_guest_target(void *ctx, unsigned int cpu)
{
	uint32_t t;

	(void)ctx;
	t = rec.target[cpu];
	rec.target[cpu] = 0;
	return t;
}

static const struct hpregs_ops ops = {
	.eject = on_eject,
	.eject_denied = on_eject_denied,
	.ost = on_ost,
	.guest_state = on_guest_state,
	.guest_fault = on_guest_fault,
	.guest_target = on_guest_target,
};

/* Boot CPUs 0 and 1 present, as the VMM would set them up. */
static void setup_deny(const uint64_t *ids, bool deny)
{
	const struct hpregs_config cfg = {
		.max_cpus = NR_CPUS,
		.arch_ids = ids,
		.ops = &ops,
		.ctx = &rec,
		.deny_guest_eject = deny,
	};

	memset(&rec, 0, sizeof(rec));
	CHECK_EQ(hpregs_init(&r, &cfg), 0);
	CHECK_EQ(hpregs_coldplug(&r, 0), 0);
	CHECK_EQ(hpregs_coldplug(&r, 1), 0);
}

static void setup_with(const uint64_t *ids)
{
	setup_deny(ids, false);
}

static void setup(void)
{
	setup_with(NULL);
}

static uint64_t rd(uint64_t off, unsigned int width)
{
	uint64_t v = 0xdeadbeefcafeULL;

	hpregs_access(&r, off, width, false, &v);
	return v;
}

static int wr(uint64_t off, unsigned int width, uint64_t v)
{
	return hpregs_access(&r, off, width, true, &v);
}

static uint64_t ignored(int reason)
{
	struct hpregs_stats st;

	hpregs_stats(&r, &st);
	return st.ignored[reason];
}

static uint64_t total_ignored(void)
{
	uint64_t n = 0;
	int i;

	for (i = 1; i < HPREGS_IGN_NR; i++)
		n += ignored(i);
	return n;
}

/* The register fields QEMU's AML declares. */
#define CSEL_W(v)  wr(ABI_CPUHP_SELECTOR, 4, v)
#define CCMD_W(v)  wr(ABI_CPUHP_COMMAND, 1, v)
#define CDAT_W(v)  wr(ABI_CPUHP_DATA, 4, v)
#define CDAT_R()   rd(ABI_CPUHP_DATA, 4)
#define FLAGS_R()  rd(ABI_CPUHP_FLAGS, 1)
#define FLAGS_W(v) wr(ABI_CPUHP_FLAGS, 1, v)

/*
 * CSCN as QEMU generates it (one batch): walk uid upwards with command 0,
 * stop on wrap-around; collect inserted CPUs, notify-and-clear removed
 * ones; then clear the insert event of each collected CPU.
 */
static void cscn(unsigned int *added, unsigned int *nr_added,
		 unsigned int *removed, unsigned int *nr_removed)
{
	uint32_t uid = 0, i;
	bool has_event = true;

	*nr_added = *nr_removed = 0;
	while (has_event && uid < NR_CPUS) {
		has_event = false;
		CSEL_W(uid);
		CCMD_W(ABI_CPUHP_CMD_NEXT_EVENT);
		if (CDAT_R() < uid)
			break;
		uid = (uint32_t)CDAT_R();
		if (FLAGS_R() & ABI_CPUHP_F_INSERT) {
			added[(*nr_added)++] = uid;
			has_event = true;
		} else if (FLAGS_R() & ABI_CPUHP_F_REMOVE) {
			removed[(*nr_removed)++] = uid;
			FLAGS_W(ABI_CPUHP_F_REMOVE);
			has_event = true;
		}
		uid++;
	}
	for (i = 0; i < *nr_added; i++) {
		CSEL_W(added[i]);
		FLAGS_W(ABI_CPUHP_F_INSERT);
	}
}

static void ej0(unsigned int cpu)
{
	CSEL_W(cpu);
	FLAGS_W(ABI_CPUHP_F_EJECT);
}

static void ost(unsigned int cpu, uint32_t event, uint32_t status)
{
	CSEL_W(cpu);
	CCMD_W(ABI_CPUHP_CMD_OST_EVENT);
	CDAT_W(event);
	CCMD_W(ABI_CPUHP_CMD_OST_STATUS);
	CDAT_W(status);
}

static unsigned int sta(unsigned int cpu)
{
	CSEL_W(cpu);
	return FLAGS_R() & ABI_CPUHP_F_ENABLED ? 0xf : 0;
}

static void test_init(void)
{
	struct hpregs_config cfg = { .max_cpus = 0 };

	CHECK_EQ(hpregs_init(&r, NULL), -EINVAL);
	CHECK_EQ(hpregs_init(&r, &cfg), -EINVAL);
	cfg.max_cpus = HPREGS_MAX_CPUS + 1;
	CHECK_EQ(hpregs_init(&r, &cfg), -EINVAL);
	cfg.max_cpus = HPREGS_MAX_CPUS;
	CHECK_EQ(hpregs_init(&r, &cfg), 0);
	CHECK(!hpregs_is_enabled(&r, 0));
	/* No ops at all: every access still works. */
	CHECK_EQ(hpregs_plug(&r, HPREGS_MAX_CPUS - 1), 0);
	CHECK_EQ(CCMD_W(ABI_CPUHP_CMD_NEXT_EVENT), HPREGS_OK);
	CHECK_EQ(CDAT_R(), HPREGS_MAX_CPUS - 1);
	CHECK_EQ(CCMD_W(ABI_CPUHP_CMD_GUEST_FAULT), HPREGS_OK);
	CHECK_EQ(CDAT_R(), 0);
	hpregs_destroy(&r);
}

/* acpi_cpu_hotplug.rst, "Detecting and enabling modern CPU hotplug". */
static void test_detect_and_enumerate(void)
{
	unsigned int present = 0, it = 0;

	setup();
	CHECK_EQ(CSEL_W(0), HPREGS_OK);
	CHECK_EQ(CCMD_W(0), HPREGS_OK);
	CHECK_EQ(rd(ABI_CPUHP_SELECTOR, 4), 0); /* modern interface */

	/* "Enumerate CPUs present/non present CPUs" */
	CHECK_EQ(hpregs_coldplug(&r, 5), 0);
	CSEL_W(0);
	CCMD_W(0);
	do {
		if (FLAGS_R() & ABI_CPUHP_F_ENABLED)
			present++;
		CSEL_W(++it);
	} while (CDAT_R() != 0);
	CSEL_W(0);
	CHECK_EQ(it, NR_CPUS);
	CHECK_EQ(present, 3);
	CHECK_EQ(sta(0), 0xf);
	CHECK_EQ(sta(5), 0xf);
	CHECK_EQ(sta(2), 0);
	/* The out-of-range read that ended the loop is the only ignore. */
	CHECK_EQ(total_ignored(), 1);
	CHECK_EQ(ignored(HPREGS_IGN_SELECTOR), 1);
	hpregs_destroy(&r);
}

static void test_hot_add(void)
{
	unsigned int add[NR_CPUS], rem[NR_CPUS], na, nr;
	struct hpregs_cpu c;

	setup();
	CHECK_EQ(hpregs_plug(&r, 3), 0);
	CHECK(hpregs_is_enabled(&r, 3));
	CHECK_EQ(hpregs_plug(&r, 3), -EBUSY);
	CHECK_EQ(hpregs_plug(&r, 6), 0);

	/* "Get a cpu with pending event" */
	CSEL_W(0);
	CCMD_W(0);
	CHECK_EQ(FLAGS_R(), ABI_CPUHP_F_ENABLED | ABI_CPUHP_F_INSERT);
	CHECK_EQ(CDAT_R(), 3);

	cscn(add, &na, rem, &nr);
	CHECK_EQ(na, 2);
	CHECK_EQ(add[0], 3);
	CHECK_EQ(add[1], 6);
	CHECK_EQ(nr, 0);
	CSEL_W(3);
	CHECK_EQ(FLAGS_R(), ABI_CPUHP_F_ENABLED);
	CHECK_EQ(hpregs_get_cpu(&r, 6, &c), 0);
	CHECK(c.enabled && !c.inserting && !c.removing);

	/* Nothing pending: command 0 leaves the selector where it is. */
	CSEL_W(5);
	CCMD_W(0);
	CHECK_EQ(CDAT_R(), 5);
	CHECK_EQ(FLAGS_R() & (ABI_CPUHP_F_INSERT | ABI_CPUHP_F_REMOVE), 0);
	cscn(add, &na, rem, &nr);
	CHECK_EQ(na + nr, 0);

	/* Linux's _OST after the device check: event 1, status 0. */
	ost(3, 1, 0);
	CHECK_EQ(rec.nr_ost, 1);
	CHECK_EQ(rec.ost[0].cpu, 3);
	CHECK_EQ(rec.ost[0].event, 1);
	CHECK_EQ(rec.ost[0].status, 0);
	CHECK_EQ(total_ignored(), 0);
	hpregs_destroy(&r);
}

static void test_scan_wraps(void)
{
	setup();
	CHECK_EQ(hpregs_plug(&r, 2), 0);
	CHECK_EQ(hpregs_plug(&r, 6), 0);
	/* From the selector upwards first ... */
	CSEL_W(3);
	CCMD_W(0);
	CHECK_EQ(CDAT_R(), 6);
	/* ... the selected CPU itself counts ... */
	CCMD_W(0);
	CHECK_EQ(CDAT_R(), 6);
	/* ... and the scan wraps past max_cpus - 1. */
	CSEL_W(7);
	CCMD_W(0);
	CHECK_EQ(CDAT_R(), 2);
	CHECK_EQ(rd(ABI_CPUHP_SELECTOR, 4), 0);
	/* Remove events are found too. */
	FLAGS_W(ABI_CPUHP_F_INSERT);
	CSEL_W(6);
	FLAGS_W(ABI_CPUHP_F_INSERT);
	CHECK_EQ(hpregs_request_unplug(&r, 1), 0);
	CSEL_W(4);
	CCMD_W(0);
	CHECK_EQ(CDAT_R(), 1);
	CHECK_EQ(FLAGS_R(), ABI_CPUHP_F_ENABLED | ABI_CPUHP_F_REMOVE);
	hpregs_destroy(&r);
}

static void test_hot_remove(void)
{
	unsigned int add[NR_CPUS], rem[NR_CPUS], na, nr;

	setup();
	CHECK_EQ(hpregs_plug(&r, 4), 0);
	cscn(add, &na, rem, &nr);
	CHECK_EQ(na, 1);

	CHECK_EQ(hpregs_request_unplug(&r, 4), 0);
	CSEL_W(4);
	CHECK_EQ(FLAGS_R(), ABI_CPUHP_F_ENABLED | ABI_CPUHP_F_REMOVE);
	cscn(add, &na, rem, &nr);
	CHECK_EQ(na, 0);
	CHECK_EQ(nr, 1);
	CHECK_EQ(rem[0], 4);
	/* CSCN cleared the remove event; the VMM's request stands. */
	CSEL_W(4);
	CHECK_EQ(FLAGS_R(), ABI_CPUHP_F_ENABLED);
	CHECK_EQ(rec.nr_ejects, 0);

	/* OSPM offlines the CPU, then _OST(0x103, 0x80) and _EJ0. */
	ost(4, 0x103, 0x80);
	rec.reenter = true;
	ej0(4);
	CHECK_EQ(rec.nr_ejects, 1);
	CHECK_EQ(rec.ejected[0], 4);
	CHECK(!hpregs_is_enabled(&r, 4));
	CSEL_W(4);
	CHECK_EQ(FLAGS_R(), 0);
	/* A second eject of the same CPU is refused. */
	ej0(4);
	CHECK_EQ(rec.nr_ejects, 1);
	CHECK_EQ(ignored(HPREGS_IGN_EJECT), 1);
	CHECK_EQ(rec.nr_ost, 1);
	CHECK_EQ(rec.ost[0].event, 0x103);
	CHECK_EQ(rec.ost[0].status, 0x80);

	/* The slot can be hot-added again. */
	CHECK_EQ(hpregs_plug(&r, 4), 0);
	CSEL_W(4);
	CHECK_EQ(FLAGS_R(), ABI_CPUHP_F_ENABLED | ABI_CPUHP_F_INSERT);
	hpregs_destroy(&r);
}

static void test_eject_refused(void)
{
	struct hpregs_stats st;

	setup();
	CHECK_EQ(hpregs_request_unplug(&r, 0), -EPERM);
	CHECK_EQ(hpregs_request_unplug(&r, 3), -ENODEV);
	CHECK_EQ(hpregs_request_unplug(&r, NR_CPUS), -EINVAL);
	CHECK_EQ(hpregs_cancel_unplug(&r, 1), -ENOENT);

	ej0(0); /* the boot CPU */
	ej0(3); /* absent */
	CHECK_EQ(rec.nr_ejects, 0);
	CHECK_EQ(ignored(HPREGS_IGN_EJECT), 2);

	/* Eject with the remove event still pending is fine. */
	CHECK_EQ(hpregs_request_unplug(&r, 1), 0);
	CHECK_EQ(hpregs_request_unplug(&r, 1), 0); /* retry re-arms */
	ej0(1);
	CHECK_EQ(rec.nr_ejects, 1);
	CHECK(rec.asked[0]);
	hpregs_stats(&r, &st);
	CHECK_EQ(st.ejects, 1);
	CHECK_EQ(st.guest_ejects, 0);
	hpregs_destroy(&r);
}

/* The guest's own eject, or one the VMM gave up waiting for: as QEMU. */
static void test_guest_eject(void)
{
	struct hpregs_stats st;

	setup();
	CHECK_EQ(hpregs_plug(&r, 2), 0);
	ej0(1); /* enabled, nobody asked */
	CHECK_EQ(rec.nr_ejects, 1);
	CHECK_EQ(rec.ejected[0], 1);
	CHECK(!rec.asked[0]);
	CHECK(!hpregs_is_enabled(&r, 1));
	/* A removal the VMM gave up on: the late eject is the guest's. */
	CHECK_EQ(hpregs_request_unplug(&r, 2), 0);
	CHECK_EQ(hpregs_cancel_unplug(&r, 2), 0);
	ej0(2);
	CHECK_EQ(rec.nr_ejects, 2);
	CHECK(!rec.asked[1]);
	ej0(0); /* never the boot CPU */
	CHECK(hpregs_is_enabled(&r, 0));
	hpregs_stats(&r, &st);
	CHECK_EQ(st.ejects, 2);
	CHECK_EQ(st.guest_ejects, 2);
	CHECK_EQ(st.ejects_denied, 0);
	hpregs_destroy(&r);

	/* --guest-eject deny: kept; the VMM presents it again. */
	setup_deny(NULL, true);
	ej0(1);
	CHECK_EQ(rec.nr_ejects, 0);
	CHECK_EQ(rec.nr_denied, 1);
	CHECK(hpregs_is_enabled(&r, 1));
	CSEL_W(1);
	CHECK_EQ(FLAGS_R(), ABI_CPUHP_F_ENABLED);
	CHECK_EQ(ignored(HPREGS_IGN_EJECT), 1);
	CHECK_EQ(hpregs_reinsert(&r, 1), 0);
	CHECK_EQ(FLAGS_R(), ABI_CPUHP_F_ENABLED | ABI_CPUHP_F_INSERT);
	CHECK_EQ(hpregs_reinsert(&r, 3), -ENODEV);
	/* One the VMM asked for still goes. */
	CHECK_EQ(hpregs_request_unplug(&r, 1), 0);
	ej0(1);
	CHECK_EQ(rec.nr_ejects, 1);
	CHECK(rec.asked[0]);
	hpregs_destroy(&r);
}

/* One action per flags write, lowest bit first (QEMU's else-if chain). */
static void test_flags_priority(void)
{
	setup();
	CHECK_EQ(hpregs_plug(&r, 2), 0);
	CHECK_EQ(hpregs_request_unplug(&r, 2), 0);
	CSEL_W(2);
	CHECK_EQ(FLAGS_R(), 0x07);
	CHECK_EQ(FLAGS_W(0x0e), HPREGS_OK); /* clears insert only */
	CHECK_EQ(FLAGS_R(), 0x05);
	CHECK_EQ(FLAGS_W(0x0c), HPREGS_OK); /* clears remove only */
	CHECK_EQ(FLAGS_R(), 0x01);
	CHECK_EQ(rec.nr_ejects, 0);
	CHECK_EQ(FLAGS_W(0x00), HPREGS_IGN_FLAGS);
	CHECK_EQ(FLAGS_W(0x01), HPREGS_IGN_FLAGS);
	CHECK_EQ(FLAGS_W(0xe0), HPREGS_IGN_FLAGS);
	/* Bits above the byte are not part of a 1-byte write. */
	CHECK_EQ(FLAGS_W(0x100), HPREGS_IGN_FLAGS);
	CHECK_EQ(ignored(HPREGS_IGN_FLAGS), 4);
	CHECK_EQ(FLAGS_W(0x18), HPREGS_OK); /* eject beats firmware bit */
	CHECK_EQ(rec.nr_ejects, 1);
	hpregs_destroy(&r);
}

static void test_fw_remove(void)
{
	setup();
	CHECK_EQ(hpregs_plug(&r, 3), 0);
	CSEL_W(3);
	FLAGS_W(ABI_CPUHP_F_INSERT);
	CHECK_EQ(FLAGS_W(ABI_CPUHP_F_FW_REMOVE), HPREGS_OK);
	CHECK_EQ(FLAGS_R(), ABI_CPUHP_F_ENABLED | ABI_CPUHP_F_FW_REMOVE);
	CSEL_W(0);
	CCMD_W(0);
	CHECK_EQ(CDAT_R(), 3); /* firmware's scan finds it */
	CSEL_W(0);
	CHECK_EQ(FLAGS_W(ABI_CPUHP_F_FW_REMOVE), HPREGS_IGN_EJECT);
	CSEL_W(5);
	CHECK_EQ(FLAGS_W(ABI_CPUHP_F_FW_REMOVE), HPREGS_IGN_EJECT);
	/* An eject clears it. */
	CHECK_EQ(hpregs_request_unplug(&r, 3), 0);
	ej0(3);
	CHECK_EQ(rec.nr_ejects, 1);
	CSEL_W(3);
	CHECK_EQ(FLAGS_R(), 0);
	hpregs_destroy(&r);
}

static void test_arch_id(void)
{
	static const uint64_t ids[NR_CPUS] = {
		0, 2, 4, 6, 0x12345678, 0xabcdef0123456789ULL, 0x100000000ULL,
		7,
	};

	setup_with(ids);
	CSEL_W(5);
	CHECK_EQ(CCMD_W(ABI_CPUHP_CMD_ARCH_ID), HPREGS_OK);
	CHECK_EQ(CDAT_R(), 0x23456789);
	CHECK_EQ(rd(ABI_CPUHP_SELECTOR, 4), 0xabcdef01);
	/* The command sticks across selector changes. */
	CSEL_W(6);
	CHECK_EQ(CDAT_R(), 0);
	CHECK_EQ(rd(ABI_CPUHP_SELECTOR, 4), 1);
	CSEL_W(3);
	CHECK_EQ(CDAT_R(), 6);
	/* Works for absent CPUs: AML builds _MAT for every possible CPU. */
	CHECK(!hpregs_is_enabled(&r, 3));
	/* Writing data under command 3 means nothing. */
	CHECK_EQ(CDAT_W(1), HPREGS_IGN_DATA);
	hpregs_destroy(&r);

	setup(); /* default: arch id = index */
	CSEL_W(7);
	CCMD_W(ABI_CPUHP_CMD_ARCH_ID);
	CHECK_EQ(CDAT_R(), 7);
	CHECK_EQ(rd(ABI_CPUHP_SELECTOR, 4), 0);
	hpregs_destroy(&r);
}

static void test_ost_per_cpu(void)
{
	setup();
	/* The event is remembered per CPU, the status write sends it. */
	CSEL_W(1);
	CCMD_W(ABI_CPUHP_CMD_OST_EVENT);
	CDAT_W(3);
	CSEL_W(0);
	CDAT_W(1);
	CSEL_W(1);
	CCMD_W(ABI_CPUHP_CMD_OST_STATUS);
	CDAT_W(0x81);
	CHECK_EQ(rec.nr_ost, 1);
	CHECK_EQ(rec.ost[0].cpu, 1);
	CHECK_EQ(rec.ost[0].event, 3);
	CHECK_EQ(rec.ost[0].status, 0x81);
	CSEL_W(0);
	CDAT_W(0);
	CHECK_EQ(rec.nr_ost, 2);
	CHECK_EQ(rec.ost[1].cpu, 0);
	CHECK_EQ(rec.ost[1].event, 1);
	/* Reading data under an OST command reads 0. */
	CHECK_EQ(CDAT_R(), 0);
	CHECK_EQ(rd(ABI_CPUHP_SELECTOR, 4), 0);
	CHECK_EQ(ignored(HPREGS_IGN_DATA), 2);
	hpregs_destroy(&r);
}

static void test_guest_extensions(void)
{
	const uint32_t v = 7 | ABI_GUEST_STATE_UP | ABI_GUEST_STATE_DONE;

	setup();
	CHECK_EQ(hpregs_plug(&r, 2), 0);
	CSEL_W(2);
	CHECK_EQ(CCMD_W(ABI_CPUHP_CMD_GUEST_STATE), HPREGS_OK);
	CHECK_EQ(CDAT_W(v), HPREGS_OK);
	CHECK_EQ(CDAT_W(3 | ABI_GUEST_STATE_ROLLBACK | ABI_GUEST_STATE_FAILED),
		 HPREGS_OK);
	CHECK_EQ(rec.nr_gs, 2);
	CHECK_EQ(rec.gs_cpu[0], 2);
	CHECK_EQ(rec.gs_val[0], v);
	CHECK_EQ(rec.gs_val[1],
		 3 | ABI_GUEST_STATE_ROLLBACK | ABI_GUEST_STATE_FAILED);
	/* Reserved bits: the report is malformed and dropped. */
	CHECK_EQ(CDAT_W(0x1000 | 5), HPREGS_IGN_DATA);
	CHECK_EQ(CDAT_W(0x80000000u), HPREGS_IGN_DATA);
	CHECK_EQ(rec.nr_gs, 2);
	CHECK_EQ(CDAT_R(), 0); /* write-only under this command */

	rec.fault[2] = 5 + 1;
	CHECK_EQ(CCMD_W(ABI_CPUHP_CMD_GUEST_FAULT), HPREGS_OK);
	CHECK_EQ(CDAT_R(), 6);
	CHECK_EQ(CDAT_R(), 0); /* consumed */
	CSEL_W(1);
	CHECK_EQ(CDAT_R(), 0);
	CHECK_EQ(CDAT_W(6), HPREGS_IGN_DATA); /* read-only under it */
	CHECK_EQ(rd(ABI_CPUHP_SELECTOR, 4), 0);
	CHECK_EQ(ignored(HPREGS_IGN_DATA), 5);
	hpregs_destroy(&r);
}

static void test_guest_target(void)
{
	struct hpregs_stats st;

	setup();
	rec.target[1] = 4 + 1;
	CSEL_W(1);
	CHECK_EQ(CCMD_W(ABI_CPUHP_CMD_GUEST_TARGET), HPREGS_OK);
	CHECK_EQ(CDAT_R(), 5);
	CHECK_EQ(CDAT_R(), 0);		      /* consumed */
	CHECK_EQ(CDAT_W(3), HPREGS_IGN_DATA); /* read-only under it */
	CSEL_W(NR_CPUS);
	CHECK_EQ(CDAT_R(), 0);
	hpregs_stats(&r, &st);
	CHECK_EQ(st.guest_targets, 2);
	hpregs_destroy(&r);
}

/* A hot-add the guest never finished is taken back without an event. */
static void test_unplug_force(void)
{
	struct hpregs_cpu c;

	setup();
	CHECK_EQ(hpregs_unplug_force(&r, 0), -EPERM);
	CHECK_EQ(hpregs_unplug_force(&r, 2), -ENODEV);
	CHECK_EQ(hpregs_unplug_force(&r, NR_CPUS), -EINVAL);
	CHECK_EQ(hpregs_plug(&r, 2), 0);
	CHECK_EQ(hpregs_unplug_force(&r, 2), 0);
	CHECK_EQ(hpregs_get_cpu(&r, 2, &c), 0);
	CHECK(!c.enabled && !c.inserting && !c.removing && !c.unplug_requested);
	CSEL_W(0);
	CCMD_W(ABI_CPUHP_CMD_NEXT_EVENT);
	CHECK_EQ(CDAT_R(), 0); /* no CPU with an event */
	CSEL_W(2);
	CHECK_EQ(sta(2) & ABI_CPUHP_F_ENABLED, 0);
	/* A removal armed before the force is gone too: no late eject. */
	CHECK_EQ(hpregs_plug(&r, 2), 0);
	CHECK_EQ(hpregs_request_unplug(&r, 2), 0);
	CHECK_EQ(hpregs_unplug_force(&r, 2), 0);
	CHECK_EQ(wr(ABI_CPUHP_FLAGS, 1, ABI_CPUHP_F_EJECT), HPREGS_IGN_EJECT);
	CHECK_EQ(rec.nr_ejects, 0);
	CHECK_EQ(hpregs_plug(&r, 2), 0); /* and it can be plugged again */
	hpregs_destroy(&r);
}

static void test_unknown_commands(void)
{
	static const uint64_t bad[] = { 4, 5, 0x0f, 0x13, 0x7f, 0xff };
	size_t i;

	setup();
	CSEL_W(1);
	CCMD_W(0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(CCMD_W(bad[i]), HPREGS_IGN_COMMAND);
	/* 0x103 is 0x03 in a byte write: a known command. */
	CHECK_EQ(CCMD_W(0x103), HPREGS_OK);
	CHECK_EQ(CDAT_R(), 1); /* arch id of CPU 1 */
	CCMD_W(0);
	CHECK_EQ(CCMD_W(0x1ff), HPREGS_IGN_COMMAND);
	/* The command stayed 0: data still reads the selector. */
	CHECK_EQ(CDAT_R(), 1);
	CHECK_EQ(ignored(HPREGS_IGN_COMMAND), 7);
	hpregs_destroy(&r);
}

static void test_invalid_selector(void)
{
	struct hpregs_stats st;
	uint64_t before;

	setup();
	CHECK_EQ(hpregs_plug(&r, 2), 0);
	CSEL_W(2);
	CCMD_W(ABI_CPUHP_CMD_ARCH_ID);
	CHECK_EQ(CSEL_W(NR_CPUS), HPREGS_OK); /* stored, but invalid */
	before = ignored(HPREGS_IGN_SELECTOR);
	CHECK_EQ(FLAGS_R(), 0);
	CHECK_EQ(CDAT_R(), 0);
	CHECK_EQ(rd(ABI_CPUHP_SELECTOR, 4), 0);
	CHECK_EQ(FLAGS_W(ABI_CPUHP_F_INSERT), HPREGS_IGN_SELECTOR);
	CHECK_EQ(CCMD_W(0), HPREGS_IGN_SELECTOR); /* no scan either */
	CHECK_EQ(CDAT_W(1), HPREGS_IGN_SELECTOR);
	CSEL_W(0xffffffff);
	CHECK_EQ(FLAGS_W(ABI_CPUHP_F_EJECT), HPREGS_IGN_SELECTOR);
	/* Only the low 32 bits of a selector write exist: 4-byte field. */
	CHECK_EQ(wr(ABI_CPUHP_SELECTOR, 4, 0x100000002ULL), HPREGS_OK);
	CHECK_EQ(CDAT_R(), 2); /* arch id: command 3 survived */
	CHECK_EQ(ignored(HPREGS_IGN_SELECTOR) - before, 7);
	CSEL_W(2);
	CHECK_EQ(FLAGS_R(), ABI_CPUHP_F_ENABLED | ABI_CPUHP_F_INSERT);
	hpregs_stats(&r, &st);
	CHECK_EQ(st.ejects + rec.nr_ejects, 0);
	hpregs_destroy(&r);
}

/* Every offset 0..15 (and a few far ones) at every width, both ways. */
static void test_widths_and_offsets(void)
{
	static const uint64_t far[] = { 12,	    16,	   0x100,
					1ULL << 32, ~0ULL, ~0ULL - 3 };
	uint64_t off, v, accepted = 0, expect_ok = 0;
	unsigned int w, dir;
	struct hpregs_stats st;
	size_t i;
	int ret;

	setup();
	CHECK_EQ(hpregs_plug(&r, 1 + 2), 0);
	for (off = 0; off < 16; off++) {
		for (w = 0; w <= 9; w++) {
			for (dir = 0; dir < 2; dir++) {
				bool ok = (off == 0 && w == 4) ||
					  (off == 4 && w == 1) ||
					  (off == 5 && w == 1 && dir) ||
					  (off == 8 && w == 4);

				/* Harmless values: selector 0, command 0, no
				 * flag bits, data 0. */
				v = 0;
				ret = hpregs_access(&r, off, w, dir, &v);
				if (ok && off == 4 && dir)
					ok = false; /* no action bit: FLAGS */
				if (ok && off == 8 && dir)
					ok = false; /* data write under cmd 0 */
				expect_ok += ok;
				accepted += ret == HPREGS_OK;
				if (!dir && !ok && ret != HPREGS_OK)
					CHECK_EQ(v, 0);
				if (ret == HPREGS_IGN_WIDTH)
					CHECK(off == 0 || off == 4 ||
					      off == 5 || off == 8);
				if (ret == HPREGS_IGN_RESERVED)
					CHECK((off != 0 && off != 4 &&
					       off != 5 && off != 8) ||
					      (off == 5 && !dir));
			}
		}
	}
	CHECK_EQ(accepted, expect_ok);
	CHECK_EQ(accepted, 5); /* sel W+R, flags R, cmd W, data R */
	for (i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		v = 0;
		CHECK_EQ(hpregs_access(&r, far[i], 4, true, &v),
			 HPREGS_IGN_RESERVED);
		CHECK_EQ(hpregs_access(&r, far[i], 1, false, &v),
			 HPREGS_IGN_RESERVED);
		CHECK_EQ(v, 0);
	}
	/* 8-byte access at 0 does not reach the flags or command bytes. */
	CHECK_EQ(wr(0, 8, 0x0000020300000003ULL), HPREGS_IGN_WIDTH);
	CSEL_W(3);
	CHECK_EQ(FLAGS_R(), ABI_CPUHP_F_ENABLED | ABI_CPUHP_F_INSERT);
	/* Offsets 0, 4, 8: 9 wrong widths each way; 5: 9 writes; the 8-byte one. */
	hpregs_stats(&r, &st);
	CHECK_EQ(st.ignored[HPREGS_IGN_WIDTH], 3 * 9 * 2 + 9 + 1);
	hpregs_destroy(&r);
}

/* --- hostile run --------------------------------------------------------- */

#define HOSTILE_ITERS 300000
#define GS_VALID                                                               \
	(ABI_GUEST_STATE_MASK | ABI_GUEST_STATE_UP |                           \
	 ABI_GUEST_STATE_ROLLBACK | ABI_GUEST_STATE_FAILED |                   \
	 ABI_GUEST_STATE_DONE)

static struct {
	_Atomic unsigned int ejects[NR_CPUS];
	_Atomic unsigned int asked_ejects[NR_CPUS];
	_Atomic unsigned int bad_callbacks;
	_Atomic unsigned int osts, states, faults;
	_Atomic bool stop;
	/* control thread's successful calls */
	unsigned int plugs[NR_CPUS], unplugs[NR_CPUS], cancels[NR_CPUS];
} hx;

static void hx_eject(void *ctx, unsigned int cpu, bool asked)
{
	(void)ctx;
	if (cpu == 0 || cpu >= NR_CPUS) {
		atomic_fetch_add(&hx.bad_callbacks, 1);
		return;
	}
	atomic_fetch_add(&hx.ejects[cpu], 1);
	if (asked)
		atomic_fetch_add(&hx.asked_ejects[cpu], 1);
}

static void hx_ost(void *ctx, unsigned int cpu, uint32_t e, uint32_t s)
{
	(void)ctx, (void)e, (void)s;
	if (cpu >= NR_CPUS)
		atomic_fetch_add(&hx.bad_callbacks, 1);
	atomic_fetch_add(&hx.osts, 1);
}

static void hx_state(void *ctx, unsigned int cpu, uint32_t v)
{
	(void)ctx;
	if (cpu >= NR_CPUS || (v & ~GS_VALID))
		atomic_fetch_add(&hx.bad_callbacks, 1);
	atomic_fetch_add(&hx.states, 1);
}

static uint32_t hx_fault(void *ctx, unsigned int cpu)
{
	(void)ctx;
	if (cpu >= NR_CPUS)
		atomic_fetch_add(&hx.bad_callbacks, 1);
	atomic_fetch_add(&hx.faults, 1);
	return cpu + 1;
}

static const struct hpregs_ops hx_ops = {
	.eject = hx_eject,
	.ost = hx_ost,
	.guest_state = hx_state,
	.guest_fault = hx_fault,
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Invariants of one CPU record, whatever the guest did. */
static bool cpu_sane(unsigned int cpu, const struct hpregs_cpu *c)
{
	if (!c->enabled && (c->inserting || c->removing || c->fw_remove ||
			    c->unplug_requested))
		return false;
	if (cpu == 0 && (c->unplug_requested || c->fw_remove || c->removing))
		return false;
	return true;
}

struct vcpu_arg {
	uint64_t seed;
	uint64_t accesses;
	uint64_t reasons[HPREGS_IGN_NR];
};

static void *hostile_vcpu(void *p)
{
	static const unsigned int widths[] = { 1, 1, 4, 4, 2, 8, 3, 0, 16 };
	static const uint64_t offs[] = { 0, 4, 5, 8 };
	struct vcpu_arg *a = p;
	uint64_t *s = &a->seed, off, v, x;
	unsigned int i, w;
	bool write;
	int ret;

	for (i = 0; i < HOSTILE_ITERS; i++) {
		x = rnd(s);
		if (x % 5 == 0) {
			/* An honest-looking _EJ0 of a random CPU. */
			v = rnd(s) % NR_CPUS;
			a->reasons[hpregs_access(&r, 0, 4, true, &v)]++;
			v = ABI_CPUHP_F_EJECT;
			a->reasons[hpregs_access(&r, 4, 1, true, &v)]++;
			a->accesses += 2;
			continue;
		}
		x = rnd(s);
		if (x % 10 < 7)
			off = offs[x % 4];
		else if (x % 10 < 9)
			off = rnd(s) % 16;
		else
			off = rnd(s);
		w = widths[rnd(s) % (sizeof(widths) / sizeof(widths[0]))];
		if (rnd(s) % 8 == 0)
			w = (unsigned int)rnd(s);
		x = rnd(s);
		if (x % 10 < 5)
			v = rnd(s) % (NR_CPUS + 3);
		else if (x % 10 < 7)
			v = 1u << (rnd(s) % 8);
		else if (x % 10 < 8)
			v = ABI_CPUHP_CMD_GUEST_STATE + rnd(s) % 2;
		else
			v = rnd(s);
		write = rnd(s) & 1;
		ret = hpregs_access(&r, off, w, write, &v);
		if (ret < 0 || ret >= HPREGS_IGN_NR) {
			CHECK(false);
			continue;
		}
		a->reasons[ret]++;
		a->accesses++;
		if (!write && ret != HPREGS_OK)
			CHECK_EQ(v, 0);
	}
	return NULL;
}

static void *hostile_control(void *p)
{
	uint64_t s = *(uint64_t *)p;
	struct hpregs_cpu c;
	unsigned int cpu;

	while (!atomic_load(&hx.stop)) {
		cpu = (unsigned int)(rnd(&s) % NR_CPUS);
		switch (rnd(&s) % 4) {
		case 0:
		case 1:
			if (!hpregs_plug(&r, cpu))
				hx.plugs[cpu]++;
			break;
		case 2:
			if (!hpregs_request_unplug(&r, cpu))
				hx.unplugs[cpu]++;
			break;
		case 3:
			if (rnd(&s) % 8 == 0 && !hpregs_cancel_unplug(&r, cpu))
				hx.cancels[cpu]++;
			break;
		}
		hpregs_get_cpu(&r, cpu, &c);
		CHECK(cpu_sane(cpu, &c));
	}
	return NULL;
}

static void test_hostile(void)
{
	const struct hpregs_config cfg = {
		.max_cpus = NR_CPUS,
		.ops = &hx_ops,
	};
	struct vcpu_arg va[2] = { { .seed = 0x9e3779b97f4a7c15ULL },
				  { .seed = 0xd1b54a32d192ed03ULL } };
	uint64_t cseed = 0x2545f4914f6cdd1dULL, total = 0, ign = 0, ej = 0;
	uint64_t guest_ej = 0;
	const char *env = getenv("HOTVM_SEED");
	pthread_t vt[2], ct;
	struct hpregs_stats st;
	struct hpregs_cpu c;
	unsigned int cpu;
	int i;

	if (env) {
		uint64_t seed = strtoull(env, NULL, 0);

		va[0].seed ^= seed;
		va[1].seed ^= seed * 3;
		cseed ^= seed * 5;
	}
	printf("# seeds %#llx %#llx %#llx\n", (unsigned long long)va[0].seed,
	       (unsigned long long)va[1].seed, (unsigned long long)cseed);
	memset(&hx, 0, sizeof(hx));
	CHECK_EQ(hpregs_init(&r, &cfg), 0);
	CHECK_EQ(hpregs_coldplug(&r, 0), 0);
	CHECK_EQ(hpregs_coldplug(&r, 1), 0);

	pthread_create(&ct, NULL, hostile_control, &cseed);
	for (i = 0; i < 2; i++)
		pthread_create(&vt[i], NULL, hostile_vcpu, &va[i]);
	for (i = 0; i < 2; i++)
		pthread_join(vt[i], NULL);
	atomic_store(&hx.stop, true);
	pthread_join(ct, NULL);

	CHECK_EQ(atomic_load(&hx.bad_callbacks), 0);
	CHECK_EQ(atomic_load(&hx.ejects[0]), 0);
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		unsigned int e = atomic_load(&hx.ejects[cpu]);
		unsigned int boot = cpu < 2;

		hpregs_get_cpu(&r, cpu, &c);
		CHECK(cpu_sane(cpu, &c));
		/*
		 * Each eject the VMM asked for consumed one of its requests
		 * (the others are the guest's own, honoured as QEMU does) ...
		 */
		CHECK(atomic_load(&hx.asked_ejects[cpu]) <= hx.unplugs[cpu]);
		guest_ej += e - atomic_load(&hx.asked_ejects[cpu]);
		/* ... and enabled toggled exactly by plugs and ejects. */
		CHECK_EQ(boot + hx.plugs[cpu] - e, c.enabled);
		ej += e;
	}
	CHECK(ej > 0); /* the run did exercise removals */

	hpregs_stats(&r, &st);
	CHECK_EQ(st.ejects, ej);
	CHECK_EQ(st.guest_ejects, guest_ej);
	total = va[0].accesses + va[1].accesses;
	CHECK_EQ(st.accesses, total);
	for (i = 1; i < HPREGS_IGN_NR; i++) {
		CHECK_EQ(st.ignored[i], va[0].reasons[i] + va[1].reasons[i]);
		ign += st.ignored[i];
	}
	CHECK_EQ(st.accesses - ign, va[0].reasons[0] + va[1].reasons[0]);
	CHECK_EQ(st.ejects, ej);
	CHECK_EQ(st.osts, atomic_load(&hx.osts));
	CHECK_EQ(st.guest_states, atomic_load(&hx.states));
	CHECK_EQ(st.guest_faults, atomic_load(&hx.faults));
	printf("# %llu accesses, %llu ignored, %llu ejects, %llu osts, "
	       "%llu states, %llu faults\n",
	       (unsigned long long)total, (unsigned long long)ign,
	       (unsigned long long)ej, (unsigned long long)st.osts,
	       (unsigned long long)st.guest_states,
	       (unsigned long long)st.guest_faults);
	for (i = 1; i < HPREGS_IGN_NR; i++)
		printf("#   %-8s %llu\n", hpregs_ign_name(i),
		       (unsigned long long)st.ignored[i]);
	hpregs_destroy(&r);
}

CHECK_MAIN(TEST(test_init), TEST(test_detect_and_enumerate), TEST(test_hot_add),
	   TEST(test_scan_wraps), TEST(test_hot_remove),
	   TEST(test_eject_refused), TEST(test_guest_eject),
	   TEST(test_flags_priority), TEST(test_fw_remove), TEST(test_arch_id),
	   TEST(test_ost_per_cpu), TEST(test_guest_extensions),
	   TEST(test_guest_target), TEST(test_unplug_force),
	   TEST(test_unknown_commands), TEST(test_invalid_selector),
	   TEST(test_widths_and_offsets), TEST(test_hostile))
