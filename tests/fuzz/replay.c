// SPDX-License-Identifier: GPL-2.0-only
/*
 * The replay driver: runs files (or every file in directories) through a
 * harness's LLVMFuzzerTestOneInput once each.  Linked with a harness when
 * the compiler has no libFuzzer (gcc), so the seeded corpus and every
 * recorded reproducer are still run by the ordinary test suite, under the
 * ordinary sanitizer builds.  A broken invariant aborts; that is the failure.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned int runs;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: %s: cannot size it\n", path);
		fclose(f);
		return -1;
	}
	/* Exactly len bytes, so ASan sees any read past the input. */
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "replay: %s: cannot read it\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	fprintf(stderr, "replay: %s (%ld bytes)\n", path, len);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	runs++;
	return 0;
}

static int compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* In name order, so a failure is reproducible from the log alone. */
static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int ret = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				abort();
		}
		if (asprintf(&names[n++], "%s/%s", dir, e->d_name) < 0)
			abort();
	}
	closedir(d);
	qsort(names, n, sizeof(*names), compare);
	for (size_t i = 0; i < n; i++) {
		ret |= replay_file(names[i]);
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	int ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
				strerror(errno));
			ret = 1;
		} else if (S_ISDIR(st.st_mode)) {
			ret |= replay_dir(argv[i]) ? 1 : 0;
		} else {
			ret |= replay_file(argv[i]) ? 1 : 0;
		}
	}
	printf("replay: %u inputs, no invariant broken\n", runs);
	return ret;
}
