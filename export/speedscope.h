/* speedscope files (https://www.speedscope.app/file-format-schema.json): one "sampled" profile
 * per stack type over one shared frame list, as speedscope opens them. */
#ifndef GALATOP_EXPORT_SPEEDSCOPE_H
#define GALATOP_EXPORT_SPEEDSCOPE_H

#include <stddef.h>
#include <stdio.h>

#include "pprof.h"

/* Writes parts[0..n) (profiles over one frame table) as a speedscope JSON file named name (its
 * title in speedscope) to f, which stays the caller's: each stack with a non-zero own value is
 * a sample (frame indexes root first) weighted by that value, in the profile's unit. The same
 * input gives the same bytes. 0, -EINVAL (no part, several frame tables) or -errno. */
int speedscope_write(FILE *f, const struct typed_profile *parts, size_t n, const char *name);

#endif
