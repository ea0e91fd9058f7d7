#include "timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/futex.h>

#include "hash.h"
#include "sanitize.h"
#include "util/grow.h"

#define NONE UINT32_MAX

struct tl_open {
	uint32_t thread;
	struct tl_event ev;
};

struct timeline {
	struct strtab *st;
	struct tl_thread *threads;
	size_t nthreads, tcap;
	uint32_t *index; /* open addressing: tid -> thread index + 1; 0 = empty */
	size_t index_mask;
	struct tl_process *procs;
	size_t nprocs, pcap;
	struct tl_open *open;
	size_t nopen, ocap;
	size_t mem_cap, held;
	uint64_t dropped, now, min_dur;
	enum tl_syscall_mode syscall_mode;
	double wall_offset;
};

static const char *const kind_names[TL_KIND_MAX] = { "oncpu", "runq",  "file",  "net",
						     "lock",  "sched", "dstate" };

const char *tl_kind_str(int kind)
{
	return kind >= 0 && kind < TL_KIND_MAX ? kind_names[kind] : "?";
}

int tl_kind_parse(const char *s)
{
	for (int k = 0; k < TL_KIND_MAX; k++)
		if (!strcmp(s, kind_names[k]))
			return k;
	return -1;
}

struct timeline *timeline__new(size_t mem_cap)
{
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->st = strtab__new();
	tl->index = calloc(64, sizeof(*tl->index));
	if (!tl->st || !tl->index) {
		timeline__free(tl);
		return NULL;
	}
	tl->index_mask = 63;
	tl->mem_cap = mem_cap ? mem_cap : TL_DEFAULT_MEM;
	return tl;
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nthreads; i++)
		free(tl->threads[i].ev);
	free(tl->threads);
	free(tl->index);
	free(tl->procs);
	free(tl->open);
	strtab__free(tl->st);
	free(tl);
}

struct strtab *timeline__strtab(struct timeline *tl)
{
	return tl->st;
}

const struct strtab *timeline__strtab_c(const struct timeline *tl)
{
	return tl->st;
}

uint32_t timeline__intern(struct timeline *tl, const char *s, size_t len)
{
	char buf[1024], *out = buf;
	uint32_t id;
	size_t n;

	if (sanitize_is_clean(s, len))
		return strtab__intern(tl->st, s, len);
	if (SANITIZE_MAX(len) > sizeof(buf) && !(out = malloc(SANITIZE_MAX(len))))
		return NONE;
	n = sanitize_text(s, len, out);
	id = strtab__intern(tl->st, out, n);
	if (out != buf)
		free(out);
	return id;
}

static size_t slot_of(const struct timeline *tl, uint32_t tid)
{
	return hash_mix(tid) & tl->index_mask;
}

long timeline__thread_find(const struct timeline *tl, uint32_t tid)
{
	for (size_t i = slot_of(tl, tid); tl->index[i]; i = (i + 1) & tl->index_mask)
		if (tl->threads[tl->index[i] - 1].tid == tid)
			return (long)tl->index[i] - 1;
	return -1;
}

