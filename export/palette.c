#include "palette.h"

#include <stdlib.h>
#include <string.h>

#include "../model/sanitize.h"
#include "../model/frames.h"
#include "../model/hash.h"

static const char *const palette_names[PALETTE_MAX] = {
	[PALETTE_HOT] = "hot",	     [PALETTE_MEM] = "mem",	  [PALETTE_IO] = "io",
	[PALETTE_WAKEUP] = "wakeup", [PALETTE_JAVA] = "java",	  [PALETTE_JS] = "js",
	[PALETTE_PERL] = "perl",     [PALETTE_RED] = "red",	  [PALETTE_GREEN] = "green",
	[PALETTE_BLUE] = "blue",     [PALETTE_AQUA] = "aqua",	  [PALETTE_YELLOW] = "yellow",
	[PALETTE_PURPLE] = "purple", [PALETTE_ORANGE] = "orange",	  [PALETTE_KIND] = "kind",
};

int palette_parse(const char *name)
{
	for (int i = 0; i < PALETTE_MAX; i++)
		if (!strcmp(name, palette_names[i]))
			return i;
	return -1;
}

const char *palette_str(enum palette pal)
{
	return pal < PALETTE_MAX ? palette_names[pal] : "?";
}

const char *palette_background(enum palette pal)
{
	switch (pal) {
	case PALETTE_MEM:
		return "green";
	case PALETTE_IO:
	case PALETTE_WAKEUP:
		return "blue";
	case PALETTE_HOT:
	case PALETTE_JAVA:
	case PALETTE_JS:
	case PALETTE_PERL:
	case PALETTE_KIND:
		return "yellow";
	default:
		return "grey";
	}
}

/* A name seen as code points, for the rules that look at characters rather than bytes. */
struct cps {
	uint32_t *v;
	size_t n;
	uint32_t small[128];
};

static int cps_decode(struct cps *c, const char *name, size_t len)
{
	const unsigned char *s = (const unsigned char *)name;

	c->v = len <= 128 ? c->small : malloc(len * sizeof(*c->v));
	if (!c->v)
		return -1;
	c->n = 0;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq_len(s + i, len - i);
		uint32_t cp = n ? s[i] & (0xFF >> (n == 1 ? 1 : n + 1)) : 0xFFFD;

		for (size_t k = 1; k < n; k++)
			cp = (cp << 6) | (s[i + k] & 0x3F);
		c->v[c->n++] = cp;
		i += n ? n : 1;
	}
	return 0;
}

static void cps_free(struct cps *c)
{
	if (c->v != c->small)
		free(c->v);
}

/* flamegraph.pl's namehash over cps[0..n) taken forward or backward: drop a leading
 * "module`" (anything up to the first backtick that is not the first character), then weigh
 * the first three characters, earlier ones most. 0..1. */
static double name_vector(const uint32_t *cps, size_t n, bool backward)
{
	double vector = 0, weight = 1, max = 1;
	size_t start = 0;
	int mod = 10;

#define AT(i) (backward ? cps[n - 1 - (i)] : cps[i])
	for (size_t i = 1; i < n; i++) {
		if (AT(i) == '`') {
			start = i + 1;
			break;
		}
	}
	for (size_t i = start; i < n && mod <= 12; i++, mod++) {
		vector += (double)(AT(i) % (uint32_t)mod) / (mod - 1) * weight;
		max += weight;
		weight *= 0.70;
	}
#undef AT
	return 1 - vector / max;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

static bool contains(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle)) != NULL;
}

static bool java_package(const char *s, size_t len)
{
	static const char *const pkgs[] = { "java/", "javax/", "jdk/", "net/", "org/",
					    "com/",  "io/",    "sun/" };

	if (len && s[0] == 'L') {
		s++;
		len--;
	}
	for (size_t i = 0; i < sizeof(pkgs) / sizeof(pkgs[0]); i++) {
		size_t n = strlen(pkgs[i]);

		if (len >= n && !memcmp(s, pkgs[i], n))
			return true;
	}
	return false;
}

/* The language palettes pick one of the flat palettes from the name's annotations and
 * shape, in flamegraph.pl's order of tests. */
static enum palette language(enum palette pal, const char *s, size_t len)
{
	const char *slash;

