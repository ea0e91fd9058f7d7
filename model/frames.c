#include "frames.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "util/grow.h"

#define EMPTY_SLOT UINT32_MAX
#define EMPTY_SLOT64 UINT64_MAX /* id UINT32_MAX is never given */

struct frames {
	struct strtab *st;
	struct frame *v;
	uint32_t count, cap;
	uint64_t *slots; /* open addressing: hash << 32 | id, or EMPTY_SLOT64: a probe compares
			  * the hash before it reads a frame (a new frame's probes read none) */
	uint32_t mask;
	/* name id -> frame of frames__intern_name, whose kind follows from the name alone: a
	 * second hash lookup per frame saved on the folded-reading hot path. */
	uint32_t *by_name;
	uint32_t by_name_cap;
};

/* A frame is a function: its source file and line are those of the first address seen, so
 * every sample of the function lands on one node whatever line it was on. */
static uint32_t frame_hash(const struct frame *f)
{
	uint32_t key[3] = { f->name, f->module, f->kind };

	return (uint32_t)hash_bytes(key, sizeof(key));
}

static bool frame_eq(const struct frame *a, const struct frame *b)
{
	return a->name == b->name && a->module == b->module && a->kind == b->kind;
}

static int grow_slots(struct frames *ft)
{
	uint32_t nsize = ft->slots ? (ft->mask + 1) * 2 : 1024;
	uint64_t *slots = malloc((size_t)nsize * sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	memset(slots, 0xff, (size_t)nsize * sizeof(*slots));
	for (uint32_t id = 0; id < ft->count; id++) {
		uint32_t h = frame_hash(&ft->v[id]), i = h & (nsize - 1);

		while (slots[i] != EMPTY_SLOT64)
			i = (i + 1) & (nsize - 1);
		slots[i] = (uint64_t)h << 32 | id;
	}
	free(ft->slots);
	ft->slots = slots;
	ft->mask = nsize - 1;
	return 0;
}

struct frames *frames__new(struct strtab *st)
{
	struct frames *ft = calloc(1, sizeof(*ft));
	struct frame root = { 0 };

	if (!ft)
		return NULL;
	ft->st = st;
	if (grow_slots(ft) || frames__intern(ft, &root) != 0) {
		frames__free(ft);
		return NULL;
	}
	return ft;
}

void frames__free(struct frames *ft)
{
	if (!ft)
		return;
	free(ft->v);
	free(ft->slots);
	free(ft->by_name);
	free(ft);
}

/* The id of frame f (whose frame_hash is h), or EMPTY_SLOT with *slot the empty slot where
 * it would go. */
static uint32_t lookup(const struct frames *ft, const struct frame *f, uint32_t h,
		       uint32_t *slot)
{
	for (uint32_t i = h & ft->mask;; i = (i + 1) & ft->mask) {
		uint64_t v = ft->slots[i];

		if (v == EMPTY_SLOT64) {
			*slot = i;
			return EMPTY_SLOT;
		}
		if ((uint32_t)(v >> 32) == h && frame_eq(&ft->v[(uint32_t)v], f))
			return (uint32_t)v;
	}
}

uint32_t frames__find(const struct frames *ft, const struct frame *f)
{
	uint32_t slot;

	return lookup(ft, f, frame_hash(f), &slot);
}

/* The id in to of string id of from, or EMPTY_SLOT. */
static uint32_t str_in(const struct strtab *to, const struct strtab *from, uint32_t id)
{
	return strtab__find(to, strtab__str(from, id), strtab__len(from, id));
}

uint32_t frames__find_from(const struct frames *ft, const struct frames *from, uint32_t id)
{
	const struct frame *f;
	struct frame key;

	if (ft == from)
		return id;
	if (id >= from->count)
		return EMPTY_SLOT;
	f = &from->v[id];
	key = (struct frame){ .name = str_in(ft->st, from->st, f->name), .kind = f->kind };
	key.module = f->module ? str_in(ft->st, from->st, f->module) : 0;
	if (key.name == EMPTY_SLOT || key.module == EMPTY_SLOT)
		return EMPTY_SLOT;
	return frames__find(ft, &key);
}

uint32_t frames__intern_from(struct frames *ft, const struct frames *from, uint32_t id)
{
	struct strtab *sst = from->st, *dst = ft->st;
	struct frame f = *frames__get(from, id);

	if (ft == from)
		return id;
	f.name = strtab__intern(dst, strtab__str(sst, f.name), strtab__len(sst, f.name));
	f.module = strtab__intern(dst, strtab__str(sst, f.module), strtab__len(sst, f.module));
	f.file = strtab__intern(dst, strtab__str(sst, f.file), strtab__len(sst, f.file));
	if (f.name == EMPTY_SLOT || f.module == EMPTY_SLOT || f.file == EMPTY_SLOT)
		return EMPTY_SLOT;
	return frames__intern(ft, &f);
}

uint32_t frames__intern(struct frames *ft, const struct frame *f)
{
	uint32_t h = frame_hash(f), i, id = lookup(ft, f, h, &i);

	if (id != EMPTY_SLOT)
		return id;
	if (ft->count == ft->cap) {
		size_t ncap = grow_cap(ft->cap, (size_t)ft->count + 1, 1024, UINT32_MAX);

		if (!ncap || ARRAY_RESIZE(ft->v, ncap))
			return UINT32_MAX;
		ft->cap = (uint32_t)ncap;
	}
	if ((uint64_t)(ft->count + 1) * 4 > (uint64_t)(ft->mask + 1) * 3) {
		if (grow_slots(ft))
			return UINT32_MAX;
		lookup(ft, f, h, &i);
	}
	ft->v[ft->count] = *f;
	ft->slots[i] = (uint64_t)h << 32 | ft->count;
	return ft->count++;
}

static bool has_suffix(const char *s, size_t len, const char *suf)
{
	size_t n = strlen(suf);

	return len >= n && !memcmp(s + len - n, suf, n);
}

enum frame_kind frame_kind_guess(const char *s, size_t len)
{
	if (has_suffix(s, len, "_[k]"))
		return FRAME_KERNEL;
	if (has_suffix(s, len, "_[j]"))
		return FRAME_JIT;
	if (has_suffix(s, len, "_[i]"))
		return FRAME_INLINED;
	if (len >= 5 && !memcmp(s, "[Pod]", 5))
		return FRAME_POD;
	if (len >= 5 && !memcmp(s, "[Con]", 5))
		return FRAME_CONTAINER;
	if (len >= 3 && s[0] == '[' && s[1] >= '0' && s[1] <= '9') {
		size_t i = 1;

		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i < len && s[i] == ']')
			return FRAME_PROCESS;
	}
	if ((len == 1 && s[0] == '-') || (len >= 2 && s[0] == '[' && s[len - 1] == ']'))
		return FRAME_SPECIAL;
	return FRAME_USER;
}

