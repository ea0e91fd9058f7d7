/* Time slices: a bounded ring of profiles, each covering [t0, t1) seconds, oldest first, and
 * the folding of new slices into what a view shows (accumulate, sliding window, decay).
 * The ring is the one history every time-based view builds on: when it reaches its slice
 * cap, adjacent old slices merge into coarser ones (resolution proportional to age); when it
 * reaches its memory cap, old slices merge as long as a quarter of them are left, then the
 * oldest go. It never grows without bound, and the history it keeps is exact. */
#ifndef GALATOP_MODEL_SLICES_H
#define GALATOP_MODEL_SLICES_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* How new samples reach what is shown. */
enum fold_mode {
	FOLD_ACCUMULATE = 0, /* everything since the start */
	FOLD_WINDOW,	     /* only the last window_s seconds */
	FOLD_DECAY,	     /* everything, halved every window_s seconds */
	FOLD_MODE_MAX
};

struct slice {
	double t0, t1;	  /* seconds, on the caller's clock; t0 < t1 */
	struct profile *p; /* owned by the ring */
};

struct slices;

/* Creates an empty ring of profiles over ft (borrowed, must outlive the ring) holding at most
 * max_slices (>= 2) slices and, when max_bytes is non-zero, about that many bytes of profile
 * memory. NULL on ENOMEM or EINVAL. */
struct slices *slices__new(struct frames *ft, enum value_kind kind, size_t max_slices,
			   size_t max_bytes);
/* Frees the ring and its slices; NULL is a no-op. */
void slices__free(struct slices *s);
/* A copy of the ring (slices, caps, settings) whose profiles use ft, which may be another
 * frame table: how a renewed frame table takes the history over. NULL on ENOMEM. */
struct slices *slices__copy(const struct slices *s, struct frames *ft);
/* Drops every slice. */
void slices__clear(struct slices *s);
/* Slices ending within the newest `seconds` keep their resolution when the caps force a
 * merge (as long as other slices can merge instead): a sliding window stays exact. */
void slices__set_fine(struct slices *s, double seconds);
/* Caps the ring's memory, besides max_bytes, at about n times the memory of an average new
 * slice (0: no such cap), so that it reaches its steady state after about n pushes whatever
 * the data rate: a churning workload keeps a history that long, a repeating one longer. */
void slices__set_budget(struct slices *s, size_t n);
/* Slices dropped so far for the memory cap. */
uint64_t slices__dropped(const struct slices *s);

/* Appends a copy of p as the slice [t0, t1) (t0 >= the newest slice's t1 is expected, not
 * required), merging older slices first if a cap is reached. 0, -EINVAL (t1 <= t0, NaN) or
 * -ENOMEM (the ring is unchanged). */
int slices__push(struct slices *s, double t0, double t1, const struct profile *p);

/* Number of slices, and slice i (0 = oldest; NULL past the end). Valid until the next push. */
size_t slices__count(const struct slices *s);
const struct slice *slices__get(const struct slices *s, size_t i);
/* Start of the oldest and end of the newest slice; both 0 when empty. */
double slices__start(const struct slices *s);
double slices__end(const struct slices *s);
/* Bytes of profile memory held. */
size_t slices__mem(const struct slices *s);

/* Forget history older than the newest `seconds` (0 = keep all, the default): on each push,
 * slices ending that long before the newest one are dropped, and heat buckets with them. */
void slices__set_keep(struct slices *s, double seconds);

/* The heat map: sample values at sub-second resolution (FlameScope's rows), kept beside the
 * slices so that merging slices into coarser ones leaves it exact. Bucket b covers
 * [b * SLICES_BUCKET_S, (b + 1) * SLICES_BUCKET_S) on the ring's clock. */
#define SLICES_BUCKET_S 0.05
/* At most this many buckets (about 14.5 hours): the oldest go first. */
#define SLICES_HEAT_MAX (1u << 20)
/* Adds value to the bucket holding time t. 0, -EINVAL (t not finite or negative, value NaN),
 * -ERANGE (t more than SLICES_HEAT_MAX buckets before the newest: ignored) or -ENOMEM. */
int slices__heat_add(struct slices *s, double t, double value);
/* Buckets first .. first + *n - 1 of the heat map (NULL and *n = 0 when empty); valid until
 * the next change. */
const double *slices__heat(const struct slices *s, int64_t *first, size_t *n);
/* Sum of the buckets dropped so far (by --history or the bucket cap): for a type whose values
 * can go down (model/stack_type.h), the buckets hold changes and this is the level before the
 * first bucket kept. */
double slices__heat_base(const struct slices *s);
/* Adds value to that sum (a snapshot's, read back). */
void slices__heat_add_base(struct slices *s, double value);
/* For those types: fills (*lv)[i] with the level at the end of bucket first + i (the base plus
 * the buckets up to it), for the buckets slices__heat returns; *lv (*cap entries) is grown as
 * needed and owned by the caller. 0 or -ENOMEM. */
int slices__heat_levels(const struct slices *s, double **lv, size_t *cap);
/* Sum of the heat buckets in [from, to) seconds (a bucket counts when its start is inside). */
double slices__heat_sum(const struct slices *s, double from, double to);

/* Merges into out every slice whose midpoint lies in [from, to) (a coarse slice counts wholly
 * or not at all). 0 or -ENOMEM. */
int slices__fold_range(const struct slices *s, double from, double to, struct profile *out);

/* Merges into out every slice that overlaps [from, to) (a range picked by a person: a short
 * one still shows the slice it falls in). 0 or -ENOMEM. */
int slices__fold_overlap(const struct slices *s, double from, double to, struct profile *out);
/* Seconds covered by the slices slices__fold_overlap would merge for [from, to): what the
 * merged profile lasted, to compare it with another at the same rate. */
double slices__overlap_secs(const struct slices *s, double from, double to);

/* Folds the new slice [t0, t1) into shown the way mode says, window_s being the window length
 * or the half-life, and, when ring is not NULL, pushes it into ring (window mode needs the
 * ring). 0, -EINVAL or -ENOMEM (shown then holds part of the update). */
int slices__fold(struct slices *ring, struct profile *shown, enum fold_mode mode, double window_s,
		 const struct profile *slice, double t0, double t1);

#endif
