/* The Threads pane: one row per thread, grouped under its process (and container), time
 * running left to right with now at the right edge; each cell shows the state that filled most
 * of its time slot. A cursor moves over threads and time; Enter inspects the slot's events;
 * the lock hints (model/lockhint) head the pane. The timeline comes from the source's
 * TUI_DATA_TIMELINE; a live source attaches its probes when the pane is first shown. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "text.h"
#include "../model/lockhint.h"
#include "../model/timeline.h"
#include "util/duration.h"
#include "util/grow.h"

enum th_action { H_UP = 1, H_DOWN, H_LEFT, H_RIGHT, H_PGUP, H_PGDN, H_HOME, H_END, H_ZOOM_IN,
		 H_ZOOM_OUT, H_INSPECT, H_CLOSE, H_SORT, H_FLAME };
enum th_sort { SORT_TID = 0, SORT_CPU, SORT_LOCK, SORT_IO, SORT_MAX };

static const char *const sort_names[SORT_MAX] = { "pid/tid", "CPU time", "lock time",
						  "I/O time" };

static const struct tui_key threads_keys[] = {
	{ { KEY_UP, 'k' }, H_UP, "previous thread (inspector: scroll up)", NULL },
	{ { KEY_DOWN, 'j' }, H_DOWN, "next thread (inspector: scroll down)", NULL },
	{ { KEY_LEFT, 'h' }, H_LEFT, "cursor one time slot back", NULL },
	{ { KEY_RIGHT, 'l' }, H_RIGHT, "cursor one time slot forward", NULL },
	{ { KEY_PPAGE }, H_PGUP, "page up", NULL },
	{ { KEY_NPAGE }, H_PGDN, "page down", NULL },
	{ { KEY_HOME }, H_HOME, "cursor to the oldest slot shown", NULL },
	{ { KEY_END }, H_END, "cursor to now (the right edge)", NULL },
	{ { '+', '=' }, H_ZOOM_IN, "zoom in: shorter time slots", "Zoom" },
	{ { '-' }, H_ZOOM_OUT, "zoom out: longer time slots", NULL },
	{ { '\n', KEY_ENTER }, H_INSPECT, "inspect the slot: events, durations, attributes, stack",
	  "Inspect" },
	{ { TUI_KEY_ESC, KEY_BACKSPACE, 127 }, H_CLOSE, "close the inspector", NULL },
	{ { KEY_F(6), '>' }, H_SORT, "sort threads by pid/tid, CPU, lock or I/O time", "Sort" },
	{ { 'f' }, H_FLAME, "flame graph of this thread", "Flame" },
};

#define LEFT_W 22	/* "  TID comm" */
#define SHARE_W 11	/* share bar and a space */
#define MAX_HINTS 16
#define MIN_SLOT 1000ull	      /* 1 us */
#define MAX_SLOT 600000000000ull      /* 10 min */
#define DEFAULT_SLOT 100000000ull     /* 100 ms */

/* Glyph, role and legend word per kind; cells tie-break by this priority (lock first). */
static const struct {
	const char *utf8, *ascii, *word;
	enum tui_role role;
} kinds[TL_KIND_MAX] = {
	[TL_ONCPU] = { "\u2588", "#", "on-CPU", ROLE_HASH2 },
	[TL_RUNQ] = { "\u2592", "r", "run queue", ROLE_HASH0 },
	[TL_FILE] = { "F", "F", "file", ROLE_HASH3 },
	[TL_NET] = { "N", "N", "net", ROLE_HASH4 },
	[TL_LOCK] = { "L", "L", "lock", ROLE_HASH1 },
	[TL_SCHED] = { "z", "z", "sleep/poll", ROLE_DIM },
	[TL_DSTATE] = { "D", "D", "D-state", ROLE_FRAME_POD },
};
static const int priority[TL_KIND_MAX] = { TL_LOCK, TL_NET, TL_FILE, TL_DSTATE, TL_RUNQ,
					   TL_ONCPU, TL_SCHED };

