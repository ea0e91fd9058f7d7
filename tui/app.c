/* The application: shared state, the global key table and its actions, prompts and input
 * dispatch (the terminal's lifecycle is in run.c). */
#include "app.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "text.h"
#include "util/grow.h"

enum global_action {
	G_HELP = 1,
	G_COST,
	G_SEARCH,
	G_NEXT_VIEW,
	G_VIEW1,
	G_VIEW2,
	G_VIEW3,
	G_VIEW4,
	G_VIEW5,
	G_VIEW6,
	G_ALL_TIME,
	G_BASELINE,
	G_MATCH_FILTER,
	G_KERNEL,
	G_THREADS,
	G_PID,
	G_CONTAINER,
	G_COMM,
	G_FREEZE,
	G_MODE,
	G_PTYPE,
	G_CPUS,
	G_SAVE,
	G_THEME,
	G_REDRAW,
	G_QUIT,
};

/* The first entry (help) leads the key bar; the view's own entries follow, then the rest. */
static const struct tui_key global_keys[] = {
	{ { KEY_F(1), '?' }, G_HELP, "show this help (any key closes it)", "Help" },
	{ { '/' }, G_SEARCH, "search frames by regex (POSIX extended); empty clears", "Search" },
	{ { '\t' }, G_NEXT_VIEW, "next view (Flame, Top, Threads, L7, Containers, Heatmap)", "Views" },
	{ { '1' }, G_VIEW1, "flame view", NULL },
	{ { '2' }, G_VIEW2, "top view: flat table of functions", NULL },
	{ { '3' }, G_VIEW3, "threads view: what every thread does over time", NULL },
	{ { '4' }, G_VIEW4, "L7 pane: HTTP, SQL, Redis, DNS requests (starts the L7 capture)",
	  NULL },
	{ { '5' }, G_VIEW5, "Containers pane: CPU, memory and I/O delays per group (SLI probes)",
	  NULL },
	{ { '6' }, G_VIEW6, "heatmap: samples per 50 ms over the history; pick a time range", NULL },
	{ { 'a' }, G_ALL_TIME, "all time: drop the range picked in the heatmap", NULL },
	{ { 'b' }, G_BASELINE, "baseline to compare with: what is shown, a range, the first N "
			       "seconds or a file; empty clears", NULL },
	{ { '\\' }, G_MATCH_FILTER, "show only stacks containing search matches (toggle)", NULL },
	{ { 'K' }, G_KERNEL, "hide/show kernel frames", NULL },
	{ { 'H' }, G_THREADS, "roots: per thread, process, command, none", NULL },
	{ { 'p' }, G_PID, "filter by pid (stacks under [PID]comm roots); empty clears", NULL },
	{ { 'c' }, G_CONTAINER, "filter by container or pod (hex id or name); empty clears",
	  NULL },
	{ { 'C' }, G_COMM, "filter by command name (comm); empty clears", NULL },
	{ { 'z' }, G_FREEZE, "freeze the display; collection goes on", "Freeze" },
	{ { 'm' }, G_MODE, "cycle update mode: accumulate, sliding window, decay", NULL },
	{ { 'o' }, G_PTYPE, "type: oncpu, offcpu, mem, leak, growth", NULL },
	{ { 'u' }, G_CPUS, "cycle the CPUs shown: all, CPU 0, CPU 1, ... (kernel filter; restarts "
			   "the profiles)", NULL },
	{ { 's' }, G_SAVE, "save what is shown (zoom and filters) to files", "Save" },
	{ { 'T' }, G_THEME, "cycle color theme", NULL },
	{ { '$' }, G_COST, "galatop's own cost: its CPU, its probes' kernel time per family and "
			  "program (live; any key closes it)", NULL },
	{ { TUI_CTRL('l') }, G_REDRAW, "redraw the screen", NULL },
	{ { 'q', KEY_F(10) }, G_QUIT, "quit", "Quit" },
};

const struct tui_key *app_global_keys(size_t *n)
{
	*n = sizeof(global_keys) / sizeof(global_keys[0]);
	return global_keys;
}

void app_msg(struct tui_app *a, enum tui_role role, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->msg, sizeof(a->msg), fmt, ap);
	va_end(ap);
	a->msg_role = role;
}

void app_prompt(struct tui_app *a, enum prompt_kind k, const char *init)
{
	a->prompt.kind = k;
	snprintf(a->prompt.buf, sizeof(a->prompt.buf), "%s", init ? init : "");
	a->prompt.len = strlen(a->prompt.buf);
	a->prompt.err[0] = 0;
}

