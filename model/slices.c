/* Time slices: see slices.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../util/grow.h"
#include "slices.h"

struct slices {
	struct frames *ft;
	enum value_kind kind;
	size_t max, max_bytes;
	size_t n;
	double fine_s;
	size_t budget;	 /* memory cap in average slices; 0 = none */
	double avg_mem;	 /* moving average of a pushed slice's memory */
	uint64_t dropped; /* slices dropped for the memory cap */
	struct slice *v; /* max entries, oldest first */
	double keep_s;	 /* history older than this goes (0: kept) */
	double *heat;	 /* heat buckets heat_first .. heat_first + heat_n - 1 */
	size_t heat_n, heat_cap;
	int64_t heat_first;
	double heat_base; /* sum of the buckets dropped (the level before the first) */
};

struct slices *slices__new(struct frames *ft, enum value_kind kind, size_t max_slices,
			   size_t max_bytes)
{
	struct slices *s;

	if (max_slices < 2)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->v = calloc(max_slices, sizeof(*s->v));
	if (!s->v) {
		free(s);
		return NULL;
	}
	s->ft = ft;
	s->kind = kind;
	s->max = max_slices;
	s->max_bytes = max_bytes;
	return s;
}

struct slices *slices__copy(const struct slices *s, struct frames *ft)
{
	struct slices *c = slices__new(ft, s->kind, s->max, s->max_bytes);

	if (!c)
		return NULL;
	c->fine_s = s->fine_s;
	c->budget = s->budget;
	c->avg_mem = s->avg_mem;
	c->dropped = s->dropped;
	c->keep_s = s->keep_s;
	c->heat_base = s->heat_base;
	if (s->heat_n) {
		if (ARRAY_GROW(c->heat, c->heat_cap, s->heat_n)) {
			slices__free(c);
			return NULL;
		}
		memcpy(c->heat, s->heat, s->heat_n * sizeof(*s->heat));
		c->heat_n = s->heat_n;
		c->heat_first = s->heat_first;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct profile *p = profile__new(ft, s->kind, false);

		if (!p || profile__merge(p, s->v[i].p)) {
			profile__free(p);
			slices__free(c);
			return NULL;
		}
		c->v[c->n++] = (struct slice){ s->v[i].t0, s->v[i].t1, p };
	}
	return c;
}

void slices__clear(struct slices *s)
{
	for (size_t i = 0; i < s->n; i++)
		profile__free(s->v[i].p);
	s->n = 0;
	s->heat_n = 0;
	s->heat_base = 0;
}

void slices__free(struct slices *s)
{
	if (!s)
		return;
	slices__clear(s);
	free(s->heat);
	free(s->v);
	free(s);
}

void slices__set_fine(struct slices *s, double seconds)
{
	s->fine_s = seconds > 0 ? seconds : 0;
}

void slices__set_budget(struct slices *s, size_t slices)
{
	s->budget = slices;
}

uint64_t slices__dropped(const struct slices *s)
{
	return s->dropped;
}

void slices__set_keep(struct slices *s, double seconds)
{
	s->keep_s = seconds > 0 ? seconds : 0;
}

/* Drops the heat buckets before bucket b. */
static void heat_trim(struct slices *s, int64_t b)
{
	size_t drop;

	if (!s->heat_n || b <= s->heat_first)
		return;
	drop = b - s->heat_first >= (int64_t)s->heat_n ? s->heat_n : (size_t)(b - s->heat_first);
	for (size_t i = 0; i < drop; i++)
		s->heat_base += s->heat[i];
	memmove(s->heat, s->heat + drop, (s->heat_n - drop) * sizeof(*s->heat));
	s->heat_n -= drop;
	s->heat_first = b;
}

double slices__heat_base(const struct slices *s)
{
	return s->heat_base;
}

void slices__heat_add_base(struct slices *s, double value)
{
	if (isfinite(value))
		s->heat_base += value;
}

int slices__heat_levels(const struct slices *s, double **lv, size_t *cap)
{
	double sum = s->heat_base;

	if (s->heat_n && ARRAY_GROW(*lv, *cap, s->heat_n))
		return -ENOMEM;
	for (size_t i = 0; i < s->heat_n; i++) {
		sum += s->heat[i];
		(*lv)[i] = sum;
	}
	return 0;
}

