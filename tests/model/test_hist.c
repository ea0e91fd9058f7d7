/* Unit tests for model/hist: bucket layout, accuracy of quantiles against the exact ones,
 * merging, kernel-bucket import. */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "model/hist.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* xorshift: deterministic, no libc rand state. */
static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

TEST_CASE(buckets_tile_the_range)
{
	uint64_t lo, hi, prev_hi = 0;

	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		hist_bucket_range(i, &lo, &hi);
		if (i)
			CHECK(lo == prev_hi + 1);
		CHECK(hist_index(lo) == i && hist_index(hi) == i);
		/* Width within 1/HIST_SUB of the bucket's start. */
		CHECK(hi - lo <= lo / HIST_SUB);
		prev_hi = hi;
	}
	CHECK(prev_hi == UINT64_MAX);
	CHECK(hist_index(0) == 0 && hist_index(31) == 31 && hist_index(32) == 32);
	CHECK(hist_index(UINT64_MAX) == HIST_BUCKETS - 1);
}

TEST_CASE(quantiles_within_2_percent_from_1us_to_60s)
{
	enum { N = 200000 };
	uint64_t *v = malloc(N * sizeof(*v));
	struct hist h = { 0 };
	const double qs[] = { 0.01, 0.1, 0.5, 0.9, 0.99, 0.999 };
	double worst = 0;

	CHECK(v != NULL);
	if (!v)
		return;
	/* Log-uniform from 1 us to 60 s. */
	for (int i = 0; i < N; i++) {
		double x = exp(log(1e3) + (log(60e9) - log(1e3)) * (double)(next_rand() >> 11) / 9007199254740992.0);

		v[i] = (uint64_t)x;
		CHECK(hist_add(&h, v[i]) == 0);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		uint64_t exact = v[(size_t)ceil(qs[k] * N) - 1], got = hist_quantile(&h, qs[k]);
		double err = fabs((double)got - (double)exact) / (double)exact;

		if (err > worst)
			worst = err;
	}
	CHECK(worst <= 0.02);
	CHECK(h.count == N && h.min == v[0] && h.max == v[N - 1]);
	CHECK(hist_quantile(&h, 0) == v[0] && hist_quantile(&h, 1) == v[N - 1]);
	hist_reset(&h);
	free(v);
}

TEST_CASE(small_values_are_exact_and_empty_is_zero)
{
	struct hist h = { 0 };

	CHECK(hist_quantile(&h, 0.5) == 0 && hist_mean(&h) == 0);
	for (uint64_t i = 1; i <= 9; i++)
		hist_add(&h, i);
	CHECK(hist_quantile(&h, 0.5) == 5);
	CHECK_NUM(hist_mean(&h), 5);
	hist_reset(&h);
	CHECK(h.count == 0 && h.c == NULL);
	hist_reset(NULL);
}

TEST_CASE(merge_equals_adding_everything_to_one)
{
	struct hist a = { 0 }, b = { 0 }, all = { 0 };
	unsigned i1 = 0, i2 = 0, k1, k2;
	uint64_t c1, c2;

	for (int i = 0; i < 5000; i++) {
		uint64_t x = next_rand() % 1000000, y = 1000000000 + next_rand() % 1000000;

		hist_add(&a, x);
		hist_add(&b, y);
		hist_add(&all, x);
		hist_add(&all, y);
	}
	CHECK(hist_merge(&a, &b) == 0);
	CHECK(a.count == all.count && a.sum == all.sum && a.min == all.min && a.max == all.max);
	for (;;) {
		bool m1 = hist_next(&a, &i1, &k1, &c1), m2 = hist_next(&all, &i2, &k2, &c2);

		CHECK(m1 == m2);
		if (!m1 || !m2)
			break;
		CHECK(k1 == k2 && c1 == c2);
	}
	CHECK(hist_quantile(&a, 0.99) == hist_quantile(&all, 0.99));
	hist_reset(&a);
	hist_reset(&b);
	hist_reset(&all);
}

TEST_CASE(kernel_buckets_import)
{
	struct hist h = { 0 };
	uint64_t lo, hi;
	unsigned i = 0, k;
	uint64_t c;

	CHECK(hist_add_bucket(&h, HIST_BUCKETS, 1, 0) == -EINVAL);
	CHECK(hist_add_bucket(&h, hist_index(1000000), 10, 10000000) == 0);
	hist_bucket_range(hist_index(1000000), &lo, &hi);
	CHECK(h.count == 10 && h.min == lo && h.max == hi);
	CHECK_NUM(hist_mean(&h), 1000000);
	CHECK(hist_next(&h, &i, &k, &c) && k == hist_index(1000000) && c == 10);
	CHECK(!hist_next(&h, &i, &k, &c));
	hist_reset(&h);
}

int main(void)
{
	RUN(buckets_tile_the_range);
	RUN(quantiles_within_2_percent_from_1us_to_60s);
	RUN(small_values_are_exact_and_empty_is_zero);
	RUN(merge_equals_adding_everything_to_one);
	RUN(kernel_buckets_import);
	HARNESS_EXIT();
}
