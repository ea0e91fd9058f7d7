/* Unit tests for util/grow.h: doubling growth, one capacity for parallel arrays, exact sizes
 * and shrinking, with their overflow checks, and big arrays in mappings of their own. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "harness.h"
#include "util/grow.h"

TEST_CASE(grow_cap_doubles_from_first_and_clamps_to_max)
{
	CHECK(grow_cap(0, 1, 16, SIZE_MAX) == 16);
	CHECK(grow_cap(0, 17, 16, SIZE_MAX) == 32);
	CHECK(grow_cap(0, 1, 0, SIZE_MAX) == 1);
	CHECK(grow_cap(16, 16, 16, SIZE_MAX) == 16); /* holds it already */
	CHECK(grow_cap(16, 17, 16, SIZE_MAX) == 32);
	CHECK(grow_cap(16, 1000, 16, SIZE_MAX) == 1024);
	CHECK(grow_cap(1024, 1025, 16, 1500) == 1500); /* doubling stops at max */
	CHECK(grow_cap(1500, 1501, 16, 1500) == 0);    /* max cannot hold it */
	CHECK(grow_cap(0, 5, 4096, 100) == 100);       /* first is clamped too */
	/* A uint32 capacity near its end: clamped, never wrapped. */
	CHECK(grow_cap(1u << 31, (1ul << 31) + 1, 256, UINT32_MAX) == UINT32_MAX);
	CHECK(grow_cap(UINT32_MAX, (size_t)UINT32_MAX + 1, 256, UINT32_MAX) == 0);
	CHECK(grow_cap(SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 2, 16, SIZE_MAX) == SIZE_MAX);
}

TEST_CASE(array_grow_doubles_and_keeps_contents)
{
	int *a = NULL;
	size_t cap = 0;

	CHECK(ARRAY_GROW(a, cap, 1) == 0 && cap == 16 && a);
	for (int i = 0; i < 16; i++)
		a[i] = i;
	CHECK(ARRAY_GROW(a, cap, 16) == 0 && cap == 16);
	CHECK(ARRAY_GROW(a, cap, 17) == 0 && cap == 32);
	CHECK(ARRAY_GROW(a, cap, 1000) == 0 && cap == 1024);
	CHECK(a[15] == 15 && a[0] == 0);
	CHECK(array_grow(&a, &cap, SIZE_MAX / 2, sizeof(*a)) == -ENOMEM && cap == 1024);
	CHECK(array_grow(&a, &cap, SIZE_MAX, sizeof(*a)) == -ENOMEM && cap == 1024);
	CHECK(a[15] == 15);
	free(a);
}

TEST_CASE(array_grow_zero_zeroes_what_it_adds)
{
	long *a = NULL;
	size_t cap = 0, nonzero = 0;

	CHECK(ARRAY_GROW_ZERO(a, cap, 3) == 0 && cap == 16);
	for (size_t i = 0; i < cap; i++)
		nonzero += a[i] != 0;
	a[0] = 7;
	CHECK(ARRAY_GROW_ZERO(a, cap, 40) == 0 && cap == 64);
	for (size_t i = 1; i < cap; i++)
		nonzero += a[i] != 0;
	CHECK(nonzero == 0 && a[0] == 7);
	free(a);
}

TEST_CASE(parallel_arrays_share_one_capacity)
{
	uint64_t *count = NULL;
	double *extra = NULL;
	size_t cap = 0;

	for (uint32_t id = 0; id < 5000; id++) {
		if (id == cap) {
			size_t ncap = grow_cap(cap, (size_t)id + 1, 1024, UINT32_MAX);

			CHECK(ncap == (cap ? cap * 2 : 1024));
			if (!ncap || ARRAY_RESIZE(count, ncap) || ARRAY_RESIZE(extra, ncap))
				break;
			cap = ncap;
		}
		count[id] = id;
		extra[id] = id / 2.0;
	}
	CHECK(cap == 8192 && count[4999] == 4999 && extra[4999] == 2499.5 && count[0] == 0);
	free(count);
	free(extra);
}

