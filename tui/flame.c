/* The flame view: an icicle (root on top) or flame graph (root at the bottom) of the display
 * profile, with zoom, a selection cursor and search highlights. The layout (one rectangle per
 * frame at least one column wide) is cached per profile generation, zoom and width. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "text.h"
#include "model/hash.h"
#include "util/grow.h"

enum flame_action {
	F_UP = 1,
	F_DOWN,
	F_LEFT,
	F_RIGHT,
	F_ZOOM,
	F_UNZOOM,
	F_RESET,
	F_NEXT,
	F_PREV,
	F_SAME_NAME,
	F_ORIENT,
	F_COLORS,
	F_PGUP,
	F_PGDN,
	F_HOME,
	F_SIDE,
};

static const struct tui_key flame_keys[] = {
	{ { KEY_UP, 'k' }, F_UP, "move up: parent (icicle) or child (flame)", NULL },
	{ { KEY_DOWN, 'j' }, F_DOWN, "move down: heaviest child (icicle) or parent (flame)",
	  NULL },
	{ { KEY_LEFT, 'h' }, F_LEFT, "previous frame on the same row", NULL },
	{ { KEY_RIGHT, 'l' }, F_RIGHT, "next frame on the same row", NULL },
	{ { '\n', KEY_ENTER }, F_ZOOM, "zoom into the selected frame", "Zoom" },
	{ { TUI_KEY_ESC, KEY_BACKSPACE, 127 }, F_UNZOOM, "zoom out one level", "Back" },
	{ { 'r' }, F_RESET, "reset zoom and selection", NULL },
	{ { 'n' }, F_NEXT, "next search match", "Next" },
	{ { 'N' }, F_PREV, "previous search match", NULL },
	{ { '#' }, F_SAME_NAME, "highlight all frames named like the selected one", NULL },
	{ { 'i' }, F_ORIENT, "flip icicle (root on top) / flame (root at the bottom)", NULL },
	{ { 'x' }, F_COLORS, "colors: by kind, by name hash, palettes", NULL },
	{ { '|' }, F_SIDE, "with a baseline (b): before and after side by side / one graph of "
			   "the change", NULL },
	{ { KEY_PPAGE }, F_PGUP, "scroll up half a screen", NULL },
	{ { KEY_NPAGE }, F_PGDN, "scroll down half a screen", NULL },
	{ { KEY_HOME }, F_HOME, "select the zoomed root", NULL },
};

struct rect {
	uint32_t node, depth; /* depth below the zoomed root */
	int x, w;
};

struct work {
	uint32_t node, depth;
	double start;
};

/* One graph's layout: a rectangle per frame at least one column wide. */
struct layout {
	struct rect *r;
	size_t nr, rcap;
	int x0, cols;	    /* where it is drawn */
};

struct flame {
	double maxdelta; /* differential profiles: largest change of a frame's own value */
	struct tui_path sel; /* the zoom is the app's (a->zoom) */
	uint32_t zoom_node, sel_node;
	int scroll;  /* depth shown at the first row (icicle) or last row (flame) */
	bool follow; /* scroll to keep the selection visible */
	int rows;
	/* The graph (in a comparison: of "after"), and side by side the baseline's ("before"). */
	struct layout g, before;
	bool side;	/* laid out side by side */
	bool layout_ok;
	int lcols;
	unsigned long lgen;
	uint32_t max_depth;
	uint32_t *kids;
	size_t kcap;
	struct work *wk;
	size_t wcap;
};

/* Sets path to the frames from the root down to node. */
static bool path_of(struct tui_path *pa, const struct profile *p, uint32_t node)
{
	size_t n = 0;

	for (uint32_t x = node; x != PROFILE_ROOT && x != PROFILE_NONE; x = profile__node(p, x)->parent)
		n++;
	if (ARRAY_GROW(pa->v, pa->cap, n))
		return false;
	pa->n = n;
	for (uint32_t x = node; x != PROFILE_ROOT && x != PROFILE_NONE; x = profile__node(p, x)->parent)
		pa->v[--n] = profile__node(p, x)->frame;
	return true;
}

/* Walks path down from the root; cuts it where the profile no longer has it. */
static uint32_t path_resolve(struct tui_path *pa, const struct profile *p)
{
	uint32_t node = PROFILE_ROOT;

	for (size_t i = 0; i < pa->n; i++) {
		uint32_t c = profile__find_child(p, node, pa->v[i]);

		if (c == PROFILE_NONE) {
			pa->n = i;
			break;
		}
		node = c;
	}
	return node;
}

