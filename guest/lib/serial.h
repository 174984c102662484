/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GUEST_SERIAL_H
#define GUEST_SERIAL_H

#include "kernel.h"

void serial_init(void);
void serial_write(const char *s, size_t n);

#endif
