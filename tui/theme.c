#include "theme.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "export/palette.h"
#include "util/file.h"

#define THEME_MAX_BYTES (1u << 20) /* a theme is a few dozen lines */

#ifndef GALATOP_PREFIX
#define GALATOP_PREFIX "/usr/local"
#endif

static const char *const role_names[ROLE_MAX] = {
	[ROLE_NORMAL] = "normal",
	[ROLE_FRAME_USER] = "frame_user",
	[ROLE_FRAME_KERNEL] = "frame_kernel",
	[ROLE_FRAME_JIT] = "frame_jit",
	[ROLE_FRAME_INLINED] = "frame_inlined",
	[ROLE_FRAME_POD] = "frame_pod",
	[ROLE_FRAME_CONTAINER] = "frame_container",
	[ROLE_FRAME_PROCESS] = "frame_process",
	[ROLE_FRAME_THREAD] = "frame_thread",
	[ROLE_FRAME_SPECIAL] = "frame_special",
	[ROLE_HASH0] = "hash0",
	[ROLE_HASH1] = "hash1",
	[ROLE_HASH2] = "hash2",
	[ROLE_HASH3] = "hash3",
	[ROLE_HASH4] = "hash4",
	[ROLE_HASH5] = "hash5",
	[ROLE_SELECTION] = "selection",
	[ROLE_MATCH] = "match",
	[ROLE_HEADER] = "header",
	[ROLE_TAB_ACTIVE] = "tab_active",
	[ROLE_STATUS] = "status",
	[ROLE_STATUS_ALERT] = "status_alert",
	[ROLE_DETAIL] = "detail",
	[ROLE_KEYBAR] = "keybar",
	[ROLE_KEYBAR_KEY] = "keybar_key",
	[ROLE_PROMPT] = "prompt",
	[ROLE_ERROR] = "error",
	[ROLE_HELP] = "help",
	[ROLE_HELP_KEY] = "help_key",
	[ROLE_TABLE_HEADER] = "table_header",
	[ROLE_DIM] = "dim",
	[ROLE_DIFF_GROW] = "diff_grow",
	[ROLE_DIFF_GROW_SMALL] = "diff_grow_small",
	[ROLE_DIFF_SHRINK] = "diff_shrink",
	[ROLE_DIFF_SHRINK_SMALL] = "diff_shrink_small",
	[ROLE_DIFF_SAME] = "diff_same",
	[ROLE_FRAME_PYTHON] = "frame_python",
	[ROLE_HEAT1] = "heat1",
	[ROLE_HEAT2] = "heat2",
	[ROLE_HEAT3] = "heat3",
	[ROLE_HEAT4] = "heat4",
	[ROLE_HEAT5] = "heat5",
	[ROLE_HEAT6] = "heat6",
	[ROLE_HEAT7] = "heat7",
	[ROLE_HEAT8] = "heat8",
};

/* --dump-roles letters: frames lowercase, chrome uppercase. */
static const char role_letters[] = ".ukjipcets012345SMHTZAXKYPEWQLDRrBbnyadfghlmo";
_Static_assert(sizeof(role_letters) == ROLE_MAX + 1, "one letter per role");