struct row {
	bool proc;	/* a process header */
	uint32_t pid;
	long ti;	/* thread index in the timeline (thread rows) */
	uint64_t key;	/* sort value */
	uint64_t pkey;	/* the largest key in the process: groups sort by it */
};

struct threads {
	const struct timeline *tl;
	bool attach_tried;
	struct row *rows;
	size_t nrows, cap;
	size_t sel;	    /* row index of the selected thread */
	uint32_t sel_tid;
	int scroll, page;
	int cursor;	    /* slots back from the right edge */
	uint64_t slot;	    /* ns per cell */
	enum th_sort sort;
	bool frozen;
	uint64_t frozen_now;
	bool inspect;
	int inspect_scroll;
	struct tl_hint hints[MAX_HINTS];
	size_t nhints;
	int ncells;	    /* cells of the last draw */
	uint64_t t_end;	    /* right edge of the last draw */
};

static const char *glyph(int k)
{
	return tui_text_utf8() ? kinds[k].utf8 : kinds[k].ascii;
}

/* Asks the source for the timeline, attaching its probes the first time. */
static const struct timeline *timeline_of(struct threads *t, struct tui_app *a)
{
	const struct tui_source_ops *ops = a->src->ops;
	const void *d = ops->data ? ops->data(a->src->ctx, TUI_DATA_TIMELINE) : NULL;
	char err[256] = "";
	int r;

	if (!d && !t->attach_tried && ops->attach) {
		t->attach_tried = true;
		r = ops->attach(a->src->ctx, TUI_DATA_TIMELINE, err, sizeof(err));
		if (r)
			app_msg(a, ROLE_ERROR, "threads: %s", err[0] ? err : strerror(-r));
		else
			app_msg(a, ROLE_STATUS, "thread probes attached: timelines start now");
		d = ops->data ? ops->data(a->src->ctx, TUI_DATA_TIMELINE) : NULL;
	}
	t->tl = d;
	return d;
}

static uint64_t now_of(struct threads *t, struct tui_app *a)
{
	uint64_t now = timeline__now(t->tl);

	if (a->frozen && !t->frozen) {
		t->frozen = true;
		t->frozen_now = now;
	} else if (!a->frozen) {
		t->frozen = false;
	}
	return t->frozen ? t->frozen_now : now;
}

/* Whether thread i passes the app's filters (pid, process comm, container, search). */
static bool shown(const struct tui_app *a, const struct timeline *tl, size_t i)
{
	const struct tl_thread *th = timeline__thread(tl, i);
	const struct tl_process *p = timeline__process_find(tl, th->pid);
	const struct strtab *st = timeline__strtab_c(tl);

	if (a->filter.pid && th->pid != a->filter.pid)
		return false;
	if (a->filter.comm[0] && (!p || strcmp(strtab__str(st, p->name), a->filter.comm)))
		return false;
	if (a->filter.container[0]) {
		size_t n = strlen(a->filter.container);

		if (!p || (strncmp(strtab__str(st, p->container_id), a->filter.container, n) &&
			   strcmp(strtab__str(st, p->container), a->filter.container)))
			return false;
	}
	if (a->match_on && a->re_ok && !a->match_by_name &&
	    regexec(&a->re, strtab__str(st, th->comm), 0, NULL, 0))
		return false;
	return true;
}

static uint64_t sort_key(const struct threads *t, size_t i, uint64_t t0, uint64_t t1)
{
	uint64_t by[TL_KIND_MAX];

	if (t->sort == SORT_TID)
		return 0;
	timeline__time_by_kind(t->tl, i, t0, t1, by);
	switch (t->sort) {
	case SORT_CPU:
		return by[TL_ONCPU];
	case SORT_LOCK:
		return by[TL_LOCK];
	default:
		return by[TL_FILE] + by[TL_NET];
	}
}

static const struct timeline *sort_tl;

