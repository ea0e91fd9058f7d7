/* Splitting a profile per process or container (record --multi-instance writes one file per
 * process; the Pyroscope sink sends one series per process or container). */
#ifndef GALATOP_MODEL_SPLIT_H
#define GALATOP_MODEL_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct profile_part {
	uint32_t root;	   /* the frame the part is keyed by: the stacks' first container frame
			    * (by container) or process frame ([PID]comm), else their first
			    * frame; 0 for the root's own value */
	uint32_t pod, container, process; /* the first stack's identity frames, 0 when none */
	struct profile *p; /* over the source's frame table; owned by the array */
};

struct split_opts {
	bool by_container;  /* the stacks of a container's processes in one part */
	bool strip_identity; /* the parts' stacks without their leading identity frames */
	bool one_unkeyed;    /* stacks without a container or process frame in one part (root 0)
			      * instead of one per first frame */
};

/* Files every stack of p under its key frame (split_opts; stacks without one under their
 * first frame), in one pass: O(stacks + frames). *parts (n of them, in order of first
 * appearance by name) is freed with profile_parts_free. 0 or -ENOMEM (nothing to free). */
int profile_split(const struct profile *p, const struct split_opts *o,
		  struct profile_part **parts, size_t *n);
/* profile_split by process, stacks kept whole. */
int profile_split_by_process(const struct profile *p, struct profile_part **parts, size_t *n);
/* Frees the parts and the array; NULL is a no-op. */
void profile_parts_free(struct profile_part *parts, size_t n);

#endif
