/* The heatmap (key 6), FlameScope's subsecond offset heat map in a terminal: one column per
 * second of the history, one row per sub-second slice of it (50 ms, or coarser when the pane
 * is short), shaded by the samples that fell in it. The cursor picks a start and an end
 * (keyboard or mouse); the views then show that range (app_set_range), `a` drops it. The
 * moments a --trigger fired are marked under their seconds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "model/slices.h"
#include "text.h"

enum heat_action {
	HM_LEFT = 1,
	HM_RIGHT,
	HM_UP,
	HM_DOWN,
	HM_PGLEFT,
	HM_PGRIGHT,
	HM_FIRST,
	HM_LAST,
	HM_MARK,
	HM_CANCEL,
	HM_SECOND,
};

static const struct tui_key heat_keys[] = {
	{ { KEY_LEFT, 'h' }, HM_LEFT, "cursor one second back", NULL },
	{ { KEY_RIGHT, 'l' }, HM_RIGHT, "cursor one second on", NULL },
	{ { KEY_UP, 'k' }, HM_UP, "cursor earlier in the second", NULL },
	{ { KEY_DOWN, 'j' }, HM_DOWN, "cursor later in the second", NULL },
	{ { KEY_PPAGE }, HM_PGLEFT, "a screen back in time", NULL },
	{ { KEY_NPAGE }, HM_PGRIGHT, "a screen on in time", NULL },
	{ { KEY_HOME }, HM_FIRST, "the first second", NULL },
	{ { KEY_END }, HM_LAST, "the newest second (and follow it)", NULL },
	{ { '\n', KEY_ENTER, ' ' }, HM_MARK, "mark the start, then the end of a range: the views "
					     "show it", "Mark" },
	{ { TUI_KEY_ESC }, HM_CANCEL, "cancel the start marked", NULL },
	{ { 'S' }, HM_SECOND, "select the cursor's whole second", NULL },
};

#define BUCKETS_PER_S 20 /* 1 / SLICES_BUCKET_S */
#define MARGIN 6	 /* row labels: "950ms" */

struct heat {
	long sec, row;	   /* the cursor: a second (from the source's since) and a row in it */
	long first;	   /* the second in the first column */
	bool placed;	   /* the cursor was put on the data */
	bool follow;	   /* the cursor stays on the newest second (a live source) */
	bool marking;	   /* a start is marked, the end is next */
	double mark;	   /* the start, seconds */
	int k;		   /* buckets per row (a divisor of 20) */
	int cw;		   /* columns per second: wider when few seconds fill the pane */
	int cols;	   /* seconds shown */
	/* The heat map of the type shown: buckets hfirst .. hfirst + hn - 1. */
	const double *heat;
	int64_t hfirst;
	size_t hn;
	/* A type whose values go down (leak): the buckets hold changes and the cells show the
	 * level, lv[i] at the end of bucket hfirst + i, base before the first. */
	bool level;
	double *lv, base;
	size_t lv_cap;
	double max;	   /* the largest cell at k buckets a row */
};

/* The seconds the heat map covers: [*lo, *hi]; false when it is empty. */
static bool span(const struct heat *h, long *lo, long *hi)
{
	if (!h->heat || !h->hn)
		return false;
	*lo = (long)(h->hfirst / BUCKETS_PER_S);
	*hi = (long)((h->hfirst + (int64_t)h->hn - 1) / BUCKETS_PER_S);
	return true;
}

/* Samples in row r (of k buckets) of second s; for a level, the level at its end. */
static double cell(const struct heat *h, long s, long r)
{
	double v = 0;

	if (h->level) {
		int64_t b = (int64_t)s * BUCKETS_PER_S + (r + 1) * h->k - 1 - h->hfirst;

		return b < 0 ? h->base : h->heat[b < (int64_t)h->hn ? b : (int64_t)h->hn - 1];
	}
	for (int i = 0; i < h->k; i++) {
		int64_t b = (int64_t)s * BUCKETS_PER_S + r * h->k + i - h->hfirst;

		if (b >= 0 && b < (int64_t)h->hn)
			v += h->heat[b];
	}
	return v;
}

static void fetch(struct heat *h, struct tui_app *a)
{
	const struct slices *hs = app_history(a, a->ptype);

	h->heat = hs ? slices__heat(hs, &h->hfirst, &h->hn) : NULL;
	h->level = stack_types[a->ptype].can_go_down;
	if (h->heat && h->level) {
		h->base = slices__heat_base(hs);
		h->heat = slices__heat_levels(hs, &h->lv, &h->lv_cap) ? NULL : h->lv;
	}
	if (!h->heat)
		h->hn = 0;
}

