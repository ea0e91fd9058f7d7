/* The "timeline" section of a snapshot (docs/snapshot.md): a thread timeline's strings,
 * processes, threads with their intervals and short-call counts, and the calls in progress. */
#ifndef GALATOP_EXPORT_SNAPSHOT_TIMELINE_H
#define GALATOP_EXPORT_SNAPSHOT_TIMELINE_H

#include "../model/timeline.h"
#include "jsonio.h"

/* Writes tl as the value of the "timeline" member. */
void snapshot_timeline_write(struct json_out *o, const struct timeline *tl);
/* Reads the value of a "timeline" member into a new timeline *out (strings sanitized, every
 * index checked); 0, -EINVAL (error in s's json_err) or -ENOMEM. */
int snapshot_timeline_read(struct json_in *s, struct timeline **out);

#endif