uint32_t frames__intern_name(struct frames *ft, const char *name, size_t len)
{
	struct strtab_key key = { name, len, strtab__hash(name, len) };
	uint32_t id;

	return frames__intern_names(ft, &key, 1, &id) ? UINT32_MAX : id;
}

size_t frames__split_names(const struct frames *ft, const char *s, size_t len, char sep,
			   struct strtab_key *keys, bool *printable, size_t max, size_t *used)
{
	return strtab__split(ft->st, s, len, sep, keys, printable, max, used);
}

/* The frame of frames__intern_name for the name name[0..len) whose strtab id is name_id. */
static uint32_t frame_of_name(struct frames *ft, uint32_t name_id, const char *name, size_t len)
{
	struct frame f = { .name = name_id };
	uint32_t id;

	if (f.name < ft->by_name_cap && ft->by_name[f.name] != EMPTY_SLOT)
		return ft->by_name[f.name];
	f.kind = frame_kind_guess(name, len);
	id = frames__intern(ft, &f);
	if (id == UINT32_MAX)
		return id;
	if (f.name >= ft->by_name_cap) {
		size_t ncap = grow_cap(ft->by_name_cap, (size_t)f.name + 1, 1024, UINT32_MAX);

		if (!ncap || ARRAY_RESIZE(ft->by_name, ncap))
			return id; /* only the shortcut is lost */
		memset(ft->by_name + ft->by_name_cap, 0xff,
		       (ncap - ft->by_name_cap) * sizeof(*ft->by_name));
		ft->by_name_cap = (uint32_t)ncap;
	}
	ft->by_name[f.name] = id;
	return id;
}

int frames__intern_names(struct frames *ft, const struct strtab_key *keys, size_t n,
			 uint32_t *ids)
{
	if (strtab__intern_batch(ft->st, keys, n, ids))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		ids[i] = frame_of_name(ft, ids[i], keys[i].s, keys[i].len);
		if (ids[i] == UINT32_MAX)
			return -ENOMEM;
	}
	return 0;
}

const struct frame *frames__get(const struct frames *ft, uint32_t id)
{
	return &ft->v[id < ft->count ? id : 0];
}

const char *frames__name(const struct frames *ft, uint32_t id)
{
	return strtab__str(ft->st, frames__get(ft, id)->name);
}

size_t frames__name_len(const struct frames *ft, uint32_t id)
{
	return strtab__len(ft->st, frames__get(ft, id)->name);
}

uint32_t frames__count(const struct frames *ft)
{
	return ft->count;
}

struct strtab *frames__strtab(const struct frames *ft)
{
	return ft->st;
}

static const char *const kind_names[FRAME_KIND_MAX] = {
	[FRAME_USER] = "user",	       [FRAME_KERNEL] = "kernel",   [FRAME_JIT] = "jit",
	[FRAME_INLINED] = "inlined",   [FRAME_POD] = "pod",	    [FRAME_CONTAINER] = "container",
	[FRAME_PROCESS] = "process",   [FRAME_THREAD] = "thread",   [FRAME_SPECIAL] = "special",
};

const char *frame_kind_str(enum frame_kind kind)
{
	return (unsigned)kind < FRAME_KIND_MAX ? kind_names[kind] : "user";
}

int frame_kind_parse(const char *s)
{
	for (int k = 0; k < FRAME_KIND_MAX; k++)
		if (!strcmp(kind_names[k], s))
			return k;
	return -1;
}
