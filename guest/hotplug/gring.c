// SPDX-License-Identifier: GPL-2.0-only
/* The report ring, guest side: see gring.h. */
#include "gring.h"
#include "printf.h"

static u8 *gring_mem;
static u16 gring_port;
static spinlock_t gring_lock;

static const u32 gring_box_off[] = {
	[GRING_INSERT] = ABI_RING_INSERT_OFF,
	[GRING_REMOVE] = ABI_RING_REMOVE_OFF,
	[GRING_FAULT] = ABI_RING_FAULT_OFF,
	[GRING_TARGET] = ABI_RING_TARGET_OFF,
};

static struct abi_ring_hdr *gring_hdr(void)
{
	return (struct abi_ring_hdr *)(gring_mem + ABI_RING_HDR_OFF);
}

bool gring_active(void)
{
	return gring_mem != NULL;
}

static void gring_ring(u32 value)
{
	__atomic_store_n(&gring_hdr()->db_tsc, rdtsc(), __ATOMIC_RELEASE);
	outl(gring_port, value);
}

/*
 * The printk hook: a line in the ring's console must reach COM1 before
 * a line printed to the UART itself.
 */
static void gring_before_uart(void)
{
	struct abi_ring_hdr *h = gring_hdr();

	if (__atomic_load_n(&h->con_head, __ATOMIC_RELAXED) !=
	    __atomic_load_n(&h->con_tail, __ATOMIC_ACQUIRE))
		gring_ring(ABI_RING_DB_DRAIN);
}

bool gring_init(u64 base, u64 size, u32 port)
{
	struct abi_ring_hdr *h;

	if (!base || size < ABI_RING_SIZE || !port || port > 0xffff)
		return false;
	gring_mem = (u8 *)(uintptr_t)base;
	gring_port = (u16)port;
	memset(gring_mem, 0, ABI_RING_SIZE);
	h = gring_hdr();
	h->version = ABI_RING_VERSION;
	__atomic_store_n(&h->magic, ABI_RING_MAGIC, __ATOMIC_RELEASE);
	gring_ring(ABI_RING_DB_ENABLE);
	printk_set_hook(gring_before_uart);
	printk("hotplug: report ring at 0x%lx (%lu bytes), doorbell port "
	       "0x%x\n",
	       base, size, port);
	return true;
}

static bool gring_unread(void)
{
	struct abi_ring_hdr *h = gring_hdr();

	return __atomic_load_n(&h->head, __ATOMIC_RELAXED) !=
		       __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&h->con_head, __ATOMIC_RELAXED) !=
		       __atomic_load_n(&h->con_tail, __ATOMIC_ACQUIRE);
}

void gring_flush(void)
{
	if (gring_mem && gring_unread())
		gring_ring(ABI_RING_DB_DRAIN);
}

void gring_report(u32 sel, u32 value, int ret)
{
	struct abi_ring_hdr *h = gring_hdr();
	struct abi_ring_entry *e;
	u32 head;

	spin_lock(&gring_lock);
	head = h->head;
	/* Full: the host reads it all at the doorbell, before we go on. */
	if (head - __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) >=
	    ABI_RING_ENTRIES)
		gring_ring(ABI_RING_DB_DRAIN);
	e = (struct abi_ring_entry *)(gring_mem + ABI_RING_ENTRY_OFF +
				      (head % ABI_RING_ENTRIES) *
					      ABI_RING_ENTRY_SIZE);
	e->sel = sel;
	e->value = value;
	e->ret = ret;
	e->tsc = rdtsc();
	__atomic_store_n(&e->seq, head + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&h->head, head + 1, __ATOMIC_RELEASE);
	if (head + 1 - __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) >=
	    ABI_RING_NEARLY_FULL)
		gring_ring(ABI_RING_DB_DRAIN);
	spin_unlock(&gring_lock);
}

static bool gring_con_fits(size_t n)
{
	struct abi_ring_hdr *h = gring_hdr();

	return h->con_head - __atomic_load_n(&h->con_tail, __ATOMIC_ACQUIRE) +
		       n <=
	       ABI_RING_CON_SIZE;
}

bool gring_console(const char *s, size_t n)
{
	struct abi_ring_hdr *h = gring_hdr();
	u8 *con = gring_mem + ABI_RING_CON_OFF;
	bool ok;

	if (!gring_mem || n > ABI_RING_CON_SIZE)
		return false;
	spin_lock(&gring_lock);
	if (!gring_con_fits(n))
		gring_ring(ABI_RING_DB_DRAIN);
	ok = gring_con_fits(n);
	if (ok) {
		u32 head = h->con_head;

		for (size_t i = 0; i < n; i++)
			con[(head + i) % ABI_RING_CON_SIZE] = (u8)s[i];
		__atomic_store_n(&h->con_head, head + (u32)n, __ATOMIC_RELEASE);
	}
	spin_unlock(&gring_lock);
	return ok;
}

static u64 *gring_word(enum gring_box box, unsigned int w)
{
	return (u64 *)(gring_mem + gring_box_off[box]) + w;
}

u64 gring_take(enum gring_box box, unsigned int w)
{
	if (!gring_mem || w >= ABI_RING_MBOX_WORDS)
		return 0;
	/* Read first: an exchange of a word that is 0 would be a write. */
	if (!__atomic_load_n(gring_word(box, w), __ATOMIC_ACQUIRE))
		return 0;
	return __atomic_exchange_n(gring_word(box, w), 0, __ATOMIC_SEQ_CST);
}

bool gring_test_clear(enum gring_box box, u32 sel)
{
	u64 bit = 1ull << (sel % 64);

	if (!gring_mem || sel >= ABI_RING_MAX_SEL)
		return false;
	if (!(__atomic_load_n(gring_word(box, sel / 64), __ATOMIC_ACQUIRE) &
	      bit))
		return false;
	return __atomic_fetch_and(gring_word(box, sel / 64), ~bit,
				  __ATOMIC_SEQ_CST) &
	       bit;
}
