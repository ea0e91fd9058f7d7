#include "strtab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "util/grow.h"
#include "util/word.h"

#define CHUNK_SIZE (256u * 1024)
#define EMPTY_SLOT UINT32_MAX
#define ID_BYTES sizeof(uint32_t)

/* Strings are copied into large chunks so that millions of names cost one malloc per chunk;
 * each is preceded by its id (ID_BYTES, native order), so that a lookup that finds the string
 * finds its id in the same cache line. */
struct chunk {
	struct chunk *next;
	size_t used, size;
	char data[];
};

struct entry {
	char *str;
	uint32_t len;
	uint32_t hash; /* low 32 bits of its hash, for cheap compares and rehash */
};

/* A slot of the open-addressing table: a probe compares hash and length in the slot itself,
 * and a hit reads the string (and the id before it) next: two cache lines in all. */
struct slot {
	uint32_t hash;
	uint32_t len;
	const char *str; /* NULL: empty */
};

struct strtab {
	struct entry *ents; /* id -> string, length and hash */
	uint32_t count, cap;
	struct slot *slots;
	uint32_t mask;
	struct chunk *chunks;
	size_t mem;
};

/* Copies s[0..len) with a NUL after it and id before it into the arena; the copy. */
static char *arena_copy(struct strtab *st, const char *s, size_t len, uint32_t id)
{
	struct chunk *c = st->chunks;
	size_t need = ID_BYTES + len + 1;
	char *p;

	if (!c || c->size - c->used < need) {
		size_t size = need > CHUNK_SIZE / 4 ? need : CHUNK_SIZE;

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
	memcpy(p, &id, ID_BYTES);
	p += ID_BYTES;
	memcpy(p, s, len);
	p[len] = '\0';
	c->used += need;
	return p;
}

static int grow_slots(struct strtab *st)
{
	uint32_t nsize = st->slots ? (st->mask + 1) * 2 : 1024;
	struct slot *slots = calloc(nsize, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 0; id < st->count; id++) {
		const struct entry *e = &st->ents[id];
		uint32_t i = e->hash & (nsize - 1);

		while (slots[i].str)
			i = (i + 1) & (nsize - 1);
		slots[i] = (struct slot){ e->hash, e->len, e->str };
	}
	st->mem += (size_t)(nsize - (st->slots ? st->mask + 1 : 0)) * sizeof(*slots);
	free(st->slots);
	st->slots = slots;
	st->mask = nsize - 1;
	return 0;
}

/* Grows ents; ids stay below UINT32_MAX (ENOMEM). */
static int grow_ids(struct strtab *st)
{
	size_t ncap = grow_cap(st->cap, (size_t)st->count + 1, 1024, UINT32_MAX);

	if (!ncap || ARRAY_RESIZE(st->ents, ncap))
		return -ENOMEM;
	st->mem += (ncap - st->cap) * sizeof(*st->ents);
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
	free(st->ents);
	free(st->slots);
	free(st);
}

/* Whether a[0..len) and b[0..len) hold the same bytes: inline, a word at a time, since a
 * frame name's hit is confirmed here and a call to memcmp costs more than the compare. The
 * last word overlaps the one before it rather than ending in a byte loop, whose exit, at a
 * different length for every name, the processor would mispredict. */
static inline bool same_bytes(const char *a, const char *b, size_t len)
{
	uint64_t x, y;

	if (len < 8) {
		for (; len; a++, b++, len--)
			if (*a != *b)
				return false;
		return true;
	}
	for (size_t i = 0; i < len - 8; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return false;
	}
	memcpy(&x, a + len - 8, 8);
	memcpy(&y, b + len - 8, 8);
	return x == y;
}

static uint32_t lookup(const struct strtab *st, const char *s, size_t len, uint32_t h,
		       uint32_t *slot)
{
	uint32_t i = h & st->mask;

	for (;;) {
		const struct slot *sl = &st->slots[i];

		if (!sl->str) {
			*slot = i;
			return EMPTY_SLOT;
		}
		if (sl->hash == h && sl->len == len && same_bytes(sl->str, s, len)) {
			uint32_t id;

			memcpy(&id, sl->str - ID_BYTES, ID_BYTES);
			return id;
		}
		i = (i + 1) & st->mask;
	}
}

uint32_t strtab__find(const struct strtab *st, const char *s, size_t len)
{
	uint32_t slot;

	if (len > UINT32_MAX - 1)
		return UINT32_MAX;
	return lookup(st, s, len, strtab__hash(s, len), &slot);
}

/* The table's own hash, a word at a time and built so that a scan can compute it while it
 * looks for the end of the string (strtab__hash_field): one multiply per 8 bytes, the last
 * bytes zero-padded, the length and a full mix at the end. Only the table sees its values. */
static inline uint64_t hash_step(uint64_t h, uint64_t w)
{
	return ((h << 31 | h >> 33) ^ w) * 0x9e3779b97f4a7c15ULL;
}

static inline uint32_t hash_end(uint64_t h, uint64_t tail, size_t len)
{
	return (uint32_t)hash_mix(hash_step(h, tail) ^ len);
}

uint32_t strtab__hash(const char *s, size_t len)
{
	uint64_t h = 0, w = 0;
	size_t i = 0;

	for (; len - i >= 8; i += 8)
		h = hash_step(h, load_le(s + i));
	for (size_t k = 0; i + k < len; k++)
		w |= (uint64_t)(unsigned char)s[i + k] << (8 * k);
	return hash_end(h, w, len);
}

static inline __attribute__((always_inline)) size_t hash_field(const char *s, size_t max,
								char sep, uint32_t *h,
								bool *printable)
{
	const uint64_t ones = 0x0101010101010101ULL, top = ones << 7;
	uint64_t acc = 0, w, bad_any = 0;
	size_t i = 0;

	/* Per word: the separator's bytes and the bytes outside 0x20..0x7e flagged in their top
	 * bit. Such flags can be wrong above a byte truly flagged (borrows, carries), never below it, so
	 * the lowest flag is exact: enough to find the end and to tell whether anything before
	 * it is not printable. */
	for (; max - i >= 8; i += 8) {
		uint64_t x, y, semi, bad;

		w = load_le(s + i);
		x = w ^ ones * (unsigned char)sep;
		semi = (x - ones) & ~x & top;
		/* a byte of 0x20..0x7e plus 0x60 has its top bit set, plus 0x01 not; a byte of
		 * 0x80 or more is caught by its own top bit (and its carries, above it, do not
		 * matter: it is a bad byte below them) */
		y = w + ones * 0x60;
		bad = ~y | (w + ones) | w;
		if (semi) {
			unsigned k = (unsigned)__builtin_ctzll(semi) / 8;
			uint64_t below = k ? ~0ULL >> (64 - 8 * k) : 0;

			*printable = !(bad_any & top) && !(bad & below & top);
			*h = hash_end(acc, w & below, i + k);
			return i + k;
		}
		bad_any |= bad;
		acc = hash_step(acc, w);
	}
	/* fewer than 8 bytes left */
	bad_any &= top;
	w = 0;
	size_t k = 0;
	for (; i + k < max; k++) {
		unsigned char c = (unsigned char)s[i + k];

		if (c == (unsigned char)sep)
			break;
		bad_any |= c < 0x20 || c >= 0x7f;
		w |= (uint64_t)c << (8 * k);
	}
	*printable = !bad_any;
	*h = hash_end(acc, w, i + k);
	return i + k;
}

size_t strtab__hash_field(const char *s, size_t max, char sep, uint32_t *h, bool *printable)
{
	return hash_field(s, max, sep, h, printable);
}

size_t strtab__split(const struct strtab *st, const char *s, size_t len, char sep,
		     struct strtab_key *keys, bool *printable, size_t max, size_t *used)
{
	size_t k = 0, start = 0;

	for (; k < max && start <= len; k++) {
		keys[k].s = s + start;
		keys[k].len = hash_field(s + start, len - start, sep, &keys[k].hash, &printable[k]);
		__builtin_prefetch(&st->slots[keys[k].hash & st->mask]);
		start += keys[k].len + 1;
	}
	*used = start;
	return k;
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
	copy = arena_copy(st, s, len, st->count);
	if (!copy)
		return UINT32_MAX;
	id = st->count++;
	st->ents[id] = (struct entry){ copy, (uint32_t)len, h };
	st->slots[slot] = (struct slot){ h, (uint32_t)len, copy };
	return id;
}

int strtab__intern_batch(struct strtab *st, const struct strtab_key *keys, size_t n,
			 uint32_t *ids)
{
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		const struct strtab_key *k = &keys[i];
		uint32_t slot, id = EMPTY_SLOT;

		if (k->len <= UINT32_MAX - 1)
			id = lookup(st, k->s, k->len, k->hash, &slot);
		if (id == EMPTY_SLOT) /* new (or too long: refused there) */
			id = strtab__intern_hashed(st, k->s, k->len, k->hash);
		if (id == UINT32_MAX)
			err = -ENOMEM;
		ids[i] = id;
	}
	return err;
}

const char *strtab__str(const struct strtab *st, uint32_t id)
{
	return id < st->count ? st->ents[id].str : "";
}

size_t strtab__len(const struct strtab *st, uint32_t id)
{
	return id < st->count ? st->ents[id].len : 0;
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
	size_t lx = st->ents[x].len, ly = st->ents[y].len;
	int c = memcmp(st->ents[x].str, st->ents[y].str, lx < ly ? lx : ly);

	return c ? c : (lx > ly) - (lx < ly);
}

void strtab__sort_ids(const struct strtab *st, uint32_t *ids, size_t n)
{
	if (n > 1)
		qsort_r(ids, n, sizeof(*ids), id_cmp, (void *)st);
}
