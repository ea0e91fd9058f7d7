/* Everything around the active view: header with tabs, status bar, detail line or prompt,
 * key bar, the help overlay (generated from the key tables) and the too-small message. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "text.h"
#include "../model/cost.h"

/* Starts a line of segments at (y, x). */
static void line_at(struct tui_app *a, int y, int x)
{
	wmove(a->w, y, x);
	a->line_full = false;
}

/* Draws s in role r at the cursor within the line's remaining columns; returns columns used.
 * A segment that reaches the last column ends the line (curses moved the cursor to the next
 * one, which later segments must not spill into). */
static int seg(struct tui_app *a, enum tui_role r, const char *s)
{
	int y = getcury(a->w), room = a->cols - getcurx(a->w), used;

	if (a->measuring) {
		a->measured += tui_width(s, strlen(s));
		return 0;
	}
	if (room <= 0 || a->line_full)
		return 0;
	tui_role_on(a->w, r);
	used = tui_put(a->w, s, strlen(s), room);
	if (getcury(a->w) != y)
		a->line_full = true;
	return used;
}

static void fill_line(struct tui_app *a, enum tui_role r)
{
	int room = a->cols - getcurx(a->w);

	tui_role_on(a->w, r);
	if (room > 0 && !a->line_full)
		tui_pad(a->w, room);
}

static void draw_header(struct tui_app *a)
{
	struct tui_stats st;
	char buf[256], tot[32], right[128] = "";

	char what[256], frozen[64] = "";
	int tabs = 0, rw, fw = 0, x;
	bool compact;

	a->src->ops->stats(a->src->ctx, &st);
	tui_fmt_value(profile__kind(a->disp), tui_total(a->disp, PROFILE_ROOT), tot, sizeof(tot));
	const char *origin = st.origin ? st.origin : "";

	/* A file is named by its base name: the directory says little and costs room. */
	if (!st.live && strrchr(origin, '/'))
		origin = strrchr(origin, '/') + 1;
	snprintf(what, sizeof(what), "  %s  %s  %s %s", stack_type_name(a->ptype), origin, tot,
		 profile__kind(a->disp) == VALUE_SAMPLES ? "samples" : "total");
	if (st.live)
		snprintf(right, sizeof(right), "mode: %s%s ", tui_mode_str(a->mode),
			 a->mode == MODE_ACCUMULATE ? "" : a->mode == MODE_WINDOW ? " 10s" : " 10s half-life");
	rw = tui_width(right, strlen(right));
	if (a->frozen) {
		snprintf(frozen, sizeof(frozen), " FROZEN +%llu pending ",
			 (unsigned long long)(st.samples - a->frozen_samples));
		fw = tui_width(frozen, strlen(frozen));
	}
	/* Tabs name every pane when there is room, else only the active one (the others by key). */
	for (int i = 0; i < a->nviews; i++)
		tabs += 4 + (int)strlen(a->views[i]->name);
	compact = 9 + tabs + tui_width(what, strlen(what)) + rw + fw > a->cols;
	line_at(a, 0, 0);
	seg(a, ROLE_HEADER, " galatop ");
	for (int i = 0; i < a->nviews; i++) {
		int key = a->views[i]->key ? a->views[i]->key : '1' + i;

		if (compact && i != a->active)
			snprintf(buf, sizeof(buf), " %c", key);
		else
			snprintf(buf, sizeof(buf), " %c %s ", key, a->views[i]->name);
		seg(a, i == a->active ? ROLE_TAB_ACTIVE : ROLE_HEADER, buf);
	}
	seg(a, ROLE_HEADER, what);
	x = a->cols - rw - fw;

	/* With many panes the left part may not leave room: the mode and FROZEN win. */
	if (x < 0)
		x = 0;
	fill_line(a, ROLE_HEADER);
	line_at(a, 0, x);
	seg(a, ROLE_HEADER, right);
	seg(a, ROLE_STATUS_ALERT, frozen);
}

