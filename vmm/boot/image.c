// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel and initrd files, read once into private memory (image.h).
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

/* The whole file, exactly @size bytes, or why not. */
static int read_all(int fd, uint8_t *p, size_t size)
{
	size_t at = 0;

	while (at < size) {
		ssize_t n = read(fd, p + at, size - at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA; /* shorter than fstat said */
		at += (size_t)n;
	}
	return 0;
}

int image_read(struct image *img, const char *what, const char *path)
{
	struct stat st;
	void *p;
	int fd, ret;

	*img = (struct image){ 0 };
	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		pr_err("%s '%s': no memory for its %lld bytes: %s", what, path,
		       (long long)st.st_size, strerror(errno));
		goto out;
	}
	ret = read_all(fd, p, (size_t)st.st_size);
	if (ret) {
		pr_err("%s '%s': %s; was it being written to? try again once "
		       "it is complete",
		       what, path,
		       ret == -ENODATA ? "the file shrank while hotvm read it"
				       : strerror(-ret));
		munmap(p, (size_t)st.st_size);
		goto out;
	}
	/* Read-only from now on: only the loaders look at it. */
	mprotect(p, (size_t)st.st_size, PROT_READ);
	*img = (struct image){ .data = p,
			       .size = (size_t)st.st_size,
			       .map = p };
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

void image_free(struct image *img)
{
	if (img->map)
		munmap(img->map, img->size);
	*img = (struct image){ 0 };
}
