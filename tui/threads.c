/* The Threads pane: one row per thread, grouped under its process (and container), time
 * running left to right with now at the right edge; each cell shows the state that filled most
 * of its time slot. A cursor moves over threads and time; Enter inspects the slot's events;
 * the lock hints (model/lockhint) head the pane. The timeline comes from the source's
 * TUI_DATA_TIMELINE; a live source attaches its probes when the pane is first shown. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "list.h"
#include "text.h"
#include "../model/lockhint.h"
#include "../model/timeline.h"
#include "util/duration.h"
#include "util/grow.h"

enum th_action { H_LEFT = LIST_ACTIONS, H_RIGHT, H_OLDEST, H_NOW, H_ZOOM_IN, H_ZOOM_OUT,
		 H_INSPECT, H_CLOSE, H_SORT_NEXT, H_SORT_PREV, H_FLAME };
enum th_sort { SORT_ACTIVE = 0, SORT_CPU, SORT_LOCK, SORT_IO, SORT_TID, SORT_MAX };

static const char *const sort_names[SORT_MAX] = { "activity", "CPU time", "lock time",
						  "I/O time", "pid/tid" };

static const struct tui_key threads_keys[] = {
	TUI_LIST_KEYS, /* with the inspector open, Up/Down scroll it */
	{ { KEY_LEFT, 'h' }, H_LEFT, "cursor one time slot back", NULL },
	{ { KEY_RIGHT, 'l' }, H_RIGHT, "cursor one time slot forward", NULL },
	{ { KEY_SLEFT, '[' }, H_OLDEST, "cursor to the oldest slot shown", NULL },
	{ { KEY_SRIGHT, ']' }, H_NOW, "cursor to now (the right edge)", NULL },
	{ { '+', '=' }, H_ZOOM_IN, "zoom in: shorter time slots", "Zoom" },
	{ { '-' }, H_ZOOM_OUT, "zoom out: longer time slots", NULL },
	{ { '\n', KEY_ENTER }, H_INSPECT, "thread: inspect the slot (events, durations, stack); "
					  "process or ended command: fold or unfold", "Inspect" },
	{ { TUI_KEY_ESC, KEY_BACKSPACE, 127 }, H_CLOSE, "close the inspector", NULL },
	{ { KEY_F(6), '>' }, H_SORT_NEXT, "sort by the next key: activity (busy time in the "
					  "window: on-CPU, run queue, contended locks, file I/O, "
					  "D state), CPU, lock, I/O time, pid/tid", "Sort" },
	{ { '<' }, H_SORT_PREV, "sort by the previous key", NULL },
	{ { 'f' }, H_FLAME, "flame graph of this thread, process or ended command", "Flame" },
};

#define LEFT_W 28	/* "▸ ended " and a whole comm with " x99" */
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

/* A row: a thread; a process (with its threads below unless folded; a process of one thread
 * is that thread's row too); or the processes of one command that ended, folded in one row. */
enum row_kind { ROW_THREAD = 0, ROW_PROC, ROW_ENDED };

struct row {
	uint8_t kind;	 /* enum row_kind */
	uint8_t depth;	 /* indent of the name */
	uint32_t pid;	 /* ROW_PROC, ROW_THREAD */
	uint32_t name;	 /* ROW_ENDED: the command (timeline string id) */
	long ti;	 /* the thread (ROW_THREAD, a ROW_PROC of one thread), else -1 */
	uint32_t first, n; /* the threads: members [first, first + n) of a process; of a
			    * command, the members of its nproc processes from t->items[first] */
	uint32_t nproc;	 /* ROW_ENDED: processes */
	bool open;	 /* ROW_PROC, ROW_ENDED: the members are shown below */
};

/* One shown thread, with its sort value over the window. */
struct member {
	long ti;
	uint32_t pid, tid, name; /* name: the process's command */
	uint64_t key;
	bool ended;
};

/* A process or an ended command before it becomes rows. */
struct item {
	uint32_t pid, name;
	uint32_t first, n; /* members */
	uint32_t nproc;
	uint64_t key;
	bool ended;
};

/* What the cursor is on, found again after the rows are rebuilt. */
struct sel_key {
	uint8_t kind;
	uint32_t id; /* tid, pid or command */
};

