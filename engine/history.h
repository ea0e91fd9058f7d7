/* The per-second history of a session's stack profiles: one model/slices ring per stack type
 * (model/stack_type.h), with its sub-second heat map, fed from the collector by the live
 * view and by `galatop record` for .gtop files. Times are seconds from time 0 (wall0). */
#ifndef GALATOP_ENGINE_HISTORY_H
#define GALATOP_ENGINE_HISTORY_H

#include <stdbool.h>
#include <stddef.h>

#include "session.h"

#define HISTORY_DEFAULT_S 600	     /* the live view's --history */
#define HISTORY_BYTES (64u << 20)    /* profile memory per type before slices merge */
#define HISTORY_RECORD_SLICES 3600   /* record without --history: 1 s slices for an hour */


struct history {
	struct slices *ring[STACK_TYPES];   /* NULL for types not recorded */
	struct profile *total[STACK_TYPES]; /* record: what came before the current slice */
	double mono0, wall0; /* time 0 on CLOCK_MONOTONIC and as UNIX time, in seconds */
	double last;	     /* end of the last slice (history_cut), seconds from time 0 */
	double keep_s;	     /* as history_open was given */
	size_t max_slices;
	bool totals;
};

/* Sets up a ring per stack type the session records, keeping keep_s seconds (0: all, merged
 * into coarser slices past max_slices or HISTORY_BYTES); with totals, history_cut keeps the
 * sum of the slices (record). Time 0 is now. 0 or -ENOMEM (h then freed). */
int history_open(struct history *h, struct session *s, double keep_s, size_t max_slices,
		 bool totals);
/* A ring (and total) for stack type t, collected from now on (a probe attached late); a no-op
 * when it has one. 0 or -ENOMEM. */
int history_add(struct history *h, struct session *s, enum stack_type t);
/* Adds the sample times of the collector's type-t records since its last clear to ring t's
 * heat map. */
void history_heat(struct history *h, struct session *s, enum stack_type t);
/* Record: the collector's profiles since the last cut become slices up to now (CLOCK_MONOTONIC
 * seconds) and join the totals; the collector is cleared. 0 or -ENOMEM. */
int history_cut(struct history *h, struct session *s, double now);
/* Record, at the end: a last cut, then the totals go back into the collector's profiles, so
 * that every writer sees the whole recording. 0 or -ENOMEM. */
int history_finish(struct history *h, struct session *s, double now);
/* Frees the rings and totals; a zeroed h is a no-op. */
void history_free(struct history *h);

#endif
