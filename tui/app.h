/* Internal to tui/: the application state the views share, the view interface, and the
 * services views call (messages, prompts, switching views). */
#ifndef GALATOP_TUI_APP_H
#define GALATOP_TUI_APP_H

#include <curses.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include "export/palette.h"
#include "model/filter.h"
#include "keys.h"
#include "source.h"
#include "theme.h"
#include "tui.h"

struct tui_app;

/* A pane the app can show. Later panes (thread timeline, L7 tables, SLI) implement the same
 * ops and are added to the app's view list. */
struct view {
	const char *name;	    /* tab label */
	int key;		    /* the global key that shows it ('5'); 0: its position */
	const struct tui_key *keys; /* this view's key table (feeds help and the key bar) */
	size_t nkeys;
	void *state;
	/* Draws the view into rows [top, top+rows) of w, the whole width. */
	void (*draw)(struct view *v, struct tui_app *a, WINDOW *w, int top, int rows);
	/* Runs one of this view's actions; returns true when something changed. */
	bool (*action)(struct view *v, struct tui_app *a, int action);
	/* A mouse event at screen cell (in->x, in->y), inside the view's rows. */
	void (*mouse)(struct view *v, struct tui_app *a, const struct tui_input *in);
	/* Draws the detail line (the selection) at row y of w. */
	void (*detail)(struct view *v, struct tui_app *a, WINDOW *w, int y);
	/* The display profile changed (new data, filter, profile type). */
	void (*changed)(struct view *v, struct tui_app *a);
	void (*free)(struct view *v);
};

enum prompt_kind { PROMPT_NONE = 0, PROMPT_SEARCH, PROMPT_PID, PROMPT_CONTAINER, PROMPT_COMM,
		   PROMPT_SAVE, PROMPT_BASELINE };

struct prompt {
	enum prompt_kind kind;
	char buf[256];
	size_t len;
	char err[192]; /* why the last Enter was refused */
};

#define TUI_MAX_VIEWS 8
#define TUI_MAX_THEMES 32
#define TUI_MIN_COLS 40
#define TUI_MIN_ROWS 10

/* A path of frame ids from the root down. */
struct tui_path {
	uint32_t *v;
	size_t n, cap;
};

/* A baseline to compare with (`b`): one profile per type over its own tables (the source may
 * renew its own), and how long each lasted (0: unknown, the totals are compared instead). */
struct baseline {
	struct strtab *st;
	struct frames *ft;
	struct profile *p[STACK_TYPES];
	double secs[STACK_TYPES];
	char desc[128];		     /* what it is, for the status line */
};

/* Time travel (travel.c): a range of the history instead of everything, and a baseline. */
struct travel {
	bool range_on;
	double from, to;	     /* seconds from the source's stats.since */
	struct profile *ranged;	     /* the range of the type shown, over the source's tables */
	struct baseline base;	     /* base.ft NULL: no baseline */
	double factor;		     /* the baseline's weight in the comparison */
	bool per_second;	     /* factor: the ratio of durations (else of totals) */
	struct profile *diff;	     /* what is shown against the baseline, over base.ft */
	struct baseline old;	     /* a replaced baseline's tables, until the views carried over */
	struct profile *old_diff;
};

struct tui_app {
	struct tui_source *src;
	const struct tui_opts *opts;
	WINDOW *w;
	int rows, cols;		/* screen size */
	int view_top, view_rows; /* the active view's rows */

	enum stack_type ptype;
	const struct profile *base;  /* the source's profile of type ptype */
	struct profile *owned;	     /* the filtered tree when a filter is on */
	const struct profile *disp;  /* what views show: base or owned */
	struct profile *empty;	     /* shown while the source has no profile */
	struct strtab *empty_st;
	struct frames *empty_ft;
	unsigned long gen;	     /* bumped each time disp changes */
	const struct frames *ft_seen; /* the frame table of the last source profile shown */
	const struct frames *ft_prev; /* during changed(): the table before the source's renewed
				       * one (still valid), else NULL */
	struct profile_filter filter;
	bool match_filter;	     /* `\`: keep only stacks with matches */

