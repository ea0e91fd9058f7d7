/* The top view: a flat table of functions with self and total value, like perf top. Total
 * counts a function once per stack even when it recurses. The leak profile adds, from the
 * live set (TUI_DATA_LEAK), the allocations each function holds and the age of its oldest. */
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "model/leak.h"
#include "list.h"
#include "text.h"
#include "util/grow.h"

enum top_action { T_JUMP = LIST_ACTIONS, T_SORT_NEXT, T_SORT_PREV };
enum top_sort { SORT_SELF = 0, SORT_TOTAL, SORT_NAME, SORT_MAX };

static const struct tui_key top_keys[] = {
	TUI_LIST_KEYS,
	{ { '\n', KEY_ENTER }, T_JUMP, "show this function in the flame view, highlighted",
	  "Flame" },
	{ { KEY_F(6), '>' }, T_SORT_NEXT, "sort by the next column (Self, Total, Function)", "Sort" },
	{ { '<' }, T_SORT_PREV, "sort by the previous column", NULL },
};

struct top_row {
	uint32_t name;	/* strtab id */
	uint32_t frame; /* a frame with that name, for the detail line */
	double self, total;
	double dself, dtotal; /* differential profiles: change since "before" */
};

struct top {
	struct top_row *rows;
	size_t n, cap;
	unsigned long gen;
	bool ok;
	enum top_sort sort;
	struct tui_list list;
	uint32_t sel_name;
	const struct strtab *st; /* names of the rows */
};

static int cmp_rows(const void *x, const void *y, void *arg)
{
	const struct top_row *a = x, *b = y;
	const struct top *t = arg;
	enum top_sort s = t->sort;

	if (s == SORT_SELF && a->self != b->self)
		return a->self < b->self ? 1 : -1;
	if (s != SORT_NAME && a->total != b->total)
		return a->total < b->total ? 1 : -1;
	if (s == SORT_TOTAL && a->self != b->self)
		return a->self < b->self ? 1 : -1;
	return strcmp(strtab__str(t->st, a->name), strtab__str(t->st, b->name));
}

/* Sorts the rows and finds the selected function again. */
static void sort_rows(struct top *t)
{
	if (t->n) /* rows is NULL before the first function */
		qsort_r(t->rows, t->n, sizeof(*t->rows), cmp_rows, t);
	t->list.sel = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].name == t->sel_name)
			t->list.sel = i;
}

/* Sums self and once-per-stack total per function name over the display profile. */
static void compute(struct top *t, struct tui_app *a)
{
	const struct profile *p = a->disp;
	const struct frames *ft = profile__frames(p);
	uint32_t nnames = strtab__count(frames__strtab(ft)), depth = 0;
	size_t maxd = (size_t)profile__max_depth(p) + 2;
	struct top_row *acc = calloc(nnames ? nnames : 1, sizeof(*acc));
	uint32_t *onstack = calloc(nnames ? nnames : 1, sizeof(*onstack));
	uint32_t *stack = malloc(maxd * sizeof(*stack)), *it = malloc(maxd * sizeof(*it));

	t->ok = true;
	t->gen = a->gen;
	t->st = frames__strtab(ft);
	t->n = 0;
	if (!acc || !onstack || !stack || !it)
		goto out;
	stack[0] = PROFILE_ROOT;
	it[0] = profile__node(p, PROFILE_ROOT)->first_child;
	depth = 1;
	while (depth) {
		uint32_t c = it[depth - 1];

		if (c == PROFILE_NONE) {
			uint32_t node = stack[--depth];

			if (node != PROFILE_ROOT)
				onstack[frames__get(ft, profile__node(p, node)->frame)->name]--;
			continue;
		}
		const struct profile_node *nd = profile__node(p, c);
		uint32_t name = frames__get(ft, nd->frame)->name;

		it[depth - 1] = nd->next_sibling;
		acc[name].name = name;
		acc[name].frame = nd->frame;
		acc[name].self += tui_self(p, c);
		acc[name].dself += tui_self(p, c) - nd->self;
		if (!onstack[name]++) {
			acc[name].total += tui_total(p, c);
			acc[name].dtotal += tui_total(p, c) - nd->total;
		}
		stack[depth] = c;
		it[depth] = nd->first_child;
		depth++;
	}
	for (uint32_t i = 0; i < nnames; i++)
		if (acc[i].total > 0 || acc[i].self > 0) {
			if (ARRAY_GROW(t->rows, t->cap, t->n + 1))
				break;
			t->rows[t->n++] = acc[i];
		}
	sort_rows(t);
out:
	free(acc);
	free(onstack);
	free(stack);
	free(it);
}