static void select_node(struct flame *f, const struct profile *p, uint32_t node)
{
	if (path_of(&f->sel, p, node))
		f->sel_node = node;
	f->follow = true;
}

/* Carries path's frame ids over a renewed frame table (cut where a frame is gone). */
static void path_carry(struct tui_path *pa, const struct tui_app *a)
{
	for (size_t i = 0; i < pa->n; i++) {
		pa->v[i] = app_frame_carry(a, pa->v[i]);
		if (pa->v[i] == PROFILE_NONE) {
			pa->n = i;
			break;
		}
	}
}

static void flame_changed(struct view *v, struct tui_app *a)
{
	struct flame *f = v->state;

	if (a->ft_prev) {
		path_carry(&a->zoom, a);
		path_carry(&f->sel, a);
	}
	f->zoom_node = path_resolve(&a->zoom, a->disp);
	f->sel_node = path_resolve(&f->sel, a->disp);
	/* The selection stays inside the zoomed subtree. */
	if (f->sel.n < a->zoom.n ||
	    (a->zoom.n && memcmp(f->sel.v, a->zoom.v, a->zoom.n * sizeof(uint32_t))))
		select_node(f, a->disp, f->zoom_node);
	f->layout_ok = false;
}

/* A frame's width in graph `before` (the baseline's column) or the shown one. */
static double width_of(const struct profile *p, uint32_t id, bool before)
{
	return before ? profile__node(p, id)->total : tui_total(p, id);
}

/* Lays out the subtree of the zoomed node in g->cols columns, by the baseline's values when
 * before is set. */
static void layout_graph(struct flame *f, struct layout *g, const struct profile *p, bool before)
{
	double zt = width_of(p, f->zoom_node, before);
	double scale = zt > 0 ? g->cols / zt : 0;
	int cols = g->cols;
	size_t nw = 0;

	g->nr = 0;
	if (ARRAY_GROW(f->wk, f->wcap, 1))
		return;
	f->wk[nw++] = (struct work){ f->zoom_node, 0, 0 };
	while (nw) {
		struct work it = f->wk[--nw];
		double wd = width_of(p, it.node, before);
		int x0 = (int)(it.start * scale), x1 = (int)((it.start + wd) * scale);

		if (it.node == f->zoom_node) {
			x0 = 0;
			x1 = cols;
		}
		if (x1 > cols)
			x1 = cols;
		if (x1 - x0 < 1 || ARRAY_GROW(g->r, g->rcap, g->nr + 1))
			continue;
		g->r[g->nr++] = (struct rect){ it.node, it.depth, x0, x1 - x0 };
		if (it.depth > f->max_depth)
			f->max_depth = it.depth;
		size_t nk = profile__child_count(p, it.node);

		if (!nk || ARRAY_GROW(f->kids, f->kcap, nk) ||
		    ARRAY_GROW(f->wk, f->wcap, nw + nk))
			continue;
		/* Only frames at least a column wide are visited: a narrow frame hides its subtree. */
		nk = profile__children(p, it.node, ORDER_NAME, f->kids);
		double end = it.start;

		for (size_t i = 0; i < nk; i++)
			end += width_of(p, f->kids[i], before);
		for (size_t i = nk; i-- > 0;) {
			double t = width_of(p, f->kids[i], before);

			end -= t;
			if ((int)((end + t) * scale) - (int)(end * scale) >= 1)
				f->wk[nw++] = (struct work){ f->kids[i], it.depth + 1, end };
		}
	}
}

/* The graph in cols columns, or, side by side, the baseline's left and the shown one right
 * of a one-column gap. */
static void layout(struct flame *f, const struct profile *p, int cols, bool side)
{
	f->max_depth = 0;
	f->layout_ok = true;
	f->lcols = cols;
	f->side = side;
	f->maxdelta = 0;
	for (uint32_t id = 1; profile__two_column(p) && id < profile__node_count(p); id++) {
		double d = fabs(profile__self2(p, id) - profile__node(p, id)->self);

		if (d > f->maxdelta)
			f->maxdelta = d;
	}
	f->before.nr = 0;
	f->g.x0 = 0;
	f->g.cols = cols;
	if (side) {
		f->before.x0 = 0;
		f->before.cols = (cols - 1) / 2;
		f->g.x0 = f->before.cols + 1;
		f->g.cols = cols - f->g.x0;
		layout_graph(f, &f->before, p, true);
	}
	layout_graph(f, &f->g, p, false);
}

