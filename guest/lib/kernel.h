/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Common helpers of the tiny guest: fixed-width types, port and MSR access,
 * CPUID, barriers and a spinlock.  Everything here is an inline wrapper of
 * one instruction that this machine's software /dev/kvm is known to handle.
 */
#ifndef GUEST_KERNEL_H
#define GUEST_KERNEL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hotvm/abi.h"

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define ARRAY_SIZE(a)  (sizeof(a) / sizeof((a)[0]))
#define __noreturn     __attribute__((noreturn))
#define __aligned(x)   __attribute__((aligned(x)))
#define __printf(a, b) __attribute__((format(printf, a, b)))
#define __unused       __attribute__((unused))

#define READ_ONCE(x)	 (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

static inline void barrier(void)
{
	__asm__ volatile("" ::: "memory");
}

/* x86 is TSO: a compiler barrier orders stores against stores. */
#define smp_store_release(p, v)                                                \
	do {                                                                   \
		barrier();                                                     \
		WRITE_ONCE(*(p), (v));                                         \
	} while (0)

#define smp_load_acquire(p)                                                    \
	({                                                                     \
		__typeof__(*(p)) ___v = READ_ONCE(*(p));                       \
		barrier();                                                     \
		___v;                                                          \
	})

static inline void mb(void)
{
	__asm__ volatile("mfence" ::: "memory");
}

static inline void cpu_relax(void)
{
	__asm__ volatile("pause" ::: "memory");
}

static inline void outb(u16 port, u8 v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

/* One exit for the whole string (KVM_EXIT_IO with a count). */
static inline void outsb(u16 port, const void *buf, size_t n)
{
	__asm__ volatile("rep outsb"
			 : "+S"(buf), "+c"(n)
			 : "d"(port)
			 : "memory");
}

static inline u8 inb(u16 port)
{
	u8 v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline void outl(u16 port, u32 v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline u32 inl(u16 port)
{
	u32 v;

	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline u64 rdmsr(u32 msr)
{
	u32 lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((u64)hi << 32) | lo;
}

static inline void wrmsr(u32 msr, u64 v)
{
	__asm__ volatile("wrmsr"
			 :
			 : "c"(msr), "a"((u32)v), "d"((u32)(v >> 32))
			 : "memory");
}

static inline void cpuid(u32 leaf, u32 sub, u32 *a, u32 *b, u32 *c, u32 *d)
{
	__asm__ volatile("cpuid"
			 : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d)
			 : "a"(leaf), "c"(sub));
}

static inline u64 rdtsc(void)
{
	u32 lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((u64)hi << 32) | lo;
}

static inline u64 read_cr2(void)
{
	u64 v;

	__asm__ volatile("mov %%cr2, %0" : "=r"(v));
	return v;
}

static inline u64 read_cr3(void)
{
	u64 v;

	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}

static inline void local_irq_disable(void)
{
	__asm__ volatile("cli" ::: "memory");
}

static inline void local_irq_enable(void)
{
	__asm__ volatile("sti" ::: "memory");
}

static inline u64 local_save_flags(void)
{
	u64 f;

	__asm__ volatile("pushfq; popq %0" : "=r"(f) : : "memory");
	return f;
}

static inline bool irqs_disabled(void)
{
	return !(local_save_flags() & (1u << 9));
}

/*
 * sti takes effect after the next instruction, so "sti; hlt" cannot lose a
 * wake-up interrupt that became pending after the caller's last check.
 */
static inline void safe_halt(void)
{
	__asm__ volatile("sti; hlt" ::: "memory");
}

static inline void halt(void)
{
	__asm__ volatile("hlt" ::: "memory");
}

/* Test-and-set lock: lock xchg is among the instructions known to work. */
typedef struct {
	volatile u32 locked;
} spinlock_t;

static inline bool spin_trylock(spinlock_t *l)
{
	u32 v = 1;

	__asm__ volatile("xchgl %0, %1"
			 : "+r"(v), "+m"(l->locked)
			 :
			 : "memory");
	return v == 0;
}

static inline void spin_lock(spinlock_t *l)
{
	while (!spin_trylock(l))
		while (READ_ONCE(l->locked))
			cpu_relax();
}

static inline void spin_unlock(spinlock_t *l)
{
	smp_store_release(&l->locked, 0);
}

/* The string functions gcc may emit calls to, even freestanding. */
void *memset(void *s, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/* Leave the VM through the debug-exit port with an ABI_EXIT_* value. */
static inline void __noreturn guest_exit(u8 code)
{
	outb(ABI_DEBUG_EXIT_PORT, code);
	/* Only reached without a debug-exit device: stop here. */
	for (;;) {
		local_irq_disable();
		halt();
	}
}

#endif
