#include "strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "util/grow.h"

#define CHUNK_SIZE (256u * 1024)
#define EMPTY_SLOT UINT32_MAX
#define EMPTY_SLOT64 UINT64_MAX /* id UINT32_MAX is never given */

/* Strings are copied into large chunks so that millions of names cost one malloc per chunk. */
struct chunk {
	struct chunk *next;
	size_t used, size;
	char data[];
};

struct strtab {
	char **strs;	 /* id -> string */
	uint32_t *lens;	 /* id -> length */
	uint32_t *hashes; /* id -> low 32 bits of its hash, for cheap compares and rehash */
	uint32_t count, cap;
	uint64_t *slots; /* open addressing: hash << 32 | id, or EMPTY_SLOT64: a probe compares
			  * the hash without touching the id's arrays */
	uint32_t mask;
	struct chunk *chunks;
	size_t mem;
};

static char *arena_copy(struct strtab *st, const char *s, size_t len)
{
	struct chunk *c = st->chunks;
	char *p;

	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > CHUNK_SIZE / 4 ? len + 1 : CHUNK_SIZE;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		/* A big one-off string gets its own chunk behind the current one. */
		if (size != CHUNK_SIZE && st->chunks) {
			c->next = st->chunks->next;
			st->chunks->next = c;
		} else {
			c->next = st->chunks;
			st->chunks = c;
		}
		st->mem += sizeof(*c) + size;
	}
	p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = '\0';
	c->used += len + 1;
	return p;
}

static int grow_slots(struct strtab *st)
{
	uint32_t nsize = st->slots ? (st->mask + 1) * 2 : 1024;
	uint64_t *slots = malloc((size_t)nsize * sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	memset(slots, 0xff, (size_t)nsize * sizeof(*slots));
	for (uint32_t id = 0; id < st->count; id++) {
		uint32_t i = st->hashes[id] & (nsize - 1);

		while (slots[i] != EMPTY_SLOT64)
			i = (i + 1) & (nsize - 1);
		slots[i] = (uint64_t)st->hashes[id] << 32 | id;
	}
	st->mem += (size_t)(nsize - (st->slots ? st->mask + 1 : 0)) * sizeof(*slots);
	free(st->slots);
	st->slots = slots;
	st->mask = nsize - 1;
	return 0;
}

/* Grows strs, lens and hashes by one shared capacity; ids stay below UINT32_MAX (ENOMEM). */
static int grow_ids(struct strtab *st)
{
	size_t ncap = grow_cap(st->cap, (size_t)st->count + 1, 1024, UINT32_MAX);

	if (!ncap || ARRAY_RESIZE(st->strs, ncap) || ARRAY_RESIZE(st->lens, ncap) ||
	    ARRAY_RESIZE(st->hashes, ncap))
		return -ENOMEM;
	st->mem += (ncap - st->cap) * (sizeof(*st->strs) + sizeof(*st->lens) + sizeof(*st->hashes));
	st->cap = (uint32_t)ncap;
	return 0;
}

struct strtab *strtab__new(void)
{
	struct strtab *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	if (grow_slots(st) || strtab__intern(st, "", 0) != 0) {
		strtab__free(st);
		return NULL;
	}
	return st;
}

void strtab__free(struct strtab *st)
{
	struct chunk *c, *next;

	if (!st)
		return;
	for (c = st->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(st->strs);
	free(st->lens);
	free(st->hashes);
	free(st->slots);
	free(st);
}

static uint32_t lookup(const struct strtab *st, const char *s, size_t len, uint32_t h,
		       uint32_t *slot)
{
	uint32_t i = h & st->mask;

	for (;;) {
		uint64_t v = st->slots[i];
		uint32_t id = (uint32_t)v;

		if (v == EMPTY_SLOT64) {
			*slot = i;
			return EMPTY_SLOT;
		}
		if ((uint32_t)(v >> 32) == h && st->lens[id] == len && !memcmp(st->strs[id], s, len))
			return id;
		i = (i + 1) & st->mask;
	}
}

uint32_t strtab__find(const struct strtab *st, const char *s, size_t len)
{
	uint32_t slot;

	if (len > UINT32_MAX - 1)
		return UINT32_MAX;
	return lookup(st, s, len, (uint32_t)hash_bytes(s, len), &slot);
}

uint32_t strtab__hash(const char *s, size_t len)
{
	return (uint32_t)hash_bytes(s, len);
}

void strtab__prefetch(const struct strtab *st, uint32_t h)
{
	__builtin_prefetch(&st->slots[h & st->mask]);
}

uint32_t strtab__intern(struct strtab *st, const char *s, size_t len)
{
	return strtab__intern_hashed(st, s, len, strtab__hash(s, len));
}

uint32_t strtab__intern_hashed(struct strtab *st, const char *s, size_t len, uint32_t h)
{
	uint32_t slot, id;
	char *copy;

	if (len > UINT32_MAX - 1)
		return UINT32_MAX;
	id = lookup(st, s, len, h, &slot);
	if (id != EMPTY_SLOT)
		return id;
	if (st->count == UINT32_MAX - 1)
		return UINT32_MAX;
	if (st->count == st->cap && grow_ids(st))
		return UINT32_MAX;
	if ((uint64_t)(st->count + 1) * 4 > (uint64_t)(st->mask + 1) * 3) {
		if (grow_slots(st))
			return UINT32_MAX;
		lookup(st, s, len, h, &slot);
	}
	copy = arena_copy(st, s, len);
	if (!copy)
		return UINT32_MAX;
	id = st->count++;
	st->strs[id] = copy;
	st->lens[id] = (uint32_t)len;
	st->hashes[id] = h;
	st->slots[slot] = (uint64_t)h << 32 | id;
	return id;
}

const char *strtab__str(const struct strtab *st, uint32_t id)
{
	return id < st->count ? st->strs[id] : "";
}

size_t strtab__len(const struct strtab *st, uint32_t id)
{
	return id < st->count ? st->lens[id] : 0;
}

uint32_t strtab__count(const struct strtab *st)
{
	return st->count;
}

size_t strtab__mem(const struct strtab *st)
{
	return st->mem + sizeof(*st);
}

static int id_cmp(const void *a, const void *b, void *ctx)
{
	const struct strtab *st = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	size_t lx = st->lens[x], ly = st->lens[y];
	int c = memcmp(st->strs[x], st->strs[y], lx < ly ? lx : ly);

	return c ? c : (lx > ly) - (lx < ly);
}

void strtab__sort_ids(const struct strtab *st, uint32_t *ids, size_t n)
{
	if (n > 1)
		qsort_r(ids, n, sizeof(*ids), id_cmp, (void *)st);
}