/* The source's messages become the status message; an error stays over later warnings. */
static void source_messages(struct tui_app *a)
{
	const char *m;
	bool error, had_error = false;

	if (!a->src->ops->message)
		return;
	while ((m = a->src->ops->message(a->src->ctx, &error))) {
		if (had_error && !error)
			continue;
		app_msg(a, error ? ROLE_ERROR : ROLE_STATUS_ALERT, "%s", m);
		had_error |= error;
	}
}

/* The status line's segments. compact leaves out the live figures that are not alerts (rate,
 * sampling, lost and dropped at 0, galatop's cost) to make room for a message. */
static void status_segments(struct tui_app *a, const struct tui_stats *st, bool compact)
{
	char buf[256];
	const struct profile_filter *f = &a->filter;

	if (st->live) {
		snprintf(buf, sizeof(buf), "%s  ", st->probes ? st->probes : "no probes");
		seg(a, ROLE_STATUS, buf);
		if (st->cpus) {
			char hms[16];

			tui_fmt_clock(st->cpus_since, hms, sizeof(hms));
			snprintf(buf, sizeof(buf), "%s since %s", st->cpus, hms);
			seg(a, ROLE_STATUS_ALERT, buf);
			seg(a, ROLE_STATUS, "  ");
		}
		if (st->trigger) {
			seg(a, st->triggered ? ROLE_STATUS_ALERT : ROLE_STATUS, st->trigger);
			seg(a, ROLE_STATUS, "  ");
		}
		if (!compact) {
			snprintf(buf, sizeof(buf), "%.0f Hz  %.0f samples/s  ", st->hz, st->samples_per_s);
			seg(a, ROLE_STATUS, buf);
		}
		if (st->sampling && st->sampling[0] && !compact) {
			snprintf(buf, sizeof(buf), "sampled %s  ", st->sampling);
			seg(a, ROLE_STATUS, buf);
		}
		if (!compact || st->lost) {
			snprintf(buf, sizeof(buf), "lost %llu%s  ", (unsigned long long)st->lost,
				 st->lost ? " (lower -F)" : "");
			seg(a, st->lost ? ROLE_STATUS_ALERT : ROLE_STATUS, buf);
		}
		if (!compact || st->dropped) {
			snprintf(buf, sizeof(buf), "dropped %llu%s", (unsigned long long)st->dropped,
				 st->dropped ? " (lower -F or raise the buffer)" : "");
			seg(a, st->dropped ? ROLE_STATUS_ALERT : ROLE_STATUS, buf);
		}
		if (st->own_cpu >= 0 && !compact) {
			snprintf(buf, sizeof(buf), "  cpu %.1f%%", st->own_cpu);
			seg(a, ROLE_STATUS, buf);
		}
		if (st->probe_cpu >= 0 && !compact) {
			snprintf(buf, sizeof(buf), " + probes %.1f%%%s ($)", st->probe_cpu,
				 st->probe_sampled ? " sampled" : "");
			seg(a, ROLE_STATUS, buf);
		}
		if (st->hint) {
			snprintf(buf, sizeof(buf), "  hint: %s", st->hint);
			seg(a, ROLE_STATUS_ALERT, buf);
		}
	} else {
		snprintf(buf, sizeof(buf), "file  %u nodes  %u frames",
			 profile__node_count(a->disp) - 1, frames__count(profile__frames(a->disp)) - 1);
		seg(a, ROLE_STATUS, buf);
	}
	if (f->regroup) {
		snprintf(buf, sizeof(buf), "  roots: %s", group_by_str(f->group));
		seg(a, ROLE_STATUS, buf);
	}
	/* The roots' grouping is a view setting, not a filter that hides samples. */
	if (f->hide_kernel || f->pid || f->comm[0] || f->container[0] || f->only || f->prefix_n ||
	    a->match_filter) {
		int n = snprintf(buf, sizeof(buf), "  filters:");

		if (f->hide_kernel)
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, " no-kernel");
		if (f->pid)
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, " pid=%u", f->pid);
		if (f->comm[0])
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, " comm=%s", f->comm);
		if (f->container[0])
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, " container=%s", f->container);
		if (a->match_filter)
			snprintf(buf + n, sizeof(buf) - (size_t)n, " matches-only");
		seg(a, ROLE_STATUS_ALERT, buf);
	}
	if (a->travel.range_on) {
		char r[96];

		travel_range_text(a, r, sizeof(r));
		snprintf(buf, sizeof(buf), "  range %s", r);
		seg(a, ROLE_STATUS_ALERT, buf);
	}
	if (a->travel.base.ft) {
		snprintf(buf, sizeof(buf), "  vs baseline %s", a->travel.base.desc);
		seg(a, ROLE_STATUS_ALERT, buf);
		travel_scale_text(a, buf, sizeof(buf));
		seg(a, ROLE_STATUS, buf);
	}
	if (a->zoom.n) {
		snprintf(buf, sizeof(buf), "  zoom depth %zu", a->zoom.n);
		seg(a, ROLE_STATUS, buf);
	}
	if (a->match_on) {
		seg(a, ROLE_STATUS, "  ");
		snprintf(buf, sizeof(buf), "Matched %.2f%%", tui_pct(a->matched, profile__total(a->disp)));
		seg(a, ROLE_MATCH, buf);
		snprintf(buf, sizeof(buf), " %s", a->match_desc);
		seg(a, ROLE_STATUS, buf);
	}
}

