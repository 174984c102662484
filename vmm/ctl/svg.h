/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small SVG writer: the few shapes `hotvm cpu trace` draws, with text
 * escaped, so that whatever a state is called the file stays well-formed.
 */
#ifndef HOTVM_SVG_H
#define HOTVM_SVG_H

#include <stdio.h>

void svg_begin(FILE *f, int width, int height);
void svg_end(FILE *f);
/* cls: the class attribute (NULL: none); title: a tooltip (NULL: none). */
void svg_rect(FILE *f, double x, double y, double w, double h, const char *fill,
	      const char *cls, const char *title);
void svg_line(FILE *f, double x1, double y1, double x2, double y2,
	      const char *stroke, int dashed);
/* anchor: "start", "middle" or "end". */
void svg_text(FILE *f, double x, double y, const char *anchor, int size,
	      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
