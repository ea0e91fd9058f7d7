/* Frame colors in flamegraph.pl's palettes, chosen from the frame's name so that the same name
 * gets the same color in every run and every graph (no random numbers anywhere). */
#ifndef GALATOP_EXPORT_PALETTE_H
#define GALATOP_EXPORT_PALETTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum palette {
	PALETTE_HOT = 0, /* red to yellow: the classic CPU flame graph */
	PALETTE_MEM,	 /* green to blue */
	PALETTE_IO,	 /* blue-grey */
	PALETTE_WAKEUP,	 /* aqua */
	PALETTE_JAVA,	 /* by language: JIT/Java green, inlined aqua, C++ yellow, kernel orange */
	PALETTE_JS,	 /* by language: JS source green, builtins aqua, C++ yellow, kernel orange */
	PALETTE_PERL,	 /* by language: Perl green, C++ yellow, kernel orange */
	PALETTE_RED,
	PALETTE_GREEN,
	PALETTE_BLUE,
	PALETTE_AQUA,
	PALETTE_YELLOW,
	PALETTE_PURPLE,
	PALETTE_ORANGE,
	PALETTE_KIND,	 /* by frame kind: user yellow, kernel red, JIT green, inlined aqua,
			  * Python blue, identity roots purple; the hue varied per name */
	PALETTE_MAX
};

/* The color ramps the palettes draw from: a frame's color is a point v (0..1, from its name)
 * on one of them. The flat flamegraph.pl palettes are one ramp each; hot, mem and io use two
 * more coordinates of the name, which a terminal's few colors leave at 0.5. */
enum palette_ramp {
	RAMP_HOT = 0,
	RAMP_MEM,
	RAMP_IO,
	RAMP_RED,
	RAMP_GREEN,
	RAMP_BLUE,
	RAMP_AQUA,
	RAMP_YELLOW,
	RAMP_PURPLE,
	RAMP_ORANGE,
	RAMP_USER,    /* PALETTE_KIND's families */
	RAMP_KERNEL,
	RAMP_JIT,
	RAMP_INLINED,
	RAMP_PYTHON,
	RAMP_IDENTITY,
	RAMP_MAX
};

struct rgb {
	uint8_t r, g, b;
};

/* Parses a palette name as flamegraph.pl's --colors takes it; -1 when unknown. */
int palette_parse(const char *name);
/* The name of a palette ("hot", "mem", ...). */
const char *palette_str(enum palette pal);
/* The background gradient flamegraph.pl pairs with a palette: "yellow", "green", "blue" or
 * "grey". */
const char *palette_background(enum palette pal);
/* Color of the frame named name[0..len) in pal. With by_hash, the color comes from
 * flamegraph.pl's --hash name vector (early characters weigh most); otherwise from a 64-bit
 * hash of every byte of the name, which spreads colors like flamegraph.pl's random ones.
 * Frames named "-" and "--" (stack separators) are grey whatever the palette. */
struct rgb palette_color(enum palette pal, const char *name, size_t len, bool by_hash);
/* The ramp of a frame of kind (enum frame_kind) named name[0..len) in pal, and its place on
 * it in *v (by_hash as in palette_color); -1 for stack separators (grey in every palette). */
int palette_ramp_of(enum palette pal, unsigned kind, const char *name, size_t len, bool by_hash,
		    double *v);
/* The color at v (0..1) of ramp r (hot, mem and io at 0.5 on their other coordinates). */
struct rgb palette_ramp_color(enum palette_ramp r, double v);
/* Color of a frame of kind named name[0..len) in pal: palette_color, except that PALETTE_KIND
 * picks the ramp by the frame's kind (and Python's "qualname (file.py:line)" names). */
struct rgb palette_frame_color(enum palette pal, unsigned kind, const char *name, size_t len,
			       bool by_hash);
/* Whether name[0..len) names a Python function as the CPython unwinder does:
 * "qualname (file.py:line)". */
bool palette_python(const char *name, size_t len);
/* Whether name[0..len) is a stack separator ("-" or "--"), drawn grey even in differentials. */
bool palette_separator(const char *name, size_t len);
/* Differential color: white for 0, red for growth (delta > 0), blue for shrink, saturated in
 * proportion to |delta| / maxdelta (maxdelta > 0), as flamegraph.pl's color_scale. */
struct rgb palette_delta(double delta, double maxdelta);

#endif