	switch (pal) {
	case PALETTE_JAVA:
		if (ends_with(s, len, "_[j]"))
			return PALETTE_GREEN;
		if (ends_with(s, len, "_[i]"))
			return PALETTE_AQUA;
		if (java_package(s, len) || contains(s, len, ":::"))
			return PALETTE_GREEN;
		if (contains(s, len, "::"))
			return PALETTE_YELLOW;
		if (ends_with(s, len, "_[k]"))
			return PALETTE_ORANGE;
		return PALETTE_RED;
	case PALETTE_PERL:
		if (contains(s, len, "::"))
			return PALETTE_YELLOW;
		if (contains(s, len, "Perl") || contains(s, len, ".pl"))
			return PALETTE_GREEN;
		if (ends_with(s, len, "_[k]"))
			return PALETTE_ORANGE;
		return PALETTE_RED;
	case PALETTE_JS:
		if (ends_with(s, len, "_[j]"))
			return contains(s, len, "/") ? PALETTE_GREEN : PALETTE_AQUA;
		if (contains(s, len, "::"))
			return PALETTE_YELLOW;
		slash = memchr(s, '/', len);
		if (slash && contains(slash, len - (size_t)(slash - s), ".js"))
			return PALETTE_GREEN;
		if (contains(s, len, ":"))
			return PALETTE_AQUA;
		if (len == 1 && s[0] == ' ')
			return PALETTE_GREEN;
		if (contains(s, len, "_[k]"))
			return PALETTE_ORANGE;
		return PALETTE_RED;
	case PALETTE_WAKEUP:
		return PALETTE_AQUA;
	default:
		return pal;
	}
}

static struct rgb rgb(int r, int g, int b)
{
	return (struct rgb){ (uint8_t)r, (uint8_t)g, (uint8_t)b };
}

bool palette_separator(const char *name, size_t len)
{
	return (len == 1 || len == 2) && name[0] == '-' && name[len - 1] == '-';
}

/* The name's coordinates: v[0..2] from flamegraph.pl's --hash name vector (by_hash) or from a
 * 64-bit hash of every byte. */
static void name_coords(const char *name, size_t len, bool by_hash, double v[3])
{
	if (by_hash) {
		struct cps c = { 0 };

		v[0] = v[1] = v[2] = 0;
		if (cps_decode(&c, name, len))
			return;
		v[0] = name_vector(c.v, c.n, false);
		v[1] = v[2] = name_vector(c.v, c.n, true);
		cps_free(&c);
	} else {
		uint64_t h = hash_bytes(name, len);

		v[0] = (double)(h & 0x1FFFFF) / 0x200000;
		v[1] = (double)((h >> 21) & 0x1FFFFF) / 0x200000;
		v[2] = (double)((h >> 42) & 0x1FFFFF) / 0x200000;
	}
}

/* flamegraph.pl's formulas, and PALETTE_KIND's ramps: wider than the flat ones so that the
 * few colors of a 256-color terminal still tell neighbours apart. */
static struct rgb ramp_color(enum palette_ramp r, const double v[3])
{
	double v1 = v[0], v2 = v[1], v3 = v[2];