const struct slices *app_history(const struct tui_app *a, enum stack_type t)
{
	return a->src->ops->history ? a->src->ops->history(a->src->ctx, t) : NULL;
}

void app_show(struct tui_app *a, int i)
{
	if (i >= 0 && i < a->nviews)
		a->active = i;
}

void app_show_frame(struct tui_app *a, uint32_t name_id)
{
	app_match_name(a, name_id);
	a->jump_name = name_id + 1;
	app_show(a, VIEW_FLAME);
}

bool app_show_key(struct tui_app *a, int key)
{
	for (int i = 0; i < a->nviews; i++)
		if (a->views[i]->key == key) {
			a->active = i;
			return true;
		}
	return false;
}

bool app_show_filtered(struct tui_app *a, int key, enum stack_type t, const char *container,
		       uint32_t pid)
{
	int i = VIEW_FLAME;

	if (key)
		for (i = a->nviews - 1; i >= 0 && a->views[i]->key != key; i--)
			;
	if (i < 0)
		return false;
	snprintf(a->filter.container, sizeof(a->filter.container), "%s", container ? container : "");
	a->filter.pid = pid;
	if (a->src->ops->profile(a->src->ctx, t))
		a->ptype = t;
	app_rebuild(a);
	app_show(a, i);
	return true;
}

/* Grows the match bitset to the frame table and matches the frames not covered yet. */
static void match_extend(struct tui_app *a, bool all)
{
	const struct frames *ft = profile__frames(a->disp);
	uint32_t n = frames__count(ft), from = all ? 0 : a->nbits;

	if (!a->match_on)
		return;
	if (n > a->bits_cap) {
		uint32_t cap = n + n / 2 + 64;

		if (ARRAY_RESIZE(a->bits, cap / 8 + 1)) {
			app_msg(a, ROLE_ERROR, "out of memory for the search");
			return;
		}
		a->bits_cap = cap;
	}
	if (from < n)
		frames__match(ft, a->match_by_name ? NULL : &a->re, a->match_name, a->bits,
				 from, n);
	a->nbits = n;
}

static void filter_sync(struct tui_app *a)
{
	a->filter.only = a->match_filter && a->match_on ? a->bits : NULL;
	a->filter.only_nbits = a->nbits;
}

uint32_t app_frame_carry(const struct tui_app *a, uint32_t id)
{
	return a->ft_prev ? frames__find_from(profile__frames(a->disp), a->ft_prev, id) : id;
}

/* The source renewed its frame table (a live view does, so that names of processes long gone
 * do not pile up; the old table is valid until its next update): what holds frame or name ids
 * carries them over by name. */
static void carry_frames(struct tui_app *a)
{
	const struct frames *ft = profile__frames(a->base);

	a->ft_prev = NULL;
	if (a->base == a->empty)
		return;
	if (a->ft_seen && a->ft_seen != ft) {
		a->ft_prev = a->ft_seen;
		a->nbits = 0;
		if (a->match_on && a->match_by_name &&
		    a->match_name < strtab__count(frames__strtab(a->ft_prev))) {
			const struct strtab *from = frames__strtab(a->ft_prev);

			a->match_name = strtab__find(frames__strtab(ft),
						     strtab__str(from, a->match_name),
						     strtab__len(from, a->match_name));
		}
	}
	a->ft_seen = ft;
}

void app_rebuild(struct tui_app *a)
{
	const struct profile *p = travel_apply(a, a->src->ops->profile(a->src->ctx, a->ptype));

	a->base = p ? p : a->empty;
	profile__free(a->owned);
	a->owned = NULL;
	a->disp = a->base;
	carry_frames(a);
	match_extend(a, false);
	filter_sync(a);
	if (profile_filter__active(&a->filter)) {
		a->owned = profile__filter(a->base, &a->filter);
		if (a->owned)
			a->disp = a->owned;
		else
			app_msg(a, ROLE_ERROR, "out of memory applying the filters");
	}
	a->matched = a->match_on ? profile__matched_total(a->disp, PROFILE_ROOT, a->bits, a->nbits) : 0;
	a->gen++;
	for (int i = 0; i < a->nviews; i++)
		if (a->views[i]->changed)
			a->views[i]->changed(a->views[i], a);
	a->ft_prev = NULL;
	travel_rebuilt(a);
}