static void ensure(struct top *t, struct tui_app *a)
{
	if (!t->ok || t->gen != a->gen)
		compute(t, a);
}

/* "+1.2k", "-300", "0": a signed change in the profile's unit. */
static void fmt_delta(const struct profile *p, double d, char *buf, size_t n)
{
	char v[24];

	tui_fmt_value(profile__kind(p), d < 0 ? -d : d, v, sizeof(v));
	snprintf(buf, n, "%s%s", d > 0 ? "+" : d < 0 ? "-" : "", v);
}

/* The live set's figures per function, when the leak profile is shown and the source has them. */
static const struct leak_by_name *leak_names(struct tui_app *a)
{
	const struct leak_by_name *b;

	if (a->ptype != STACK_LEAK || !a->src->ops->data)
		return NULL;
	b = a->src->ops->data(a->src->ctx, TUI_DATA_LEAK);
	return b && b->n ? b : NULL;
}

/* "  Count  Oldest" of function name: the allocations it holds and its oldest block's age. */
static void leak_cells(const struct leak_by_name *b, uint32_t name, char *buf, size_t n)
{
	char age[16] = "-";

	if (name < b->n && b->oldest[name]) {
		double s = (double)(b->at - b->oldest[name]) / 1e9;

		if (s < 60)
			snprintf(age, sizeof(age), "%.1fs", s);
		else if (s < 3600)
			snprintf(age, sizeof(age), "%.1fm", s / 60);
		else
			snprintf(age, sizeof(age), "%.1fh", s / 3600);
	}
	snprintf(buf, n, "%9.0f %7s  ", name < b->n ? b->count[name] : 0.0, age);
}

static void top_draw(struct view *v, struct tui_app *a, WINDOW *w, int top, int rows)
{
	struct top *t = v->state;
	const struct leak_by_name *lk = leak_names(a);
	double all = tui_total(a->disp, PROFILE_ROOT);
	bool diff = profile__two_column(a->disp);
	const char *mark = tui_glyphs()->sort_down;
	char line[128];

	ensure(t, a);
	tui_list_show(&t->list, t->n, rows - 1);
	wmove(w, top, 0);
	tui_role_on(w, ROLE_TABLE_HEADER);
	/* Header: the sorted column carries the marker; labels align with the numbers. */
	static const char *const labels[SORT_MAX] = { "Self%", "Total%", "Function" };
	static const int widths[SORT_MAX] = { 8, 8, 0 };
	int used = 0;

	for (int c = 0; c < SORT_MAX; c++) {
		bool on = t->sort == (enum top_sort)c;
		int pad = widths[c] - (int)strlen(labels[c]) - (on ? 1 : 0);

		if (c == SORT_NAME) {
			snprintf(line, sizeof(line), " %12s %12s  %s", diff ? "Self +/-" : "Self",
				 diff ? "Total +/-" : "Total", lk ? "    Count  Oldest  " : "");
			used += tui_put(w, line, strlen(line), a->cols - used);
		} else if (c) {
			used += tui_put(w, " ", 1, a->cols - used);
		}
		tui_pad(w, pad > 0 ? pad : 0);
		used += pad > 0 ? pad : 0;
		if (on)
			used += tui_put(w, mark, strlen(mark), a->cols - used);
		used += tui_put(w, labels[c], strlen(labels[c]), a->cols - used);
	}
	tui_pad(w, a->cols - used);
	for (int r = 0; r < rows - 1 && t->list.scroll + r < (int)t->n; r++) {
		const struct top_row *row = &t->rows[t->list.scroll + r];
		char sv[32], tv[32];
		enum tui_role role = ROLE_NORMAL;

		if ((size_t)(t->list.scroll + r) == t->list.sel)
			role = ROLE_SELECTION;
		else if (app_matches(a, row->frame))
			role = ROLE_MATCH;
		if (diff) {
			/* Differential: the change of each function's value since "before". */
			fmt_delta(a->disp, row->dself, sv, sizeof(sv));
			fmt_delta(a->disp, row->dtotal, tv, sizeof(tv));
		} else {
			tui_fmt_value(profile__kind(a->disp), row->self, sv, sizeof(sv));
			tui_fmt_value(profile__kind(a->disp), row->total, tv, sizeof(tv));
		}
		snprintf(line, sizeof(line), "%7.2f%% %7.2f%% %12s %12s  ", tui_pct(row->self, all),
			 tui_pct(row->total, all), sv, tv);
		if (lk)
			leak_cells(lk, row->name, line + strlen(line), sizeof(line) - strlen(line));
		wmove(w, top + 1 + r, 0);
		tui_role_on(w, role);
		used = tui_put(w, line, strlen(line), a->cols);
		used += tui_put_fit(w, strtab__str(t->st, row->name), strtab__len(t->st, row->name),
				    a->cols - used);
		if (role != ROLE_NORMAL)
			tui_pad(w, a->cols - used);
	}
	if (!t->n) {
		tui_role_on(w, ROLE_DIM);
		mvwaddstr(w, top + rows / 2, a->cols / 2 - 7, "no samples yet");
	}
}

