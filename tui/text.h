/* Terminal-safe text: every string the TUI prints goes through here, so control bytes and
 * invalid UTF-8 never reach the terminal whatever the model or a prompt holds. */
#ifndef GALATOP_TUI_TEXT_H
#define GALATOP_TUI_TEXT_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/profile.h"

/* Glyphs that differ between UTF-8 and ASCII terminals. */
struct tui_glyphs {
	const char *hline, *vline, *tl, *tr, *bl, *br; /* help box border */
	const char *sort_down;			       /* sort column marker */
	const char *bad;			       /* replaces unprintable input */
};

/* Picks UTF-8 or ASCII glyphs (ascii forces ASCII); call after setlocale. */
void tui_text_init(bool ascii);
/* True when the terminal takes UTF-8 (locale codeset UTF-8 and no --ascii). */
bool tui_text_utf8(void);
const struct tui_glyphs *tui_glyphs(void);

/* Display width in columns of s[0..len) as tui_put would draw it. */
int tui_width(const char *s, size_t len);
/* Draws s[0..len) at the cursor of w in at most cols columns, replacing control characters,
 * invalid UTF-8 (and, on ASCII terminals, anything non-ASCII) by a safe glyph. Returns the
 * columns used. */
int tui_put(WINDOW *w, const char *s, size_t len, int cols);
/* As tui_put, but a string wider than cols is cut and ends in "..". */
int tui_put_fit(WINDOW *w, const char *s, size_t len, int cols);
/* Draws n spaces at the cursor. */
void tui_pad(WINDOW *w, int n);
/* printf into a line of at most cols columns at the cursor (output goes through tui_put). */
int tui_printf(WINDOW *w, int cols, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Formats a wall-clock UNIX time as local "HH:MM:SS" into buf; "?" when unknown (<= 0). */
void tui_fmt_clock(double unix_s, char *buf, size_t n);
/* Formats value v of kind k for humans ("1234", "12.5 ms", "3.0 MiB") into buf. */
void tui_fmt_value(enum value_kind k, double v, char *buf, size_t n);
/* Percent of v in total, 0 when total is 0. */
static inline double tui_pct(double v, double total)
{
	return total > 0 ? 100.0 * v / total : 0;
}

#endif
