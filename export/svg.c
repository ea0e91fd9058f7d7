#include "svg.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "svg_script.h"
#include "../model/sanitize.h"
#include "util/grow.h"

/* flamegraph.pl's fixed geometry: side padding and the gap between frame rows. */
#define XPAD 10
#define FRAMEPAD 1
#define OUT_CAP (1u << 20)
#define NAME_RUN 64 /* frames whose names are looked up together */
#define OUT_SCRATCH 256 /* a buffer for one number or word: far below OUT_CAP, never flushed */
#define REPLACEMENT "\xEF\xBF\xBD"

/* round() (half away from zero, sign of zero kept) inline: libm's call costs more than the
 * arithmetic, and it runs ten times per frame. Below 2^52 a double's fraction x - trunc(x)
 * is exact, so the comparison with 0.5 is too; from 2^52 up every double is an integer. */
static inline double round_exact(double x)
{
	double t;

	if (!(fabs(x) < 4503599627370496.0))
		return x;
	t = (double)(long long)x;
	if (fabs(x - t) >= 0.5)
		t += x < 0 ? -1 : 1;
	return copysign(t, x);
}

void svg_opts__init(struct svg_opts *o)
{
	*o = (struct svg_opts){
		.fonttype = "Verdana",
		.countname = "samples",
		.nametype = "Function:",
		.palette = PALETTE_HOT,
		.width = 1200,
		.frameheight = 16,
		.fontsize = 12,
		.fontwidth = 0.59,
		.minwidth = 0.1,
	};
}

/* The gradients flamegraph.pl names, as (start, stop) colors. */
static const struct {
	const char *name, *start, *stop;
} backgrounds[] = {
	{ "yellow", "#eeeeee", "#eeeeb0" },
	{ "blue", "#eeeeee", "#e0e0ff" },
	{ "green", "#eef2ee", "#e0ffe0" },
	{ "grey", "#f8f8f8", "#e8e8e8" },
};

static bool flat_color(const char *s)
{
	if (s[0] != '#' || strlen(s) != 7)
		return false;
	for (int i = 1; i < 7; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return false;
	return true;
}

bool svg_bgcolors_valid(const char *s)
{
	for (size_t i = 0; i < sizeof(backgrounds) / sizeof(backgrounds[0]); i++)
		if (!strcmp(s, backgrounds[i].name))
			return true;
	return flat_color(s);
}

/* Buffered output: one fwrite per megabyte; the first error sticks. */
struct out {
	FILE *f;
	char *buf;
	size_t len;
	int err;
};

static void out_flush(struct out *o)
{
	if (o->len && !o->err && fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->err = errno ? -errno : -EIO;
	o->len = 0;
}

static void out_mem_slow(struct out *o, const void *s, size_t n)
{
	out_flush(o);
	if (n > OUT_CAP) {
		if (!o->err && fwrite(s, 1, n, o->f) != n)
			o->err = errno ? -errno : -EIO;
		return;
	}
	memcpy(o->buf, s, n);
	o->len = n;
}

/* Inline, so that the copy of a literal's few bytes is a move, not a call. */
static inline __attribute__((always_inline)) void out_mem(struct out *o, const void *s, size_t n)
{
	if (__builtin_expect(o->len + n > OUT_CAP, 0)) {
		out_mem_slow(o, s, n);
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static inline __attribute__((always_inline)) void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

/* A number the way Perl prints one (up to 15 significant digits, no trailing zeros). */
static void out_num(struct out *o, double v)
{
	char tmp[40];

	out_mem(o, tmp, (size_t)snprintf(tmp, sizeof(tmp), "%.15g", v == 0 ? 0 : v));
}

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Writes u in decimal, two digits per step, ending just before p; returns its first byte. */
static char *put_decimal(char *p, unsigned long long u)
{
	while (u >= 100) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * (u % 100), 2);
		u /= 100;
	}
	if (u >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * u, 2);
	} else {
		*--p = (char)('0' + u);
	}
	return p;
}

/* Writes u / 10^decimals with that many decimals (0..2), and a '-' first when neg, straight
 * into the buffer: the digits are counted first, then written from the end. */
static void out_scaled(struct out *o, unsigned long long u, int decimals, bool neg)
{
	static const unsigned long long pow10[] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
	};
	unsigned long long whole = decimals == 2 ? u / 100 : decimals == 1 ? u / 10 : u;
	unsigned n = 1;
	char *p;

	while (n < 20 && whole >= pow10[n])
		n++;
	if (__builtin_expect(o->len + 32 > OUT_CAP, 0))
		out_flush(o);
	p = o->buf + o->len;
	if (neg)
		*p++ = '-';
	put_decimal(p + n, whole);
	p += n;
	if (decimals == 2) {
		*p++ = '.';
		memcpy(p, digit_pairs + 2 * (u % 100), 2);
		p += 2;
	} else if (decimals == 1) {
		*p++ = '.';
		*p++ = (char)('0' + u % 10);
	}
	o->len = (size_t)(p - o->buf);
}