	/* Search: matching frames as a bitset over frame ids. */
	bool match_on;
	bool match_by_name;	     /* `#`: frames named match_name, else the regex */
	uint32_t match_name;
	regex_t re;
	bool re_ok;
	char match_desc[160];
	uint8_t *bits;
	uint32_t nbits, bits_cap;    /* frames covered, capacity in bits */
	double matched;		     /* value under matches in disp */

	bool frozen;
	uint64_t frozen_samples;     /* samples counter when frozen */
	enum tui_mode mode;

	char *themes[TUI_MAX_THEMES];
	size_t nthemes, theme_idx;
	struct tui_theme theme;
	enum tui_depth depth;
	bool hash_colors;	     /* color frames by name hash (the hash roles) instead of kind */
	enum palette palette;	     /* else the palette (hues per name on 256 colors or more) */
	/* The flame view's zoom (frame ids root-first, the root excluded) and orientation, which
	 * the chrome, exports and other panes read; and a frame another pane asked it to show. */
	struct tui_path zoom;
	bool flame;		     /* root at the bottom (false: icicle) */
	uint32_t jump_name;	     /* frame name + 1 to select at the next draw; 0 none */
	bool side_by_side;	     /* a comparison: the flame view shows before | after */
	struct travel travel;

	char msg[256];		     /* one-shot status message */
	enum tui_role msg_role;
	struct prompt prompt;
	bool help;
	bool cost; /* the cost popup (`$`) is open; any key closes it */

	struct view *views[TUI_MAX_VIEWS];
	int nviews, active;
	bool quit;
	bool redraw_all;	     /* Ctrl-L */
	int cur_y, cur_x;	     /* where the terminal cursor goes (a prompt), cur_y < 0: hidden */
	bool line_full;		     /* chrome: the line being drawn reached the last column */
	bool measuring;		     /* chrome: segments are measured (measured += width), not drawn */
	int measured;
};

/* Indices of the built-in views. */
enum { VIEW_FLAME = 0, VIEW_TOP, VIEW_THREADS };

/* A copy of tmpl (name, keys, ops) with state_size zeroed bytes of state; NULL on ENOMEM.
 * The view's free op releases what the state points to, then calls view__free. */
struct view *view__new(const struct view *tmpl, size_t state_size);
/* Frees the state block and the view; NULL is a no-op. */
void view__free(struct view *v);
/* The flame/icicle view (key 1): a new view owned by the caller, freed with its free op;
 * NULL on ENOMEM. The other *_view_new below follow the same contract. */
struct view *flame_view_new(void);
struct view *top_view_new(void);
struct view *threads_view_new(void);
struct view *l7_view_new(void);
struct view *sli_view_new(void);
struct view *heat_view_new(void);

/* A frame's width and own part in the views: its value, or in a differential profile its
 * "after" value; the colors and delta columns compare it with "before". */
