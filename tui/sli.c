/* The Containers pane: one row per group (host, containers, pods, services, cgroups) with the
 * last interval's SLIs as % of wall time, p99 latencies, PSI and CPU throttling, sortable, with a
 * 60-interval sparkline of the sorted column; Enter opens a group: each SLI's figures, the
 * histogram of one as bars, its top threads, and keys to its flame graphs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "list.h"
#include "text.h"
#include "../model/sli.h"
#include "util/duration.h"
#include "util/grow.h"

enum sli_action { S_OPEN = LIST_ACTIONS, S_BACK, S_SORT_NEXT, S_SORT_PREV, S_ONCPU, S_OFFCPU,
		  S_TIMELINE, S_SPAN };

static const struct tui_key sli_keys[] = {
	TUI_LIST_KEYS, /* in a group: its SLIs */
	{ { '\n', KEY_ENTER }, S_OPEN, "open the group: SLI figures, histogram, top threads",
	  "Open" },
	{ { TUI_KEY_ESC, KEY_BACKSPACE, KEY_LEFT }, S_BACK, "back to the group table", NULL },
	{ { KEY_F(6), '>' }, S_SORT_NEXT, "sort by the next column", "Sort" },
	{ { '<' }, S_SORT_PREV, "sort by the previous column", NULL },
	{ { 'f' }, S_ONCPU, "on-CPU flame graph of the group (container filter, or its busiest "
			    "process)", "Flame" },
	{ { 'F' }, S_OFFCPU, "off-CPU flame graph of the group", NULL },
	{ { 't' }, S_TIMELINE, "thread timeline (Threads pane) of the group", "Threads" },
	{ { 'a' }, S_SPAN, "group histogram: last interval / since the start", NULL },
};

/* Table columns; each is sortable. */
enum col_kind { CK_NAME, CK_PCT, CK_P99, CK_RATE, CK_PSI, CK_THR };

struct col {
	const char *label;
	int width;
	enum col_kind kind;
	int arg;    /* SLI (PCT, P99, RATE) or PSI index */
	int series; /* sparkline series */
	const char *help;
};

static const struct col cols[] = {
	{ "Group", 0, CK_NAME, 0, SLI_CPU_WAIT, "group" },
	{ "Wait%", 6, CK_PCT, SLI_CPU_WAIT, SLI_CPU_WAIT, "cpu_wait, % of wall time" },
	{ "Wp99", 7, CK_P99, SLI_CPU_WAIT, SLI_CPU_WAIT, "cpu_wait p99" },
	{ "Sleep%", 7, CK_PCT, SLI_CPU_SLEEP, SLI_CPU_SLEEP, "cpu_sleep, % of wall time" },
	{ "Blk%", 6, CK_PCT, SLI_CPU_BLOCK, SLI_CPU_BLOCK, "cpu_block" },
	{ "IOw%", 6, CK_PCT, SLI_CPU_IOWAIT, SLI_CPU_IOWAIT, "cpu_iowait" },
	{ "LSys%", 6, CK_PCT, SLI_CPU_LONGSYS, SLI_CPU_LONGSYS, "cpu_longsys" },
	{ "Recl%", 6, CK_PCT, SLI_MEM_RECLAIM, SLI_MEM_RECLAIM, "mem_reclaim" },
	{ "Swap%", 6, CK_PCT, SLI_MEM_SWAPIN, SLI_MEM_SWAPIN, "mem_swapin" },
	{ "Cmpt%", 6, CK_PCT, SLI_MEM_COMPACT, SLI_MEM_COMPACT, "mem_compact" },
	{ "IO/s", 6, CK_RATE, SLI_BIO_LATENCY, SLI_BIO_LATENCY, "block requests per second" },
	{ "IOp99", 7, CK_P99, SLI_BIO_LATENCY, SLI_BIO_LATENCY, "bio_latency p99" },
	{ "Pcpu", 5, CK_PSI, SLI_PSI_CPU_SOME, SLI_SERIES_PSI_CPU, "PSI cpu some, %" },
	{ "Pmem", 5, CK_PSI, SLI_PSI_MEM_SOME, SLI_SERIES_PSI_MEM, "PSI memory some, %" },
	{ "Pio", 5, CK_PSI, SLI_PSI_IO_SOME, SLI_SERIES_PSI_IO, "PSI io some, %" },
	{ "Thr%", 5, CK_THR, 0, SLI_SERIES_THROTTLED, "CPU throttled, % of wall time" },
};
#define NCOLS (int)(sizeof(cols) / sizeof(cols[0]))
#define NAME_W 22     /* the group column, at least */
#define NAME_W_MAX 48 /* wide terminals give long cgroup paths this much */

