// SPDX-License-Identifier: GPL-2.0-only
/*
 * The IDT.  Exceptions are fatal: the guest has nothing to recover, so the
 * handler prints everything useful for a post-mortem from the serial log
 * and leaves through the debug-exit port with ABI_EXIT_PANIC.
 */
#include "hotvm/abi.h"
#include "idt.h"
#include "lapic.h"
#include "percpu.h"
#include "printf.h"

struct idt_gate {
	u16 offset_lo;
	u16 selector;
	u8 ist;
	u8 type_attr;
	u16 offset_mid;
	u32 offset_hi;
	u32 reserved;
} __attribute__((packed));

struct idt_ptr {
	u16 limit;
	u64 base;
} __attribute__((packed));

extern const char isr_stubs[];

static struct idt_gate idt[256] __aligned(16);
static idt_handler_t idt_handlers[256];

static const char *const exc_names[32] = {
	"#DE divide error",
	"#DB debug",
	"NMI",
	"#BP breakpoint",
	"#OF overflow",
	"#BR bound range",
	"#UD invalid opcode",
	"#NM device not available",
	"#DF double fault",
	"coprocessor segment overrun",
	"#TS invalid TSS",
	"#NP segment not present",
	"#SS stack fault",
	"#GP general protection",
	"#PF page fault",
	"reserved",
	"#MF x87 error",
	"#AC alignment check",
	"#MC machine check",
	"#XM SIMD error",
	"#VE virtualization",
	"#CP control protection",
};

void idt_init(void)
{
	for (unsigned int v = 0; v < 256; v++) {
		u64 addr = (u64)(uintptr_t)(isr_stubs + 16 * v);

		idt[v] = (struct idt_gate){
			.offset_lo = (u16)addr,
			.selector = 0x18,  /* GDT_CODE64 */
			.type_attr = 0x8e, /* present, DPL 0, interrupt gate */
			.offset_mid = (u16)(addr >> 16),
			.offset_hi = (u32)(addr >> 32),
		};
	}
	idt_load();
}

void idt_load(void)
{
	struct idt_ptr p = { .limit = sizeof(idt) - 1, .base = (u64)idt };

	__asm__ volatile("lidt %0" : : "m"(p));
}

void idt_set_handler(unsigned int vector, idt_handler_t fn)
{
	if (vector < 256)
		idt_handlers[vector] = fn;
}

static void __noreturn idt_die(struct idt_regs *r)
{
	const char *name = r->vector < 32 && exc_names[r->vector]
				   ? exc_names[r->vector]
				   : "unexpected interrupt";

	/* A CPU that faulted while printing must not deadlock us. */
	printk_force_unlock();
	printk("\nPANIC: cpu %u: exception %lu (%s) error 0x%lx\n",
	       smp_processor_id(), r->vector, name, r->error);
	printk("RIP %04lx:%016lx RFLAGS %016lx CR2 %016lx\n", r->cs, r->rip,
	       r->rflags, read_cr2());
	printk("RSP %04lx:%016lx CR3 %016lx\n", r->ss, r->rsp, read_cr3());
	printk("RAX %016lx RBX %016lx RCX %016lx\n", r->rax, r->rbx, r->rcx);
	printk("RDX %016lx RSI %016lx RDI %016lx\n", r->rdx, r->rsi, r->rdi);
	printk("RBP %016lx R8  %016lx R9  %016lx\n", r->rbp, r->r8, r->r9);
	printk("R10 %016lx R11 %016lx R12 %016lx\n", r->r10, r->r11, r->r12);
	printk("R13 %016lx R14 %016lx R15 %016lx\n", r->r13, r->r14, r->r15);
	guest_exit(ABI_EXIT_PANIC);
}

/*
 * QEMU's TCG (seen with 7.2, q35, about one boot in ten) sometimes services
 * a hardware interrupt that its APIC has already withdrawn and delivers
 * vector -1: the IDT lookup then fails with #GP and an error code naming
 * an IDT entry past 255 (seen: 0xfffffff2), which no real CPU can produce.
 * Nothing was lost, so it is dropped like a spurious interrupt.
 */
#define GP_ERR_IDT (1u << 1)

static bool idt_is_phantom(const struct idt_regs *r)
{
	u32 err = (u32)r->error;

	return r->vector == 13 && (err & GP_ERR_IDT) && (err >> 3) > 255;
}

void idt_dispatch(struct idt_regs *r)
{
	idt_handler_t fn = r->vector < 256 ? idt_handlers[r->vector] : NULL;

	/* Only the NMI of the exception vectors may have a handler (smp.c). */
	if (fn) {
		fn(r);
		return;
	}
	if (r->vector == VEC_SPURIOUS)
		return; /* spurious: no EOI, by definition */
	if (idt_is_phantom(r))
		return;
	idt_die(r);
}