static int cmp_rows(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	const struct tl_thread *ta, *tb;

	if (a->pkey != b->pkey)
		return a->pkey > b->pkey ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->proc != b->proc)
		return a->proc ? -1 : 1;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	ta = timeline__thread(sort_tl, (size_t)a->ti);
	tb = timeline__thread(sort_tl, (size_t)b->ti);
	return ta->tid < tb->tid ? -1 : ta->tid > tb->tid;
}

static int add_row(struct threads *t, struct row r)
{
	if (ARRAY_GROW(t->rows, t->cap, t->nrows + 1))
		return -ENOMEM;
	t->rows[t->nrows++] = r;
	return 0;
}

/* Rows: a header per process, its threads below; sorted so that the heaviest process and
 * thread come first (by the sort key's process maximum). */
static void build_rows(struct threads *t, struct tui_app *a, uint64_t t0, uint64_t t1)
{
	const struct timeline *tl = t->tl;
	size_t n = timeline__nthreads(tl), np = 0;

	t->nrows = 0;
	for (size_t i = 0; i < n; i++) {
		if (!shown(a, tl, i))
			continue;
		add_row(t, (struct row){ false, timeline__thread(tl, i)->pid, (long)i,
					 sort_key(t, i, t0, t1), 0 });
	}
	np = t->nrows;
	/* A header per process; every row of a process carries its largest key. */
	for (size_t i = 0; i < np; i++) {
		size_t j;

		for (j = np; j < t->nrows; j++)
			if (t->rows[j].pid == t->rows[i].pid)
				break;
		if (j == t->nrows && add_row(t, (struct row){ true, t->rows[i].pid, -1, 0, 0 }))
			continue;
		if (t->rows[i].key > t->rows[j].pkey)
			t->rows[j].pkey = t->rows[i].key;
	}
	for (size_t i = 0; i < np; i++)
		for (size_t j = np; j < t->nrows; j++)
			if (t->rows[j].pid == t->rows[i].pid)
				t->rows[i].pkey = t->rows[j].pkey;
	sort_tl = tl;
	qsort(t->rows, t->nrows, sizeof(*t->rows), cmp_rows);
	/* Keep the selection on the same thread. */
	t->sel = 0;
	for (size_t i = 0; i < t->nrows; i++)
		if (!t->rows[i].proc) {
			if (!t->sel && t->rows[t->sel].proc)
				t->sel = i;
			if (timeline__thread(tl, (size_t)t->rows[i].ti)->tid == t->sel_tid) {
				t->sel = i;
				break;
			}
		}
	if (t->nrows && !t->rows[t->sel].proc)
		t->sel_tid = timeline__thread(tl, (size_t)t->rows[t->sel].ti)->tid;
}

static void keep_visible(struct threads *t)
{
	if (t->page < 1)
		t->page = 1;
	if ((int)t->sel < t->scroll)
		t->scroll = (int)t->sel > 0 && t->rows[t->sel - 1].proc ? (int)t->sel - 1
									: (int)t->sel;
	if ((int)t->sel >= t->scroll + t->page)
		t->scroll = (int)t->sel - t->page + 1;
	if (t->scroll < 0)
		t->scroll = 0;
}

/* Time per kind in each of ncells slots ending at t1, from events ev[0..n). */
static void fill_cells(uint64_t (*acc)[TL_KIND_MAX], int ncells, uint64_t t0, uint64_t slot,
		       const struct tl_event *ev, size_t n)
{
	uint64_t t1 = t0 + (uint64_t)ncells * slot;

	memset(acc, 0, (size_t)ncells * sizeof(*acc));
	for (size_t k = 0; k < n; k++) {
		uint64_t s = ev[k].start < t0 ? t0 : ev[k].start, e = ev[k].end > t1 ? t1 : ev[k].end;

		/* A call shorter than a slot still marks it. */
		if (e <= s && ev[k].start >= t0 && ev[k].start < t1)
			e = s + 1;
		for (uint64_t c = (s - t0) / slot; s < e && c < (uint64_t)ncells; c++) {
			uint64_t ce = t0 + (c + 1) * slot, part = (e < ce ? e : ce) - s;

			acc[c][ev[k].kind] += part;
			s += part;
		}
	}
}