static void draw_status(struct tui_app *a)
{
	struct tui_stats st;
	bool compact = false;

	a->src->ops->stats(a->src->ctx, &st);
	source_messages(a);
	if (a->msg[0]) {
		a->measuring = true;
		a->measured = 0;
		status_segments(a, &st, false);
		a->measuring = false;
		compact = a->measured + 2 + tui_width(a->msg, strlen(a->msg)) > a->cols;
	}
	line_at(a, 1, 0);
	status_segments(a, &st, compact);
	if (a->msg[0]) {
		/* The message is what just happened ("profile: growth (probe attached now)", an
		 * error): the live figures made room for it above; it gets at least a third of the
		 * line, over the end of the segments before it if they took more. */
		int w = tui_width(a->msg, strlen(a->msg)) + 2, x = getcurx(a->w);
		int want = w < a->cols / 3 ? w : a->cols / 3;

		if (a->line_full || a->cols - x < want)
			line_at(a, 1, a->cols - want);
		seg(a, ROLE_STATUS, "  ");
		seg(a, a->msg_role, a->msg);
	}
	fill_line(a, ROLE_STATUS);
}

static const char *const prompt_labels[] = {
	[PROMPT_SEARCH] = "Search (regex): ",
	[PROMPT_PID] = "Filter by pid (empty clears): ",
	[PROMPT_CONTAINER] = "Container/pod id or name (empty clears): ",
	[PROMPT_COMM] = "Filter by comm (empty clears): ",
	[PROMPT_SAVE] = "Save as: ",
	[PROMPT_BASELINE] = "Baseline: ",
};

static void draw_prompt(struct tui_app *a, int y)
{
	const struct prompt *pr = &a->prompt;
	const char *label = prompt_labels[pr->kind];
	int lw = (int)strlen(label), room, bw;
	const char *text = pr->buf;
	size_t len = pr->len;

	line_at(a, y, 0);
	seg(a, ROLE_PROMPT, label);
	room = a->cols - lw - 1 - (pr->err[0] ? 20 : 0);
	/* Long input scrolls: the end, where the cursor is, stays visible. */
	while (len && (bw = tui_width(text, len)) > room) {
		text++;
		len--;
	}
	tui_role_on(a->w, ROLE_NORMAL);
	tui_put(a->w, text, len, a->cols - getcurx(a->w));
	a->cur_y = y;
	a->cur_x = getcurx(a->w);
	if (pr->err[0]) {
		seg(a, ROLE_NORMAL, "  ");
		seg(a, ROLE_ERROR, pr->err);
	}
	if (pr->kind == PROMPT_SAVE && !pr->err[0])
		seg(a, ROLE_DIM, "  (every format; a name ending in .svg, .folded or .gtop: that one)");
	if (pr->kind == PROMPT_BASELINE && !pr->err[0])
		seg(a, ROLE_DIM, "  (. what is shown, A-B seconds, first N, FILE[@A-B]; empty clears)");
	fill_line(a, ROLE_NORMAL);
}

