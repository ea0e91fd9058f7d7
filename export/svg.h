/* Interactive SVG flame graphs as flamegraph.pl draws them (hover details, click to zoom,
 * regexp search), from a profile tree; byte-identical output for the same input, and
 * well-formed XML whatever bytes the frame names, titles and notes hold. */
#ifndef GALATOP_EXPORT_SVG_H
#define GALATOP_EXPORT_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "palette.h"
#include "../model/profile.h"

struct svg_opts {
	const char *title;     /* NULL: "Flame Graph", "Icicle Graph" or "Flame Chart" */
	const char *subtitle;  /* NULL or "": none */
	const char *notes;     /* NULL or "": none; kept in an XML comment */
	const char *fonttype;  /* font-family, "Verdana" */
	const char *countname; /* what the values count, "samples" */
	const char *nametype;  /* label before the hovered frame's details, "Function:" */
	const char *bgcolors;  /* NULL: the palette's; see svg_bgcolors_valid */
	enum palette palette;  /* PALETTE_HOT */
	long width;	       /* image width in pixels, 1200 */
	long frameheight;      /* pixels per frame row, 16 */
	double fontsize;       /* 12 */
	double fontwidth;      /* average character width relative to fontsize, 0.59 */
	double minwidth;       /* frames narrower than this are omitted: pixels, 0.1 */
	bool minwidth_percent; /* minwidth is a percentage of the total instead */
	bool hash;	       /* colors from flamegraph.pl's --hash name vector */
	bool inverted;	       /* icicle graph: root at the top */
	bool negate;	       /* differentials: swap red and blue, and the delta's sign */
};

/* Fills o with flamegraph.pl's defaults (shown above). */
void svg_opts__init(struct svg_opts *o);
/* Whether s is a --bgcolors value: "yellow", "blue", "green", "grey" or "#rrggbb". */
bool svg_bgcolors_valid(const char *s);
/* Writes p as an SVG flame graph to out. Siblings are in name order (insertion order for a
 * chart profile), a frame's own value drawn before its children; two-column profiles are
 * differentials (widths from the second column, colors from the change of self value).
 * When p's total is 0 writes flamegraph.pl's "ERROR: No valid input provided" image and
 * returns -ENODATA. Otherwise 0, -ENOMEM, or -errno on a write error. */
int svg_write(FILE *out, const struct profile *p, const struct svg_opts *o);

#endif