struct sli_pane {
	bool attached;	   /* asked the source to start collecting */
	char attach_err[256];
	int sort;	   /* column */
	struct tui_list list; /* the groups in the sorted order */
	struct tui_list slis; /* in a group: the SLI whose histogram shows */
	char sel_id[256];  /* the selected group, kept across updates */
	bool open;	   /* a group is open */
	bool since_start;  /* in a group: histogram since the start, else the last interval */
	const struct sli_group **rows;
	size_t nrows, caprows;
	const struct sli *model; /* what the rows were taken from */
};

static const struct sli *model_of(struct tui_app *a)
{
	return a->src->ops->data ? a->src->ops->data(a->src->ctx, TUI_DATA_SLI) : NULL;
}

static double col_value(const struct sli *s, const struct sli_group *g, int c)
{
	const struct col *cd = &cols[c];

	switch (cd->kind) {
	case CK_PCT:
		return sli_group__pct(s, g, (enum sli_kind)cd->arg);
	case CK_P99:
		if (!(s->have & 1u << cd->arg))
			return NAN;
		return g->d_hist[cd->arg].count ? (double)hist_quantile(&g->d_hist[cd->arg], 0.99)
						: 0;
	case CK_RATE:
		if (!(s->have & 1u << cd->arg) || !(s->dt > 0))
			return NAN;
		return (double)g->d_count[cd->arg] / s->dt;
	case CK_PSI:
		return g->psi[cd->arg];
	case CK_THR:
		return g->throttled_pct;
	default:
		return NAN;
	}
}

