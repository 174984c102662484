// SPDX-License-Identifier: GPL-2.0-only
/* SVG 1.1 shapes and text; see svg.h. */
#include <stdarg.h>

#include "svg.h"

static void escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			if ((unsigned char)*s >= 0x20 || *s == '\t' ||
			    *s == '\n')
				fputc(*s, f);
		}
	}
}

void svg_begin(FILE *f, int width, int height)
{
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\">\n",
		width, height, width, height);
	fprintf(f,
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		"fill=\"white\"/>\n",
		width, height);
}

void svg_end(FILE *f)
{
	fputs("</svg>\n", f);
}

void svg_rect(FILE *f, double x, double y, double w, double h, const char *fill,
	      const char *cls, const char *title)
{
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"",
		x, y, w, h);
	escape(f, fill);
	fputc('"', f);
	if (cls) {
		fputs(" class=\"", f);
		escape(f, cls);
		fputc('"', f);
	}
	if (!title) {
		fputs("/>\n", f);
		return;
	}
	fputs("><title>", f);
	escape(f, title);
	fputs("</title></rect>\n", f);
}

void svg_line(FILE *f, double x1, double y1, double x2, double y2,
	      const char *stroke, int dashed)
{
	fprintf(f,
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"",
		x1, y1, x2, y2);
	escape(f, stroke);
	fprintf(f, "\"%s/>\n", dashed ? " stroke-dasharray=\"3,3\"" : "");
}

void svg_text(FILE *f, double x, double y, const char *anchor, int size,
	      const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(f,
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" "
		"text-anchor=\"",
		x, y, size);
	escape(f, anchor);
	fputs("\">", f);
	escape(f, buf);
	fputs("</text>\n", f);
}
