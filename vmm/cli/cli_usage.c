// SPDX-License-Identifier: GPL-2.0-only
/*
 * The option table (cli_options.c) rendered twice: as `hotvm run --help`,
 * and as the Markdown table README.md holds between its run-options
 * markers (tests/cli/test_cli.c compares the two).  Help texts mark code
 * with backquotes: Markdown keeps them, the terminal does not.
 */
#include <stdbool.h>
#include <string.h>

#include "cli.h"

#define USAGE_COL   23 /* where the help text starts */
#define USAGE_WIDTH 78

/* "-h, --help" or "--memory SIZE", as --help shows an option. */
static void synopsis(const struct cli_opt *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", o->alias ? o->alias : "",
		 o->alias ? ", " : "", o->name, o->arg ? " " : "",
		 o->arg ? o->arg : "");
}

/*
 * Writes s without backquotes from column col, wrapped at USAGE_WIDTH:
 * at each space, or, with whole, only before s when all of s fits on the
 * next line ("(default: 256M)" is not split).  Returns the column reached.
 */
static int put_wrapped(FILE *f, const char *s, int col, bool whole)
{
	while (*s) {
		size_t w = whole && strlen(s) <= USAGE_WIDTH - USAGE_COL
				   ? strlen(s)
				   : strcspn(s, " ");
		int shown = (int)w;

		for (size_t i = 0; i < w; i++)
			shown -= s[i] == '`';
		if (col > USAGE_COL && col + 1 + shown > USAGE_WIDTH) {
			fprintf(f, "\n%*s", USAGE_COL, "");
			col = USAGE_COL;
		} else if (col > USAGE_COL) {
			fputc(' ', f);
			col++;
		}
		for (size_t i = 0; i < w; i++)
			if (s[i] != '`')
				fputc(s[i], f);
		col += shown;
		s += w;
		s += strspn(s, " ");
	}
	return col;
}

void cli_run_usage(FILE *f)
{
	size_t n;
	const struct cli_opt *t = cli_run_options(&n);

	fputs("Usage: hotvm run [options]\n\n"
	      "Boot a virtual machine on /dev/kvm.\n\n"
	      "Options:\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		char syn[64], def[96] = "";
		int col;

		synopsis(&t[i], syn, sizeof(syn));
		col = fprintf(f, "  %s", syn);
		if (col >= USAGE_COL)
			fprintf(f, "\n");
		fprintf(f, "%*s",
			col >= USAGE_COL ? USAGE_COL : USAGE_COL - col, "");
		col = put_wrapped(f, t[i].help, USAGE_COL, false);
		if (t[i].def) {
			snprintf(def, sizeof(def), "(default: %s)", t[i].def);
			put_wrapped(f, def, col, true);
		}
		fputc('\n', f);
	}
	fputs("\nExit status: (v << 1) | 1 when the guest writes v to port "
	      "0x501;\n"
	      "0 after SIGINT/SIGTERM, quit or the guest's poweroff; 2 for "
	      "bad\n"
	      "input; 4 when the VM failed.\n",
	      f);
}

/* s with each '|' escaped, as a Markdown table cell needs. */
static void put_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

void cli_run_markdown(FILE *f)
{
	size_t n;
	const struct cli_opt *t = cli_run_options(&n);

	fputs("| option | what it does | default |\n|---|---|---|\n", f);
	for (size_t i = 0; i < n; i++) {
		fputs("| ", f);
		if (t[i].alias)
			fprintf(f, "`%s`, ", t[i].alias);
		fputc('`', f);
		put_cell(f, t[i].name);
		if (t[i].arg) {
			fputc(' ', f);
			put_cell(f, t[i].arg);
		}
		fputs("` | ", f);
		put_cell(f, t[i].help);
		fputs(" | ", f);
		put_cell(f, t[i].def ? t[i].def : "-");
		fputs(" |\n", f);
	}
}
