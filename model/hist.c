#include "hist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void hist_bucket_range(unsigned idx, uint64_t *lo, uint64_t *hi)
{
	unsigned e, sub;

	if (idx < HIST_SUB) {
		*lo = *hi = idx;
		return;
	}
	e = idx / HIST_SUB + HIST_SUB_BITS - 1;
	sub = idx % HIST_SUB;
	*lo = (uint64_t)(HIST_SUB + sub) << (e - HIST_SUB_BITS);
	*hi = *lo + ((uint64_t)1 << (e - HIST_SUB_BITS)) - 1;
}

/* Makes buckets [a, b] addressable, keeping the counts. */
static int cover(struct hist *h, unsigned a, unsigned b)
{
	unsigned lo = h->n ? (a < h->lo ? a : h->lo) : a;
	unsigned end = h->n ? (b + 1 > h->lo + h->n ? b + 1 : h->lo + h->n) : b + 1;
	uint64_t *c;

	if (h->n && lo == h->lo && end == h->lo + h->n)
		return 0;
	c = calloc(end - lo, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (h->n)
		memcpy(c + (h->lo - lo), h->c, h->n * sizeof(*c));
	free(h->c);
	h->c = c;
	h->lo = lo;
	h->n = end - lo;
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static void widen(struct hist *h, uint64_t lo, uint64_t hi)
{
	if (!h->count || lo < h->min)
		h->min = lo;
	if (!h->count || hi > h->max)
		h->max = hi;
}

int hist_add_n(struct hist *h, uint64_t v, uint64_t n)
{
	unsigned i = hist_index(v);

	if (!n)
		return 0;
	/* Most values fall in buckets the histogram has: cover only for the others. */
	if ((!h->n || i < h->lo || i >= h->lo + h->n) && cover(h, i, i))
		return -ENOMEM;
	h->c[i - h->lo] += n;
	widen(h, v, v);
	h->count += n;
	h->sum = sat_add(h->sum, v > UINT64_MAX / n ? UINT64_MAX : v * n);
	return 0;
}

int hist_add_bucket(struct hist *h, unsigned idx, uint64_t n, uint64_t sum)
{
	uint64_t lo, hi;

	if (idx >= HIST_BUCKETS)
		return -EINVAL;
	if (!n)
		return 0;
	if (cover(h, idx, idx))
		return -ENOMEM;
	hist_bucket_range(idx, &lo, &hi);
	h->c[idx - h->lo] += n;
	widen(h, lo, hi);
	h->count += n;
	h->sum = sat_add(h->sum, sum);
	return 0;
}

int hist_merge(struct hist *dst, const struct hist *src)
{
	if (!src->count)
		return 0;
	if (cover(dst, src->lo, src->lo + src->n - 1))
		return -ENOMEM;
	for (uint32_t i = 0; i < src->n; i++)
		dst->c[src->lo + i - dst->lo] += src->c[i];
	widen(dst, src->min, src->max);
	dst->count += src->count;
	dst->sum = sat_add(dst->sum, src->sum);
	return 0;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0, lo, hi, mid;

	if (!h->count)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	if (!rank)
		rank = 1;
	for (uint32_t i = 0; i < h->n; i++) {
		seen += h->c[i];
		if (seen >= rank) {
			hist_bucket_range(h->lo + i, &lo, &hi);
			mid = lo + (hi - lo) / 2;
			return mid < h->min ? h->min : mid > h->max ? h->max : mid;
		}
	}
	return h->max;
}

double hist_mean(const struct hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0;
}

bool hist_next(const struct hist *h, unsigned *idx, unsigned *bucket, uint64_t *count)
{
	for (; *idx < h->n; (*idx)++) {
		if (h->c[*idx]) {
			*bucket = h->lo + *idx;
			*count = h->c[*idx];
			(*idx)++;
			return true;
		}
	}
	return false;
}

void hist_reset(struct hist *h)
{
	if (!h)
		return;
	free(h->c);
	memset(h, 0, sizeof(*h));
}