/* v with a fixed number of decimals (0..2), without printf: it runs several times per frame. */
static void out_fixed(struct out *o, double v, int decimals)
{
	static const double scale[] = { 1, 10, 100 };
	double s = v * scale[decimals];

	if (!(fabs(s) < 9e18)) {
		out_num(o, v);
		return;
	}
	s = round_exact(s);
	out_scaled(o, (unsigned long long)fabs(s), decimals, s < 0);
}

/* out_fixed(t / 10, 1) for t an integer (a double from round_exact): t's digits as they are. */
static void out_tenths(struct out *o, double t)
{
	if (fabs(t) < 1e15)
		out_scaled(o, (unsigned long long)fabs(t), 1, t < 0);
	else
		out_fixed(o, t / 10, 1);
}

/* out_fixed(b / 10 - a / 10, 1) for a, b integers (doubles from round_exact): the difference
 * of two edges rounded to tenths is the difference of their integers (exact below 10^14
 * tenths, far past any drawing). */
static void out_tenths_diff(struct out *o, double a, double b)
{
	if (fabs(a) < 1e14 && fabs(b) < 1e14)
		out_tenths(o, b - a);
	else
		out_fixed(o, b / 10 - a / 10, 1);
}

/* v (0..255) in decimal: its digits from the pair table, no division. */
static void out_u8(struct out *o, unsigned v)
{
	char tmp[4], *p = put_decimal(tmp + sizeof(tmp), v);

	out_mem(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

static const char *entity(unsigned char c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&#39;";
	default:
		return NULL;
	}
}

/* Bytes copied as they are: printable ASCII but markup characters (PLAIN_TEXT), and in
 * comments but '-', which must never make "--" (PLAIN_COMMENT). A table: it is asked for
 * every byte of every name, twice per frame. */
enum { PLAIN_TEXT = 1, PLAIN_COMMENT = 2 };
#define PLAIN_BITS(c)                                                                      \
	((c) < 0x20 || (c) >= 0x7f ? 0                                                     \
	 : (c) == '&' || (c) == '<' || (c) == '>' || (c) == '"' || (c) == '\'' ? PLAIN_COMMENT \
	 : (c) == '-'							    ? PLAIN_TEXT    \
									    : PLAIN_TEXT | PLAIN_COMMENT)
#define PLAIN4(c) PLAIN_BITS(c), PLAIN_BITS((c) + 1), PLAIN_BITS((c) + 2), PLAIN_BITS((c) + 3)
#define PLAIN16(c) PLAIN4(c), PLAIN4((c) + 4), PLAIN4((c) + 8), PLAIN4((c) + 12)
#define PLAIN64(c) PLAIN16(c), PLAIN16((c) + 16), PLAIN16((c) + 32), PLAIN16((c) + 48)
static const unsigned char plain_bits[256] = { PLAIN64(0), PLAIN64(64), PLAIN64(128),
						PLAIN64(192) };

/* Bytes taken by the character at s[0..len) (at least 1); *ok tells whether it may appear in
 * an SVG as it is: valid UTF-8 other than the C1 controls and U+FFFE, U+FFFF (which XML
 * forbids). A well-formed C1 control or non-character is one character, to be replaced whole. */
static size_t xml_char_len(const unsigned char *s, size_t len, bool *ok)
{
	size_t n = utf8_seq_len(s, len);

	*ok = n != 0;
	if (n == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
		*ok = false;
	else if (!n && len >= 2 && s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
		n = 2;
	return n ? n : 1;
}

/* The markup characters' entities as entity() gives them, each in 8 bytes (copied whole, then
 * the length kept), for out_ascii_text. */
static const struct {
	char s[7];
	uint8_t n;
} entities[128] = {
	['&'] = { "&amp;", 5 }, ['<'] = { "&lt;", 4 },	 ['>'] = { "&gt;", 4 },
	['"'] = { "&quot;", 6 }, ['\''] = { "&#39;", 5 },
};

/* out_text's fast path for character data: the leading bytes of s[0..len) that are printable
 * ASCII written straight into the buffer, room for 6 bytes each made first, markup characters
 * as entities; returns how many it took (it stops at any other byte). A name's bytes cost a
 * few instructions each instead of a copy call per run between two markup characters. */
static size_t out_ascii_text(struct out *o, const unsigned char *s, size_t len)
{
	char *p;
	size_t i;

	if (len > (OUT_CAP - 8) / 6)
		return 0;
	if (o->len + 6 * len + 8 > OUT_CAP)
		out_flush(o);
	p = o->buf + o->len;
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (plain_bits[c] & PLAIN_TEXT) {
			*p++ = (char)c;
			continue;
		}
		if (c >= 0x80 || !entities[c].n)
			break;
		memcpy(p, &entities[c], 8);
		p += entities[c].n;
	}
	o->len = (size_t)(p - o->buf);
	return i;
}

/* Writes s[0..len) as XML character data (or, with comment, as the inside of an XML comment):
 * markup characters become entities, control characters, invalid UTF-8 and non-characters
 * become U+FFFD; in a comment "--" gets a space between the dashes and a final '-' one after. */
static void out_text(struct out *o, const char *str, size_t len, bool comment)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned want = comment ? PLAIN_COMMENT : PLAIN_TEXT;
	bool dash = false, ok;
	size_t i = comment ? 0 : out_ascii_text(o, s, len), run;

	while (i < len) {
		for (run = i; run < len && (plain_bits[s[run]] & want); run++)
			;
		if (run > i) {
			out_mem(o, s + i, run - i);
			dash = false;
			i = run;
			continue;
		}
		if (s[i] < 0x80) {
			if (comment && s[i] == '-') {
				out_mem(o, dash ? " -" : "-", dash ? 2 : 1);
				dash = true;
			} else if (!comment && entity(s[i])) {
				out_str(o, entity(s[i]));
			} else if (s[i] >= 0x20 && s[i] < 0x7f) {
				out_mem(o, s + i, 1);
			} else {
				out_mem(o, REPLACEMENT, 3);
			}
			if (s[i] != '-')
				dash = false;
			i++;
			continue;
		}
		run = xml_char_len(s + i, len - i, &ok);
		out_mem(o, ok ? (const char *)s + i : REPLACEMENT, ok ? run : 3);
		dash = false;
		i += run;
	}
	if (comment && dash)
		out_mem(o, " ", 1);
}

static void out_xml(struct out *o, const char *s)
{
	out_text(o, s, strlen(s), false);
}

/* Walks at most n characters of s[0..len) (counted as out_text counts them); returns the byte
 * length they take. */
static size_t utf8_prefix(const char *str, size_t len, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	bool ok;

	while (n-- && i < len)
		i += s[i] < 0x80 ? 1 : xml_char_len(s + i, len - i, &ok);
	return i;
}

/* flamegraph.pl's annotations (_[k] kernel, _[w] waker, _[i] inlined, _[j] JIT) color a frame
 * but are not shown. */
static size_t strip_annotation(const char *s, size_t len)
{
	if (len >= 4 && s[len - 4] == '_' && s[len - 3] == '[' && s[len - 1] == ']' &&
	    s[len - 2] && strchr("kwij", s[len - 2]))
		return len - 4;
	return len;
}

/* Whether printf's correctly rounded "%.Nf" of v is round_exact(v * 10^N) (N = 0..2), so that
 * integer formatting prints the same digits: v * 10^N in range and not within a hair of a
 * tie, where the rounding of the multiplication could tip it the other way. */
static bool fixed_safe(double v, int decimals)
{
	static const double scale[] = { 1, 10, 100 };
	double s = fabs(v * scale[decimals]);

	return s < 9e15 && fabs(s - floor(s) - 0.5) > 1e-6;
}

/* A count rounded to an integer, with thousands separators: "1,234,567". */
static void out_count(struct out *o, double v)
{
	char digits[400], tmp[540];
	int n, lead, k = 0;

	if (v >= 0 && fixed_safe(v, 0)) {
		/* most titles: digits without printf, which costs more than the rest of a frame */
		unsigned long long u = (unsigned long long)fabs(round_exact(v));
		char *p = digits + 24;

		*p = '\0';
		p = put_decimal(p, u);
		n = (int)(digits + 24 - p);
		memmove(digits, p, (size_t)n + 1);
	} else {
		n = snprintf(digits, sizeof(digits), "%.0f", v);
	}
	lead = digits[0] == '-';
	if (n < 0 || n >= (int)sizeof(digits)) {
		out_num(o, v);
		return;
	}
	for (int i = 0; i < n; i++) {
		if (i > lead && (n - i) % 3 == 0)
			tmp[k++] = ',';
		tmp[k++] = digits[i];
	}
	out_mem(o, tmp, (size_t)k);
}

static void out_percent(struct out *o, double pct, bool plus)
{
	char tmp[400];
	int n;

	if (fixed_safe(pct, 2) && !(pct < 0 && round_exact(pct * 100) == 0)) {
		if (plus)
			out_mem(o, "+", 1);
		out_fixed(o, pct, 2);
		out_mem(o, "%", 1);
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%s%.2f%%", plus ? "+" : "", pct);
	if (n > 0 && n < (int)sizeof(tmp))
		out_mem(o, tmp, (size_t)n);
}

static void out_rgb(struct out *o, struct rgb c)
{
	out_str(o, "rgb(");
	out_u8(o, c.r);
	out_mem(o, ",", 1);
	out_u8(o, c.g);
	out_mem(o, ",", 1);
	out_u8(o, c.b);
	out_mem(o, ")", 1);
}

/* What a frame shows: name, value, place. */
struct item {
	uint32_t node;
	uint32_t depth;
	uint32_t frame; /* the node's */
	double x;	/* left edge, in value units */
	double w;	/* width, in value units */
};

/* A drawn frame's name, looked up ahead of its drawing (see svg_write). */
struct name {
	const char *s;
	size_t len;
};

struct layout {
	const struct profile *p;
	const struct svg_opts *o;
	bool two;	   /* differential: widths from the second column */
	enum profile_order order;
	double total;	   /* sum of all widths (value units) */
	double per_value;  /* pixels per value unit */
	double minvalue;   /* narrower frames are not drawn */
	double maxdelta;   /* largest change of self value, at least 1 */
	double height;	   /* image height */
	double top;	   /* y of the first row when inverted */
	double ypad2;	   /* bottom padding */
	uint32_t maxdepth; /* of drawn frames */
	struct item *items; /* drawn frames, parents before children */
	size_t n_items;
	/* frame id -> its palette color as 1 << 24 | r << 16 | g << 8 | b, 0 until computed: a
	 * name's color depends on the name alone (not in differentials), and names recur */
	uint32_t *colors;
	struct row_text *rows; /* depth -> its numbers as text, 0..maxdepth */
	char counts[256];	/* " COUNTNAME, " escaped, the title's words between two numbers */
	size_t counts_len;	/* 0: too long for counts[], escaped in every title */
};

/* What every frame of a row (a depth) writes alike: its rect's y and height, its label's y. */
struct row_text {
	char y[48], height[48], text_y[48];
	uint8_t y_len, height_len, text_y_len;
};

static double value(const struct layout *l, uint32_t id)
{
	return l->two ? profile__total2(l->p, id) : profile__node(l->p, id)->total;
}

static double self_value(const struct layout *l, uint32_t id)
{
	return l->two ? profile__self2(l->p, id) : profile__node(l->p, id)->self;
}

/* Depth-first from the root, with an explicit stack (stacks can be arbitrarily deep): a
 * frame's own value first, then its children left to right; frames narrower than the minimum
 * are dropped with everything under them. */
static int layout_frames(struct layout *l)
{
	struct item *stack = NULL;
	uint32_t *kids = NULL;
	size_t n_stack = 0, cap_stack = 0, cap_items = 0, cap_kids = 0;
	int err = 0;

	if (value(l, PROFILE_ROOT) >= l->minvalue) {
		err = ARRAY_GROW(stack, cap_stack, 1);
		if (err)
			return err;
		stack[n_stack++] = (struct item){ PROFILE_ROOT, 0, 0, 0, value(l, PROFILE_ROOT) };
	}
	while (n_stack) {
		struct item it = stack[--n_stack];
		size_t n, pushed = 0;
		double x;

		err = ARRAY_GROW(l->items, cap_items, l->n_items + 1);
		if (err)
			break;
		l->items[l->n_items++] = it;
		if (it.depth > l->maxdepth)
			l->maxdepth = it.depth;

		n = profile__child_count(l->p, it.node);
		if (!n)
			continue;
		err = ARRAY_GROW(kids, cap_kids, n);
		if (!err)
			err = ARRAY_GROW(stack, cap_stack, n_stack + n);
		if (err)
			break;
		n = profile__children(l->p, it.node, l->order, kids);
		x = it.x + self_value(l, it.node);
		for (size_t i = 0; i < n; i++) {
			double w = value(l, kids[i]);

			if (w >= l->minvalue)
				stack[n_stack + pushed++] = (struct item){
					kids[i], it.depth + 1, profile__node(l->p, kids[i])->frame, x, w
				};
			x += w;
		}
		/* Reverse so that the leftmost child is popped first. */
		for (size_t i = 0; i < pushed / 2; i++) {
			struct item t = stack[n_stack + i];

			stack[n_stack + i] = stack[n_stack + pushed - 1 - i];
			stack[n_stack + pushed - 1 - i] = t;
		}
		n_stack += pushed;
	}
	free(stack);
	free(kids);
	return err;
}

static double max_delta(const struct profile *p)
{
	uint32_t n = profile__node_count(p);
	double max = 1;

	for (uint32_t id = 0; id < n; id++) {
		double d = fabs(profile__self2(p, id) - profile__node(p, id)->self);

		if (d > max)
			max = d;
	}
	return max;
}

static void write_header(struct out *o, const struct svg_opts *opt, double height,
			 bool interactive)
{
	out_str(o, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		   "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		   "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
		   "<svg version=\"1.1\" width=\"");
	out_num(o, opt->width);
	out_str(o, "\" height=\"");
	out_num(o, height);
	out_str(o, interactive ? "\" onload=\"init(evt)\" viewBox=\"0 0 " : "\" viewBox=\"0 0 ");
	out_num(o, opt->width);
	out_mem(o, " ", 1);
	out_num(o, height);
	out_str(o, "\" xmlns=\"http://www.w3.org/2000/svg\" "
		   "xmlns:xlink=\"http://www.w3.org/1999/xlink\" font-family=\"");
	out_xml(o, opt->fonttype);
	out_str(o, "\" font-size=\"");
	out_num(o, opt->fontsize);
	out_str(o, "\">\n<!-- Flame graph drawn by galatop svg, after Brendan Gregg's FlameGraph "
		   "(https://github.com/brendangregg/FlameGraph). -->\n<!-- NOTES: ");
	out_text(o, opt->notes ? opt->notes : "", opt->notes ? strlen(opt->notes) : 0, true);
	out_str(o, " -->\n");
}

/* <text id="ID" x="X" y="Y" EXTRA>TEXT</text>, TEXT escaped. */
static void write_label(struct out *o, const char *id, double x, double y, const char *extra,
			const char *text)
{
	out_str(o, "<text id=\"");
	out_str(o, id);
	out_str(o, "\" x=\"");
	out_num(o, x);
	out_str(o, "\" y=\"");
	out_num(o, y);
	out_str(o, "\"");
	out_str(o, extra);
	out_mem(o, ">", 1);
	out_xml(o, text);
	out_str(o, "</text>\n");
}

static void write_error(struct out *o, const struct svg_opts *opt)
{
	char extra[64];

	write_header(o, opt, opt->fontsize * 5, false);
	snprintf(extra, sizeof(extra), " text-anchor=\"middle\" font-size=\"%.15g\"",
		 opt->fontsize + 2);
	write_label(o, "error", (double)(opt->width / 2), opt->fontsize * 2, extra,
		    "ERROR: No valid input provided to galatop svg.");
	out_str(o, "</svg>\n");
}

static void write_chrome(struct out *o, const struct layout *l)
{
	const struct svg_opts *opt = l->o;
	const char *bg = opt->bgcolors ? opt->bgcolors : palette_background(opt->palette);
	const char *start = bg, *stop = bg, *title = opt->title;
	double fs = opt->fontsize, w = (double)opt->width;
	char extra[64];

	for (size_t i = 0; i < sizeof(backgrounds) / sizeof(backgrounds[0]); i++) {
		if (!strcmp(bg, backgrounds[i].name)) {
			start = backgrounds[i].start;
			stop = backgrounds[i].stop;
		}
	}
	if (!flat_color(start))
		start = stop = backgrounds[0].start;
	if (!title)
		title = profile__is_chart(l->p) ? "Flame Chart"
			: opt->inverted		? "Icicle Graph"
						: "Flame Graph";

	write_header(o, opt, l->height, true);
	out_str(o, "<defs>\n\t<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" "
		   "x2=\"0\">\n\t\t<stop stop-color=\"");
	out_str(o, start);
	out_str(o, "\" offset=\"5%\"/>\n\t\t<stop stop-color=\"");
	out_str(o, stop);
	out_str(o, "\" offset=\"95%\"/>\n\t</linearGradient>\n</defs>\n"
		   "<style type=\"text/css\"><![CDATA[\n");
	out_str(o, svg_style);
	out_str(o, "]]></style>\n<script type=\"text/ecmascript\"><![CDATA[\n");
	out_str(o, svg_script);
	out_str(o, "]]></script>\n<rect x=\"0\" y=\"0\" width=\"");
	out_num(o, w);
	out_str(o, "\" height=\"");
	out_num(o, l->height);
	out_str(o, "\" fill=\"url(#background)\"/>\n");

	snprintf(extra, sizeof(extra), " font-size=\"%.15g\"", fs + 5);
	write_label(o, "title", floor(w / 2), fs * 2, extra, title);
	if (opt->subtitle && *opt->subtitle)
		write_label(o, "subtitle", floor(w / 2), fs * 4, "", opt->subtitle);
	write_label(o, "details", XPAD, l->height - l->ypad2 / 2, "", " ");
	write_label(o, "unzoom", XPAD, fs * 2, " class=\"hide\"", "Reset Zoom");
	write_label(o, "search", w - XPAD - 100, fs * 2, "", "Search");
	write_label(o, "ignorecase", w - XPAD - 16, fs * 2, "", "ic");
	write_label(o, "matched", w - XPAD - 100, l->height - l->ypad2 / 2, " class=\"hide\"",
		    " ");

	out_str(o, "<g id=\"frames\" data-nametype=\"");
	out_xml(o, opt->nametype);
	out_str(o, "\" data-fontsize=\"");
	out_num(o, fs);
	out_str(o, "\" data-fontwidth=\"");
	out_num(o, opt->fontwidth);
	out_str(o, "\" data-xpad=\"");
	out_num(o, XPAD);
	out_str(o, "\" data-inverted=\"");
	out_str(o, opt->inverted ? "1" : "0");
	out_str(o, "\">\n");
}

/* <title>: "name (N countname, P%)", "all (...)" for the root, and "; +D%" for the change of
 * self value in differentials. */
static void write_title(struct out *o, const struct layout *l, const struct item *it,
			const char *name, size_t len, double w)
{
	double rounded = round_exact(w);

	out_str(o, "<g><title>");
	if (it->node == PROFILE_ROOT)
		out_str(o, "all");
	else
		out_text(o, name, len, false);
	out_str(o, " (");
	out_count(o, w);
	if (l->counts_len) {
		out_mem(o, l->counts, l->counts_len);
	} else {
		out_mem(o, " ", 1);
		out_xml(o, l->o->countname);
		out_str(o, ", ");
	}
	if (it->node == PROFILE_ROOT) {
		out_str(o, "100%");
	} else {
		out_percent(o, 100 * rounded / l->total, false);
		if (l->two) {
			double d = profile__self2(l->p, it->node) -
				   profile__node(l->p, it->node)->self;

			if (l->o->negate)
				d = -d;
			if (d == 0)
				d = 0; /* no "-0.00%" */
			out_str(o, "; ");
			out_percent(o, 100 * d / l->total, d > 0);
		}
	}
	out_str(o, ")</title>");
}

/* Writes what f writes to a scratch buffer into dst (at most 47 bytes: a number); its length. */
static uint8_t text_of(char *dst, void (*f)(struct out *, double, double), double a, double b)
{
	char scratch[OUT_SCRATCH];
	struct out s = { .buf = scratch };

	f(&s, a, b);
	memcpy(dst, scratch, s.len < 47 ? s.len : 47);
	return (uint8_t)(s.len < 47 ? s.len : 47);
}

static void tenths_of(struct out *o, double t, double unused)
{
	(void)unused;
	out_tenths(o, t);
}

static void fixed1_of(struct out *o, double v, double unused)
{
	(void)unused;
	out_fixed(o, v, 1);
}

/* " COUNTNAME, " escaped once for every title (left empty when it does not fit). */
static void fill_counts(struct layout *l)
{
	char scratch[OUT_SCRATCH];
	struct out s = { .buf = scratch };
	size_t n = strlen(l->o->countname);

	l->counts_len = 0;
	if (n > 30) /* escaped, at most 6 bytes each and 3 more */
		return;
	out_mem(&s, " ", 1);
	out_xml(&s, l->o->countname);
	out_str(&s, ", ");
	memcpy(l->counts, scratch, s.len);
	l->counts_len = s.len;
}

/* The rows' numbers as text, once per depth instead of once per frame. 0 or -ENOMEM. */
static int fill_rows(struct layout *l)
{
	const struct svg_opts *opt = l->o;

	l->rows = calloc((size_t)l->maxdepth + 1, sizeof(*l->rows));
	if (!l->rows)
		return -ENOMEM;
	for (uint32_t d = 0; d <= l->maxdepth; d++) {
		struct row_text *r = &l->rows[d];
		double y1, y2, ty1, ty2;

		if (opt->inverted) {
			y1 = l->top + d * (double)opt->frameheight;
			y2 = y1 + opt->frameheight - FRAMEPAD;
		} else {
			y2 = l->height - l->ypad2 - d * (double)opt->frameheight;
			y1 = y2 - opt->frameheight + FRAMEPAD;
		}
		ty1 = round_exact(y1 * 10);
		ty2 = round_exact(y2 * 10);
		r->y_len = text_of(r->y, tenths_of, ty1, 0);
		r->height_len = text_of(r->height, out_tenths_diff, ty1, ty2);
		r->text_y_len = text_of(r->text_y, fixed1_of, 3 + (y1 + y2) / 2, 0);
	}
	return 0;
}

static void write_frame(struct out *o, const struct layout *l, const struct item *it,
			struct name nm)
{
	const struct svg_opts *opt = l->o;
	const struct frames *ft = profile__frames(l->p);
	uint32_t frame = it->frame;
	const char *name = nm.s;
	size_t len = nm.len;
	size_t shown = strip_annotation(name, len);
	double w = it->w;
	double x1 = XPAD + it->x * l->per_value, x2 = XPAD + (it->x + w) * l->per_value;
	double chars, tx1 = round_exact(x1 * 10), tx2 = round_exact(x2 * 10);
	const struct row_text *row = &l->rows[it->depth];
	struct rgb color;

	if (l->two && !palette_separator(name, len)) {
		double d = profile__self2(l->p, it->node) - profile__node(l->p, it->node)->self;

		color = palette_delta(opt->negate ? -d : d, l->maxdelta);
	} else if (it->node != PROFILE_ROOT && l->colors && l->colors[frame]) {
		uint32_t c = l->colors[frame];

		color = (struct rgb){ (uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c };
	} else {
		color = palette_frame_color(opt->palette, frames__get(ft, frame)->kind, name, len,
					    opt->hash);
		if (it->node != PROFILE_ROOT && l->colors)
			l->colors[frame] = 1u << 24 | (uint32_t)color.r << 16 |
					   (uint32_t)color.g << 8 | color.b;
	}

	write_title(o, l, it, name, shown, w);
	/* Edges and sizes rounded to tenths: the difference of two rounded edges in tenths is the
	 * difference of their integers (exact below 10^14 tenths, far past any drawing). */
	out_str(o, "<rect x=\"");
	out_tenths(o, tx1);
	out_str(o, "\" y=\"");
	out_mem(o, row->y, row->y_len);
	out_str(o, "\" width=\"");
	out_tenths_diff(o, tx1, tx2);
	out_str(o, "\" height=\"");
	out_mem(o, row->height, row->height_len);
	out_str(o, "\" fill=\"");
	out_rgb(o, color);
	out_str(o, "\" rx=\"2\" ry=\"2\"/><text x=\"");
	out_fixed(o, x1 + 3, 2);
	out_str(o, "\" y=\"");
	out_mem(o, row->text_y, row->text_y_len);
	out_mem(o, "\">", 2);

	/* Room for one character and two dots at least, as flamegraph.pl. */
	chars = (x2 - x1) / (opt->fontsize * opt->fontwidth);
	if (chars >= 3) {
		size_t n = chars > (double)SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)chars;
		size_t fits = utf8_prefix(name, shown, n);

		if (fits < shown) {
			out_text(o, name, utf8_prefix(name, shown, n - 2), false);
			out_mem(o, "..", 2);
		} else {
			out_text(o, name, shown, false);
		}
	}
	out_str(o, "</text></g>\n");
}

int svg_write(FILE *f, const struct profile *p, const struct svg_opts *opt)
{
	struct out o = { .f = f };
	struct layout l = { .p = p, .o = opt };
	double fs = opt->fontsize, ypad1 = fs * 3, ypad3 = fs * 2;
	bool subtitle = opt->subtitle && *opt->subtitle;
	int err;

	o.buf = malloc(OUT_CAP);
	if (!o.buf)
		return -ENOMEM;
	l.two = profile__two_column(p);
	l.order = profile__is_chart(p) ? ORDER_INSERTION : ORDER_NAME;
	l.total = value(&l, PROFILE_ROOT);
	if (!(l.total > 0)) {
		write_error(&o, opt);
		out_flush(&o);
		free(o.buf);
		return o.err ? o.err : -ENODATA;
	}
	l.per_value = (double)(opt->width - 2 * XPAD) / l.total;
	l.minvalue = opt->minwidth_percent ? l.total * opt->minwidth / 100
					   : opt->minwidth / l.per_value;
	l.maxdelta = l.two ? max_delta(p) : 1;
	err = layout_frames(&l);
	if (err)
		goto out;
	/* without it (ENOMEM) every color is computed again; the root, drawn as "all", never
	 * shares it (an empty name is its frame id too) */
	l.colors = calloc(frames__count(profile__frames(p)), sizeof(*l.colors));

	l.ypad2 = fs * 2 + 10;
	l.top = ypad1 + (subtitle ? ypad3 : 0);
	l.height = (l.maxdepth + 1.0) * opt->frameheight + ypad1 + l.ypad2 + (subtitle ? ypad3 : 0);
	err = fill_rows(&l);
	if (err)
		goto out;
	fill_counts(&l);
	write_chrome(&o, &l);
	/* In runs whose names are looked up (and their bytes fetched) first, in a loop of
	 * independent loads: the lookups of a run wait for memory together, not once per frame. */
	for (size_t i = 0; i < l.n_items; i += NAME_RUN) {
		const struct frames *ft = profile__frames(p);
		size_t n = l.n_items - i < NAME_RUN ? l.n_items - i : NAME_RUN;
		struct name names[NAME_RUN];

		for (size_t j = 0; j < n; j++) {
			const struct item *it = &l.items[i + j];

			names[j] = it->node == PROFILE_ROOT ? (struct name){ "all", 3 }
				   : (struct name){ frames__name(ft, it->frame),
						    frames__name_len(ft, it->frame) };
			__builtin_prefetch(names[j].s);
			__builtin_prefetch(names[j].s + names[j].len);
		}
		for (size_t j = 0; j < n; j++)
			write_frame(&o, &l, &l.items[i + j], names[j]);
	}
	out_str(&o, "</g>\n</svg>\n");
	out_flush(&o);
	err = o.err;
out:
	free(l.rows);
	free(l.colors);
	free(l.items);
	free(o.buf);
	return err;
}
