/* The one latency histogram of the model (L7 latencies, SLI delays): log-linear buckets over
 * uint64 values (nanoseconds), each power of two split into HIST_SUB equal sub-buckets, so a
 * percentile read from a bucket's middle is within 1/(2*HIST_SUB) (1.6%) of the true value
 * over the whole range; values below HIST_SUB have exact buckets. Mergeable bucket by bucket.
 * Count, sum, min and max are exact. Memory: only the span of buckets in use is allocated.
 *
 * Bucket index of v (kernel programs aggregating in the same buckets compute this too):
 *   v < HIST_SUB:  v
 *   else, with e = floor(log2 v):  (e - HIST_SUB_BITS + 1) * HIST_SUB + (v >> (e - HIST_SUB_BITS)) - HIST_SUB
 */
#ifndef GALATOP_MODEL_HIST_H
#define GALATOP_MODEL_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 5
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

/* A zeroed struct is an empty histogram. */
struct hist {
	uint64_t count, sum, min, max; /* sum saturates at UINT64_MAX */
	uint64_t *c;		       /* counts of buckets [lo, lo + n) */
	uint32_t lo, n;
};

static inline unsigned hist_index(uint64_t v)
{
	unsigned e;

	if (v < HIST_SUB)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);
	return (e - HIST_SUB_BITS + 1) * HIST_SUB + (unsigned)(v >> (e - HIST_SUB_BITS)) - HIST_SUB;
}

/* The smallest and largest value of bucket idx (< HIST_BUCKETS). */
void hist_bucket_range(unsigned idx, uint64_t *lo, uint64_t *hi);

/* Adds n values v. 0 or -ENOMEM (the histogram is unchanged then). */
int hist_add_n(struct hist *h, uint64_t v, uint64_t n);
static inline int hist_add(struct hist *h, uint64_t v)
{
	return hist_add_n(h, v, 1);
}
/* Adds n values known only by their bucket (a kernel-side histogram in the same buckets) whose
 * sum is sum; min and max become the bucket's bounds where they widen them. 0, -EINVAL for a bad
 * index, or -ENOMEM. */
int hist_add_bucket(struct hist *h, unsigned idx, uint64_t n, uint64_t sum);
/* Adds every value of src to dst. 0 or -ENOMEM (dst unchanged). */
int hist_merge(struct hist *dst, const struct hist *src);

/* The q-quantile (0 <= q <= 1) as the middle of the bucket holding the value of rank
 * ceil(q * count), clamped to [min, max]; 0 when empty. q = 1 gives max, q = 0 gives min. */
uint64_t hist_quantile(const struct hist *h, double q);
/* The mean, 0 when empty. */
double hist_mean(const struct hist *h);

/* Walks the non-empty buckets in increasing order: start with *idx = 0 (the position is kept
 * in *idx); returns false at the end, else fills the bucket's index in *bucket and count. */
bool hist_next(const struct hist *h, unsigned *idx, unsigned *bucket, uint64_t *count);

/* Empties h and frees its buckets (h stays usable); NULL is a no-op. */
void hist_reset(struct hist *h);

#endif
