// SPDX-License-Identifier: GPL-2.0-only
/*
 * The handful of string functions the guest and gcc's generated code need.
 * rep movsb/stosb are used because they are emulated cheaply by the
 * software /dev/kvm (one instruction, not a loop of them).
 */
#include "kernel.h"

void *memset(void *s, int c, size_t n)
{
	void *d = s;

	__asm__ volatile("rep stosb"
			 : "+D"(d), "+c"(n)
			 : "a"((u8)c)
			 : "memory");
	return s;
}

void *memcpy(void *d, const void *s, size_t n)
{
	void *r = d;

	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	return r;
}

void *memmove(void *d, const void *s, size_t n)
{
	u8 *dp = d;
	const u8 *sp = s;

	if (dp <= sp || dp >= sp + n)
		return memcpy(d, s, n);
	while (n--)
		dp[n] = sp[n];
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const u8 *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (u8)*a - (u8)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (u8)*a - (u8)*b;
		if (!*a)
			break;
	}
	return 0;
}
