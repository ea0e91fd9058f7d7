#include "lockhint.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A lock wait in progress with a known owner: one edge of the wait-for graph. */
struct edge {
	uint32_t waiter, owner;
	uint64_t addr, since;
	uint32_t stack;
};

static const char *comm_of(const struct timeline *tl, uint32_t tid)
{
	long i = timeline__thread_find(tl, tid);

	return i < 0 ? "?" : strtab__str(timeline__strtab_c(tl), timeline__thread(tl, (size_t)i)->comm);
}

/* The innermost frames of a folded stack (root first), at most n of them, into buf. */
static const char *stack_tail(const struct timeline *tl, uint32_t stack, char *buf, size_t cap,
			      int n)
{
	const char *s = strtab__str(timeline__strtab_c(tl), stack), *p;
	int seps = 0;

	if (!stack || !*s)
		return "no stack";
	for (p = s + strlen(s); p > s; p--)
		if (p[-1] == ';' && ++seps == n)
			break;
	snprintf(buf, cap, "%s%s", p > s ? "..;" : "", p);
	return buf;
}

static size_t append(char *buf, size_t cap, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static size_t append(char *buf, size_t cap, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (len >= cap)
		return len;
	va_start(ap, fmt);
	n = vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
	return n < 0 ? len : len + (size_t)n;
}

static void push(struct tl_hint *out, size_t max, size_t *n, const struct tl_hint *h)
{
	if (*n < max)
		out[*n] = *h;
	(*n)++;
}

static size_t edges_of(const struct timeline *tl, struct edge **out)
{
	size_t n = 0, nopen = timeline__nopen(tl);
	struct edge *e = calloc(nopen ? nopen : 1, sizeof(*e));

	*out = e;
	if (!e)
		return 0;
	for (size_t j = 0; j < nopen; j++) {
		struct tl_event ev = timeline__open(tl, j);

		if (ev.kind != TL_LOCK || !(ev.flags & TL_EV_OWNER) || ev.owner == ev.tid)
			continue;
		e[n++] = (struct edge){ ev.tid, ev.owner, ev.addr, ev.start, ev.stack };
	}
	return n;
}

static long edge_from(const struct edge *e, size_t n, uint32_t waiter)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].waiter == waiter)
			return (long)i;
	return -1;
}

/* Each waiter has one out-edge, so a cycle is found by walking from every node; a cycle is
 * reported once, from its smallest tid. */
static void deadlocks(const struct timeline *tl, const struct edge *e, size_t n,
		      struct tl_hint *out, size_t max, size_t *nh)
{
	for (size_t s = 0; s < n; s++) {
		uint32_t path[TL_HINT_TIDS * 4];
		size_t len = 0;
		long cur = (long)s, cyc = -1;

		while (cur >= 0 && len < sizeof(path) / sizeof(path[0])) {
			for (size_t k = 0; k < len; k++)
				if (path[k] == e[cur].waiter)
					cyc = (long)k;
			if (cyc >= 0)
				break;
			path[len++] = e[cur].waiter;
			cur = edge_from(e, n, e[cur].owner);
		}
		if (cyc < 0 || cyc != 0)
			continue; /* no cycle, or s is not on it */
		uint32_t min = path[0];

		for (size_t k = 1; k < len; k++)
			if (path[k] < min)
				min = path[k];
		if (min != path[0])
			continue;
		struct tl_hint h = { .kind = TL_HINT_DEADLOCK, .share = 1 };
		size_t tl_len = 0;
		char sb[512];

		tl_len = append(h.text, sizeof(h.text), tl_len, "deadlock: threads");
		for (size_t k = 0; k < len; k++) {
			tl_len = append(h.text, sizeof(h.text), tl_len, "%s %s (tid %u)",
					k ? (k + 1 == len ? " and" : ",") : "", comm_of(tl, path[k]),
					path[k]);
			if (h.ntids < TL_HINT_TIDS)
				h.tids[h.ntids++] = path[k];
		}
		tl_len = append(h.text, sizeof(h.text), tl_len, " wait for each other:");
		for (size_t k = 0; k < len; k++) {
			const struct edge *x = &e[edge_from(e, n, path[k])];

			tl_len = append(h.text, sizeof(h.text), tl_len,
					"%s tid %u waits on lock 0x%llx held by tid %u at %s",
					k ? ";" : "", x->waiter, (unsigned long long)x->addr,
					x->owner, stack_tail(tl, x->stack, sb, sizeof(sb), 3));
		}
		push(out, max, nh, &h);
	}
}

/* Threads stuck in lock waits with unknown owners and no CPU time since: two or more in one
 * process look like a deadlock. */
