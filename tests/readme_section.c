// SPDX-License-Identifier: GPL-2.0-only
/*
 * One way to keep a generated list in README.md: the owner renders it, and
 * this compares it with what README holds between the list's markers (or,
 * asked to, writes it in).  See readme_section.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "readme_section.h"

static char *slurp(FILE *f)
{
	char *buf = NULL;
	size_t len = 0;

	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * The section's body in text: from after its begin line to the start of
 * its end line.  Returns false when a marker is missing.
 */
static bool find_section(char *text, const char *name, char **body, char **end)
{
	char on[96], off[96];
	char *b;

	snprintf(on, sizeof(on), "<!-- %s: begin", name);
	snprintf(off, sizeof(off), "\n<!-- %s: end -->", name);
	b = strstr(text, on);
	b = b ? strchr(b, '\n') : NULL;
	*end = b ? strstr(b, off) : NULL;
	if (!*end) {
		printf("# README.md has no '%s' ... '%s' section\n", on,
		       off + 1);
		return false;
	}
	*body = b + 1;
	(*end)++;
	return true;
}

/* Prints, as TAP comments, the lines where have and want part. */
static void print_diff(const char *have, size_t hlen, const char *want)
{
	const char *h = have, *hend = have + hlen, *w = want;

	while (h < hend || *w) {
		size_t hl = h < hend ? strcspn(h, "\n") : 0;
		size_t wl = strcspn(w, "\n");

		if (hl != wl || strncmp(h, w, hl)) {
			printf("# README.md: '%.*s'\n", (int)hl, h);
			printf("# generated: '%.*s'\n", (int)wl, w);
		}
		h = h < hend ? h + hl + 1 : h;
		w += wl + (w[wl] ? 1 : 0);
	}
}

static bool write_section(FILE *f, const char *text, const char *body,
			  const char *end, const char *want)
{
	if (fseek(f, 0, SEEK_SET) || ftruncate(fileno(f), 0))
		return false;
	fwrite(text, 1, (size_t)(body - text), f);
	fputs(want, f);
	fputs(end, f);
	return !fflush(f);
}

bool readme_section_check(const char *name, const char *want)
{
	const char *path = getenv("HOTVM_README");
	const char *update = getenv("HOTVM_README_UPDATE");
	FILE *f = path ? fopen(path, "r+") : NULL;
	char *text = NULL, *body, *end;
	bool same = false;

	if (!f) {
		printf("# cannot open README.md (HOTVM_README=%s)\n",
		       path ? path : "(unset)");
		return false;
	}
	/* Two tests may update README at once. */
	flock(fileno(f), LOCK_EX);
	text = slurp(f);
	if (text && find_section(text, name, &body, &end)) {
		same = (size_t)(end - body) == strlen(want) &&
		       !strncmp(body, want, strlen(want));
		if (!same && update && !strcmp(update, "1")) {
			same = write_section(f, text, body, end, want);
			printf("# README.md's %s section %s\n", name,
			       same ? "written" : "NOT written");
		} else if (!same) {
			print_diff(body, (size_t)(end - body), want);
			printf("# README.md's %s section, generated (or run "
			       "with HOTVM_README_UPDATE=1):\n",
			       name);
			for (const char *l = want; *l;) {
				size_t ll = strcspn(l, "\n");

				printf("# %.*s\n", (int)ll, l);
				l += ll + (l[ll] ? 1 : 0);
			}
		}
	}
	free(text);
	fclose(f);
	return same;
}
