/* A cap on the distinct stacks of a growing profile (accumulate mode, long recordings): past
 * it, the rarest stacks are folded into "<identity frames>;[other]" so that every process keeps
 * its exact total while memory stays bounded. */
#ifndef GALATOP_MODEL_STACK_CAP_H
#define GALATOP_MODEL_STACK_CAP_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct stack_cap {
	size_t max;	     /* distinct stacks kept at most; 0 = no cap */
	uint32_t next_check; /* node count at which the tree is looked at next */
	uint64_t folds;	     /* times stacks were folded */
	uint64_t folded;     /* stacks folded into [other] so far */
};

/* Starts a cap of max stacks (0: none). */
void stack_cap_init(struct stack_cap *c, size_t max);
/* Folds p's rarest stacks when it holds more than c->max (keeping the heaviest three quarters
 * of the cap, so folds are rare): O(1) until the tree has grown enough to possibly pass the
 * cap, then O(nodes log nodes). When the [other] stacks of that many processes would pass the
 * cap themselves, all go into one root [other]. Returns the number of stacks folded, or
 * -ENOMEM (p may then have lost stacks). */
long stack_cap_apply(struct stack_cap *c, struct profile *p);
/* For decaying profiles: once the tree has grown by an eighth since the last time, drops the
 * nodes whose total decayed below min_total (their weight stays in their parents). Returns the
 * nodes dropped, or -ENOMEM. Uses c->next_check only. */
long stack_cap_decayed(struct stack_cap *c, struct profile *p, double min_total);

#endif