static void bar_item(struct tui_app *a, const struct tui_key *k)
{
	char name[16];

	if (!k->bar)
		return;
	tui_key_name(k->keys[0], name, sizeof(name));
	seg(a, ROLE_KEYBAR_KEY, name);
	seg(a, ROLE_KEYBAR, " ");
	seg(a, ROLE_KEYBAR, k->bar);
	seg(a, ROLE_KEYBAR_KEY, " ");
}

static void draw_keybar(struct tui_app *a)
{
	const struct view *v = a->views[a->active];
	size_t ng;
	const struct tui_key *g = app_global_keys(&ng);

	line_at(a, a->rows - 1, 0);
	bar_item(a, &g[0]);
	for (size_t i = 0; i < v->nkeys; i++)
		bar_item(a, &v->keys[i]);
	for (size_t i = 1; i < ng; i++)
		bar_item(a, &g[i]);
	/* The last cell of the screen is left alone: writing it would scroll some terminals. */
	int room = a->cols - 1 - getcurx(a->w);

	tui_role_on(a->w, ROLE_KEYBAR);
	if (room > 0)
		tui_pad(a->w, room);
}

struct help_line {
	const char *key;  /* NULL for a heading */
	const char *text;
	char label[40];
};

static size_t help_lines(struct tui_app *a, struct help_line *out, size_t max)
{
	const struct view *v = a->views[a->active];
	size_t ng, n = 0;
	const struct tui_key *g = app_global_keys(&ng);
	static char heading[64];

	snprintf(heading, sizeof(heading), "%s view", v->name);
	out[n++] = (struct help_line){ NULL, heading, "" };
	for (size_t i = 0; i < v->nkeys && n < max; i++) {
		tui_key_label(&v->keys[i], out[n].label, sizeof(out[n].label));
		out[n].key = out[n].label;
		out[n++].text = v->keys[i].help;
	}
	if (n < max)
		out[n++] = (struct help_line){ NULL, "Everywhere", "" };
	for (size_t i = 0; i < ng && n < max; i++) {
		tui_key_label(&g[i], out[n].label, sizeof(out[n].label));
		out[n].key = out[n].label;
		out[n++].text = g[i].help;
	}
	if (n < max)
		out[n++] = (struct help_line){ "Mouse", "click selects, double-click zooms, wheel scrolls", "" };
	return n;
}

/* An empty box of w x h cells at (x0, y0) in the help role, title on its top edge. */
static void draw_box(struct tui_app *a, int x0, int y0, int w, int h, const char *title)
{
	const struct tui_glyphs *gl = tui_glyphs();

	tui_role_on(a->w, ROLE_HELP);
	for (int y = 0; y < h; y++) {
		wmove(a->w, y0 + y, x0);
		bool edge = y == 0 || y == h - 1;

		waddstr(a->w, edge ? (y ? gl->bl : gl->tl) : gl->vline);
		for (int x = 1; x < w - 1; x++)
			waddstr(a->w, edge ? gl->hline : " ");
		waddstr(a->w, edge ? (y ? gl->br : gl->tr) : gl->vline);
	}
	wmove(a->w, y0, x0 + 2);
	tui_put(a->w, title, strlen(title), w - 4);
}