static bool top_action(struct view *v, struct tui_app *a, int action)
{
	struct top *t = v->state;

	ensure(t, a);
	switch (action) {
	case T_JUMP:
		if (!t->n)
			return false;
		app_show_frame(a, t->rows[t->list.sel].name);
		return true;
	case T_SORT_NEXT:
	case T_SORT_PREV:
		t->sort = (enum top_sort)((t->sort + (action == T_SORT_NEXT ? 1 : SORT_MAX - 1)) % SORT_MAX);
		sort_rows(t);
		tui_list_top(&t->list);
		app_msg(a, ROLE_STATUS, "sorted by %s", t->sort == SORT_SELF ? "self" :
							  t->sort == SORT_TOTAL ? "total" : "function name");
		break;
	default:
		tui_list_move(&t->list, t->n, action);
		break;
	}
	if (t->n)
		t->sel_name = t->rows[t->list.sel].name;
	return true;
}

static void top_mouse(struct view *v, struct tui_app *a, const struct tui_input *in)
{
	struct top *t = v->state;

	long r;

	ensure(t, a);
	r = tui_list_mouse(&t->list, t->n, in, a->view_top + 1);
	if (t->n)
		t->sel_name = t->rows[t->list.sel].name;
	if (r >= 0 && (in->bstate & BUTTON1_DOUBLE_CLICKED))
		top_action(v, a, T_JUMP);
}

static void top_detail(struct view *v, struct tui_app *a, WINDOW *w, int y)
{
	struct top *t = v->state;
	const struct frames *ft = profile__frames(a->disp);
	double all = tui_total(a->disp, PROFILE_ROOT);
	char rest[512], sv[32], tv[32];
	int n, used;

	ensure(t, a);
	wmove(w, y, 0);
	tui_role_on(w, ROLE_DETAIL);
	if (!t->n)
		return;
	const struct top_row *row = &t->rows[t->list.sel];
	const struct frame *fr = frames__get(ft, row->frame);

	tui_fmt_value(profile__kind(a->disp), row->self, sv, sizeof(sv));
	tui_fmt_value(profile__kind(a->disp), row->total, tv, sizeof(tv));
	n = snprintf(rest, sizeof(rest), "  [%s]%s%.200s  total %s (%.2f%%)  self %s (%.2f%%)",
		     frame_kind_str(fr->kind), fr->module ? "  " : "",
		     fr->module ? strtab__str(t->st, fr->module) : "", tv, tui_pct(row->total, all),
		     sv, tui_pct(row->self, all));
	used = tui_width(rest, (size_t)n);
	used = tui_put_fit(w, strtab__str(t->st, row->name), strtab__len(t->st, row->name),
			   a->cols - used > 12 ? a->cols - used : 12);
	tui_put(w, rest, (size_t)n, a->cols - used);
}

static void top_changed(struct view *v, struct tui_app *a)
{
	struct top *t = v->state;

	t->ok = false;
	/* The source renewed its frame table: carry the name over. */
	if (a->ft_prev && t->st && t->sel_name < strtab__count(t->st)) {
		const struct strtab *st = frames__strtab(profile__frames(a->disp));

		t->sel_name = strtab__find(st, strtab__str(t->st, t->sel_name),
					   strtab__len(t->st, t->sel_name));
		t->st = st;
	}
}

static void top_free(struct view *v)
{
	if (v && v->state)
		free(((struct top *)v->state)->rows);
	view__free(v);
}

struct view *top_view_new(void)
{
	static const struct view tmpl = {
		.name = "Top",
		.keys = top_keys,
		.nkeys = sizeof(top_keys) / sizeof(top_keys[0]),
		.draw = top_draw,
		.action = top_action,
		.mouse = top_mouse,
		.detail = top_detail,
		.changed = top_changed,
		.free = top_free,
	};

	return view__new(&tmpl, sizeof(struct top));
}