/* The default theme, identical to themes/default.theme (a test checks): 8 basic colors only. */
static const char builtin_default[] =
	"# default: 8 basic colors, readable on dark and light terminals\n"
	"normal          default default\n"
	"frame_user      black   yellow\n"
	"frame_kernel    white   red\n"
	"frame_jit       black   green\n"
	"frame_inlined   black   cyan\n"
	"frame_pod       white   blue    bold\n"
	"frame_container white   blue\n"
	"frame_process   black   white\n"
	"frame_thread    black   white\n"
	"frame_special   white   black\n"
	"hash0           black   yellow\n"
	"hash1           white   red\n"
	"hash2           black   green\n"
	"hash3           black   cyan\n"
	"hash4           white   magenta\n"
	"hash5           black   white\n"
	"selection       yellow  black   bold\n"
	"match           white   magenta bold\n"
	"header          black   cyan\n"
	"tab_active      white   blue    bold\n"
	"status          default default\n"
	"status_alert    white   red     bold\n"
	"detail          default default\n"
	"keybar          black   cyan\n"
	"keybar_key      default default bold\n"
	"prompt          default default bold\n"
	"error           red     default bold\n"
	"help            default default\n"
	"help_key        yellow  default bold\n"
	"table_header    black   green\n"
	"dim             default default dim\n"
	"diff_grow       white   red     bold\n"
	"diff_grow_small black   red\n"
	"diff_shrink     white   blue    bold\n"
	"diff_shrink_small white blue\n"
	"diff_same       black   white\n"
	"frame_python    cyan    blue\n"
	"# the heatmap, FlameScope's ramp (glyph shades on fewer than 256 colors)\n"
	"heat1           black   #fffbe6\n"
	"heat2           black   #fff3b0\n"
	"heat3           black   #ffe866\n"
	"heat4           black   #ffd21f\n"
	"heat5           black   #ffab1f\n"
	"heat6           black   #ff7f1a\n"
	"heat7           white   #f04a14\n"
	"heat8           white   #cc1010\n"
	"# frames vary in hue per name on 256 colors or more\n"
	"hues            on\n";

/* The mono theme: attributes only; also what --no-color and NO_COLOR use. */
static const char builtin_mono[] =
	"# mono: no colors, attributes only\n"
	"frame_user      default default reverse\n"
	"frame_kernel    default default reverse\n"
	"frame_jit       default default reverse\n"
	"frame_inlined   default default reverse\n"
	"frame_pod       default default reverse bold\n"
	"frame_container default default reverse bold\n"
	"frame_process   default default reverse bold\n"
	"frame_thread    default default reverse bold\n"
	"frame_special   default default reverse dim\n"
	"hash0           default default reverse\n"
	"hash1           default default reverse\n"
	"hash2           default default reverse\n"
	"hash3           default default reverse\n"
	"hash4           default default reverse\n"
	"hash5           default default reverse\n"
	"selection       default default bold\n"
	"match           default default reverse underline bold\n"
	"header          default default reverse\n"
	"tab_active      default default bold\n"
	"status          default default\n"
	"status_alert    default default reverse bold\n"
	"detail          default default\n"
	"keybar          default default reverse\n"
	"keybar_key      default default bold\n"
	"prompt          default default bold\n"
	"error           default default bold\n"
	"help            default default\n"
	"help_key        default default bold\n"
	"table_header    default default reverse\n"
	"dim             default default dim\n"
	"diff_grow       default default reverse bold\n"
	"diff_grow_small default default reverse\n"
	"diff_shrink     default default underline bold\n"
	"diff_shrink_small default default underline\n"
	"diff_same       default default\n"
	"frame_python    default default reverse\n"
	"heat1           default default\n"
	"heat2           default default\n"
	"heat3           default default\n"
	"heat4           default default\n"
	"heat5           default default\n"
	"heat6           default default\n"
	"heat7           default default\n"
	"heat8           default default\n"
	"hues            off\n";

static const struct {
	const char *name, *text;
} builtins[] = { { "default", builtin_default }, { "mono", builtin_mono } };

const char *tui_role_name(enum tui_role r)
{
	return (unsigned)r < ROLE_MAX ? role_names[r] : "?";
}

enum tui_role tui_delta_role(double delta, double maxdelta)
{
	bool strong = maxdelta > 0 && (delta > 0 ? delta : -delta) * 3 > maxdelta;

	if (delta > 0)
		return strong ? ROLE_DIFF_GROW : ROLE_DIFF_GROW_SMALL;
	if (delta < 0)
		return strong ? ROLE_DIFF_SHRINK : ROLE_DIFF_SHRINK_SMALL;
	return ROLE_DIFF_SAME;
}

char tui_role_letter(enum tui_role r)
{
	return (unsigned)r < ROLE_MAX ? role_letters[r] : '?';
}

static const char *const color_names[8] = { "black", "red",	"green", "yellow",
					    "blue",  "magenta", "cyan",	 "white" };

