/* The live set of the leak profile: see leak.h. Blocks sit in one array (freed slots reused
 * through a free list), found by an open-addressing table on (tgid, address) with backward-shift
 * deletion; blocks not shown yet wait in a FIFO by allocation time, which records arrive in. */
#include "leak.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "util/grow.h"

#define NONE UINT32_MAX

struct slot {
	struct leak_block b;
	uint32_t gen;	    /* bumped when the slot is freed, so a stale FIFO entry is told */
	uint32_t next_free; /* free list link while the slot is free */
	bool used;
};

struct young {
	uint32_t slot, gen;
};

struct leak_set {
	struct slot *slots;
	size_t nslots, slots_cap;
	uint32_t free_head;
	uint32_t *index; /* open addressing: slot numbers, NONE when empty */
	size_t mask;	 /* index size - 1 (a power of two), 0 before the first block */
	size_t used;
	struct young *fifo; /* ring of blocks not shown yet */
	size_t fifo_head, fifo_len, fifo_cap;
	struct leak_set_stats st;
	void (*observer)(void *ctx, const struct leak_block *b, double bytes);
	void *observer_ctx;
};

double leak_weight(uint64_t size, uint64_t mean)
{
	double p;

	if (mean <= 1 || !size)
		return 1.0;
	p = -expm1(-(double)size / (double)mean);
	return p > 0 ? 1.0 / p : 1.0;
}

struct leak_set *leak_set__new(void)
{
	struct leak_set *s = calloc(1, sizeof(*s));

	if (s)
		s->free_head = NONE;
	return s;
}

void leak_set__free(struct leak_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nslots; i++)
		if (s->slots[i].used)
			free(s->slots[i].b.frames);
	free(s->slots);
	free(s->index);
	free(s->fifo);
	free(s);
}

static size_t key_hash(uint32_t tgid, uint64_t addr)
{
	return (size_t)hash_mix(addr ^ ((uint64_t)tgid << 48) ^ tgid);
}

/* The index position holding the block of (tgid, addr), or the empty one where it would go. */
static size_t find_pos(const struct leak_set *s, uint32_t tgid, uint64_t addr)
{
	size_t i = key_hash(tgid, addr) & s->mask;

	for (;;) {
		uint32_t k = s->index[i];

		if (k == NONE || (s->slots[k].b.addr == addr && s->slots[k].b.tgid == tgid))
			return i;
		i = (i + 1) & s->mask;
	}
}

static int grow_index(struct leak_set *s)
{
	size_t n = s->mask ? (s->mask + 1) * 2 : 1024;
	uint32_t *old = s->index;
	size_t old_n = s->mask ? s->mask + 1 : 0;

	s->index = malloc(n * sizeof(*s->index));
	if (!s->index) {
		s->index = old;
		return -ENOMEM;
	}
	memset(s->index, 0xff, n * sizeof(*s->index));
	s->mask = n - 1;
	for (size_t i = 0; i < old_n; i++)
		if (old[i] != NONE) {
			const struct leak_block *b = &s->slots[old[i]].b;

			s->index[find_pos(s, b->tgid, b->addr)] = old[i];
		}
	free(old);
	return 0;
}