/* Side by side needs a comparison; without one the view shows one graph. */
static bool side_by_side(const struct tui_app *a)
{
	return a->side_by_side && profile__two_column(a->disp);
}

static void ensure_layout(struct flame *f, struct tui_app *a)
{
	if (!f->layout_ok || f->lcols != a->cols || f->lgen != a->gen ||
	    f->side != side_by_side(a)) {
		layout(f, a->disp, a->cols, side_by_side(a));
		f->lgen = a->gen;
	}
}

static long rect_of(const struct flame *f, uint32_t node)
{
	for (size_t i = 0; i < f->g.nr; i++)
		if (f->g.r[i].node == node)
			return (long)i;
	return -1;
}

static uint32_t sel_depth(const struct flame *f, const struct tui_app *a)
{
	return (uint32_t)(f->sel.n - a->zoom.n);
}

static void clamp_scroll(struct flame *f, const struct tui_app *a)
{
	int max = (int)f->max_depth - f->rows + 1;

	if (f->follow && f->rows > 0) {
		int d = (int)sel_depth(f, a);

		if (d < f->scroll)
			f->scroll = d;
		if (d >= f->scroll + f->rows)
			f->scroll = d - f->rows + 1;
		f->follow = false;
	}
	if (f->scroll > max)
		f->scroll = max;
	if (f->scroll < 0)
		f->scroll = 0;
}

/* `x`: by kind, by name hash, then flamegraph.pl's palettes where the terminal can show
 * them (256 colors or more). */
static void cycle_colors(struct tui_app *a)
{
	static const enum palette cycle[] = { PALETTE_KIND, PALETTE_MAX /* name hash */,
					      PALETTE_HOT,  PALETTE_JAVA, PALETTE_JS,
					      PALETTE_PERL, PALETTE_MEM,  PALETTE_IO };
	size_t n = tui_hues_on() ? sizeof(cycle) / sizeof(cycle[0]) : 2, cur = 0;

	for (size_t i = 0; i < n; i++)
		if (a->hash_colors ? cycle[i] == PALETTE_MAX : cycle[i] == a->palette)
			cur = i;
	cur = (cur + 1) % n;
	a->hash_colors = cycle[cur] == PALETTE_MAX;
	if (!a->hash_colors)
		a->palette = cycle[cur];
	if (a->hash_colors)
		app_msg(a, ROLE_STATUS, "colors: by name hash");
	else if (a->palette == PALETTE_KIND)
		app_msg(a, ROLE_STATUS, "colors: by frame kind%s",
			tui_hues_on() ? ", a hue per name" : "");
	else
		app_msg(a, ROLE_STATUS, "colors: flamegraph.pl's %s palette (--colors %s)",
			palette_str(a->palette), palette_str(a->palette));
}

/* The role of a frame's family: its kind's, or Python's for "qualname (file.py:line)". */
static enum tui_role frame_role(const struct frames *ft, uint32_t frame, const char *name,
				size_t len)
{
	unsigned kind = frames__get(ft, frame)->kind;

	if (kind == FRAME_USER && palette_python(name, len))
		return ROLE_FRAME_PYTHON;
	return role_of_kind(kind);
}

static void draw_rect(struct flame *f, struct tui_app *a, WINDOW *w, const struct layout *g,
		      const struct rect *r, int y)
{
	const struct profile_node *nd = profile__node(a->disp, r->node);
	const struct frames *ft = profile__frames(a->disp);
	/* Side by side, the roots say which graph is which. */
	const char *root = !f->side ? "all" : g == &f->before ? "before (baseline)" : "after";
	const char *name = r->node == PROFILE_ROOT ? root : frames__name(ft, nd->frame);
	size_t len = r->node == PROFILE_ROOT ? strlen(root) : frames__name_len(ft, nd->frame);
	int tw = r->w >= 2 ? r->w - 1 : r->w, used = 0;
	enum tui_role role;

	if (r->node == f->sel_node)
		role = ROLE_SELECTION;
	else if (app_matches(a, nd->frame))
		role = ROLE_MATCH;
	else if (profile__two_column(a->disp))
		role = tui_delta_role(profile__self2(a->disp, r->node) - nd->self, f->maxdelta);
	else if (a->hash_colors && r->node != PROFILE_ROOT)
		role = (enum tui_role)(ROLE_HASH0 + hash_bytes(name, strlen(name)) % ROLE_HASH_N);
	else
		role = frame_role(ft, nd->frame, name, len);
	wmove(w, y, g->x0 + r->x);
	if (r->node != PROFILE_ROOT && (role == ROLE_FRAME_PYTHON ||
					(role >= ROLE_FRAME_USER && role <= ROLE_FRAME_SPECIAL))) {
		/* The family's role, in the hue of the frame's name on rich terminals. */
		double v;
		int ramp = palette_ramp_of(a->palette, frames__get(ft, nd->frame)->kind, name, len,
					   false, &v);

		tui_frame_on(w, role, ramp, v);
	} else {
		tui_role_on(w, role);
	}
	/* Under three columns a cut name says nothing: show the bar alone. */
	if (tw >= 3 || tui_width(name, len) <= tw)
		used = tui_put_fit(w, name, len, tw);
	tui_pad(w, tw - used);
	if (r->w >= 2) {
		tui_role_on(w, ROLE_NORMAL);
		waddch(w, ' ');
	}
}