static int dominant(const uint64_t *acc)
{
	int best = -1;

	for (int p = 0; p < TL_KIND_MAX; p++) {
		int k = priority[p];

		if (acc[k] && (best < 0 || acc[k] > acc[best]))
			best = k;
	}
	return best;
}

static void draw_share(WINDOW *w, const uint64_t *by, uint64_t span)
{
	int used = 0;

	for (int p = 0; p < TL_KIND_MAX && span; p++) {
		int k = priority[p], cells = (int)((by[k] * 10 + span / 2) / span);

		if (cells > 10 - used)
			cells = 10 - used;
		tui_role_on(w, kinds[k].role);
		for (int c = 0; c < cells; c++)
			waddstr(w, glyph(k));
		used += cells;
	}
	tui_role_on(w, ROLE_NORMAL);
	tui_pad(w, SHARE_W - used);
}

static void draw_axis(struct threads *t, struct tui_app *a, WINDOW *w, int y)
{
	char label[32], dur[16];
	int x0 = LEFT_W + SHARE_W, used;

	wmove(w, y, 0);
	tui_role_on(w, ROLE_TABLE_HEADER);
	duration_format((double)(t->slot), dur, sizeof(dur));
	used = tui_printf(w, x0, "%7s %-13s %-*s", "TID", "Thread", SHARE_W - 1, "Share");
	tui_pad(w, x0 - used);
	/* A label every 12 cells, counting back from now at the right. */
	for (int c = 0; c < t->ncells;) {
		int back = t->ncells - c;

		if (back % 12 == 0 && back >= 12) {
			duration_format((double)((uint64_t)back * t->slot), dur, sizeof(dur));
			snprintf(label, sizeof(label), "|-%s", dur);
			c += tui_put(w, label, strlen(label), t->ncells - c);
		} else if (back == 3) {
			c += tui_put(w, "now", 3, t->ncells - c);
		} else {
			c += tui_put(w, " ", 1, 1);
		}
	}
}

static void draw_legend(struct threads *t, struct tui_app *a, WINDOW *w, int y)
{
	char dur[16];
	int used = 0;

	wmove(w, y, 0);
	for (int k = 0; k < TL_KIND_MAX && used < a->cols; k++) {
		tui_role_on(w, kinds[k].role);
		used += tui_put(w, glyph(k), strlen(glyph(k)), a->cols - used);
		tui_role_on(w, ROLE_NORMAL);
		used += tui_printf(w, a->cols - used, " %s  ", kinds[k].word);
	}
	duration_format((double)(t->slot), dur, sizeof(dur));
	tui_role_on(w, ROLE_DIM);
	used += tui_printf(w, a->cols - used, "slot %s, sort %s", dur, sort_names[t->sort]);
	tui_role_on(w, ROLE_NORMAL);
	tui_pad(w, a->cols - used);
}

static void draw_process(struct threads *t, struct tui_app *a, WINDOW *w, int y, uint32_t pid)
{
	const struct tl_process *p = timeline__process_find(t->tl, pid);
	const struct strtab *st = timeline__strtab_c(t->tl);
	const char *name = p ? strtab__str(st, p->name) : "?";
	const char *con = p ? strtab__str(st, p->container) : "";
	int used;

	wmove(w, y, 0);
	tui_role_on(w, ROLE_FRAME_PROCESS);
	used = tui_printf(w, a->cols, "[%u] %s%s%s%s", pid, name, con[0] ? "  [Con]" : "", con,
			  "");
	tui_pad(w, a->cols - used);
	tui_role_on(w, ROLE_NORMAL);
}