static int parse_color(const char *s, int *out)
{
	char *end;
	long v;

	if (!strcasecmp(s, "default")) {
		*out = COLOR_DEFAULT;
		return 0;
	}
	if (s[0] == '#') {
		if (strlen(s) != 7 || strspn(s + 1, "0123456789abcdefABCDEF") != 6)
			return -1;
		*out = COLOR_RGB_FLAG | (int)strtol(s + 1, NULL, 16);
		return 0;
	}
	if (s[0] >= '0' && s[0] <= '9') {
		errno = 0;
		v = strtol(s, &end, 10);
		if (*end || errno || v > 255)
			return -1;
		*out = (int)v;
		return 0;
	}
	int bright = 0;

	if (!strncasecmp(s, "bright-", 7)) {
		s += 7;
		bright = 8;
	} else if (!strncasecmp(s, "bright", 6)) {
		s += 6;
		bright = 8;
	}
	for (int i = 0; i < 8; i++)
		if (!strcasecmp(s, color_names[i])) {
			*out = i + bright;
			return 0;
		}
	return -1;
}

static int parse_attr(const char *s, attr_t *a)
{
	static const struct {
		const char *name;
		attr_t attr;
	} attrs[] = { { "bold", A_BOLD },	    { "dim", A_DIM },	  { "underline", A_UNDERLINE },
		      { "reverse", A_REVERSE },	    { "standout", A_STANDOUT },
		      { "italic", A_ITALIC },	    { "normal", A_NORMAL } };

	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (!strcasecmp(s, attrs[i].name)) {
			*a |= attrs[i].attr;
			return 0;
		}
	return -1;
}

