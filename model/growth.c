/* The regions of the growth profile: see growth.h. One array of regions sorted by process and
 * start address, never overlapping within a process; a lookup is a binary search, a change a
 * memmove (processes map anonymous memory rarely, in large pieces). */
#include "growth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

struct region {
	uint32_t tgid;
	uint32_t nframes;
	uint64_t start, end;
	uint32_t *frames; /* root first, in the collector's frame table; owned */
};

struct growth_set {
	struct region *v;
	size_t n, cap;
	struct growth_stats st;
};

struct growth_set *growth_set__new(void)
{
	return calloc(1, sizeof(struct growth_set));
}

void growth_set__free(struct growth_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].frames);
	free(s->v);
	free(s);
}

/* The first region of tgid that ends after addr (or the first of a later process): where a
 * range starting at addr begins to overlap, and where a region starting at addr goes. */
static size_t lower(const struct growth_set *s, uint32_t tgid, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct region *r = &s->v[mid];

		if (r->tgid < tgid || (r->tgid == tgid && r->end <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void take(const struct region *r, uint64_t bytes, struct profile *p)
{
	if (p && bytes)
		profile__add_stack(p, r->frames, r->nframes, -(double)bytes);
}

static int insert_at(struct growth_set *s, size_t i, const struct region *r)
{
	if (ARRAY_GROW(s->v, s->cap, s->n + 1))
		return -ENOMEM;
	memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
	s->v[i] = *r;
	s->n++;
	return 0;
}

static void remove_at(struct growth_set *s, size_t i)
{
	free(s->v[i].frames);
	memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(*s->v));
	s->n--;
}

double growth_set__unmap(struct growth_set *s, uint32_t tgid, uint64_t addr, uint64_t len,
			 struct profile *p)
{
	uint64_t end = addr + len < addr ? UINT64_MAX : addr + len, taken = 0;
	size_t i = lower(s, tgid, addr);

	if (!len)
		return 0;
	/* A region reaching past both ends is split in two: its tail becomes a new region. */
	if (i < s->n && s->v[i].tgid == tgid && s->v[i].start < addr && s->v[i].end > end) {
		struct region tail = s->v[i];

		tail.start = end;
		tail.frames = malloc((tail.nframes ? tail.nframes : 1) * sizeof(uint32_t));
		if (!tail.frames)
			return -ENOMEM;
		memcpy(tail.frames, s->v[i].frames, tail.nframes * sizeof(uint32_t));
		if (insert_at(s, i + 1, &tail)) {
			free(tail.frames);
			return -ENOMEM;
		}
		s->v[i].end = addr;
		take(&s->v[i], len, p);
		s->st.unmaps++;
		return (double)len;
	}
	while (i < s->n && s->v[i].tgid == tgid && s->v[i].start < end) {
		struct region *r = &s->v[i];
		uint64_t lo = r->start > addr ? r->start : addr, hi = r->end < end ? r->end : end;

		take(r, hi - lo, p);
		taken += hi - lo;
		if (lo == r->start && hi == r->end) {
			remove_at(s, i);
			continue;
		}
		if (lo == r->start)
			r->start = hi; /* its head went */
		else
			r->end = lo; /* its tail went */
		i++;
	}
	if (taken)
		s->st.unmaps++;
	return (double)taken;
}

double growth_set__map(struct growth_set *s, uint32_t tgid, uint64_t addr, uint64_t len,
		       const uint32_t *frames, size_t n, struct profile *p)
{
	struct region r = { .tgid = tgid, .nframes = (uint32_t)n, .start = addr, .end = addr + len };
	double taken;

	if (!len || r.end < addr)
		return 0;
	r.frames = malloc((n ? n : 1) * sizeof(*r.frames));
	if (!r.frames)
		return -ENOMEM;
	memcpy(r.frames, frames, n * sizeof(*frames));
	taken = growth_set__unmap(s, tgid, addr, len, p);
	if (taken < 0 || insert_at(s, lower(s, tgid, addr), &r)) {
		free(r.frames);
		return -ENOMEM;
	}
	if (p)
		profile__add_stack(p, frames, n, (double)len);
	s->st.maps++;
	return taken;
}

double growth_set__forget_pid(struct growth_set *s, uint32_t tgid, struct profile *p)
{
	return growth_set__unmap(s, tgid, 0, UINT64_MAX, p);
}

int growth_set__move_frames(struct growth_set *s, struct frames *to, const struct frames *from)
{
	for (size_t k = 0; k < s->n; k++)
		for (uint32_t i = 0; i < s->v[k].nframes; i++) {
			uint32_t f = frames__intern_from(to, from, s->v[k].frames[i]);

			if (f == UINT32_MAX)
				return -ENOMEM;
			s->v[k].frames[i] = f;
		}
	return 0;
}

void growth_set__stats(const struct growth_set *s, struct growth_stats *st)
{
	*st = s->st;
	st->regions = s->n;
	st->bytes = 0;
	for (size_t i = 0; i < s->n; i++)
		st->bytes += s->v[i].end - s->v[i].start;
}

size_t growth_set__mem(const struct growth_set *s)
{
	size_t n = s->cap * sizeof(*s->v);

	for (size_t i = 0; i < s->n; i++)
		n += s->v[i].nframes * sizeof(uint32_t);
	return n;
}