static void draw_thread(struct threads *t, struct tui_app *a, WINDOW *w, int y, size_t r,
			uint64_t (*acc)[TL_KIND_MAX], uint64_t t0)
{
	const struct tl_thread *th = timeline__thread(t->tl, (size_t)t->rows[r].ti);
	const struct strtab *st = timeline__strtab_c(t->tl);
	struct tl_event *ev = NULL;
	long n = timeline__collect(t->tl, (size_t)t->rows[r].ti, t0, t->t_end, &ev);
	uint64_t by[TL_KIND_MAX] = { 0 };
	bool sel = r == t->sel;
	int used;

	fill_cells(acc, t->ncells, t0, t->slot, ev, n > 0 ? (size_t)n : 0);
	free(ev);
	for (int c = 0; c < t->ncells; c++)
		for (int k = 0; k < TL_KIND_MAX; k++)
			by[k] += acc[c][k];
	wmove(w, y, 0);
	tui_role_on(w, sel ? ROLE_SELECTION : ROLE_NORMAL);
	used = tui_printf(w, LEFT_W, "%7u ", th->tid);
	used += tui_put_fit(w, strtab__str(st, th->comm), strtab__len(st, th->comm),
			    LEFT_W - used - 1);
	tui_pad(w, LEFT_W - used);
	draw_share(w, by, (uint64_t)t->ncells * t->slot);
	for (int c = 0; c < t->ncells; c++) {
		int k = dominant(acc[c]);
		bool cur = sel && c == t->ncells - 1 - t->cursor;

		if (k < 0) {
			tui_role_on(w, cur ? ROLE_SELECTION : ROLE_NORMAL);
			waddstr(w, cur ? "^" : " ");
			continue;
		}
		tui_role_on(w, cur ? ROLE_SELECTION : kinds[k].role);
		waddstr(w, glyph(k));
	}
	tui_role_on(w, ROLE_NORMAL);
}

/* The inspector: the events of the selected thread in the cursor's slot, then the stack of
 * the longest one. */
static void draw_inspector(struct threads *t, struct tui_app *a, WINDOW *w, int top, int rows)
{
	const struct strtab *st = timeline__strtab_c(t->tl);
	uint64_t s0 = t->t_end - (uint64_t)(t->cursor + 1) * t->slot, s1 = s0 + t->slot;
	struct tl_event *ev = NULL;
	long n = 0;
	size_t longest = 0;
	int line = 0, x = 2, width = a->cols - 4, y = top + 1;
	char lines[64][512];
	int nl = 0;
	const struct tl_thread *th;
	char d[16], op[32];

	if (!t->nrows || t->rows[t->sel].proc)
		return;
	th = timeline__thread(t->tl, (size_t)t->rows[t->sel].ti);
	n = timeline__collect(t->tl, (size_t)t->rows[t->sel].ti, s0, s1, &ev);
	duration_format((double)(t->slot), d, sizeof(d));
	snprintf(lines[nl++], sizeof(lines[0]), "%s (tid %u, pid %u): %ld event%s in the %s slot "
		 "ending %.3f s before the right edge", strtab__str(st, th->comm), th->tid, th->pid,
		 n < 0 ? 0 : n, n == 1 ? "" : "s", d, (double)t->cursor * t->slot / 1e9);
	for (long k = 0; k < n && nl < 40; k++) {
		const struct tl_event *e = &ev[k];
		char extra[320] = "";

		if (e->end - e->start > ev[longest].end - ev[longest].start)
			longest = (size_t)k;
		duration_format((double)(e->end - e->start), d, sizeof(d));
		if (e->kind == TL_LOCK)
			snprintf(extra, sizeof(extra), "%s 0x%llx%s%.0u",
				 tl_futex_op_str(e->op, op, sizeof(op)), (unsigned long long)e->addr,
				 e->flags & TL_EV_OWNER ? " owner tid " : "",
				 e->flags & TL_EV_OWNER ? e->owner : 0);
		else if (e->attr)
			snprintf(extra, sizeof(extra), "%s", strtab__str(st, e->attr));
		snprintf(lines[nl++], sizeof(lines[0]), "  %-7s %-16s %10s  x%-4u %s%s",
			 tl_kind_str(e->kind), strtab__str(st, e->name), d, e->count, extra,
			 e->flags & TL_EV_OPEN ? "  (in progress)" : "");
	}
	if (n > 0 && ev[longest].stack) {
		const char *s = strtab__str(st, ev[longest].stack), *end = s + strlen(s);

		snprintf(lines[nl++], sizeof(lines[0]), "stack of the longest (%s), innermost first:",
			 strtab__str(st, ev[longest].name));
		/* Folded stacks are root first: print from the end. */
		while (end > s && nl < 63) {
			const char *p = end;

			while (p > s && p[-1] != ';')
				p--;
			snprintf(lines[nl++], sizeof(lines[0]), "  %.*s", (int)(end - p), p);
			end = p > s ? p - 1 : s;
		}
	} else if (n > 0) {
		snprintf(lines[nl++], sizeof(lines[0]), "no stack recorded for these events");
	}
	free(ev);
	if (t->inspect_scroll > nl - 1)
		t->inspect_scroll = nl > 0 ? nl - 1 : 0;
	/* A box over the pane. */
	tui_role_on(w, ROLE_HELP);
	for (int r = 0; r < rows - 2; r++) {
		wmove(w, y + r, x);
		tui_pad(w, width);
	}
	wmove(w, top, x);
	tui_role_on(w, ROLE_HELP_KEY);
	tui_printf(w, width, " Inspector (Esc closes, Up/Down scroll) ");
	tui_role_on(w, ROLE_HELP);
	for (line = 0; line + t->inspect_scroll < nl && line < rows - 2; line++) {
		const char *l = lines[line + t->inspect_scroll];

		wmove(w, y + line, x + 1);
		tui_put(w, l, strlen(l), width - 2);
	}
	tui_role_on(w, ROLE_NORMAL);
}