struct threads {
	const struct timeline *tl;
	bool attach_tried;
	struct row *rows;
	size_t nrows, cap;
	struct member *members;
	size_t nmembers, mcap;
	struct item *items;
	size_t nitems, icap;
	struct tui_list list;
	struct sel_key sel;
	bool sel_set;	    /* the cursor was moved (else it stays on the first row) */
	/* Folded processes and unfolded ended commands, by pid or command id. */
	uint32_t *toggled;
	size_t ntoggled, tcap;
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
	int y0;		    /* the screen row of its first list row */
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

/* The sort value of thread i over [t0, t1); activity is its busy time (timeline__busy_time):
 * on a CPU or waiting for one, for a contended lock, for file I/O or in D state. */
static uint64_t sort_key(enum th_sort sort, const struct timeline *tl, size_t i, uint64_t t0,
			 uint64_t t1)
{
	uint64_t by[TL_KIND_MAX];

	if (sort == SORT_TID)
		return 0;
	if (sort == SORT_ACTIVE)
		return timeline__busy_time(tl, i, t0, t1);
	timeline__time_by_kind(tl, i, t0, t1, by);
	switch (sort) {
	case SORT_CPU:
		return by[TL_ONCPU];
	case SORT_LOCK:
		return by[TL_LOCK];
	default:
		return by[TL_FILE] + by[TL_NET];
	}
}

/* Members by process, then heaviest first, then by tid. */
static int cmp_members(const void *x, const void *y, void *arg)
{
	const struct member *a = x, *b = y;

	(void)arg;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* Ended processes by command (so that each command's processes are adjacent), then heaviest
 * first; live processes after them. */
static int cmp_by_command(const void *x, const void *y, void *arg)
{
	const struct item *a = x, *b = y;

	(void)arg;
	if (a->ended != b->ended)
		return a->ended ? -1 : 1;
	if (a->ended && a->name != b->name)
		return a->name < b->name ? -1 : 1;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* Top-level items: heaviest first (by pid for the pid/tid order). */
static int cmp_items(const void *x, const void *y, void *arg)
{
	const struct item *a = x, *b = y;
	const enum th_sort *sort = arg;

	if (*sort != SORT_TID && a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static bool toggled(const struct threads *t, uint32_t id)
{
	for (size_t i = 0; i < t->ntoggled; i++)
		if (t->toggled[i] == id)
			return true;
	return false;
}

static void toggle(struct threads *t, uint32_t id)
{
	for (size_t i = 0; i < t->ntoggled; i++)
		if (t->toggled[i] == id) {
			t->toggled[i] = t->toggled[--t->ntoggled];
			return;
		}
	if (!ARRAY_GROW(t->toggled, t->tcap, t->ntoggled + 1))
		t->toggled[t->ntoggled++] = id;
}

/* Command ids and pids share the toggle set: commands are marked by the top bit. */
#define ENDED_ID(name) ((name) | 0x80000000u)

static int add_row(struct threads *t, struct row r)
{
	if (ARRAY_GROW(t->rows, t->cap, t->nrows + 1))
		return -ENOMEM;
	t->rows[t->nrows++] = r;
	return 0;
}

/* A process's rows: its own, then its threads unless folded. A process whose one thread
 * shown is its main thread is one row. */
static void add_process(struct threads *t, const struct item *it, uint8_t depth)
{
	const struct member *m = &t->members[it->first];
	bool one = it->n == 1 && m->tid == m->pid, open = !one && !toggled(t, it->pid);

	add_row(t, (struct row){ ROW_PROC, depth, it->pid, it->name, one ? m->ti : -1, it->first,
				 it->n, 1, open });
	for (uint32_t k = 0; open && k < it->n; k++)
		add_row(t, (struct row){ ROW_THREAD, (uint8_t)(depth + 1), m[k].pid, 0, m[k].ti,
					 it->first + k, 1, 0, false });
}

static struct sel_key key_of(const struct threads *t, const struct row *r)
{
	if (r->kind == ROW_ENDED)
		return (struct sel_key){ ROW_ENDED, r->name };
	if (r->kind == ROW_PROC)
		return (struct sel_key){ ROW_PROC, r->pid };
	return (struct sel_key){ ROW_THREAD, timeline__thread(t->tl, (size_t)r->ti)->tid };
}

/* Rows over the window [t0, t1): live processes and ended commands heaviest first (the sort
 * key summed over their threads), each process's threads heaviest first below it. */
static void build_rows(struct threads *t, struct tui_app *a, uint64_t t0, uint64_t t1)
{
	const struct timeline *tl = t->tl;
	size_t n = timeline__nthreads(tl), np = 0;

	t->nrows = t->nmembers = t->nitems = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tl_thread *th = timeline__thread(tl, i);
		const struct tl_process *p = timeline__process_find(tl, th->pid);

		if (!shown(a, tl, i) || ARRAY_GROW(t->members, t->mcap, t->nmembers + 1))
			continue;
		t->members[t->nmembers++] = (struct member){ (long)i, th->pid, th->tid,
							     p ? p->name : th->comm,
							     sort_key(t->sort, tl, i, t0, t1),
							     th->ended != 0 };
	}
	if (t->nmembers)
		qsort_r(t->members, t->nmembers, sizeof(*t->members), cmp_members, NULL);
	/* One item per process: ended when every thread of it is. */
	for (size_t i = 0; i < t->nmembers; i++) {
		const struct member *m = &t->members[i];
		struct item *it = t->nitems ? &t->items[t->nitems - 1] : NULL;

		if (!it || it->pid != m->pid) {
			if (ARRAY_GROW(t->items, t->icap, t->nitems + 1))
				break;
			it = &t->items[t->nitems++];
			*it = (struct item){ m->pid, m->name, (uint32_t)i, 0, 1, 0, true };
		}
		it->n++;
		it->key += m->key;
		it->ended &= m->ended;
	}
	if (t->nitems)
		qsort_r(t->items, t->nitems, sizeof(*t->items), cmp_by_command, NULL);
	/* The ended processes of one command are adjacent now; each command gets one item at
	 * the end of the array, its processes stay where they are. */
	while (np < t->nitems && t->items[np].ended)
		np++;
	for (size_t i = 0; i < np;) {
		size_t j = i;
		struct item g = { t->items[i].pid, t->items[i].name, (uint32_t)i, 0, 0, 0, true };

		while (j < np && t->items[j].name == g.name) {
			g.key += t->items[j].key;
			g.nproc++;
			g.n += t->items[j].n;
			g.pid = t->items[j].pid < g.pid ? t->items[j].pid : g.pid;
			j++;
		}
		g.first = (uint32_t)i; /* the group's processes: items [i, j) */
		if (ARRAY_GROW(t->items, t->icap, t->nitems + 1))
			break;
		t->items[t->nitems++] = g;
		i = j;
	}
	/* Top level: the live processes and the commands, in the order asked. */
	{
		struct item *top = &t->items[np];
		size_t ntop = t->nitems - np;

		if (ntop)
			qsort_r(top, ntop, sizeof(*top), cmp_items, &t->sort);
		for (size_t i = 0; i < ntop; i++) {
			const struct item *it = &top[i];

			if (!it->ended) {
				add_process(t, it, 0);
				continue;
			}
			bool open = toggled(t, ENDED_ID(it->name));

			add_row(t, (struct row){ ROW_ENDED, 0, it->pid, it->name, -1, it->first,
						 it->n, it->nproc, open });
			for (uint32_t k = 0; open && k < it->nproc; k++)
				add_process(t, &t->items[it->first + k], 1);
		}
	}
	/* The cursor stays on what it was on; else on the same row number. */
	if (t->sel_set)
		for (size_t i = 0; i < t->nrows; i++) {
			struct sel_key k = key_of(t, &t->rows[i]);

			if (k.kind == t->sel.kind && k.id == t->sel.id) {
				t->list.sel = i;
				break;
			}
		}
}

static void note_sel(struct threads *t)
{
	if (t->list.sel < t->nrows)
		t->sel = key_of(t, &t->rows[t->list.sel]);
	t->sel_set = true;
}

/* Adds the time per kind of events ev[0..n) to each of ncells slots from t0. */
static void fill_cells(uint64_t (*acc)[TL_KIND_MAX], int ncells, uint64_t t0, uint64_t slot,
		       const struct tl_event *ev, size_t n)
{
	uint64_t t1 = t0 + (uint64_t)ncells * slot;

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
	used = tui_printf(w, x0, "%7s %-*s%-*s", "TID", LEFT_W - 8, "Thread", SHARE_W, "Share");
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
	if (timeline__syscall_mode(t->tl) && used < a->cols)
		used += tui_printf(w, a->cols - used, ", calls: %s",
				   tl_syscall_mode_str(timeline__syscall_mode(t->tl)));
	tui_role_on(w, ROLE_NORMAL);
	tui_pad(w, a->cols - used);
}

/* The member index of the k-th thread of row r. */
static size_t row_member(const struct threads *t, const struct row *r, uint32_t k)
{
	if (r->kind != ROW_ENDED)
		return r->first + k;
	for (uint32_t p = 0; p < r->nproc; p++) {
		const struct item *it = &t->items[r->first + p];

		if (k < it->n)
			return it->first + k;
		k -= it->n;
	}
	return 0;
}

/* Time per kind of row r's threads in each cell (acc, zeroed here) and over the window (by). */
static void row_time(struct threads *t, const struct row *r, uint64_t (*acc)[TL_KIND_MAX],
		     uint64_t t0, uint64_t *by)
{
	memset(acc, 0, (size_t)t->ncells * sizeof(*acc));
	memset(by, 0, TL_KIND_MAX * sizeof(*by));
	for (uint32_t k = 0; k < r->n; k++) {
		size_t ti = (size_t)t->members[row_member(t, r, k)].ti;
		struct tl_event *ev = NULL;
		long n = timeline__collect(t->tl, ti, t0, t->t_end, &ev);

		fill_cells(acc, t->ncells, t0, t->slot, ev, n > 0 ? (size_t)n : 0);
		free(ev);
	}
	for (int c = 0; c < t->ncells; c++)
		for (int k = 0; k < TL_KIND_MAX; k++)
			by[k] += acc[c][k];
}

/* The name column: a fold mark for rows that fold, the id, the name indented by depth. */
static void draw_name(struct threads *t, struct tui_app *a, WINDOW *w, const struct row *r,
		      bool sel)
{
	const struct strtab *st = timeline__strtab_c(t->tl);
	bool folds = r->kind == ROW_ENDED || (r->kind == ROW_PROC && r->ti < 0);
	const char *mark = !folds ? " " : r->open ? (tui_text_utf8() ? "\u25be" : "-")
						  : (tui_text_utf8() ? "\u25b8" : "+");
	uint32_t name = r->name;
	char id[16], count[24] = "";
	int used;

	if (r->kind == ROW_THREAD) {
		const struct tl_thread *th = timeline__thread(t->tl, (size_t)r->ti);

		snprintf(id, sizeof(id), "%u", th->tid);
		name = th->comm;
	} else if (r->kind == ROW_PROC) {
		snprintf(id, sizeof(id), "%u", r->pid);
		if (r->ti < 0)
			snprintf(count, sizeof(count), " (%u)", r->n);
	} else {
		snprintf(id, sizeof(id), "ended");
		snprintf(count, sizeof(count), " x%u", r->nproc);
	}
	tui_role_on(w, sel ? ROLE_SELECTION : r->kind == ROW_THREAD ? ROLE_NORMAL
					   : r->kind == ROW_PROC ? ROLE_FRAME_PROCESS
								 : ROLE_DIM);
	used = tui_put(w, mark, strlen(mark), 1);
	used += tui_printf(w, LEFT_W - used, "%6s %*s", id, r->depth, "");
	used += tui_put_fit(w, strtab__str(st, name), strtab__len(st, name),
			    LEFT_W - used - 1 - (int)strlen(count));
	used += tui_put(w, count, strlen(count), LEFT_W - used - 1);
	tui_pad(w, LEFT_W - used);
}

/* A row: the name, the share of the window by kind (a process's or a command's: its threads'
 * average), and per cell the state that filled most of the slot across its threads. */
static void draw_row(struct threads *t, struct tui_app *a, WINDOW *w, int y, size_t i,
		     uint64_t (*acc)[TL_KIND_MAX], uint64_t t0)
{
	const struct row *r = &t->rows[i];
	uint64_t by[TL_KIND_MAX];
	bool sel = i == t->list.sel;

	row_time(t, r, acc, t0, by);
	wmove(w, y, 0);
	draw_name(t, a, w, r, sel);
	draw_share(w, by, (uint64_t)t->ncells * t->slot * (r->n ? r->n : 1));
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

/* The thread the cursor is on (a thread row, or a process of one thread), else -1. */
static long sel_thread(const struct threads *t)
{
	return t->list.sel < t->nrows ? t->rows[t->list.sel].ti : -1;
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

	if (sel_thread(t) < 0)
		return;
	th = timeline__thread(t->tl, (size_t)sel_thread(t));
	n = timeline__collect(t->tl, (size_t)sel_thread(t), s0, s1, &ev);
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
		snprintf(lines[nl++], sizeof(lines[0]), "  %-7s %-16s %10s  x%-4u %s%s%s",
			 tl_kind_str(e->kind), strtab__str(st, e->name), d, e->count, extra,
			 e->flags & TL_EV_OPEN ? "  (in progress)" : "",
			 e->flags & TL_EV_SAMPLED ? "  (sampled)" : "");
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
	t->y0 = y;
	build_rows(t, a, t0, t->t_end);
	tui_list_show(&t->list, t->nrows, body);
	acc = calloc((size_t)t->ncells, sizeof(*acc));
	for (int r = 0; acc && r < body && t->list.scroll + r < (int)t->nrows; r++)
		draw_row(t, a, w, y + r, (size_t)(t->list.scroll + r), acc, t0);
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

/* Shows the flame view of the selected row: a thread (its process narrowed, per-thread roots,
 * the thread's root selected), a process (pid filter) or an ended command (comm filter). */
static void to_flame(struct threads *t, struct tui_app *a)
{
	const struct strtab *tst = timeline__strtab_c(t->tl);
	const struct tl_thread *th;
	const struct strtab *st;
	const struct row *r;
	char name[64];
	uint32_t id;

	if (t->list.sel >= t->nrows)
		return;
	r = &t->rows[t->list.sel];
	if (r->kind == ROW_ENDED || (r->kind == ROW_PROC && r->ti < 0)) {
		if (r->kind == ROW_ENDED)
			snprintf(a->filter.comm, sizeof(a->filter.comm), "%.15s",
				 strtab__str(tst, r->name));
		else
			a->filter.pid = r->pid;
		app_rebuild(a);
		app_show(a, VIEW_FLAME);
		if (r->kind == ROW_ENDED)
			app_msg(a, ROLE_STATUS, "flame graph of command %s (C then Enter clears)",
				a->filter.comm);
		else
			app_msg(a, ROLE_STATUS, "flame graph of pid %u (p then Enter clears)", r->pid);
		return;
	}
	th = timeline__thread(t->tl, (size_t)r->ti);
	a->filter.pid = th->pid;
	a->filter.regroup = true; /* per-thread roots, as recorded */
	a->filter.group = GROUP_THREAD;
	app_rebuild(a);
	app_show(a, VIEW_FLAME);
	st = frames__strtab(profile__frames(a->disp));
	snprintf(name, sizeof(name), "[%u]%s", th->tid, strtab__str(tst, th->comm));
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
		case LIST_UP:
			if (t->inspect_scroll > 0)
				t->inspect_scroll--;
			return true;
		case LIST_DOWN:
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
	case H_LEFT:
		if (t->cursor < t->ncells - 1)
			t->cursor++;
		break;
	case H_RIGHT:
		if (t->cursor > 0)
			t->cursor--;
		break;
	case H_OLDEST:
		t->cursor = t->ncells - 1;
		break;
	case H_NOW:
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
		if (t->list.sel >= t->nrows)
			break;
		if (t->rows[t->list.sel].kind == ROW_ENDED) {
			toggle(t, ENDED_ID(t->rows[t->list.sel].name));
		} else if (t->rows[t->list.sel].kind == ROW_PROC && t->rows[t->list.sel].ti < 0) {
			toggle(t, t->rows[t->list.sel].pid);
		} else {
			t->inspect = true;
			t->inspect_scroll = 0;
		}
		note_sel(t);
		break;
	case H_CLOSE:
		break;
	case H_SORT_NEXT:
	case H_SORT_PREV:
		t->sort = (enum th_sort)((t->sort + (action == H_SORT_NEXT ? 1 : SORT_MAX - 1)) %
					 SORT_MAX);
		tui_list_top(&t->list);
		t->sel_set = false;
		app_msg(a, ROLE_STATUS, "threads sorted by %s", sort_names[t->sort]);
		break;
	case H_FLAME:
		to_flame(t, a);
		break;
	default:
		tui_list_move(&t->list, t->nrows, action);
		note_sel(t);
		break;
	}
	return true;
}

static void threads_mouse(struct view *v, struct tui_app *a, const struct tui_input *in)
{
	struct threads *t = v->state;

	if (!t->tl)
		return;
	tui_list_mouse(&t->list, t->nrows, in, t->y0);
	note_sel(t);
	if (!(in->bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) && in->x >= LEFT_W + SHARE_W &&
	    in->x < LEFT_W + SHARE_W + t->ncells)
		t->cursor = t->ncells - 1 - (in->x - LEFT_W - SHARE_W);
}

/* "on-CPU 52% lock 3%": row r's time by kind over the window span, in % of span. */
static int put_kinds(struct tui_app *a, WINDOW *w, const uint64_t *by, uint64_t span, int used)
{
	for (int k = 0; k < TL_KIND_MAX && span; k++)
		if (by[k])
			used += tui_printf(w, a->cols - used, " %s %.0f%%", tl_kind_str(k),
					   100.0 * (double)by[k] / (double)span);
	return used;
}

static void threads_detail(struct view *v, struct tui_app *a, WINDOW *w, int y)
{
	struct threads *t = v->state;
	const struct tl_thread *th;
	const struct strtab *st;
	uint64_t by[TL_KIND_MAX], span = (uint64_t)t->ncells * t->slot;
	struct timeline_stats ts;
	const struct row *r;
	int used = 0;

	wmove(w, y, 0);
	tui_role_on(w, ROLE_DETAIL);
	if (!t->tl)
		return;
	st = timeline__strtab_c(t->tl);
	timeline__stats(t->tl, &ts);
	if (t->nhints > 2) {
		tui_printf(w, a->cols, "%zu hints; more: %s", t->nhints, t->hints[2].text);
		return;
	}
	if (t->list.sel >= t->nrows) {
		tui_printf(w, a->cols, "%zu threads, %llu intervals, %llu dropped (--timeline-mem)",
			   timeline__nthreads(t->tl), (unsigned long long)ts.events,
			   (unsigned long long)ts.dropped);
		return;
	}
	r = &t->rows[t->list.sel];
	if (r->kind != ROW_THREAD && r->ti < 0) {
		/* A process or an ended command: what its threads did together. */
		uint64_t (*acc)[TL_KIND_MAX] = calloc((size_t)t->ncells, sizeof(*acc));
		const struct tl_process *p = timeline__process_find(t->tl, r->pid);
		const char *con = p && r->kind == ROW_PROC ? strtab__str(st, p->container) : "";
		uint32_t ended = 0;

		if (!acc)
			return;
		row_time(t, r, acc, span < t->t_end ? t->t_end - span : 0, by);
		free(acc);
		for (uint32_t k = 0; k < r->n; k++)
			ended += t->members[row_member(t, r, k)].ended;
		if (r->kind == ROW_ENDED)
			used += tui_printf(w, a->cols, "%s: %u process%s ended, %u thread%s:",
					   strtab__str(st, r->name), r->nproc, r->nproc == 1 ? "" : "es",
					   r->n, r->n == 1 ? "" : "s");
		else
			used += tui_printf(w, a->cols, "%s pid %u: %u threads%s%.0u%s%s%s:",
					   strtab__str(st, r->name), r->pid, r->n,
					   ended ? " (" : "", ended, ended ? " ended)" : "",
					   con[0] ? " in " : "", con);
		put_kinds(a, w, by, span, used);
		return;
	}
	th = timeline__thread(t->tl, (size_t)r->ti);
	timeline__time_by_kind(t->tl, (size_t)r->ti, t->t_end > span ? t->t_end - span : 0,
			       t->t_end, by);
	used += tui_printf(w, a->cols, "%s tid %u pid %u%s:", strtab__str(st, th->comm), th->tid,
			   th->pid, th->ended ? " (ended)" : "");
	used = put_kinds(a, w, by, span, used);
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
	if (v && v->state) {
		struct threads *t = v->state;

		free(t->rows);
		free(t->members);
		free(t->items);
		free(t->toggled);
	}
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