static void draw_help(struct tui_app *a)
{
	struct help_line lines[96];
	size_t n = help_lines(a, lines, 96);
	int w = a->cols - 4 < 120 ? a->cols - 4 : 120, h = a->rows - 2;
	int x0 = (a->cols - w) / 2, y0 = 1, inner = h - 2;
	int ncol = (int)n > inner ? 2 : 1, colw = (w - 2) / ncol;
	char title[160];

	snprintf(title, sizeof(title), " galatop keys - theme %s (%s) - any key closes ",
		 a->theme.name, tui_depth_str(a->depth));
	draw_box(a, x0, y0, w, h, title);
	for (size_t i = 0; i < n; i++) {
		int col = (int)i / inner, row = (int)i % inner;

		if (col >= ncol)
			break;
		wmove(a->w, y0 + 1 + row, x0 + 1 + col * colw + 1);
		if (!lines[i].key) {
			tui_role_on(a->w, ROLE_TABLE_HEADER);
			tui_put(a->w, lines[i].text, strlen(lines[i].text), colw - 2);
			continue;
		}
		tui_role_on(a->w, ROLE_HELP_KEY);
		int kw = tui_put(a->w, lines[i].key, strlen(lines[i].key), 13);

		tui_role_on(a->w, ROLE_HELP);
		tui_pad(a->w, 14 - kw);
		tui_put_fit(a->w, lines[i].text, strlen(lines[i].text), colw - 16);
	}
}

/* The `$` popup: galatop's cost over the last status interval (model/cost.h's summary). */
static void draw_cost(struct tui_app *a)
{
	const struct cost *c = a->src->ops->data ? a->src->ops->data(a->src->ctx, TUI_DATA_COST)
						 : NULL;
	char text[8192];
	const char *p, *nl;
	int w = a->cols - 4 < 100 ? a->cols - 4 : 100, h = a->rows - 2, y = 1;

	if (!c)
		return;
	cost__format(c, true, text, sizeof(text));
	draw_box(a, (a->cols - w) / 2, 1, w, h,
		 c->period > 0 ? " galatop's own cost: CPU last interval, probes last sampled window - "
				 "any key closes "
			       : " galatop's own cost, last interval (BPF statistics) - any key closes ");
	for (p = text; *p && y < h - 1; p = *nl ? nl + 1 : nl, y++) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		tui_role_on(a->w, y == 2 ? ROLE_TABLE_HEADER : ROLE_HELP);
		wmove(a->w, 1 + y, (a->cols - w) / 2 + 2);
		tui_put_fit(a->w, p, (size_t)(nl - p), w - 4);
	}
}

static void draw_too_small(struct tui_app *a)
{
	char lines[3][64];

	snprintf(lines[0], sizeof(lines[0]), "terminal too small");
	snprintf(lines[1], sizeof(lines[1]), "%dx%d, need %dx%d", a->cols, a->rows, TUI_MIN_COLS,
		 TUI_MIN_ROWS);
	snprintf(lines[2], sizeof(lines[2]), "q quits");
	tui_role_on(a->w, ROLE_STATUS_ALERT);
	for (int i = 0; i < 3 && i < a->rows; i++) {
		int len = (int)strlen(lines[i]), x = (a->cols - len) / 2;

		wmove(a->w, a->rows / 2 - 1 + i >= 0 ? a->rows / 2 - 1 + i : 0, x > 0 ? x : 0);
		tui_put_fit(a->w, lines[i], (size_t)len, a->cols);
	}
}

void chrome_draw(struct tui_app *a)
{
	struct view *v = a->views[a->active];

	werase(a->w);
	getmaxyx(a->w, a->rows, a->cols);
	a->cur_y = -1;
	if (a->cols < TUI_MIN_COLS || a->rows < TUI_MIN_ROWS) {
		draw_too_small(a);
		return;
	}
	a->view_top = 2;
	a->view_rows = a->rows - 4;
	draw_header(a);
	v->draw(v, a, a->w, a->view_top, a->view_rows);
	if (a->prompt.kind)
		draw_prompt(a, a->rows - 2);
	else
		v->detail(v, a, a->w, a->rows - 2);
	/* The status line is drawn after the view: the view may leave a message. */
	draw_status(a);
	draw_keybar(a);
	if (a->help)
		draw_help(a);
	else if (a->cost)
		draw_cost(a);
}