static void draw_graph(struct flame *f, struct tui_app *a, WINDOW *w, const struct layout *g,
		       int top, int rows)
{
	for (size_t i = 0; i < g->nr; i++) {
		int rel = (int)g->r[i].depth - f->scroll;

		if (rel < 0 || rel >= rows)
			continue;
		draw_rect(f, a, w, g, &g->r[i], top + (a->flame ? rows - 1 - rel : rel));
	}
}

static void jump(struct flame *f, struct tui_app *a, uint32_t name_id);

static void flame_draw(struct view *v, struct tui_app *a, WINDOW *w, int top, int rows)
{
	struct flame *f = v->state;

	if (a->jump_name) {
		jump(f, a, a->jump_name - 1);
		a->jump_name = 0;
	}
	ensure_layout(f, a);
	f->rows = rows;
	clamp_scroll(f, a);
	draw_graph(f, a, w, &f->g, top, rows);
	if (f->side) {
		draw_graph(f, a, w, &f->before, top, rows);
		tui_role_on(w, ROLE_DIM);
		for (int y = top; y < top + rows; y++)
			mvwaddstr(w, y, f->g.x0 - 1, tui_glyphs()->vline);
	}
	if (profile__total(a->disp) <= 0) {
		const char *m = profile__total(a->base) > 0 ? "no stacks match the filters"
							    : "no samples yet";

		tui_role_on(w, ROLE_DIM);
		wmove(w, top + rows / 2, a->cols / 2 - (int)strlen(m) / 2);
		tui_put(w, m, strlen(m), a->cols);
	}
}

static bool move_vertical(struct flame *f, struct tui_app *a, bool to_parent)
{
	const struct profile *p = a->disp;

	if (to_parent) {
		if (f->sel.n <= a->zoom.n) {
			app_msg(a, ROLE_DIM, "at the zoomed root (Esc zooms out)");
			return false;
		}
		select_node(f, p, profile__node(p, f->sel_node)->parent);
		return true;
	}
	size_t nk = profile__child_count(p, f->sel_node);

	if (nk && !ARRAY_GROW(f->kids, f->kcap, nk)) {
		uint32_t best = PROFILE_NONE;

		/* The heaviest child as shown (in a comparison: "after"), among those drawn. */
		nk = profile__children(p, f->sel_node, ORDER_WEIGHT, f->kids);
		for (size_t i = 0; i < nk; i++)
			if (rect_of(f, f->kids[i]) >= 0 &&
			    (best == PROFILE_NONE || tui_total(p, f->kids[i]) > tui_total(p, best)))
				best = f->kids[i];
		if (best != PROFILE_NONE) {
			select_node(f, p, best);
			return true;
		}
	}
	app_msg(a, ROLE_DIM, nk ? "children are too narrow to show (Enter zooms in)" : "a leaf frame");
	return false;
}

static void move_sideways(struct flame *f, struct tui_app *a, int dir)
{
	long i = rect_of(f, f->sel_node);

	if (i < 0) {
		select_node(f, a->disp, f->zoom_node);
		return;
	}
	for (long k = i + dir; k >= 0 && k < (long)f->g.nr; k += dir)
		if (f->g.r[k].depth == f->g.r[i].depth) {
			select_node(f, a->disp, f->g.r[k].node);
			return;
		}
}