/* Rows per second that fit in rows of the pane: the most (20, 50 ms each) down to 1. */
static int buckets_per_row(int rows)
{
	static const int ks[] = { 1, 2, 4, 5, 10, 20 };

	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
		if (BUCKETS_PER_S / ks[i] <= rows)
			return ks[i];
	return BUCKETS_PER_S;
}

static void clamp(struct heat *h)
{
	long lo, hi, rows = BUCKETS_PER_S / h->k;

	if (!span(h, &lo, &hi))
		return;
	if (!h->placed || h->follow)
		h->sec = hi;
	h->placed = true;
	if (h->sec < lo)
		h->sec = lo;
	if (h->sec > hi)
		h->sec = hi;
	if (h->row >= rows)
		h->row = rows - 1;
	if (h->row < 0)
		h->row = 0;
	if (h->cols < 1)
		return;
	if (h->first > h->sec)
		h->first = h->sec;
	if (h->sec >= h->first + h->cols)
		h->first = h->sec - h->cols + 1;
	if (h->first < lo)
		h->first = lo;
}

/* The time at the start of the cursor's cell (end: at its end). */
static double cursor_time(const struct heat *h, bool end)
{
	return (double)h->sec + (double)(h->row + end) * h->k * SLICES_BUCKET_S;
}

#define SHADES 4 /* glyph levels (8 colors, mono, NO_COLOR) */

/* The level of v in 0..max: 0 for nothing, else 1..n in equal slices of max. */
static int level(double v, double max, int n)
{
	int lvl = !(v > 0) || !(max > 0) ? 0 : 1 + (int)(v / max * (n - 0.001));

	return lvl > n ? n : lvl;
}

static const char *shade(double v, double max)
{
	static const char *const utf8[] = { " ", "\u2591", "\u2592", "\u2593", "\u2588" };
	static const char *const ascii[] = { " ", ".", ":", "*", "#" };

	return (tui_text_utf8() ? utf8 : ascii)[level(v, max, SHADES)];
}

/* Whether cells are drawn in the theme's heat colors (256 colors or more), else in shades. */
static bool ramp_colors(void)
{
	return tui_role_colored(ROLE_HEAT1) && tui_role_colored(ROLE_HEAT1 + ROLE_HEAT_N - 1);
}

/* One cell of cw columns: its heat color, or the shade glyph in role (also what a cell the
 * cursor, a mark or the range covers shows). */
static void draw_cell(WINDOW *w, enum tui_role role, double v, double max, int cw)
{
	int lvl = level(v, max, ROLE_HEAT_N);

	if (role == ROLE_NORMAL && ramp_colors() && lvl) {
		tui_role_on(w, (enum tui_role)(ROLE_HEAT1 + lvl - 1));
		tui_pad(w, cw);
		return;
	}
	tui_role_on(w, role);
	for (int c = 0; c < cw; c++)
		waddstr(w, shade(v, max));
}

/* The legend: what a cell holds, then each color or shade with the largest value it stands
 * for, and the trigger mark's meaning. */
static void draw_legend(struct heat *h, struct tui_app *a, WINDOW *w, int y, bool marks)
{
	bool colors = ramp_colors();
	int n = colors ? ROLE_HEAT_N : SHADES, used;
	char buf[96], val[32];

	wmove(w, y, 0);
	tui_role_on(w, ROLE_DIM);
	used = tui_printf(w, a->cols, h->level ? "%s outstanding at each %d ms cell's end, up to:"
						: "%s per %d ms cell, up to:",
			  stack_type_name(a->ptype), h->k * 50);
	for (int l = 1; l <= n && used < a->cols; l++) {
		tui_fmt_value(profile__kind(a->base), h->max * l / n, val, sizeof(val));
		tui_role_on(w, ROLE_DIM);
		used += tui_put(w, " ", 1, a->cols - used);
		if (colors) {
			tui_role_on(w, (enum tui_role)(ROLE_HEAT1 + l - 1));
			tui_pad(w, a->cols - used < 2 ? a->cols - used : 2);
			used += 2;
			tui_role_on(w, ROLE_DIM);
			used += tui_put(w, " ", 1, a->cols - used);
		} else {
			const char *g = shade(l, n);

			used += tui_put(w, g, strlen(g), a->cols - used);
		}
		tui_role_on(w, ROLE_DIM);
		snprintf(buf, sizeof(buf), "%s%s", val, l == n ? " (max)" : "");
		used += tui_put(w, buf, strlen(buf), a->cols - used);
	}
	if (marks && used + 18 < a->cols) {
		tui_role_on(w, ROLE_DIM);
		used += tui_put(w, "   ", 3, a->cols - used);
		tui_role_on(w, ROLE_STATUS_ALERT);
		waddstr(w, tui_text_utf8() ? "\u25b2" : "^");
		tui_role_on(w, ROLE_DIM);
		tui_put(w, " trigger fired", 14, a->cols - used - 1);
	}
}

