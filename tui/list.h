/* A scrolling list with a cursor, shared by the table panes (Top, Threads, L7, Containers):
 * the same keys (Up/Down/PgUp/PgDn/Home/End), wheel and click everywhere, and a cursor that
 * always stays on a row of the list and inside the rows shown. */
#ifndef GALATOP_TUI_LIST_H
#define GALATOP_TUI_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "keys.h"

/* The moves every list takes; a pane's own actions are numbered from LIST_ACTIONS on. */
enum list_move { LIST_UP = 1, LIST_DOWN, LIST_PGUP, LIST_PGDN, LIST_HOME, LIST_END,
		 LIST_ACTIONS };

/* The key table entries of the moves, to open a pane's table with. */
#define TUI_LIST_KEYS                                                       \
	{ { KEY_UP, 'k' }, LIST_UP, "previous row", NULL },                 \
	{ { KEY_DOWN, 'j' }, LIST_DOWN, "next row", NULL },                 \
	{ { KEY_PPAGE }, LIST_PGUP, "page up", NULL },                      \
	{ { KEY_NPAGE }, LIST_PGDN, "page down", NULL },                    \
	{ { KEY_HOME }, LIST_HOME, "first row", NULL },                     \
	{ { KEY_END }, LIST_END, "last row", NULL }

struct tui_list {
	size_t sel; /* the cursor's row */
	int scroll; /* the first row shown */
	int page;   /* rows shown, as the last draw set them (at least 1) */
};

/* Sets the rows shown (page) for a list of n rows, puts the cursor back on a row and scrolls
 * so that it is shown; the pane's draw calls it before drawing rows [scroll, scroll + page). */
void tui_list_show(struct tui_list *l, size_t n, int page);
/* Runs move m (enum list_move) on a list of n rows; false when m is not a move. */
bool tui_list_move(struct tui_list *l, size_t n, int m);
/* Cursor and view back to the first row (after the order changed). */
void tui_list_top(struct tui_list *l);
/* A mouse event on a list of n rows whose first row is at screen row y0: the wheel scrolls
 * three rows, taking the cursor along when it would leave the view; a click moves the cursor.
 * The row clicked, or -1 (the wheel, or no row there). */
long tui_list_mouse(struct tui_list *l, size_t n, const struct tui_input *in, int y0);

#endif