static void match_clear(struct tui_app *a)
{
	if (a->re_ok)
		regfree(&a->re);
	a->re_ok = false;
	a->match_on = false;
	a->match_desc[0] = 0;
	if (a->match_filter) {
		a->match_filter = false;
		app_msg(a, ROLE_STATUS, "search cleared; match filter off");
	}
	app_rebuild(a);
}

/* Makes the current regex or name the match set and refreshes what depends on it. */
static void match_set(struct tui_app *a)
{
	a->match_on = true;
	match_extend(a, true);
	app_rebuild(a);
}

void app_match_name(struct tui_app *a, uint32_t name_id)
{
	const struct strtab *st = frames__strtab(profile__frames(a->disp));

	if (a->re_ok)
		regfree(&a->re);
	a->re_ok = false;
	a->match_by_name = true;
	a->match_name = name_id;
	snprintf(a->match_desc, sizeof(a->match_desc), "#%s", strtab__str(st, name_id));
	match_set(a);
}

/* Accepts the prompt's text; returns false (with prompt.err set) to keep it open. */
static bool prompt_accept(struct tui_app *a)
{
	struct prompt *pr = &a->prompt;
	const char *why = NULL;
	uint32_t pid;
	regex_t re;
	int r;

	switch (pr->kind) {
	case PROMPT_SEARCH:
		if (!pr->len) {
			match_clear(a);
			return true;
		}
		r = regcomp(&re, pr->buf, REG_EXTENDED | REG_NOSUB);
		if (r) {
			char e[128];

			regerror(r, &re, e, sizeof(e));
			snprintf(pr->err, sizeof(pr->err), "invalid regex: %s", e);
			return false;
		}
		if (a->re_ok)
			regfree(&a->re);
		a->re = re;
		a->re_ok = true;
		a->match_by_name = false;
		snprintf(a->match_desc, sizeof(a->match_desc), "/%.150s", pr->buf);
		match_set(a);
		return true;
	case PROMPT_PID:
		if (!pr->len)
			a->filter.pid = 0;
		else if (filter_check_pid(pr->buf, &pid, &why) == 0)
			a->filter.pid = pid;
		break;
	case PROMPT_COMM:
		if (!pr->len || filter_check_comm(pr->buf, &why) == 0)
			snprintf(a->filter.comm, sizeof(a->filter.comm), "%.15s", pr->buf);
		break;
	case PROMPT_CONTAINER:
		if (!pr->len || filter_check_container(pr->buf, &why) == 0)
			snprintf(a->filter.container, sizeof(a->filter.container), "%.64s", pr->buf);
		break;
	case PROMPT_SAVE:
		if (!pr->len) {
			snprintf(pr->err, sizeof(pr->err), "a file name is needed");
			return false;
		}
		export_save(a, pr->buf);
		return true;
	case PROMPT_BASELINE:
		return travel_baseline(a, pr->buf, pr->err, sizeof(pr->err)) == 0;
	default:
		return true;
	}
	if (why) {
		snprintf(pr->err, sizeof(pr->err), "rejected: %s", why);
		return false;
	}
	app_rebuild(a);
	if (profile__total(a->disp) <= 0 && profile__total(a->base) > 0)
		app_msg(a, ROLE_STATUS_ALERT, "no stacks match the filters");
	return true;
}

static void prompt_key(struct tui_app *a, int key)
{
	struct prompt *pr = &a->prompt;

	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (prompt_accept(a))
			pr->kind = PROMPT_NONE;
		return;
	case TUI_KEY_ESC:
	case TUI_CTRL('g'):
		pr->kind = PROMPT_NONE;
		return;
	case KEY_BACKSPACE:
	case 127:
	case TUI_CTRL('h'):
		if (pr->len)
			pr->buf[--pr->len] = 0;
		break;
	case TUI_CTRL('u'):
		pr->len = 0;
		pr->buf[0] = 0;
		break;
	default:
		/* Bytes of UTF-8 text pass; other control keys are ignored. */
		if (key >= 0x20 && key <= 0xff && key != 127 && pr->len + 1 < sizeof(pr->buf)) {
			pr->buf[pr->len++] = (char)key;
			pr->buf[pr->len] = 0;
		}
		return;
	}
	pr->err[0] = 0;
}