static void heat_draw(struct view *v, struct tui_app *a, WINDOW *w, int top, int rows)
{
	struct heat *h = v->state;
	struct tui_stats st;
	long lo, hi;
	int grid, x0 = MARGIN;
	const char *glyph_mark = tui_text_utf8() ? "\u25b2" : "^";

	a->src->ops->stats(a->src->ctx, &st);
	fetch(h, a);
	if (!span(h, &lo, &hi)) {
		const char *m = !app_history(a, a->ptype) ? "no per-second history here: the live view and .gtop "
					      "files from galatop record have one"
					    : "no samples in the history yet";

		tui_role_on(w, ROLE_DIM);
		wmove(w, top + rows / 2, 0);
		tui_put(w, m, strlen(m), a->cols);
		return;
	}
	/* Rows: the time axis, the grid, the trigger marks, the legend. */
	h->k = buckets_per_row(rows - 3);
	grid = BUCKETS_PER_S / h->k;
	h->cw = (a->cols - x0) / (int)(hi - lo + 1);
	h->cw = h->cw < 1 ? 1 : h->cw > 4 ? 4 : h->cw;
	h->cols = (a->cols - x0) / h->cw;
	clamp(h);
	h->max = 0;
	for (long s = lo; s <= hi; s++)
		for (long r = 0; r < grid; r++)
			h->max = fmax(h->max, cell(h, s, r));
	/* The time axis: seconds from the start, a label every 8 columns or more. */
	static const long steps[] = { 1, 2, 5, 10, 30, 60 };
	long every = 60;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i] * h->cw >= 8) {
			every = steps[i];
			break;
		}
	tui_role_on(w, ROLE_TABLE_HEADER);
	wmove(w, top, 0);
	tui_pad(w, a->cols);
	for (long s = h->first; s < h->first + h->cols && s <= hi; s++) {
		char lab[24];
		int x = x0 + (int)(s - h->first) * h->cw;

		if (s % every || x + snprintf(lab, sizeof(lab), "%lds", s) > a->cols)
			continue;
		wmove(w, top, x);
		tui_put(w, lab, strlen(lab), a->cols - x);
	}
	wmove(w, top, 0);
	tui_put(w, "time", 4, x0);
	for (long r = 0; r < grid; r++) {
		char lab[32];
		int y = top + 1 + (int)r;

		snprintf(lab, sizeof(lab), "%4ldms", r * h->k * 50);
		tui_role_on(w, ROLE_DIM);
		wmove(w, y, 0);
		tui_put(w, lab, strlen(lab), x0);
		for (long s = h->first; s < h->first + h->cols; s++) {
			double t0 = (double)s + (double)r * h->k * SLICES_BUCKET_S;
			double t1 = t0 + h->k * SLICES_BUCKET_S;
			enum tui_role role = ROLE_NORMAL;

			if (s > hi)
				break;
			if (s == h->sec && r == h->row)
				role = ROLE_SELECTION;
			else if (h->marking && h->mark >= t0 && h->mark < t1)
				role = ROLE_STATUS_ALERT;
			else if (a->travel.range_on && t0 < a->travel.to && t1 > a->travel.from)
				role = ROLE_MATCH;
			wmove(w, y, x0 + (int)(s - h->first) * h->cw);
			draw_cell(w, role, cell(h, s, r), h->max, h->cw);
		}
	}
	/* Trigger moments under their seconds. */
	tui_role_on(w, ROLE_STATUS_ALERT);
	for (size_t i = 0; i < st.nmarks && st.since > 0; i++) {
		long s = (long)floor(st.marks[i] - st.since);

		if (s >= h->first && s < h->first + h->cols) {
			wmove(w, top + 1 + grid, x0 + (int)(s - h->first) * h->cw);
			waddstr(w, glyph_mark);
		}
	}
	draw_legend(h, a, w, top + rows - 1, st.nmarks > 0);
}

static void mark(struct heat *h, struct tui_app *a)
{
	double t0 = cursor_time(h, false), t1 = cursor_time(h, true);

	if (!h->marking) {
		h->marking = true;
		h->mark = t0;
		app_msg(a, ROLE_STATUS, "start at %.2f s: move to the end and mark it (Esc cancels)",
			t0);
		return;
	}
	h->marking = false;
	/* The range covers both marked cells, whichever came first. */
	if (t0 < h->mark)
		app_set_range(a, t0, h->mark + h->k * SLICES_BUCKET_S);
	else
		app_set_range(a, h->mark, t1);
	app_show(a, VIEW_FLAME);
}