static int cmp_rows(const void *x, const void *y, void *arg)
{
	const struct sli_group *a = *(const struct sli_group *const *)x;
	const struct sli_group *b = *(const struct sli_group *const *)y;
	const struct sli_pane *p = arg;
	const struct sli *sort_model = p->model;
	int sort_col = p->sort;

	if (sort_col == 0) {
		if (a->kind != b->kind)
			return a->kind < b->kind ? -1 : 1;
		return strcmp(a->name, b->name);
	}
	double va = col_value(sort_model, a, sort_col), vb = col_value(sort_model, b, sort_col);

	if (isnan(va) != isnan(vb))
		return isnan(va) ? 1 : -1;
	if (!isnan(va) && va != vb)
		return va < vb ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* Rebuilds the sorted rows from the model and finds the selected group again. */
static void refresh_rows(struct sli_pane *p, const struct sli *s)
{
	p->nrows = 0;
	if (!s)
		return;
	if (ARRAY_GROW(p->rows, p->caprows, s->n))
		return;
	for (size_t i = 0; i < s->n; i++)
		p->rows[p->nrows++] = s->groups[i];
	p->model = s;
	if (p->nrows > 1)
		qsort_r(p->rows, p->nrows, sizeof(*p->rows), cmp_rows, p);
	if (p->list.sel >= p->nrows)
		p->list.sel = p->nrows ? p->nrows - 1 : 0;
	for (size_t i = 0; i < p->nrows; i++)
		if (!strcmp(p->rows[i]->id, p->sel_id))
			p->list.sel = i;
}

static void fmt_col(const struct sli *s, const struct sli_group *g, int c, char *buf, size_t n)
{
	double v = col_value(s, g, c);

	if (isnan(v))
		snprintf(buf, n, "-");
	else if (cols[c].kind == CK_P99)
		duration_format(v, buf, n);
	else if (v >= 99.95 || cols[c].kind == CK_RATE)
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.1f", v);
}

/* A sparkline of width w over the series' last points, scaled to its own peak (at least 1). */
static void draw_spark(WINDOW *w, const struct sli *s, const struct sli_group *g, int series,
		       int width)
{
	static const char *const utf8[] = { " ", "\u2581", "\u2582", "\u2583", "\u2584",
					    "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char *const ascii[] = { " ", ".", ".", ":", ":", "=", "=", "#", "#" };
	const char *const *glyph = tui_text_utf8() ? utf8 : ascii;
	unsigned n = s->nspark, from = n > (unsigned)width ? n - (unsigned)width : 0;
	double peak = 1;

	for (unsigned i = from; i < n; i++) {
		double v = sli_group__spark(s, g, (unsigned)series, i);

		if (v > peak)
			peak = v;
	}
	tui_pad(w, width - (int)(n - from));
	for (unsigned i = from; i < n; i++) {
		double v = sli_group__spark(s, g, (unsigned)series, i);
		int lvl = isnan(v) || v <= 0 ? 0 : 1 + (int)(v / peak * 7.999);

		waddstr(w, glyph[lvl > 8 ? 8 : lvl]);
	}
}

static void draw_table(struct sli_pane *p, struct tui_app *a, const struct sli *s, WINDOW *w,
		       int top, int rows)
{
	const char *mark = tui_glyphs()->sort_down;
	int used = 0, spark_w, name_w = NAME_W, rest = 2 + 30;
	char buf[128];

	/* Room beyond every column and a 30-point sparkline goes to the group names. */
	for (int c = 1; c < NCOLS; c++)
		rest += cols[c].width + 1;
	if (a->cols - rest > name_w)
		name_w = a->cols - rest > NAME_W_MAX ? NAME_W_MAX : a->cols - rest;

	tui_list_show(&p->list, p->nrows, rows - 1);
	wmove(w, top, 0);
	tui_role_on(w, ROLE_TABLE_HEADER);
	for (int c = 0; c < NCOLS; c++) {
		int width = c ? cols[c].width : name_w, lw = (int)strlen(cols[c].label);
		bool on = p->sort == c;

		if (used + width + 1 > a->cols)
			break;
		if (c == 0) {
			if (on)
				used += tui_put(w, mark, strlen(mark), a->cols - used);
			used += tui_put(w, cols[c].label, (size_t)lw, a->cols - used);
			tui_pad(w, name_w - lw - (on ? 1 : 0));
			used = name_w;
			continue;
		}
		tui_pad(w, 1 + width - lw - (on ? 1 : 0));
		if (on)
			tui_put(w, mark, strlen(mark), 1);
		tui_put(w, cols[c].label, (size_t)lw, lw);
		used += width + 1;
	}
	spark_w = a->cols - used - 2;
	if (spark_w > SLI_SPARK)
		spark_w = SLI_SPARK;
	if (spark_w >= 8) {
		int pts = (int)s->nspark < spark_w ? (int)s->nspark : spark_w;

		/* cpu_longsys is off by default (its system call hooks tax every call): say so. */
		snprintf(buf, sizeof(buf), "  %s, last %d s%s", p->sort ? cols[p->sort].label : "Wait%",
			 s->dt > 0 ? (int)lround(s->dt * pts) : pts,
			 s->have & 1u << SLI_CPU_LONGSYS ? "" : "  (LSys% off: --longsys MS)");
		used += tui_put(w, buf, strlen(buf), a->cols - used);
	}
	tui_pad(w, a->cols - used);
	for (int r = 0; r < rows - 1 && p->list.scroll + r < (int)p->nrows; r++) {
		const struct sli_group *g = p->rows[p->list.scroll + r];
		bool sel = (size_t)(p->list.scroll + r) == p->list.sel;

		wmove(w, top + 1 + r, 0);
		tui_role_on(w, sel ? ROLE_SELECTION
				   : g->kind == SLI_G_CONTAINER ? ROLE_FRAME_CONTAINER
				   : g->kind == SLI_G_POD	 ? ROLE_FRAME_POD
								 : ROLE_NORMAL);
		used = tui_put_fit(w, g->name, strlen(g->name), name_w - 1);
		tui_pad(w, name_w - used);
		if (!sel)
			tui_role_on(w, ROLE_NORMAL);
		used = name_w;
		for (int c = 1; c < NCOLS; c++) {
			if (used + cols[c].width + 1 > a->cols)
				break;
			fmt_col(s, g, c, buf, sizeof(buf));
			tui_printf(w, cols[c].width + 1, "%*s", cols[c].width + 1, buf);
			used += cols[c].width + 1;
		}
		if (spark_w >= 8) {
			tui_pad(w, 2);
			draw_spark(w, s, g, cols[p->sort].series, spark_w);
			used += 2 + spark_w;
		}
		if (sel)
			tui_pad(w, a->cols - used);
	}
	if (!p->nrows) {
		tui_role_on(w, ROLE_DIM);
		mvwaddstr(w, top + rows / 2, a->cols / 2 - 10, "no groups measured yet");
	}
}

/* The histogram of h as bars, one row per power of two. */
static int draw_hist(struct tui_app *a, WINDOW *w, int y, int rows, const struct hist *h)
{
	const char *bar = tui_text_utf8() ? "\u2588" : "#";
	uint64_t oct[64] = { 0 }, peak = 0, lo, hi, n;
	unsigned idx = 0, b;
	int first = 64, last = -1, drawn = 0;

	while (hist_next(h, &idx, &b, &n)) {
		int o;

		hist_bucket_range(b, &lo, &hi);
		o = lo ? 63 - __builtin_clzll(lo) : 0;
		oct[o] += n;
		first = o < first ? o : first;
		last = o > last ? o : last;
	}
	for (int o = first; o <= last; o++)
		peak = oct[o] > peak ? oct[o] : peak;
	for (int o = first; o <= last && drawn < rows; o++, drawn++) {
		char l[16], r[16];
		int bw = a->cols - 34, len;

		duration_format(o ? (double)(1ull << o) : 0, l, sizeof(l));
		duration_format((double)(2ull << o), r, sizeof(r));
		wmove(w, y + drawn, 0);
		tui_role_on(w, ROLE_NORMAL);
		tui_printf(w, a->cols, "  %7s - %-7s %10llu ", l, r, (unsigned long long)oct[o]);
		len = peak ? (int)((double)oct[o] / (double)peak * bw + 0.5) : 0;
		if (!len && oct[o])
			len = 1;
		tui_role_on(w, ROLE_FRAME_KERNEL);
		for (int i = 0; i < len && i < bw; i++)
			waddstr(w, bar);
	}
	return drawn;
}

static void draw_group(struct sli_pane *p, struct tui_app *a, const struct sli *s,
		       const struct sli_group *g, WINDOW *w, int top, int rows)
{
	int y = top, end = top + rows;
	char a1[16], a2[16], a3[16], a4[16];
	const struct hist *h;

	wmove(w, y++, 0);
	tui_role_on(w, ROLE_TABLE_HEADER);
	tui_printf(w, a->cols, "%s  (%s)  PSI: %s  throttling: %s", g->name, sli_gkind_str(g->kind),
		   g->psi_src ? g->psi_src : "missing", g->thr_src ? g->thr_src : "missing");
	tui_pad(w, a->cols);
	wmove(w, y++, 0);
	tui_role_on(w, ROLE_TABLE_HEADER);
	tui_printf(w, a->cols, "  %-13s %7s %8s %8s %8s %8s %12s  %s", "SLI", "%wall", "count/s",
		   "p50", "p99", "max", "total", "hook");
	tui_pad(w, a->cols);
	for (int k = 0; k < SLI_MAX && y < end; k++) {
		const struct hist *dh = &g->d_hist[k];
		bool have = s->have & 1u << k, sel = k == (int)p->slis.sel;
		char pct[16], rate[16];

		wmove(w, y++, 0);
		tui_role_on(w, sel ? ROLE_SELECTION : have ? ROLE_NORMAL : ROLE_DIM);
		duration_format(dh->count ? (double)hist_quantile(dh, 0.5) : NAN, a1, sizeof(a1));
		duration_format(dh->count ? (double)hist_quantile(dh, 0.99) : NAN, a2, sizeof(a2));
		duration_format(dh->count ? (double)dh->max : NAN, a3, sizeof(a3));
		duration_format((double)g->ns[k], a4, sizeof(a4));
		snprintf(pct, sizeof(pct), "%.1f", sli_group__pct(s, g, (enum sli_kind)k));
		snprintf(rate, sizeof(rate), "%.0f", s->dt > 0 ? (double)g->d_count[k] / s->dt : 0);
		if (have)
			tui_printf(w, a->cols, "%s %-13s %7s %8s %8s %8s %8s %12s  %s", sel ? ">" : " ",
				   sli_name(k), pct, rate, a1, a2, a3, a4, sli__hook(s, k));
		else
			tui_printf(w, a->cols, "  %-13s %7s  %s", sli_name(k), "-",
				   k == SLI_MEM_SWAPIN && s->notes ? s->notes
								   : "not measured: the kernel lacks its hook");
		tui_pad(w, a->cols);
	}
	h = p->since_start ? &g->hist[(int)p->slis.sel] : &g->d_hist[(int)p->slis.sel];
	if (y < end) {
		wmove(w, y++, 0);
		tui_role_on(w, ROLE_TABLE_HEADER);
		tui_printf(w, a->cols, "  %s histogram, %s: %llu delays", sli_name((int)p->slis.sel),
			   p->since_start ? "since the start" : "last interval",
			   (unsigned long long)h->count);
		tui_pad(w, a->cols);
	}
	int hrows = (end - y) / 2;

	y += draw_hist(a, w, y, hrows > 1 ? hrows : 1, h);
	if (y + 1 >= end)
		return;
	wmove(w, y++, 0);
	tui_role_on(w, ROLE_TABLE_HEADER);
	tui_printf(w, a->cols, "  %-8s %-16s %9s %9s %9s %9s %9s %9s %9s  (top threads, totals)",
		   "TID", "COMM", "wait", "sleep", "block", "iowait", "longsys", "reclaim", "bio");
	tui_pad(w, a->cols);
	for (size_t i = 0; i < g->nthreads && y < end; i++) {
		const struct sli_thread *t = &g->threads[i];
		static const int ks[] = { SLI_CPU_WAIT, SLI_CPU_SLEEP, SLI_CPU_BLOCK, SLI_CPU_IOWAIT,
					  SLI_CPU_LONGSYS, SLI_MEM_RECLAIM, SLI_BIO_LATENCY };
		char v[7][16];

		for (int j = 0; j < 7; j++)
			duration_format((double)t->ns[ks[j]], v[j], sizeof(v[j]));
		wmove(w, y++, 0);
		tui_role_on(w, ROLE_NORMAL);
		tui_printf(w, a->cols, "  %-8u %-16s %9s %9s %9s %9s %9s %9s %9s", t->tid, t->comm,
			   v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
	}
}

static void sli_draw(struct view *v, struct tui_app *a, WINDOW *w, int top, int rows)
{
	struct sli_pane *p = v->state;
	const struct sli *s;

	if (!p->attached) {
		p->attached = true;
		if (a->src->ops->attach &&
		    a->src->ops->attach(a->src->ctx, TUI_DATA_SLI, p->attach_err,
					sizeof(p->attach_err)) == 0)
			p->attach_err[0] = 0;
		else if (!p->attach_err[0] && !model_of(a))
			snprintf(p->attach_err, sizeof(p->attach_err),
				 "no SLI data in this source (record with --type sli)");
	}
	s = model_of(a);
	refresh_rows(p, s);
	for (int r = top; r < top + rows; r++) {
		wmove(w, r, 0);
		tui_role_on(w, ROLE_NORMAL);
		tui_pad(w, a->cols);
	}
	if (!s) {
		tui_role_on(w, p->attach_err[0] ? ROLE_ERROR : ROLE_DIM);
		wmove(w, top + rows / 2, 2);
		tui_printf(w, a->cols - 4, "%s",
			   p->attach_err[0] ? p->attach_err : "waiting for the first interval");
		return;
	}
	if (p->open && p->nrows)
		draw_group(p, a, s, p->rows[p->list.sel], w, top, rows);
	else
		draw_table(p, a, s, w, top, rows);
}

/* Opens the view of key (0: the flame view of type t) narrowed to the selected group: containers
 * and pods by name, other groups by their process that lost the most time. */
static void to_view(struct sli_pane *p, struct tui_app *a, int key, enum stack_type t)
{
	const struct sli_group *g = p->nrows ? p->rows[p->list.sel] : NULL;
	const char *what = key ? "thread timeline" : stack_type_name(t);
	bool ok;

	if (!g)
		return;
	if (g->kind == SLI_G_CONTAINER || g->kind == SLI_G_POD) {
		/* "[Con]web": the name of the [Con]/[Pod] root frames the filter matches. */
		ok = app_show_filtered(a, key, t, g->name + (strlen(g->name) > 5 ? 5 : 0), 0);
		if (ok)
			app_msg(a, ROLE_STATUS, "%s of %s", what, g->name);
	} else if (g->kind == SLI_G_HOST || !g->nthreads) {
		ok = app_show_filtered(a, key, t, NULL, 0);
		if (ok)
			app_msg(a, ROLE_STATUS, "%s of the whole host", what);
	} else {
		ok = app_show_filtered(a, key, t, NULL, g->threads[0].tgid);
		if (ok)
			app_msg(a, ROLE_STATUS, "%s of pid %u, the process of %s that lost the most time",
				what, g->threads[0].tgid, g->name);
	}
	if (!ok)
		app_msg(a, ROLE_STATUS_ALERT, "no %s view in this galatop", what);
}

/* Keeps the selected group across updates. */
static void note_sel(struct sli_pane *p)
{
	if (p->nrows)
		snprintf(p->sel_id, sizeof(p->sel_id), "%s", p->rows[p->list.sel]->id);
}

static bool sli_action(struct view *v, struct tui_app *a, int action)
{
	struct sli_pane *p = v->state;

	refresh_rows(p, model_of(a));
	switch (action) {
	case S_OPEN:
		if (p->nrows)
			p->open = true;
		return true;
	case S_BACK:
		p->open = false;
		return true;
	case S_SORT_NEXT:
	case S_SORT_PREV:
		p->sort = (p->sort + (action == S_SORT_NEXT ? 1 : NCOLS - 1)) % NCOLS;
		refresh_rows(p, model_of(a));
		tui_list_top(&p->list);
		note_sel(p);
		app_msg(a, ROLE_STATUS, "sorted by %s", cols[p->sort].help);
		return true;
	case S_ONCPU:
	case S_OFFCPU:
		to_view(p, a, 0, action == S_ONCPU ? STACK_ONCPU : STACK_OFFCPU);
		return true;
	case S_TIMELINE:
		to_view(p, a, '3', a->ptype);
		return true;
	case S_SPAN:
		p->since_start = !p->since_start;
		return true;
	}
	if (p->open) {
		p->slis.page = SLI_MAX;
		tui_list_move(&p->slis, SLI_MAX, action);
	} else {
		tui_list_move(&p->list, p->nrows, action);
		note_sel(p);
	}
	return true;
}

static void sli_mouse(struct view *v, struct tui_app *a, const struct tui_input *in)
{
	struct sli_pane *p = v->state;

	if (p->open)
		return;
	refresh_rows(p, model_of(a));
	if (tui_list_mouse(&p->list, p->nrows, in, a->view_top + 1) >= 0 &&
	    (in->bstate & BUTTON1_DOUBLE_CLICKED))
		p->open = true;
	note_sel(p);
}

static void sli_detail(struct view *v, struct tui_app *a, WINDOW *w, int y)
{
	struct sli_pane *p = v->state;
	const struct sli *s = model_of(a);

	wmove(w, y, 0);
	tui_role_on(w, ROLE_DETAIL);
	if (!s || !p->nrows)
		return;
	const struct sli_group *g = p->rows[p->list.sel < p->nrows ? p->list.sel : 0];

	tui_printf(w, a->cols, "%s [%s]  interval %.1f s  %s  - = source missing%s%s", g->name,
		   sli_gkind_str(g->kind), s->dt, cols[p->sort].help, s->notes ? "  " : "",
		   s->notes ? s->notes : "");
}

static void sli_free(struct view *v)
{
	if (v && v->state)
		free(((struct sli_pane *)v->state)->rows);
	view__free(v);
}

struct view *sli_view_new(void)
{
	static const struct view tmpl = {
		.name = "Containers",
		.key = '5',
		.keys = sli_keys,
		.nkeys = sizeof(sli_keys) / sizeof(sli_keys[0]),
		.draw = sli_draw,
		.action = sli_action,
		.mouse = sli_mouse,
		.detail = sli_detail,
		.free = sli_free,
	};
	struct view *v = view__new(&tmpl, sizeof(struct sli_pane));

	if (v)
		((struct sli_pane *)v->state)->sort = 1; /* cpu_wait first */
	return v;
}
