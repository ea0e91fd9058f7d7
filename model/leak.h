/* The live set of the leak profile: the sampled allocations not freed yet, keyed by process
 * and address, each with its stack, its size and its weight (1 / the probability it was
 * sampled). A block joins its profile (as bytes: size x weight) once it is older than the
 * minimum age, and leaves it when freed, so the profile holds the bytes outstanding past that
 * age by stack; a profile that was emptied meanwhile (a history slice cut) gets the free as
 * a negative value, so the slices add up to what is outstanding. Pure data: the probe and the
 * collector feed it. */
#ifndef GALATOP_MODEL_LEAK_H
#define GALATOP_MODEL_LEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct leak_block {
	uint32_t tgid;
	uint32_t nframes;
	uint64_t addr;
	uint64_t ts_ns;	  /* when it was allocated */
	uint64_t size;	  /* bytes asked for */
	double weight;	  /* allocations it stands for (1 when every one is taken) */
	uint32_t *frames; /* its stack, root first, in the collector's frame table */
	bool shown;	  /* in the profile (older than the minimum age) */
};

struct leak_set_stats {
	uint64_t blocks;	/* blocks live now */
	double bytes;		/* their estimated bytes (size x weight), shown or not */
	uint64_t allocs;	/* blocks added since the start */
	uint64_t frees;		/* blocks freed since the start */
	uint64_t replaced;	/* blocks replaced by a new one at their address (a free missed) */
	uint64_t forgotten;	/* blocks dropped with their process (exit, exec) */
};

/* The weight of a sampled allocation of size bytes when allocations are sampled as a Poisson
 * process of mean bytes (1: every one taken): 1 / P(sampled) = 1 / (1 - exp(-size / mean)),
 * which makes every stack's estimate unbiased, as in Go's heap profiler. */
double leak_weight(uint64_t size, uint64_t mean);

struct leak_set;

/* An empty set. NULL on ENOMEM. */
struct leak_set *leak_set__new(void);
/* Frees the set; NULL is a no-op. */
void leak_set__free(struct leak_set *s);

/* Has fn told of every change of the shown bytes, after the profile took it: bytes > 0 when b
 * joins (leak_set__age), < 0 when it leaves (freed, replaced, forgotten); NULL: nobody. For
 * the heat map, which needs each change's time. */
void leak_set__observe(struct leak_set *s,
		       void (*fn)(void *ctx, const struct leak_block *b, double bytes), void *ctx);

/* A sampled allocation of size bytes standing for weight allocations, at addr of process
 * tgid, allocated at ts_ns with the stack frames[0..n) (copied). A block already at that
 * address is replaced (taken out of p if shown). 0 or -ENOMEM. */
int leak_set__alloc(struct leak_set *s, uint32_t tgid, uint64_t addr, uint64_t ts_ns,
		    uint64_t size, double weight, const uint32_t *frames, size_t n,
		    struct profile *p);
/* The block at addr of tgid was freed: it leaves p if shown. 1 when it was known, else 0. */
int leak_set__release(struct leak_set *s, uint32_t tgid, uint64_t addr, struct profile *p);
/* Every block allocated at or before until_ns that is not shown yet joins p. Returns how many
 * joined, or -ENOMEM (the rest join at the next call). */
int leak_set__age(struct leak_set *s, uint64_t until_ns, struct profile *p);
/* Drops every block of process tgid (its exit or exec took its memory), taking the shown ones
 * out of p; fn (when not NULL) is called with each one's address first. The count dropped. */
size_t leak_set__forget_pid(struct leak_set *s, uint32_t tgid, struct profile *p,
			    void (*fn)(void *ctx, uint32_t tgid, uint64_t addr), void *ctx);
/* Calls fn for every live block in no particular order; a non-zero return stops the walk
 * and is returned. */
int leak_set__each(const struct leak_set *s, int (*fn)(void *ctx, const struct leak_block *b),
		   void *ctx);
/* Renames every block's frames, from the table from into to (a renewed frame table), adding
 * those to lacks. 0 or -ENOMEM. */
int leak_set__move_frames(struct leak_set *s, struct frames *to, const struct frames *from);
/* Per function name, what the shown blocks whose stacks hold it add up to (each block once
 * per name, as a total): the allocations they stand for and the oldest's allocation time;
 * indexed by the strtab id of the name in the frame table's strtab. */
struct leak_by_name {
	double *count;	    /* allocations (weights) */
	uint64_t *oldest;   /* CLOCK_MONOTONIC ns of the oldest, 0 when none */
	uint32_t *seen;	    /* scratch: the block a name was last counted for, plus one */
	uint32_t n, cap;    /* names covered, room */
	uint64_t at;	    /* when it was filled (CLOCK_MONOTONIC ns): ages are from here */
};
/* Fills b (grown as needed; zeroed first) from the shown blocks of s, whose frames are in ft,
 * at time now. 0 or -ENOMEM. */
int leak_set__by_name(const struct leak_set *s, const struct frames *ft, uint64_t now,
		      struct leak_by_name *b);
/* Frees b's arrays; a zeroed b is a no-op. */
void leak_by_name__free(struct leak_by_name *b);
/* Fills st; cannot fail. */
void leak_set__stats(const struct leak_set *s, struct leak_set_stats *st);
/* Bytes of memory the set holds. */
size_t leak_set__mem(const struct leak_set *s);

#endif
