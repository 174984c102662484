/* SPDX-License-Identifier: GPL-2.0-only */
/* Read-only views of the files the VMM boots: kernel and initrd. */
#ifndef HOTVM_VMM_IMAGE_H
#define HOTVM_VMM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct image {
	const uint8_t *data;
	size_t size;
	void *map; /* NULL for the embedded image */
};

/* Maps a regular, non-empty file.  Prints why on failure. */
int image_map(struct image *img, const char *what, const char *path);

/* The tiny guest linked into hotvm, or -ENOENT when this build has none. */
int image_embedded(struct image *img);

void image_unmap(struct image *img);

#endif