static void next_match(struct flame *f, struct tui_app *a, int dir)
{
	long i = rect_of(f, f->sel_node), n = (long)f->g.nr;

	if (!a->match_on) {
		app_msg(a, ROLE_STATUS_ALERT, "no search: use / or # first");
		return;
	}
	if (i < 0)
		i = dir > 0 ? -1 : 0;
	for (long step = 1; step <= n; step++) {
		long k = ((i + dir * step) % n + n) % n;

		if (app_matches(a, profile__node(a->disp, f->g.r[k].node)->frame)) {
			select_node(f, a->disp, f->g.r[k].node);
			return;
		}
	}
	app_msg(a, ROLE_STATUS_ALERT, "no match visible at this zoom");
}

static void zoom_to(struct flame *f, struct tui_app *a, uint32_t node)
{
	if (!path_of(&a->zoom, a->disp, node))
		return;
	f->zoom_node = node;
	f->scroll = 0;
	f->follow = true;
	f->layout_ok = false;
}

/* Selects the heaviest node of frames named name_id, zoom reset (app_show_frame). */
static void jump(struct flame *f, struct tui_app *a, uint32_t name_id)
{
	const struct profile *p;
	const struct frames *ft;
	uint32_t best = PROFILE_ROOT, n;

	p = a->disp;
	ft = profile__frames(p);
	n = profile__node_count(p);
	for (uint32_t i = 1; i < n; i++) {
		const struct profile_node *nd = profile__node(p, i);

		if (frames__get(ft, nd->frame)->name == name_id &&
		    (best == PROFILE_ROOT || nd->total > profile__node(p, best)->total))
			best = i;
	}
	zoom_to(f, a, PROFILE_ROOT);
	select_node(f, p, best);
}

static bool flame_action(struct view *v, struct tui_app *a, int action)
{
	struct flame *f = v->state;
	const struct profile *p = a->disp;

	ensure_layout(f, a);
	switch (action) {
	case F_UP:
		return move_vertical(f, a, !a->flame);
	case F_DOWN:
		return move_vertical(f, a, a->flame);
	case F_LEFT:
		move_sideways(f, a, -1);
		break;
	case F_RIGHT:
		move_sideways(f, a, 1);
		break;
	case F_ZOOM:
		if (f->sel_node == f->zoom_node) {
			app_msg(a, ROLE_DIM, "select a frame below the root to zoom into it");
			break;
		}
		zoom_to(f, a, f->sel_node);
		break;
	case F_UNZOOM:
		if (!a->zoom.n) {
			app_msg(a, ROLE_DIM, "not zoomed");
			break;
		}
		zoom_to(f, a, profile__node(p, f->zoom_node)->parent);
		break;
	case F_RESET:
		zoom_to(f, a, PROFILE_ROOT);
		select_node(f, p, PROFILE_ROOT);
		break;
	case F_NEXT:
	case F_PREV:
		next_match(f, a, action == F_NEXT ? 1 : -1);
		break;
	case F_SAME_NAME:
		if (f->sel_node == PROFILE_ROOT) {
			app_msg(a, ROLE_DIM, "select a frame first");
			break;
		}
		app_match_name(a, frames__get(profile__frames(p), profile__node(p, f->sel_node)->frame)->name);
		break;
	case F_ORIENT:
		a->flame = !a->flame;
		app_msg(a, ROLE_STATUS, a->flame ? "flame graph: root at the bottom"
						 : "icicle graph: root on top");
		break;
	case F_COLORS:
		cycle_colors(a);
		break;
	case F_PGUP:
	case F_PGDN:
		f->scroll += ((action == F_PGUP) == !a->flame ? -1 : 1) * (f->rows / 2 ? f->rows / 2 : 1);
		clamp_scroll(f, a);
		break;
	case F_HOME:
		select_node(f, p, f->zoom_node);
		break;
	case F_SIDE:
		if (!profile__two_column(p)) {
			app_msg(a, ROLE_STATUS_ALERT, "side by side compares two profiles: set a "
				"baseline with b first");
			break;
		}
		a->side_by_side = !a->side_by_side;
		app_msg(a, ROLE_STATUS, a->side_by_side ? "side by side: before | after"
							: "one graph of the change");
		break;
	}
	return true;
}