	switch (r) {
	case RAMP_HOT:
		return rgb(205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
	case RAMP_MEM:
		return rgb(0, 190 + (int)(50 * v2), (int)(210 * v1));
	case RAMP_IO:
		return rgb(80 + (int)(60 * v1), 80 + (int)(60 * v1), 190 + (int)(55 * v2));
	case RAMP_RED:
		return rgb(200 + (int)(55 * v1), 50 + (int)(80 * v1), 50 + (int)(80 * v1));
	case RAMP_GREEN:
		return rgb(50 + (int)(60 * v1), 200 + (int)(55 * v1), 50 + (int)(60 * v1));
	case RAMP_BLUE:
		return rgb(80 + (int)(60 * v1), 80 + (int)(60 * v1), 205 + (int)(50 * v1));
	case RAMP_YELLOW:
		return rgb(175 + (int)(55 * v1), 175 + (int)(55 * v1), 50 + (int)(20 * v1));
	case RAMP_PURPLE:
		return rgb(190 + (int)(65 * v1), 80 + (int)(60 * v1), 190 + (int)(65 * v1));
	case RAMP_AQUA:
		return rgb(50 + (int)(60 * v1), 165 + (int)(55 * v1), 165 + (int)(55 * v1));
	case RAMP_ORANGE:
		return rgb(190 + (int)(65 * v1), 90 + (int)(65 * v1), 0);
	case RAMP_USER:
		return rgb(240 + (int)(15 * v1), 130 + (int)(110 * v1), 30 + (int)(60 * v1));
	case RAMP_KERNEL:
		return rgb(180 + (int)(60 * v1), 30 + (int)(50 * v1), 30 + (int)(40 * v1));
	case RAMP_JIT:
		return rgb(60 + (int)(80 * v1), 180 + (int)(60 * v1), 60 + (int)(40 * v1));
	case RAMP_INLINED:
		return rgb(60 + (int)(60 * v1), 170 + (int)(60 * v1), 190 + (int)(50 * v1));
	case RAMP_PYTHON:
		return rgb(90 + (int)(70 * v1), 120 + (int)(70 * v1), 210 + (int)(45 * v1));
	case RAMP_IDENTITY:
		return rgb(170 + (int)(50 * v1), 130 + (int)(50 * v1), 200 + (int)(40 * v1));
	default:
		return rgb(0, 0, 0);
	}
}

bool palette_python(const char *name, size_t len)
{
	const char *py;
	size_t i;

	/* "qualname (file.py:123)": ".py:" then digits and the closing parenthesis. */
	if (len < 8 || name[len - 1] != ')')
		return false;
	for (i = len - 1; i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9'; i--)
		;
	if (i == len - 1 || i < 4)
		return false;
	py = name + i - 4;
	return !memcmp(py, ".py:", 4) && memmem(name, len, " (", 2) != NULL;
}

/* The ramp of a frame in PALETTE_KIND. */
static enum palette_ramp kind_ramp(unsigned kind, const char *name, size_t len)
{
	switch (kind) {
	case FRAME_KERNEL:
		return RAMP_KERNEL;
	case FRAME_JIT:
		return RAMP_JIT;
	case FRAME_INLINED:
		return RAMP_INLINED;
	case FRAME_POD:
	case FRAME_CONTAINER:
	case FRAME_PROCESS:
	case FRAME_THREAD:
	case FRAME_SPECIAL:
		return RAMP_IDENTITY;
	default:
		return palette_python(name, len) ? RAMP_PYTHON : RAMP_USER;
	}
}

static enum palette_ramp flat_ramp(enum palette pal)
{
	static const enum palette_ramp ramps[PALETTE_MAX] = {
		[PALETTE_HOT] = RAMP_HOT,	[PALETTE_MEM] = RAMP_MEM,
		[PALETTE_IO] = RAMP_IO,		[PALETTE_RED] = RAMP_RED,
		[PALETTE_GREEN] = RAMP_GREEN,	[PALETTE_BLUE] = RAMP_BLUE,
		[PALETTE_AQUA] = RAMP_AQUA,	[PALETTE_YELLOW] = RAMP_YELLOW,
		[PALETTE_PURPLE] = RAMP_PURPLE, [PALETTE_ORANGE] = RAMP_ORANGE,
	};

	return pal < PALETTE_MAX ? ramps[pal] : RAMP_HOT;
}

static int ramp_of(enum palette pal, unsigned kind, const char *name, size_t len)
{
	if (palette_separator(name, len))
		return -1;
	if (pal == PALETTE_KIND)
		return (int)kind_ramp(kind, name, len);
	return (int)flat_ramp(language(pal, name, len));
}

int palette_ramp_of(enum palette pal, unsigned kind, const char *name, size_t len, bool by_hash,
		    double *v)
{
	double c[3];
	int r = ramp_of(pal, kind, name, len);

	name_coords(name, len, by_hash, c);
	*v = c[0];
	return r;
}

struct rgb palette_ramp_color(enum palette_ramp r, double v)
{
	const double c[3] = { v, 0.5, 0.5 };

	return ramp_color(r, c);
}

struct rgb palette_frame_color(enum palette pal, unsigned kind, const char *name, size_t len,
			       bool by_hash)
{
	double v[3];
	int r = ramp_of(pal, kind, name, len);

	if (r < 0)
		return len == 1 ? rgb(200, 200, 200) : rgb(160, 160, 160);
	name_coords(name, len, by_hash, v);
	return ramp_color((enum palette_ramp)r, v);
}

struct rgb palette_color(enum palette pal, const char *name, size_t len, bool by_hash)
{
	return palette_frame_color(pal, FRAME_USER, name, len, by_hash);
}

struct rgb palette_delta(double delta, double maxdelta)
{
	double d = delta > maxdelta ? maxdelta : delta < -maxdelta ? -maxdelta : delta;
	int c;

	if (d > 0) {
		c = (int)(210 * (maxdelta - d) / maxdelta);
		return rgb(255, c, c);
	}
	if (d < 0) {
		c = (int)(210 * (maxdelta + d) / maxdelta);
		return rgb(c, c, 255);
	}
	return rgb(255, 255, 255);
}