static int parse_into(const char *text, const char *file, struct tui_theme *t, char *err,
		      size_t errlen)
{
	const char *p = text;
	unsigned lineno = 0;

	while (*p) {
		char line[512], *tok[8], *save = NULL;
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		int ntok = 0, role = -1;
		struct tui_style st = { COLOR_DEFAULT, COLOR_DEFAULT, A_NORMAL };

		lineno++;
		if (n >= sizeof(line)) {
			snprintf(err, errlen, "%s:%u: line too long", file, lineno);
			return -EINVAL;
		}
		memcpy(line, p, n);
		line[n] = 0;
		p += n + (nl ? 1 : 0);
		/* '#' at the start of a word begins a comment, unless it is a #rrggbb color. */
		for (char *h = line; (h = strchr(h, '#')); h++) {
			bool word = h == line || h[-1] == ' ' || h[-1] == '\t';
			bool rgb = strspn(h + 1, "0123456789abcdefABCDEF") == 6 &&
				   (!h[7] || h[7] == ' ' || h[7] == '\t' || h[7] == '\r');

			if (word && !rgb) {
				*h = 0;
				break;
			}
		}
		for (char *w = strtok_r(line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
			if (ntok == 8) {
				snprintf(err, errlen, "%s:%u: too many words", file, lineno);
				return -EINVAL;
			}
			tok[ntok++] = w;
		}
		if (!ntok)
			continue;
		if (!strcmp(tok[0], "hues")) {
			if (ntok != 2 || (strcmp(tok[1], "on") && strcmp(tok[1], "off"))) {
				snprintf(err, errlen, "%s:%u: hues takes on or off", file, lineno);
				return -EINVAL;
			}
			t->hues = !strcmp(tok[1], "on");
			continue;
		}
		for (int r = 0; r < ROLE_MAX; r++)
			if (!strcmp(tok[0], role_names[r]))
				role = r;
		if (role < 0) {
			snprintf(err, errlen, "%s:%u: unknown role '%.40s'", file, lineno, tok[0]);
			return -EINVAL;
		}
		if (ntok < 2) {
			snprintf(err, errlen, "%s:%u: %s needs a color", file, lineno, tok[0]);
			return -EINVAL;
		}
		int i = 1;

		if (parse_color(tok[i], &st.fg) == 0) {
			i++;
			if (i < ntok && parse_color(tok[i], &st.bg) == 0)
				i++;
		}
		for (; i < ntok; i++)
			if (parse_attr(tok[i], &st.attr)) {
				snprintf(err, errlen,
					 "%s:%u: bad color or attribute '%.40s' (want a color name, "
					 "0-255, #rrggbb, or bold/dim/underline/reverse)",
					 file, lineno, tok[i]);
				return -EINVAL;
			}
		t->style[role] = st;
	}
	return 0;
}

int tui_theme_parse(const char *text, const char *file, struct tui_theme *t, char *err,
		    size_t errlen)
{
	char e[8];

	/* Roles a theme leaves out look as in the default theme. */
	memset(t, 0, sizeof(*t));
	for (int r = 0; r < ROLE_MAX; r++)
		t->style[r] = (struct tui_style){ COLOR_DEFAULT, COLOR_DEFAULT, A_NORMAL };
	parse_into(builtin_default, "builtin", t, e, sizeof(e));
	return parse_into(text, file, t, err, errlen);
}

/* Directories searched for NAME.theme, in order; returns how many were filled. */
static size_t theme_dirs(char dirs[][PATH_MAX], size_t max)
{
	const char *env = getenv("GALATOP_THEMES");
	char exe[PATH_MAX];
	size_t n = 0;
	ssize_t len;

	if (env && *env) {
		const char *p = env;

		while (*p && n < max) {
			size_t k = strcspn(p, ":");

			if (k && k < PATH_MAX)
				snprintf(dirs[n++], PATH_MAX, "%.*s", (int)k, p);
			p += k + (p[k] == ':');
		}
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0 && n < max) {
		exe[len] = 0;
		char *slash = strrchr(exe, '/');

		if (slash) {
			*slash = 0;
			snprintf(dirs[n++], PATH_MAX, "%.*s/themes", PATH_MAX - 8, exe);
		}
	}
	if (n < max)
		snprintf(dirs[n++], PATH_MAX, "%s/share/galatop/themes", GALATOP_PREFIX);
	return n;
}

static int load_path(const char *path, const char *name, struct tui_theme *t, char *err,
		     size_t errlen)
{
	char *text;
	size_t len;
	int r = file_read(path, THEME_MAX_BYTES, 0, &text, &len);

	if (r) {
		snprintf(err, errlen, "%s: %s", path, file_strerror(r, THEME_MAX_BYTES));
		return -ENOENT;
	}
	r = tui_theme_parse(text, path, t, err, errlen);
	free(text);
	if (!r)
		snprintf(t->name, sizeof(t->name), "%s", name);
	return r;
}

int tui_theme_load(const char *name, struct tui_theme *t, char *err, size_t errlen)
{
	char dirs[4][PATH_MAX], path[PATH_MAX + 80];
	size_t n;

	if (strchr(name, '/')) {
		const char *base = strrchr(name, '/') + 1;
		char nm[64];

		snprintf(nm, sizeof(nm), "%.*s", (int)strcspn(base, "."), base);
		return load_path(name, nm, t, err, errlen);
	}
	if (!*name || strlen(name) > 60 || strspn(name, "abcdefghijklmnopqrstuvwxyz"
						 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
						 strlen(name)) {
		snprintf(err, errlen, "bad theme name '%.60s'", name);
		return -EINVAL;
	}
	n = theme_dirs(dirs, 4);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s.theme", dirs[i], name);
		if (access(path, R_OK) == 0)
			return load_path(path, name, t, err, errlen);
	}
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (!strcmp(name, builtins[i].name)) {
			int r = tui_theme_parse(builtins[i].text, "builtin", t, err, errlen);

			snprintf(t->name, sizeof(t->name), "%s", name);
			return r;
		}
	snprintf(err, errlen, "unknown theme '%s' (not built in, no %s.theme in the theme directories)",
		 name, name);
	return -ENOENT;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t tui_theme_list(char **names, size_t max)
{
	char dirs[4][PATH_MAX];
	size_t n = 0, nd = theme_dirs(dirs, 4), nb = sizeof(builtins) / sizeof(builtins[0]);

	/* Out of memory drops names from the list rather than storing NULLs. */
	for (size_t i = 0; i < nb && n < max; i++)
		if ((names[n] = strdup(builtins[i].name)))
			n++;
	for (size_t i = 0; i < nd; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;

		while (d && (e = readdir(d)) && n < max) {
			size_t len = strlen(e->d_name);
			bool dup = false;

			if (len <= 6 || len > 66 || strcmp(e->d_name + len - 6, ".theme"))
				continue;
			e->d_name[len - 6] = 0;
			for (size_t k = 0; k < n; k++)
				dup |= names[k] && !strcmp(names[k], e->d_name);
			if (!dup && (names[n] = strdup(e->d_name)))
				n++;
		}
		if (d)
			closedir(d);
	}
	if (n > nb)
		qsort(names + nb, n - nb, sizeof(*names), cmp_str);
	return n;
}

enum tui_depth tui_color_depth(bool no_color)
{
	const char *nc = getenv("NO_COLOR");

	if (no_color || (nc && *nc) || !has_colors())
		return DEPTH_NONE;
	if (COLORS >= 0x1000000)
		return DEPTH_DIRECT;
	if (COLORS >= 256)
		return DEPTH_256;
	if (COLORS >= 16)
		return DEPTH_16;
	if (COLORS >= 8)
		return DEPTH_8;
	return DEPTH_NONE;
}

const char *tui_depth_str(enum tui_depth d)
{
	static const char *const s[] = { "no colors", "8 colors", "16 colors", "256 colors",
					  "truecolor" };

	return s[d];
}

/* RGB of xterm color index i (0..255). */
static int xterm_rgb(int i)
{
	static const int base[16] = { 0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd,
				      0x00cdcd, 0xe5e5e5, 0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00,
				      0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff };
	static const int lvl[6] = { 0, 95, 135, 175, 215, 255 };

	if (i < 16)
		return base[i];
	if (i < 232) {
		i -= 16;
		return lvl[i / 36] << 16 | lvl[i / 6 % 6] << 8 | lvl[i % 6];
	}
	int g = 8 + (i - 232) * 10;

	return g << 16 | g << 8 | g;
}

static long dist(int a, int b)
{
	long dr = (a >> 16 & 255) - (b >> 16 & 255), dg = (a >> 8 & 255) - (b >> 8 & 255),
	     db = (a & 255) - (b & 255);

	return dr * dr * 3 + dg * dg * 4 + db * db * 2;
}

/* Nearest color index below limit for rgb; on 256 colors among the fixed cube and greys only
 * (16..255), as terminals' color schemes remap the first 16. */
static int nearest(int rgb, int limit)
{
	int best = 0;
	long bd = -1;

	for (int i = limit == 256 ? 16 : 0; i < limit; i++) {
		long d = dist(rgb, xterm_rgb(i));

		if (bd < 0 || d < bd) {
			bd = d;
			best = i;
		}
	}
	return best;
}

/* Degrades color c to depth d; sets *bold when a bright color became a basic one. */
static int degrade(int c, enum tui_depth d, bool *bold)
{
	int limit = d == DEPTH_8 ? 8 : d == DEPTH_16 ? 16 : 256;

	if (c == COLOR_DEFAULT)
		return c;
	if (d == DEPTH_DIRECT)
		return c & COLOR_RGB_FLAG ? c & 0xffffff : xterm_rgb(c);
	if (c & COLOR_RGB_FLAG)
		c = nearest(c & 0xffffff, limit);
	if (c >= limit) {
		if (limit == 8 && c >= 8 && c < 16)
			c -= 8;
		else
			c = nearest(xterm_rgb(c), limit);
	}
	if (limit == 8 && c >= 8) {
		*bold = true;
		c -= 8;
	}
	return c;
}

static attr_t role_attrs[ROLE_MAX];
static bool colors_on;
static bool hue_pairs;		/* the pairs of tui_frame_on exist */
static bool role_bg[ROLE_MAX];	/* tui_role_colored */

/* Pair numbers: one per role, then TUI_HUES per palette ramp for each frame family (so that
 * a pair names its role in the dump). */
#define FAMILIES (ROLE_FRAME_SPECIAL - ROLE_FRAME_USER + 2) /* and ROLE_FRAME_PYTHON */
#define HUE_PAIR(fam, ramp, k) (ROLE_MAX + 1 + ((fam) * RAMP_MAX + (ramp)) * TUI_HUES + (k))
#define HUE_PAIRS (FAMILIES * RAMP_MAX * TUI_HUES)

/* The family of frame role r, or -1. */
static int family(enum tui_role r)
{
	if (r >= ROLE_FRAME_USER && r <= ROLE_FRAME_SPECIAL)
		return (int)(r - ROLE_FRAME_USER);
	return r == ROLE_FRAME_PYTHON ? FAMILIES - 1 : -1;
}

static enum tui_role family_role(int fam)
{
	return fam == FAMILIES - 1 ? ROLE_FRAME_PYTHON : (enum tui_role)(ROLE_FRAME_USER + fam);
}

void tui_theme_apply(const struct tui_theme *t, enum tui_depth d)
{
	colors_on = has_colors();
	for (int r = 0; r < ROLE_MAX; r++) {
		const struct tui_style *s = &t->style[r];
		bool bold = false;

		role_attrs[r] = s->attr;
		if (!colors_on)
			continue;
		if (d == DEPTH_NONE) {
			init_extended_pair(r + 1, COLOR_DEFAULT, COLOR_DEFAULT);
			continue;
		}
		int fg = degrade(s->fg, d, &bold), bg = degrade(s->bg, d, &bold);

		if (bold && s->fg != COLOR_DEFAULT)
			role_attrs[r] |= A_BOLD;
		init_extended_pair(r + 1, fg, bg);
		role_bg[r] = d >= DEPTH_256 && s->bg != COLOR_DEFAULT;
	}
	/* Each ramp's hues at the middle of TUI_HUES equal slices, black text on them. */
	hue_pairs = colors_on && t->hues && d >= DEPTH_256 && COLOR_PAIRS > ROLE_MAX + HUE_PAIRS;
	for (int ramp = 0; hue_pairs && ramp < RAMP_MAX; ramp++)
		for (int k = 0; k < TUI_HUES; k++) {
			struct rgb c = palette_ramp_color((enum palette_ramp)ramp,
							  (k + 0.5) / TUI_HUES);
			bool bold = false;
			int bg = degrade(COLOR_RGB(c.r, c.g, c.b), d, &bold);

			for (int fam = 0; fam < FAMILIES; fam++)
				init_extended_pair(HUE_PAIR(fam, ramp, k), degrade(0, d, &bold), bg);
		}
}

void tui_frame_on(WINDOW *w, enum tui_role r, int ramp, double v)
{
	int k = (int)(v * TUI_HUES), fam = family(r);

	if (!hue_pairs || ramp < 0 || ramp >= RAMP_MAX || fam < 0) {
		tui_role_on(w, r);
		return;
	}
	k = k < 0 ? 0 : k >= TUI_HUES ? TUI_HUES - 1 : k;
	/* Attributes other than the colors' (bold, reverse) stay the role's. */
	wattr_set(w, role_attrs[r], 0, &(int){ HUE_PAIR(fam, ramp, k) });
}

bool tui_hues_on(void)
{
	return hue_pairs;
}

bool tui_role_colored(enum tui_role r)
{
	return colors_on && (unsigned)r < ROLE_MAX && role_bg[r];
}

void tui_role_on(WINDOW *w, enum tui_role r)
{
	if ((unsigned)r >= ROLE_MAX)
		r = ROLE_NORMAL;
	wattr_set(w, role_attrs[r], colors_on ? (short)(r + 1) : 0, NULL);
}

attr_t tui_role_attr(enum tui_role r)
{
	return (unsigned)r < ROLE_MAX ? role_attrs[r] : A_NORMAL;
}

enum tui_role tui_role_of_pair(int pair)
{
	if (pair > ROLE_MAX && pair <= ROLE_MAX + HUE_PAIRS)
		return family_role((pair - ROLE_MAX - 1) / (RAMP_MAX * TUI_HUES));
	return pair >= 1 && pair <= ROLE_MAX ? (enum tui_role)(pair - 1) : ROLE_NORMAL;
}