static void flame_mouse(struct view *v, struct tui_app *a, const struct tui_input *in)
{
	struct flame *f = v->state;
	int rel = in->y - a->view_top;

	ensure_layout(f, a);
	if (in->bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
		bool up = in->bstate & BUTTON4_PRESSED;

		f->scroll += (up == !a->flame ? -3 : 3);
		clamp_scroll(f, a);
		return;
	}
	if (a->flame)
		rel = f->rows - 1 - rel;
	uint32_t depth = (uint32_t)(rel + f->scroll);

	const struct layout *g = f->side && in->x < f->g.x0 ? &f->before : &f->g;
	int x = in->x - g->x0;

	for (size_t i = 0; i < g->nr; i++)
		if (g->r[i].depth == depth && x >= g->r[i].x && x < g->r[i].x + g->r[i].w) {
			select_node(f, a->disp, g->r[i].node);
			if (in->bstate & BUTTON1_DOUBLE_CLICKED && g->r[i].node != f->zoom_node)
				zoom_to(f, a, g->r[i].node);
			return;
		}
}

static void flame_detail(struct view *v, struct tui_app *a, WINDOW *w, int y)
{
	struct flame *f = v->state;
	const struct profile *p = a->disp;
	const struct frames *ft = profile__frames(p);
	const struct profile_node *nd = profile__node(p, f->sel_node);
	const struct frame *fr = frames__get(ft, nd->frame);
	const struct strtab *st = frames__strtab(ft);
	double all = tui_total(p, PROFILE_ROOT), vt = tui_total(p, f->sel_node);
	double vs = tui_self(p, f->sel_node);
	char rest[512], tot[32], self[32];
	int n = 0, wd;

	tui_fmt_value(profile__kind(p), vt, tot, sizeof(tot));
	tui_fmt_value(profile__kind(p), vs, self, sizeof(self));
	if (f->sel_node != PROFILE_ROOT) {
		n += snprintf(rest + n, sizeof(rest) - (size_t)n, "  [%s]", frame_kind_str(fr->kind));
		if (fr->module)
			n += snprintf(rest + n, sizeof(rest) - (size_t)n, "  %.200s", strtab__str(st, fr->module));
	}
	n += snprintf(rest + n, sizeof(rest) - (size_t)n, "  total %s (%.2f%%)  self %s (%.2f%%)", tot,
		      tui_pct(vt, all), self, tui_pct(vs, all));
	if (profile__two_column(p)) {
		/* Differential: what the frame had before, and its own change. */
		char bt[32], bs[32], ds[32];
		double before_all = profile__node(p, PROFILE_ROOT)->total;
		double d = vs - nd->self;

		tui_fmt_value(profile__kind(p), nd->total, bt, sizeof(bt));
		tui_fmt_value(profile__kind(p), nd->self, bs, sizeof(bs));
		tui_fmt_value(profile__kind(p), d < 0 ? -d : d, ds, sizeof(ds));
		n += snprintf(rest + n, sizeof(rest) - (size_t)n,
			      "  before: total %s (%.2f%%) self %s  self %c%s", bt,
			      tui_pct(nd->total, before_all), bs, d < 0 ? '-' : '+', ds);
	}
	if (fr->file && f->sel_node != PROFILE_ROOT)
		n += snprintf(rest + n, sizeof(rest) - (size_t)n, "  %.200s:%u", strtab__str(st, fr->file),
			      fr->line);
	wmove(w, y, 0);
	tui_role_on(w, ROLE_DETAIL);
	wd = tui_width(rest, (size_t)n);
	if (f->sel_node == PROFILE_ROOT)
		tui_put(w, "all", 3, a->cols);
	else
		tui_put_fit(w, frames__name(ft, nd->frame), frames__name_len(ft, nd->frame),
			    a->cols - wd > 12 ? a->cols - wd : 12);
	int x = getcurx(w);

	tui_put(w, rest, (size_t)n, a->cols - x);
}

static void flame_free(struct view *v)
{
	struct flame *f = v ? v->state : NULL;

	if (f) {
		free(f->sel.v);
		free(f->g.r);
		free(f->before.r);
		free(f->kids);
		free(f->wk);
	}
	view__free(v);
}

struct view *flame_view_new(void)
{
	static const struct view tmpl = {
		.name = "Flame",
		.keys = flame_keys,
		.nkeys = sizeof(flame_keys) / sizeof(flame_keys[0]),
		.draw = flame_draw,
		.action = flame_action,
		.mouse = flame_mouse,
		.detail = flame_detail,
		.changed = flame_changed,
		.free = flame_free,
	};

	return view__new(&tmpl, sizeof(struct flame));
}
