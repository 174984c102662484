// SPDX-License-Identifier: GPL-2.0-only
/*
 * Walking the FDT structure block.  The blob comes from the VMM, which the
 * guest trusts; still, every offset is checked against the header's sizes
 * so that a corrupt blob ends the walk instead of the guest.
 */
#include "dt.h"

#define DT_BEGIN_NODE 1
#define DT_END_NODE   2
#define DT_PROP	      3
#define DT_NOP	      4
#define DT_END	      9

struct dt_header {
	u32 magic;
	u32 totalsize;
	u32 off_dt_struct;
	u32 off_dt_strings;
	u32 off_mem_rsvmap;
	u32 version;
	u32 last_comp_version;
	u32 boot_cpuid_phys;
	u32 size_dt_strings;
	u32 size_dt_struct;
};

static const struct dt_header *hdr(const void *blob)
{
	return blob;
}

static u32 be(u32 v)
{
	return dt32_to_cpu(v);
}

int dt_check(const void *blob, u64 size)
{
	const struct dt_header *h = hdr(blob);
	u64 total;

	if (size < sizeof(*h) || be(h->magic) != DT_MAGIC)
		return -1;
	total = be(h->totalsize);
	if (total > size || be(h->version) < 16 ||
	    (u64)be(h->off_dt_struct) + be(h->size_dt_struct) > total ||
	    (u64)be(h->off_dt_strings) + be(h->size_dt_strings) > total)
		return -1;
	return 0;
}

static const u8 *dt_struct(const void *blob)
{
	return (const u8 *)blob + be(hdr(blob)->off_dt_struct);
}

static u32 struct_size(const void *blob)
{
	return be(hdr(blob)->size_dt_struct);
}

static u32 tag_at(const void *blob, int off)
{
	if (off < 0 || (u32)off + 4 > struct_size(blob))
		return DT_END;
	return be(*(const u32 *)(dt_struct(blob) + off));
}

static int align4(int off)
{
	return (off + 3) & ~3;
}

/*
 * The offset of the token after the one at @off, or -1; for a BEGIN_NODE
 * that is the node's first property or child.
 */
static int next_tag(const void *blob, int off)
{
	const u8 *s = dt_struct(blob);
	u32 size = struct_size(blob);
	u32 tag = tag_at(blob, off);
	int p = off + 4;

	switch (tag) {
	case DT_BEGIN_NODE:
		while ((u32)p < size && s[p])
			p++;
		return (u32)p < size ? align4(p + 1) : -1;
	case DT_PROP: {
		u32 len;

		if ((u32)p + 8 > size)
			return -1;
		len = be(*(const u32 *)(s + p));
		if ((u64)p + 8 + len > size)
			return -1;
		return align4(p + 8 + (int)len);
	}
	case DT_END_NODE:
	case DT_NOP:
		return p;
	default:
		return -1;
	}
}

/* Past the END_NODE that closes the node at @node, or -1. */
static int skip_node(const void *blob, int node)
{
	int depth = 0;
	int off = node;

	while (off >= 0) {
		u32 tag = tag_at(blob, off);

		if (tag == DT_BEGIN_NODE)
			depth++;
		else if (tag == DT_END_NODE && --depth == 0)
			return next_tag(blob, off);
		else if (tag == DT_END)
			return -1;
		off = next_tag(blob, off);
	}
	return -1;
}

const char *dt_get_name(const void *blob, int node)
{
	return (const char *)dt_struct(blob) + node + 4;
}

/* Skip properties and NOPs from @off; the child/END_NODE offset, or -1. */
static int skip_props(const void *blob, int off)
{
	while (off >= 0) {
		u32 tag = tag_at(blob, off);

		if (tag != DT_PROP && tag != DT_NOP)
			return off;
		off = next_tag(blob, off);
	}
	return -1;
}

int dt_first_subnode(const void *blob, int node)
{
	int off = skip_props(blob, next_tag(blob, node));

	return off >= 0 && tag_at(blob, off) == DT_BEGIN_NODE ? off : -1;
}

int dt_next_subnode(const void *blob, int node)
{
	int off = skip_node(blob, node);

	while (off >= 0 && tag_at(blob, off) == DT_NOP)
		off = next_tag(blob, off);
	return off >= 0 && tag_at(blob, off) == DT_BEGIN_NODE ? off : -1;
}

static int root_offset(const void *blob)
{
	int off = 0;

	while (tag_at(blob, off) == DT_NOP)
		off += 4;
	return tag_at(blob, off) == DT_BEGIN_NODE ? off : -1;
}

int dt_path_offset(const void *blob, const char *path)
{
	int node = root_offset(blob);

	if (*path != '/')
		return -1;
	while (node >= 0) {
		const char *end;
		size_t n;

		while (*path == '/')
			path++;
		if (!*path)
			return node;
		for (end = path; *end && *end != '/'; end++)
			;
		n = (size_t)(end - path);
		for (node = dt_first_subnode(blob, node); node >= 0;
		     node = dt_next_subnode(blob, node)) {
			const char *name = dt_get_name(blob, node);

			/* "cpus" matches "cpus", and "cpu" matches "cpu@0". */
			if (!strncmp(name, path, n) &&
			    (name[n] == '\0' || name[n] == '@'))
				break;
		}
		path = end;
	}
	return -1;
}

const void *dt_getprop(const void *blob, int node, const char *name, int *len)
{
	const struct dt_header *h = hdr(blob);
	const char *strings = (const char *)blob + be(h->off_dt_strings);
	u32 strsize = be(h->size_dt_strings);
	int off = next_tag(blob, node);

	while (off >= 0) {
		u32 tag = tag_at(blob, off);
		const u32 *p;
		u32 nameoff;

		if (tag == DT_NOP) {
			off = next_tag(blob, off);
			continue;
		}
		if (tag != DT_PROP)
			return NULL;
		p = (const u32 *)(dt_struct(blob) + off + 4);
		nameoff = be(p[1]);
		if (nameoff < strsize && !strcmp(strings + nameoff, name)) {
			if (len)
				*len = (int)be(p[0]);
			return p + 2;
		}
		off = next_tag(blob, off);
	}
	return NULL;
}

bool dt_is_compatible(const void *blob, int node, const char *compat)
{
	int len;
	const char *p = dt_getprop(blob, node, "compatible", &len);
	size_t n = strlen(compat);

	while (p && len > 0) {
		size_t l = strlen(p);

		if (l == n && !strcmp(p, compat))
			return true;
		p += l + 1;
		len -= (int)l + 1;
	}
	return false;
}