/* Removes index position i, shifting back the entries after it that belong before it. */
static void index_remove(struct leak_set *s, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t home;
		uint32_t k;

		j = (j + 1) & s->mask;
		k = s->index[j];
		if (k == NONE)
			break;
		home = key_hash(s->slots[k].b.tgid, s->slots[k].b.addr) & s->mask;
		/* Whether home lies cyclically in (i, j]: then the entry stays. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		s->index[i] = k;
		i = j;
	}
	s->index[i] = NONE;
	s->used--;
}

void leak_set__observe(struct leak_set *s,
		       void (*fn)(void *ctx, const struct leak_block *b, double bytes), void *ctx)
{
	s->observer = fn;
	s->observer_ctx = ctx;
}

/* The block's bytes, times sign, join p and are told to the observer. 0 or -ENOMEM. */
static int show(struct leak_set *s, struct profile *p, const struct leak_block *b, double sign)
{
	double bytes = sign * (double)b->size * b->weight;

	if (p && profile__add_stack(p, b->frames, b->nframes, bytes))
		return -ENOMEM;
	if (s->observer)
		s->observer(s->observer_ctx, b, bytes);
	return 0;
}

/* Drops the block at index position i (taken out of p if shown). */
static void drop(struct leak_set *s, size_t i, struct profile *p)
{
	uint32_t k = s->index[i];
	struct slot *sl = &s->slots[k];

	if (sl->b.shown)
		show(s, p, &sl->b, -1.0);
	s->st.blocks--;
	s->st.bytes -= (double)sl->b.size * sl->b.weight;
	free(sl->b.frames);
	sl->b.frames = NULL;
	sl->used = false;
	sl->gen++;
	sl->next_free = s->free_head;
	s->free_head = k;
	index_remove(s, i);
}

static int fifo_push(struct leak_set *s, uint32_t slot, uint32_t gen)
{
	if (s->fifo_len == s->fifo_cap) {
		size_t ncap = s->fifo_cap ? s->fifo_cap * 2 : 256;
		struct young *n = malloc(ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < s->fifo_len; i++)
			n[i] = s->fifo[(s->fifo_head + i) % s->fifo_cap];
		free(s->fifo);
		s->fifo = n;
		s->fifo_cap = ncap;
		s->fifo_head = 0;
	}
	s->fifo[(s->fifo_head + s->fifo_len++) % s->fifo_cap] = (struct young){ slot, gen };
	return 0;
}

int leak_set__alloc(struct leak_set *s, uint32_t tgid, uint64_t addr, uint64_t ts_ns,
		    uint64_t size, double weight, const uint32_t *frames, size_t n,
		    struct profile *p)
{
	uint32_t *copy, k;
	struct slot *sl;
	size_t i;

	if ((s->used + 1) * 4 > (s->mask + 1) * 3 && grow_index(s))
		return -ENOMEM;
	i = find_pos(s, tgid, addr);
	if (s->index[i] != NONE) {
		s->st.replaced++;
		drop(s, i, p);
		i = find_pos(s, tgid, addr);
	}
	copy = malloc((n ? n : 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, frames, n * sizeof(*copy));
	if (s->free_head != NONE) {
		k = s->free_head;
		s->free_head = s->slots[k].next_free;
	} else {
		if (ARRAY_GROW(s->slots, s->slots_cap, s->nslots + 1)) {
			free(copy);
			return -ENOMEM;
		}
		k = (uint32_t)s->nslots++;
		s->slots[k].gen = 0;
	}
	sl = &s->slots[k];
	if (fifo_push(s, k, sl->gen)) {
		sl->next_free = s->free_head;
		s->free_head = k;
		free(copy);
		return -ENOMEM;
	}
	sl->used = true;
	sl->b = (struct leak_block){ .tgid = tgid, .nframes = (uint32_t)n, .addr = addr,
				     .ts_ns = ts_ns, .size = size, .weight = weight, .frames = copy };
	s->index[i] = k;
	s->used++;
	s->st.blocks++;
	s->st.allocs++;
	s->st.bytes += (double)size * weight;
	return 0;
}

int leak_set__release(struct leak_set *s, uint32_t tgid, uint64_t addr, struct profile *p)
{
	size_t i;

	if (!s->mask)
		return 0;
	i = find_pos(s, tgid, addr);
	if (s->index[i] == NONE)
		return 0;
	drop(s, i, p);
	s->st.frees++;
	return 1;
}

int leak_set__age(struct leak_set *s, uint64_t until_ns, struct profile *p)
{
	int n = 0;

	while (s->fifo_len) {
		struct young y = s->fifo[s->fifo_head];
		struct slot *sl = &s->slots[y.slot];

		if (sl->gen == y.gen && sl->used && !sl->b.shown) {
			if (sl->b.ts_ns > until_ns)
				break;
			if (show(s, p, &sl->b, 1.0))
				return -ENOMEM;
			sl->b.shown = true;
			n++;
		}
		s->fifo_head = (s->fifo_head + 1) % s->fifo_cap;
		s->fifo_len--;
	}
	return n;
}

size_t leak_set__forget_pid(struct leak_set *s, uint32_t tgid, struct profile *p,
			    void (*fn)(void *ctx, uint32_t tgid, uint64_t addr), void *ctx)
{
	size_t n = 0;

	for (size_t k = 0; k < s->nslots; k++) {
		struct slot *sl = &s->slots[k];

		if (!sl->used || sl->b.tgid != tgid)
			continue;
		if (fn)
			fn(ctx, tgid, sl->b.addr);
		drop(s, find_pos(s, tgid, sl->b.addr), p);
		n++;
	}
	s->st.forgotten += n;
	return n;
}

int leak_set__each(const struct leak_set *s, int (*fn)(void *ctx, const struct leak_block *b),
		   void *ctx)
{
	for (size_t k = 0; k < s->nslots; k++) {
		int r = s->slots[k].used ? fn(ctx, &s->slots[k].b) : 0;

		if (r)
			return r;
	}
	return 0;
}

int leak_set__move_frames(struct leak_set *s, struct frames *to, const struct frames *from)
{
	for (size_t k = 0; k < s->nslots; k++) {
		struct leak_block *b = &s->slots[k].b;

		for (uint32_t i = 0; s->slots[k].used && i < b->nframes; i++) {
			uint32_t f = frames__intern_from(to, from, b->frames[i]);

			if (f == UINT32_MAX)
				return -ENOMEM;
			b->frames[i] = f;
		}
	}
	return 0;
}

int leak_set__by_name(const struct leak_set *s, const struct frames *ft, uint64_t now,
		      struct leak_by_name *b)
{
	uint32_t n = strtab__count(frames__strtab(ft));

	if (n > b->cap) {
		if (array_resize(&b->count, n, sizeof(*b->count)) ||
		    array_resize(&b->oldest, n, sizeof(*b->oldest)) ||
		    array_resize(&b->seen, n, sizeof(*b->seen)))
			return -ENOMEM;
		b->cap = n;
	}
	b->n = n;
	b->at = now;
	memset(b->count, 0, n * sizeof(*b->count));
	memset(b->oldest, 0, n * sizeof(*b->oldest));
	memset(b->seen, 0, n * sizeof(*b->seen));
	for (size_t k = 0; k < s->nslots; k++) {
		const struct leak_block *bl = &s->slots[k].b;

		if (!s->slots[k].used || !bl->shown)
			continue;
		for (uint32_t i = 0; i < bl->nframes; i++) {
			uint32_t name = bl->frames[i] < frames__count(ft)
						? frames__get(ft, bl->frames[i])->name
						: UINT32_MAX;

			if (name >= n || b->seen[name] == k + 1)
				continue;
			b->seen[name] = (uint32_t)k + 1;
			b->count[name] += bl->weight;
			if (!b->oldest[name] || bl->ts_ns < b->oldest[name])
				b->oldest[name] = bl->ts_ns;
		}
	}
	return 0;
}

void leak_by_name__free(struct leak_by_name *b)
{
	free(b->count);
	free(b->oldest);
	free(b->seen);
	memset(b, 0, sizeof(*b));
}

void leak_set__stats(const struct leak_set *s, struct leak_set_stats *st)
{
	*st = s->st;
}

size_t leak_set__mem(const struct leak_set *s)
{
	size_t n = s->slots_cap * sizeof(*s->slots) + (s->mask ? s->mask + 1 : 0) * sizeof(uint32_t) +
		   s->fifo_cap * sizeof(*s->fifo);

	for (size_t k = 0; k < s->nslots; k++)
		if (s->slots[k].used)
			n += s->slots[k].b.nframes * sizeof(uint32_t);
	return n;
}
