/* Keys: the tables that bind keys to actions (one per view plus a global one; the help
 * overlay and the key bar are generated from them), key names, and the key scripts that
 * drive the dump mode. */
#ifndef GALATOP_TUI_KEYS_H
#define GALATOP_TUI_KEYS_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#define TUI_CTRL(c) ((c) & 0x1f)
#define TUI_KEY_ESC 27
#define TUI_KEY_ENTER '\n'
/* Not a key: a key script's <Tick> lets the source update, as a timeout does live. */
#define TUI_KEY_TICK (KEY_MAX + 1)

struct tui_key {
	int keys[4];	   /* key codes (chars or KEY_*), 0-terminated */
	int action;	   /* what the owner of the table does */
	const char *help;  /* one line for the help overlay */
	const char *bar;   /* short label for the bottom key bar, NULL = not shown there */
};

/* Returns the entry of table[0..n) bound to key, or NULL. */
const struct tui_key *tui_key_find(const struct tui_key *table, size_t n, int key);
/* Writes a key's name ("q", "Enter", "F1", "C-l", "Up", "Space") into buf. */
void tui_key_name(int key, char *buf, size_t n);
/* Writes all key names of an entry separated by spaces ("Up k"). */
void tui_key_label(const struct tui_key *k, char *buf, size_t n);

/* One step of a key script: a key, a mouse event at (x, y), or a resize to w x h. */
struct tui_input {
	int key;		/* key code; KEY_MOUSE or KEY_RESIZE for the others */
	unsigned long bstate;	/* mouse button state (BUTTON1_CLICKED, ...) */
	int x, y;		/* mouse cell */
	int w, h;		/* new size for KEY_RESIZE */
};

/* Parses a key script: plain characters are keys; escapes \n \t \e \\ and names in angle
 * brackets: <Enter> <Esc> <Tab> <BS> <Space> <Up> <Down> <Left> <Right> <PgUp> <PgDn>
 * <Home> <End> <F1>..<F12> <C-x> <lt> <Click:X,Y> <DClick:X,Y> <WheelUp:X,Y>
 * <WheelDown:X,Y> <Resize:WxH> <Tick>. A '<' that starts no name is itself. Returns the number of
 * inputs and sets *out (caller frees), or -EINVAL with the offending part in err. */
long tui_keys_parse(const char *script, struct tui_input **out, char *err, size_t errlen);

#endif