static void theme_next(struct tui_app *a)
{
	char err[256];

	if (a->depth == DEPTH_NONE) {
		app_msg(a, ROLE_STATUS, "colors are off (--no-color or NO_COLOR): theme mono");
		return;
	}
	for (size_t tries = 0; tries < a->nthemes; tries++) {
		struct tui_theme t;

		a->theme_idx = (a->theme_idx + 1) % a->nthemes;
		if (tui_theme_load(a->themes[a->theme_idx], &t, err, sizeof(err)) == 0) {
			a->theme = t;
			tui_theme_apply(&a->theme, a->depth);
			app_msg(a, ROLE_STATUS, "theme: %s (%s)", a->theme.name,
				tui_depth_str(a->depth));
			return;
		}
		app_msg(a, ROLE_ERROR, "%s", err);
	}
}

static void global_action(struct tui_app *a, int action)
{
	struct tui_stats st;
	int r;

	switch (action) {
	case G_HELP:
		a->help = true;
		break;
	case G_COST:
		if (a->src->ops->data && a->src->ops->data(a->src->ctx, TUI_DATA_COST))
			a->cost = true;
		else
			app_msg(a, ROLE_DIM, "galatop's own cost is known live only");
		break;
	case G_SEARCH:
		app_prompt(a, PROMPT_SEARCH, NULL);
		break;
	case G_NEXT_VIEW:
		app_show(a, (a->active + 1) % a->nviews);
		break;
	case G_VIEW1:
		app_show(a, VIEW_FLAME);
		break;
	case G_VIEW2:
		app_show(a, VIEW_TOP);
		break;
	case G_VIEW3:
		app_show_key(a, '3');
		break;
	case G_VIEW4:
		app_show_key(a, '4');
		break;
	case G_VIEW5:
		app_show_key(a, '5');
		break;
	case G_VIEW6:
		app_show_key(a, '6');
		break;
	case G_ALL_TIME:
		app_all_time(a);
		break;
	case G_BASELINE:
		app_prompt(a, PROMPT_BASELINE, a->travel.base.ft ? "" : ".");
		break;
	case G_MATCH_FILTER:
		if (!a->match_on) {
			app_msg(a, ROLE_STATUS_ALERT, "no search to filter by: use / or # first");
			break;
		}
		a->match_filter = !a->match_filter;
		app_rebuild(a);
		app_msg(a, ROLE_STATUS, "match filter %s", a->match_filter ? "on" : "off");
		break;
	case G_KERNEL:
		a->filter.hide_kernel = !a->filter.hide_kernel;
		app_rebuild(a);
		app_msg(a, ROLE_STATUS, "kernel frames %s", a->filter.hide_kernel ? "hidden" : "shown");
		break;
	case G_THREADS: {
		/* Cycles thread -> process -> command -> none; thread only when there are threads. */
		static const enum group_by cycle[] = { GROUP_THREAD, GROUP_PROCESS, GROUP_COMMAND,
						       GROUP_NONE };
		static const char *const says[GROUP_MAX] = {
			[GROUP_THREAD] = "per thread", [GROUP_PROCESS] = "per process ([PID]comm)",
			[GROUP_COMMAND] = "per command (its processes merged)",
			[GROUP_NONE] = "none (every process merged)",
		};
		enum group_by g = a->filter.regroup ? a->filter.group : GROUP_THREAD;
		bool threads = profile__has_threads(a->base);
		size_t k = 0;

		while (k < GROUP_MAX && cycle[k] != g)
			k++;
		do
			g = cycle[++k % GROUP_MAX];
		while (g == GROUP_THREAD && !threads);
		a->filter.regroup = true;
		a->filter.group = g;
		app_rebuild(a);
		app_msg(a, ROLE_STATUS, "roots: %s", says[g]);
		break;
	}
	case G_PID:
		app_prompt(a, PROMPT_PID, NULL);
		break;
	case G_CONTAINER:
		app_prompt(a, PROMPT_CONTAINER, NULL);
		break;
	case G_COMM:
		app_prompt(a, PROMPT_COMM, NULL);
		break;
	case G_FREEZE:
		a->frozen = !a->frozen;
		a->src->ops->stats(a->src->ctx, &st);
		a->frozen_samples = st.samples;
		if (!a->frozen) {
			app_tick(a);
			app_msg(a, ROLE_STATUS, "display follows the data again");
		}
		break;
	case G_MODE: {
		enum tui_mode m = (enum tui_mode)((a->mode + 1) % MODE_MAX);

		r = a->src->ops->set_mode ? a->src->ops->set_mode(a->src->ctx, m, 10) : -ENOTSUP;
		if (r == -ENOTSUP) {
			app_msg(a, ROLE_STATUS_ALERT, "update modes apply to live data, not to a file");
			break;
		}
		if (r) {
			app_msg(a, ROLE_ERROR, "cannot switch to %s: %s", tui_mode_str(m), strerror(-r));
			break;
		}
		a->mode = m;
		app_msg(a, ROLE_STATUS, "update mode: %s", tui_mode_str(m));
		break;
	}
	case G_PTYPE: {
		int t = a->ptype;
		bool attached = false;
		char why[256] = "";

		/* The next type with data, or the next one the source can start collecting now. */
		for (int i = 1; i < STACK_TYPES; i++) {
			enum stack_type c = (enum stack_type)((a->ptype + i) % STACK_TYPES);

			if (a->src->ops->profile(a->src->ctx, c)) {
				t = c;
				break;
			}
			if (a->src->ops->attach_ptype &&
			    !a->src->ops->attach_ptype(a->src->ctx, c, why, sizeof(why))) {
				t = c;
				attached = true;
				break;
			}
		}
		if (t == (int)a->ptype) {
			if (why[0])
				app_msg(a, ROLE_ERROR, "%s", why);
			else
				app_msg(a, ROLE_STATUS_ALERT, "only %s data in this source",
					stack_type_name(a->ptype));
			break;
		}
		a->ptype = (enum stack_type)t;
		app_rebuild(a);
		if (attached)
			app_msg(a, ROLE_STATUS, "profile: %s (probe attached now: samples from here on)",
				stack_type_name(a->ptype));
		else
			app_msg(a, ROLE_STATUS, "profile: %s", stack_type_name(a->ptype));
		break;
	}
	case G_CPUS: {
		char err[160] = "";

		r = a->src->ops->next_cpus ? a->src->ops->next_cpus(a->src->ctx, err, sizeof(err))
					   : -ENOTSUP;
		if (r == -ENOTSUP && !err[0]) {
			app_msg(a, ROLE_STATUS_ALERT, "the CPU filter applies to live data, not to a file");
			break;
		}
		if (r) {
			app_msg(a, ROLE_ERROR, "%s", err[0] ? err : strerror(-r));
			break;
		}
		app_rebuild(a);
		a->src->ops->stats(a->src->ctx, &st);
		app_msg(a, ROLE_STATUS, "showing %s from now on", st.cpus ? st.cpus : "all CPUs");
		break;
	}
	case G_SAVE: {
		char name[256];

		export_default_name(a, name, sizeof(name));
		app_prompt(a, PROMPT_SAVE, name);
		break;
	}
	case G_THEME:
		theme_next(a);
		break;
	case G_REDRAW:
		a->redraw_all = true;
		break;
	case G_QUIT:
		a->quit = true;
		break;
	}
}

