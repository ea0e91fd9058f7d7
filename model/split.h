/* Splitting a profile per process (record --multi-instance writes one file per process). */
#ifndef GALATOP_MODEL_SPLIT_H
#define GALATOP_MODEL_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct profile_part {
	uint32_t root;	   /* the stacks' first process frame ([PID]comm), else their first
			    * frame; 0 for the root's own value */
	struct profile *p; /* over the source's frame table; owned by the array */
};

/* Files every stack of p under its first FRAME_PROCESS frame (stacks without one under their
 * first frame), in one pass: O(stacks + frames). *parts (n of them, in order of first
 * appearance by name) is freed with profile_parts_free. 0 or -ENOMEM (nothing to free). */
int profile_split_by_process(const struct profile *p, struct profile_part **parts, size_t *n);
/* Frees the parts and the array; NULL is a no-op. */
void profile_parts_free(struct profile_part *parts, size_t n);

#endif
