/* Color themes: every color the TUI shows is a role; a theme maps roles to colors and
 * attributes, degraded to what the terminal has (direct color, 256, 16, 8, or none). */
#ifndef GALATOP_TUI_THEME_H
#define GALATOP_TUI_THEME_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include "../model/frames.h"

enum tui_role {
	ROLE_NORMAL = 0,
	ROLE_FRAME_USER, /* the FRAME_* roles follow enum frame_kind's order */
	ROLE_FRAME_KERNEL,
	ROLE_FRAME_JIT,
	ROLE_FRAME_INLINED,
	ROLE_FRAME_POD,
	ROLE_FRAME_CONTAINER,
	ROLE_FRAME_PROCESS,
	ROLE_FRAME_THREAD,
	ROLE_FRAME_SPECIAL,
	ROLE_HASH0, /* colors for "color by name hash", ROLE_HASH_N of them */
	ROLE_HASH1,
	ROLE_HASH2,
	ROLE_HASH3,
	ROLE_HASH4,
	ROLE_HASH5,
	ROLE_SELECTION,
	ROLE_MATCH,
	ROLE_HEADER,
	ROLE_TAB_ACTIVE,
	ROLE_STATUS,
	ROLE_STATUS_ALERT,
	ROLE_DETAIL,
	ROLE_KEYBAR,
	ROLE_KEYBAR_KEY,
	ROLE_PROMPT,
	ROLE_ERROR,
	ROLE_HELP,
	ROLE_HELP_KEY,
	ROLE_TABLE_HEADER,
	ROLE_DIM,
	ROLE_DIFF_GROW,	       /* differential frames: grew a lot, a little, shrank, unchanged */
	ROLE_DIFF_GROW_SMALL,
	ROLE_DIFF_SHRINK,
	ROLE_DIFF_SHRINK_SMALL,
	ROLE_DIFF_SAME,
	ROLE_FRAME_PYTHON,     /* Python functions ("qualname (file.py:line)") */
	ROLE_HEAT1,	       /* heatmap cells, the least busy first: FlameScope's white to red */
	ROLE_HEAT2,
	ROLE_HEAT3,
	ROLE_HEAT4,
	ROLE_HEAT5,
	ROLE_HEAT6,
	ROLE_HEAT7,
	ROLE_HEAT8,
	ROLE_MAX
};
#define ROLE_HASH_N 6
#define ROLE_HEAT_N 8
/* Hue variants per palette ramp (tui_frame_on). */
#define TUI_HUES 8

/* Color depth the terminal offers, best first. */
enum tui_depth { DEPTH_NONE = 0, DEPTH_8, DEPTH_16, DEPTH_256, DEPTH_DIRECT };

/* One role's look; colors are COLOR_DEFAULT, 0..255, or COLOR_RGB(r,g,b). */
#define COLOR_DEFAULT (-1)
#define COLOR_RGB_FLAG 0x1000000
#define COLOR_RGB(r, g, b) (COLOR_RGB_FLAG | (r) << 16 | (g) << 8 | (b))
struct tui_style {
	int fg, bg;
	attr_t attr;
};

struct tui_theme {
	char name[64];
	struct tui_style style[ROLE_MAX];
	bool hues; /* "hues on" (the default): frames vary in hue per name on 256 colors or more */
};

/* Role used for frames of kind k. */
static inline enum tui_role role_of_kind(unsigned k)
{
	return k < FRAME_KIND_MAX ? (enum tui_role)(ROLE_FRAME_USER + k) : ROLE_FRAME_USER;
}

/* The role of a frame of a differential profile by the change of its own value: growth
 * (red) or shrink (blue), the strong kind past a third of the largest change maxdelta;
 * unchanged when delta is 0. */
enum tui_role tui_delta_role(double delta, double maxdelta);

/* Name of a role in theme files ("frame_user", "selection", ...). */
const char *tui_role_name(enum tui_role r);
/* One letter per role for --dump-roles ('.' for ROLE_NORMAL). */
char tui_role_letter(enum tui_role r);

/* Loads theme name: a built-in one ("default", "mono"), a file name.theme in the theme
 * directories, or a path containing '/'. On error writes "FILE:LINE: reason" (or "unknown
 * theme NAME") into err and returns -EINVAL/-ENOENT. Roles a file omits keep the default. */
int tui_theme_load(const char *name, struct tui_theme *t, char *err, size_t errlen);
/* Parses a theme from text (for tests); file labels errors. */
int tui_theme_parse(const char *text, const char *file, struct tui_theme *t, char *err,
		    size_t errlen);
/* Fills names (capacity max) with the themes available, built-ins first, sorted, without
 * duplicates; returns how many. Caller frees each name. */
size_t tui_theme_list(char **names, size_t max);

/* Detects the terminal's color depth after start_color (honours NO_COLOR via no_color). */
enum tui_depth tui_color_depth(bool no_color);
const char *tui_depth_str(enum tui_depth d);
/* Sets up color pairs (one per role) for t at depth d; without colors roles become
 * attributes. Call again to switch themes. */
void tui_theme_apply(const struct tui_theme *t, enum tui_depth d);
/* Turns role r on for w (color pair and attributes). */
void tui_role_on(WINDOW *w, enum tui_role r);
/* Turns on the look of a frame in role r (a FRAME_* role) with the color of point v (0..1) of
 * palette ramp (enum palette_ramp): one of TUI_HUES pairs made for each ramp when the theme has
 * hues on and the terminal 256 colors or more (the role's attributes kept); else role r. */
void tui_frame_on(WINDOW *w, enum tui_role r, int ramp, double v);
/* Whether tui_frame_on varies hues (the theme's hues on, 256 colors or more). */
bool tui_hues_on(void);
/* Whether role r shows a background color of its own at the current depth (256 colors or
 * more): the heatmap then draws its ramp in colors rather than glyph shades. */
bool tui_role_colored(enum tui_role r);
/* Attributes for role r as they would be set by tui_role_on (for bkgd-style fills). */
attr_t tui_role_attr(enum tui_role r);
/* Maps a color pair number back to its role (for the screen dump); ROLE_NORMAL if none. */
enum tui_role tui_role_of_pair(int pair);

#endif