void app_input(struct tui_app *a, const struct tui_input *in)
{
	struct view *v = a->views[a->active];
	const struct tui_key *k;
	size_t ng;
	char name[16];

	if (in->key == KEY_RESIZE)
		return; /* the next draw lays out for the new size */
	if (in->key == KEY_MOUSE) {
		if (a->prompt.kind || a->help || a->cost)
			return;
		a->msg[0] = 0;
		if (in->y >= a->view_top && in->y < a->view_top + a->view_rows && v->mouse)
			v->mouse(v, a, in);
		return;
	}
	if (a->prompt.kind) {
		prompt_key(a, in->key);
		return;
	}
	if (a->help || a->cost) {
		a->help = a->cost = false;
		return;
	}
	a->msg[0] = 0;
	if (a->cols < TUI_MIN_COLS || a->rows < TUI_MIN_ROWS) {
		/* Too small to show anything: only quitting and redrawing make sense. */
		if (in->key == 'q' || in->key == KEY_F(10))
			a->quit = true;
		return;
	}
	k = tui_key_find(v->keys, v->nkeys, in->key);
	if (k) {
		v->action(v, a, k->action);
		return;
	}
	const struct tui_key *g = app_global_keys(&ng);

	k = tui_key_find(g, ng, in->key);
	if (k) {
		global_action(a, k->action);
		return;
	}
	tui_key_name(in->key, name, sizeof(name));
	app_msg(a, ROLE_DIM, "key %s does nothing here (F1 for help)", name);
}