static void suspects(const struct timeline *tl, struct tl_hint *out, size_t max, size_t *nh)
{
	size_t nopen = timeline__nopen(tl);
	uint64_t now = timeline__now(tl);
	bool *done = calloc(nopen ? nopen : 1, sizeof(*done));

	if (!done)
		return;
	for (size_t j = 0; j < nopen; j++) {
		struct tl_event a = timeline__open(tl, j);
		struct tl_hint h = { .kind = TL_HINT_DEADLOCK, .share = 1 };
		uint32_t pid;
		long ti;
		size_t len = 0, count = 0;
		uint64_t shortest = UINT64_MAX;
		char sb[512];

		if (done[j] || a.kind != TL_LOCK || (a.flags & TL_EV_OWNER) ||
		    !(a.flags & TL_EV_LOCKWAIT) || now - a.start < TL_HINT_SUSPECT_NS)
			continue;
		ti = timeline__thread_find(tl, a.tid);
		if (ti < 0)
			continue;
		pid = timeline__thread(tl, (size_t)ti)->pid;
		for (size_t k = j; k < nopen; k++) {
			struct tl_event b = timeline__open(tl, k);
			long bi = timeline__thread_find(tl, b.tid);
			uint64_t t[TL_KIND_MAX];

			if (done[k] || b.kind != TL_LOCK || (b.flags & TL_EV_OWNER) ||
			    !(b.flags & TL_EV_LOCKWAIT) || bi < 0 ||
			    timeline__thread(tl, (size_t)bi)->pid != pid ||
			    now - b.start < TL_HINT_SUSPECT_NS)
				continue;
			timeline__time_by_kind(tl, (size_t)bi, b.start, now, t);
			if (t[TL_ONCPU])
				continue;
			done[k] = true;
			if (h.ntids < TL_HINT_TIDS)
				h.tids[h.ntids++] = b.tid;
			if (now - b.start < shortest)
				shortest = now - b.start;
			count++;
		}
		if (count < 2)
			continue;
		len = append(h.text, sizeof(h.text), len,
			     "deadlock: suspected (lock owners unknown): %zu threads of pid %u in "
			     "futex waits for %.1f s or more with no CPU time:",
			     count, pid, (double)shortest / 1e9);
		for (size_t k = 0; k < h.ntids; k++) {
			for (size_t m = 0; m < nopen; m++) {
				struct tl_event b = timeline__open(tl, m);

				if (b.tid == h.tids[k] && b.kind == TL_LOCK) {
					len = append(h.text, sizeof(h.text), len,
						     "%s %s (tid %u) on 0x%llx at %s", k ? ";" : "",
						     comm_of(tl, b.tid), b.tid,
						     (unsigned long long)b.addr,
						     stack_tail(tl, b.stack, sb, sizeof(sb), 3));
					break;
				}
			}
		}
		push(out, max, nh, &h);
	}
	free(done);
}

struct wait_sum {
	uint32_t owner;
	uint64_t addr, ns;
};

/* Adds ns of waiting on (owner, addr) to the per-owner sums of one waiter. */
static void sum_add(struct wait_sum *s, size_t *n, size_t cap, uint32_t owner, uint64_t addr,
		    uint64_t ns)
{
	for (size_t i = 0; i < *n; i++)
		if (s[i].owner == owner) {
			s[i].ns += ns;
			if (!s[i].addr)
				s[i].addr = addr;
			return;
		}
	if (*n < cap)
		s[(*n)++] = (struct wait_sum){ owner, addr, ns };
}

/* Whether tid is named by one of the deadlock hints out[0..n) already made. */
static bool in_deadlock(const struct tl_hint *out, size_t n, uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; out[i].kind == TL_HINT_DEADLOCK && k < out[i].ntids; k++)
			if (out[i].tids[k] == tid)
				return true;
	return false;
}

static void contention(const struct timeline *tl, struct tl_hint *out, size_t max, size_t *nh)
{
	size_t ndead = *nh < max ? *nh : max;

	uint64_t now = timeline__now(tl), t0 = timeline__start(tl);

	for (size_t i = 0; i < timeline__nthreads(tl); i++) {
		const struct tl_thread *t = timeline__thread(tl, i);
		struct wait_sum sums[16];
		size_t ns = 0, n, best = 0;
		const struct tl_event *ev = timeline__lane(tl, i, &n);
		uint64_t total = 0, span, from = t->first > t0 ? t->first : t0;
		uint32_t stack = 0;

		if (in_deadlock(out, ndead, t->tid))
			continue; /* a deadlock says more than its waits' share */
		for (size_t k = 0; k < n; k++)
			if (ev[k].kind == TL_LOCK && (ev[k].flags & TL_EV_OWNER) &&
			    ev[k].owner != t->tid) {
				sum_add(sums, &ns, 16, ev[k].owner, ev[k].addr, ev[k].end - ev[k].start);
				total += ev[k].end - ev[k].start;
				stack = ev[k].stack ? ev[k].stack : stack;
			}
		for (size_t j = 0; j < timeline__nopen(tl); j++) {
			struct tl_event o = timeline__open(tl, j);

			if (o.tid == t->tid && o.kind == TL_LOCK && (o.flags & TL_EV_OWNER) &&
			    o.owner != t->tid) {
				sum_add(sums, &ns, 16, o.owner, o.addr, o.end - o.start);
				total += o.end - o.start;
				stack = o.stack ? o.stack : stack;
			}
		}
		span = now > from ? now - from : 0;
		if (!ns || !span || total * 3 <= span)
			continue;
		for (size_t k = 1; k < ns; k++)
			if (sums[k].ns > sums[best].ns)
				best = k;
		struct tl_hint h = { .kind = TL_HINT_CONTENTION, .share = (double)total / span };
		char sb[512];

		if (h.share > 1)
			h.share = 1;
		h.tids[h.ntids++] = t->tid;
		h.tids[h.ntids++] = sums[best].owner;
		snprintf(h.text, sizeof(h.text),
			 "contention: %s (tid %u) waited %.0f%% of %.1f s on lock 0x%llx held by "
			 "%s (tid %u)%s, at %s",
			 strtab__str(timeline__strtab_c(tl), t->comm), t->tid, 100 * h.share,
			 (double)span / 1e9, (unsigned long long)sums[best].addr,
			 comm_of(tl, sums[best].owner), sums[best].owner,
			 ns > 1 ? " and others" : "", stack_tail(tl, stack, sb, sizeof(sb), 3));
		push(out, max, nh, &h);
	}
}

size_t tl_hints(const struct timeline *tl, struct tl_hint *out, size_t max)
{
	struct edge *e = NULL;
	size_t n = edges_of(tl, &e), nh = 0;

	if (e)
		deadlocks(tl, e, n, out, max, &nh);
	free(e);
	suspects(tl, out, max, &nh);
	contention(tl, out, max, &nh);
	return nh;
}
