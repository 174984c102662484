/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The files the VMM boots, kernel and initrd, read once into private
 * memory.  A file is untrusted input that may change while hotvm starts (a
 * copy in place, another writer): the loaders check and use only this
 * copy, so what they checked is what they load, and a file truncated
 * meanwhile is an error, not a SIGBUS.  The copy stays for the VM's life:
 * a reset loads the kernel and initrd again from it, as QEMU keeps its
 * loaded images.
 */
#ifndef HOTVM_IMAGE_H
#define HOTVM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct image {
	const uint8_t *data;
	size_t size;
	void *map; /* the private copy; NULL for the embedded image */
};

/*
 * Reads a regular, non-empty file.  Anything else (a directory, a FIFO, a
 * device) is refused without blocking.  Prints why on failure.
 */
int image_read(struct image *img, const char *what, const char *path);
/* The tiny guest linked into hotvm, or -ENOENT when this build has none. */
int image_embedded(struct image *img);
void image_free(struct image *img);

#endif
