/* Sorted symbol arrays: entries grow by doubling, names go to one arena. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symtab.h"
#include "util/grow.h"

struct sym_table {
	struct sym_entry *syms;
	size_t count, cap;
	char *arena;
	size_t used, arena_cap;
};

struct sym_table *sym_table__new(void)
{
	return calloc(1, sizeof(struct sym_table));
}

void sym_table__free(struct sym_table *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->arena);
	free(t);
}

int sym_table__add_ref(struct sym_table *t, uint64_t start, uint64_t size, uint32_t ref,
		       uint32_t tag, uint32_t prio)
{
	struct sym_entry *e;

	if (ARRAY_GROW(t->syms, t->cap, t->count + 1))
		return -ENOMEM;
	e = &t->syms[t->count++];
	sym_entry__set(e, start, size, ref, tag, prio);
	return 0;
}

struct sym_entry *sym_table__room(struct sym_table *t, size_t n)
{
	return t->cap - t->count >= n ? t->syms + t->count : NULL;
}

void sym_table__added(struct sym_table *t, size_t k)
{
	t->count += k;
}

int sym_table__add(struct sym_table *t, uint64_t start, uint64_t size, const char *name, size_t len,
		   uint32_t tag, uint32_t prio)
{
	if (t->used + len + 1 > UINT32_MAX)
		return -ENOMEM;
	if (ARRAY_GROW(t->arena, t->arena_cap, t->used + len + 1) ||
	    sym_table__add_ref(t, start, size, (uint32_t)t->used, tag, prio))
		return -ENOMEM;
	memcpy(t->arena + t->used, name, len);
	t->arena[t->used + len] = 0;
	t->used += len + 1;
	return 0;
}

int sym_table__reserve(struct sym_table *t, size_t nsyms, size_t name_bytes)
{
	if (ARRAY_GROW(t->syms, t->cap, t->count + nsyms) ||
	    ARRAY_GROW(t->arena, t->arena_cap, t->used + name_bytes))
		return -ENOMEM;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Insertion sort of v[0..n) by cmp_entry, at most budget moves; false when the budget ran
 * out (v is then a permutation of what it was, partly sorted). */
static bool insertion_sort(struct sym_entry *v, size_t n, size_t budget)
{
	for (size_t i = 1; i < n; i++) {
		struct sym_entry x;
		size_t j = i;

		if (v[i - 1].start < v[i].start || cmp_entry(&v[i - 1], &v[i]) <= 0)
			continue; /* in order: most are, by their starts alone */
		x = v[i];
		while (j > 0 && cmp_entry(&v[j - 1], &x) > 0) {
			v[j] = v[j - 1];
			j--;
			if (!--budget) {
				v[j] = x;
				return false;
			}
		}
		v[j] = x;
	}
	return true;
}

/* Stable LSD radix sort of v[0..n) by start, 11 bits per pass over the bits in which starts
 * differ only (a shared object's 100 MB of code: 3 passes, where a byte per pass takes 4).
 * false on ENOMEM. */
#define RADIX_BITS 11
static bool radix_sort_start(struct sym_entry *v, size_t n)
{
	size_t (*count)[1 << RADIX_BITS];
	struct sym_entry *tmp, *from = v, *to;
	uint64_t any = 0, all = ~0ull, diff;
	int shift[64 / RADIX_BITS + 1], np = 0;

	for (size_t i = 0; i < n; i++) {
		any |= v[i].start;
		all &= v[i].start;
	}
	diff = any ^ all;
	for (int sh = diff ? __builtin_ctzll(diff) : 64; sh < 64 && diff >> sh; sh += RADIX_BITS)
		shift[np++] = sh;
	count = calloc(np ? np : 1, sizeof(*count));
	to = tmp = malloc(n * sizeof(*tmp));
	if (!count || !tmp) {
		free(count);
		free(tmp);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < np; k++)
			count[k][(v[i].start >> shift[k]) & ((1 << RADIX_BITS) - 1)]++;
	for (int k = 0; k < np; k++) {
		size_t sum = 0, *c = count[k];

		for (int d = 0; d < 1 << RADIX_BITS; d++) {
			size_t m = c[d];

			c[d] = sum;
			sum += m;
		}
		for (size_t i = 0; i < n; i++)
			to[c[(from[i].start >> shift[k]) & ((1 << RADIX_BITS) - 1)]++] = from[i];
		struct sym_entry *t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(count);
	free(tmp);
	return true;
}

/* Sorts v[0..n) by cmp_entry. By insertion while that stays cheap: kallsyms comes in address
 * order but for its aliases, listed one after the other, and a handful of symbols (a few
 * moves each). Else, as for ELF symbol tables, a radix sort by address, then insertion again
 * to order the symbols that share an address; qsort only if that too runs long (thousands
 * of names at one address) or memory runs out. Same order every way: no two entries compare
 * equal (names differ). Insertion is not tried first on entries out of order more than one
 * time in 16 (a .dynsym in hash order): it would give up only after 4n moves. */
static void sort_entries(struct sym_entry *v, size_t n)
{
	size_t descents = 0;

	if (n < 2)
		return;
	for (size_t i = 1; i < n; i++)
		descents += v[i - 1].start > v[i].start; /* only to choose: the result is the same */
	if (descents <= n / 16 && insertion_sort(v, n, 4 * n + 64))
		return;
	if (radix_sort_start(v, n) && insertion_sort(v, n, 4 * n + 64))
		return;
	qsort(v, n, sizeof(*v), cmp_entry);
}

void sym_table__finish(struct sym_table *t, uint64_t max_gap)
{
	size_t out = 0;

	if (!t->count)
		return;
	sort_entries(t->syms, t->count);
	for (size_t i = 0; i < t->count; i++) {
		if (out && t->syms[out - 1].start == t->syms[i].start) {
			/* the preferred name stays; a sized alias can still give it a size */
			if (!t->syms[out - 1].size)
				t->syms[out - 1].size = t->syms[i].size;
			continue;
		}
		t->syms[out++] = t->syms[i];
	}
	t->count = out;
	for (size_t i = 0; i < t->count; i++) {
		struct sym_entry *e = &t->syms[i];
		uint64_t gap;

		if (e->size)
			continue;
		if (i + 1 < t->count) {
			gap = t->syms[i + 1].start - e->start;
			if (max_gap && gap > max_gap)
				gap = max_gap;
		} else {
			gap = max_gap ? max_gap : 1;
		}
		e->size = gap > UINT32_MAX ? UINT32_MAX : gap;
	}
	/* give back the slack of the doubling growth */
	ARRAY_SHRINK(t->syms, t->cap, t->count);
	ARRAY_SHRINK(t->arena, t->arena_cap, t->used);
}

const struct sym_entry *sym_table__find(const struct sym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo - 1 is the last symbol starting at or before addr; a few earlier ones may be
	 * larger symbols that enclose it (nested or overlapping sizes) */
	for (size_t i = lo, k = 0; i > 0 && k < 4; i--, k++) {
		const struct sym_entry *e = &t->syms[i - 1];

		if (addr - e->start < e->size)
			return e;
	}
	return NULL;
}

const char *sym_table__name(const struct sym_table *t, const struct sym_entry *e)
{
	return t->arena + e->name;
}

size_t sym_table__count(const struct sym_table *t)
{
	return t->count;
}

size_t sym_table__mem(const struct sym_table *t)
{
	return sizeof(*t) + t->cap * sizeof(*t->syms) + t->arena_cap;
}