static void threads_draw(struct view *v, struct tui_app *a, WINDOW *w, int top, int rows)
{
	struct threads *t = v->state;
	uint64_t (*acc)[TL_KIND_MAX];
	uint64_t t0;
	int y = top, body, axis;

	if (!t->slot)
		t->slot = DEFAULT_SLOT;
	if (!timeline_of(t, a)) {
		tui_role_on(w, ROLE_DIM);
		mvwaddstr(w, top + rows / 2, 2,
			  a->src->ops->attach ? "no thread timeline: the thread probes could not start"
					      : "no thread timeline in this data (record with "
						"--type threads)");
		tui_role_on(w, ROLE_NORMAL);
		return;
	}
	t->ncells = a->cols - LEFT_W - SHARE_W;
	if (t->ncells < 1)
		t->ncells = 1;
	if (t->cursor >= t->ncells)
		t->cursor = t->ncells - 1;
	t->t_end = now_of(t, a);
	t0 = t->t_end > (uint64_t)t->ncells * t->slot ? t->t_end - (uint64_t)t->ncells * t->slot
						     : 0;
	t->nhints = tl_hints(t->tl, t->hints, MAX_HINTS);
	/* Hints banner: two lines; one hint may use both, more are on the detail line. */
	for (size_t i = 0; i < t->nhints && i < MAX_HINTS && y < top + 2; i++) {
		const char *text = t->hints[i].text;
		size_t len = strlen(text), fit = a->cols > 3 ? (size_t)a->cols - 3 : 1;

		wmove(w, y++, 0);
		tui_role_on(w, ROLE_STATUS_ALERT);
		tui_printf(w, a->cols, "! %.*s", (int)(len > fit ? fit : len), text);
		tui_pad(w, a->cols);
		if (t->nhints == 1 && len > fit) {
			wmove(w, y++, 0);
			tui_printf(w, a->cols, "  %s", text + fit);
			tui_pad(w, a->cols);
		}
		tui_role_on(w, ROLE_NORMAL);
	}
	axis = y;
	draw_axis(t, a, w, y++);
	body = top + rows - 1 - y;
	t->page = body;
	build_rows(t, a, t0, t->t_end);
	keep_visible(t);
	acc = calloc((size_t)t->ncells, sizeof(*acc));
	for (int r = 0; acc && r < body && t->scroll + r < (int)t->nrows; r++) {
		size_t i = (size_t)(t->scroll + r);

		if (t->rows[i].proc)
			draw_process(t, a, w, y + r, t->rows[i].pid);
		else
			draw_thread(t, a, w, y + r, i, acc, t0);
	}
	free(acc);
	if (!t->nrows) {
		tui_role_on(w, ROLE_DIM);
		mvwaddstr(w, y + body / 2, 2,
			  timeline__nthreads(t->tl) ? "no thread matches the filters"
						    : "no thread activity yet");
		tui_role_on(w, ROLE_NORMAL);
	}
	draw_legend(t, a, w, top + rows - 1);
	if (t->inspect)
		draw_inspector(t, a, w, axis, top + rows - 1 - axis);
}