int slices__heat_add(struct slices *s, double t, double value)
{
	int64_t b;

	if (!isfinite(t) || t < 0 || t > 1e12 || isnan(value))
		return -EINVAL;
	b = (int64_t)floor(t / SLICES_BUCKET_S);
	if (!s->heat_n) {
		if (ARRAY_GROW(s->heat, s->heat_cap, 1))
			return -ENOMEM;
		s->heat_first = b;
		s->heat[0] = 0;
		s->heat_n = 1;
	}
	if (b < s->heat_first) {
		size_t pre = (size_t)(s->heat_first - b);

		if (pre + s->heat_n > SLICES_HEAT_MAX)
			return -ERANGE;
		if (ARRAY_GROW(s->heat, s->heat_cap, s->heat_n + pre))
			return -ENOMEM;
		memmove(s->heat + pre, s->heat, s->heat_n * sizeof(*s->heat));
		memset(s->heat, 0, pre * sizeof(*s->heat));
		s->heat_n += pre;
		s->heat_first = b;
	} else if (b >= s->heat_first + (int64_t)s->heat_n) {
		size_t old = s->heat_n;

		/* The oldest buckets go first when the map would pass its cap. */
		heat_trim(s, b - (SLICES_HEAT_MAX - 1));
		if (!s->heat_n) {
			s->heat_first = b;
			old = 0;
		}
		if (ARRAY_GROW(s->heat, s->heat_cap, (size_t)(b - s->heat_first) + 1))
			return -ENOMEM;
		s->heat_n = (size_t)(b - s->heat_first) + 1;
		memset(s->heat + old, 0, (s->heat_n - old) * sizeof(*s->heat));
	}
	s->heat[b - s->heat_first] += value;
	return 0;
}

const double *slices__heat(const struct slices *s, int64_t *first, size_t *n)
{
	*first = s->heat_first;
	*n = s->heat_n;
	return s->heat_n ? s->heat : NULL;
}

double slices__heat_sum(const struct slices *s, double from, double to)
{
	double sum = 0;

	for (size_t i = 0; i < s->heat_n; i++) {
		double t = (double)(s->heat_first + (int64_t)i) * SLICES_BUCKET_S;

		if (t >= from - 1e-9 && t < to - 1e-9)
			sum += s->heat[i];
	}
	return sum;
}

size_t slices__count(const struct slices *s)
{
	return s->n;
}

const struct slice *slices__get(const struct slices *s, size_t i)
{
	return i < s->n ? &s->v[i] : NULL;
}

double slices__start(const struct slices *s)
{
	return s->n ? s->v[0].t0 : 0;
}

double slices__end(const struct slices *s)
{
	return s->n ? s->v[s->n - 1].t1 : 0;
}

/* Bytes of the slices' profiles: what the memory cap bounds (the heat map is bounded by the
 * keep horizon and SLICES_HEAT_MAX). */
static size_t profiles_mem(const struct slices *s)
{
	size_t m = 0;

	for (size_t i = 0; i < s->n; i++)
		m += profile__mem(s->v[i].p);
	return m;
}

size_t slices__mem(const struct slices *s)
{
	size_t m = s->heat_cap * sizeof(*s->heat);

	for (size_t i = 0; i < s->n; i++)
		m += profile__mem(s->v[i].p);
	return m;
}

/* Picks the adjacent pair to merge: the one whose merged span is smallest relative to its
 * age, so old history coarsens first and each slice's span stays about proportional to its
 * age. Pairs reaching into the fine period are taken only when nothing else can merge. */
static size_t pick_pair(const struct slices *s)
{
	double now = s->v[s->n - 1].t1, best = INFINITY;
	size_t pick = 0;

	for (size_t i = 0; i + 1 < s->n; i++) {
		double span = s->v[i + 1].t1 - s->v[i].t0, age = now - s->v[i].t0;
		double cost = span / (age > 0 ? age : 1e-9);

		if (s->v[i + 1].t1 > now - s->fine_s)
			break; /* pairs from here on are newer still */
		if (cost < best) {
			best = cost;
			pick = i;
		}
	}
	return pick; /* the oldest pair when every pair is fine */
}

/* Merges slices i and i+1 into i. 0 or -ENOMEM (nothing changed). */
static int merge_pair(struct slices *s, size_t i)
{
	if (profile__merge(s->v[i].p, s->v[i + 1].p))
		return -ENOMEM;
	s->v[i].t1 = s->v[i + 1].t1;
	profile__free(s->v[i + 1].p);
	memmove(&s->v[i + 1], &s->v[i + 2], (s->n - i - 2) * sizeof(*s->v));
	s->n--;
	return 0;
}

