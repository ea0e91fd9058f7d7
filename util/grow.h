/* The one growth helper for arrays: doubling growth (ARRAY_GROW), parallel arrays that share
 * one capacity (grow_cap once, then ARRAY_RESIZE each), exact-size buffers (ARRAY_RESIZE) and
 * giving back the slack of a finished array (ARRAY_SHRINK). */
#ifndef GALATOP_UTIL_GROW_H
#define GALATOP_UTIL_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The capacity that holds need items, doubling from cap (from first when cap is 0) and
 * clamped to max; cap itself when it holds need already; 0 when need > max. */
static inline size_t grow_cap(size_t cap, size_t need, size_t first, size_t max)
{
	size_t ncap = cap ? cap : first ? first : 1;

	if (need <= cap)
		return cap;
	if (need > max)
		return 0;
	while (ncap < need)
		ncap = ncap > max / 2 ? max : ncap * 2;
	return ncap < max ? ncap : max;
}

/* Reallocates the array *pptr (pptr is the address of the array pointer) to n items of elem
 * bytes (at least one byte, so that it never frees). 0, or -ENOMEM (also on size overflow)
 * with *pptr unchanged. */
static inline int array_resize(void *pptr, size_t n, size_t elem)
{
	size_t size = n * elem;
	void *p, *np;

	if (elem && n > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&p, pptr, sizeof(p));
	np = realloc(p, size ? size : 1);
	if (!np)
		return -ENOMEM;
	memcpy(pptr, &np, sizeof(np));
	return 0;
}

/* Asks for transparent huge pages on the array at p of bytes length when it is large (4 MiB
 * or more): filling it then faults once per 2 MiB instead of once per page, which for a
 * profile tree of millions of nodes is a tenth of the time it takes to load. Only advice: the
 * array works the same when the kernel declines. */
static inline void array_advise_huge(void *p, size_t bytes)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), start, end;

	if (bytes < (4u << 20) || !page || (page & (page - 1)))
		return;
	start = (uintptr_t)p & ~(page - 1);
	end = ((uintptr_t)p + bytes + page - 1) & ~(page - 1);
	madvise((void *)start, end - start, MADV_HUGEPAGE);
}

/* Makes the array *pptr (of *cap items of elem bytes each) hold at least need items, doubling
 * its capacity (16 at first). 0, or -ENOMEM (also on size overflow) with *pptr and *cap
 * unchanged. */
static inline int array_grow(void *pptr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = grow_cap(*cap, need, 16, elem ? SIZE_MAX / elem : SIZE_MAX);
	if (!ncap || array_resize(pptr, ncap, elem))
		return -ENOMEM;
	*cap = ncap;
	return 0;
}

/* array_grow that also zeroes the items it adds. */
static inline int array_grow_zero(void *pptr, size_t *cap, size_t need, size_t elem)
{
	size_t old = *cap;
	char *p;

	if (array_grow(pptr, cap, need, elem))
		return -ENOMEM;
	memcpy(&p, pptr, sizeof(p));
	if (*cap > old)
		memset(p + old * elem, 0, (*cap - old) * elem);
	return 0;
}

/* Gives back the capacity of the array *pptr beyond its n items (*cap becomes n); when the
 * smaller block cannot be had, the array stays as it was. */
static inline void array_shrink(void *pptr, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap && !array_resize(pptr, n, elem))
		*cap = n;
}

/* Arrays of BIG_ARRAY_MIN bytes and more that a reader fills as it goes (the perf.data
 * reader's tables) live in anonymous mappings of their own: grown by mremap, which moves
 * their pages without copying them, and backed by transparent huge pages where the kernel
 * gives them on request (MADV_HUGEPAGE), so that filling one faults once per 2 MiB instead of
 * once per 4 KiB page (on a busy machine's capture: 6,000 faults, a fifth of the time). Smaller
 * ones are malloc'ed as usual; which of the two an array is follows from its size in bytes,
 * so that the array is freed by big_array_free with that size. */