static bool heat_action(struct view *v, struct tui_app *a, int action)
{
	struct heat *h = v->state;
	long lo, hi, rows;

	fetch(h, a);
	if (!span(h, &lo, &hi)) {
		app_msg(a, ROLE_DIM, "no history to move in");
		return false;
	}
	rows = BUCKETS_PER_S / (h->k ? h->k : 1);
	h->follow = false;
	switch (action) {
	case HM_LEFT:
		h->sec--;
		break;
	case HM_RIGHT:
		h->sec++;
		break;
	case HM_UP:
		if (h->row > 0) {
			h->row--;
		} else if (h->sec > lo) {
			h->sec--;
			h->row = rows - 1;
		}
		break;
	case HM_DOWN:
		if (h->row < rows - 1) {
			h->row++;
		} else if (h->sec < hi) {
			h->sec++;
			h->row = 0;
		}
		break;
	case HM_PGLEFT:
		h->sec -= h->cols > 1 ? h->cols - 1 : 1;
		break;
	case HM_PGRIGHT:
		h->sec += h->cols > 1 ? h->cols - 1 : 1;
		break;
	case HM_FIRST:
		h->sec = lo;
		break;
	case HM_LAST:
		h->sec = hi;
		h->follow = true;
		break;
	case HM_MARK:
		clamp(h);
		mark(h, a);
		return true;
	case HM_CANCEL:
		if (!h->marking) {
			app_msg(a, ROLE_DIM, "no start marked");
			return false;
		}
		h->marking = false;
		app_msg(a, ROLE_STATUS, "start mark cancelled");
		return true;
	case HM_SECOND:
		clamp(h);
		h->marking = false;
		app_set_range(a, (double)h->sec, (double)h->sec + 1);
		app_show(a, VIEW_FLAME);
		return true;
	}
	clamp(h);
	if (h->sec == hi)
		h->follow = true;
	return true;
}

static void heat_mouse(struct view *v, struct tui_app *a, const struct tui_input *in)
{
	struct heat *h = v->state;
	long r = in->y - a->view_top - 1, s, lo, hi;

	fetch(h, a);
	s = h->first + (in->x - MARGIN) / (h->cw ? h->cw : 1);
	if (!span(h, &lo, &hi) || !h->k || r < 0 || r >= BUCKETS_PER_S / h->k || in->x < MARGIN ||
	    s < lo || s > hi)
		return;
	/* As in FlameScope: a click marks the start, a second one the end. */
	if (!(in->bstate & BUTTON1_CLICKED))
		return;
	h->sec = s;
	h->row = r;
	h->follow = false;
	mark(h, a);
}

static void heat_detail(struct view *v, struct tui_app *a, WINDOW *w, int y)
{
	struct heat *h = v->state;
	struct tui_stats st;
	char line[256], val[32], when[32] = "";
	long lo, hi;
	int n;

	wmove(w, y, 0);
	tui_role_on(w, ROLE_DETAIL);
	if (!span(h, &lo, &hi) || !h->k) {
		tui_put(w, "the heatmap fills as samples arrive", 35, a->cols);
		return;
	}
	a->src->ops->stats(a->src->ctx, &st);
	if (st.since > 0) {
		double t = st.since + cursor_time(h, false);
		char hms[16];

		tui_fmt_clock(t, hms, sizeof(hms));
		snprintf(when, sizeof(when), " (%s.%02d)", hms, (int)((t - floor(t)) * 100));
	}
	tui_fmt_value(profile__kind(a->base), cell(h, h->sec, h->row), val, sizeof(val));
	n = snprintf(line, sizeof(line), "%.2f-%.2f s%s  %s %s", cursor_time(h, false),
		     cursor_time(h, true), when, val,
		     h->level ? "outstanding"
			      : profile__kind(a->base) == VALUE_SAMPLES ? "samples" : "");
	if (h->marking)
		n += snprintf(line + n, sizeof(line) - (size_t)n, "  start marked at %.2f s", h->mark);
	if (a->travel.range_on) {
		char r[96];

		travel_range_text(a, r, sizeof(r));
		snprintf(line + n, sizeof(line) - (size_t)n, "  range %s", r);
	}
	tui_put(w, line, strlen(line), a->cols);
}

static void heat_changed(struct view *v, struct tui_app *a)
{
	struct heat *h = v->state;

	fetch(h, a);
}

static void heat_free(struct view *v)
{
	if (v)
		free(((struct heat *)v->state)->lv);
	view__free(v);
}

struct view *heat_view_new(void)
{
	static const struct view tmpl = {
		.name = "Heatmap",
		.key = '6',
		.keys = heat_keys,
		.nkeys = sizeof(heat_keys) / sizeof(heat_keys[0]),
		.draw = heat_draw,
		.action = heat_action,
		.mouse = heat_mouse,
		.detail = heat_detail,
		.changed = heat_changed,
		.free = heat_free,
	};
	struct view *v = view__new(&tmpl, sizeof(struct heat));

	if (v)
		((struct heat *)v->state)->follow = true;
	return v;
}
