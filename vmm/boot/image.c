// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel and initrd files, mapped read-only: a vmlinux with debug info can
 * be far bigger than guest RAM, and only its loadable parts are copied.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "log.h"

#ifdef HOTVM_EMBEDDED_GUEST
extern const uint8_t hotvm_guest_start[];
extern const uint8_t hotvm_guest_end[];
#endif

int image_map(struct image *img, const char *what, const char *path)
{
	struct stat st;
	void *p;
	int fd, ret;

	*img = (struct image){ 0 };
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		pr_err("%s '%s': %s; check the path and its permissions", what,
		       path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		pr_err("%s '%s': %s", what, path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		pr_err("%s '%s': not a regular file; give the path of a file",
		       what, path);
		goto out;
	}
	if (st.st_size == 0) {
		ret = -EINVAL;
		pr_err("%s '%s': the file is empty", what, path);
		goto out;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		pr_err("%s '%s': cannot map it: %s", what, path,
		       strerror(errno));
		goto out;
	}
	*img = (struct image){ .data = p,
			       .size = (size_t)st.st_size,
			       .map = p };
	ret = 0;
out:
	close(fd);
	return ret;
}

int image_embedded(struct image *img)
{
#ifdef HOTVM_EMBEDDED_GUEST
	*img = (struct image){
		.data = hotvm_guest_start,
		.size = (size_t)(hotvm_guest_end - hotvm_guest_start),
	};
	return 0;
#else
	*img = (struct image){ 0 };
	return -ENOENT;
#endif
}

void image_unmap(struct image *img)
{
	if (img->map)
		munmap(img->map, img->size);
	*img = (struct image){ 0 };
}
