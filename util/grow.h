/* The one growth helper for arrays that grow by doubling. */
#ifndef GALATOP_UTIL_GROW_H
#define GALATOP_UTIL_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Makes the array *pptr (of *cap items of elem bytes each; pptr is the address of the array
 * pointer) hold at least need items, doubling its capacity (16 at first). 0, or -ENOMEM
 * (also on size overflow) with *pptr and *cap unchanged. */
static inline int array_grow(void *pptr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *p, *np;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&p, pptr, sizeof(p));
	np = realloc(p, ncap * elem);
	if (!np)
		return -ENOMEM;
	memcpy(pptr, &np, sizeof(np));
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

/* array_grow (or array_grow_zero) for an array variable arr with a size_t capacity cap. */
#define ARRAY_GROW(arr, cap, need) array_grow(&(arr), &(cap), (need), sizeof(*(arr)))
#define ARRAY_GROW_ZERO(arr, cap, need) array_grow_zero(&(arr), &(cap), (need), sizeof(*(arr)))

#endif