TEST_CASE(array_resize_is_exact_and_checks_overflow)
{
	uint32_t *a = NULL, *before;

	CHECK(ARRAY_RESIZE(a, 3) == 0 && a);
	a[0] = 1, a[1] = 2, a[2] = 3;
	CHECK(ARRAY_RESIZE(a, 5) == 0 && a[2] == 3);
	before = a;
	CHECK(ARRAY_RESIZE(a, SIZE_MAX / 2) == -ENOMEM && a == before); /* n * 4 overflows */
	/* Zero items still leave a block (realloc(p, 0) would free it). */
	CHECK(ARRAY_RESIZE(a, 0) == 0 && a);
	free(a);
}

TEST_CASE(array_shrink_gives_back_the_slack)
{
	char *s = NULL;
	size_t cap = 0;

	CHECK(ARRAY_GROW(s, cap, 100) == 0 && cap == 128);
	memcpy(s, "hello", 6);
	ARRAY_SHRINK(s, cap, 6);
	CHECK(cap == 6 && !strcmp(s, "hello"));
	ARRAY_SHRINK(s, cap, 10); /* never grows */
	CHECK(cap == 6);
	ARRAY_SHRINK(s, cap, 0);
	CHECK(cap == 0 && s);
	CHECK(ARRAY_GROW(s, cap, 1) == 0 && cap == 16);
	free(s);
}

/* Across the line between malloc'ed and mapped (and back, and between mappings of different
 * sizes) the contents are kept; what a mapping adds is zero. */
TEST_CASE(big_arrays_keep_contents_across_malloc_and_mappings)
{
	uint32_t *a = NULL;
	size_t cap = 0, n = 3 * BIG_ARRAY_MIN / sizeof(*a); /* a mapping of two huge pages */
	bool same = true, zero = true;

	CHECK(BIG_ARRAY_GROW(a, cap, 1000) == 0 && cap == 1024 && a);
	for (size_t i = 0; i < cap; i++)
		a[i] = (uint32_t)i * 7;
	CHECK(BIG_ARRAY_GROW(a, cap, n) == 0 && cap >= n);
	for (size_t i = 0; i < 1024; i++)
		same = same && a[i] == (uint32_t)i * 7;
	for (size_t i = 1024; i < cap; i++)
		zero = zero && !a[i];
	CHECK(same && zero);
	for (size_t i = 0; i < cap; i++)
		a[i] = (uint32_t)i * 3;
	CHECK(BIG_ARRAY_GROW(a, cap, 4 * n) == 0 && cap >= 4 * n); /* moved, not copied */
	same = true;
	for (size_t i = 0; i < n; i++)
		same = same && a[i] == (uint32_t)i * 3;
	CHECK(same && !a[4 * n - 1]);
	/* back under the line: malloc'ed again, its first items kept */
	CHECK(big_array_resize(&a, cap * sizeof(*a), 4096 * sizeof(*a)) == 0);
	cap = 4096;
	CHECK(a[4095] == 4095u * 3);
	CHECK(big_array_grow(&a, &cap, SIZE_MAX, sizeof(*a)) == -ENOMEM && cap == 4096);
	BIG_ARRAY_FREE(a, cap);
	BIG_ARRAY_FREE((char *)NULL, 0);
}

int main(void)
{
	RUN(grow_cap_doubles_from_first_and_clamps_to_max);
	RUN(array_grow_doubles_and_keeps_contents);
	RUN(array_grow_zero_zeroes_what_it_adds);
	RUN(parallel_arrays_share_one_capacity);
	RUN(array_resize_is_exact_and_checks_overflow);
	RUN(array_shrink_gives_back_the_slack);
	RUN(big_arrays_keep_contents_across_malloc_and_mappings);
	HARNESS_EXIT();
}