/* The memory cap in force: max_bytes, and budget times the average slice. */
static size_t mem_cap(const struct slices *s)
{
	size_t cap = s->max_bytes;

	if (s->budget) {
		double b = (double)s->budget * s->avg_mem;

		if (!cap || b < (double)cap)
			cap = (size_t)b;
	}
	return cap;
}

/* True when slice i ends before the fine period (it may merge or go). */
static bool coarse(const struct slices *s, size_t i)
{
	return s->v[i].t1 <= s->v[s->n - 1].t1 - s->fine_s;
}

/* Drops the oldest slice. */
static void drop_oldest(struct slices *s)
{
	profile__free(s->v[0].p);
	memmove(&s->v[0], &s->v[1], (s->n - 1) * sizeof(*s->v));
	s->n--;
	s->dropped++;
}

int slices__push(struct slices *s, double t0, double t1, const struct profile *p)
{
	struct profile *copy;
	size_t cap;
	bool helps = true;

	if (!(t1 > t0) || !isfinite(t0) || !isfinite(t1))
		return -EINVAL;
	copy = profile__new(s->ft, s->kind, false);
	if (!copy || profile__merge(copy, p)) {
		profile__free(copy);
		return -ENOMEM;
	}
	if (s->n == s->max && merge_pair(s, pick_pair(s))) {
		profile__free(copy);
		return -ENOMEM;
	}
	s->v[s->n++] = (struct slice){ t0, t1, copy };
	s->avg_mem = s->avg_mem ? s->avg_mem + ((double)profile__mem(copy) - s->avg_mem) / 8
				: (double)profile__mem(copy);
	/* The memory cap: merging shares the nodes two slices have in common, so history that
	 * repeats itself stays long. History that does not (new processes all the time) cannot
	 * shrink by merging: once a merge shares less than a quarter of the nodes of the slice
	 * merged away, the oldest slices go instead. Slices of the fine period stay (they are shown). */
	cap = mem_cap(s);
	while (cap && s->n > 1 && profiles_mem(s) > cap) {
		if (helps && s->n > 2 && coarse(s, 1)) {
			size_t i = pick_pair(s);
			uint32_t a = profile__node_count(s->v[i].p), b = profile__node_count(s->v[i + 1].p);

			if (merge_pair(s, i))
				break; /* consistent, over the cap until memory returns */
			helps = a + b - profile__node_count(s->v[i].p) >= b / 4;
		} else if (coarse(s, 0)) {
			drop_oldest(s);
		} else {
			break;
		}
	}
	if (s->keep_s) {
		double from = t1 - s->keep_s;
		size_t drop = 0;

		while (drop + 1 < s->n && s->v[drop].t1 <= from)
			profile__free(s->v[drop++].p);
		memmove(s->v, s->v + drop, (s->n - drop) * sizeof(*s->v));
		s->n -= drop;
		heat_trim(s, (int64_t)floor(from / SLICES_BUCKET_S));
	}
	return 0;
}

int slices__fold_range(const struct slices *s, double from, double to, struct profile *out)
{
	for (size_t i = 0; i < s->n; i++) {
		double mid = (s->v[i].t0 + s->v[i].t1) / 2;

		if (mid >= from && mid < to && profile__merge(out, s->v[i].p))
			return -ENOMEM;
	}
	return 0;
}

int slices__fold_overlap(const struct slices *s, double from, double to, struct profile *out)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].t0 < to && s->v[i].t1 > from && profile__merge(out, s->v[i].p))
			return -ENOMEM;
	return 0;
}

double slices__overlap_secs(const struct slices *s, double from, double to)
{
	double secs = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].t0 < to && s->v[i].t1 > from)
			secs += s->v[i].t1 - s->v[i].t0;
	return secs;
}

int slices__fold(struct slices *ring, struct profile *shown, enum fold_mode mode, double window_s,
		 const struct profile *slice, double t0, double t1)
{
	int err;

	if ((unsigned)mode >= FOLD_MODE_MAX || (mode != FOLD_ACCUMULATE && !(window_s > 0)) ||
	    (mode == FOLD_WINDOW && !ring))
		return -EINVAL;
	if (ring) {
		err = slices__push(ring, t0, t1, slice);
		if (err)
			return err;
	}
	switch (mode) {
	case FOLD_WINDOW:
		profile__clear(shown);
		return slices__fold_range(ring, t1 - window_s, INFINITY, shown);
	case FOLD_DECAY:
		/* Halving every window_s seconds: what arrived window_s ago weighs half. */
		profile__scale(shown, pow(0.5, (t1 - t0) / window_s));
		return profile__merge(shown, slice);
	default:
		return profile__merge(shown, slice);
	}
}