static void move_sel(struct threads *t, long d)
{
	long s = (long)t->sel;

	while (d) {
		long step = d > 0 ? 1 : -1, n = s + step;

		while (n >= 0 && n < (long)t->nrows && t->rows[n].proc)
			n += step;
		if (n < 0 || n >= (long)t->nrows)
			break;
		s = n;
		d -= step;
	}
	t->sel = (size_t)s;
	if (t->nrows && !t->rows[t->sel].proc)
		t->sel_tid = timeline__thread(t->tl, (size_t)t->rows[t->sel].ti)->tid;
}

/* Shows the flame view narrowed to the selected thread's process with per-thread roots,
 * the thread's frame selected. */
static void to_flame(struct threads *t, struct tui_app *a)
{
	const struct tl_thread *th;
	const struct strtab *st;
	char name[64];
	uint32_t id;

	if (!t->nrows || t->rows[t->sel].proc)
		return;
	th = timeline__thread(t->tl, (size_t)t->rows[t->sel].ti);
	a->filter.pid = th->pid;
	a->filter.regroup = true; /* per-thread roots, as recorded */
	a->filter.group = GROUP_THREAD;
	app_rebuild(a);
	app_show(a, VIEW_FLAME);
	st = frames__strtab(profile__frames(a->disp));
	snprintf(name, sizeof(name), "[%u]%s", th->tid,
		 strtab__str(timeline__strtab_c(t->tl), th->comm));
	id = strtab__find(st, name, strlen(name));
	if (id != UINT32_MAX) {
		app_show_frame(a, id);
		app_msg(a, ROLE_STATUS, "flame graph of pid %u, thread %s selected", th->pid, name);
	} else {
		app_msg(a, ROLE_STATUS_ALERT, "flame graph of pid %u: no samples of thread %u (profile "
			"it with on-CPU probes)", th->pid, th->tid);
	}
}

static bool threads_action(struct view *v, struct tui_app *a, int action)
{
	struct threads *t = v->state;

	if (!t->tl)
		return false;
	if (t->inspect) {
		switch (action) {
		case H_UP:
			if (t->inspect_scroll > 0)
				t->inspect_scroll--;
			return true;
		case H_DOWN:
			t->inspect_scroll++;
			return true;
		case H_CLOSE:
		case H_INSPECT:
			t->inspect = false;
			return true;
		default:
			t->inspect = false;
			break;
		}
	}
	switch (action) {
	case H_UP:
		move_sel(t, -1);
		break;
	case H_DOWN:
		move_sel(t, 1);
		break;
	case H_PGUP:
		move_sel(t, -t->page);
		break;
	case H_PGDN:
		move_sel(t, t->page);
		break;
	case H_LEFT:
		if (t->cursor < t->ncells - 1)
			t->cursor++;
		break;
	case H_RIGHT:
		if (t->cursor > 0)
			t->cursor--;
		break;
	case H_HOME:
		t->cursor = t->ncells - 1;
		break;
	case H_END:
		t->cursor = 0;
		break;
	case H_ZOOM_IN:
	case H_ZOOM_OUT: {
		char d[16];

		if (action == H_ZOOM_IN && t->slot / 2 >= MIN_SLOT)
			t->slot /= 2;
		else if (action == H_ZOOM_OUT && t->slot * 2 <= MAX_SLOT)
			t->slot *= 2;
		duration_format((double)(t->slot), d, sizeof(d));
		app_msg(a, ROLE_STATUS, "time slot %s", d);
		break;
	}
	case H_INSPECT:
		t->inspect = true;
		t->inspect_scroll = 0;
		break;
	case H_CLOSE:
		break;
	case H_SORT:
		t->sort = (enum th_sort)((t->sort + 1) % SORT_MAX);
		t->scroll = 0;
		app_msg(a, ROLE_STATUS, "threads sorted by %s", sort_names[t->sort]);
		break;
	case H_FLAME:
		to_flame(t, a);
		break;
	}
	return true;
}

