/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A read-only flattened device tree walker, just enough for the tiny guest:
 * find a node by path, iterate its children, read properties.  Nodes are
 * named by their offset in the structure block, as in libfdt.
 */
#ifndef GUEST_DT_H
#define GUEST_DT_H

#include "kernel.h"

#define DT_MAGIC 0xd00dfeed

/* 0 when @blob is a sane FDT (magic, version, sizes within @size). */
int dt_check(const void *blob, u64 size);

/* Offset of the node at @path ("/" or "/cpus"), or -1. */
int dt_path_offset(const void *blob, const char *path);
/* First child of @node / next sibling of @node, or -1. */
int dt_first_subnode(const void *blob, int node);
int dt_next_subnode(const void *blob, int node);
/* The node's name, "cpu@1". */
const char *dt_get_name(const void *blob, int node);
/* Property value and length, or NULL. */
const void *dt_getprop(const void *blob, int node, const char *name, int *len);
/* True if the "compatible" string list of @node contains @compat. */
bool dt_is_compatible(const void *blob, int node, const char *compat);

static inline u32 dt32_to_cpu(u32 v)
{
	return __builtin_bswap32(v);
}

#endif