#define BIG_ARRAY_MIN (512u << 10)
#define BIG_ARRAY_STEP (2u << 20) /* a huge page: mappings are made of whole ones */

static inline size_t big_array_len(size_t bytes)
{
	return bytes > SIZE_MAX - BIG_ARRAY_STEP ? SIZE_MAX : (bytes + BIG_ARRAY_STEP - 1) & ~(size_t)(BIG_ARRAY_STEP - 1);
}

/* A new mapping for a big array of bytes, asking for huge pages before anything touches it (a
 * copy into it would fault it in 4 KiB pages first). MAP_FAILED on failure. */
static inline void *big_array_map(size_t bytes)
{
	void *p = mmap(NULL, big_array_len(bytes), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		madvise(p, big_array_len(bytes), MADV_HUGEPAGE);
	return p;
}

/* Resizes the array *pptr of old bytes (0 when *pptr is NULL) to bytes (more than 0),
 * keeping its contents; what is added is zeroed when it is mapped, undefined otherwise.
 * 0, or -ENOMEM with *pptr unchanged. */
static inline int big_array_resize(void *pptr, size_t old, size_t bytes)
{
	void *p, *np;

	memcpy(&p, pptr, sizeof(p));
	if (bytes < BIG_ARRAY_MIN && old < BIG_ARRAY_MIN) {
		np = realloc(p, bytes);
	} else if (old >= BIG_ARRAY_MIN && bytes >= BIG_ARRAY_MIN) {
		if (big_array_len(old) == big_array_len(bytes)) {
			np = p;
		} else {
			/* its pages moved onto a new mapping (placed for huge pages), not copied */
			np = big_array_map(bytes);
			if (np != MAP_FAILED &&
			    mremap(p, big_array_len(old), big_array_len(old),
				   MREMAP_MAYMOVE | MREMAP_FIXED, np) == MAP_FAILED) {
				munmap(np, big_array_len(bytes));
				np = MAP_FAILED;
			}
		}
	} else if (bytes >= BIG_ARRAY_MIN) {
		np = big_array_map(bytes);
		if (np != MAP_FAILED && old)
			memcpy(np, p, old);
		if (np != MAP_FAILED)
			free(p);
	} else {
		np = p ? malloc(bytes) : NULL; /* p is mapped: old is BIG_ARRAY_MIN or more */
		if (np) {
			memcpy(np, p, bytes);
			munmap(p, big_array_len(old));
		}
	}
	if (!np || np == MAP_FAILED)
		return -ENOMEM;
	memcpy(pptr, &np, sizeof(np));
	return 0;
}

/* Frees an array of bytes bytes made by big_array_resize (NULL: no-op). */
static inline void big_array_free(void *p, size_t bytes)
{
	if (p && bytes >= BIG_ARRAY_MIN)
		munmap(p, big_array_len(bytes));
	else
		free(p);
}

/* array_grow for arrays made by big_array_resize (*cap: their capacity in items). */
static inline int big_array_grow(void *pptr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = grow_cap(*cap, need, 16, elem ? SIZE_MAX / elem : SIZE_MAX);
	if (!ncap || big_array_resize(pptr, *cap * elem, ncap * elem))
		return -ENOMEM;
	*cap = ncap;
	return 0;
}

/* The functions above for an array variable arr (cap: its size_t capacity). */
#define ARRAY_GROW(arr, cap, need) array_grow(&(arr), &(cap), (need), sizeof(*(arr)))
#define ARRAY_GROW_ZERO(arr, cap, need) array_grow_zero(&(arr), &(cap), (need), sizeof(*(arr)))
#define ARRAY_RESIZE(arr, n) array_resize(&(arr), (n), sizeof(*(arr)))
#define ARRAY_SHRINK(arr, cap, n) array_shrink(&(arr), &(cap), (n), sizeof(*(arr)))
#define BIG_ARRAY_GROW(arr, cap, need) big_array_grow(&(arr), &(cap), (need), sizeof(*(arr)))
#define BIG_ARRAY_FREE(arr, cap) big_array_free((arr), (cap) * sizeof(*(arr)))

#endif