static int index_grow(struct timeline *tl)
{
	size_t size = (tl->index_mask + 1) * 2;
	uint32_t *idx = calloc(size, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	free(tl->index);
	tl->index = idx;
	tl->index_mask = size - 1;
	for (size_t t = 0; t < tl->nthreads; t++) {
		size_t i = slot_of(tl, tl->threads[t].tid);

		while (tl->index[i])
			i = (i + 1) & tl->index_mask;
		tl->index[i] = (uint32_t)t + 1;
	}
	return 0;
}

long timeline__thread_get(struct timeline *tl, uint32_t pid, uint32_t tid, const char *comm,
			  size_t commlen)
{
	long found = tid ? timeline__thread_find(tl, tid) : -1;
	uint32_t name = comm ? timeline__intern(tl, comm, commlen) : 0;
	struct tl_thread *t;
	size_t i;

	if (!tid)
		return -EINVAL;
	if (name == NONE)
		return -ENOMEM;
	if (found >= 0) {
		t = &tl->threads[found];
		if (comm && commlen && t->comm != name)
			t->comm = name;
		if (t->pid != pid)
			t->ended = 0;
		t->pid = pid;
		return found;
	}
	if ((tl->nthreads + 1) * 2 > tl->index_mask + 1 && index_grow(tl))
		return -ENOMEM;
	if (ARRAY_GROW(tl->threads, tl->tcap, tl->nthreads + 1))
		return -ENOMEM;
	t = &tl->threads[tl->nthreads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	t->comm = name;
	t->first = UINT64_MAX;
	for (i = slot_of(tl, tid); tl->index[i]; i = (i + 1) & tl->index_mask)
		;
	tl->index[i] = (uint32_t)tl->nthreads + 1;
	return (long)tl->nthreads++;
}

void timeline__thread_end(struct timeline *tl, size_t i, uint64_t when)
{
	if (i < tl->nthreads && when)
		tl->threads[i].ended = when;
}

size_t timeline__nthreads(const struct timeline *tl)
{
	return tl->nthreads;
}

const struct tl_thread *timeline__thread(const struct timeline *tl, size_t i)
{
	return i < tl->nthreads ? &tl->threads[i] : NULL;
}

size_t timeline__nprocesses(const struct timeline *tl)
{
	return tl->nprocs;
}

const struct tl_process *timeline__process(const struct timeline *tl, size_t i)
{
	return i < tl->nprocs ? &tl->procs[i] : NULL;
}

int timeline__process_set(struct timeline *tl, uint32_t pid, const char *name,
			  const char *container, const char *container_id)
{
	uint32_t cid = timeline__intern(tl, container_id ? container_id : "",
					container_id ? strlen(container_id) : 0);
	struct tl_process *p = (struct tl_process *)timeline__process_find(tl, pid);
	uint32_t n = timeline__intern(tl, name ? name : "", name ? strlen(name) : 0);
	uint32_t c = timeline__intern(tl, container ? container : "",
				      container ? strlen(container) : 0);

	if (n == NONE || c == NONE || cid == NONE)
		return -ENOMEM;
	if (!p) {
		if (ARRAY_GROW(tl->procs, tl->pcap, tl->nprocs + 1))
			return -ENOMEM;
		p = &tl->procs[tl->nprocs++];
		p->pid = pid;
	}
	p->name = n;
	p->container = c;
	p->container_id = cid;
	return 0;
}

const struct tl_process *timeline__process_find(const struct timeline *tl, uint32_t pid)
{
	for (size_t i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].pid == pid)
			return &tl->procs[i];
	return NULL;
}

static bool valid(const struct timeline *tl, const struct tl_event *ev)
{
	uint32_t n = strtab__count(tl->st);

	return ev->start <= ev->end && ev->kind < TL_KIND_MAX && ev->name < n && ev->attr < n &&
	       ev->stack < n;
}

static uint64_t oldest_start(const struct timeline *tl)
{
	uint64_t m = UINT64_MAX;

	for (size_t i = 0; i < tl->nthreads; i++) {
		const struct tl_thread *t = &tl->threads[i];

		if (t->lo < t->n && t->ev[t->lo].start < m)
			m = t->ev[t->lo].start;
	}
	return m;
}

/* Drops the oldest eighth of the time held from every lane until under the cap. */
static void enforce_cap(struct timeline *tl)
{
	while (tl->held * sizeof(struct tl_event) > tl->mem_cap && tl->held) {
		uint64_t lo = oldest_start(tl), hi = tl->now, cut;

		if (lo == UINT64_MAX)
			break;
		if (hi < lo)
			hi = lo;
		cut = lo + (hi - lo) / 8 + 1;
		for (size_t i = 0; i < tl->nthreads; i++) {
			struct tl_thread *t = &tl->threads[i];

			while (t->lo < t->n && t->ev[t->lo].start < cut) {
				t->lo++;
				tl->held--;
				tl->dropped++;
			}
			if (t->lo == t->n) {
				t->lo = t->n = 0;
			} else if (t->lo > t->n / 2) {
				memmove(t->ev, t->ev + t->lo, (t->n - t->lo) * sizeof(*t->ev));
				t->n -= t->lo;
				t->lo = 0;
			}
		}
	}
}

int timeline__add(struct timeline *tl, size_t i, const struct tl_event *ev)
{
	struct tl_thread *t;
	size_t pos;

	if (i >= tl->nthreads || !valid(tl, ev))
		return -EINVAL;
	t = &tl->threads[i];
	if (ARRAY_GROW(t->ev, t->cap, t->n + 1))
		return -ENOMEM;
	/* Records arrive almost in order: insertion from the end. */
	pos = t->n;
	while (pos > t->lo && t->ev[pos - 1].start > ev->start)
		pos--;
	memmove(t->ev + pos + 1, t->ev + pos, (t->n - pos) * sizeof(*t->ev));
	t->ev[pos] = *ev;
	t->ev[pos].tid = t->tid;
	t->ev[pos].flags &= ~TL_EV_OPEN;
	if (!t->ev[pos].count)
		t->ev[pos].count = 1;
	t->n++;
	tl->held++;
	if (ev->end - ev->start > t->max_dur)
		t->max_dur = ev->end - ev->start;
	if (ev->start < t->first)
		t->first = ev->start;
	t->tot_ns[ev->kind] += ev->end - ev->start;
	t->tot_count[ev->kind] += t->ev[pos].count;
	if (ev->end > tl->now)
		tl->now = ev->end;
	enforce_cap(tl);
	return 0;
}

int timeline__extend(struct timeline *tl, size_t i, uint64_t start, uint32_t name, uint64_t end)
{
	struct tl_thread *t;
	struct tl_event *e;

	if (i >= tl->nthreads)
		return -ENOENT;
	t = &tl->threads[i];
	/* Recent: from the end, past the intervals that began after it. */
	for (size_t pos = t->n; pos > t->lo; pos--) {
		e = &t->ev[pos - 1];
		if (e->start < start)
			break;
		if (e->start != start || e->name != name)
			continue;
		if (end < e->end)
			return -ENOENT;
		t->tot_ns[e->kind] += end - e->end;
		e->end = end;
		if (end - start > t->max_dur)
			t->max_dur = end - start;
		if (end > tl->now)
			tl->now = end;
		return 0;
	}
	return -ENOENT;
}

void timeline__set_short(struct timeline *tl, size_t i, int kind, uint64_t count, uint64_t ns)
{
	if (i >= tl->nthreads || kind < 0 || kind >= TL_KIND_MAX)
		return;
	tl->threads[i].short_count[kind] = count;
	tl->threads[i].short_ns[kind] = ns;
}

void timeline__open_clear(struct timeline *tl)
{
	tl->nopen = 0;
}

int timeline__open_add(struct timeline *tl, size_t i, const struct tl_event *ev)
{
	if (i >= tl->nthreads || ev->kind >= TL_KIND_MAX || !valid(tl, &(struct tl_event){
			.start = 0, .end = 0, .kind = ev->kind, .name = ev->name,
			.attr = ev->attr, .stack = ev->stack }))
		return -EINVAL;
	if (ARRAY_GROW(tl->open, tl->ocap, tl->nopen + 1))
		return -ENOMEM;
	tl->open[tl->nopen].thread = (uint32_t)i;
	tl->open[tl->nopen].ev = *ev;
	tl->open[tl->nopen].ev.flags |= TL_EV_OPEN;
	tl->open[tl->nopen].ev.tid = tl->threads[i].tid;
	if (!tl->open[tl->nopen].ev.count)
		tl->open[tl->nopen].ev.count = 1;
	if (ev->start < tl->threads[i].first)
		tl->threads[i].first = ev->start;
	tl->nopen++;
	return 0;
}

size_t timeline__nopen(const struct timeline *tl)
{
	return tl->nopen;
}

struct tl_event timeline__open(const struct timeline *tl, size_t j)
{
	struct tl_event ev = tl->open[j].ev;

	ev.end = tl->now > ev.start ? tl->now : ev.start;
	return ev;
}

void timeline__set_now(struct timeline *tl, uint64_t now)
{
	if (now > tl->now)
		tl->now = now;
}

uint64_t timeline__now(const struct timeline *tl)
{
	return tl->now;
}

uint64_t timeline__start(const struct timeline *tl)
{
	uint64_t m = oldest_start(tl);

	for (size_t j = 0; j < tl->nopen; j++)
		if (tl->open[j].ev.start < m)
			m = tl->open[j].ev.start;
	return m == UINT64_MAX ? tl->now : m;
}

void timeline__set_wall_offset(struct timeline *tl, double unix_minus_mono_s)
{
	tl->wall_offset = unix_minus_mono_s;
}

double timeline__wall_offset(const struct timeline *tl)
{
	return tl->wall_offset;
}

void timeline__set_min_dur(struct timeline *tl, uint64_t ns)
{
	tl->min_dur = ns;
}

uint64_t timeline__min_dur(const struct timeline *tl)
{
	return tl->min_dur;
}

void timeline__set_syscall_mode(struct timeline *tl, enum tl_syscall_mode m)
{
	tl->syscall_mode = m;
}

enum tl_syscall_mode timeline__syscall_mode(const struct timeline *tl)
{
	return tl->syscall_mode;
}

const char *tl_syscall_mode_str(enum tl_syscall_mode m)
{
	return m == TL_SYSCALLS_BLOCKING ? "blocking + sampled"
	       : m == TL_SYSCALLS_ALL	 ? "all (--all-syscalls)"
					 : "";
}

const struct tl_event *timeline__lane(const struct timeline *tl, size_t i, size_t *n)
{
	const struct tl_thread *t = &tl->threads[i];

	*n = t->n - t->lo;
	return t->ev ? t->ev + t->lo : NULL; /* a lane without events has no array */
}

/* The first of ev[a..b) (sorted by start) that starts at or after ts; b when none does. */
static size_t first_start_from(const struct tl_event *ev, size_t a, size_t b, uint64_t ts)
{
	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (ev[m].start < ts)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

void timeline__range(const struct timeline *tl, size_t i, uint64_t t0, uint64_t t1,
		     size_t *from, size_t *to)
{
	const struct tl_thread *t = &tl->threads[i];
	const struct tl_event *ev = t->ev ? t->ev + t->lo : NULL;
	size_t n = t->n - t->lo;
	uint64_t lo = t0 > t->max_dur ? t0 - t->max_dur : 0;

	/* First start >= lo: nothing before it can reach t0. */
	*from = first_start_from(ev, 0, n, lo);
	*to = first_start_from(ev, *from, n, t1);
}

static uint64_t overlap(uint64_t s, uint64_t e, uint64_t t0, uint64_t t1)
{
	if (s < t0)
		s = t0;
	if (e > t1)
		e = t1;
	return e > s ? e - s : 0;
}

/* Whether a file system call on attr (its file) waits for another process or a person: a
 * pipe, a terminal, an eventfd or other anonymous inode. */
static bool waits_for_peer(const struct timeline *tl, uint32_t attr)
{
	static const char *const peers[] = { "pipe:", "anon_inode:", "/dev/pts/", "/dev/tty" };
	const char *s = attr ? strtab__str(tl->st, attr) : "";

	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
		if (!strncmp(s, peers[i], strlen(peers[i])))
			return true;
	return false;
}

/* Whether an interval counts as busy (see timeline__busy_time). */
static bool busy(const struct timeline *tl, const struct tl_event *e)
{
	switch (e->kind) {
	case TL_ONCPU:
	case TL_RUNQ:
	case TL_DSTATE:
		return true;
	case TL_FILE:
		return !waits_for_peer(tl, e->attr);
	case TL_LOCK:
		return e->flags & TL_EV_LOCKWAIT;
	default:
		return false;
	}
}

/* Time of thread i within [t0, t1) by kind into out (when not NULL), and the busy part. */
static uint64_t sum_time(const struct timeline *tl, size_t i, uint64_t t0, uint64_t t1,
			 uint64_t *out)
{
	const struct tl_event *ev;
	uint64_t sum = 0, ov;
	size_t n, a, b;

	if (out)
		memset(out, 0, TL_KIND_MAX * sizeof(*out));
	if (i >= tl->nthreads)
		return 0;
	ev = timeline__lane(tl, i, &n);
	timeline__range(tl, i, t0, t1, &a, &b);
	for (size_t k = a; k < b; k++) {
		ov = overlap(ev[k].start, ev[k].end, t0, t1);
		if (out)
			out[ev[k].kind] += ov;
		sum += busy(tl, &ev[k]) ? ov : 0;
	}
	for (size_t j = 0; j < tl->nopen; j++)
		if (tl->open[j].thread == i) {
			struct tl_event o = timeline__open(tl, j);

			ov = overlap(o.start, o.end, t0, t1);
			if (out)
				out[o.kind] += ov;
			sum += busy(tl, &o) ? ov : 0;
		}
	return sum;
}

void timeline__time_by_kind(const struct timeline *tl, size_t i, uint64_t t0, uint64_t t1,
			    uint64_t *out)
{
	sum_time(tl, i, t0, t1, out);
}

uint64_t timeline__busy_time(const struct timeline *tl, size_t i, uint64_t t0, uint64_t t1)
{
	return sum_time(tl, i, t0, t1, NULL);
}

void timeline__stats(const struct timeline *tl, struct timeline_stats *st)
{
	st->events = tl->held;
	st->dropped = tl->dropped;
	st->mem_bytes = tl->held * sizeof(struct tl_event);
	st->mem_cap = tl->mem_cap;
}

void timeline__add_dropped(struct timeline *tl, uint64_t n)
{
	tl->dropped += n;
}

const char *tl_futex_op_str(uint32_t op, char *buf, size_t n)
{
	static const char *const names[] = { "wait",	     "wake",	     "fd",
					     "requeue",	     "cmp_requeue",  "wake_op",
					     "lock_pi",	     "unlock_pi",    "trylock_pi",
					     "wait_bitset",  "wake_bitset",  "wait_requeue_pi",
					     "cmp_requeue_pi", "lock_pi2" };
	uint32_t cmd = op & FUTEX_CMD_MASK;

	if (cmd < sizeof(names) / sizeof(names[0]))
		snprintf(buf, n, "%s", names[cmd]);
	else
		snprintf(buf, n, "op%u", cmd);
	return buf;
}

static int by_start(const void *x, const void *y)
{
	const struct tl_event *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

long timeline__collect(const struct timeline *tl, size_t i, uint64_t t0, uint64_t t1,
		       struct tl_event **out)
{
	const struct tl_event *ev;
	size_t n, a, b, k = 0;
	struct tl_event *r;

	*out = NULL;
	if (i >= tl->nthreads)
		return 0;
	ev = timeline__lane(tl, i, &n);
	timeline__range(tl, i, t0, t1, &a, &b);
	r = malloc((b - a + tl->nopen + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t j = a; j < b; j++)
		if (ev[j].end >= t0 && ev[j].start < t1)
			r[k++] = ev[j];
	for (size_t j = 0; j < tl->nopen; j++)
		if (tl->open[j].thread == i) {
			struct tl_event o = timeline__open(tl, j);

			if (o.end >= t0 && o.start < t1)
				r[k++] = o;
		}
	qsort(r, k, sizeof(*r), by_start);
	*out = r;
	return (long)k;
}