static void threads_mouse(struct view *v, struct tui_app *a, const struct tui_input *in)
{
	struct threads *t = v->state;

	if (!t->tl)
		return;
	if (in->bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
		move_sel(t, in->bstate & BUTTON4_PRESSED ? -3 : 3);
		return;
	}
	if (in->x >= LEFT_W + SHARE_W && in->x < LEFT_W + SHARE_W + t->ncells)
		t->cursor = t->ncells - 1 - (in->x - LEFT_W - SHARE_W);
}

static void threads_detail(struct view *v, struct tui_app *a, WINDOW *w, int y)
{
	struct threads *t = v->state;
	const struct tl_thread *th;
	uint64_t by[TL_KIND_MAX], span = (uint64_t)t->ncells * t->slot;
	struct timeline_stats ts;
	int used = 0;

	wmove(w, y, 0);
	tui_role_on(w, ROLE_DETAIL);
	if (!t->tl)
		return;
	timeline__stats(t->tl, &ts);
	if (t->nhints > 2) {
		tui_printf(w, a->cols, "%zu hints; more: %s", t->nhints, t->hints[2].text);
		return;
	}
	if (!t->nrows || t->rows[t->sel].proc) {
		tui_printf(w, a->cols, "%zu threads, %llu intervals, %llu dropped (--timeline-mem)",
			   timeline__nthreads(t->tl), (unsigned long long)ts.events,
			   (unsigned long long)ts.dropped);
		return;
	}
	th = timeline__thread(t->tl, (size_t)t->rows[t->sel].ti);
	timeline__time_by_kind(t->tl, (size_t)t->rows[t->sel].ti,
			       t->t_end > span ? t->t_end - span : 0, t->t_end, by);
	used += tui_printf(w, a->cols, "%s tid %u pid %u:",
			   strtab__str(timeline__strtab_c(t->tl), th->comm), th->tid, th->pid);
	for (int k = 0; k < TL_KIND_MAX && span; k++)
		if (by[k])
			used += tui_printf(w, a->cols - used, " %s %.0f%%", tl_kind_str(k),
					   100.0 * (double)by[k] / (double)span);
	/* Calls below the minimum duration are counted, not drawn: say how many. */
	for (int k = 0; k < TL_KIND_MAX; k++)
		if (th->short_count[k] && k != TL_ONCPU && k != TL_RUNQ)
			used += tui_printf(w, a->cols - used, "  %llu short %s calls",
					   (unsigned long long)th->short_count[k], tl_kind_str(k));
	if (ts.dropped)
		used += tui_printf(w, a->cols - used, "  (%llu old intervals dropped)",
				   (unsigned long long)ts.dropped);
}

static void threads_free(struct view *v)
{
	if (v && v->state)
		free(((struct threads *)v->state)->rows);
	view__free(v);
}

struct view *threads_view_new(void)
{
	static const struct view tmpl = {
		.name = "Threads",
		.key = '3',
		.keys = threads_keys,
		.nkeys = sizeof(threads_keys) / sizeof(threads_keys[0]),
		.draw = threads_draw,
		.action = threads_action,
		.mouse = threads_mouse,
		.detail = threads_detail,
		.free = threads_free,
	};

	return view__new(&tmpl, sizeof(struct threads));
}