static inline double tui_total(const struct profile *p, uint32_t id)
{
	return profile__two_column(p) ? profile__total2(p, id) : profile__node(p, id)->total;
}
static inline double tui_self(const struct profile *p, uint32_t id)
{
	return profile__two_column(p) ? profile__self2(p, id) : profile__node(p, id)->self;
}
/* Sets the status message (printf format), shown until the next key. */
void app_msg(struct tui_app *a, enum tui_role role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Opens a prompt of kind k with initial text. */
void app_prompt(struct tui_app *a, enum prompt_kind k, const char *init);
/* Makes frames named name_id the match set (as `#` does). */
void app_match_name(struct tui_app *a, uint32_t name_id);
/* Shows the flame view with the heaviest node of frames named name_id selected (zoom reset)
 * and those frames highlighted: how panes open a function in the flame graph. */
void app_show_frame(struct tui_app *a, uint32_t name_id);
/* The source's per-second history of type t, or NULL when it keeps none. */
const struct slices *app_history(const struct tui_app *a, enum stack_type t);
/* Switches to view i. */
void app_show(struct tui_app *a, int i);
/* Switches to the view shown by key (see struct view); false when there is none. */
bool app_show_key(struct tui_app *a, int key);
/* Narrows every view to a container or pod name (NULL: any) and a pid (0: any), as the c and p
 * prompts would, makes t the profile type when the source has it, and shows the view of key
 * (0: the flame view). False, changing nothing, when no view has that key. */
bool app_show_filtered(struct tui_app *a, int key, enum stack_type t, const char *container,
		       uint32_t pid);
/* During a view's changed(): the id in disp's frame table of a frame id the view kept from
 * before (the source may have renewed its table); PROFILE_NONE when that frame is gone. */
uint32_t app_frame_carry(const struct tui_app *a, uint32_t id);
/* Rebuilds the display profile from the source and the filters. */
void app_rebuild(struct tui_app *a);
/* True when frame id matches the current search. */
static inline bool app_matches(const struct tui_app *a, uint32_t frame)
{
	return a->match_on && bits_test(a->bits, a->nbits, frame);
}

/* Time travel (travel.c). What the views show of the source's profile p of the current type:
 * p, the range of it, or either compared with the baseline (owned by the app, valid until the
 * next call); called by app_rebuild, which then calls travel_rebuilt. */
const struct profile *travel_apply(struct tui_app *a, const struct profile *p);
void travel_rebuilt(struct tui_app *a);
void travel_free(struct tui_app *a);
/* Shows [from, to) seconds of the history (from the source's since) in every view. */
void app_set_range(struct tui_app *a, double from, double to);
/* Drops the range: the views show all the data again. */
void app_all_time(struct tui_app *a);
/* The range as the status line says it: "12.00-17.50 s (14:02:10-14:02:15)". */
void travel_range_text(const struct tui_app *a, char *buf, size_t n);
/* How the baseline is scaled in the comparison shown, " (scaled x0.3: per second)", or ""
 * when it is not (no comparison, or a factor of 1). */
void travel_scale_text(const struct tui_app *a, char *buf, size_t n);
/* Sets the baseline from spec: "." (what is shown), "first N" (seconds of the history),
 * "A-B" (a range of it, seconds or clock times), or a file (folded, perf script, .gtop,
 * FILE@A-B); "" clears it. 0, or -EINVAL / -ENOMEM with a one-line reason in err (the
 * current baseline then stays). */
int travel_baseline(struct tui_app *a, const char *spec, char *err, size_t errlen);

/* Chrome (chrome.c): header, status bar, detail line, key bar, help overlay, small-terminal
 * message. */
void chrome_draw(struct tui_app *a);
const struct tui_key *app_global_keys(size_t *n);

/* Writes the current view's data to files (export.c): name ends in a known extension to
 * write that format only, else every format built in is written as name.EXT. Reports in the
 * status line. */
void export_save(struct tui_app *a, const char *name);
/* Fills buf with the default save name (out dir + galatop-YYYYmmdd-HHMMSS). */
void export_default_name(const struct tui_app *a, char *buf, size_t n);
/* The extensions export_save can write, space-separated (".folded .svg"). */
const char *export_formats(void);

/* App lifecycle (app.c), used by the run loop and the dump mode. app_init fills *a (src and
 * o are borrowed and must outlive it): 0, -EINVAL when the theme cannot be loaded or
 * -ENOMEM, with a one-line reason in err (call app_free either way). app_free releases
 * everything app_init made (views included); safe on a zeroed or half-made app. */
int app_init(struct tui_app *a, struct tui_source *src, const struct tui_opts *o, char *err,
	     size_t errlen);
void app_free(struct tui_app *a);
/* Applies the theme (after initscr/newterm). */
void app_colors(struct tui_app *a);
/* Handles one input (key, mouse, resize). */
void app_input(struct tui_app *a, const struct tui_input *in);
/* Draws the whole screen into a->w (no doupdate). */
void app_draw(struct tui_app *a);
/* Polls the source; returns true when the screen should be redrawn. */
bool app_tick(struct tui_app *a);
/* Sets the locale and picks UTF-8 or ASCII glyphs. */
void tui_locale(const struct tui_opts *o);
/* The no-display mode (dump.c): runs the key script, prints the screen or the timings. */
int tui_dump(struct tui_app *a);

#endif