void app_draw(struct tui_app *a)
{
	chrome_draw(a);
	if (a->opts->dump || a->opts->bench_frames > 0)
		return; /* the dump reads the screen buffer itself */
	if (a->cur_y >= 0) {
		curs_set(1);
		wmove(a->w, a->cur_y, a->cur_x);
	} else {
		curs_set(0);
	}
	wnoutrefresh(a->w);
	doupdate();
}

bool app_tick(struct tui_app *a)
{
	struct tui_stats st;

	if (!a->src->ops->update)
		return false;
	if (!a->frozen && a->src->ops->update(a->src->ctx))
		app_rebuild(a);
	a->src->ops->stats(a->src->ctx, &st);
	return st.live;
}

void app_colors(struct tui_app *a)
{
	char err[256];

	/* Without colors (--no-color, NO_COLOR) roles still get pairs, all default-colored, so
	 * the dump can tell roles apart; what shows is the mono theme's attributes. */
	if (has_colors()) {
		start_color();
		use_default_colors();
	}
	a->depth = tui_color_depth(a->opts->no_color);
	if (a->depth == DEPTH_NONE)
		tui_theme_load("mono", &a->theme, err, sizeof(err));
	tui_theme_apply(&a->theme, a->depth);
}

int app_init(struct tui_app *a, struct tui_source *src, const struct tui_opts *o, char *err,
	     size_t errlen)
{
	const char *want = o->theme ? o->theme : "default";
	bool ok = true;

	memset(a, 0, sizeof(*a));
	a->src = src;
	a->opts = o;
	a->filter.regroup = o->regroup;
	a->palette = PALETTE_KIND;
	a->filter.group = (enum group_by)o->group;
	if (tui_theme_load(want, &a->theme, err, errlen))
		return -EINVAL;
	a->nthemes = tui_theme_list(a->themes, TUI_MAX_THEMES);
	for (size_t i = 0; i < a->nthemes; i++)
		if (a->themes[i] && !strcmp(a->themes[i], a->theme.name))
			a->theme_idx = i;
	a->empty_st = strtab__new();
	a->empty_ft = a->empty_st ? frames__new(a->empty_st) : NULL;
	a->empty = a->empty_ft ? profile__new(a->empty_ft, VALUE_SAMPLES, false) : NULL;
	a->views[a->nviews++] = flame_view_new();
	a->views[a->nviews++] = top_view_new();
	a->views[a->nviews++] = threads_view_new();
	a->views[a->nviews++] = l7_view_new();
	a->views[a->nviews++] = sli_view_new();
	a->views[a->nviews++] = heat_view_new();
	for (int i = 0; i < a->nviews; i++)
		ok = ok && a->views[i];
	if (!ok || !a->empty) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; o->first_view && i < a->nviews; i++)
		if (!strcasecmp(a->views[i]->name, o->first_view))
			a->active = i;
	a->ptype = o->ptype;
	if (!src->ops->profile(src->ctx, a->ptype))
		for (int t = 0; t < STACK_TYPES; t++)
			if (src->ops->profile(src->ctx, (enum stack_type)t)) {
				a->ptype = (enum stack_type)t;
				break;
			}
	struct tui_stats st;

	src->ops->stats(src->ctx, &st);
	a->mode = st.mode;
	if (o->range && o->range_to > o->range_from) {
		a->travel.range_on = true;
		a->travel.from = o->range_from;
		a->travel.to = o->range_to;
	}
	app_rebuild(a);
	for (int i = 0; o->first_view && i < a->nviews; i++)
		if (!strcmp(a->views[i]->name, o->first_view))
			a->active = i;
	return 0;
}

void app_free(struct tui_app *a)
{
	for (int i = 0; i < a->nviews; i++)
		if (a->views[i])
			a->views[i]->free(a->views[i]);
	for (size_t i = 0; i < a->nthemes; i++)
		free(a->themes[i]);
	if (a->re_ok)
		regfree(&a->re);
	free(a->bits);
	free(a->zoom.v);
	travel_free(a);
	profile__free(a->owned);
	profile__free(a->empty);
	frames__free(a->empty_ft);
	strtab__free(a->empty_st);
	memset(a, 0, sizeof(*a));
}

struct view *view__new(const struct view *tmpl, size_t state_size)
{
	struct view *v = malloc(sizeof(*v));

	if (!v)
		return NULL;
	*v = *tmpl;
	v->state = calloc(1, state_size);
	if (!v->state) {
		free(v);
		return NULL;
	}
	return v;
}

void view__free(struct view *v)
{
	if (!v)
		return;
	free(v->state);
	free(v);
}
