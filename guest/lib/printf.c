// SPDX-License-Identifier: GPL-2.0-only
/*
 * printk and friends.  Formatting goes to a buffer first, then the buffer
 * is written to the UART in one go under a lock, so lines from different
 * CPUs never interleave mid-line.
 */
#include "printf.h"
#include "serial.h"

struct outbuf {
	char *buf;
	size_t size;
	size_t len; /* would-be length, as snprintf returns */
};

static void out_char(struct outbuf *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void out_pad(struct outbuf *o, char c, int n)
{
	while (n-- > 0)
		out_char(o, c);
}

static void out_str(struct outbuf *o, const char *s, int width, int prec,
		    bool left)
{
	int len = 0;

	if (!s)
		s = "(null)";
	while (s[len] && (prec < 0 || len < prec))
		len++;
	if (!left)
		out_pad(o, ' ', width - len);
	for (int i = 0; i < len; i++)
		out_char(o, s[i]);
	if (left)
		out_pad(o, ' ', width - len);
}

static void out_num(struct outbuf *o, u64 v, bool neg, unsigned int base,
		    bool upper, int width, bool zero, bool left)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0, ndigits;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	ndigits = n;
	if (neg)
		width--;
	if (!left && !zero)
		out_pad(o, ' ', width - n);
	if (neg)
		out_char(o, '-');
	if (!left && zero)
		out_pad(o, '0', width - n);
	while (n)
		out_char(o, tmp[--n]);
	if (left)
		out_pad(o, ' ', width - ndigits);
}

int vsnprintk(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct outbuf o = { .buf = buf, .size = size };

	for (; *fmt; fmt++) {
		bool left = false, zero = false;
		int width = 0, prec = -1, lng = 0;
		unsigned int base = 10;
		bool is_signed = false, upper = false;
		u64 v;

		if (*fmt != '%') {
			out_char(&o, *fmt);
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '-')
				left = true;
			else if (*fmt == '0')
				zero = true;
			else
				break;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		if (*fmt == '.') {
			fmt++;
			prec = 0;
			if (*fmt == '*') {
				prec = va_arg(ap, int);
				fmt++;
			}
			while (*fmt >= '0' && *fmt <= '9')
				prec = prec * 10 + (*fmt++ - '0');
		}
		for (;; fmt++) {
			if (*fmt == 'l' || *fmt == 'z')
				lng++;
			else if (*fmt != 'h')
				break;
		}
		switch (*fmt) {
		case '\0':
			goto out;
		case '%':
			out_char(&o, '%');
			continue;
		case 'c':
			out_char(&o, (char)va_arg(ap, int));
			continue;
		case 's':
			out_str(&o, va_arg(ap, const char *), width, prec,
				left);
			continue;
		case 'p':
			out_str(&o, "0x", 0, -1, false);
			out_num(&o, (u64)(uintptr_t)va_arg(ap, void *), false,
				16, false, width, zero, left);
			continue;
		case 'd':
		case 'i':
			is_signed = true;
			break;
		case 'u':
			break;
		case 'X':
			upper = true;
			base = 16;
			break;
		case 'x':
			base = 16;
			break;
		case 'o':
			base = 8;
			break;
		default:
			out_char(&o, '%');
			out_char(&o, *fmt);
			continue;
		}
		if (is_signed) {
			int64_t s = lng ? va_arg(ap, long) : va_arg(ap, int);

			v = s < 0 ? -(u64)s : (u64)s;
			out_num(&o, v, s < 0, base, upper, width, zero, left);
		} else {
			v = lng ? va_arg(ap, unsigned long)
				: va_arg(ap, unsigned int);
			out_num(&o, v, false, base, upper, width, zero, left);
		}
	}
out:
	if (o.size)
		o.buf[o.len < o.size ? o.len : o.size - 1] = '\0';
	return (int)o.len;
}

int snprintk(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintk(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

static spinlock_t printk_lock;
static void (*printk_hook)(void);

void printk_set_hook(void (*fn)(void))
{
	printk_hook = fn;
}

void printk_force_unlock(void)
{
	spin_unlock(&printk_lock);
}

int vprintk(const char *fmt, va_list ap)
{
	char buf[256];
	int n = vsnprintk(buf, sizeof(buf), fmt, ap);
	size_t len = n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
	u64 flags = local_save_flags();

	/* A truncated line keeps its end, so the next one starts afresh. */
	if (len && (size_t)n > len)
		buf[len - 1] = '\n';

	/* Interrupts off: an interrupt handler may print too. */
	local_irq_disable();
	spin_lock(&printk_lock);
	if (printk_hook)
		printk_hook();
	serial_write(buf, len);
	spin_unlock(&printk_lock);
	if (flags & (1u << 9))
		local_irq_enable();
	return n;
}

int printk(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintk(fmt, ap);
	va_end(ap);
	return n;
}
